// `files.repair`: replication repair (docs/specs/files-node.md §1.4, §2.3 rules 2-3, §4.3 "POST /api/storage/repair",
// §9.6; docs/notes/files-node.md A.4 "Repair rules", C21). Runs the repair-run machine (machines/files/repair-run.machine.ts)
// with real I/O:
// - after the startup walk (spec §9.6) a whole cycle at once, then one on each `replication.repairSchedule` tick;
// - `repair.run` (asked by POST /api/storage/repair) runs exactly one next batch and answers its report, or
//   RunInProgressError (409) while a pass or a cycle runs;
// - the persisted state (cursor and cycle evidence, registry state `repair.state`) is restored at start and
//   discarded when it belongs to another membership or placement policy; the status board gets every change.
//
// One batch (`runBatch`): the next REPAIR_BATCH_SIZE confirmed records after the cursor. Per record in scope
// (confirmed, pinned, held here): its designated peers besides this node (placement over the configured peer ids,
// for the file's age) whose acknowledgement is missing or older than the recheck window (copyDue,
// `replication.repairRecheckMs`) are asked whether they hold it: the batch asks each peer about all its records at
// once, one holdings request (storage/files/peer-copy.libp2p.ts `probeMany`; a peer without that protocol, such as the
// original node, is asked `have` per record), `repairProbeConcurrency` requests in flight in all. A stream per record
// and peer, one record at a time, was 6.4 ms a file in the first cycle with a new peer, mostly libp2p's CPU per stream
// (issue 30). Then, record by record, each peer missing its copy is asked to `place` one (at most
// `repairProbeConcurrency` at once), this node being the source. A peer that confirms or stores its copy is
// noted in the registry as acknowledging it now, one that answers it has none is struck off (the file status counts
// them); the batch's notes go to the store owner as one notice, one registry transaction.
// Before placing, the local pin is checked: content
// not actually pinned here cannot be a source, and the record is unrecoverable. A peer that cannot be reached reads
// as missing and its placement as failed: a shortfall that the next cycle retries (notes A.4). The invoke's signal
// reaches every call, and shutdown stops the job between records.

import { setImmediate } from 'node:timers/promises';
import { CID } from 'multiformats/cid';
import pLimit from 'p-limit';
import { fromCallback, fromPromise } from 'xstate';
import { hostedActor, type HostedInspect } from '../hosted-machine.js';
import { repairRunMachine, UNPACED_BATCHES_PER_WRITE, type RepairRunKind, type RunBatchInput } from '../../machines/files/repair-run.machine.js';
import type { CronSchedule } from '../../src/cron.js';
import type { FilesConfig } from '../../src/files/config.js';
import { RunInProgressError } from '../../src/files/errors.js';
import { membershipVersion } from '../../src/files/health.js';
import { hasOtherMember, type PlacementTier } from '../../src/files/placement.js';
import {
  addCounts,
  copyDue,
  inRepairScope,
  NO_COUNTS,
  NOT_PROBED,
  recordCounts,
  REPAIR_BATCH_SIZE,
  repairPolicyVersion,
  repairRequired,
  repairTargets,
  restoreRepairState,
  freshRepairState,
  type BatchOutcome,
  type RecordRepairOutcome,
  type RepairReport,
  type RepairState,
} from '../../src/files/repair.js';
import type { FileRecord } from '../../src/files/types.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import type { Clock } from '../../src/clock.js';
import { everyCronRun } from '../clock-at.js';
import type { CopyClient, ProbeAnswer } from '../../storage/files/peer-copy.libp2p.js';
import type { HolderNote } from '../../storage/files/registry.js';
import type { FilesNode, NodeHolder } from './node.js';
import type { StorePort } from './store.actor.js';
import type { RepairStatusBoard } from './repair-status.js';
import type { StartupWait } from './startup.js';
import { refuseUnknownMessage } from '../ask.js';

/** Key of the persisted cursor and cycle evidence in the registry's actor state (spec §1 "Durable state"). */
export const REPAIR_STATE_KEY = 'repair.state';

export type RepairEvent =
  | { type: 'repair.run'; reply: Reply<RepairReport> }
  /** Internal: the machine actor failed; this actor crashes with it so the supervisor restarts both. */
  | { type: 'repair.machineFailed'; error: unknown };

export interface RepairSettings {
  /** replication.enabled && replication.repairEnabled; otherwise the actor idles. */
  readonly required: boolean;
  /** `replication.repairSchedule` (6-field cron), parsed with the configuration. */
  readonly schedule: CronSchedule;
  /** `replication.repairBatchDelayMs`. */
  readonly batchDelayMs: number;
  /**
   * `replication.repairProbeConcurrency`: requests asking peers what they hold in flight at once in a batch (over all
   * its records and peers), and copies placed at once for one record.
   */
  readonly probeConcurrency: number;
  /** `replication.repairRecheckMs`: a copy acknowledged within (its share of) this long is not asked about again. */
  readonly recheckMs: number;
  /** Peer ids of the configured `nodes` (this node's own entry included or not). */
  readonly members: readonly string[];
  readonly placement: readonly PlacementTier[];
  /** repairPolicyVersion of the members and tiers: stored evidence of another one is discarded. */
  readonly policyVersion: string;
}

export function repairSettings(config: FilesConfig): RepairSettings {
  const members = config.nodes.map((node) => node.peerId);
  return {
    required: repairRequired(config.replication),
    schedule: config.replication.repairSchedule,
    batchDelayMs: config.replication.repairBatchDelayMs,
    probeConcurrency: config.replication.repairProbeConcurrency,
    recheckMs: config.replication.repairRecheckMs,
    members,
    placement: config.replication.placement,
    policyVersion: repairPolicyVersion(membershipVersion(members), config.replication.placement),
  };
}

export interface RepairOptions {
  /**
   * The running node. A repair batch reads it once and works on that node's records, pins and acknowledgements
   * throughout, so one batch never spans two lives of a restarted runtime.
   */
  readonly holder: NodeHolder;
  readonly clock: Clock;
  readonly status: RepairStatusBoard;
  /** The startup cycle and the schedule start only after the walk (spec §9.6). */
  readonly startup: StartupWait;
  readonly settings: RepairSettings;
  /**
   * The asking side of the replication protocol (storage/files/peer-copy.libp2p.ts); the tree has none when replication
   * is disabled, and then repair is not required and never asks.
   */
  readonly copies: CopyClient | undefined;
  /** Where the peers' answers are noted (holder acknowledgements are the store owner's, actors/files/store.actor.ts). */
  readonly store: StorePort;
  readonly logger: Logger;
  /** The operator inspector's observer for the machine actor (actors/inspector.ts), if any. */
  readonly inspect?: HostedInspect;
}

/** The stopped actor's answer to a manual request it could not finish. */
class RepairStoppedError extends Error {
  override readonly name = 'RepairStoppedError';
  constructor() {
    super('replication repair stopped');
  }
}

export function repairLogic(options: RepairOptions) {
  const { holder, clock, status, settings, logger, store } = options;
  // The cursor and cycle evidence persist in the registry's state table.
  const stateStore = holder.actorState;

  const restore = (): RepairState => {
    try {
      const { state, discarded } = restoreRepairState(stateStore.get(REPAIR_STATE_KEY), settings.policyVersion);
      if (discarded === 'policy') logger.info('repair evidence reset: the node list or the placement policy changed; a new cycle starts from the first file');
      else if (discarded === 'format') logger.warn('repair evidence reset: the stored repair state is not readable; a new cycle starts from the first file');
      return state;
    } catch (error) {
      // Unreadable evidence is no evidence: repair starts a fresh cycle rather than not starting.
      logger.warn({ err: error }, 'repair state could not be restored');
      return freshRepairState(settings.policyVersion);
    }
  };

  /** The asking side: only a node with replication enabled has one, and only then is repair required to ask. */
  const copyClient = (): CopyClient => {
    if (!options.copies) throw new Error('repair needs a copy client (replication.enabled)');
    return options.copies;
  };

  const runBatch = async (cursor: string | null, signal: AbortSignal): Promise<BatchOutcome> => {
    // A turn of the event loop first: batches that ask no peer follow each other through promise callbacks alone,
    // and a cycle over a million records held every timer and every request for its whole ~10 s (issue 30: no HTTP
    // answer for 20 s at the first start on a 1M store, two cycles back to back).
    await setImmediate(undefined, { signal });
    const node = holder.get();
    const startedAt = clock.now();
    const page = { state: 'confirmed', ...(cursor === null ? {} : { afterCid: cursor }), limit: REPAIR_BATCH_SIZE } as const;
    // A node whose `nodes` name no other peer designates nobody for any file: every record is examined and needs
    // nothing (the default, a lone node), so its CIDs are enough. Reading and ranking each record was ~30 µs of CPU
    // a record, ~25 s of the first start's `ready` at a million files.
    if (!hasOtherMember(settings.members, node.peerId)) {
      const cids = node.registry.listCids(page);
      return { counts: { ...NO_COUNTS, examined: cids.length }, fetched: cids.length, lastCid: cids.at(-1) ?? null, startedAt, finishedAt: clock.now() };
    }
    const records = node.registry.list(page);
    let counts = NO_COUNTS;
    const notes: HolderNote[] = [];
    try {
      const probes = await probeBatch(node, records, startedAt, signal);
      for (const [index, record] of records.entries()) {
        signal.throwIfAborted();
        counts = addCounts(counts, recordCounts(await repairRecord(node, record, probes[index], notes, signal)));
      }
    } finally {
      // What the peers said is what the file status counts (spec §2.2), also from a batch cut short.
      if (notes.length > 0) store.tell({ type: 'store.noteHolders', notes, at: clock.now() });
    }
    return { counts, fetched: records.length, lastCid: records.at(-1)?.cid ?? null, startedAt, finishedAt: clock.now() };
  };

  /**
   * The probes of a batch: for each record in scope, its designated peers whose copy is due a check (none: no probe).
   * Each peer is asked about all its records in one `probeMany`, peers side by side; the requests in flight stay within
   * `probeConcurrency` (a peer without the holdings protocol gets its share as `have`s at once). Answers per record, in
   * the records' order.
   */
  const probeBatch = async (node: FilesNode, records: readonly FileRecord[], now: number, signal: AbortSignal): Promise<(RecordProbe | undefined)[]> => {
    // The batch's acknowledgements in one read (one query per file was a fifth of a cycle's walk).
    const acknowledged = settings.recheckMs > 0 ? node.registry.acknowledgementsOf(records.map((record) => record.cid)) : undefined;
    const targetsOf = records.map((record) => {
      if (!inRepairScope(record)) return [];
      const designated = repairTargets(record, settings.members, node.peerId, settings.placement, now);
      const confirmedAt = acknowledged?.get(record.cid);
      return designated.filter((peerId) => copyDue(confirmedAt?.get(peerId), record.cid, peerId, now, settings.recheckMs));
    });
    const recordsOfPeer = new Map<string, number[]>();
    targetsOf.forEach((targets, index) => {
      for (const peerId of targets) {
        const indexes = recordsOfPeer.get(peerId);
        if (indexes) indexes.push(index);
        else recordsOfPeer.set(peerId, [index]);
      }
    });
    if (recordsOfPeer.size === 0) return records.map(() => undefined);
    const copies = copyClient();
    const peersAtOnce = Math.min(settings.probeConcurrency, recordsOfPeer.size);
    const perPeer = Math.max(1, Math.floor(settings.probeConcurrency / peersAtOnce));
    const answersOf = records.map(() => new Map<string, ProbeAnswer>());
    // The notes reach the registry after the batch ends, maybe after a handover probe or an upload noted a newer copy
    // on the same peer: each note says when its peers were asked, and a "not here" strikes only what is older.
    const askedAt = clock.now();
    await mapLimit([...recordsOfPeer], peersAtOnce, signal, async ([peerId, indexes]) => {
      const answers = await copies.probeMany(peerId, indexes.map((index) => records[index]!.cid), signal, perPeer);
      indexes.forEach((index, at) => answersOf[index]!.set(peerId, answers[at]!));
    });
    signal.throwIfAborted();
    return targetsOf.map((targets, index) => (targets.length === 0 ? undefined : { askedAt, targets, answers: targets.map((peerId) => answersOf[index]!.get(peerId)) }));
  };

  /**
   * What the peers said of one record's copies (`probe`: undefined when none was asked) goes to `notes`; each peer
   * missing its copy is asked to keep one, this node being the source.
   */
  const repairRecord = async (node: FilesNode, record: FileRecord, probe: RecordProbe | undefined, notes: HolderNote[], signal: AbortSignal): Promise<RecordRepairOutcome> => {
    if (!probe) return NOT_PROBED;
    const { targets, answers } = probe;
    // A confirmed copy is an acknowledgement, a peer that answered "not here" has lost its own; one that could not be
    // asked keeps what it had.
    notes.push({ cid: record.cid, at: probe.askedAt, held: targets.filter((_, index) => answers[index] === 'held'), gone: targets.filter((_, index) => answers[index] === 'missing') });
    const missing = targets.filter((_, index) => answers[index] !== 'held');
    if (missing.length === 0) return { probed: true, missing: 0, stored: 0, unrecoverable: false };
    let source: boolean;
    try {
      source = await pinnedHere(node, record.cid, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      // The pin could not be checked this time: the copies stay missing and the next cycle tries again.
      return { probed: true, missing: missing.length, stored: 0, unrecoverable: false };
    }
    if (!source) return { probed: true, missing: missing.length, stored: 0, unrecoverable: true };
    const placedAt = clock.now();
    const outcomes = await mapLimit(missing, settings.probeConcurrency, signal, (peerId) => copyClient().place(peerId, record.cid, signal));
    signal.throwIfAborted();
    notes.push({ cid: record.cid, at: placedAt, held: missing.filter((_, index) => outcomes[index] === 'stored') });
    return { probed: true, missing: missing.length, stored: outcomes.filter((outcome) => outcome === 'stored').length, unrecoverable: false };
  };

  const logic = fromCallback<RepairEvent>(({ receive, self }) => {
    let stopped = false;
    let cancelTimer: (() => void) | undefined;
    /** The manual request being answered (only `idle` accepts one, so there is at most one). */
    let pending: Reply<RepairReport> | undefined;

    const machine = repairRunMachine.provide({
      actors: {
        runBatch: fromPromise<BatchOutcome, RunBatchInput>(async ({ input, signal }) => runBatch(input.cursor, signal)),
      },
      actions: {
        persistState: (_, params: { state: RepairState }) => {
          try {
            stateStore.set(REPAIR_STATE_KEY, params.state);
          } catch (error) {
            // The evidence in memory stays right; a restart would only redo the batches since the last write.
            logger.warn({ err: error }, 'repair state could not be stored');
          }
        },
        publishPass: (_, params: { run: RepairRunKind; report: RepairReport }) => {
          const { report } = params;
          if (settings.required) {
            const { cycle, ...batch } = report;
            // A cycle's batch that asked no peer is a debug line: a million records make 10,000 such batches a cycle.
            const quiet = params.run === 'cycle' && report.checked === 0;
            logger[quiet ? 'debug' : 'info']({ origin: params.run === 'batch' ? 'manual' : 'cycle', ...batch }, 'repair pass finished');
            if (report.cycleCompleted && cycle) logger.info(cycle, 'repair cycle completed');
          }
          if (params.run === 'batch') answer((reply) => reply.resolve(report));
        },
        publishFailure: (_, params: { run: RepairRunKind; error: unknown }) => {
          if (stopped) return;
          logger.warn({ origin: params.run === 'batch' ? 'manual' : 'cycle', err: params.error }, 'repair pass failed');
          if (params.run === 'batch') answer((reply) => reply.reject(params.error instanceof Error ? params.error : new Error(String(params.error))));
        },
        noteSkipped: () => logger.debug('scheduled repair skipped: a run is in progress'),
      },
    });

    const answer = (settle: (reply: Reply<RepairReport>) => void) => {
      const reply = pending;
      pending = undefined;
      if (reply) settle(reply);
    };

    const inner = hostedActor(machine, {
      clock,
      input: { required: settings.required, batchDelayMs: settings.batchDelayMs, unpacedBatchesPerWrite: UNPACED_BATCHES_PER_WRITE, restored: restore() },
      inspect: options.inspect,
    });
    const subscription = inner.subscribe({
      next: (snapshot) => status.update(!snapshot.matches('idle'), snapshot.context.state),
      // A machine error is a programming error (every I/O failure is caught above): crash, the supervisor restarts.
      error: (error: unknown) => self.send({ type: 'repair.machineFailed', error }),
    });
    inner.start();
    status.update(false, inner.getSnapshot().context.state);

    // The startup cycle and the schedule (spec §9.6: only after the walk), only when repair is required.
    const schedule = settings.required ? settings.schedule : undefined;
    const unsubscribe = schedule
      ? options.startup.onComplete(() => {
          if (stopped) return;
          inner.send({ type: 'repair.cycle' });
          cancelTimer = everyCronRun(clock, schedule, () => inner.send({ type: 'repair.cycle' }));
        })
      : () => {};

    receive((event) => {
      // Thrown inside the callback's transition: XState marks this actor as errored, the supervisor restarts it.
      if (event.type === 'repair.machineFailed') throw event.error;
      if (event.type !== 'repair.run') return refuseUnknownMessage(event);
      // The machine decides whether a batch may start now (only when idle); otherwise a run is in progress.
      if (stopped || !inner.getSnapshot().can({ type: 'repair.batch' })) return event.reply.reject(new RunInProgressError('repair'));
      if (settings.required) {
        try {
          // The node must run: refused (503 at the edge) rather than counted as a failed pass.
          holder.get();
        } catch (error) {
          return event.reply.reject(error as Error);
        }
      }
      // The batch goes on if the asker gives up: its evidence is stored and shown either way.
      pending = event.reply;
      inner.send({ type: 'repair.batch' });
    });

    return () => {
      stopped = true;
      unsubscribe();
      cancelTimer?.();
      subscription.unsubscribe();
      // Stopping the machine aborts the batch's signal: the walk stops before its next record.
      inner.stop();
      status.stopped();
      answer((reply) => reply.reject(new RepairStoppedError()));
    };
  });
  // The operator view draws the repair machine with its current state (actor-child records `logic.id`).
  return Object.assign(logic, { id: repairRunMachine.id });
}

/** A record's `have` probes: the peers asked (when), and their answers in the same order (undefined: not asked, aborted). */
interface RecordProbe {
  readonly askedAt: number;
  readonly targets: readonly string[];
  readonly answers: readonly (ProbeAnswer | undefined)[];
}

/** Whether this node's copy can be a source: its root is pinned (a recursive pin covers the whole DAG). */
async function pinnedHere(node: FilesNode, cid: string, signal: AbortSignal): Promise<boolean> {
  let parsed: CID;
  try {
    parsed = CID.parse(cid);
  } catch {
    return false;
  }
  return node.pins.has(parsed, signal);
}

/** `work` over `items`, at most `limit` at once (p-limit); results in the items' order. Nothing new starts once `signal` aborts. */
function mapLimit<T, R>(items: readonly T[], limit: number, signal: AbortSignal, work: (item: T) => Promise<R>): Promise<(R | undefined)[]> {
  return pLimit(Math.max(1, limit)).map(items, (item) => (signal.aborted ? undefined : work(item)));
}
