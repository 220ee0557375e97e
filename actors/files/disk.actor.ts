// `files.disk`: the disk-usage scan, the free-space reading and the disk claims (docs/specs/files-node.md §2.3,
// §2.6, §4.2 507, §8 `storage.diskReserveBytes`; docs/notes/files-node.md A.9 "Disk claim", B.5).
//
// The scan: once at start, then on `diskUsageScanPeriod` (cron with seconds), never two at once. It walks the
// blockstore and datastore folders, reads the free space of the blockstore's filesystem (not `/` as the original
// did), the pinned bytes and the file counts of the registry, and keeps the result with its time. Readers get the
// cached result at once (`disk.snapshot`): storage metrics "refresh on the disk-usage scan schedule, not per
// request", and a health read or an info request must never wait for a walk over a large blockstore. `disk.rescan`
// measures now (the collector sends it after a run, so metrics show the freed space without waiting for the
// schedule). A walk that takes longer than its period (about a million stored files on this machine) is followed by
// a rest as long as itself before the next scheduled one, so it never holds a core for good.
//
// The free-space reading (health's storage evidence, src/files/storage-metrics.ts `ReserveReading`): one statfs for
// every health attempt (`readFreeSpace`), every walk and every claim, the newest kept.
//
// The claims: an upload (and later an incoming copy) claims its bytes before writing; the claim is admitted only if
// free space − bytes already claimed − this request ≥ the reserve. Free space is read fresh (one statfs, cheap) at
// claim time rather than taken from the last scan: between two scans other uploads may have filled the disk.
// Claims live in this actor's memory only: a restart of the actor forgets them, which can only admit more than
// it should for the requests already in flight at that moment (their handles then release nothing here).

import { join } from 'node:path';
import { fromCallback } from 'xstate';
import type { CronSchedule } from '../../src/cron.js';
import { InsufficientStorageError } from '../../src/files/errors.js';
import { STAGED_SESSION_PREFIX } from '../../src/files/wire.js';
import { IDLE_REPAIR_JOB, type RepairJobStatus } from '../../src/files/repair.js';
import { claimFits, reclaimableBytes, type DiskMeasurement, type ReserveReading } from '../../src/files/storage-metrics.js';
import type { GcStatus } from '../../src/files/types.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import { directoryBytes, freeBytes } from '../../storage/files/disk-usage.js';
import type { Clock } from '../../src/clock.js';
import { setTimerAt } from '../clock-at.js';
import type { RegistryFigures } from './node.js';
import { refuseUnknownMessage } from '../ask.js';

/**
 * What `disk.snapshot` answers: the last scan (null until the first has finished), the newest free-space reading
 * (null until the first), and the collector's state now.
 */
export interface DiskSnapshot {
  readonly measurement: DiskMeasurement | null;
  readonly reserve: ReserveReading | null;
  readonly gc: GcStatus;
  /** The repair job now (storage metrics `replication.running` and `replication.cycle`). */
  readonly replication: RepairJobStatus;
  /** Bytes claimed by requests in flight. */
  readonly claimedBytes: number;
}

/** An admitted claim; `release()` at request end, any number of times. */
export interface DiskClaim {
  release(): void;
}

export type DiskEvent =
  /**
   * The cached readings at once; with `readFreeSpace`, after a fresh free-space reading (one statfs): a health
   * attempt judges the reserve as it is now, whatever the scan's schedule, and never waits for a folder walk.
   */
  | { type: 'disk.snapshot'; readFreeSpace?: boolean; reply: Reply<DiskSnapshot> }
  | { type: 'disk.rescan' }
  | { type: 'disk.claim'; bytes: number; reply: Reply<DiskClaim> };

/** The filesystem readings, injectable so the claim arithmetic can be tested against exact numbers. */
export interface DiskProbe {
  directoryBytes(dir: string, signal: AbortSignal): Promise<number>;
  freeBytes(dir: string): Promise<number>;
}

export const fsDiskProbe: DiskProbe = { directoryBytes, freeBytes };

export interface DiskOptions {
  /** `<home>/<storeFolder>`. */
  readonly storeDirectory: string;
  /** `diskUsageScanPeriod` (parsed with the configuration). */
  readonly schedule: CronSchedule;
  /** `storage.diskReserveBytes`. */
  readonly diskReserveBytes: number;
  /** The registry's figures of the running node, read at each measurement. */
  readonly figures: () => RegistryFigures;
  /** The collector's job state (its board, written by the GC actor), read at each answer. */
  readonly gcStatus: () => GcStatus;
  /** The repair job's board; absent: no repair job (idle, no cycle). */
  readonly repairStatus?: () => RepairJobStatus;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly probe?: DiskProbe;
}

export function diskLogic(options: DiskOptions) {
  const { clock, logger, figures } = options;
  const probe = options.probe ?? fsDiskProbe;
  const blockstoreDir = join(options.storeDirectory, 'blockstore');
  const datastoreDir = join(options.storeDirectory, 'datastore');

  return fromCallback<DiskEvent>(({ receive }) => {
    const { schedule } = options;

    let measurement: DiskMeasurement | null = null;
    let reserve: ReserveReading | null = null;
    let claimedBytes = 0;
    let walking = false;
    let again = false;
    /** A scheduled walk does not start before this time: the last walk's duration after its end. */
    let restUntil = 0;
    let stopped = false;
    let cancelTimer: (() => void) | undefined;
    const controller = new AbortController();

    /** Keeps the newest free-space reading (a claim's statfs and a health attempt's may finish in either order). */
    const noteReserve = (availableBytes: number, measuredAt: number) => {
      if (reserve === null || measuredAt >= reserve.measuredAt) reserve = { measuredAt, availableBytes };
    };

    const readReserve = async (): Promise<number> => {
      const availableBytes = await probe.freeBytes(blockstoreDir);
      noteReserve(availableBytes, clock.now());
      return availableBytes;
    };

    const measure = async (): Promise<DiskMeasurement> => {
      const [blockstoreBytes, datastoreBytes, availableBytes] = await Promise.all([
        probe.directoryBytes(blockstoreDir, controller.signal),
        probe.directoryBytes(datastoreDir, controller.signal),
        readReserve(),
      ]);
      // Read after the walk: the registry is a few indexed queries, and `measuredAt` must not predate any reading.
      const registry = figures();
      const pinnedBytes = registry.pinnedBytes();
      const files = registry.counts();
      const stagedReplicas = registry.intents().filter((intent) => intent.sessionId.startsWith(STAGED_SESSION_PREFIX)).length;
      return {
        measuredAt: clock.now(),
        blockstoreBytes,
        datastoreBytes,
        availableBytes,
        pinnedBytes,
        reclaimableBytes: reclaimableBytes(blockstoreBytes, pinnedBytes),
        files,
        stagedReplicas,
      };
    };

    const walk = () => {
      walking = true;
      again = false;
      const startedAt = clock.now();
      measure().then(
        (result) => {
          measurement = result;
        },
        (error: unknown) => {
          // The previous measurement stays; it ages (storage metrics show its `measuredAt`).
          if (!stopped) logger.warn({ err: error }, 'disk-usage scan failed');
        },
      ).finally(() => {
        walking = false;
        if (stopped) return;
        const endedAt = clock.now();
        const durationMs = endedAt - startedAt;
        restUntil = endedAt + durationMs;
        const nextTick = schedule.next(endedAt);
        if (durationMs > schedule.next(nextTick) - nextTick) logger.info({ durationMs }, 'disk-usage scan outlasted its period; the next scheduled one waits as long as this one took');
        if (again) walk();
      });
    };

    // A tick starts a walk unless one runs or the last one's rest has not passed: like the original's `started`
    // flag, a tick never queues behind a running walk, and a walk longer than its period (a million files) keeps the
    // walker thread busy at most half of the time.
    const tick = () => {
      if (stopped) return;
      if (!walking && clock.now() >= restUntil) walk();
      cancelTimer = setTimerAt(clock, schedule.next(clock.now()), tick);
    };

    /** `disk.rescan`: fresh numbers now (after a collection), or right after the walk that runs. */
    const rescan = () => {
      if (stopped) return;
      if (walking) again = true;
      else walk();
    };

    const claim = async (bytes: number, reply: Reply<DiskClaim>): Promise<DiskClaim> => {
      if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`disk.claim: bytes must be a finite number >= 0, got ${bytes}`);
      const free = await probe.freeBytes(blockstoreDir);
      noteReserve(free, clock.now());
      // The asker gave up while statfs ran: admitting now would leave a claim nobody releases.
      reply.signal.throwIfAborted();
      // Check and book in the same turn of the event loop, so two claims can never both see the same headroom.
      if (!claimFits(free, claimedBytes, bytes, options.diskReserveBytes)) throw new InsufficientStorageError();
      claimedBytes += bytes;
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          claimedBytes -= bytes;
        },
      };
    };

    receive((event) => {
      switch (event.type) {
        case 'disk.snapshot': {
          const answer = () =>
            event.reply.resolve({ measurement, reserve, gc: options.gcStatus(), replication: options.repairStatus?.() ?? IDLE_REPAIR_JOB, claimedBytes });
          if (event.readFreeSpace !== true) return answer();
          // A failed statfs leaves the last reading, which ages (health's `storageFresh` turns false).
          return void readReserve().then(answer, (error: unknown) => {
            if (!stopped) logger.warn({ err: error }, 'free-space reading failed');
            answer();
          });
        }
        case 'disk.rescan':
          return rescan();
        case 'disk.claim':
          return void claim(event.bytes, event.reply).then(event.reply.resolve, (error: unknown) => event.reply.reject(error as Error));
        default:
          return refuseUnknownMessage(event);
      }
    });

    tick();
    return () => {
      stopped = true;
      cancelTimer?.();
      controller.abort();
    };
  });
}
