import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../../storage/sqlite.js';
import { openSqliteHistory, SQLITE_HISTORY_SCHEMA_VERSION } from '../../../storage/rates/history.sqlite.js';
import { historyContract, type HistoryFixture, type SeedSnapshot } from './history.contract.js';

const root = mkdtempSync(join(tmpdir(), 'rates-history-sqlite-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
/** A path whose parent folders do not exist yet: the store must create them. */
const freshPath = () => join(root, `case-${++counter}`, 'nested', 'history.sqlite');

/** A second connection writing rows the way an imported 4.1 database would hold them. */
function insertRows(path: string, groups: readonly SeedSnapshot[], registry: boolean): void {
  const db = new Database(path);
  try {
    const ticker = db.prepare('INSERT INTO tickers (date, base, quote, rate) VALUES (?, ?, ?, ?)');
    const stamp = db.prepare('INSERT INTO timestamps (id, date) VALUES (?, ?)');
    db.transaction(() => {
      for (const { date, tickers } of groups) {
        for (const [pair, rate] of Object.entries(tickers)) {
          const [base, quote] = pair.split('/');
          ticker.run(date, base, quote, rate);
        }
        if (registry) stamp.run(date.toString(16).padStart(24, '0'), date);
      }
    })();
  } finally {
    db.close();
  }
}

async function openFixture(): Promise<HistoryFixture> {
  const path = freshPath();
  const store = openSqliteHistory(path);
  return {
    store,
    insertOrphans: async (groups) => insertRows(path, groups, false),
    seedSnapshots: async (groups) => store.appendMany(groups),
    dispose: () => store.close(),
  };
}

historyContract('sqlite', openFixture);

describe('rates history: sqlite specifics', () => {
  const T0 = 1720471800000;

  it('creates parent folders, uses WAL and records the schema version', async () => {
    const path = freshPath();
    const store = openSqliteHistory(path);
    await store.append(T0, { 'BTC/USD': 1 });
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.pragma('user_version', { simple: true }), SQLITE_HISTORY_SCHEMA_VERSION);
      const indexes = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tickers' ORDER BY name").pluck().all();
      assert.deepEqual(indexes, ['tickers_base_date', 'tickers_base_quote_date', 'tickers_date', 'tickers_quote_date']);
      assert.deepEqual(db.prepare('SELECT date, base, quote, rate FROM tickers').all(), [{ date: T0, base: 'BTC', quote: 'USD', rate: 1 }]);
    } finally {
      db.close();
    }
  });

  it('serves a reopened file with the same ids and keeps appending', async () => {
    const path = freshPath();
    const first = openSqliteHistory(path);
    const a = await first.append(T0, { 'BTC/USD': 60000 });
    const b = await first.append(T0 + 1000, { 'BTC/USD': 61000 });
    await first.close();
    await first.close(); // idempotent

    const second = openSqliteHistory(path);
    try {
      assert.deepEqual(await second.query({ limit: 10 }), [
        { ...b, tickers: { 'BTC/USD': 61000 } },
        { ...a, tickers: { 'BTC/USD': 60000 } },
      ]);
      const c = await second.append(T0 + 2000, { 'ETH/USD': 3000 });
      assert.notEqual(c._id, a._id);
      assert.deepEqual((await second.query({ limit: 1, timestampMs: T0 + 5000 })).map((s) => s._id), [c._id]);
    } finally {
      await second.close();
    }
  });

  it('serves an imported 4.1-style database (schema version 0, orphan rows) and skips the orphans', async () => {
    const path = freshPath();
    // Create the tables as an importer would, without the schema version.
    const init = openSqliteHistory(path);
    await init.close();
    const raw = new Database(path);
    raw.pragma('user_version = 0');
    raw.close();
    insertRows(path, [{ date: T0, tickers: { 'BTC/USD': 1, 'ETH/BTC': 0.05 } }], true);
    insertRows(path, [{ date: T0 + 1000, tickers: { 'BTC/USD': 2 } }], false);

    const store = openSqliteHistory(path);
    try {
      const result = await store.query({ limit: 10, coin: { kind: 'either', symbol: 'BTC' } });
      assert.deepEqual(result, [{ _id: T0.toString(16).padStart(24, '0'), date: T0, tickers: { 'BTC/USD': 1, 'ETH/BTC': 0.05 } }]);
      assert.deepEqual((await store.query({ limit: 1, timestampMs: T0 + 1000 })).map((s) => s.date), [T0]);
    } finally {
      await store.close();
    }
  });

  it('refuses a database written by a newer schema version', async () => {
    const path = freshPath();
    const init = openSqliteHistory(path);
    await init.close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SQLITE_HISTORY_SCHEMA_VERSION + 1}`);
    raw.close();
    assert.throws(() => openSqliteHistory(path), /schema version/);
  });

  it('works in memory', async () => {
    const store = openSqliteHistory(':memory:');
    try {
      const { _id } = await store.append(T0, { 'BTC/USD': 1 });
      assert.deepEqual(await store.query({ limit: 5, coin: { kind: 'pair', base: 'BTC', quote: 'USD' } }), [
        { _id, date: T0, tickers: { 'BTC/USD': 1 } },
      ]);
    } finally {
      await store.close();
    }
  });

  it('appendMany writes all snapshots in one transaction, or none', async () => {
    const store = openSqliteHistory(':memory:');
    try {
      store.appendMany(Array.from({ length: 500 }, (_, i) => ({ date: T0 + i, tickers: { 'BTC/USD': i, 'ETH/USD': i / 2 } })));
      const newest = await store.query({ limit: 100 });
      assert.equal(newest.length, 100);
      assert.deepEqual(newest[0], { _id: newest[0]!._id, date: T0 + 499, tickers: { 'BTC/USD': 499, 'ETH/USD': 249.5 } });
      assert.equal(new Set(newest.map((s) => s._id)).size, 100);
      assert.throws(
        () => store.appendMany([{ date: T0 + 1000, tickers: { 'BTC/USD': 1 } }, { date: T0 + 499, tickers: { 'BTC/USD': 1 } }]),
        { name: 'DuplicateSnapshotError' },
      );
      assert.deepEqual(await store.query({ limit: 5, fromMs: T0 + 500 }), [], 'the failed batch left nothing behind');
    } finally {
      await store.close();
    }
  });
});
