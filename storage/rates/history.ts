// The rates history port (docs/specs/rates.md §2.3, §4.2; docs/notes/rates.md A.2, C).
// Backends: history.sqlite.ts (embedded default) and history.mongo.ts (original 4.1/4.2 layout).

import type { HistoryQuery, Snapshot } from '../../src/rates/history.js';
import { MAX_HISTORY_LIMIT } from '../../src/rates/query.js';

export type { CoinFilter, HistoryQuery, Snapshot } from '../../src/rates/history.js';

/** Scan caps of spec §4.2 rule 7. */
export const MAX_GROUPS_SCANNED = 1000;
export const MAX_CANDIDATE_DATES = 50;
export const MAX_LIMIT = MAX_HISTORY_LIMIT;

export interface HistoryStore {
  /**
   * Stores one snapshot (all pairs plus its registry entry) and returns the registry id. `signal` is
   * checked before the write starts; a write that has started completes, so no half snapshot is left.
   */
  append(date: number, tickers: Readonly<Record<string, number>>, signal?: AbortSignal): Promise<{ _id: string; date: number }>;
  /** Newest first; orphan groups (no registry entry) skipped; caps applied. */
  query(query: HistoryQuery, signal?: AbortSignal): Promise<Snapshot[]>;
  close(): Promise<void>;
}
