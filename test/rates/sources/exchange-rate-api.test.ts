import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createExchangeRateApiConnector } from '../../../src/rates/sources/exchange-rate-api.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

async function setup(t: { after: (fn: () => Promise<void>) => void }, url?: (base: string) => string) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  const base = fake.baseUrlFor('ExchangeRateApi');
  const connector = createExchangeRateApiConnector(
    { enabled: true, weight: 10, url: url ? url(base) : base, codes: ['USD', 'EUR', 'RUB', 'CNY'] },
    { decimals: 12 },
  );
  return { fake, connector, ...createTestContext() };
}

const failsWith = (pattern: RegExp) => (error: unknown) => error instanceof SourceFetchError && error.source === 'ExchangeRateApi' && pattern.test(error.message);

test('ExchangeRateApi yields CODE/USD = 1/rate for configured codes', async (t) => {
  const { fake, connector, ctx, client } = await setup(t);
  fake.setPrice('ExchangeRateApi', 'EUR', 1.25);
  fake.setPrice('ExchangeRateApi', 'RUB', 0.0125);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'USD/USD', price: 1 },
    { pair: 'EUR/USD', price: 1.25 },
    { pair: 'RUB/USD', price: 0.0125 },
  ]);
  assert.equal(fake.requests('ExchangeRateApi')[0]?.path, '/v6/latest/USD');
  assert.equal(client.calls[0]?.timeoutMs, 10_000);
});

test('ExchangeRateApi treats the HTTP-200 error body as a failure naming the error type', async (t) => {
  const { connector, ctx } = await setup(t, (base) => base.replace(/USD$/, 'XYZ'));
  await assert.rejects(connector.fetch(ctx), failsWith(/unsupported-code/));
});

test('ExchangeRateApi fails without rates, or with a base other than USD', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.setResponse('ExchangeRateApi', '/v6/latest/USD', { status: 200, body: { result: 'success', base_code: 'USD' } });
  await assert.rejects(connector.fetch(ctx), failsWith(/'rates'/));
  fake.setResponse('ExchangeRateApi', '/v6/latest/USD', { status: 200, body: { result: 'success', base_code: 'EUR', rates: { EUR: 1, USD: 1.1 } } });
  await assert.rejects(connector.fetch(ctx), failsWith(/EUR, not USD/));
});

test('ExchangeRateApi skips non-number, zero and negative rates', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t);
  fake.setResponse('ExchangeRateApi', '/v6/latest/USD', {
    status: 200,
    body: { result: 'success', base_code: 'USD', rates: { USD: 1, EUR: '0.8', RUB: 0, CNY: -7 } },
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'USD/USD', price: 1 }]);
  assert.deepEqual(warnings, ['Unable to get ExchangeRateApi rates for: EUR, RUB, CNY.']);
});

test('ExchangeRateApi serves the other codes when one is missing, naming it', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t);
  fake.setPrice('ExchangeRateApi', 'EUR', 1.25);
  fake.setPrice('ExchangeRateApi', 'CNY', 0.14);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'USD/USD', price: 1 },
    { pair: 'EUR/USD', price: 1.25 },
    { pair: 'CNY/USD', price: 0.14 },
  ]);
  assert.deepEqual(warnings, ['Unable to get ExchangeRateApi rates for: RUB.']);
});

test('ExchangeRateApi reports 429 with its status', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.failSource('ExchangeRateApi', 429);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 429);
});
