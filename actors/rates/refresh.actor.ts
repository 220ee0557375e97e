// `rates.refresh`: the refresh-cycle machine with its I/O supplied (docs/DESIGN.md rule 1): connector
// discovery with retries, parallel per-source fetches bounded by each connector's timeout, the snapshot
// write through `rates.history`, and notices through `rates.notifier`.

import { fromPromise } from 'xstate';
import { refreshCycleMachine, type DiscoveryOutput, type FetchOutput, type StoreOutput } from '../../machines/rates/refresh-cycle.machine.js';
import type { LogLevel } from '../../src/rates/config.js';
import type { Notice, SourceOutcome } from '../../src/rates/cycle.js';
import { ratesLogger } from '../../src/rates/log-level.js';
import type { HttpJsonClient, SourceConnector, SourceContext } from '../../src/rates/sources/source.js';
import type { Quote } from '../../src/rates/types.js';
import { scrubSecrets } from '../../src/logger.js';
import type { HistoryEvent } from '../../machines/rates/history-store.machine.js';
import { askFor } from '../ask.js';
import { deadline, sleep } from '../../src/clock.js';
import type { Runtime } from '../runtime.js';
import { RATES_HISTORY_ID, RATES_NOTIFIER_ID, RATES_REFRESH_ID } from './ids.js';

export interface RefreshDeps {
  readonly connectors: readonly SourceConnector[];
  readonly http: HttpJsonClient;
  /** docs/notes/rates.md B.1.3, F.22: attempts 0..3, waiting attempt × this between tries (10 s in production). */
  readonly discoveryRetryDelayMs: number;
  readonly discoveryAttempts: number;
  /** The started message and configuration warnings; the tree passes them to the first incarnation only. */
  readonly startupNotices: readonly Notice[];
  /** Longest a single source may take in one cycle, all its requests included. */
  readonly sourceBudgetMs: number;
  /** The configured `log_level` (src/rates/log-level.ts ranks it); absent, every line is printed (`info`). */
  readonly logLevel?: LogLevel;
}

export const DEFAULT_DISCOVERY = { discoveryRetryDelayMs: 10_000, discoveryAttempts: 4 } as const;
/** Two minutes for one source in one cycle: a few dozen 10 s requests at worst, well under the 10 min interval. */
export const DEFAULT_SOURCE_BUDGET_MS = 120_000;

export function refreshLogic(runtime: Runtime, deps: RefreshDeps) {
  const logger = ratesLogger(runtime.logger, deps.logLevel ?? 'info', { actor: RATES_REFRESH_ID });
  const history = askFor<HistoryEvent>(runtime.ask, RATES_HISTORY_ID);
  const publish = (notices: readonly Notice[]) => {
    for (const notice of notices) {
      const sent = runtime.registry.send(RATES_NOTIFIER_ID, { type: 'notify.send', level: notice.level, message: notice.message });
      if (!sent) logger[notice.level]({ notice: true }, scrubSecrets(notice.message));
    }
  };
  const contextFor = (signal: AbortSignal): SourceContext => ({
    http: deps.http,
    signal,
    warn: (message) => publish([{ level: 'warn', message }]),
  });

  return refreshCycleMachine.provide({
    actors: {
      discoverSources: fromPromise<DiscoveryOutput>(async ({ signal }) => {
        // Startup notices (the started message, configuration warnings) go out at once, not after discovery.
        publish(deps.startupNotices);
        const disabled: string[] = [];
        const unavailable: Record<string, string> = {};
        const notices: Notice[] = [];
        await Promise.all(
          deps.connectors.map(async (connector) => {
            if (!connector.discover) return;
            for (let attempt = 0; attempt < deps.discoveryAttempts; attempt++) {
              if (attempt > 0) await sleep(runtime.clock, attempt * deps.discoveryRetryDelayMs, signal);
              try {
                await connector.discover(contextFor(signal));
                return;
              } catch (error) {
                if (signal.aborted) throw error;
                logger.warn({ source: connector.name, attempt, reason: (error as Error).message }, 'source discovery failed');
                // A permanent refusal (Binance HTTP 451, notes D.10) is not retried.
                const permanent = (error as { permanent?: boolean }).permanent === true;
                if (permanent || attempt === deps.discoveryAttempts - 1) {
                  // F.22: disable the source for this run instead of exiting the process as the original did.
                  disabled.push(connector.name);
                  const reason = (error as Error).message;
                  notices.push({
                    level: 'error',
                    message: `Unable to set up ${connector.name}${permanent ? '' : ` after ${deps.discoveryAttempts} attempts`}: ${reason}. The source is disabled until restart.`,
                  });
                  // Spec §6: still configured, it fails every cycle and is reported every cycle. A permanent
                  // refusal is reported once (notes D.10: Binance 451, "one error notification").
                  if (!permanent) unavailable[connector.name] = `It could not be set up (${reason}) and is disabled until restart.`;
                  return;
                }
              }
            }
          }),
        );
        return { disabled, unavailable, notices, finishedAt: runtime.clock.now() };
      }),

      fetchSources: fromPromise<FetchOutput, { disabled: readonly string[] }>(async ({ input, signal }) => {
        const startedAt = runtime.clock.now();
        const active = deps.connectors.filter((connector) => !input.disabled.includes(connector.name));
        const outcomes = await Promise.all(
          active.map(async (connector): Promise<SourceOutcome> => {
            try {
              // Each request is bounded by the connector; the whole source (CoinPaprika may make 100+ calls)
              // is bounded here, so one source cannot hold a cycle for long.
              const budget = deadline(runtime.clock, deps.sourceBudgetMs, signal);
              let quotes: Quote[];
              try {
                quotes = await connector.fetch(contextFor(budget.signal));
              } finally {
                budget.clear();
              }
              // The original's `info` rank: a line per source per cycle, hidden under the default `log`.
              logger.info({ source: connector.name, quotes: quotes.length }, 'source fetched');
              return { source: connector.name, ok: true, quotes, receivedAt: runtime.clock.now() };
            } catch (error) {
              if (signal.aborted) throw error;
              const permanent = (error as { permanent?: boolean }).permanent === true;
              const severity = (error as { severity?: 'warn' | 'error' }).severity;
              const status = (error as { httpStatus?: number }).httpStatus;
              // H.49: one log line per failed source per cycle, naming the connector.
              logger.warn({ source: connector.name, httpStatus: status, reason: (error as Error).message }, 'source failed');
              return { source: connector.name, ok: false, error: (error as Error).message, permanent, ...(severity ? { severity } : {}) };
            }
          }),
        );
        const available = outcomes.filter((o) => o.ok && o.quotes.length > 0).length;
        logger.log({ available, attempted: outcomes.length }, 'sources fetched');
        return { startedAt, finishedAt: runtime.clock.now(), outcomes };
      }),

      storeSnapshot: fromPromise<StoreOutput, { table: Record<string, number> }>(async ({ input, signal }) => {
        const date = runtime.clock.now();
        const stored = await history({ type: 'history.append', date, tickers: input.table }, { signal });
        logger.log({ pairs: Object.keys(input.table).length, date: stored.date }, 'snapshot saved');
        return stored;
      }),
    },
    actions: {
      publishNotices: (_, { notices }) => publish(notices),
    },
  });
}
