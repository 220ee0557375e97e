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

test('Coingecko fails the source when an id is missing from the price answer (as 4.1)', async (t) => {
  const { connector, ctx } = await setup(t, [], ['bitcoin', 'unpriced']);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /'unpriced'/.test(error.message));
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
