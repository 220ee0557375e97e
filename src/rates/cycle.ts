// Pure bookkeeping of one refresh cycle (docs/specs/rates.md §1, §6; docs/notes/rates.md B.2, B.10, E.3, F.1, F.8):
// fold the sources' outcomes into the retained quotes, evaluate the table, decide whether a snapshot is
// written, and say what operators must be told. The refresh-cycle machine calls these from `assign`.

import { applySourceQuotes, evaluate, type PairIssue, type ResolvedRates, type RetainedQuotes } from './merge.js';
import type { MergeSettings, Quote, RateTable } from './types.js';

/** What one source produced in one cycle (built by the fetch actor). */
export type SourceOutcome =
  | { readonly source: string; readonly ok: true; readonly quotes: readonly Quote[]; readonly receivedAt: number }
  | { readonly source: string; readonly ok: false; readonly error: string; readonly permanent: boolean; readonly severity?: 'warn' | 'error' };

export type NoticeLevel = 'error' | 'warn' | 'info';

export interface Notice {
  readonly level: NoticeLevel;
  readonly message: string;
}

export interface CycleSettings {
  readonly merge: MergeSettings;
  readonly mappings: Readonly<Record<string, string>>;
  /** Configured rateLifetime in ms. */
  readonly lifetimeMs: number;
}

export interface CycleResult {
  readonly retained: RetainedQuotes;
  readonly resolved: ResolvedRates;
  readonly table: RateTable;
  /** Sources that returned at least one valid rate (F.8: only those count as available). */
  readonly available: number;
  readonly attempted: number;
  /** F.8: a snapshot is written only when a source returned a valid rate and the table is not empty. */
  readonly store: boolean;
  readonly notices: Notice[];
  /** Sources that must not be asked again during this run (e.g. Binance HTTP 451). */
  readonly disable: string[];
}

export function foldCycle(
  state: { readonly retained: RetainedQuotes; readonly resolved: ResolvedRates },
  outcomes: readonly SourceOutcome[],
  settings: CycleSettings,
  now: number,
): CycleResult {
  let retained = state.retained;
  let available = 0;
  const notices: Notice[] = [];
  const disable: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.ok) {
      if (outcome.quotes.length > 0) available++;
      // F.8: an answer without a single valid rate is a failed source, reported like one every cycle (spec §6).
      else notices.push(sourceFailureNotice(outcome.source, NO_VALID_RATE));
      retained = applySourceQuotes(retained, outcome.source, outcome.quotes, outcome.receivedAt, settings.mappings);
    } else {
      // F.1: one notice per failed source per cycle, with its detail (already free of secrets); never deduplicated:
      // the original's Notifier has no throttling (E.3), and spec §6 reports a failing source every refresh.
      notices.push(sourceFailureNotice(outcome.source, outcome.error, outcome.severity));
      if (outcome.permanent) {
        disable.push(outcome.source);
        notices.push({ level: 'error', message: `${outcome.source} is disabled for the rest of this run: ${outcome.error}` });
      }
    }
  }

  if (outcomes.length > 0 && available === 0) {
    // B.2.5: history gets a gap; the previous table keeps being served while it is fresh.
    notices.push({ level: 'error', message: 'Unable to get new rates from all sources. No data has been saved' });
  }

  const evaluation = evaluate({ retained, previous: state.resolved, settings: settings.merge, now, lifetimeMs: settings.lifetimeMs });
  notices.push(...issueNotices(evaluation.issues, state.resolved, settings.lifetimeMs));
  const store = available > 0 && Object.keys(evaluation.table).length > 0;
  return {
    retained,
    resolved: evaluation.resolved,
    table: evaluation.table,
    available,
    attempted: outcomes.length,
    store,
    notices,
    disable,
  };
}

/** The reason given for a source whose answer held no usable rate (F.8 counts it as failed). */
export const NO_VALID_RATE = 'Its answer held no valid rate.';

/**
 * `Unable to fetch valid data from <Source>. <reason>` (F.1), at warn (spec §6; E.3 "per failed source, every
 * cycle"), or at error when the connector says the original sends that failure as an error (CoinMarketCap's
 * `Unable to get all of N coin rates`, notes D.5).
 */
export function sourceFailureNotice(source: string, reason: string, severity: 'warn' | 'error' = 'warn'): Notice {
  return { level: severity, message: `Unable to fetch valid data from ${source}. ${reason}` };
}

/**
 * B.2.4d's three classes and B.2.6's coverage warning, one notice per class listing its pairs:
 * a conflict served from the previous value (warn), one whose previous value aged out (error), one that
 * never had a value (error), and pairs below their minSources threshold (warn).
 */
export function issueNotices(issues: readonly PairIssue[], previous: ResolvedRates, lifetimeMs: number): Notice[] {
  const minutes = Math.round((lifetimeMs / 60_000) * 100) / 100;
  const failing = issues.filter((i) => i.kind !== 'fewerSources');
  const kept = failing.filter((i) => i.fallback === 'previous');
  const agedOut = failing.filter((i) => i.fallback === 'none' && previous[i.pair] !== undefined);
  const neverResolved = failing.filter((i) => i.fallback === 'none' && previous[i.pair] === undefined);
  const fewer = issues.filter((i) => i.kind === 'fewerSources');
  const notices: Notice[] = [];
  if (kept.length > 0) {
    notices.push({
      level: 'warn',
      message: `The previously stored rates will be saved for the following pairs, but they require attention: ${list(kept)}, but it persists not longer than ${minutes} min`,
    });
  }
  if (agedOut.length > 0) {
    notices.push({
      level: 'error',
      message: `The rates won't be saved for the following pairs, and these errors have persisted for more than ${minutes} min: ${list(agedOut)}`,
    });
  }
  if (neverResolved.length > 0) {
    notices.push({
      level: 'error',
      message: `The rates won't be saved for the following pairs, and there are no previous rates to fall back on: ${list(neverResolved)}`,
    });
  }
  if (fewer.length > 0) {
    notices.push({
      level: 'warn',
      message: `The following rates have been fetched from fewer sources than expected and therefore won't be saved: ${list(fewer)}`,
    });
  }
  return notices;
}

function list(issues: readonly PairIssue[]): string {
  return issues.map((i) => `${i.pair} (${i.message})`).join('; ');
}
