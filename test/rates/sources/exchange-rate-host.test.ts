import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createExchangeRateHostConnector } from '../../../src/rates/sources/exchange-rate-host.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

const KEY = 'erh-secret-key-123';

async function setup(t: { after: (fn: () => Promise<void>) => void }, apiKey: string | null = KEY) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  const connector = createExchangeRateHostConnector(
    { enabled: true, weight: 10, url: fake.baseUrlFor('ExchangeRateHost'), ...(apiKey ? { api_key: apiKey } : {}), codes: ['EUR', 'BTC', 'GBP'] },
    { decimals: 12 },
  );
  return { fake, connector, ...createTestContext() };
}

test('ExchangeRateHost sends access_key and yields CODE/USD = 1/quotes[USDCODE], naming a code the answer lacks', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t);
  fake.setApiKey('ExchangeRateHost', KEY);
  fake.setPrice('ExchangeRateHost', 'EUR', 1.25);
  fake.setPrice('ExchangeRateHost', 'BTC', 62500);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'EUR/USD', price: 1.25 },
    { pair: 'BTC/USD', price: 62500 },
  ]);
  assert.deepEqual(warnings, ['Unable to get ExchangeRateHost rates for: GBP.']);
  const [request] = fake.requests('ExchangeRateHost');
  assert.equal(request?.path, '/live');
  assert.equal(request?.query.access_key, KEY);
});

test('ExchangeRateHost turns the HTTP-200 error body into a failure without echoing the key', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.setApiKey('ExchangeRateHost', 'another-key');
  await assert.rejects(connector.fetch(ctx), (error: unknown) => {
    assert.ok(error instanceof SourceFetchError);
    assert.match(error.message, /101 \(invalid_access_key\)/);
    assert.ok(!error.message.includes(KEY));
    assert.ok(!error.message.includes('access_key='));
    return true;
  });
});

test('ExchangeRateHost fails when quotes are missing', async (t) => {
  const { fake, connector, ctx } = await setup(t);
  fake.setResponse('ExchangeRateHost', '/live', { status: 200, body: { success: true, source: 'USD' } });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /'quotes'/.test(error.message));
});

test('ExchangeRateHost drops only the codes whose quote is not a positive number', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t);
  fake.setResponse('ExchangeRateHost', '/live', { status: 200, body: { success: true, source: 'USD', quotes: { USDEUR: 0.8, USDBTC: '0.000016', USDGBP: 0 } } });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'EUR/USD', price: 1.25 }]);
  assert.deepEqual(warnings, ['Unable to get ExchangeRateHost rates for: BTC, GBP.']);
});

test('ExchangeRateHost without a key fails permanently and sends no request', async (t) => {
  const { fake, connector, ctx } = await setup(t, null);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.permanent);
  assert.equal(fake.requests('ExchangeRateHost').length, 0);
});
