import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BinanceBlock } from '../../../src/rates/config.js';
import { createBinanceConnector } from '../../../src/rates/sources/binance.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

async function setup(t: { after: (fn: () => Promise<void>) => void }, block: Partial<BinanceBlock>) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.setPrice('Binance', 'BTC', 81867.52);
  fake.setPrice('Binance', 'ETH', 2600.1);
  fake.addCoin('Binance', { id: 'LUNAUSDT', symbol: 'LUNA', status: 'BREAK', price: 0.1 });
  const connector = createBinanceConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('Binance'), quote_asset: 'USDT', coins: [], ...block }, { decimals: 12 });
  return { fake, connector, ...createTestContext() };
}

const geoBlocked = (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 451 && error.permanent;

test('Binance validates markets with exchangeInfo (15 s) and quotes ticker/price (10 s) as COIN/USD', async (t) => {
  const { fake, connector, ctx, client } = await setup(t, { coins: ['BTC', 'ETH'] });
  await connector.discover!(ctx);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'BTC/USD', price: 81867.52 },
    { pair: 'ETH/USD', price: 2600.1 },
  ]);
  const [info, price] = fake.requests('Binance');
  assert.equal(info?.path, '/api/v3/exchangeInfo');
  assert.equal(info?.query.symbols, '["BTCUSDT","ETHUSDT"]');
  assert.equal(price?.path, '/api/v3/ticker/price');
  assert.equal(price?.query.symbols, '["BTCUSDT","ETHUSDT"]');
  assert.deepEqual(client.calls.map((call) => call.timeoutMs), [15_000, 10_000]);
});

test('Binance retries exchangeInfo per symbol after HTTP 400 and skips unlisted and non-trading markets', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { coins: ['BTC', 'ADM', 'LUNA', 'ETH'] });
  await connector.discover!(ctx);
  assert.deepEqual(connector.advertisedCoins(), ['BTC', 'ETH']);
  const queries = fake.requests('Binance').map((request) => request.query);
  assert.deepEqual(queries.slice(1), [{ symbol: 'BTCUSDT' }, { symbol: 'ADMUSDT' }, { symbol: 'LUNAUSDT' }, { symbol: 'ETHUSDT' }]);
  assert.match(warnings[0]!, /Market 'ADMUSDT' is not listed on Binance/);
  assert.match(warnings[1]!, /not trading and will be skipped: LUNAUSDT/);
  assert.equal((await connector.fetch(ctx)).length, 2);
});

test('Binance serves the other coins when the price answer lacks one market, naming the coin', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { coins: ['BTC', 'ETH'] });
  await connector.discover!(ctx);
  fake.setPrice('Binance', 'ETH', null);
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 81867.52 }]);
  assert.deepEqual(warnings, ['Unable to get Binance rates for: ETH.']);
});

test('Binance drops only the markets whose price is not a positive finite number or whose row is malformed', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { coins: ['BTC', 'ETH', 'SOL', 'XRP'] });
  fake.setPrice('Binance', 'SOL', 150);
  fake.setPrice('Binance', 'XRP', 0.5);
  await connector.discover!(ctx);
  fake.setResponse('Binance', '/api/v3/ticker/price', {
    status: 200,
    body: [{ symbol: 'BTCUSDT', price: 'abc' }, null, { symbol: 'ETHUSDT', price: '2600.10000000' }, { symbol: 'SOLUSDT', price: '-1' }, { symbol: 'XRPUSDT', price: '1e999' }],
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ETH/USD', price: 2600.1 }]);
  assert.deepEqual(warnings, ['Unable to get Binance rates for: BTC, SOL, XRP.']);
  fake.setResponse('Binance', '/api/v3/ticker/price', { status: 200, body: { symbol: 'BTCUSDT', price: '1' } });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /not an array/.test(error.message));
});

test('Binance HTTP 451 at startup is permanent, and later calls send nothing', async (t) => {
  const { fake, connector, ctx } = await setup(t, { coins: ['BTC'] });
  fake.failSource('Binance', 451);
  await assert.rejects(connector.discover!(ctx), geoBlocked);
  fake.failSource('Binance', null);
  fake.clearRequests();
  await assert.rejects(connector.fetch(ctx), geoBlocked);
  assert.equal(fake.requests('Binance').length, 0);
});

test('Binance HTTP 451 during a cycle is permanent', async (t) => {
  const { fake, connector, ctx } = await setup(t, { coins: ['BTC'] });
  await connector.discover!(ctx);
  fake.failSource('Binance', 451);
  await assert.rejects(connector.fetch(ctx), geoBlocked);
});

test('Binance uses the configured quote asset for market names and still emits COIN/USD', async (t) => {
  const { fake, connector, ctx } = await setup(t, { coins: ['BTC'], quote_asset: 'USDC' });
  fake.addCoin('Binance', { id: 'BTCUSDC', symbol: 'BTC', price: 81900 });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 81900 }]);
  assert.equal(fake.requests('Binance').at(-1)?.query.symbols, '["BTCUSDC"]');
});

test('Binance fails discovery when no configured market trades', async (t) => {
  const { connector, ctx } = await setup(t, { coins: ['LUNA'] });
  await assert.rejects(connector.discover!(ctx), (error: unknown) => error instanceof SourceFetchError && !error.permanent);
});
