// The rates service's supervision tree (docs/DESIGN.md, "The actor model"):
//
//   rates (one_for_one)
//   ├── rates.history    history-store machine (SQLite, or MongoDB when server.mongodb is set)
//   ├── rates.notifier   log + Slack/Discord webhooks + ADAMANT chat messages
//   ├── rates.refresh    refresh-cycle machine (discovery, fetch, merge, store, notify)
//   └── …edge            the HTTP listener, supplied by the caller (actors/ never imports http/)
//
// one_for_one: a crashed history store or notifier is restarted alone; the refresh actor keeps its
// retained quotes, and its store attempts fail as notices meanwhile.

import { computeCoverage } from '../../src/rates/merge.js';
import { RATES_VERSION, type RatesConfig } from '../../src/rates/config.js';
import type { Notice } from '../../src/rates/cycle.js';
import { ratesLogger } from '../../src/rates/log-level.js';
import { createConnectors } from '../../src/rates/sources/index.js';
import type { HttpJsonClient, SourceConnector } from '../../src/rates/sources/source.js';
import type { MergeSettings } from '../../src/rates/types.js';
import type { HistoryStore } from '../../storage/rates/history.js';
import { openSqliteHistory } from '../../storage/rates/history.sqlite.js';
import { actorChild } from '../actor-child.js';
import { fetchJsonClient } from '../../storage/rates/http-json.fetch.js';
import type { Runtime } from '../runtime.js';
import type { ChildSpec } from '../supervisor.js';
import { supervisorSpec } from '../supervisor.js';
import { historyLogic } from './history.actor.js';
import { RATES_HISTORY_ID, RATES_NOTIFIER_ID, RATES_REFRESH_ID } from './ids.js';
import { notifierLogic, type NotifierOptions } from './notifier.actor.js';
import { DEFAULT_DISCOVERY, DEFAULT_SOURCE_BUDGET_MS, refreshLogic } from './refresh.actor.js';

export interface RatesTreeOptions {
  /** Children appended after the workers, e.g. the HTTP listener. */
  readonly edge?: readonly ChildSpec[];
  /** Overrides for tests. */
  readonly http?: HttpJsonClient;
  readonly openHistory?: () => Promise<HistoryStore>;
  readonly post?: NotifierOptions['post'];
  readonly discoveryRetryDelayMs?: number;
}

/** What the refresh machine needs, derived once from the configuration and the active connectors. */
export function mergeSettings(config: RatesConfig, connectors: readonly SourceConnector[]): { settings: MergeSettings; notices: Notice[] } {
  const { coverage, allCoins, belowMinimum } = computeCoverage(
    connectors.map((connector) => ({ name: connector.name, coins: connector.advertisedCoins() })),
    config.mappings,
    config.minSources,
  );
  const notices: Notice[] = [];
  if (belowMinimum.length > 0) {
    notices.push({
      level: 'warn',
      message: `The following pairs have fewer enabled sources than the configured minimum (minSources=${config.minSources}), but they are going to be saved anyway: ${belowMinimum.map((p) => `${p.pair} (${p.sources})`).join(', ')}`,
    });
  }
  const provided = new Set([...allCoins, 'USD']);
  const unprovided = config.base_coins.filter((coin) => !provided.has(coin));
  if (unprovided.length > 0) {
    notices.push({
      level: 'warn',
      message: `No resources provide rates for the following base coins: ${unprovided.join(', ')}. As a result, the rates for these base coins will NOT be saved.`,
    });
  }
  return {
    settings: {
      decimals: config.decimals,
      strategy: config.strategy,
      rateDifferencePercentThreshold: config.rateDifferencePercentThreshold,
      groupPercentage: config.groupPercentage,
      minSources: config.minSources,
      priorities: config.priorities,
      weights: Object.fromEntries(connectors.map((connector) => [connector.name, connector.weight])),
      baseCoins: config.base_coins,
      allCoins,
      coverage,
    },
    notices,
  };
}

export function openConfiguredHistory(config: RatesConfig): () => Promise<HistoryStore> {
  const mongodb = config.server.mongodb;
  // The MongoDB driver (~0.25 s of CPU to load) is imported only by a service configured for it.
  if (mongodb) return async () => (await import('../../storage/rates/history.mongo.js')).openMongoHistory({ host: mongodb.host, port: mongodb.port, db: mongodb.db });
  return async () => openSqliteHistory(config.server.sqlite.path);
}

/** The ADAMANT channel's options when the configuration turns it on (addresses and, so, a validated passphrase). */
function adamantChannel(config: RatesConfig, runtime: Runtime): Pick<NotifierOptions, 'adamant'> {
  const { adamant: addresses, adamantPassphrase: passphrase, adamantNodes: nodes } = config.notify;
  if (addresses.length === 0 || passphrase === undefined) return {};
  return { adamant: { addresses, passphrase, nodes, now: () => runtime.clock.now() } };
}

export function ratesTree(config: RatesConfig, options: RatesTreeOptions = {}): ChildSpec {
  const openHistory = options.openHistory ?? openConfiguredHistory(config);
  // Merge settings depend only on the configuration (what each active source advertises): derive them once.
  const { settings, notices: configNotices } = mergeSettings(config, createConnectors(config));
  // notes E.3: the startup notification (level info in 4.2), then the configuration warnings.
  let announced = false;
  const notices: Notice[] = [{ level: 'info', message: `Infoservice v${RATES_VERSION} started on port ${config.server.port}` }, ...configNotices];
  return supervisorSpec({
    id: 'rates',
    strategy: 'one_for_one',
    intensity: 5,
    periodMs: 60_000,
    backoff: { initialMs: 500, maxMs: 10_000 },
    children: [
      actorChild({
        systemId: RATES_HISTORY_ID,
        logic: (runtime) => historyLogic(openHistory, ratesLogger(runtime.logger, config.log_level, { actor: RATES_HISTORY_ID })),
        shutdownTimeoutMs: 5_000,
      }),
      actorChild({
        systemId: RATES_NOTIFIER_ID,
        shutdown: 'stop',
        logic: (runtime) =>
          notifierLogic({
            name: config.name,
            slack: config.notify.slack,
            discord: config.notify.discord,
            ...adamantChannel(config, runtime),
            // Each notice is logged at its level, filtered in the original's ranking (src/rates/log-level.ts).
            logger: ratesLogger(runtime.logger, config.log_level, { actor: RATES_NOTIFIER_ID }),
            post: options.post,
            clock: runtime.clock,
          }),
      }),
      actorChild({
        systemId: RATES_REFRESH_ID,
        // Connectors hold discovered coin ids: a restarted refresh actor gets new ones and discovers afresh.
        logic: (runtime) =>
          refreshLogic(runtime, {
            connectors: createConnectors(config),
            http: options.http ?? fetchJsonClient(runtime.clock),
            discoveryRetryDelayMs: options.discoveryRetryDelayMs ?? DEFAULT_DISCOVERY.discoveryRetryDelayMs,
            discoveryAttempts: DEFAULT_DISCOVERY.discoveryAttempts,
            // Said once per process: a restarted refresh actor does not announce a new start.
            startupNotices: announced ? [] : ((announced = true), notices),
            sourceBudgetMs: DEFAULT_SOURCE_BUDGET_MS,
            logLevel: config.log_level,
          }),
        input: (runtime) => ({
          merge: settings,
          mappings: config.mappings,
          lifetimeMs: config.rateLifetime * 60_000,
          intervalMs: config.refreshInterval * 60_000,
          startedAt: runtime.clock.now(),
        }),
        shutdownTimeoutMs: 5_000,
      }),
      ...(options.edge ?? []),
    ],
  });
}
