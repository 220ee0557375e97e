// What the rates edge reads (DESIGN.md rule 5): /status and /get from the refresh actor's snapshot,
// /getHistory through `ask('rates.history', …)`. The edge never touches storage or machine internals.

import { refreshStatus, type RefreshContext } from '../../machines/rates/refresh-cycle.machine.js';
import type { HistoryQuery, Snapshot } from '../../src/rates/history.js';
import { evaluate } from '../../src/rates/merge.js';
import type { RateTable } from '../../src/rates/types.js';
import type { Runtime } from '../runtime.js';

export const REFRESH_ID = 'rates.refresh';
export const HISTORY_ID = 'rates.history';
export const HISTORY_ASK_TIMEOUT_MS = 15_000;

export interface RatesView {
  status(): ReturnType<typeof refreshStatus>;
  /** The merged table for the configured lifetime, or re-evaluated for another window (spec §4.1). */
  table(rateLifetimeMinutes?: number): RateTable;
  history(query: HistoryQuery, signal: AbortSignal): Promise<Snapshot[]>;
}

export function ratesView(runtime: Runtime): RatesView {
  const snapshot = () => runtime.registry.snapshot<{ value: unknown; context: RefreshContext }>(REFRESH_ID);
  return {
    status: () => refreshStatus(snapshot()),
    table(rateLifetimeMinutes) {
      const { context } = snapshot();
      const lifetimeMs = rateLifetimeMinutes === undefined ? context.lifetimeMs : rateLifetimeMinutes * 60_000;
      // The original compares by number equality: 60 and 60.0 are both the cached table (notes A.1).
      if (lifetimeMs === context.lifetimeMs) return context.table;
      return evaluate({ retained: context.retained, previous: context.resolved, settings: context.merge, now: runtime.clock.now(), lifetimeMs }).table;
    },
    history: (query, signal) => runtime.ask<Snapshot[]>(HISTORY_ID, { type: 'history.query', query }, { signal, timeoutMs: HISTORY_ASK_TIMEOUT_MS }),
  };
}
