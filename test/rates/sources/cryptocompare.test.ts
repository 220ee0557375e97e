import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCryptoCompareConnector } from '../../../src/rates/sources/cryptocompare.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

const KEY = 'cc-secret-key-789';

async function setup(t: { after: (fn: () => Promise<void>) => void }, coins = ['USD', 'EUR', 'BTC', 'ADM'], apiKey: string | null = KEY) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.setApiKey('CryptoCompare', KEY);
  fake.setPrice('CryptoCompare', 'EUR', 1.11);
  fake.setPrice('CryptoCompare', 'BTC', 63000.5);
  fake.setPrice('CryptoCompare', 'ADM', 0.03);
  const connector = createCryptoCompareConnector(
    { enabled: true, weight: 10, url: fake.baseUrlFor('CryptoCompare'), ...(apiKey ? { api_key: apiKey } : {}), coins },
    { decimals: 12 },
  );
  return { fake, connector, ...createTestContext() };
}

const noKey = (error: SourceFetchError) => !error.message.includes(KEY) && !error.message.includes('api_key=');

test('CryptoCompare asks pricemulti with fsyms, tsyms=USD and api_key, yielding COIN/USD including USD/USD', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'USD/USD', price: 1 },
    { pair: 'EUR/USD', price: 1.11 },
    { pair: 'BTC/USD', price: 63000.5 },
    { pair: 'ADM/USD', price: 0.03 },
  ]);
  const [request] = fake.requests('CryptoCompare');
  assert.equal(request?.path, '/data/pricemulti');
  assert.deepEqual(request?.query, { fsyms: 'USD,EUR,BTC,ADM', tsyms: 'USD', api_key: KEY });
});

test('CryptoCompare serves the other coins when one configured coin is missing, naming it', async (t) => {
  const { connector, ctx, warnings } = await setup(t, ['BTC', 'NOPE', 'ADM']);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'BTC/USD', price: 63000.5 },
    { pair: 'ADM/USD', price: 0.03 },
  ]);
  assert.deepEqual(warnings, ['Unable to get CryptoCompare rates for: NOPE.']);
});

test('CryptoCompare drops only the coins whose price is not a positive finite number or whose entry is malformed', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, ['EUR', 'BTC', 'ADM', 'ETH']);
  fake.setResponse('CryptoCompare', '/data/pricemulti', { status: 200, body: '{"EUR":{"USD":"1.11"},"BTC":{"USD":1e999},"ADM":{"USD":0.03},"ETH":null}' });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ADM/USD', price: 0.03 }]);
  assert.deepEqual(warnings, ['Unable to get CryptoCompare rates for: EUR, BTC, ETH.']);
  fake.setResponse('CryptoCompare', '/data/pricemulti', { status: 200, body: [{ BTC: { USD: 1 } }] });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /not a JSON object/.test(error.message));
});

test('CryptoCompare turns the legacy HTTP-200 error body into a failure', async (t) => {
  const { connector, ctx } = await setup(t, ['NOPE']);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /market does not exist/.test(error.message) && noKey(error));
});

test('CryptoCompare reports the 2026 HTTP 401 key requirement without echoing the key', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.setApiKey('CryptoCompare', 'a-subscription-key');
  await assert.rejects(connector.fetch(ctx), (error: unknown) => {
    assert.ok(error instanceof SourceFetchError);
    assert.equal(error.httpStatus, 401);
    assert.match(error.message, /HTTP 401: API key required/);
    assert.ok(noKey(error));
    return true;
  });
});

test('CryptoCompare without a key fails permanently and sends nothing', async (t) => {
  const { fake, connector, ctx } = await setup(t, ['BTC'], null);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.permanent);
  assert.equal(fake.requests('CryptoCompare').length, 0);
});
