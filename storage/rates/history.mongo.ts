// MongoDB backend of the rates history port: exactly the original 4.1 layout (docs/notes/rates.md C.1, C.3),
// so an operator can point it at an existing database, and roll back to the original service.
//
// - `tickers`: `{_id, date (Number ms), base, quote, rate, __v: 0}`, one document per pair per snapshot;
// - `timestamps` (the registry): `{_id, date, __v: 0}`, one document per complete snapshot;
//   the API `_id` is `timestamps._id.toHexString()` (preserved across the 4.0 → 4.1 migration, spec §9.4).
// - Write order as in the original: all ticker documents first, then the registry document. There is no
//   transaction, so a crash in between leaves an orphan group, which every read skips.
// - The 4.2 indexes (notes C.1) are created when missing; existing indexes (the 4.1 `base_1`, `quote_1`,
//   `base_1_quote_1`) are never dropped, and existing documents are never rewritten. `base`/`quote` are
//   read as stored, including pre-repair swapped 4.1 rows (notes C.2.4).

import { MongoClient, ObjectId, type Collection, type Document, type Filter, type IndexDescription } from 'mongodb';
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

export interface MongoHistoryOptions {
  /** Full connection string; when absent, `mongodb://{host}:{port}/{db}` as in the original (notes C.1). */
  readonly url?: string;
  readonly host: string;
  readonly port: number;
  readonly db: string;
  readonly serverSelectionTimeoutMS?: number;
}

/** Fail fast when the server is unreachable (later upstream documentation: 2 s; the original used 1 s). */
export const DEFAULT_SERVER_SELECTION_TIMEOUT_MS = 2000;

interface TickerDoc {
  _id: ObjectId;
  date: number;
  base: string;
  quote: string;
  rate: number;
  __v: number;
}

interface TimestampDoc {
  _id: ObjectId;
  date: number;
  __v: number;
}

/** The 4.2 indexes (notes C.1); Mongoose's default names. */
const TICKER_INDEXES: IndexDescription[] = [
  { key: { date: 1 }, name: 'date_1' },
  { key: { base: 1, date: -1 }, name: 'base_1_date_-1' },
  { key: { quote: 1, date: -1 }, name: 'quote_1_date_-1' },
  { key: { base: 1, quote: 1, date: -1 }, name: 'base_1_quote_1_date_-1' },
];
const TIMESTAMP_INDEXES: IndexDescription[] = [{ key: { date: 1 }, name: 'date_1', unique: true }];

/** The index that serves each coin filter form sorted by date (`either` is an `$or` the server merges). */
const HINT: Record<'none' | Exclude<CoinFilter['kind'], 'either'>, Document> = {
  none: { date: 1 },
  base: { base: 1, date: -1 },
  quote: { quote: 1, date: -1 },
  pair: { base: 1, quote: 1, date: -1 },
};

/**
 * Rows per round trip of the date walk. Without it a getMore returns up to 16 MiB, far more rows than
 * `limit` snapshots need; 500 rows are ~17 snapshots of 30 pairs.
 */
const FIND_BATCH_SIZE = 500;

const NAMESPACE_NOT_FOUND = 26;
const DUPLICATE_KEY = 11000;

export async function openMongoHistory(opts: MongoHistoryOptions): Promise<HistoryStore> {
  const url = opts.url ?? `mongodb://${opts.host}:${opts.port}/${opts.db}`;
  const client = new MongoClient(url, {
    serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? DEFAULT_SERVER_SELECTION_TIMEOUT_MS,
  });
  try {
    await client.connect();
    const db = client.db(opts.db);
    const tickers = db.collection<TickerDoc>('tickers');
    const timestamps = db.collection<TimestampDoc>('timestamps');
    await ensureIndexes(tickers, TICKER_INDEXES);
    // Fails when a migrated database holds duplicate dates (notes C.2.6): refuse to serve it silently.
    await ensureIndexes(timestamps, TIMESTAMP_INDEXES);
    return createStore(client, tickers, timestamps);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
}

/** Creates each index whose key pattern is not present yet, under whatever name; drops nothing. */
async function ensureIndexes(collection: Collection<any>, wanted: IndexDescription[]): Promise<void> {
  let existing: Document[];
  try {
    existing = await collection.listIndexes().toArray();
  } catch (error) {
    if ((error as { code?: unknown }).code !== NAMESPACE_NOT_FOUND) throw error;
    existing = [];
  }
  const missing = wanted.filter((index) => !existing.some((have) => sameKey(have['key'] as Document, index.key as Document)));
  if (missing.length > 0) await collection.createIndexes(missing);
}

function sameKey(a: Document, b: Document): boolean {
  const left = Object.entries(a);
  const right = Object.entries(b);
  return left.length === right.length && left.every(([k, v], i) => k === right[i]![0] && Number(v) === Number(right[i]![1]));
}

interface Group {
  date: number;
  rows: Array<Pick<TickerDoc, '_id' | 'base' | 'quote' | 'rate'>>;
}

function createStore(
  client: MongoClient,
  tickers: Collection<TickerDoc>,
  timestamps: Collection<TimestampDoc>,
): HistoryStore {
  /**
   * Walks matching ticker rows newest-first grouped by date, resolving registry membership in batches
   * (one `$in` per batch of finished groups), until `want` groups are included or `maxGroups` were seen.
   */
  async function walk(
    coin: CoinFilter | undefined,
    lo: number | undefined,
    hi: number | undefined,
    want: number,
    maxGroups: number,
    signal: AbortSignal | undefined,
  ): Promise<Snapshot[]> {
    const range: Document = {};
    if (lo !== undefined) range['$gte'] = lo;
    if (hi !== undefined) range['$lte'] = hi;
    const withDate = (predicate: Document): Document =>
      Object.keys(range).length > 0 ? { ...predicate, date: range } : predicate;
    const filter: Filter<TickerDoc> =
      coin?.kind === 'either'
        ? { $or: [withDate({ base: coin.symbol }), withDate({ quote: coin.symbol })] }
        : withDate(coinPredicate(coin));
    const hint = coin?.kind === 'either' ? undefined : HINT[coin?.kind ?? 'none'];

    const included: Snapshot[] = [];
    let pending: Group[] = [];
    const flush = async (): Promise<void> => {
      if (pending.length === 0) return;
      signal?.throwIfAborted();
      const docs = await timestamps
        .find({ date: { $in: pending.map((g) => g.date) } }, { projection: { _id: 1, date: 1 }, signal })
        .toArray();
      const ids = new Map(docs.map((d) => [d.date, d._id] as const));
      for (const group of pending) {
        const id = ids.get(group.date);
        if (id === undefined) continue; // orphan group (interrupted write), spec §4.2 rule 6
        included.push(toSnapshot(id, group));
        if (included.length === want) break;
      }
      pending = [];
    };

    const cursor = tickers.find(filter, {
      projection: { _id: 1, date: 1, base: 1, quote: 1, rate: 1 },
      sort: { date: -1 },
      batchSize: FIND_BATCH_SIZE,
      ...(hint === undefined ? {} : { hint }),
      signal,
    });
    try {
      let current: Group | undefined;
      let scanned = 0;
      for await (const doc of cursor) {
        if (current !== undefined && doc.date === current.date) {
          current.rows.push(doc);
          continue;
        }
        if (current !== undefined) {
          pending.push(current);
          current = undefined;
          if (pending.length >= want - included.length) {
            await flush();
            if (included.length >= want) break;
          }
        }
        if (scanned >= maxGroups) break;
        scanned += 1;
        current = { date: doc.date, rows: [doc] };
      }
      if (current !== undefined) pending.push(current);
      if (included.length < want) await flush();
    } finally {
      await cursor.close();
    }
    return included;
  }

  let closed = false;

  return {
    async append(date, snapshotTickers, signal) {
      signal?.throwIfAborted();
      const rows = checkSnapshot(date, snapshotTickers);
      if ((await timestamps.findOne({ date }, { projection: { _id: 1 } })) !== null) throw new DuplicateSnapshotError(date);
      const docs: TickerDoc[] = rows.map(([base, quote, rate]) => ({ _id: new ObjectId(), date, base, quote, rate, __v: 0 }));
      if (docs.length > 0) await tickers.insertMany(docs, { ordered: true });
      const _id = ObjectId.createFromHexString(newObjectIdHex(date));
      try {
        await timestamps.insertOne({ _id, date, __v: 0 });
      } catch (error) {
        // Another writer registered this date first. Our rows would silently join its snapshot: remove them.
        // Only on a duplicate key, where the registry write certainly did not happen.
        if ((error as { code?: unknown }).code === DUPLICATE_KEY) {
          await tickers.deleteMany({ _id: { $in: docs.map((d) => d._id) } }).catch(() => undefined);
          throw new DuplicateSnapshotError(date);
        }
        throw error;
      }
      return { _id: _id.toHexString(), date };
    },

    async query(query: HistoryQuery, signal?: AbortSignal): Promise<Snapshot[]> {
      signal?.throwIfAborted();
      const { limit, lo, hi, pointInTime } = normalizeQuery(query);
      if (lo !== undefined && hi !== undefined && lo > hi) return [];
      return pointInTime
        ? walk(query.coin, lo, hi, 1, MAX_CANDIDATE_DATES, signal)
        : walk(query.coin, lo, hi, limit, MAX_GROUPS_SCANNED, signal);
    },

    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
  };
}

function coinPredicate(coin: Exclude<CoinFilter, { kind: 'either' }> | undefined): Document {
  if (coin === undefined) return {};
  switch (coin.kind) {
    case 'base':
      return { base: coin.symbol };
    case 'quote':
      return { quote: coin.symbol };
    case 'pair':
      return { base: coin.base, quote: coin.quote };
  }
}

/** Pairs keyed `base/quote` as stored, in insertion order (ticker `_id` order; notes F.19). */
function toSnapshot(id: ObjectId, group: Group): Snapshot {
  const rows = [...group.rows].sort((a, b) => compareObjectIds(a._id, b._id));
  const tickers: Record<string, number> = {};
  for (const row of rows) tickers[`${row.base}/${row.quote}`] = row.rate;
  return { _id: id.toHexString(), date: group.date, tickers };
}

function compareObjectIds(a: unknown, b: unknown): number {
  if (!(a instanceof ObjectId) || !(b instanceof ObjectId)) return 0;
  const x = a.toHexString();
  const y = b.toHexString();
  return x < y ? -1 : x > y ? 1 : 0;
}
