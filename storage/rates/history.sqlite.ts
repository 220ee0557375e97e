// SQLite backend of the rates history port: the embedded default (docs/notes/rates.md C.3, F.3).
//
// Layout: `timestamps` is the registry (one row per complete snapshot, `id` in ObjectId format) and
// `tickers` holds one row per pair per snapshot, like the MongoDB 4.1 layout (notes C.1), so the same
// query semantics (spec §4.2, notes A.2) apply. A snapshot is written in one transaction, so orphan
// groups never arise here; reads still skip them because imported 4.1 data may contain some.
//
// Reads are two-phase and bounded: phase 1 walks the distinct dates of matching rows newest-first
// through a covering index, joined to the registry, in chunks (stops at `limit` included snapshots or
// at the scan cap); phase 2 fetches the matching rows of each included date through an index.

import type Database from 'better-sqlite3';
import { openSqlite } from '../sqlite.js';
import {
  MAX_CANDIDATE_DATES,
  MAX_GROUPS_SCANNED,
  type CoinFilter,
  type HistoryQuery,
  type HistoryStore,
  type Snapshot,
} from './history.js';
import { newObjectIdHex } from './object-id.js';
import { checkSnapshot, DuplicateSnapshotError, normalizeQuery } from './history.checks.js';

/** `PRAGMA user_version` of the layout below. Bump with a migration step when the layout changes. */
export const SQLITE_HISTORY_SCHEMA_VERSION = 1;

export interface SqliteHistoryStore extends HistoryStore {
  /** Stores many snapshots in one transaction (bulk import, benchmarks). All or nothing. */
  appendMany(snapshots: ReadonlyArray<{ date: number; tickers: Readonly<Record<string, number>> }>): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS timestamps (
  id   TEXT PRIMARY KEY,
  date INTEGER NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS tickers (
  date  INTEGER NOT NULL,
  base  TEXT NOT NULL,
  quote TEXT NOT NULL,
  rate  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS tickers_date ON tickers (date);
CREATE INDEX IF NOT EXISTS tickers_base_date ON tickers (base, date DESC);
CREATE INDEX IF NOT EXISTS tickers_quote_date ON tickers (quote, date DESC);
CREATE INDEX IF NOT EXISTS tickers_base_quote_date ON tickers (base, quote, date DESC);
`;

/** Stand-ins for an absent bound: every stored date (a safe integer of ms) lies between them. */
const LOWEST = -Number.MAX_VALUE;
const HIGHEST = Number.MAX_VALUE;

type CoinKind = 'none' | CoinFilter['kind'];

/** Row predicate per coin filter form (notes A.2 rule 1), over named parameters @a and @b. */
const COIN_PREDICATE: Record<Exclude<CoinKind, 'either'>, string> = {
  none: '1',
  base: 'base = @a',
  quote: 'quote = @a',
  pair: 'base = @a AND quote = @b',
};

const DATE_WINDOW = 'date >= @lo AND date <= @hi AND date < @below';

/**
 * Distinct dates of matching rows, newest first, at most @n, each with its registry id (NULL for an
 * orphan group). `either` is a UNION of two index walks so SQLite merges them in order instead of
 * sorting every matching row (checked with EXPLAIN QUERY PLAN: MERGE (UNION), covering indexes).
 */
function datesSql(kind: CoinKind): string {
  const dates =
    kind === 'either'
      ? `SELECT date FROM tickers WHERE base = @a AND ${DATE_WINDOW}
         UNION
         SELECT date FROM tickers WHERE quote = @a AND ${DATE_WINDOW}
         ORDER BY date DESC LIMIT @n`
      : `SELECT DISTINCT date FROM tickers WHERE ${COIN_PREDICATE[kind]} AND ${DATE_WINDOW}
         ORDER BY date DESC LIMIT @n`;
  return `SELECT d.date AS date, ts.id AS id FROM (${dates}) AS d
          LEFT JOIN timestamps AS ts ON ts.date = d.date ORDER BY d.date DESC`;
}

/** Matching rows of one date in insertion order (notes F.19). */
function rowsSql(kind: CoinKind): string {
  const predicate = kind === 'either' ? '(base = @a OR quote = @a)' : COIN_PREDICATE[kind];
  return `SELECT base, quote, rate FROM tickers WHERE date = @d AND ${predicate} ORDER BY rowid`;
}

interface DateRow {
  date: number;
  id: string | null;
}
interface TickerRow {
  base: string;
  quote: string;
  rate: number;
}
interface Included {
  date: number;
  id: string;
}

const KINDS: readonly CoinKind[] = ['none', 'either', 'base', 'quote', 'pair'];

export function openSqliteHistory(path: string): SqliteHistoryStore {
  // WAL + NORMAL: a committed snapshot survives a process crash; at worst the last ones are lost on
  // power failure, which costs one refresh cycle.
  return openSqlite(
    path,
    { synchronous: 'NORMAL', schema: { name: 'rates history', version: SQLITE_HISTORY_SCHEMA_VERSION, sql: SCHEMA } },
    (db) => createStore(db),
  );
}

function createStore(db: Database.Database): SqliteHistoryStore {

  const datesStmt = new Map<CoinKind, Database.Statement>();
  const rowsStmt = new Map<CoinKind, Database.Statement>();
  for (const kind of KINDS) {
    datesStmt.set(kind, db.prepare(datesSql(kind)));
    rowsStmt.set(kind, db.prepare(rowsSql(kind)));
  }
  const registryHas = db.prepare('SELECT 1 FROM timestamps WHERE date = ?').pluck();
  const insertRegistry = db.prepare('INSERT INTO timestamps (id, date) VALUES (?, ?)');
  const insertTicker = db.prepare('INSERT INTO tickers (date, base, quote, rate) VALUES (?, ?, ?, ?)');

  function writeOne(date: number, tickers: Readonly<Record<string, number>>): { _id: string; date: number } {
    const rows = checkSnapshot(date, tickers);
    if (registryHas.get(date) !== undefined) throw new DuplicateSnapshotError(date);
    for (const [base, quote, rate] of rows) insertTicker.run(date, base, quote, rate);
    const _id = newObjectIdHex(date);
    insertRegistry.run(_id, date);
    return { _id, date };
  }
  const appendTx = db.transaction(writeOne);
  const appendManyTx = db.transaction(
    (snapshots: ReadonlyArray<{ date: number; tickers: Readonly<Record<string, number>> }>) => {
      for (const s of snapshots) writeOne(s.date, s.tickers);
    },
  );

  /** Phase 1: included (registry-backed) dates, newest first; see the scan caps of spec §4.2 rule 7. */
  function walkDates(
    kind: CoinKind,
    coinParams: Record<string, string>,
    lo: number,
    hi: number,
    want: number,
    maxGroups: number,
    signal: AbortSignal | undefined,
  ): Included[] {
    const stmt = datesStmt.get(kind)!;
    const included: Included[] = [];
    let scanned = 0;
    let below = HIGHEST;
    let chunk = 0;
    while (included.length < want && scanned < maxGroups) {
      signal?.throwIfAborted();
      // Orphans are rare: ask for exactly what is still wanted, doubling if orphans keep turning up.
      chunk = Math.min(maxGroups - scanned, Math.max(want - included.length, chunk * 2));
      const rows = stmt.all({ ...coinParams, lo, hi, below, n: chunk }) as DateRow[];
      for (const row of rows) {
        scanned += 1;
        if (row.id !== null) {
          included.push({ date: row.date, id: row.id });
          if (included.length === want) break;
        }
      }
      if (rows.length < chunk) break;
      below = rows[rows.length - 1]!.date;
    }
    return included;
  }

  let closed = false;

  return {
    async append(date, tickers, signal) {
      signal?.throwIfAborted();
      return appendTx(date, tickers);
    },

    appendMany(snapshots) {
      appendManyTx(snapshots);
    },

    async query(query: HistoryQuery, signal?: AbortSignal): Promise<Snapshot[]> {
      signal?.throwIfAborted();
      const bounds = normalizeQuery(query);
      const { limit, pointInTime } = bounds;
      const lo = bounds.lo ?? LOWEST;
      const hi = bounds.hi ?? HIGHEST;
      if (lo > hi) return [];
      const kind: CoinKind = query.coin?.kind ?? 'none';
      const coinParams = coinParameters(query.coin);
      const included = pointInTime
        ? walkDates(kind, coinParams, lo, hi, 1, MAX_CANDIDATE_DATES, signal)
        : walkDates(kind, coinParams, lo, hi, limit, MAX_GROUPS_SCANNED, signal);
      const rowsOf = rowsStmt.get(kind)!;
      const result: Snapshot[] = [];
      for (const { date, id } of included) {
        signal?.throwIfAborted();
        const rows = rowsOf.all({ ...coinParams, d: date }) as TickerRow[];
        if (rows.length === 0) continue;
        const tickers: Record<string, number> = {};
        for (const row of rows) tickers[`${row.base}/${row.quote}`] = row.rate;
        result.push({ _id: id, date, tickers });
      }
      return result;
    },

    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

function coinParameters(coin: CoinFilter | undefined): Record<string, string> {
  if (coin === undefined) return {};
  if (coin.kind === 'pair') return { a: coin.base, b: coin.quote };
  return { a: coin.symbol };
}
