// The transfers service's supervision tree (docs/DESIGN.md, "The actor model"):
//
//   transfers (rest_for_one)
//   ├── transfers.db          database machine: PGlite or the pg pools, migrations when this process owns the schema
//   │                         (a gateway alone: when its login may and the schema is missing or older)
//   ├── transfers.workers (one_for_one)
//   │   ├── transfers.indexer indexer-sync machine (when the indexer is enabled)
//   │   └── transfers.schema  the gateway's schema cache (when the gateway is enabled)
//   └── …edge                 the gateway's HTTP listener, supplied by the caller (actors/ never imports http/)
//
// rest_for_one at the top: the workers and the gateway work on the connections the database actor opened, so
// reopening them restarts all of them. one_for_one below: an indexer crash (a node gone bad) restarts the indexer
// alone, and a schema cache crash the cache alone; the listener outlives both (it finds the cache by its id at each
// request), so requests in flight finish and keep-alive connections stay open.

import { actorChild } from '../actor-child.js';
import { supervisorSpec, workersSupervisor, type ChildSpec } from '../supervisor.js';
import type { TransfersConfig } from '../../src/transfers/config.js';
import { DatabaseHolder, databaseLogic } from './database.actor.js';
import { EthRpcClient } from '../../storage/transfers/chain.eth-rpc.js';
import { TRANSFERS_DB_ID, TRANSFERS_INDEXER_ID, TRANSFERS_SCHEMA_ID } from './api.js';
import { indexerInput, indexerLogic } from './indexer.actor.js';
import { SCHEMA_REFRESH_MS, schemaCacheLogic } from './schema-cache.actor.js';

export const TRANSFERS_WORKERS_ID = 'transfers.workers';

export interface TransfersTreeOptions {
  /** The gateway listener, built over the database the tree opens. */
  readonly edge?: (holder: DatabaseHolder) => readonly ChildSpec[];
  /** Tests: the embedded database in memory. */
  readonly inMemory?: boolean;
  /** Tests and the benchmark: blocks per batch. */
  readonly batchBlocks?: number;
}

export function transfersTree(config: TransfersConfig, options: TransfersTreeOptions = {}): ChildSpec {
  const holder = new DatabaseHolder();
  const database: ChildSpec[] = [
    actorChild({
      systemId: TRANSFERS_DB_ID,
      logic: (runtime) =>
        databaseLogic({
          config,
          holder,
          logger: runtime.logger.child({ actor: TRANSFERS_DB_ID }),
          clock: runtime.clock,
          inMemory: options.inMemory,
          // Addressed at send time (rule 7): the schema cache learns at once that it can load now.
          onSchemaReady: () => runtime.registry.send(TRANSFERS_SCHEMA_ID, { type: 'schema.reload' }),
        }),
      // The indexer and the gateway start once the database is open and migrated, or (a gateway alone) once the first
      // schema check failed: the gateway then listens and answers 503 PGRST002 while the check is retried.
      readyWhen: (snapshot) => snapshot.value === 'open' || snapshot.value === 'waitingToRetry',
      shutdownTimeoutMs: 10_000,
    }),
  ];
  const workers: ChildSpec[] = [];
  const { indexer } = config;
  if (indexer.enabled && indexer.ethUrl) {
    const ethUrl = indexer.ethUrl;
    workers.push(
      actorChild({
        systemId: TRANSFERS_INDEXER_ID,
        logic: (runtime) =>
          indexerLogic({
            settings: indexer,
            holder,
            eth: new EthRpcClient({
              url: ethUrl,
              clock: runtime.clock,
              onReceiptsFallback: () => runtime.logger.child({ actor: TRANSFERS_INDEXER_ID }).warn('the node has no eth_getBlockReceipts: fetching receipts per transaction'),
            }),
            clock: runtime.clock,
            logger: runtime.logger.child({ actor: TRANSFERS_INDEXER_ID }),
          }),
        input: () => indexerInput(indexer, options.batchBlocks),
      }),
    );
  }
  if (config.gateway.enabled) {
    workers.push(
      actorChild({
        systemId: TRANSFERS_SCHEMA_ID,
        logic: (runtime) => schemaCacheLogic({ holder, schemas: config.gateway.schemas, logger: runtime.logger.child({ actor: TRANSFERS_SCHEMA_ID }) }),
        input: () => ({ refreshMs: SCHEMA_REFRESH_MS }),
        // The listener opens once the relations are known (no 503 PGRST002 at startup unless the catalog fails).
        readyWhen: (snapshot) => snapshot.value === 'ready' || snapshot.value === 'retrying',
      }),
    );
  }
  const edge = config.gateway.enabled ? (options.edge?.(holder) ?? []) : [];
  return supervisorSpec({
    id: 'transfers',
    strategy: 'rest_for_one',
    intensity: 5,
    periodMs: 60_000,
    backoff: { initialMs: 1_000, maxMs: 30_000 },
    children: [...database, ...(workers.length > 0 ? [workersSupervisor(TRANSFERS_WORKERS_ID, workers)] : []), ...edge],
  });
}
