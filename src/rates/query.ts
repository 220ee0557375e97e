// Query-string validation of the rates read API (docs/specs/rates.md §4, §7; docs/notes/rates.md A.0–A.3, F.9–F.16).
//
// Pure functions: raw query string in (what follows `?`, still percent-encoded), either a typed value
// or `{ ok: false, msg }` out, where `msg` is exactly what the original (NestJS + zod v4) would put in
// the failure envelope: the message of the FIRST zod issue. No zod here; the zod v4 behaviour that
// decides which issue comes first is reproduced by hand:
//
// 1. Field issues, in schema key order (/get: coin, rateLifetime; /getHistory: coin, from, to,
//    timestamp, limit). A strict zod object parses every declared key in shape order, so a bad field
//    reports before anything else, whatever order the client wrote the parameters in.
// 2. The strict object's `unrecognized_keys` issue (one issue naming every unknown key):
//    `Unrecognized key: "a"` or `Unrecognized keys: "a", "b"`. Keys are listed in JS property order
//    (integer-like keys first, ascending; then first-appearance order), as zod's `for…in` sees them.
//    Quotes are not escaped (zod's joinValues does not escape either).
// 3. Object-level refinements: `At least one parameter is required`, then the from/to interval check.
//    So `?foo=1` alone on /getHistory says `Unrecognized key: "foo"` (notes A.0).
//
// Within one field: the type check first (coercion `Number(x)`; NaN → `…received NaN`; ±Infinity →
// `…received number`, because zod v4's number type rejects non-finite values and its English error map
// names the received type with `parsedType`, which says "number" for Infinity), then the checks in
// declaration order. We take the idiomatic declaration `z.coerce.number().int().positive()` (and
// `.int().nonnegative()` for `timestamp`): `.int()` on a number is an ordinary check in zod v4 (only
// `z.int()` makes it part of the type), so it runs in declaration order, i.e. first, and its
// non-integer issue carries `continue: false`, which skips the later checks. Hence `limit=-2.5` and
// `timestamp=-1.5` both answer `Invalid input: expected int, received number`.
//
// Where zod's own `.int()` would add a safe-integer range issue of its own ("Too big: expected int to be
// <9007199254740991") the spec's causes win instead (spec §7 is the authority and names the message by
// cause): a too-large timestamp is always `Timestamp is too large`, a huge `limit` is simply capped at
// 100 (notes F.13), a hugely negative value is "Too small…".

/** Snapshots per /getHistory answer: default and cap (spec §4.2, §8; notes F.13: capped, not rejected). */
export const MAX_HISTORY_LIMIT = 100;

/**
 * One symbol: the original's `[$A-Za-z0-9]` (`$` for the shipped `CWIF → $CWIF` mapping) widened with
 * `.` and `_` because spec §2.2 says filters accept the wider set upstream keys use (notes F.15).
 * `-` stays out: notes H.34 requires `coin=ADM-USD` to be refused as `Invalid input` (a pair written with
 * the wrong separator), and the config's coin lists use this same pattern, so every stored key stays
 * addressable. `,` (list separator) and `/` (pair separator) stay reserved. Matched before uppercasing.
 */
export const SYMBOL_PATTERN = '[$A-Za-z0-9._]+';
const SYMBOL_RE = new RegExp(`^${SYMBOL_PATTERN}$`);
const SYMBOL_LIST_RE = new RegExp(`^${SYMBOL_PATTERN}(?:,${SYMBOL_PATTERN})*$`);

/** Exact zod v4 / original texts (spec §7; notes A.1, A.2). */
export const QUERY_MESSAGES = {
  invalidCoinList: 'Invalid coin name list',
  invalidCoin: 'Invalid input',
  expectedString: 'Invalid input: expected string, received array',
  notANumber: 'Invalid input: expected number, received NaN',
  notFinite: 'Invalid input: expected number, received number',
  notInteger: 'Invalid input: expected int, received number',
  notPositive: 'Too small: expected number to be >0',
  negative: 'Too small: expected number to be >=0',
  timestampTooLarge: 'Timestamp is too large',
  atLeastOne: 'At least one parameter is required',
  badInterval: "Invalid time interval: 'to' timestamp must be greater than or equal to 'from'",
} as const;

// ---------------------------------------------------------------------------------------------------
// Result types. The history shapes are shared with the storage port (src/rates/history.ts).

import type { CoinFilter, HistoryQuery } from './history.js';

export type { CoinFilter, HistoryQuery };

export interface QueryRejected {
  readonly ok: false;
  /** The first validation issue's message, verbatim for the failure envelope (400). */
  readonly msg: string;
}

export type GetQueryResult =
  | {
      readonly ok: true;
      /** Requested symbols, uppercased, in request order; absent = the whole table. */
      readonly coins?: string[];
      /** Quote age window in minutes (> 0, fractions allowed); absent = configured lifetime. */
      readonly rateLifetime?: number;
    }
  | QueryRejected;

export type HistoryQueryResult = { readonly ok: true; readonly query: HistoryQuery } | QueryRejected;

export type StatusQueryResult = { readonly ok: true } | QueryRejected;

// ---------------------------------------------------------------------------------------------------
// Raw query parsing.

/** A parameter's value as the original's query parser delivers it: repeated keys become an array. */
type RawValue = string | string[];
type RawQuery = Record<string, RawValue>;

/**
 * URLSearchParams semantics (`+` is a space, percent-decoding, a leading `?` ignored, `a` alone is
 * `a=""`). A null-prototype object keeps `__proto__` & co. ordinary keys and gives JS property order.
 */
function parseRaw(raw: string): RawQuery {
  const out: RawQuery = Object.create(null) as RawQuery;
  for (const [key, value] of new URLSearchParams(raw)) {
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (typeof prev === 'string') out[key] = [prev, value];
    else prev.push(value);
  }
  return out;
}

type Field<T> = { readonly ok: true; readonly value: T } | QueryRejected;

const ok = <T>(value: T): Field<T> => ({ ok: true, value });
const fail = (msg: string): QueryRejected => ({ ok: false, msg });

/** zod v4 `z.coerce.number()`: `Number(input)`, then finite-number type check. */
function coerceNumber(raw: RawValue): Field<number> {
  // Number(['1', '2']) is NaN, which is how a repeated numeric parameter fails (notes A.0).
  const n = Number(raw);
  if (Number.isNaN(n)) return fail(QUERY_MESSAGES.notANumber);
  if (!Number.isFinite(n)) return fail(QUERY_MESSAGES.notFinite);
  return ok(n === 0 ? 0 : n); // -0 → 0, so `from=-0` yields fromMs 0, not -0
}

/** Seconds beyond this, times 1000, leave the safe integer range (notes F.11: 9007199254740.991). */
function tooLargeForMs(seconds: number): boolean {
  return seconds * 1000 > Number.MAX_SAFE_INTEGER;
}

/** `rateLifetime`: coerced number, > 0, minutes. */
function rateLifetimeField(raw: RawValue): Field<number> {
  const n = coerceNumber(raw);
  if (!n.ok) return n;
  if (!(n.value > 0)) return fail(QUERY_MESSAGES.notPositive);
  return n;
}

/** `from` / `to`: coerced number, >= 0, fractions allowed (notes F.12), seconds. */
function boundField(raw: RawValue): Field<number> {
  const n = coerceNumber(raw);
  if (!n.ok) return n;
  if (n.value < 0) return fail(QUERY_MESSAGES.negative);
  if (tooLargeForMs(n.value)) return fail(QUERY_MESSAGES.timestampTooLarge);
  return n;
}

/** `timestamp`: coerced number, integer, >= 0, seconds whose milliseconds are a safe integer. */
function timestampField(raw: RawValue): Field<number> {
  const n = coerceNumber(raw);
  if (!n.ok) return n;
  if (!Number.isInteger(n.value)) return fail(QUERY_MESSAGES.notInteger);
  if (n.value < 0) return fail(QUERY_MESSAGES.negative);
  if (tooLargeForMs(n.value)) return fail(QUERY_MESSAGES.timestampTooLarge);
  return n;
}

/** `limit`: coerced number, integer, > 0; larger than MAX_HISTORY_LIMIT is capped (notes F.13). */
function limitField(raw: RawValue): Field<number> {
  const n = coerceNumber(raw);
  if (!n.ok) return n;
  if (!Number.isInteger(n.value)) return fail(QUERY_MESSAGES.notInteger);
  if (n.value <= 0) return fail(QUERY_MESSAGES.notPositive);
  return ok(Math.min(n.value, MAX_HISTORY_LIMIT));
}

/** /get `coin`: `z.string()` then the list pattern; uppercased and split on `,` (notes A.1). */
function coinListField(raw: RawValue): Field<string[]> {
  if (typeof raw !== 'string') return fail(QUERY_MESSAGES.expectedString);
  if (!SYMBOL_LIST_RE.test(raw)) return fail(QUERY_MESSAGES.invalidCoinList);
  return ok(raw.toUpperCase().split(','));
}

/**
 * /getHistory `coin`: a zod union of the symbol and pair forms, so any failure, a repeated parameter
 * (array) included, is the union's `Invalid input` (both branches fail their `z.string()` type check,
 * which aborts them, and zod then reports `invalid_union`).
 */
function coinFilterField(raw: RawValue): Field<CoinFilter> {
  if (typeof raw !== 'string') return fail(QUERY_MESSAGES.invalidCoin);
  const parts = raw.split('/');
  const isSym = (s: string | undefined): s is string => s !== undefined && SYMBOL_RE.test(s);
  if (parts.length === 1 && isSym(parts[0])) return ok({ kind: 'either', symbol: parts[0].toUpperCase() });
  if (parts.length === 2) {
    const [base, quote] = parts as [string, string];
    if (isSym(base) && isSym(quote)) return ok({ kind: 'pair', base: base.toUpperCase(), quote: quote.toUpperCase() });
    if (isSym(base) && quote === '') return ok({ kind: 'base', symbol: base.toUpperCase() });
    if (base === '' && isSym(quote)) return ok({ kind: 'quote', symbol: quote.toUpperCase() });
  }
  return fail(QUERY_MESSAGES.invalidCoin); // '', '/', 'A//B', 'A/B/C', 'a b', 'A,B', …
}

/** The strict object's single `unrecognized_keys` issue, or undefined when every key is declared. */
function unrecognized(query: RawQuery, declared: readonly string[]): QueryRejected | undefined {
  const unknown: string[] = [];
  for (const key of Object.keys(query)) if (!declared.includes(key)) unknown.push(key);
  if (unknown.length === 0) return undefined;
  const list = unknown.map((k) => `"${k}"`).join(', ');
  return fail(`Unrecognized key${unknown.length > 1 ? 's' : ''}: ${list}`);
}

// ---------------------------------------------------------------------------------------------------
// Endpoints.

const GET_KEYS = ['coin', 'rateLifetime'] as const;
const HISTORY_KEYS = ['coin', 'from', 'to', 'timestamp', 'limit'] as const;

/** GET /get (spec §4.1; notes A.1). */
export function parseGetQuery(raw: string): GetQueryResult {
  if (raw === '') return { ok: true }; // the hot path: the whole table
  const q = parseRaw(raw);
  let coins: string[] | undefined;
  let rateLifetime: number | undefined;

  if (q['coin'] !== undefined) {
    const f = coinListField(q['coin']);
    if (!f.ok) return f;
    coins = f.value;
  }
  if (q['rateLifetime'] !== undefined) {
    const f = rateLifetimeField(q['rateLifetime']);
    if (!f.ok) return f;
    rateLifetime = f.value;
  }
  const extra = unrecognized(q, GET_KEYS);
  if (extra) return extra;

  return {
    ok: true,
    ...(coins !== undefined ? { coins } : {}),
    ...(rateLifetime !== undefined ? { rateLifetime } : {}),
  };
}

/** GET /getHistory (spec §4.2; notes A.2, F.9–F.14). Seconds in, milliseconds out. */
export function parseHistoryQuery(raw: string): HistoryQueryResult {
  const q = parseRaw(raw);
  let coin: CoinFilter | undefined;
  let from: number | undefined;
  let to: number | undefined;
  let timestamp: number | undefined;
  let limit = MAX_HISTORY_LIMIT;

  if (q['coin'] !== undefined) {
    const f = coinFilterField(q['coin']);
    if (!f.ok) return f;
    coin = f.value;
  }
  if (q['from'] !== undefined) {
    const f = boundField(q['from']);
    if (!f.ok) return f;
    from = f.value;
  }
  if (q['to'] !== undefined) {
    const f = boundField(q['to']);
    if (!f.ok) return f;
    to = f.value;
  }
  if (q['timestamp'] !== undefined) {
    const f = timestampField(q['timestamp']);
    if (!f.ok) return f;
    timestamp = f.value;
  }
  if (q['limit'] !== undefined) {
    const f = limitField(q['limit']);
    if (!f.ok) return f;
    limit = f.value;
  }
  const extra = unrecognized(q, HISTORY_KEYS);
  if (extra) return extra;

  if (!HISTORY_KEYS.some((k) => q[k] !== undefined)) return fail(QUERY_MESSAGES.atLeastOne);
  // Only a closed range can be inverted; one-sided ranges are valid (notes F.9).
  if (from !== undefined && to !== undefined && from > to) return fail(QUERY_MESSAGES.badInterval);

  // `from`/`to` are multiplied as the original does (`from * 1000`), not rounded: fractional seconds
  // are accepted (notes F.12) and the bounds stay inclusive against integer snapshot dates.
  const query: HistoryQuery = {
    ...(coin !== undefined ? { coin } : {}),
    ...(from !== undefined ? { fromMs: from * 1000 } : {}),
    ...(to !== undefined ? { toMs: to * 1000 } : {}),
    ...(timestamp !== undefined ? { timestampMs: timestamp * 1000 } : {}),
    limit,
  };
  return { ok: true, query };
}

/**
 * GET /status. Spec §4.3 says "No parameters"; the original has no schema there and ignores extras.
 * Decision (notes F.16 recommendation, consistency with spec §4 "Unknown query parameters are rejected
 * with 400"): strict, so any parameter is `Unrecognized key: "x"` like on the other endpoints.
 */
export function parseStatusQuery(raw: string): StatusQueryResult {
  return unrecognized(parseRaw(raw), []) ?? { ok: true };
}

/** spec §4.1: a pair is returned when either side matches one of the requested symbols. */
export function filterByCoins(table: Readonly<Record<string, number>>, coins: readonly string[]): Record<string, number> {
  const wanted = new Set(coins);
  const result: Record<string, number> = {};
  for (const [pair, rate] of Object.entries(table)) {
    const slash = pair.indexOf('/');
    if (wanted.has(pair.slice(0, slash)) || wanted.has(pair.slice(slash + 1))) result[pair] = rate;
  }
  return result;
}
