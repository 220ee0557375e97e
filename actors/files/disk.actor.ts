// `files.disk`: the disk-usage scan and the disk claims (docs/specs/files-node.md §2.6, §4.2 507, §8
// `storage.diskReserveBytes`; docs/notes/files-node.md A.9 "Disk claim", B.5).
//
// The scan: once at start, then on `diskUsageScanPeriod` (cron with seconds), never two at once. It measures the
// blockstore and datastore folders, the free space of the blockstore's filesystem (not `/` as the original did),
// the pinned bytes and the file counts of the registry, and keeps the result with its time. Readers get the cached
// result at once (`disk.snapshot`): storage metrics "refresh on the disk-usage scan schedule, not per request", and
// a health read or an info request must never wait for a walk over a large blockstore. `disk.rescan` measures now
// (the collector sends it after a run, so metrics show the freed space without waiting for the schedule).
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
import { claimFits, reclaimableBytes, type DiskMeasurement } from '../../src/files/storage-metrics.js';
import type { GcStatus } from '../../src/files/types.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import { directoryBytes, freeBytes } from '../../storage/files/disk-usage.js';
import type { Clock } from '../../src/clock.js';
import { setTimerAt } from '../clock-at.js';
import type { RegistryFigures } from './node.js';
import { refuseUnknownMessage } from '../ask.js';

/** What `disk.snapshot` answers: the last scan (null until the first has finished) and the collector's state now. */
export interface DiskSnapshot {
  readonly measurement: DiskMeasurement | null;
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
   * The cached measurement at once; with `afterFirstScan`, a request made before the first scan has finished is
   * answered when it finishes (successfully or not), so a health attempt right after startup judges a real
   * measurement instead of failing `storageFresh` for a whole checkpoint interval.
   */
  | { type: 'disk.snapshot'; afterFirstScan?: boolean; reply: Reply<DiskSnapshot> }
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
    let firstScanDone = false;
    const awaitingFirstScan: Array<() => void> = [];
    let claimedBytes = 0;
    let scanning = false;
    let again = false;
    let stopped = false;
    let cancelTimer: (() => void) | undefined;
    let dueAt = 0;
    const controller = new AbortController();

    const measure = async (): Promise<DiskMeasurement> => {
      const [blockstoreBytes, datastoreBytes, availableBytes] = await Promise.all([
        probe.directoryBytes(blockstoreDir, controller.signal),
        probe.directoryBytes(datastoreDir, controller.signal),
        probe.freeBytes(blockstoreDir),
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

    const arm = () => {
      cancelTimer?.();
      if (stopped) return;
      const now = clock.now();
      if (dueAt <= now) dueAt = schedule.next(now);
      cancelTimer = setTimerAt(clock, dueAt, scan);
    };

    const scan = () => {
      if (stopped) return;
      if (scanning) {
        // Never overlapping: one more scan right after this one (a rescan asked for fresher numbers).
        again = true;
        return;
      }
      scanning = true;
      again = false;
      cancelTimer?.();
      measure().then(
        (result) => {
          measurement = result;
        },
        (error: unknown) => {
          // The previous measurement stays; it ages, and health's `storageFresh` turns false once it is too old.
          if (!stopped) logger.warn({ err: error }, 'disk-usage scan failed');
        },
      ).finally(() => {
        scanning = false;
        if (!firstScanDone) {
          firstScanDone = true;
          for (const answer of awaitingFirstScan.splice(0)) answer();
        }
        if (stopped) return;
        if (again) scan();
        else arm();
      });
    };

    const claim = async (bytes: number, reply: Reply<DiskClaim>): Promise<DiskClaim> => {
      if (!Number.isFinite(bytes) || bytes < 0) throw new RangeError(`disk.claim: bytes must be a finite number >= 0, got ${bytes}`);
      const free = await probe.freeBytes(blockstoreDir);
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
            event.reply.resolve({ measurement, gc: options.gcStatus(), replication: options.repairStatus?.() ?? IDLE_REPAIR_JOB, claimedBytes });
          // A waiting asker that gives up leaves a no-op behind: its reply settles only once.
          if (event.afterFirstScan === true && !firstScanDone) return void awaitingFirstScan.push(answer);
          return answer();
        }
        case 'disk.rescan':
          return scan();
        case 'disk.claim':
          return void claim(event.bytes, event.reply).then(event.reply.resolve, (error: unknown) => event.reply.reject(error as Error));
        default:
          return refuseUnknownMessage(event);
      }
    });

    scan();
    return () => {
      stopped = true;
      cancelTimer?.();
      controller.abort();
    };
  });
}
