// One contract suite for every rates history backend (spec §4.2, docs/notes/rates.md A.2, F.9–F.11).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  MAX_CANDIDATE_DATES,
  MAX_GROUPS_SCANNED,
  MAX_LIMIT,
  type HistoryQuery,
  type HistoryStore,
  type Snapshot,
} from '../../../storage/rates/history.js';

export interface SeedSnapshot {
  readonly date: number;
  readonly tickers: Readonly<Record<string, number>>;
}

/** A backend opened on empty storage, plus the direct writes a test needs to simulate imported 4.1 data. */
export interface HistoryFixture {
  readonly store: HistoryStore;
  /** Ticker rows without a registry entry: what an interrupted 4.1 write leaves behind. */
  insertOrphans(groups: readonly SeedSnapshot[]): Promise<void>;
  /** Complete snapshots written in bulk (faster than one append() each). */
  seedSnapshots(groups: readonly SeedSnapshot[]): Promise<void>;
  dispose(): Promise<void>;
}

const T0 = 1720471800000; // 2024-07-08T20:50:00Z, the boundary example of notes A.2 rule 2
const MIN = 60_000;

const FULL = { 'BTC/USD': 60000, 'ETH/BTC': 0.05, 'ETH/USD': 3000, 'USD/EUR': 0.92, 'BTC/BTC': 1 };

function dates(result: readonly Snapshot[]): number[] {
  return result.map((s) => s.date);
}

export function historyContract(backend: string, open: () => Promise<HistoryFixture>): void {
  const withStore = (fn: (f: HistoryFixture) => Promise<void>) => async () => {
    const fixture = await open();
    try {
      await fn(fixture);
    } finally {
      await fixture.dispose();
    }
  };
  const q = (store: HistoryStore, query: Partial<HistoryQuery>) => store.query({ limit: MAX_LIMIT, ...query });

  describe(`rates history contract: ${backend}`, () => {
    it('appends and reads back the snapshot with a 24-hex registry id', withStore(async ({ store }) => {
      const written = await store.append(T0, FULL);
      assert.match(written._id, /^[0-9a-f]{24}$/);
      assert.equal(written.date, T0);
      const result = await q(store, { fromMs: 0 });
      assert.deepEqual(result, [{ _id: written._id, date: T0, tickers: FULL }]);
    }));

    it('gives unique ids and returns snapshots newest first', withStore(async ({ store }) => {
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) {
        // Out of date order on purpose: the order comes from the dates, not from insertion.
        const date = T0 + ((i * 7) % 30) * MIN;
        const { _id } = await store.append(date, { 'BTC/USD': 60000 + i });
        assert.match(_id, /^[0-9a-f]{24}$/);
        ids.add(_id);
      }
      assert.equal(ids.size, 30);
      const result = await q(store, { fromMs: 0 });
      assert.equal(result.length, 30);
      assert.deepEqual(dates(result), Array.from({ length: 30 }, (_, i) => T0 + (29 - i) * MIN));
      assert.deepEqual(new Set(result.map((s) => s._id)), ids);
    }));

    it('filters pairs by each coin form and leaves out snapshots without matching pairs', withStore(async ({ store }) => {
      const a = await store.append(T0, FULL);
      const b = await store.append(T0 + MIN, { 'DOGE/USD': 0.1, 'USD/EUR': 0.93 });
      const only = (snapshot: { _id: string; date: number }, tickers: Record<string, number>) => [{ ...snapshot, tickers }];

      assert.deepEqual(await q(store, { coin: { kind: 'either', symbol: 'BTC' } }),
        only(a, { 'BTC/USD': 60000, 'ETH/BTC': 0.05, 'BTC/BTC': 1 }));
      assert.deepEqual(await q(store, { coin: { kind: 'base', symbol: 'BTC' } }), only(a, { 'BTC/USD': 60000, 'BTC/BTC': 1 }));
      assert.deepEqual(await q(store, { coin: { kind: 'quote', symbol: 'BTC' } }), only(a, { 'ETH/BTC': 0.05, 'BTC/BTC': 1 }));
      assert.deepEqual(await q(store, { coin: { kind: 'pair', base: 'ETH', quote: 'BTC' } }), only(a, { 'ETH/BTC': 0.05 }));
      // BASE/QUOTE in the documented order (spec §9.2): the reversed pair is a different pair.
      assert.deepEqual(await q(store, { coin: { kind: 'pair', base: 'BTC', quote: 'ETH' } }), []);
      assert.deepEqual(await q(store, { coin: { kind: 'either', symbol: 'DOGE' } }), only(b, { 'DOGE/USD': 0.1 }));
      assert.deepEqual(await q(store, { coin: { kind: 'either', symbol: 'XRP' } }), []);
      const usd = await q(store, { coin: { kind: 'either', symbol: 'USD' } });
      assert.deepEqual(usd, [
        ...only(b, { 'DOGE/USD': 0.1, 'USD/EUR': 0.93 }),
        ...only(a, { 'BTC/USD': 60000, 'ETH/USD': 3000, 'USD/EUR': 0.92 }),
      ]);
      assert.deepEqual(dates(await q(store, { coin: { kind: 'quote', symbol: 'EUR' } })), [T0 + MIN, T0]);
    }));

    it('applies from and to as inclusive bounds on the ms date', withStore(async ({ store }) => {
      for (const date of [T0 - 1000, T0, T0 + 500, T0 + 1000]) await store.append(date, { 'BTC/USD': date });
      assert.deepEqual(dates(await q(store, { fromMs: T0 - 1000, toMs: T0 })), [T0, T0 - 1000]);
      // A snapshot at 1720471800500 ms is outside to=1720471800 s (notes A.2 rule 2).
      assert.deepEqual(dates(await q(store, { fromMs: T0, toMs: T0 })), [T0]);
      assert.deepEqual(dates(await q(store, { fromMs: T0 + 500, toMs: T0 + 1000 })), [T0 + 1000, T0 + 500]);
      assert.deepEqual(dates(await q(store, { fromMs: T0 + 1, toMs: T0 + 499 })), []);
      assert.deepEqual(await q(store, { fromMs: T0 + 1, toMs: T0 }), []);
    }));

    it('accepts one-sided ranges (notes F.9)', withStore(async ({ store }) => {
      for (const date of [T0 - 1000, T0, T0 + 1000]) await store.append(date, { 'BTC/USD': 1 });
      assert.deepEqual(dates(await q(store, { fromMs: T0 })), [T0 + 1000, T0]);
      assert.deepEqual(dates(await q(store, { toMs: T0 })), [T0, T0 - 1000]);
      assert.deepEqual(dates(await q(store, { coin: { kind: 'base', symbol: 'BTC' }, toMs: T0 - 1 })), [T0 - 1000]);
      assert.deepEqual(dates(await q(store, { coin: { kind: 'either', symbol: 'USD' }, fromMs: T0 + 1 })), [T0 + 1000]);
    }));

    it('counts the limit in snapshots, not pairs, and caps it at 100', withStore(async ({ store, seedSnapshots }) => {
      await seedSnapshots(Array.from({ length: 150 }, (_, i) => ({ date: T0 + i * MIN, tickers: FULL })));
      const two = await store.query({ limit: 2, coin: { kind: 'either', symbol: 'USD' } });
      assert.deepEqual(dates(two), [T0 + 149 * MIN, T0 + 148 * MIN]);
      assert.equal(Object.keys(two[0]!.tickers).length, 3);
      assert.equal((await store.query({ limit: 100 })).length, 100);
      assert.equal((await store.query({ limit: 1000 })).length, MAX_LIMIT);
      assert.deepEqual(dates(await store.query({ limit: 3, toMs: T0 + 10 * MIN })), [T0 + 10 * MIN, T0 + 9 * MIN, T0 + 8 * MIN]);
    }));

    it('resolves timestamp alone to the single newest snapshot at or before it', withStore(async ({ store }) => {
      const a = await store.append(T0, FULL);
      await store.append(T0 + MIN, FULL);
      await store.append(T0 + 2 * MIN, FULL);
      assert.deepEqual(await q(store, { timestampMs: T0 + MIN - 1 }), [{ ...a, tickers: FULL }]);
      assert.deepEqual(dates(await q(store, { timestampMs: T0 + MIN })), [T0 + MIN]);
      assert.deepEqual(dates(await q(store, { timestampMs: T0 + 10 * MIN })), [T0 + 2 * MIN]);
      assert.deepEqual(await q(store, { timestampMs: T0 - 1 }), []);
      // timestamp=0 is a real value, not "absent" (notes F.10).
      assert.deepEqual(await q(store, { timestampMs: 0 }), []);
    }));

    it('resolves timestamp with a coin to an older snapshot that has the pair', withStore(async ({ store }) => {
      const old = await store.append(T0, { 'BTC/USD': 60000, 'DOGE/USD': 0.1 });
      // More newer snapshots without DOGE than the candidate cap: they are not candidates at all.
      for (let i = 1; i <= MAX_CANDIDATE_DATES + 10; i++) await store.append(T0 + i * MIN, { 'BTC/USD': 60000 + i });
      const ts = T0 + 100 * MIN;
      assert.deepEqual(await q(store, { timestampMs: ts, coin: { kind: 'pair', base: 'DOGE', quote: 'USD' } }),
        [{ _id: old._id, date: T0, tickers: { 'DOGE/USD': 0.1 } }]);
      assert.deepEqual(await q(store, { timestampMs: ts, coin: { kind: 'either', symbol: 'DOGE' } }),
        [{ _id: old._id, date: T0, tickers: { 'DOGE/USD': 0.1 } }]);
      const newest = await q(store, { timestampMs: ts, coin: { kind: 'quote', symbol: 'USD' } });
      assert.deepEqual(dates(newest), [T0 + (MAX_CANDIDATE_DATES + 10) * MIN]);
      assert.deepEqual(newest[0]!.tickers, { 'BTC/USD': 60000 + MAX_CANDIDATE_DATES + 10 });
      assert.deepEqual(await q(store, { timestampMs: T0 - 1, coin: { kind: 'base', symbol: 'DOGE' } }), []);
    }));

    it('resolves timestamp inside a from/to window, one-sided too', withStore(async ({ store }) => {
      for (let i = 0; i < 5; i++) await store.append(T0 + i * MIN, { 'BTC/USD': i });
      const ts = T0 + 10 * MIN;
      assert.deepEqual(dates(await q(store, { timestampMs: ts, fromMs: T0, toMs: T0 + 2 * MIN })), [T0 + 2 * MIN]);
      assert.deepEqual(dates(await q(store, { timestampMs: T0 + MIN, fromMs: T0, toMs: T0 + 3 * MIN })), [T0 + MIN]);
      assert.deepEqual(dates(await q(store, { timestampMs: ts, toMs: T0 + 3 * MIN + 1 })), [T0 + 3 * MIN]);
      assert.deepEqual(dates(await q(store, { timestampMs: ts, fromMs: T0 + 4 * MIN })), [T0 + 4 * MIN]);
      // The newest snapshot at or before the timestamp lies before the window: nothing.
      assert.deepEqual(await q(store, { timestampMs: T0 + MIN, fromMs: T0 + 2 * MIN }), []);
      assert.deepEqual(await q(store, { timestampMs: ts, fromMs: T0 + 5 * MIN, toMs: T0 + 9 * MIN }), []);
    }));

    it('skips orphan groups (no registry entry) in ranges and point-in-time', withStore(async ({ store, insertOrphans }) => {
      const a = await store.append(T0, FULL);
      await insertOrphans([{ date: T0 + MIN, tickers: FULL }]);
      const c = await store.append(T0 + 2 * MIN, FULL);
      await insertOrphans([{ date: T0 + 3 * MIN, tickers: { 'BTC/USD': 1 } }]);
      assert.deepEqual(dates(await q(store, {})), [T0 + 2 * MIN, T0]);
      assert.deepEqual((await store.query({ limit: 2, coin: { kind: 'base', symbol: 'BTC' } })).map((s) => s._id), [c._id, a._id]);
      assert.deepEqual(dates(await q(store, { timestampMs: T0 + 3 * MIN })), [T0 + 2 * MIN]);
      assert.deepEqual(dates(await q(store, { timestampMs: T0 + MIN, coin: { kind: 'pair', base: 'ETH', quote: 'USD' } })), [T0]);
    }));

    it(`examines at most ${MAX_CANDIDATE_DATES} candidate dates for a point in time`, withStore(async ({ store, insertOrphans }) => {
      await store.append(T0, FULL);
      const orphans = (n: number, from: number) =>
        Array.from({ length: n }, (_, i) => ({ date: T0 + (from + i) * MIN, tickers: FULL }));
      await insertOrphans(orphans(MAX_CANDIDATE_DATES - 1, 1));
      const ts = T0 + 1000 * MIN;
      assert.deepEqual(dates(await q(store, { timestampMs: ts })), [T0], 'the 50th candidate is still examined');
      assert.deepEqual(dates(await q(store, { timestampMs: ts, coin: { kind: 'pair', base: 'BTC', quote: 'USD' } })), [T0]);
      // An orphan without BTC/USD is a candidate for a plain point in time, not for that pair.
      await insertOrphans([{ date: T0 + 900 * MIN, tickers: { 'XRP/USD': 0.5 } }]);
      assert.deepEqual(await q(store, { timestampMs: ts }), [], 'the 51st candidate is not examined');
      assert.deepEqual(dates(await q(store, { timestampMs: ts, coin: { kind: 'pair', base: 'BTC', quote: 'USD' } })), [T0]);
      await insertOrphans(orphans(1, MAX_CANDIDATE_DATES));
      assert.deepEqual(await q(store, { timestampMs: ts, coin: { kind: 'pair', base: 'BTC', quote: 'USD' } }), []);
      assert.deepEqual(await q(store, { timestampMs: ts, coin: { kind: 'either', symbol: 'ETH' } }), []);
      // A window that leaves out the newer orphans brings the snapshot back.
      assert.deepEqual(dates(await q(store, { timestampMs: ts, toMs: T0 + 10 * MIN })), [T0]);
    }));

    it(`scans at most ${MAX_GROUPS_SCANNED} snapshot groups per request`, withStore(async ({ store, insertOrphans, seedSnapshots }) => {
      await seedSnapshots([{ date: T0, tickers: FULL }, { date: T0 + MIN, tickers: FULL }]);
      await insertOrphans(Array.from({ length: MAX_GROUPS_SCANNED - 2 }, (_, i) => ({ date: T0 + (2 + i) * MIN, tickers: { 'BTC/USD': i } })));
      // 998 orphans + 2 snapshots = 1000 groups: both found.
      assert.deepEqual(dates(await q(store, {})), [T0 + MIN, T0]);
      assert.deepEqual(dates(await q(store, { coin: { kind: 'either', symbol: 'BTC' } })), [T0 + MIN, T0]);
      await insertOrphans([{ date: T0 + 5000 * MIN, tickers: { 'BTC/USD': 1 } }]);
      // One more orphan pushes the oldest snapshot beyond the cap.
      assert.deepEqual(dates(await q(store, {})), [T0 + MIN]);
      assert.deepEqual(dates(await q(store, { coin: { kind: 'base', symbol: 'BTC' } })), [T0 + MIN]);
      // A coin the orphans lack does not spend the budget.
      assert.deepEqual(dates(await q(store, { coin: { kind: 'base', symbol: 'ETH' } })), [T0 + MIN, T0]);
      // The cap counts groups, not snapshots returned: a small limit stops early anyway.
      assert.deepEqual(dates(await q(store, { limit: 1 })), [T0 + MIN]);
    }));

    it('rejects a second snapshot at the same date and keeps the first intact', withStore(async ({ store }) => {
      const first = await store.append(T0, { 'BTC/USD': 1 });
      await assert.rejects(store.append(T0, { 'ETH/USD': 2 }), { name: 'DuplicateSnapshotError' });
      assert.deepEqual(await q(store, {}), [{ ...first, tickers: { 'BTC/USD': 1 } }]);
    }));

    it('rejects malformed snapshots without writing anything', withStore(async ({ store }) => {
      await assert.rejects(store.append(T0, { BTCUSD: 1 }), RangeError);
      await assert.rejects(store.append(T0, { 'BTC/USD': Number.NaN }), RangeError);
      await assert.rejects(store.append(T0 + 0.5, { 'BTC/USD': 1 }), RangeError);
      assert.deepEqual(await q(store, {}), []);
    }));

    it('honours an aborted signal', withStore(async ({ store }) => {
      await store.append(T0, FULL);
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(store.query({ limit: 10 }, controller.signal), { name: 'AbortError' });
      assert.equal((await store.query({ limit: 10 }, new AbortController().signal)).length, 1);
    }));
  });
}
