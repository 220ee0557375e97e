// Every connector against every transport-level failure: each must throw SourceFetchError naming itself,
// and no message may carry an API key, the request URL or the host (notes E.3, F.1).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBinanceConnector } from '../../../src/rates/sources/binance.source.js';
import { createCoingeckoConnector } from '../../../src/rates/sources/coingecko.source.js';
import { createCoinLoreConnector } from '../../../src/rates/sources/coinlore.source.js';
import { createCoinmarketcapConnector } from '../../../src/rates/sources/coinmarketcap.source.js';
import { createCoinPaprikaConnector } from '../../../src/rates/sources/coinpaprika.source.js';
import { createCryptoCompareConnector } from '../../../src/rates/sources/cryptocompare.source.js';
import { createCurrencyApiConnector } from '../../../src/rates/sources/currency-api.source.js';
import { createExchangeRateApiConnector } from '../../../src/rates/sources/exchange-rate-api.source.js';
import { createExchangeRateHostConnector } from '../../../src/rates/sources/exchange-rate-host.source.js';
import { createMoexConnector } from '../../../src/rates/sources/moex.source.js';
import { SourceFetchError, type SourceConnector } from '../../../src/rates/sources/source.js';
import type { SourceName } from '../../../src/rates/types.js';
import { createTestContext, startFakeUpstreams, type FailMode, type FakeUpstreams } from '../fakes/upstreams.js';

const KEY = 'very-secret-api-key-000';
const options = { decimals: 12 };
/** The test client's cap on the connectors' timeouts, so the timeout case stays fast. */
const TEST_TIMEOUT_MS = 300;

interface Case {
  readonly name: SourceName;
  prime(fake: FakeUpstreams): void;
  make(url: string): SourceConnector;
}

const common = { enabled: true, weight: 10 };
const CASES: Case[] = [
  { name: 'CurrencyApi', prime: (f) => f.setPrice('CurrencyApi', 'EUR', 1.25), make: (url) => createCurrencyApiConnector({ ...common, url, codes: ['EUR'] }, options) },
  { name: 'ExchangeRateApi', prime: (f) => f.setPrice('ExchangeRateApi', 'EUR', 1.25), make: (url) => createExchangeRateApiConnector({ ...common, url, codes: ['EUR'] }, options) },
  {
    name: 'ExchangeRateHost',
    prime: (f) => f.setPrice('ExchangeRateHost', 'EUR', 1.25),
    make: (url) => createExchangeRateHostConnector({ ...common, url, api_key: KEY, codes: ['EUR'] }, options),
  },
  {
    name: 'MOEX',
    prime: (f) => f.addCoin('MOEX', { id: 'USDRUB_TOM', symbol: 'USDRUB_TOM', price: 92.5 }),
    make: (url) => createMoexConnector({ ...common, url, codes: { 'USD/RUB': 'USDRUB_TOM' } }, options),
  },
  {
    name: 'Coinmarketcap',
    prime: (f) => f.addCoin('Coinmarketcap', { id: '1', symbol: 'BTC', price: 60000 }),
    make: (url) => createCoinmarketcapConnector({ ...common, url, api_key: KEY, coins: ['BTC'], ids: {} }, options),
  },
  { name: 'CryptoCompare', prime: (f) => f.setPrice('CryptoCompare', 'BTC', 60000), make: (url) => createCryptoCompareConnector({ ...common, url, api_key: KEY, coins: ['BTC'] }, options) },
  {
    name: 'Coingecko',
    prime: (f) => f.addCoin('Coingecko', { id: 'bitcoin', symbol: 'BTC', price: 60000 }),
    make: (url) => createCoingeckoConnector({ ...common, url, api_key: KEY, coins: [], ids: ['bitcoin'] }, options),
  },
  {
    name: 'CoinPaprika',
    prime: (f) => f.addCoin('CoinPaprika', { id: 'btc-bitcoin', symbol: 'BTC', rank: 1, price: 60000 }),
    make: (url) => createCoinPaprikaConnector({ ...common, url, coins: [], ids: ['btc-bitcoin'], bulk_limit: 10, max_individual_requests: 5 }, options),
  },
  {
    name: 'CoinLore',
    prime: (f) => f.addCoin('CoinLore', { id: '90', symbol: 'BTC', rank: 1, price: 60000 }),
    make: (url) => createCoinLoreConnector({ ...common, url, coins: [], ids: { BTC: 90 } }, options),
  },
  { name: 'Binance', prime: (f) => f.setPrice('Binance', 'BTC', 60000), make: (url) => createBinanceConnector({ ...common, url, quote_asset: 'USDT', coins: ['BTC'] }, options) },
];

function assertSafeFailure(error: unknown, name: SourceName, fake: FakeUpstreams, pattern: RegExp): true {
  assert.ok(error instanceof SourceFetchError, `${name}: expected SourceFetchError, got ${String(error)}`);
  assert.equal(error.name, 'SourceFetchError');
  assert.equal(error.source, name);
  assert.match(error.message, pattern, `${name}: ${error.message}`);
  for (const secret of [KEY, fake.origin, '127.0.0.1', 'access_key=', 'api_key=']) {
    assert.ok(!error.message.includes(secret), `${name} leaks '${secret}' in: ${error.message}`);
  }
  return true;
}

const MODES: { mode: FailMode; pattern: RegExp }[] = [
  { mode: 500, pattern: /500/ },
  { mode: 'badjson', pattern: /JSON|array|object/ },
  // The real client's UpstreamTimeoutError, at the test client's cap rather than the connector's 10–20 s.
  { mode: 'timeout', pattern: new RegExp(`^no answer within ${TEST_TIMEOUT_MS} ms$`) },
];

for (const c of CASES) {
  test(`${c.name}: happy path, then HTTP 500, non-JSON and timeout fail safely`, async (t) => {
    const fake = await startFakeUpstreams();
    t.after(() => fake.close());
    c.prime(fake);
    fake.setApiKey(c.name, KEY);
    const connector = c.make(fake.baseUrlFor(c.name));
    // The connector asks for its own timeouts (10–20 s); only the timeout case runs on a test client that shortens
    // them, so a slow answer on a busy machine cannot fail the other cases.
    const { ctx, client } = createTestContext();
    const { ctx: shortCtx } = createTestContext({ maxTimeoutMs: TEST_TIMEOUT_MS });
    if (connector.discover) await connector.discover(ctx);
    assert.ok((await connector.fetch(ctx)).length >= 1);
    assert.ok(client.calls.every((call) => call.timeoutMs >= 10_000 && call.timeoutMs <= 20_000));
    for (const { mode, pattern } of MODES) {
      fake.failSource(c.name, mode);
      await assert.rejects(connector.fetch(mode === 'timeout' ? shortCtx : ctx), (error) => assertSafeFailure(error, c.name, fake, pattern));
    }
  });

  test(`${c.name}: passes ctx.signal through (abort) and reports a refused connection safely`, async (t) => {
    const fake = await startFakeUpstreams();
    c.prime(fake);
    fake.setApiKey(c.name, KEY);
    const url = fake.baseUrlFor(c.name);
    fake.delaySource(c.name, 5_000);
    const controller = new AbortController();
    const { ctx } = createTestContext({ signal: controller.signal });
    const started = Date.now();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(c.make(url).fetch(ctx), (error) => assertSafeFailure(error, c.name, fake, /request aborted/));
    assert.ok(Date.now() - started < 2_000, 'the abort must not wait for the delayed answer');
    await fake.close();

    const refused = createTestContext();
    await assert.rejects(c.make(url).fetch(refused.ctx), (error) => assertSafeFailure(error, c.name, fake, /request failed \(/));
    t.diagnostic(`${c.name} refused → checked`);
  });
}
