import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCoinmarketcapConnector } from '../../../src/rates/sources/coinmarketcap.source.js';
import { SourceFetchError } from '../../../src/rates/sources/source.js';
import { createTestContext, startFakeUpstreams } from '../fakes/upstreams.js';

const KEY = 'cmc-secret-key-456';

async function setup(t: { after: (fn: () => Promise<void>) => void }, coins: string[], ids: Record<string, number> = {}) {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.setApiKey('Coinmarketcap', KEY);
  fake.addCoin('Coinmarketcap', { id: '1', symbol: 'BTC', price: 60000.12345678 });
  fake.addCoin('Coinmarketcap', { id: '1027', symbol: 'ETH', price: 2600.5 });
  fake.addCoin('Coinmarketcap', { id: '3703', symbol: 'ADM', price: 0.0301 });
  const connector = createCoinmarketcapConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('Coinmarketcap'), api_key: KEY, coins, ids }, { decimals: 12 });
  return { fake, connector, ...createTestContext() };
}

test('Coinmarketcap resolves only the symbols without ids, then quotes by id with the key header', async (t) => {
  const { fake, connector, ctx, client } = await setup(t, ['BTC', 'ETH', 'ADM'], { ADM: 3703 });
  await connector.discover!(ctx);
  const quotes = await connector.fetch(ctx);
  assert.deepEqual(quotes, [
    { pair: 'ADM/USD', price: 0.0301 },
    { pair: 'BTC/USD', price: 60000.12345678 },
    { pair: 'ETH/USD', price: 2600.5 },
  ]);
  const [lookup, cycle] = fake.requests('Coinmarketcap');
  assert.equal(lookup?.path, '/v1/cryptocurrency/quotes/latest');
  assert.deepEqual(lookup?.query, { symbol: 'BTC,ETH' });
  assert.deepEqual(cycle?.query, { id: '3703,1,1027', convert: 'USD' });
  assert.equal(lookup?.headers['x-cmc_pro_api_key'], KEY);
  assert.equal(cycle?.headers['x-cmc_pro_api_key'], KEY);
  assert.ok(client.calls.every((call) => call.timeoutMs === 10_000));
  assert.deepEqual(connector.advertisedCoins(), ['ADM', 'BTC', 'ETH']);
});

test('Coinmarketcap with ids only makes no lookup request', async (t) => {
  const { fake, connector, ctx } = await setup(t, [], { BTC: 1 });
  await connector.discover!(ctx);
  assert.equal(fake.requests('Coinmarketcap').length, 0);
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000.12345678 }]);
});

test('Coinmarketcap warns about an unknown symbol and keeps the others', async (t) => {
  const { connector, ctx, warnings } = await setup(t, ['BTC', 'NOPE']);
  await connector.discover!(ctx);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /Unable to get ticker for Coinmarketcap symbol 'NOPE'/);
  assert.deepEqual(connector.advertisedCoins(), ['BTC']);
});

test('Coinmarketcap fails when every coin rate is missing, warns every cycle for a partial miss', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, [], { BTC: 1, ETH: 1027 });
  fake.setPrice('Coinmarketcap', 'ETH', null);
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000.12345678 }]);
  await connector.fetch(ctx);
  assert.deepEqual(warnings, ['Coinmarketcap rates updated against USD successfully, except ETH', 'Coinmarketcap rates updated against USD successfully, except ETH']);
  fake.setPrice('Coinmarketcap', 'BTC', null);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && /Unable to get all of 2 coin rates/.test(error.message));
});

test('Coinmarketcap drops only a coin with a bad price or a malformed row', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, [], { BTC: 1, ETH: 1027, ADM: 3703 });
  const row = (id: number, symbol: string, price: unknown) => ({ id, symbol, quote: { USD: { price } } });
  fake.setResponse('Coinmarketcap', '/v1/cryptocurrency/quotes/latest', {
    status: 200,
    body: { status: { error_code: 0, error_message: null }, data: { '1': row(1, 'BTC', '60000'), '1027': null, '3703': row(3703, 'ADM', 0.0301) } },
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ADM/USD', price: 0.0301 }]);
  assert.deepEqual(warnings, ['Coinmarketcap rates updated against USD successfully, except BTC, ETH']);
  fake.setResponse('Coinmarketcap', '/v1/cryptocurrency/quotes/latest', {
    status: 200,
    body: { status: { error_code: 0, error_message: null }, data: { '1': row(1, 'BTC', -5), '1027': row(1027, 'ETH', 2600.5), '3703': row(3703, 'ADM', 0) } },
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'ETH/USD', price: 2600.5 }]);
  assert.equal(warnings.at(-1), 'Coinmarketcap rates updated against USD successfully, except BTC, ADM');
});

test('Coinmarketcap names the returned and the configured symbol when an id answers another coin', async (t) => {
  const { fake, connector, ctx, warnings } = await setup(t, [], { BTC: 1, ADM: 3703 });
  fake.setResponse('Coinmarketcap', '/v1/cryptocurrency/quotes/latest', {
    status: 200,
    body: {
      status: { error_code: 0, error_message: null },
      data: {
        '1': { id: 1, symbol: 'BTC', quote: { USD: { price: 60000 } } },
        '3703': { id: 3703, symbol: 'OTHER', quote: { USD: { price: 5 } } },
      },
    },
  });
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000 }]);
  assert.deepEqual(warnings, [
    "Coinmarketcap id 3703 returned symbol 'OTHER' instead of the configured 'ADM'. Skipping the rate, check 'coinmarketcap.ids'.",
    'Coinmarketcap rates updated against USD successfully, except ADM',
  ]);
});

test('Coinmarketcap reports a rejected key (401, error_code 1001) without echoing it', async (t) => {
  const { fake, connector, ctx } = await setup(t, ['BTC']);
  fake.setApiKey('Coinmarketcap', 'the-right-key');
  await assert.rejects(connector.discover!(ctx), (error: unknown) => {
    assert.ok(error instanceof SourceFetchError);
    assert.equal(error.httpStatus, 401);
    assert.match(error.message, /error_code 1001/);
    assert.ok(!error.message.includes(KEY));
    return true;
  });
});

test('Coinmarketcap reports the rate limit (429, error_code 1008)', async (t) => {
  const { fake, connector, ctx } = await setup(t, [], { BTC: 1 });
  fake.failSource('Coinmarketcap', 429);
  await assert.rejects(connector.fetch(ctx), (error: unknown) => error instanceof SourceFetchError && error.httpStatus === 429 && /1008/.test(error.message));
});
