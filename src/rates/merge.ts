// The 4.2 merge pipeline of the rates service as pure functions over plain data
// (docs/specs/rates.md §1.4, §2.2, §2.3, §4.1, §8; docs/notes/rates.md B.10, the recommended pipeline).
//
// The refresh-cycle machine keeps `RetainedQuotes` and `ResolvedRates` in its XState context,
// so both are plain, never-mutated objects (no Maps, no classes): every function returns a new
// value and shares untouched sub-objects with its input. Time is always a parameter.
//
// Per cycle the caller does:
//   retained = applySourceQuotes(retained, source, quotes, now, mappings)   // each successful source, SOURCE_ORDER
//   { table, resolved, issues } = evaluate({ retained, previous: resolved, settings, now, lifetimeMs })
// and per `/get?rateLifetime=x` (x ≠ configured) only `evaluate(...)` with the other window,
// discarding its `resolved` (a request must not move the conflict fallback).

import { chooseDominantGroup, splitIntoGroups, type GroupMember } from './grouping.js';
import { isServable, roundTo, triangulate } from './triangulate.js';
import { SOURCE_ORDER, type MergeSettings, type Quote, type RateTable, type Strategy } from './types.js';
import { DEFAULT_SOURCE_WEIGHT } from './config-defaults.js';

export { roundTo } from './triangulate.js';

/** One source's last good quote of one pair. */
export interface RetainedQuote {
  readonly price: number;
  /** When the cycle that fetched it received it, Unix ms (notes F.7: millisecond ages). */
  readonly receivedAt: number;
}

/** pair → source → last good quote: retention per (pair, source), notes B.10.1 and F.6. */
export type RetainedQuotes = Readonly<Record<string /* pair */, Readonly<Record<string /* source */, RetainedQuote>>>>;

/** One pair's last resolved (direct, not triangulated) value. */
export interface ResolvedRate {
  readonly value: number;
  /** The newest receivedAt among the quotes that produced `value` (the chosen one, or all for `avg`). */
  readonly receivedAt: number;
}

/**
 * pair → last resolved value: the conflict fallback of notes B.10.3. Entries are never removed,
 * so an entry older than the window still tells the caller that the pair once had a value.
 */
export type ResolvedRates = Readonly<Record<string, ResolvedRate>>;

/**
 * Why a pair that has retained quotes is not in the table with a newly merged value.
 * - `conflict`: groups too close in weight (notes B.5); `message` is the original's text
 *   "The difference between sources is too big: … against …". `fallback: 'previous'` means the last
 *   resolved value, still inside the window, was served instead.
 * - `noFreshQuotes`: every retained quote is outside the window; `message` "No prices for the pair available".
 * - `fewerSources`: fewer fresh quotes than the effective minSources threshold; `message`
 *   "expected E, but got G" (B.2.6 prints it as `PAIR (expected E, but got G)`).
 *
 * The three notification classes of notes B.2.4d for conflicts:
 * `fallback === 'previous'` → warn "previously stored rates will be served…";
 * otherwise `input.previous[pair] !== undefined` (a value existed but aged out) → error "persisted for
 * more than N min"; otherwise → error "no previous rates to fall back on".
 */
export interface PairIssue {
  readonly pair: string;
  readonly kind: 'conflict' | 'noFreshQuotes' | 'fewerSources';
  readonly message: string;
  readonly fallback: 'previous' | 'none';
}

export interface EvaluateInput {
  readonly retained: RetainedQuotes;
  /** `resolved` of the previous cycle's evaluate, or `{}` at startup. */
  readonly previous: ResolvedRates;
  readonly settings: MergeSettings;
  /** Evaluation time, Unix ms. */
  readonly now: number;
  /** The evaluation window: configured `rateLifetime` or the request's, in ms. */
  readonly lifetimeMs: number;
}

export interface EvaluateResult {
  /** Direct pairs (SOURCE_ORDER of their sources, then first appearance) followed by triangulated pairs. */
  readonly table: RateTable;
  /** `previous` updated with this evaluation's newly resolved direct pairs. */
  readonly resolved: ResolvedRates;
  /** In table order of the pairs concerned. */
  readonly issues: PairIssue[];
}

/** docs/specs/rates.md §2.6 and config E.1: a source without a configured weight votes with 10. */
const DEFAULT_WEIGHT = DEFAULT_SOURCE_WEIGHT;

const NO_PRICES = 'No prices for the pair available';

/** Fixed connector order (notes F.21); sources outside it rank after every known one. */
const SOURCE_RANK: ReadonlyMap<string, number> = new Map(SOURCE_ORDER.map((name, i) => [name, i]));
const UNKNOWN_SOURCE_RANK = SOURCE_ORDER.length;

function sourceRank(source: string): number {
  return SOURCE_RANK.get(source) ?? UNKNOWN_SOURCE_RANK;
}

function isValidPrice(price: unknown): price is number {
  return typeof price === 'number' && Number.isFinite(price) && price > 0;
}

/** 4.2 uppercases mapping keys (notes E.1); values are uppercased too so every stored key is addressable by the uppercased coin filter (spec §2.2). */
function normalizeMappings(mappings: Readonly<Record<string, string>>): ReadonlyMap<string, string> {
  const map = new Map<string, string>();
  for (const [from, to] of Object.entries(mappings)) map.set(from.toUpperCase(), to.toUpperCase());
  return map;
}

function mapSymbol(symbol: string, mappings: ReadonlyMap<string, string>): string {
  const upper = symbol.toUpperCase();
  return mappings.get(upper) ?? upper;
}

/** `BASE/QUOTE` with each side uppercased and mapped; undefined for anything that is not two non-empty sides. */
function mapPair(pair: string, mappings: ReadonlyMap<string, string>): string | undefined {
  const slash = pair.indexOf('/');
  if (slash <= 0 || slash === pair.length - 1 || pair.indexOf('/', slash + 1) !== -1) return undefined;
  return `${mapSymbol(pair.slice(0, slash), mappings)}/${mapSymbol(pair.slice(slash + 1), mappings)}`;
}

/**
 * Record one source's successful fetch (notes B.10.1, F.6). Each quote's pair is uppercased and
 * mapped side by side (`CWIF/USD` → `$CWIF/USD` with `{"CWIF": "$CWIF"}`), then this source's entry
 * for each returned pair is replaced. Its entries for pairs it did not return, and every other
 * source's entries, stay: a source that failed is simply not applied, so its last good quotes
 * keep contributing until they leave the window (unlike 4.1's per-pair overwrite, B.9.5).
 * Non-finite or non-positive prices and malformed pairs are ignored; within one call a later
 * quote for the same pair replaces an earlier one. Returns `retained` itself when nothing applies.
 */
export function applySourceQuotes(
  retained: RetainedQuotes,
  source: string,
  quotes: readonly Quote[],
  receivedAt: number,
  mappings: Readonly<Record<string, string>>,
): RetainedQuotes {
  const normalized = normalizeMappings(mappings);
  const incoming = new Map<string, number>();
  for (const quote of quotes) {
    if (!isValidPrice(quote.price) || typeof quote.pair !== 'string') continue;
    const pair = mapPair(quote.pair, normalized);
    if (pair !== undefined) incoming.set(pair, quote.price);
  }
  if (incoming.size === 0) return retained;
  const next: Record<string, Readonly<Record<string, RetainedQuote>>> = { ...retained };
  for (const [pair, price] of incoming) {
    next[pair] = { ...next[pair], [source]: { price, receivedAt } };
  }
  return next;
}

interface SourceInfo {
  readonly weight: number;
  readonly priorityRank: number;
  readonly sourceRank: number;
}

interface FreshQuote extends GroupMember {
  /** Position in `priorities`; unlisted sources rank below every listed one (spec §8, notes F.20). */
  readonly priorityRank: number;
  readonly sourceRank: number;
}

/** Price ascending; equal prices in connector order, i.e. the order quotes were collected (notes B.6, F.21). */
function byPrice(a: FreshQuote, b: FreshQuote): number {
  return a.price - b.price || a.sourceRank - b.sourceRank || (a.source < b.source ? -1 : a.source > b.source ? 1 : 0);
}

/**
 * The strategy over the winning group's price-ascending members (notes B.6). Ties go to the
 * earliest member, i.e. the lowest price (strict comparisons, as the original's scan).
 */
function applyStrategy(strategy: Strategy, members: readonly FreshQuote[]): ResolvedRate {
  let chosen = members[0]!;
  switch (strategy) {
    case 'avg': {
      let sum = 0;
      let receivedAt = -Infinity;
      for (const m of members) {
        sum += m.price;
        if (m.receivedAt > receivedAt) receivedAt = m.receivedAt;
      }
      return { value: sum / members.length, receivedAt };
    }
    case 'min':
      break;
    case 'max':
      for (const m of members) if (m.price > chosen.price) chosen = m;
      break;
    case 'priority':
      for (const m of members) if (m.priorityRank < chosen.priorityRank) chosen = m;
      break;
    case 'weight':
      for (const m of members) if (m.weight > chosen.weight) chosen = m;
      break;
    default: {
      const unknown: never = strategy;
      throw new TypeError(`unknown merge strategy ${String(unknown)}`);
    }
  }
  return { value: chosen.price, receivedAt: chosen.receivedAt };
}

/**
 * Direct pairs in result key order (notes F.19): by the earliest SOURCE_ORDER position among the
 * sources holding the pair, then by first appearance in `retained`. Equivalent to listing each
 * source's pairs in connector order and skipping pairs already listed.
 */
function orderPairs(retained: RetainedQuotes): string[] {
  const keys = Object.keys(retained);
  const rank = new Map<string, number>();
  let sorted = true;
  let last = -1;
  for (const pair of keys) {
    let best = Infinity;
    for (const source in retained[pair]) best = Math.min(best, sourceRank(source));
    rank.set(pair, best);
    if (best < last) sorted = false;
    last = best;
  }
  if (sorted) return keys;
  // Array.prototype.sort is stable, so equal ranks keep first-appearance order.
  return keys.sort((a, b) => rank.get(a)! - rank.get(b)!);
}

/**
 * One evaluation of the 4.2 pipeline (notes B.10) over the retained quotes, per pair:
 * freshness (`now − receivedAt < lifetimeMs`, F.7) → minSources gate on fresh quotes only
 * (threshold `min(minSources, coverage[pair] ?? 1)`, F.5; spec §4.1: a shorter window tightens it;
 * weight-0 sources count here) → grouping (B.4) → dominant group (B.5) → strategy (B.6) →
 * rounding to `decimals` (F.18). A conflict serves the previous resolved value while that is
 * still inside the window (B.10.3). Then triangulation over `baseCoins` (B.8).
 * The gate runs before grouping as B.10.2 lists it: a pair that both conflicts and lacks sources
 * is reported as `fewerSources` and gets no fallback (spec §1.4: it is not stored).
 */
export function evaluate(input: EvaluateInput): EvaluateResult {
  const { retained, previous, settings, now, lifetimeMs } = input;
  const { decimals, strategy, minSources, coverage, weights } = settings;

  const priorityRank = new Map<string, number>();
  settings.priorities.forEach((name, i) => {
    if (!priorityRank.has(name)) priorityRank.set(name, i);
  });
  // Per-source constants, looked up once per evaluation rather than once per quote.
  const sources = new Map<string, SourceInfo>();
  const sourceInfo = (source: string): SourceInfo => {
    let info = sources.get(source);
    if (info === undefined) {
      info = {
        weight: Object.hasOwn(weights, source) ? weights[source]! : DEFAULT_WEIGHT,
        priorityRank: priorityRank.get(source) ?? Infinity,
        sourceRank: sourceRank(source),
      };
      sources.set(source, info);
    }
    return info;
  };

  const table: RateTable = {};
  const resolved: Record<string, ResolvedRate> = { ...previous };
  const issues: PairIssue[] = [];

  for (const pair of orderPairs(retained)) {
    const bySource = retained[pair]!;
    const fresh: FreshQuote[] = [];
    for (const source in bySource) {
      const quote = bySource[source]!;
      if (!(now - quote.receivedAt < lifetimeMs)) continue;
      const info = sourceInfo(source);
      fresh.push({
        source,
        price: quote.price,
        receivedAt: quote.receivedAt,
        weight: info.weight,
        priorityRank: info.priorityRank,
        sourceRank: info.sourceRank,
      });
    }

    if (fresh.length === 0) {
      issues.push({ pair, kind: 'noFreshQuotes', message: NO_PRICES, fallback: 'none' });
      continue;
    }

    // Pair keys always contain '/', so plain indexing never hits an Object.prototype member.
    const covered = coverage[pair] ?? 1;
    const required = Math.max(1, Math.min(minSources, covered));
    if (fresh.length < required) {
      issues.push({
        pair,
        kind: 'fewerSources',
        message: `expected ${required}, but got ${fresh.length}`,
        fallback: 'none',
      });
      continue;
    }

    if (fresh.length > 1) fresh.sort(byPrice);
    const dominant = chooseDominantGroup(
      splitIntoGroups(fresh, settings.rateDifferencePercentThreshold),
      settings.groupPercentage,
    );

    if (!dominant.ok) {
      const last: ResolvedRate | undefined = previous[pair];
      if (last !== undefined && now - last.receivedAt < lifetimeMs && isServable(last.value)) {
        table[pair] = last.value;
        issues.push({ pair, kind: 'conflict', message: dominant.message, fallback: 'previous' });
      } else {
        issues.push({ pair, kind: 'conflict', message: dominant.message, fallback: 'none' });
      }
      continue;
    }

    const merged = applyStrategy(strategy, dominant.group.members);
    const value = roundTo(merged.value, decimals);
    // A price too small for `decimals` is not served (F.17); it is not a source problem either.
    if (!isServable(value)) continue;
    table[pair] = value;
    resolved[pair] = { value, receivedAt: merged.receivedAt };
  }

  return {
    table: triangulate(table, settings.baseCoins, settings.allCoins, decimals),
    resolved,
    issues,
  };
}

export interface Coverage {
  /** `COIN/USD` → number of the given sources advertising COIN (not capped; the gate takes the min). */
  readonly coverage: Record<string, number>;
  /** Union of the advertised coins after mappings, USD excluded, in the given connector order. */
  readonly allCoins: string[];
  /** Pairs advertised by fewer sources than `minSources`, for the startup warning (notes B.1.4, F.5). */
  readonly belowMinimum: Array<{ pair: string; sources: number }>;
}

/**
 * The coverage map of notes B.1.4 over the *enabled, active* connectors only (spec §8: minSources is
 * measured against sources that are actually enabled): every advertised coin, uppercased and
 * mapped, except USD, counts `COIN/USD` once per source. `belowMinimum` feeds the warning
 * "The following pairs have fewer enabled sources than the configured minimum (minSources=N), but
 * they are going to be saved anyway: XYZ/USD (1)".
 */
export function computeCoverage(
  connectors: ReadonlyArray<{ readonly name: string; readonly coins: readonly string[] }>,
  mappings: Readonly<Record<string, string>>,
  minSources: number,
): Coverage {
  const normalized = normalizeMappings(mappings);
  const coverage: Record<string, number> = {};
  const allCoins: string[] = [];
  const seen = new Set<string>();
  for (const connector of connectors) {
    const own = new Set<string>();
    for (const raw of connector.coins) {
      if (typeof raw !== 'string' || raw === '') continue;
      const coin = mapSymbol(raw, normalized);
      if (coin === 'USD' || coin.includes('/') || own.has(coin)) continue;
      own.add(coin);
      const pair = `${coin}/USD`;
      coverage[pair] = (Object.hasOwn(coverage, pair) ? coverage[pair]! : 0) + 1;
      if (!seen.has(coin)) {
        seen.add(coin);
        allCoins.push(coin);
      }
    }
  }
  const belowMinimum = Object.entries(coverage)
    .filter(([, sources]) => sources < minSources)
    .map(([pair, sources]) => ({ pair, sources }));
  return { coverage, allCoins, belowMinimum };
}
