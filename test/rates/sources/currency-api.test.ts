import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCurrencyApiConnector, CURRENCY_API_DEFAULT_URL } from '../../../src/rates/sources/currency-api.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

async function setup(t: { after: (fn: () => Promise<void>) => void }, codes = ['USD', 'EUR', 'RUB', 'XXX'], decimals = 12) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  const connector = createCurrencyApiConnector({ enabled: true, weight: 7, url: fake.baseUrlFor('CurrencyApi'), codes }, { decimals });
  return { fake, connector, ...createTestContext() };
}

test('CurrencyApi inverts units-per-USD into CODE/USD, emits USD/USD = 1 and skips unknown codes', async (t) => {
  const { fake, connector, ctx, client } = await setup(t);
  fake.setPrice('CurrencyApi', 'EUR', 1.25);
  fake.setPrice('CurrencyApi', 'RUB', 0.0108);
  const quotes = await connector.fetch(ctx);
  assert.deepEqual(quotes, [
    { pair: 'USD/USD', price: 1 },
    { pair: 'EUR/USD', price: 1.25 },
    { pair: 'RUB/USD', price: 0.0108 },
  ]);
  assert.equal(connector.name, 'CurrencyApi');
  assert.equal(connector.weight, 7);
  assert.deepEqual(connector.advertisedCoins(), ['USD', 'EUR', 'RUB', 'XXX']);
  const [request] = fake.requests('CurrencyApi');
  assert.equal(request?.path, '/v1/currencies/usd.json');
  assert.deepEqual(request?.query, {});
  assert.equal(client.calls[0]?.timeoutMs, 10_000);
});

test('CurrencyApi rounds to decimals and skips zero rates', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, ['EUR', 'JPY'], 4);
  fake.setResponse('CurrencyApi', '/v1/currencies/usd.json', { status: 200, body: { date: '2024-09-20', usd: { usd: 1, eur: 0.8951, jpy: 0 } } });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'EUR/USD', price: 1.1172 }]);
  assert.deepEqual(warnings, ['Unable to get CurrencyApi rates for: JPY.']);
});

test('CurrencyApi serves the other codes when one is missing, non-numeric, negative or non-finite, naming them', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, ['USD', 'EUR', 'XXX', 'JPY', 'GBP', 'CNY', 'RUB']);
  fake.setResponse('CurrencyApi', '/v1/currencies/usd.json', {
    status: 200,
    // Verbatim text: 1e999 parses to Infinity, whose inverse 0 is no rate.
    body: '{"date":"2024-09-20","usd":{"usd":1,"eur":0.8,"jpy":"150","gbp":-0.75,"cny":1e999,"rub":null}}',
  });
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'USD/USD', price: 1 },
    { pair: 'EUR/USD', price: 1.25 },
  ]);
  assert.deepEqual(warnings, ['Unable to get CurrencyApi rates for: XXX, JPY, GBP, CNY, RUB.']);
});

test('CurrencyApi fails when the usd object is missing', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.setResponse('CurrencyApi', '/v1/currencies/usd.json', { status: 200, body: { date: '2024-09-20' } });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.source === 'CurrencyApi' && /'usd'/.test(error.message));
});

test('CurrencyApi reports the HTTP status of a failed request', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.failSource('CurrencyApi', 503);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 503 && !error.permanent);
});

test('CurrencyApi defaults to the jsDelivr endpoint when no url is configured', async () => {
  const seen: string[] = [];
  const connector = createCurrencyApiConnector({ enabled: true, weight: 10, codes: ['EUR'] }, { decimals: 12 });
  const ctx = {
    http: { getJson: async (url: string) => (seen.push(url), { status: 200, body: { usd: { eur: 0.8 } } }) },
    signal: new AbortController().signal,
    warn: () => {},
  };
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'EUR/USD', price: 1.25 }]);
  assert.deepEqual(seen, [CURRENCY_API_DEFAULT_URL]);
});
