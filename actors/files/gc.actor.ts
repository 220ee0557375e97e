// `files.gc`: the garbage collector (docs/specs/files-node.md §2.8, §4.3, §9.6; docs/notes/files-node.md A.4, C3, C20).
// Runs the gc-run machine (machines/files/gc-run.machine.ts) with real I/O, one run at a time: on request
// (`gc.run`, asked by POST /api/storage/gc) and on `storage.gc.schedule` when `storage.gc.enabled`. A request
// while a run is in progress, manual or scheduled, is refused with RunInProgressError (409); a scheduled run that
// finds one in progress is skipped.
//
// Handover (rule 4c, notes A.7 "collector handover"): with replication enabled, each run (dry ones too, rule 1) picks,
// while it reads the registry, the confirmed files this node holds although it is outside their designated set
// (`handoverCandidates`, at most HANDOVER_CANDIDATES_PER_RUN per run, continuing in CID order after the last real
// run's candidates; only their records are kept, not every confirmed file's) and asks every
// designated holder `have` over the replication protocol, HANDOVER_PROBE_CONCURRENCY requests at a time, before the
// plan is made. A file is demoted only when ALL its holders said yes; a real run then drops the local pin under the
// exclusive lease with the releases, and the record stays `confirmed` with `heldLocally: false`. The blocks stay
// until a deletion pass collects them, so the file is still served locally until then.
//
// Block deletion — why not `helia.gc()`: in @helia/utils 2.5.2 `gc()` takes helia's blockstore write lock and deletes
// through `blockstore.unwrap()` (the networked storage over the file-backed store), so unlike the facade's
// `delete`/`deleteMany` it does NOT try to cancel a reprovide (the failure notes A.8 describes for a node without
// content routers). It would work, but it deletes every unpinned block with no way to stop once a pressure run has
// freed enough (rule 5), reports what it deleted only through progress events, swallows per-block errors into a
// log line, and holds helia's write lock (stalling every download) for the whole pass. So the deletion pass here
// walks the file-backed blockstore (node.store.blockstore, the FsBlockstore) itself: a block is deleted when no pin
// covers it (`pins.isPinned` is per block, by multihash), counted by its bytes, listed in `removedCids` as the
// blockstore names it, and any failure ends the pass with an error in the report. What helia's lock protected
// against — a block written but not yet pinned — is covered by the storage lease instead, held by the store's owner
// (actors/files/store.actor.ts): uploads hold it shared from their first block write to commit, operator pins while
// they fetch, and this pass exclusively. Every record and pin change of a run (releases, handovers, restored pins)
// is a message to that owner.

import { CID } from 'multiformats/cid';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import pLimit from 'p-limit';
import { fromCallback, fromPromise, toPromise } from 'xstate';
import { hostedActor, type HostedInspect } from '../hosted-machine.js';
import {
  gcRunMachine,
  type DeleteUnpinnedInput,
  type DeleteUnpinnedOutput,
  type LoadRecordsInput,
  type ProbeHoldersInput,
  type ReleaseFilesInput,
  type ReleaseFilesOutput,
  type VerifyPinsOutput,
} from '../../machines/files/gc-run.machine.js';
import type { CronSchedule } from '../../src/cron.js';
import { PagePool, type PageSource } from '../../src/packed-strings.js';
import type { FilesConfig } from '../../src/files/config.js';
import { RunInProgressError } from '../../src/files/errors.js';
import {
  demoteEvent,
  gcEvidence,
  gcLastRun,
  gcReport,
  mustBePinned,
  releaseEvent,
  stillMatchesDemotion,
  stillMatchesPlan,
  storedGcLastRun,
  summarizeRegistry,
  type GcMeasurement,
  type GcRecordSummary,
  type GcRegistryReads,
  type GcReport,
  type GcSettings,
  type HandoverCandidate,
} from '../../src/files/gc.js';
import { hasOtherMember, type PlacementTier } from '../../src/files/placement.js';
import type { FileEvent, FileRecord, FileState } from '../../src/files/types.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import { directoryBytes, freeBytes } from '../../storage/files/disk-usage.js';
import { deadline, type Clock } from '../../src/clock.js';
import { everyCronRun } from '../clock-at.js';
import type { CopyClient } from '../../storage/files/peer-copy.libp2p.js';
import type { GcStatusBoard } from './gc-status.js';
import type { FilesNode, NodeHolder } from './node.js';
import type { StorePort } from './store.actor.js';
import type { StartupWait } from './startup.js';
import { refuseUnknownMessage } from '../ask.js';

/**
 * `gc.run` asks for a run; its report's `retainedCids` are the collector's pages, which the asker gives back with
 * `report.retainedCids.release()` once it has written them (the HTTP route does, when the answer is sent or abandoned;
 * an asker that does not leaves them to V8). `gc.pagesReturned` is that release coming back to the collector.
 */
export type GcEvent = { type: 'gc.run'; dryRun: boolean; force: boolean; reply: Reply<GcReport> } | { type: 'gc.pagesReturned'; pages: readonly Buffer[] };

export interface GcActorSettings {
  readonly gc: GcSettings;
  /** `storage.gc.enabled`: the scheduled collector; the endpoint works either way (spec §4.3). */
  readonly enabled: boolean;
  /** `storage.gc.schedule` (6-field cron, local time like the original), parsed with the configuration. */
  readonly schedule: CronSchedule;
  /** Placement for the handover (rule 4c); absent or disabled: nothing is handed over. */
  readonly replication?: {
    readonly enabled: boolean;
    readonly placement: readonly PlacementTier[];
    /** Peer ids of the configured `nodes`. */
    readonly members: readonly string[];
  };
}

export interface GcOptions {
  /**
   * The running node: each step of a run reads it once and works on that node's blocks, pins and records throughout
   * (the collector is the one actor that needs all of them together), so a step never spans two lives of a
   * restarted runtime.
   */
  readonly holder: NodeHolder;
  readonly clock: Clock;
  /** The owner of records, pins and the storage lease (actors/files/store.actor.ts). */
  readonly store: StorePort;
  readonly status: GcStatusBoard;
  /** The scheduled collector starts only after the startup walk (spec §9.6). */
  readonly startup: StartupWait;
  readonly settings: GcActorSettings;
  readonly logger: Logger;
  /** The asking side of the replication protocol (`have` probes of the handover); absent: no handover. */
  readonly copies?: CopyClient;
  /** Told after every non-dry run (the disk actor rescans, so metrics show the freed space); must not throw. */
  readonly afterRun?: () => void;
  /** The operator inspector's observer for each run's machine actor (actors/inspector.ts), if any. */
  readonly inspect?: HostedInspect;
}

export function gcSettings(config: FilesConfig): GcActorSettings {
  return {
    gc: {
      highWatermarkBytes: config.storage.gc.highWatermarkBytes,
      lowWatermarkBytes: config.storage.gc.lowWatermarkBytes,
      diskReserveBytes: config.storage.diskReserveBytes,
    },
    enabled: config.storage.gc.enabled,
    schedule: config.storage.gc.schedule,
    replication: {
      enabled: config.replication.enabled,
      placement: config.replication.placement,
      members: config.nodes.map((node) => node.peerId),
    },
  };
}

/** Registry pages while reading it whole (planning, pin verification). */
const PAGE = 1_000;
/**
 * Releases in flight at once. A release is a dozen file-system round trips (the pin's records, the DAG's blocks) and
 * one registry write, ~7 ms one at a time: a run releasing a day's expiries at a million files (30k) held the
 * exclusive lease, and so every upload, for minutes (issue 30).
 */
export const RELEASES_AT_ONCE = 8;
/**
 * Pin reads in flight at once: the verification's root pins (~920k at a million files) and the deletion pass's
 * block pins (one per block file), one `access` each.
 */
export const PIN_CHECKS_AT_ONCE = 8;
/** How long one run may spend asking holders before it plans (probing runs before the lease is taken). */
const HANDOVER_PROBE_BUDGET_MS = 60_000;
/**
 * `have` requests in flight at once during a run's handover probes: enough to overlap the peers' round trips,
 * few enough that a run never floods a peer (each request is bounded by `replication.requestTimeoutMs`).
 */
export const HANDOVER_PROBE_CONCURRENCY = 4;
type RunOrigin = 'manual' | 'scheduled';

export function gcLogic(options: GcOptions) {
  const { holder, clock, store, status, settings, logger } = options;

  const logic = fromCallback<GcEvent>(({ receive, self }) => {
    /** The run in progress: its machine actor and the lease it may hold. */
    let current: { stop(): void } | undefined;
    let cancelTimer: (() => void) | undefined;
    let stopped = false;
    /**
     * The pages of the runs' packed CID lists (~54 of 1 MiB at a million files), reused run after run: the pages of a
     * report given back are this collector's again (a message, like any change to its state).
     */
    const pool = new PagePool();
    const pages: PageSource = {
      take: (bytes) => pool.take(bytes),
      give: (given) => {
        if (!stopped) self.send({ type: 'gc.pagesReturned', pages: given });
      },
    };
    /** Where the next real run's handover candidates start (in memory: a restart begins again at the first CID). */
    let handoverAfter: string | undefined;
    const replication = settings.replication;
    const copies = replication?.enabled ? options.copies : undefined;

    try {
      status.restore(storedGcLastRun(holder.get().registry.lastGcRun()?.report));
    } catch (error) {
      logger.warn({ err: error }, 'could not read the last GC run');
    }

    const run = async (dryRun: boolean, force: boolean, origin: RunOrigin): Promise<GcReport> => {
      const startedAt = clock.now();
      let heldLease: number | undefined;
      const releaseLease = () => {
        if (heldLease !== undefined) store.tell({ type: 'store.endCollection', token: heldLease });
        heldLease = undefined;
      };
      const actor = hostedActor(
        gcRunMachine.provide({
          actors: {
            measure: fromPromise<GcMeasurement, void>(async ({ signal }) => measure(holder.get(), clock, signal)),
            loadRecords: fromPromise<GcRecordSummary, LoadRecordsInput>(async ({ input, signal }) => {
              const node = holder.get();
              // Only a run that can hand over (replication with another member) picks candidates among the confirmed files.
              const handover = copies !== undefined && replication !== undefined && hasOtherMember(replication.members, node.peerId);
              const reads: GcRegistryReads = {
                pinnedCids: () => pagesTakingTurns((afterCid) => node.registry.listPinnedCids({ afterCid, limit: PAGE }), (cid) => cid, signal),
                pinnedBytes: () => node.registry.pinnedBytes(),
                temporaries: () => everyRecord(node, signal, 'temporary'),
                confirmed: () => everyRecord(node, signal, 'confirmed'),
              };
              const onlyExpiredAt = input.underPressure ? undefined : input.now;
              if (!handover) return summarizeRegistry(reads, { pages, onlyExpiredAt });
              const scope = { self: node.peerId, members: replication.members, tiers: replication.placement, now: input.now };
              return summarizeRegistry(reads, { pages, onlyExpiredAt, handover: { scope, after: handoverAfter } });
            }),
            probeHolders: fromPromise<string[], ProbeHoldersInput>(async ({ input, signal }) => {
              const selection = input.records.handover;
              if (!copies || selection.candidates.length === 0) return [];
              // Rule 1: a dry run leaves the sweep position where it was.
              if (!dryRun) handoverAfter = selection.next;
              // A holder's "I have it" is an acknowledgement the file status counts (spec §2.2), dry run or not.
              const noteHeld = (cid: string, peerId: string) => store.tell({ type: 'store.noteHolders', notes: [{ cid, held: [peerId] }], at: clock.now() });
              const confirmed = await probeHolders(copies, clock, selection.candidates, signal, noteHeld);
              logger.info({ origin, candidates: selection.candidates.length, confirmed: confirmed.length }, 'handover candidates probed');
              return confirmed;
            }),
            acquireLease: fromPromise<void, void>(async ({ signal }) => {
              const token = await store.ask({ type: 'store.beginCollection' }, { signal });
              // Stopped while waiting for the grant: give it straight back.
              if (stopped || signal.aborted) store.tell({ type: 'store.endCollection', token });
              else heldLease = token;
            }),
            releaseFiles: fromPromise<ReleaseFilesOutput, ReleaseFilesInput>(async ({ input, signal }) => releaseFiles(store, input, signal)),
            verifyPins: fromPromise<VerifyPinsOutput, void>(async ({ signal }) => verifyPins(holder.get(), store, signal)),
            deleteUnpinned: fromPromise<DeleteUnpinnedOutput, DeleteUnpinnedInput>(async ({ input, signal }) => deleteUnpinned(holder.get(), input, signal)),
          },
          actions: { releaseLease },
        }),
        // The runtime's clock, so the run's delays follow it (it used the wall clock before).
        { clock, input: { dryRun, force, settings: settings.gc }, inspect: options.inspect },
      );
      let runStopped = false;
      current = {
        stop: () => {
          runStopped = true;
          actor.stop();
          releaseLease();
        },
      };
      status.started();
      logger.info({ origin, dryRun, force }, 'garbage collection started');
      let report: GcReport;
      try {
        actor.start();
        const result = await toPromise(actor);
        // A run stopped with its actor (shutdown) completes without an output: nothing to report or record.
        if (!result) throw new Error('garbage collection stopped');
        // The retained list is a view of the pinned CIDs (~920k at a million files): counted here, in turns of the
        // event loop, before the log line and the stored evidence ask for its length.
        await result.retainedCids.countInTurns(() => setImmediate());
        // Stopped while counting (shutdown, or the collector restarted): not recorded, like a run stopped before.
        if (runStopped) throw new Error('garbage collection stopped');
        report = gcReport(result, startedAt, clock.now());
        logger.info(
          {
            origin,
            outcome: result.outcome,
            trigger: report.trigger,
            released: report.releasedCids.length,
            demoted: report.demoted.length,
            retained: report.retainedCids.length,
            removedBlocks: report.removedBlocks,
            repairedPins: report.repairedPins.length,
            unprotected: report.unprotected.length,
            errors: report.errors.length,
            durationMs: report.durationMs,
          },
          'garbage collection finished',
        );
        if (report.errors.length > 0 || report.unprotected.length > 0) logger.warn({ outcome: result.outcome, errors: report.errors }, 'garbage collection did not complete');
      } catch (error) {
        status.finished();
        throw error;
      } finally {
        releaseLease();
        current = undefined;
      }
      try {
        holder.get().registry.recordGcRun({ startedAt, finishedAt: startedAt + report.durationMs, report: gcEvidence(report) });
      } catch (error) {
        logger.warn({ err: error }, 'could not record the GC run');
      }
      status.finished(gcLastRun(report));
      if (!dryRun) options.afterRun?.();
      return report;
    };

    /** Starts a run unless one is in progress (then RunInProgressError, also for a stopped collector). */
    const start = (dryRun: boolean, force: boolean, origin: RunOrigin): Promise<GcReport> => {
      if (current || stopped) return Promise.reject(new RunInProgressError('gc'));
      try {
        // The node must run: refused (503 at the edge) rather than recorded as a failed run.
        holder.get();
      } catch (error) {
        return Promise.reject(error);
      }
      return run(dryRun, force, origin);
    };

    // The scheduled collector (notes A.4 rule 9): non-dry, not forced, only after the startup walk.
    const schedule = settings.enabled ? settings.schedule : undefined;
    const unsubscribe = schedule
      ? options.startup.onComplete(() => {
          if (stopped) return;
          cancelTimer = everyCronRun(clock, schedule, () => {
            if (current) logger.info({ origin: 'scheduled' }, 'garbage collection skipped: a run is in progress');
            // Nobody reads a scheduled run's report: its pages are free as soon as it is recorded.
            else start(false, false, 'scheduled').then((report) => report.retainedCids.release(), (error: unknown) => logger.warn({ err: error }, 'scheduled garbage collection could not run'));
          });
        })
      : () => {};

    receive((event) => {
      if (event.type === 'gc.pagesReturned') return pool.give(event.pages);
      if (event.type !== 'gc.run') return refuseUnknownMessage(event);
      // The run goes on if the asker gives up: it is recorded and shown in metrics either way, and a run stopped
      // half way would only have to be redone.
      start(event.dryRun === true, event.force === true, 'manual').then(event.reply.resolve, (error: unknown) => event.reply.reject(error as Error));
    });

    return () => {
      stopped = true;
      unsubscribe();
      cancelTimer?.();
      current?.stop();
      current = undefined;
      status.finished();
    };
  });
  // The operator view draws the run machine with the state of the current (or last) run (actor-child records `logic.id`).
  return Object.assign(logic, { id: gcRunMachine.id });
}

async function measure(node: FilesNode, clock: Clock, signal: AbortSignal): Promise<GcMeasurement> {
  const now = clock.now();
  const dir = join(node.store.directory, 'blockstore');
  // On the collector's own walker thread: never queued behind a disk-usage scan (storage/files/disk-usage.ts).
  const [blockstoreBytes, free] = await Promise.all([directoryBytes(dir, signal, 'gc'), freeBytes(dir)]);
  return { now, blockstoreBytes, freeBytes: free };
}

/**
 * A registry read a page at a time, in CID order, each page after the last CID of the one before (records written
 * between pages neither repeat nor shift the rest), with a turn of the event loop before each page after the first.
 * A caller holds one page at a time: at a million files the whole list is some hundreds of MiB. And the turns matter:
 * a run's summary reads every pinned CID (~1 s at a million files), and read in one go it held every request, timer
 * and peer answer of the node for that long (issue 30: the event loop stood still for 3.4–4.4 s in each GC dry run
 * at 1M). A stopped run (`signal`) reads no further page.
 */
async function* pagesTakingTurns<T>(read: (afterCid: string | undefined) => T[], cidOf: (item: T) => string, signal: AbortSignal): AsyncGenerator<T[]> {
  let afterCid: string | undefined;
  for (;;) {
    const page = read(afterCid);
    yield page;
    if (page.length < PAGE) return;
    afterCid = cidOf(page[page.length - 1]!);
    await setImmediate(undefined, { signal });
  }
}

/** Every record (of one state, if given), a page at a time (`pagesTakingTurns`). */
function everyRecord(node: FilesNode, signal: AbortSignal, state?: FileState): AsyncGenerator<FileRecord[]> {
  return pagesTakingTurns((afterCid) => node.registry.list({ state, afterCid, limit: PAGE }), (record) => record.cid, signal);
}

/**
 * Rule 4c: asks every designated holder of every candidate whether it holds the file, at most
 * HANDOVER_PROBE_CONCURRENCY requests at a time; a candidate's remaining holders are not asked once one said no.
 * Answers the CIDs every holder confirmed, in candidate order. A holder that cannot be asked counts as a no.
 * `onHeld` hears each holder that confirmed its copy.
 */
async function probeHolders(
  copies: CopyClient,
  clock: Clock,
  candidates: readonly HandoverCandidate[],
  signal: AbortSignal,
  onHeld: (cid: string, peerId: string) => void = () => {},
): Promise<string[]> {
  const refused = new Set<string>();
  const probes = candidates.flatMap((candidate) => candidate.holders.map((peerId) => ({ cid: candidate.cid, peerId })));
  // A dead holder costs one request timeout per probe: the phase has a budget, and what it did not reach is a no.
  const budget = deadline(clock, HANDOVER_PROBE_BUDGET_MS, signal);
  const bounded = budget.signal;
  const worker = async (probe: (typeof probes)[number]) => {
    if (refused.has(probe.cid)) return;
    signal.throwIfAborted();
    if (budget.expired) {
      refused.add(probe.cid);
      return;
    }
    const holds = await copies.have(probe.peerId, probe.cid, bounded).catch(() => false);
    if (holds !== true) refused.add(probe.cid);
    else onHeld(probe.cid, probe.peerId);
  };
  await pLimit(HANDOVER_PROBE_CONCURRENCY).map(probes, worker).finally(() => budget.clear());
  signal.throwIfAborted();
  return candidates.filter((candidate) => candidate.holders.length > 0 && !refused.has(candidate.cid)).map((candidate) => candidate.cid);
}

/**
 * Releases the planned files, then demotes the planned handovers, that still match the plan (rule 7), through the
 * lifecycle machine: each is a `store.change` whose decision is made on the record that stands when the owner takes
 * it (a file confirmed or re-pinned since the plan keeps its record). The owner writes the record after its pin is gone.
 * RELEASES_AT_ONCE changes are in flight at once (the owner runs changes of different CIDs side by side); the lists
 * keep the plan's order.
 */
async function releaseFiles(store: StorePort, input: ReleaseFilesInput, signal: AbortSignal): Promise<ReleaseFilesOutput> {
  const failures: unknown[] = [];
  /** Applies the event `decide` gives for the record that stands (null: it no longer matches the plan). */
  const apply = async (cid: string, decide: (current: FileRecord) => FileEvent | null): Promise<'written' | 'kept' | 'left'> => {
    signal.throwIfAborted();
    try {
      const { record, written } = await store.ask({ type: 'store.change', cid: CID.parse(cid), decide }, { signal });
      // Not released (no longer planned): a record still pinned is retained.
      return written ? 'written' : record?.pinned ? 'kept' : 'left';
    } catch (error) {
      if (signal.aborted) throw error;
      failures.push(error);
      return 'kept';
    }
  };
  const limit = pLimit(RELEASES_AT_ONCE);
  const released = await limit.map(input.release, (entry) => apply(entry.cid, (current) => (stillMatchesPlan(entry, current, input.now) ? releaseEvent(entry, input.now) : null)));
  const demoted = await limit.map(input.demote, (entry) => apply(entry.cid, (current) => (stillMatchesDemotion(entry, current) ? demoteEvent(input.now) : null)));
  const cidsWhere = (entries: readonly { cid: string }[], outcomes: readonly string[], outcome: string) => entries.filter((_, index) => outcomes[index] === outcome).map((entry) => entry.cid);
  return {
    releasedCids: cidsWhere(input.release, released, 'written'),
    demotedCids: cidsWhere(input.demote, demoted, 'written'),
    keptCids: [...cidsWhere(input.release, released, 'kept'), ...cidsWhere(input.demote, demoted, 'kept')],
    failures,
  };
}

/**
 * Rule 6: every file that must be pinned is; a lost pin is restored by the owner from local blocks only (offline: a
 * missing block is not fetched), and one that cannot be restored is unprotected. The root pins are checked here first
 * (reads, PIN_CHECKS_AT_ONCE at a time over a registry page), so only lost pins become messages, in registry order.
 */
async function verifyPins(node: FilesNode, store: StorePort, signal: AbortSignal): Promise<VerifyPinsOutput> {
  const repairedPins: string[] = [];
  const unprotected: string[] = [];
  const failures: unknown[] = [];
  const limit = pLimit(PIN_CHECKS_AT_ONCE);
  for await (const page of everyRecord(node, signal)) {
    const lost = await limit.map(page.filter(mustBePinned), async (record): Promise<{ cid: CID; text: string } | undefined> => {
      signal.throwIfAborted();
      let cid: CID;
      try {
        cid = CID.parse(record.cid);
      } catch {
        unprotected.push(record.cid);
        return undefined;
      }
      try {
        return (await node.pins.has(cid, signal)) ? undefined : { cid, text: record.cid };
      } catch (error) {
        if (signal.aborted) throw error;
        failures.push(error);
        return undefined;
      }
    });
    for (const pin of lost) {
      if (pin === undefined) continue;
      signal.throwIfAborted();
      try {
        const outcome = await store.ask({ type: 'store.restorePin', cid: pin.cid }, { signal });
        if (outcome === 'restored') repairedPins.push(pin.text);
        else if (outcome === 'unprotected') unprotected.push(pin.text);
      } catch (error) {
        if (signal.aborted) throw error;
        failures.push(error);
      }
    }
  }
  return { repairedPins, unprotected, failures };
}

/**
 * Deletes blocks no pin covers from the file-backed blockstore (see the header for why not `helia.gc()`), until
 * `bytesToFree` bytes are gone or, with null, all of them. The blockstore is read a small batch at a time
 * (`blockBatches`), the batch's pins read PIN_CHECKS_AT_ONCE at a time, and its unpinned blocks deleted before the
 * next is read, so the walk holds a few hundred CIDs at any time, however many blocks the store has. A block's bytes
 * are counted from its file's size, never read.
 * The first failure ends the pass.
 */
async function deleteUnpinned(node: FilesNode, input: DeleteUnpinnedInput, signal: AbortSignal): Promise<DeleteUnpinnedOutput> {
  const removedCids: string[] = [];
  let freedBytes = 0;
  const enough = () => input.bytesToFree !== null && freedBytes >= input.bytesToFree;
  if (enough()) return { removedCids, freedBytes, failures: [] };
  const blockstore = node.store.blockstore;
  const limit = pLimit(PIN_CHECKS_AT_ONCE);
  try {
    for await (const cids of blockstore.blockBatches(signal)) {
      const pinned = await limit.map(cids, (cid) => node.helia.pins.isPinned(cid, { signal }));
      for (const [index, cid] of cids.entries()) {
        if (enough()) return { removedCids, freedBytes, failures: [] };
        if (pinned[index]) continue;
        // Gone since its batch was read (nothing else deletes blocks, but a hand-cleaned store might).
        const size = await blockstore.sizeOf(cid);
        if (size === undefined) continue;
        await blockstore.delete(cid, { signal });
        freedBytes += size;
        removedCids.push(cid.toString());
      }
    }
  } catch (error) {
    if (signal.aborted) throw error;
    return { removedCids, freedBytes, failures: [error] };
  }
  return { removedCids, freedBytes, failures: [] };
}
