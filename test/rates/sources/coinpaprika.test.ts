import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoinPaprikaBlock } from '../../../src/rates/config.js';
import { createCoinPaprikaConnector } from '../../../src/rates/sources/coinpaprika.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams, type FakeUpstreams } from '../fakes/upstreams.js';

async function setup(t: { after: (fn: () => Promise<void>) => void }, block: Partial<CoinPaprikaBlock>) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.addCoin('CoinPaprika', { id: 'btc-bitcoin', symbol: 'BTC', rank: 1, price: 60000.12345678 });
  fake.addCoin('CoinPaprika', { id: 'btc-old-bitcoin', symbol: 'BTC', rank: 0, active: false, price: 1 });
  fake.addCoin('CoinPaprika', { id: 'eth-ethereum', symbol: 'ETH', rank: 2, price: 2600 });
  fake.addCoin('CoinPaprika', { id: 'adm-adamant-messenger', symbol: 'ADM', rank: 1510, price: 0.0301 });
  fake.addCoin('CoinPaprika', { id: 'adm-voice-of-the-gods', symbol: 'ADM', rank: 5688, price: 9 });
  fake.addCoin('CoinPaprika', { id: 'low-lowcoin', symbol: 'LOW', rank: 3000, price: 0.5 });
  const connector = createCoinPaprikaConnector(
    { enabled: true, weight: 10, url: fake.baseUrlFor('CoinPaprika'), coins: [], ids: [], bulk_limit: 100, max_individual_requests: 5, ...block },
    { decimals: 12 },
  );
  return { fake, connector, ...createTestContext() };
}

const paths = (fake: FakeUpstreams) => fake.requests('CoinPaprika').map((request) => request.path);

test('CoinPaprika resolves ids and best-ranked active symbols, then prices by one bulk call plus per-coin calls', async (t) => {
  const { fake, connector, ctx, warnings, client } = await setup(t, { coins: ['BTC', 'ADM'], ids: ['eth-ethereum'] });
  await connector.discover!(ctx);
  assert.deepEqual(connector.advertisedCoins(), ['ETH', 'BTC', 'ADM']);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /Ambiguous CoinPaprika symbol 'ADM' matches 2 active coins: adm-adamant-messenger \(rank 1510\), adm-voice-of-the-gods \(rank 5688\)/);

  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'ETH/USD', price: 2600 },
    { pair: 'BTC/USD', price: 60000.12345678 },
    { pair: 'ADM/USD', price: 0.0301 },
  ]);
  const [directory, bulk, single] = fake.requests('CoinPaprika');
  assert.equal(directory?.path, '/v1/coins');
  assert.equal(directory?.headers['accept-encoding'], 'gzip');
  assert.equal(bulk?.path, '/v1/tickers');
  assert.deepEqual(bulk?.query, { quotes: 'USD', limit: '100' });
  assert.equal(single?.path, '/v1/tickers/adm-adamant-messenger');
  assert.deepEqual(single?.query, { quotes: 'USD' });
  assert.equal(fake.requests('CoinPaprika').length, 3);
  assert.equal(client.calls[1]?.timeoutMs, 10_000);
});

test('CoinPaprika admits out-of-range coins up to max_individual_requests and skips the bulk call when none is in range', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: ['adm-adamant-messenger', 'low-lowcoin'], max_individual_requests: 1 });
  await connector.discover!(ctx);
  assert.deepEqual(connector.advertisedCoins(), ['ADM']);
  assert.match(warnings[0]!, /excluded: LOW/);
  fake.clearRequests();
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ADM/USD', price: 0.0301 }]);
  assert.deepEqual(paths(fake), ['/v1/tickers/adm-adamant-messenger']);
});

test('CoinPaprika rejects a row whose symbol differs (stale id) and drops only a coin whose call failed', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: ['btc-bitcoin', 'adm-adamant-messenger'] });
  await connector.discover!(ctx);
  fake.setResponse('CoinPaprika', '/v1/tickers/adm-adamant-messenger', {
    status: 200,
    body: { id: 'adm-adamant-messenger', symbol: 'XYZ', quotes: { USD: { price: 5 } } },
  });
  warnings.length = 0;
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000.12345678 }]);
  assert.deepEqual(warnings, [
    "Skipping CoinPaprika ticker 'adm-adamant-messenger': expected symbol ADM, got 'XYZ'.",
    'Unable to get CoinPaprika rates against USD for: ADM.',
  ]);
  fake.setResponse('CoinPaprika', '/v1/tickers/adm-adamant-messenger', { status: 500, body: { error: 'boom' } });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000.12345678 }]);
  // Every text of this cycle is raised, the unchanged summary too.
  assert.deepEqual(warnings.slice(2), ["Unable to get CoinPaprika ticker for id 'adm-adamant-messenger'. Error: HTTP 500.", 'Unable to get CoinPaprika rates against USD for: ADM.']);
});

test('CoinPaprika serves the other coins when the bulk answer lacks one, or prices it badly', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: ['btc-bitcoin', 'eth-ethereum'] });
  await connector.discover!(ctx);
  // ETH drops out of the bulk list; its own ticker call (the fallback) answers without a price.
  fake.setPrice('CoinPaprika', 'ETH', null);
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000.12345678 }]);
  assert.deepEqual(warnings, ['Unable to get CoinPaprika rates against USD for: ETH.']);
  fake.setResponse('CoinPaprika', '/v1/tickers', {
    status: 200,
    body: [null, { id: 'btc-bitcoin', symbol: 'BTC', quotes: { USD: { price: '60000' } } }, { id: 'eth-ethereum', symbol: 'ETH', quotes: { USD: { price: 2600 } } }],
  });
  fake.setResponse('CoinPaprika', '/v1/tickers/btc-bitcoin', { status: 200, body: [] });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ETH/USD', price: 2600 }]);
  assert.equal(warnings.at(-1), 'Unable to get CoinPaprika rates against USD for: BTC.');
});

test('CoinPaprika names the coins beyond max_individual_requests that the bulk answer lacked', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: ['btc-bitcoin', 'eth-ethereum'], max_individual_requests: 1 });
  await connector.discover!(ctx);
  fake.setResponse('CoinPaprika', '/v1/tickers', { status: 200, body: [] });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000.12345678 }]);
  assert.deepEqual(warnings, [
    "CoinPaprika needs 2 individual ticker requests, which exceeds the 'coinpaprika.max_individual_requests' limit of 1. Skipping: ETH.",
    'Unable to get CoinPaprika rates against USD for: ETH.',
  ]);
});

test('CoinPaprika fails when the bulk call fails, or when every individual call fails without a bulk call', async (t) => {
  const { fake, connector, ctx } = await setup(t, { ids: ['btc-bitcoin'] });
  await connector.discover!(ctx);
  fake.setResponse('CoinPaprika', '/v1/tickers', { status: 500, body: {} });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 500);

  const other = await setup(t, { ids: ['adm-adamant-messenger'] });
  await other.connector.discover!(other.ctx);
  other.fake.setResponse('CoinPaprika', '/v1/tickers/adm-adamant-messenger', { status: 502, body: {} });
  await assert.rejects(other.connector.fetch(other.ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 502);
});

test('CoinPaprika warns about unknown ids and fails discovery when nothing resolves', async (t) => {
  const { connector, ctx, warnings } = await setup(t, { ids: ['no-such-id'], coins: ['NOPE'] });
  await assert.rejects(connector.discover!(ctx), (error: unknown) => error instanceof SourceFetchError);
  assert.match(warnings[0]!, /id 'no-such-id'/);
  assert.match(warnings[1]!, /symbol 'NOPE'/);
});
