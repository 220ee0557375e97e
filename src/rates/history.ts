// Domain shapes of the rates history (docs/specs/rates.md §2.3, §4.2). The storage port (storage/rates/history.ts)
// and the query parser (src/rates/query.ts) share them.

/** Coin filter forms of /getHistory: `SYM` (either side), `SYM/` (base), `/SYM` (quote), `A/B` (exact). */
export type CoinFilter =
  | { readonly kind: 'either'; readonly symbol: string }
  | { readonly kind: 'base'; readonly symbol: string }
  | { readonly kind: 'quote'; readonly symbol: string }
  | { readonly kind: 'pair'; readonly base: string; readonly quote: string };

export interface HistoryQuery {
  readonly coin?: CoinFilter;
  /** Inclusive bounds, Unix milliseconds. */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Point in time, Unix milliseconds: newest snapshot at or before it (at most one result). */
  readonly timestampMs?: number;
  /** Snapshots to return, 1..100. */
  readonly limit: number;
}

export interface Snapshot {
  /** Registry document id, 24 lowercase hex characters (ObjectId format). */
  readonly _id: string;
  /** Unix milliseconds. */
  readonly date: number;
  /** Pair → rate, only the pairs that matched the coin filter. */
  readonly tickers: Record<string, number>;
}

