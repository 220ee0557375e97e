// The files service's supervision tree (docs/DESIGN.md, "The actor model"):
//
//   files (rest_for_one)
//   ├── files.runtime         runtime machine: helia + libp2p + the store folder + the registry
//   ├── files.workers (one_for_one)
//   │   ├── files.store       the one owner of records, pin intents, root pins, acknowledgements and the storage lease
//   │   ├── files.content     uploads, downloads, status, lifecycle changes, pins (asked by the edge)
//   │   ├── files.reconcile   the startup walk (transient: runs once, restarted only if it crashes)
//   │   ├── files.gc          garbage collection: POST /api/storage/gc and the scheduled collector (after the walk)
//   │   ├── files.repair      replication repair: POST /api/storage/repair (one batch), cycles after the walk and on schedule
//   │   ├── files.disk        disk-usage scan on diskUsageScanPeriod (storage metrics) and the disk-reserve claims
//   │   ├── files.replication answers peers' replication requests (store, stage/commit/abort, have, accept, cache)
//   │   ├── files.health      the health checkpoint machine and the node's health/identity answers
//   │   └── files.p2p         peering with the configured nodes (its start waits for the first pass, bounded) and
//   │                         the peer-network operator questions; before the edge, so the API serves peered
//   └── …edge                 the HTTP listener, supplied by the caller (actors/ never imports http/)
//
// rest_for_one at the top: everything after the runtime works on the node it started, so a runtime restart
// restarts them too. one_for_one below: the workers reach each other by id at send time, so a crashed worker (say the
// disk scan) is restarted alone and the listener after the group outlives it: uploads in flight go on.

import { actorChild } from '../actor-child.js';
import type { Clock } from '../../src/clock.js';
import { supervisorSpec, workersSupervisor, type ChildSpec } from '../supervisor.js';
import type { FilesConfig } from '../../src/files/config.js';
import { FILES_VERSION } from '../../src/files/version.js';
import type { PeeringTimings } from '../../src/files/peering.js';
import type { AdmissionLimiter } from '../../src/files/admission.js';
import { contentLogic, contentSettings } from './content.actor.js';
import { copyClient } from '../../storage/files/peer-copy.libp2p.js';
import { diskLogic, type DiskEvent } from './disk.actor.js';
import { askFor } from '../ask.js';
import type { Runtime } from '../runtime.js';
import { gcLogic, gcSettings } from './gc.actor.js';
import { GcStatusBoard } from './gc-status.js';
import { healthLogic, healthSettings } from './health.actor.js';
import { NodeHolder } from './node.js';
import { p2pChild } from './p2p.actor.js';
import { reconcileLogic, type ReconcileResult } from './reconcile.actor.js';
import { repairLogic, repairSettings } from './repair.actor.js';
import { RepairStatusBoard } from './repair-status.js';
import { replicationResponderLogic } from './replication.actor.js';
import { runtimeLogic } from './runtime.actor.js';
import { storeLogic, type StoreEvent, type StorePort } from './store.actor.js';
import { StartupSignal } from './startup.js';

export const FILES_RUNTIME_ID = 'files.runtime';
export const FILES_STORE_ID = 'files.store';
export const FILES_CONTENT_ID = 'files.content';
export const FILES_RECONCILE_ID = 'files.reconcile';
export const FILES_GC_ID = 'files.gc';
export const FILES_REPAIR_ID = 'files.repair';
export const FILES_DISK_ID = 'files.disk';
export const FILES_HEALTH_ID = 'files.health';
export const FILES_P2P_ID = 'files.p2p';
export const FILES_REPLICATION_ID = 'files.replication';
export const FILES_WORKERS_ID = 'files.workers';

/** The disk actor answers from memory (a claim reads one statfs): a health read that waits longer treats the storage evidence as unknown, a claim fails. */
const DISK_ASK_MS = 2_000;

/** The disk actor as the other workers ask it (by id at send time), bounded by DISK_ASK_MS unless told otherwise. */
const diskOf = (runtime: Runtime) => askFor<DiskEvent>(runtime.ask, FILES_DISK_ID, { timeoutMs: DISK_ASK_MS });
/**
 * The store's owner as the other workers reach it, by id at send time (a restarted owner is picked up). Its asks have
 * no timeout of their own: each caller bounds them with its signal, and the owner bounds its work (fetches by
 * `findFileTimeout`, everything else is local).
 */
const storeOf = (runtime: Runtime): StorePort => ({
  ask: askFor<Exclude<StoreEvent, { type: 'store.settled' }>>(runtime.ask, FILES_STORE_ID, { timeoutMs: Infinity }),
  tell: (notice) => void runtime.registry.send(FILES_STORE_ID, notice),
});
/** An upload's or an incoming copy's disk claim. */
const claimDiskOn = (runtime: Runtime) => {
  const disk = diskOf(runtime);
  return (bytes: number, signal: AbortSignal) => disk({ type: 'disk.claim', bytes }, { signal });
};

export interface FilesTreeSettings {
  /** The validated configuration; each actor takes the part it needs. */
  readonly config: FilesConfig;
  /** `<home>/<storeFolder>`. */
  readonly storeDirectory: string;
}

export interface FilesTreeOptions {
  readonly edge?: readonly ChildSpec[];
  /** The node's admission limiter, shared with the edge (nodeAdmission). */
  readonly admission: AdmissionLimiter;
  /** Told when the startup walk has finished (the health checkpoint and the collector wait for it). */
  readonly onStartupComplete?: (result: ReconcileResult) => void;
  /** Peering dial timeout, concurrency and startup bound (defaults: PEERING_DEFAULTS in src/files/peering.ts). */
  readonly peering?: Partial<PeeringTimings>;
}

export function filesTree(settings: FilesTreeSettings, options: FilesTreeOptions): ChildSpec {
  const { config } = settings;
  const holder = new NodeHolder();
  const startup = new StartupSignal();
  // The collector's job state: the GC actor writes it, the disk actor shows it in storage metrics.
  const gcStatus = new GcStatusBoard(config.storage.gc.enabled, config.storage.gc.schedule.source);
  // The repair job's state and cycle evidence: the repair actor writes it, health and storage metrics read it.
  const repair = repairSettings(config);
  const repairStatus = new RepairStatusBoard(repair.required);
  const health = healthSettings(config);
  // The asking side of replication (uploads, repair, handover); with replication off nothing is ever placed. Built per
  // actor, on its runtime's clock; it holds only the peers' addresses.
  const copiesOn = (clock: Clock) =>
    config.replication.enabled ? copyClient({ libp2p: () => holder.network().libp2p, peers: config.nodes, requestTimeoutMs: config.replication.requestTimeoutMs, clock }) : undefined;
  if (options.onStartupComplete) startup.onComplete(options.onStartupComplete);
  return supervisorSpec({
    id: 'files',
    strategy: 'rest_for_one',
    intensity: 5,
    periodMs: 60_000,
    backoff: { initialMs: 500, maxMs: 10_000 },
    children: [
      actorChild({
        systemId: FILES_RUNTIME_ID,
        logic: (runtime) =>
          runtimeLogic({
            storeDirectory: settings.storeDirectory,
            listen: config.peerDiscovery.listen,
            // The configured nodes may always connect (connection manager allow list).
            allow: config.nodes.map((node) => node.multiAddr),
            holder,
            logger: runtime.logger.child({ actor: FILES_RUNTIME_ID }),
          }),
        // helia's stop closes libp2p connections and the stores; spec §8 wants supervisor timeouts > 15 s.
        shutdownTimeoutMs: 16_000,
        // The content actor and the HTTP port start only once the node runs (no 503 at startup).
        readyWhen: (snapshot) => snapshot.value === 'running',
      }),
      workersSupervisor(FILES_WORKERS_ID, [
        // First: the others send it every write of records, intents, pins and acknowledgements, and take the storage
        // lease from it (notes A.4 rule 8: block writers shared until their blocks are pinned, the collector exclusively).
        actorChild({
          systemId: FILES_STORE_ID,
          shutdown: 'stop',
          logic: (runtime) => storeLogic({ holder, clock: runtime.clock, logger: runtime.logger.child({ actor: FILES_STORE_ID }) }),
        }),
        actorChild({
          systemId: FILES_CONTENT_ID,
          shutdown: 'stop',
          logic: (runtime) =>
            contentLogic({
              holder,
              clock: runtime.clock,
              store: storeOf(runtime),
              settings: contentSettings(config),
              copies: copiesOn(runtime.clock),
              claimDisk: claimDiskOn(runtime),
              logger: runtime.logger.child({ actor: FILES_CONTENT_ID }),
            }),
        }),
        actorChild({
          systemId: FILES_RECONCILE_ID,
          restart: 'transient',
          shutdown: 'stop',
          logic: (runtime) =>
            reconcileLogic({
              holder,
              store: storeOf(runtime),
              clock: runtime.clock,
              logger: runtime.logger.child({ actor: FILES_RECONCILE_ID }),
              onComplete: (result) => startup.complete(result),
            }),
        }),
        // Scheduled collection waits for the walk (spec §9.6); POST /api/storage/gc works from the start.
        actorChild({
          systemId: FILES_GC_ID,
          shutdown: 'stop',
          logic: (runtime) =>
            gcLogic({
              holder,
              clock: runtime.clock,
              store: storeOf(runtime),
              status: gcStatus,
              startup,
              settings: gcSettings(config),
              // Handover probes (rule 4c): absent with replication off, so nothing is ever demoted then.
              copies: copiesOn(runtime.clock),
              logger: runtime.logger.child({ actor: FILES_GC_ID }),
              // Fresh metrics after a collection; no disk actor (or a stopped one) is not the collector's problem.
              afterRun: () => void runtime.registry.send(FILES_DISK_ID, { type: 'disk.rescan' }),
              inspect: (rootSessionId) => runtime.inspector.observer(FILES_GC_ID, rootSessionId),
            }),
        }),
        // The startup cycle and scheduled repair wait for the walk (spec §9.6); POST /api/storage/repair works from the start.
        actorChild({
          systemId: FILES_REPAIR_ID,
          shutdown: 'stop',
          logic: (runtime) =>
            repairLogic({
              holder,
              clock: runtime.clock,
              status: repairStatus,
              startup,
              settings: repair,
              copies: copiesOn(runtime.clock),
              store: storeOf(runtime),
              logger: runtime.logger.child({ actor: FILES_REPAIR_ID }),
              inspect: (rootSessionId) => runtime.inspector.observer(FILES_REPAIR_ID, rootSessionId),
            }),
        }),
        actorChild({
          systemId: FILES_DISK_ID,
          shutdown: 'stop',
          logic: (runtime) =>
            diskLogic({
              storeDirectory: settings.storeDirectory,
              schedule: config.diskUsageScanPeriod,
              diskReserveBytes: config.storage.diskReserveBytes,
              figures: holder.figures,
              gcStatus: () => gcStatus.current(),
              repairStatus: () => repairStatus.current(),
              clock: runtime.clock,
              logger: runtime.logger.child({ actor: FILES_DISK_ID }),
            }),
        }),
        // Answers peers' copy requests (always registered: a node with replication off still holds what it is asked to).
        actorChild({
          systemId: FILES_REPLICATION_ID,
          shutdown: 'stop',
          logic: (runtime) =>
            replicationResponderLogic({
              holder,
              members: config.nodes.map((node) => node.peerId),
              store: storeOf(runtime),
              tryIncomingCopy: () => options.admission.tryIncomingCopy(),
              claimDisk: claimDiskOn(runtime),
              requestTimeoutMs: config.replication.requestTimeoutMs,
              clock: runtime.clock,
              logger: runtime.logger.child({ actor: FILES_REPLICATION_ID }),
            }),
        }),
        // After the walk and never waited for: its start only arms the first attempt, so the HTTP port opens while
        // the node is still `starting` (spec §4.1: health answers 200 throughout).
        actorChild({
          systemId: FILES_HEALTH_ID,
          shutdown: 'stop',
          logic: (runtime) => {
            const disk = diskOf(runtime);
            return healthLogic({
              ...health,
              network: holder.network,
              state: holder.actorState,
              repair: () => repairStatus.health(),
              startup,
              readStorage: async (signal, readFreeSpace) => {
                // An attempt waits at most one checkpoint interval for its statfs; a read only for the answer.
                const timeoutMs = readFreeSpace ? config.health.checkpointIntervalMs : DISK_ASK_MS;
                return (await disk({ type: 'disk.snapshot', readFreeSpace }, { signal, timeoutMs })).reserve;
              },
              clock: runtime.clock,
              logger: runtime.logger.child({ actor: FILES_HEALTH_ID }),
              // `uptimeMs` (spec §2.3) is the process's uptime, not this actor's: restarts do not reset it.
              meta: { version: FILES_VERSION, startedAt: runtime.clock.now() - Math.round(process.uptime() * 1000) },
              inspect: (rootSessionId) => runtime.inspector.observer(FILES_HEALTH_ID, rootSessionId),
            });
          },
        }),
        p2pChild({ systemId: FILES_P2P_ID, network: holder.network, nodes: config.nodes, peeringSchedule: config.peeringSchedule, timings: options.peering }),
      ]),
      ...(options.edge ?? []),
    ],
  });
}
