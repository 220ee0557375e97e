import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CoinLoreBlock } from '../../../src/rates/config.js';
import { createCoinLoreConnector } from '../../../src/rates/sources/coinlore.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

async function setup(t: { after: (fn: () => Promise<void>) => void }, block: Partial<CoinLoreBlock>) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.addCoin('CoinLore', { id: '90', symbol: 'BTC', rank: 1, price: 81520.59 });
  fake.addCoin('CoinLore', { id: '80', symbol: 'ETH', rank: 2, price: 2600.25 });
  fake.addCoin('CoinLore', { id: '99999', symbol: 'ADM', rank: 3000, price: 5 });
  fake.addCoin('CoinLore', { id: '33250', symbol: 'ADM', rank: 1066, price: 0.0301 });
  const connector = createCoinLoreConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('CoinLore'), coins: [], ids: {}, ...block }, { decimals: 12 });
  return { fake, connector, ...createTestContext() };
}

test('CoinLore resolves symbols without ids from /api/assets/ (best rank), then parses the bare string-number array', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: { BTC: 90, ETH: 80 }, coins: ['BTC', 'ADM'] });
  await connector.discover!(ctx);
  assert.match(warnings[0]!, /Ambiguous CoinLore symbol 'ADM' matches 2 coins: 33250 \(ADM, rank 1066\)|Ambiguous CoinLore symbol 'ADM' matches 2 coins: 33250/);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'BTC/USD', price: 81520.59 },
    { pair: 'ETH/USD', price: 2600.25 },
    { pair: 'ADM/USD', price: 0.0301 },
  ]);
  const [assets, ticker] = fake.requests('CoinLore');
  assert.equal(assets?.path, '/api/assets/');
  assert.equal(ticker?.path, '/api/ticker/');
  assert.deepEqual(ticker?.query, { id: '90,80,33250' });
});

test('CoinLore with every symbol in ids makes no directory request', async (t) => {
  const { fake, connector, ctx } = await setup(t, { ids: { BTC: 90 }, coins: ['BTC'] });
  await connector.discover!(ctx);
  await connector.fetch(ctx);
  assert.deepEqual(fake.requests('CoinLore').map((request) => request.path), ['/api/ticker/']);
});

test('CoinLore asks at most 100 ids per request', async (t) => {
  const ids: Record<string, number> = {};
  const fake0 = await setup(t, {});
  for (let n = 1; n <= 150; n += 1) {
    ids[`C${n}`] = 100_000 + n;
    fake0.fake.addCoin('CoinLore', { id: String(100_000 + n), symbol: `C${n}`, rank: n + 10, price: n });
  }
  const connector = createCoinLoreConnector({ enabled: true, weight: 10, url: fake0.fake.baseUrlFor('CoinLore'), coins: [], ids }, { decimals: 12 });
  const quotes = await connector.fetch(fake0.ctx);
  assert.equal(quotes.length, 150);
  const requests = fake0.fake.requests('CoinLore');
  assert.deepEqual(requests.map((request) => request.query.id!.split(',').length), [100, 50]);
});

test('CoinLore rejects a row whose symbol differs from the configured one, and drops non-positive prices', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: { ADM: 90, ETH: 80 } });
  fake.setPrice('CoinLore', 'ETH', 0);
  assert.deepEqual(await connector.fetch(ctx), []);
  assert.deepEqual(warnings, [
    "CoinLore id 90 returned symbol 'BTC' instead of the configured 'ADM'. Skipping the rate, check 'coinlore.ids'.",
    'Unable to get rates from CoinLore for ADM, ETH.',
  ]);
});

test('CoinLore serves the other coins when the answer lacks one id or has a bad price or a malformed row', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, { ids: { BTC: 90, ETH: 80, ADM: 33250 } });
  fake.setResponse('CoinLore', '/api/ticker/', {
    status: 200,
    body: [null, { id: '90', symbol: 'BTC', price_usd: '81520.59' }, { id: '33250', symbol: 'ADM', price_usd: 'n/a' }],
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 81520.59 }]);
  assert.deepEqual(warnings, ['Unable to get rates from CoinLore for ETH, ADM.']);
  fake.setResponse('CoinLore', '/api/ticker/', {
    status: 200,
    body: [{ id: '90', symbol: 'BTC', price_usd: '-3' }, { id: '80', symbol: 'ETH', price_usd: '1e999' }, { id: '33250', symbol: 'ADM', price_usd: '0.0301' }],
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ADM/USD', price: 0.0301 }]);
  assert.equal(warnings.at(-1), 'Unable to get rates from CoinLore for BTC, ETH.');
});

test('CoinLore fails on an HTTP error or a non-array answer', async (t) => {
  const { fake, connector, ctx } = await setup(t, { ids: { BTC: 90 } });
  fake.setResponse('CoinLore', '/api/ticker/', { status: 200, body: { data: [] } });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /not an array/.test(error.message));
  fake.setResponse('CoinLore', '/api/ticker/', { status: 503, body: {} });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 503);
});
