// The rates service's API for its edge (docs/DESIGN.md rule 5): /status and /get from the refresh actor's snapshot,
// /getHistory through `ask('rates.history', …)`. The edge never touches storage or machine internals.

import type { HistoryEvent } from '../../machines/rates/history-store.machine.js';
import { refreshStatus, type RefreshContext } from '../../machines/rates/refresh-cycle.machine.js';
import type { HistoryQuery, Snapshot } from '../../src/rates/history.js';
import { evaluate } from '../../src/rates/merge.js';
import type { RateTable } from '../../src/rates/types.js';
import { askFor } from '../ask.js';
import type { Runtime } from '../runtime.js';
import { RATES_HISTORY_ID, RATES_REFRESH_ID } from './ids.js';

export const HISTORY_ASK_TIMEOUT_MS = 15_000;

export interface RatesApi {
  status(): ReturnType<typeof refreshStatus>;
  /**
   * The merged table for the configured lifetime (`cached`: the same object until the next cycle), or
   * re-evaluated for another window (spec §4.1).
   */
  table(rateLifetimeMinutes?: number): { table: RateTable; cached: boolean };
  /**
   * The published table when `rateLifetimeMinutes` is the configured lifetime (or absent), else undefined (then
   * `table()` evaluates the window): /get's hot path, with no object made per call.
   */
  cachedTable(rateLifetimeMinutes?: number): RateTable | undefined;
  /** `status().last_updated`, without building the status object. */
  lastUpdated(): number | null;
  history(query: HistoryQuery, signal: AbortSignal): Promise<Snapshot[]>;
}

type RefreshSnapshot = { value: unknown; context: RefreshContext };

const EMPTY: RateTable = Object.freeze({});

export function ratesApi(runtime: Runtime): RatesApi {
  const history = askFor<HistoryEvent>(runtime.ask, RATES_HISTORY_ID, { timeoutMs: HISTORY_ASK_TIMEOUT_MS });
  // spec §4.3: /status answers 200 while the process is alive, also while `rates.refresh` is between a
  // crash and its restart: the last snapshot read stands in (reported as updating), and before any
  // snapshot was read, the not-ready status of §2.4.
  let last: RefreshSnapshot | undefined;
  const startedAt = runtime.clock.now();
  const current = (): RefreshSnapshot | undefined => {
    const snapshot = runtime.registry.lookup(RATES_REFRESH_ID)?.getSnapshot() as (RefreshSnapshot & { status?: string }) | undefined;
    if (snapshot?.status === 'active') {
      last = snapshot;
      return snapshot;
    }
    return last && { value: 'restarting', context: last.context };
  };
  return {
    status() {
      const snapshot = current();
      return snapshot ? refreshStatus(snapshot) : { ready: false, updating: true, next_update: startedAt, last_updated: null };
    },
    table(rateLifetimeMinutes) {
      const context = current()?.context;
      if (!context) return { table: EMPTY, cached: true };
      const lifetimeMs = rateLifetimeMinutes === undefined ? context.lifetimeMs : rateLifetimeMinutes * 60_000;
      // The original compares by number equality: 60 and 60.0 are both the cached table (notes A.1).
      if (lifetimeMs === context.lifetimeMs) return { table: context.table, cached: true };
      const now = runtime.clock.now();
      return { table: evaluate({ retained: context.retained, previous: context.resolved, settings: context.merge, now, lifetimeMs }).table, cached: false };
    },
    cachedTable(rateLifetimeMinutes) {
      const context = current()?.context;
      if (!context) return EMPTY;
      return rateLifetimeMinutes === undefined || rateLifetimeMinutes * 60_000 === context.lifetimeMs ? context.table : undefined;
    },
    lastUpdated() {
      return current()?.context.lastUpdated ?? null;
    },
    history: (query, signal) => history({ type: 'history.query', query }, { signal }),
  };
}
