// `files.health`: the health checkpoint machine with its I/O supplied, and the answers the node routes ask for
// (docs/specs/files-node.md §2.3, §3.2, §4.1; docs/notes/files-node.md A.6, C5, C16-C19).
//
// The machine (machines/files/health-checkpoint.machine.ts) decides; this actor only fetches and writes:
// - gatherInputs: the libp2p status, the startup walk's result, the disk actor's newest free-space reading, the
//   peers' attestations of the round (storage/files/attestation.libp2p.ts); the attempt's time is read AFTER the
//   evidence, so no reading is ever "in the future" of the attempt (that would clear `clockConsistent`, spec §2.3
//   rule 4);
// - persistCheckpoint: the versioned record into the registry's actor state (`health.checkpoint`), which the next
//   start reads back with parseCheckpoint (a record earned under another node list is discarded by the machine);
// - reportFailure: a warn line (stage and error only; the logger scrubs CIDs and peer ids).
//
// The machine declares only its own events, so reads are answered here: this actor is a thin callback around the
// machine actor, `health.read` builds the Health object at the read time from the machine's last snapshot and a
// fresh look at the disk actor's free-space reading (the read-time freshness checks, spec §2.3 rule 1). The machine's
// state value and events still reach the operator view (its `inspect` feeds this actor's record, and the logic
// carries the machine's id so the statechart is drawn with the current state).

import { fromCallback, fromPromise } from 'xstate';
import { hostedActor, type HostedInspect } from '../hosted-machine.js';
import {
  healthCheckpointMachine,
  healthObject,
  type GatherInput,
  type GatherOutput,
  type PersistInput,
  type PersistOutput,
} from '../../machines/files/health-checkpoint.machine.js';
import type { FilesConfig } from '../../src/files/config.js';
import {
  membershipVersion,
  parseCheckpoint,
  roundStart,
  type FreshnessInputs,
  type HealthInputs,
  type HealthObject,
  type HealthSettings,
  type PersistedCheckpoint,
} from '../../src/files/health.js';
import type { NodeIdentity, ReserveReading } from '../../src/files/storage-metrics.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import type { Clock } from '../../src/clock.js';
import { attestationSettings, attestRound, registerAttestationResponder, unregisterAttestationResponder, type AttestationSettings } from '../../storage/files/attestation.libp2p.js';
import type { ActorStateStore, PeerNetwork } from './node.js';
import type { StartupWait } from './startup.js';
import { repairHealthInputs } from '../../src/files/repair.js';
import { refuseUnknownMessage } from '../ask.js';

/** Key of the persisted checkpoint in the registry's actor state (one record, spec §1 "health checkpoint"). */
export const HEALTH_CHECKPOINT_KEY = 'health.checkpoint';

export type HealthEvent =
  | { type: 'health.read'; reply: Reply<HealthObject> }
  | { type: 'node.identity'; reply: Reply<NodeIdentity> }
  /** Internal: the machine actor failed; this actor crashes with it so the supervisor restarts both. */
  | { type: 'health.machineFailed'; error: unknown };

export interface HealthActorOptions {
  readonly settings: HealthSettings;
  /** `membership.version` of the configured node list (healthSettings below computes it). */
  readonly membershipVersion: string;
  /** The running node's network, read at each use. */
  readonly network: () => PeerNetwork;
  /** Where the checkpoint persists (the registry's state table). */
  readonly state: ActorStateStore;
  readonly startup: StartupWait;
  /**
   * The disk actor's newest free-space reading (null before its first); a failure counts as "no evidence". An attempt
   * asks with `readFreeSpace` (a statfs now, bounded wait); a read takes the last reading and never waits.
   */
  readStorage(signal: AbortSignal, readFreeSpace: boolean): Promise<ReserveReading | null>;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The repair job's cycle evidence (its board, actors/files/repair-status.ts), read at each use; absent: repair is not required. */
  readonly repair?: () => HealthInputs['repair'];
  /** Software version (spec §9.1) and the process start, for `version` and `uptimeMs`. */
  readonly meta: { readonly version: string; readonly startedAt: number };
  /** The operator inspector's observer for the machine actor (actors/inspector.ts), if any. */
  readonly inspect?: HostedInspect;
  /**
   * Peer attestations over /adamant/health/1.0.0 (notes A.6): the configured nodes, asked each attempt when peers
   * are required and answered while this actor runs. Absent: nothing is asked or answered (attestedPeers 0).
   */
  readonly attestation?: AttestationSettings;
}

/** The health settings and membership of a files configuration. */
export function healthSettings(config: FilesConfig): { settings: HealthSettings; membershipVersion: string; attestation: AttestationSettings } {
  return {
    attestation: attestationSettings(config),
    settings: {
      intervalMs: config.health.checkpointIntervalMs,
      maxCheckpointAgeMs: config.health.maxCheckpointAgeMs,
      storageMaxAgeMs: config.health.storageMaxAgeMs,
      repairMaxAgeMs: config.health.repairMaxAgeMs,
      requiredPeerCount: config.health.requiredPeerCount,
      diskReserveBytes: config.storage.diskReserveBytes,
    },
    // Every configured entry, this node's own included (notes C17): each node of a fleet computes the same digest.
    membershipVersion: membershipVersion(config.nodes.map((node) => node.peerId)),
  };
}

/** The libp2p status of the running node (notes C16), `stopped` when none runs. */
export function nodeIdentity(network: () => PeerNetwork): NodeIdentity {
  let node;
  try {
    node = network();
  } catch {
    return { runtimeStatus: 'stopped', peerId: null, multiAddresses: [] };
  }
  return { runtimeStatus: node.libp2p.status, peerId: node.peerId, multiAddresses: node.libp2p.getMultiaddrs().map((address) => address.toString()) };
}

export function healthLogic(options: HealthActorOptions) {
  const { clock, logger, network, state, startup, settings } = options;
  // The repair actor's evidence, read at each attempt and each read (`repairFresh` is a read-time check, spec §2.3
  // rule 1). A board that is not required makes `repairFresh` always true (rule 2).
  const repairEvidence = options.repair ?? (() => repairHealthInputs(false, null));

  const restore = (): PersistedCheckpoint | null => {
    try {
      return parseCheckpoint(state.get(HEALTH_CHECKPOINT_KEY));
    } catch (error) {
      // Unreadable evidence is no evidence: the node starts from height 0 rather than not starting.
      logger.warn({ err: error }, 'health checkpoint could not be restored');
      return null;
    }
  };

  const readStorage = (signal: AbortSignal, readFreeSpace: boolean): Promise<ReserveReading | null> =>
    options.readStorage(signal, readFreeSpace).catch(() => null);

  // Asked only when peers are required (spec §2.3 rule 7: otherwise no call, attestedPeers 0); never rejects.
  const attest = async (signal: AbortSignal): Promise<number> => {
    const attestation = options.attestation;
    if (attestation === undefined || settings.requiredPeerCount === 0) return 0;
    let node;
    try {
      node = network();
    } catch {
      return 0;
    }
    const askedAt = clock.now();
    const request = { round: roundStart(askedAt, settings.intervalMs), timestamp: askedAt, membershipVersion: options.membershipVersion };
    return attestRound({ ...attestation, libp2p: node.libp2p, self: node.peerId, request, clock }, signal);
  };

  // The responder lives on the node this actor started with: a runtime restart restarts this actor too
  // (rest_for_one). A node that is not running answers nothing; a standalone node opens no protocol.
  const respond = (): (() => void) => {
    const attestation = options.attestation;
    let node;
    try {
      node = network();
    } catch {
      return () => {};
    }
    const self = node.peerId;
    if (attestation === undefined || !attestation.nodes.some((peer) => peer.peerId !== self)) return () => {};
    const { libp2p } = node;
    const failed = (error: unknown) => logger.warn({ error: (error as Error).name }, 'attestation responder change failed');
    registerAttestationResponder(libp2p, { ...attestation, membershipVersion: options.membershipVersion, intervalMs: settings.intervalMs, clock, logger }).catch(failed);
    return () => void unregisterAttestationResponder(libp2p).catch(failed);
  };

  const machine = healthCheckpointMachine.provide({
    actors: {
      gatherInputs: fromPromise<GatherOutput, GatherInput>(async ({ signal }) => {
        const storage = await readStorage(signal, true);
        const runtimeStarted = nodeIdentity(network).runtimeStatus === 'started';
        const walked = startup.result !== undefined;
        const attestedPeers = await attest(signal);
        const now = clock.now();
        return {
          now,
          finishedAt: now,
          inputs: {
            // The walk either finishes (healthy: pins it could not verify are skipped by design, spec §3.1) or
            // crashes and is restarted by its supervisor, in which case it has not finished.
            startup: { complete: walked, healthy: walked },
            runtimeStarted,
            storage: { measuredAt: storage?.measuredAt ?? null, availableBytes: storage?.availableBytes ?? null },
            repair: repairEvidence(),
            attestedPeers,
          },
        };
      }),
      persistCheckpoint: fromPromise<PersistOutput, PersistInput>(async ({ input }) => {
        state.set(HEALTH_CHECKPOINT_KEY, input.checkpoint);
        return { finishedAt: clock.now() };
      }),
    },
    actions: {
      reportFailure: (_, params: { stage: 'gather' | 'persist'; error: unknown }) => {
        logger.warn({ stage: params.stage, err: params.error }, 'health checkpoint attempt failed');
      },
    },
  });

  const logic = fromCallback<HealthEvent>(({ receive, self }) => {
    const inner = hostedActor(machine, {
      clock,
      input: { settings, membershipVersion: options.membershipVersion, restored: restore(), startedAt: clock.now() },
      inspect: options.inspect,
    });
    const subscription = inner.subscribe({
      error: (error: unknown) => self.send({ type: 'health.machineFailed', error }),
    });

    const read = async (signal: AbortSignal): Promise<HealthObject> => {
      const storage = await readStorage(signal, false);
      // Read after the disk answer: a measurement taken during the wait must not lie in the read's future.
      const now = clock.now();
      const fresh: FreshnessInputs = { storage: { measuredAt: storage?.measuredAt ?? null }, repair: repairEvidence() };
      return healthObject(inner.getSnapshot().context, fresh, now, options.meta);
    };

    receive((event) => {
      switch (event.type) {
        case 'health.read':
          return void read(event.reply.signal).then(event.reply.resolve, (error: unknown) => event.reply.reject(error as Error));
        case 'node.identity':
          return event.reply.resolve(nodeIdentity(network));
        case 'health.machineFailed':
          // Thrown inside the callback's transition: XState marks this actor as errored, the supervisor restarts it.
          throw event.error;
        default:
          return refuseUnknownMessage(event);
      }
    });

    inner.start();
    const unrespond = respond();
    // An attempt the moment the walk finishes (notes C5); at once when it already has (a restarted actor).
    const unsubscribe = startup.onComplete(() => inner.send({ type: 'health.startupComplete' }));
    return () => {
      unsubscribe();
      subscription.unsubscribe();
      inner.stop();
      unrespond();
    };
  });
  // The operator view finds the statechart by machine id (actors/actor-child.ts records `logic.id`).
  return Object.assign(logic, { id: healthCheckpointMachine.id });
}
