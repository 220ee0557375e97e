// Input checks shared by both history backends, so SQLite and MongoDB refuse exactly the same things.

import type { HistoryQuery } from '../../src/rates/history.js';
import { MAX_LIMIT } from './history.js';

/** The registry's date is unique (notes C.1): a second snapshot at the same ms would merge into the first. */
export class DuplicateSnapshotError extends Error {
  override readonly name = 'DuplicateSnapshotError';
  constructor(readonly date: number) {
    super(`a snapshot at ${date} ms is already stored`);
  }
}

/** Validates a snapshot before writing: `BASE/QUOTE` keys (one slash, both sides non-empty), finite rates. */
export function checkSnapshot(date: number, tickers: Readonly<Record<string, number>>): Array<[string, string, number]> {
  if (!Number.isSafeInteger(date)) throw new RangeError(`snapshot date must be integer Unix ms, got ${date}`);
  const rows: Array<[string, string, number]> = [];
  for (const [pair, rate] of Object.entries(tickers)) {
    const slash = pair.indexOf('/');
    if (slash <= 0 || slash === pair.length - 1 || pair.indexOf('/', slash + 1) !== -1) {
      throw new RangeError(`ticker key must be BASE/QUOTE, got ${JSON.stringify(pair)}`);
    }
    if (typeof rate !== 'number' || !Number.isFinite(rate)) {
      throw new RangeError(`rate of ${pair} must be a finite number, got ${String(rate)}`);
    }
    rows.push([pair.slice(0, slash), pair.slice(slash + 1), rate]);
  }
  return rows;
}

/**
 * Bounds of the date walk. Point-in-time (notes A.2 rule 3, F.9, F.10): newest date ≤ timestampMs inside
 * the optional from/to window; `timestampMs: 0` is a real value. Undefined bounds are open.
 */
export function normalizeQuery(query: HistoryQuery): { limit: number; lo: number | undefined; hi: number | undefined; pointInTime: boolean } {
  if (!Number.isInteger(query.limit) || query.limit < 1) {
    throw new RangeError(`history query limit must be a positive integer, got ${query.limit}`);
  }
  for (const key of ['fromMs', 'toMs', 'timestampMs'] as const) {
    const value = query[key];
    if (value !== undefined && Number.isNaN(value)) throw new RangeError(`history query ${key} is NaN`);
  }
  const limit = Math.min(query.limit, MAX_LIMIT);
  let hi = query.toMs;
  if (query.timestampMs !== undefined) hi = hi === undefined ? query.timestampMs : Math.min(hi, query.timestampMs);
  return { limit, lo: query.fromMs, hi, pointInTime: query.timestampMs !== undefined };
}
