import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMoexConnector } from '../../../src/rates/sources/moex.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

const r = (value: number) => Number(value.toFixed(12));

async function setup(t: { after: (fn: () => Promise<void>) => void }, codes: Record<string, string>) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  const connector = createMoexConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('MOEX'), codes }, { decimals: 12 });
  fake.addCoin('MOEX', { id: 'USDRUB_TOM', symbol: 'USDRUB_TOM', price: 92, weightedPrice: 93 });
  fake.addCoin('MOEX', { id: 'EURRUB_TOM', symbol: 'EURRUB_TOM', price: 100, weightedPrice: 102 });
  fake.addCoin('MOEX', { id: 'JPYRUB_TOM', symbol: 'JPYRUB_TOM', price: 64, weightedPrice: 64 });
  fake.addCoin('MOEX', { id: 'CNYRUB_TOM', symbol: 'CNYRUB_TOM', price: 13, weightedPrice: null });
  return { fake, connector, ...createTestContext() };
}

const ALL = { 'USD/RUB': 'USDRUB_TOM', 'EUR/RUB': 'EURRUB_TOM', 'JPY/RUB': 'JPYRUB_TOM', 'CNY/RUB': 'CNYRUB_TOM' };

test('MOEX averages PREVPRICE and PREVWAPRICE of CETS rows, derives X/USD via USD/RUB, divides JPY by 100', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, ALL);
  const quotes = await connector.fetch(ctx);
  const usdRub = 92.5;
  assert.deepEqual(quotes, [
    { pair: 'RUB/USD', price: r(1 / usdRub) },
    // The decoy CNGD row (double prices) precedes each CETS row and must be ignored.
    { pair: 'EUR/RUB', price: 101 },
    { pair: 'EUR/USD', price: r(101 / usdRub) },
    { pair: 'JPY/RUB', price: 0.64 },
    { pair: 'JPY/USD', price: r(0.64 / usdRub) },
    // CNY has a null PREVWAPRICE: the row is skipped, with a warning.
  ]);
  assert.deepEqual(warnings, ['Unable to get MOEX rates for: CNY/RUB.']);
  assert.deepEqual(connector.advertisedCoins(), ['RUB', 'EUR', 'JPY', 'CNY']);
  assert.equal(fake.requests('MOEX')[0]?.path, '/securities.jsonp');
});

test('MOEX without USD/RUB configured yields only direct X/RUB pairs', async (t) => {
  const { connector, ctx } = await setup(t, { 'EUR/RUB': 'EURRUB_TOM' });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'EUR/RUB', price: 101 }]);
});

test('MOEX serves the other pairs when a configured row is missing, negative or malformed', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { 'USD/RUB': 'USDRUB_TOM', 'EUR/RUB': 'EURRUB_TOM', 'GBP/RUB': 'GBPRUB_TOM', 'JPY/RUB': 'JPYRUB_TOM' });
  fake.addCoin('MOEX', { id: 'JPYRUB_TOM', symbol: 'JPYRUB_TOM', price: -64, weightedPrice: 64 });
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'RUB/USD', price: r(1 / 92.5) },
    { pair: 'EUR/RUB', price: 101 },
    { pair: 'EUR/USD', price: r(101 / 92.5) },
  ]);
  assert.deepEqual(warnings, ['Unable to get MOEX rates for: GBP/RUB, JPY/RUB.']);

  // Without USD/RUB the direct X/RUB pairs are still served; only their X/USD cannot be derived.
  fake.setResponse('MOEX', '/securities.jsonp', {
    status: 200,
    body: { securities: { columns: [], data: [null, 'row', ['X', 'CETS', 'EURRUB_TOM', 1000, '', 4, 1, '', 0, '', '', '', '', '', 100, 102]] } },
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'EUR/RUB', price: 101 }]);
  assert.equal(warnings.at(-1), 'Unable to get MOEX rates for: USD/RUB, GBP/RUB, JPY/RUB.');
});

test('MOEX fails when securities.data is missing', async (t) => {
  const { fake, connector, ctx } = await setup(t, ALL);
  fake.setResponse('MOEX', '/securities.jsonp', { status: 200, body: { marketdata: {} } });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.source === 'MOEX' && /securities\.data/.test(error.message));
});
