import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCoingeckoConnector } from '../../../src/rates/sources/coingecko.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

const KEY = 'CG-demo-secret';

async function setup(t: { after: (fn: () => Promise<void>) => void }, coins: string[], ids: string[]) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.setApiKey('Coingecko', KEY);
  fake.addCoin('Coingecko', { id: 'bitcoin', symbol: 'BTC', price: 63000 });
  fake.addCoin('Coingecko', { id: 'bitcoin-wrapped-fake', symbol: 'BTC', price: 1 });
  fake.addCoin('Coingecko', { id: 'ethereum', symbol: 'ETH', price: 2600 });
  fake.addCoin('Coingecko', { id: 'adamant-messenger', symbol: 'ADM', price: 0.0301 });
  fake.addCoin('Coingecko', { id: 'unpriced', symbol: 'UNP' });
  const connector = createCoingeckoConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('Coingecko'), api_key: KEY, coins, ids }, { decimals: 12 });
  return { fake, connector, ...createTestContext() };
}

test('Coingecko resolves ids and symbols from coins/list and quotes simple/price with the demo key header', async (t) => {
  const { fake, connector, ctx, client } = await setup(t, ['BTC', 'ADM'], ['ethereum', 'adamant-messenger']);
  await connector.discover!(ctx);
  assert.deepEqual(connector.advertisedCoins(), ['ETH', 'ADM', 'BTC']);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'ETH/USD', price: 2600 },
    { pair: 'ADM/USD', price: 0.0301 },
    // BTC resolves to the first id carrying the symbol.
    { pair: 'BTC/USD', price: 63000 },
  ]);
  const [list, price] = fake.requests('Coingecko');
  assert.equal(list?.path, '/api/v3/coins/list');
  assert.equal(price?.path, '/api/v3/simple/price');
  assert.deepEqual(price?.query, { ids: 'ethereum,adamant-messenger,bitcoin', vs_currencies: 'USD' });
  assert.equal(list?.headers['x-cg-demo-api-key'], KEY);
  assert.equal(price?.headers['x-cg-demo-api-key'], KEY);
  assert.equal(client.calls[1]?.timeoutMs, 10_000);
});

test('Coingecko warns about unknown ids and symbols', async (t) => {
  const { connector, ctx, warnings } = await setup(t, ['NOPE'], ['bitcoin', 'no-such-id']);
  await connector.discover!(ctx);
  assert.equal(warnings.length, 2);
  assert.match(warnings[0]!, /Unable to get ticker for Coingecko id 'no-such-id'/);
  assert.match(warnings[1]!, /Unable to get ticker for Coingecko symbol 'NOPE'/);
});

test('Coingecko serves the other coins when the answer lacks one configured id, warning with the id every cycle', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, [], ['bitcoin', 'ethereum', 'adamant-messenger']);
  await connector.discover!(ctx);
  fake.setPrice('Coingecko', 'ETH', null);
  const expected = [
    { pair: 'BTC/USD', price: 63000 },
    { pair: 'ADM/USD', price: 0.0301 },
  ];
  assert.deepEqual(await connector.fetch(ctx), expected);
  assert.deepEqual(warnings, ["Unable to get rates for Coingecko ID 'ethereum'"]);
  // The same miss next cycle is raised again, as the original does (notes E.3: no deduplication) ...
  assert.deepEqual(await connector.fetch(ctx), expected);
  assert.equal(warnings.length, 2);
  // ... and a healed coin is not.
  fake.setPrice('Coingecko', 'ETH', 2600);
  assert.equal((await connector.fetch(ctx)).length, 3);
  assert.equal(warnings.length, 2);
});

test('Coingecko drops only the coins whose price is not a positive finite number, or whose entry is malformed', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, [], ['bitcoin', 'ethereum', 'adamant-messenger', 'unpriced']);
  await connector.discover!(ctx);
  // Verbatim text: 1e999 parses to Infinity.
  fake.setResponse('Coingecko', '/api/v3/simple/price', {
    status: 200,
    body: '{"bitcoin":{"usd":1e999},"ethereum":{"usd":"2600"},"adamant-messenger":{"usd":0.0301},"unpriced":null}',
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ADM/USD', price: 0.0301 }]);
  assert.deepEqual(warnings, [
    "Unable to get rates for Coingecko ID 'bitcoin'",
    "Unable to get rates for Coingecko ID 'ethereum'",
    "Unable to get rates for Coingecko ID 'unpriced'",
  ]);
  fake.setResponse('Coingecko', '/api/v3/simple/price', { status: 200, body: { bitcoin: { usd: -1 }, ethereum: { usd: 0 }, 'adamant-messenger': [0.03], unpriced: { usd: 5 } } });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'UNP/USD', price: 5 }]);
});

test('Coingecko still fails the source when the whole price answer is not an object', async (t) => {
  const { fake, connector, ctx } = await setup(t, [], ['bitcoin']);
  await connector.discover!(ctx);
  fake.setResponse('Coingecko', '/api/v3/simple/price', { status: 200, body: [{ bitcoin: { usd: 1 } }] });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /not an object/.test(error.message));
  fake.setResponse('Coingecko', '/api/v3/simple/price', { status: 200, body: 'not json' });
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /not JSON/.test(error.message));
});

test('Coingecko warns about an ambiguous symbol, listing the candidates, and keeps the first id listed (notes D.7)', async (t) => {
  const { connector, ctx, warnings } = await setup(t, ['BTC', 'ETH'], []);
  await connector.discover!(ctx);
  assert.deepEqual(warnings, [
    "Ambiguous Coingecko symbol 'BTC' matches 2 coins (bitcoin, bitcoin-wrapped-fake). Picking the first one listed, 'bitcoin'; use 'coingecko.ids' to choose explicitly.",
  ]);
  assert.deepEqual(await connector.fetch(ctx), [
    { pair: 'BTC/USD', price: 63000 },
    { pair: 'ETH/USD', price: 2600 },
  ]);
});

test('an ambiguous symbol warns in the words currencyinfo\'s own tests look for: the candidates in parentheses (issue 28)', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, ['ADM'], []);
  fake.addCoin('Coingecko', { id: 'adm-token', symbol: 'ADM', price: 1 });
  await connector.discover!(ctx);
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0]!.includes('matches 2 coins (adamant-messenger, adm-token)'), warnings[0]);
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ADM/USD', price: 0.0301 }]);
});

test('Coingecko names at most ten candidates of an ambiguous symbol; an explicit id for the symbol silences it', async (t) => {
  const { fake, ctx, warnings } = await setup(t, [], []);
  for (let n = 1; n <= 12; n += 1) fake.addCoin('Coingecko', { id: `usdt-bridged-${n}`, symbol: 'USDT', price: 1 });
  const make = (coins: string[], ids: string[]) =>
    createCoingeckoConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('Coingecko'), api_key: KEY, coins, ids }, { decimals: 12 });
  await make(['USDT'], []).discover!(ctx);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^Ambiguous Coingecko symbol 'USDT' matches 12 coins \(usdt-bridged-1, .*, usdt-bridged-10 and 2 more\)\. Picking the first one listed, 'usdt-bridged-1';/);
  await make(['USDT'], ['usdt-bridged-7']).discover!(ctx);
  assert.equal(warnings.length, 1);
});

test('Coingecko reports the 429 rate limit and a rejected key', async (t) => {
  const { fake, connector, ctx } = await setup(t, ['BTC'], []);
  await connector.discover!(ctx);
  fake.failSource('Coingecko', 429);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 429 && /Rate Limit/.test(error.message));
  fake.failSource('Coingecko', null);
  fake.setApiKey('Coingecko', 'another-key');
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 401 && !error.message.includes(KEY));
});

test('Coingecko fails discovery when nothing resolves', async (t) => {
  const { connector, ctx } = await setup(t, ['NOPE'], []);
  await assert.rejects(connector.discover!(ctx), (error: unknown) => error instanceof SourceFetchError && error.source === 'Coingecko');
});
