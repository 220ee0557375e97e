// The MongoDB backend runs against a real server only when MONGODB_URL is set (docs/DESIGN.md, Storage):
// MongoDB is not installable on this machine type. Each case uses its own throwaway database.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { MongoClient, ObjectId } from 'mongodb';
import { openMongoHistory } from '../../../storage/rates/history.mongo.js';
import { historyContract, type HistoryFixture, type SeedSnapshot } from './history.contract.js';

const MONGODB_URL = process.env['MONGODB_URL'];
const SKIP_REASON = 'MONGODB_URL is not set, so the MongoDB backend was not exercised';
const T0 = 1720471800000;

function tickerDocs(groups: readonly SeedSnapshot[]) {
  return groups.flatMap(({ date, tickers }) =>
    Object.entries(tickers).map(([pair, rate]) => {
      const [base, quote] = pair.split('/');
      return { _id: new ObjectId(), date, base: base!, quote: quote!, rate, __v: 0 };
    }),
  );
}

async function withDatabase<T>(fn: (client: MongoClient, dbName: string) => Promise<T>): Promise<T> {
  const client = new MongoClient(MONGODB_URL!, { serverSelectionTimeoutMS: 2000 });
  await client.connect();
  const dbName = `rates_history_test_${randomBytes(6).toString('hex')}`;
  try {
    return await fn(client, dbName);
  } finally {
    await client.db(dbName).dropDatabase().catch(() => undefined);
    await client.close();
  }
}

async function openFixture(): Promise<HistoryFixture> {
  const client = new MongoClient(MONGODB_URL!, { serverSelectionTimeoutMS: 2000 });
  await client.connect();
  const dbName = `rates_history_test_${randomBytes(6).toString('hex')}`;
  const db = client.db(dbName);
  const store = await openMongoHistory({ url: MONGODB_URL!, host: '', port: 0, db: dbName });
  return {
    store,
    insertOrphans: async (groups) => {
      const docs = tickerDocs(groups);
      if (docs.length > 0) await db.collection('tickers').insertMany(docs);
    },
    seedSnapshots: async (groups) => {
      const docs = tickerDocs(groups);
      if (docs.length > 0) await db.collection('tickers').insertMany(docs);
      await db.collection('timestamps').insertMany(groups.map(({ date }) => ({ _id: new ObjectId(), date, __v: 0 })));
    },
    dispose: async () => {
      await store.close();
      await db.dropDatabase().catch(() => undefined);
      await client.close();
    },
  };
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address !== null && typeof address === 'object');
  return address.port;
}

describe('rates history: mongo connection', () => {
  it('fails fast when the server is unreachable', async () => {
    const port = await closedPort();
    const started = Date.now();
    await assert.rejects(
      openMongoHistory({ host: '127.0.0.1', port, db: 'tickersdb', serverSelectionTimeoutMS: 300 }),
      { name: 'MongoServerSelectionError' },
    );
    assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
  });
});

if (MONGODB_URL === undefined || MONGODB_URL === '') {
  it('rates history contract: mongo', { skip: SKIP_REASON }, () => {});
} else {
  historyContract('mongo', openFixture);

  describe('rates history: mongo specifics', () => {
    it('serves a pre-seeded 4.1 layout with the seeded registry ids and keeps its indexes', async () => {
      await withDatabase(async (client, dbName) => {
        const db = client.db(dbName);
        const tickers = db.collection('tickers');
        const timestamps = db.collection('timestamps');
        // The 4.1 indexes as Mongoose created them (notes C.1).
        await tickers.createIndexes([
          { key: { date: 1 }, name: 'date_1' },
          { key: { base: 1 }, name: 'base_1' },
          { key: { quote: 1 }, name: 'quote_1' },
          { key: { base: 1, quote: 1 }, name: 'base_1_quote_1' },
        ]);
        await timestamps.createIndex({ date: 1 }, { name: 'date_1', unique: true });
        const seeded = [new ObjectId(), new ObjectId()];
        await tickers.insertMany(tickerDocs([
          { date: T0, tickers: { 'BTC/USD': 60000, 'ETH/BTC': 0.05 } },
          { date: T0 + 60_000, tickers: { 'BTC/USD': 61000 } },
          { date: T0 + 120_000, tickers: { 'BTC/USD': 62000 } }, // orphan: no registry document
        ]));
        await timestamps.insertMany([
          { _id: seeded[0]!, date: T0, __v: 0 },
          { _id: seeded[1]!, date: T0 + 60_000, __v: 0 },
        ]);

        const store = await openMongoHistory({ url: MONGODB_URL, host: '', port: 0, db: dbName });
        try {
          assert.deepEqual(await store.query({ limit: 10, coin: { kind: 'either', symbol: 'BTC' } }), [
            { _id: seeded[1]!.toHexString(), date: T0 + 60_000, tickers: { 'BTC/USD': 61000 } },
            { _id: seeded[0]!.toHexString(), date: T0, tickers: { 'BTC/USD': 60000, 'ETH/BTC': 0.05 } },
          ]);
          assert.deepEqual((await store.query({ limit: 1, timestampMs: T0 + 200_000 })).map((s) => s._id), [seeded[1]!.toHexString()]);
        } finally {
          await store.close();
        }

        const tickerIndexes = (await tickers.listIndexes().toArray()).map((i) => i['name']).sort();
        assert.deepEqual(tickerIndexes, [
          '_id_', 'base_1', 'base_1_date_-1', 'base_1_quote_1', 'base_1_quote_1_date_-1', 'date_1', 'quote_1', 'quote_1_date_-1',
        ]);
        const stampIndexes = await timestamps.listIndexes().toArray();
        assert.deepEqual(stampIndexes.map((i) => [i['name'], i['unique'] === true]).sort(), [['_id_', false], ['date_1', true]]);
      });
    });

    it('writes documents in the original layout, tickers before the registry', async () => {
      await withDatabase(async (client, dbName) => {
        const store = await openMongoHistory({ url: MONGODB_URL, host: '', port: 0, db: dbName });
        let written: { _id: string; date: number };
        try {
          written = await store.append(T0, { 'BTC/USD': 60000, 'ETH/BTC': 0.05 });
        } finally {
          await store.close();
        }
        const db = client.db(dbName);
        const stamps = await db.collection('timestamps').find().toArray();
        assert.equal(stamps.length, 1);
        assert.ok(stamps[0]!._id instanceof ObjectId);
        assert.deepEqual({ ...stamps[0], _id: stamps[0]!._id.toHexString() }, { _id: written._id, date: T0, __v: 0 });
        const rows = await db.collection('tickers').find({}, { sort: { _id: 1 } }).toArray();
        assert.deepEqual(rows.map(({ _id, ...rest }) => { assert.ok(_id instanceof ObjectId); return rest; }), [
          { date: T0, base: 'BTC', quote: 'USD', rate: 60000, __v: 0 },
          { date: T0, base: 'ETH', quote: 'BTC', rate: 0.05, __v: 0 },
        ]);
        assert.deepEqual(Object.keys(rows[0]!), ['_id', 'date', 'base', 'quote', 'rate', '__v']);
      });
    });
  });
}
