// What the disk-usage scan measures and how the public routes show it (docs/specs/files-node.md §2.4, §2.5, §2.6;
// docs/notes/files-node.md B.5, C-shapes "Storage metrics", A.9 "Disk claim"). Pure: every time and every reading
// is a parameter; actors/files/disk.actor.ts measures, the routes shape.

import type { LifecycleCounts } from './lifecycle.js';
import { REPLICATION_PROTOCOL } from './wire.js';
import { IDLE_REPAIR_JOB, type RepairCycleView, type RepairJobStatus } from './repair.js';
import type { GcStatus } from './types.js';


/** Bytes per MB in the legacy info fields: the original divided by 1 048 576 (notes B.5). */
export const BYTES_PER_MB = 1_048_576;

/** One disk-usage scan (notes B.5), kept by the disk actor until the next one. */
export interface DiskMeasurement {
  /** Unix ms when the scan finished reading (the evidence's age for `storageFresh`). */
  readonly measuredAt: number;
  /** Sum of the file sizes under `<store>/blockstore`. */
  readonly blockstoreBytes: number;
  /** Sum of the file sizes under `<store>/datastore`. */
  readonly datastoreBytes: number;
  /** Free space of the blockstore's filesystem for this process (statfs `bavail × bsize`). */
  readonly availableBytes: number;
  /** Sum of the registered files' DAG sizes that this node pins (spec §2.6). */
  readonly pinnedBytes: number;
  /** Blockstore bytes no pin protects (spec §2.6), estimated as blockstore − pinned, never below 0. */
  readonly reclaimableBytes: number;
  /** Registry records per lifecycle state. */
  readonly files: LifecycleCounts;
  /** Pin-intent markers of in-flight strict uploads and of the staged copies peers asked for (spec §2.6). */
  readonly stagedReplicas: number;
}

/**
 * The health checkpoint's storage evidence (spec §2.3 `storage`, `storageFresh`, `storageReserve`): the free space of
 * the blockstore's filesystem and when it was read. It comes from `statfs`, read for every health attempt, every walk
 * and every disk claim, not from the folder walk: the walk's sizes decide no health check, and on a store of a
 * million files the walk alone takes most of a minute (README "Scale"), which must not hold `ready` back.
 */
export interface ReserveReading {
  readonly measuredAt: number;
  readonly availableBytes: number;
}

/** `reclaimableBytes` (spec §2.6): what collection could free. Pinned DAGs are counted by content size, so the
 * estimate can only err on the side of "less reclaimable" by the few bytes of dag-pb framing. */
export function reclaimableBytes(blockstoreBytes: number, pinnedBytes: number): number {
  return Math.max(0, blockstoreBytes - pinnedBytes);
}

/** `usableBytes` (notes C-shapes): what is left for uploads before the reserve. */
export function usableBytes(availableBytes: number, reservedBytes: number): number {
  return Math.max(0, availableBytes - reservedBytes);
}

/**
 * The disk-claim rule (notes A.9): a request is admitted only if the free space, less what requests already in
 * flight have claimed and less this request, still leaves the reserve. Exactly reaching the reserve is allowed
 * ("would consume" it is what spec §4.2 refuses).
 */
export function claimFits(freeBytes: number, claimedBytes: number, requestBytes: number, reserveBytes: number): boolean {
  return freeBytes - claimedBytes - requestBytes >= reserveBytes;
}

export interface StorageMetricsSettings {
  /** `storage.diskReserveBytes`. */
  readonly diskReserveBytes: number;
  readonly replication: { readonly enabled: boolean; readonly repairEnabled: boolean };
}

/** GET /api/storage/metrics (spec §2.6; notes C-shapes): counts and byte totals only. */
export interface StorageMetrics {
  readonly timestamp: number;
  /** null until the first scan has finished; the byte fields are then 0. */
  readonly measuredAt: number | null;
  readonly pinnedBytes: number;
  readonly reclaimableBytes: number;
  readonly availableBytes: number;
  readonly reservedBytes: number;
  readonly usableBytes: number;
  readonly files: LifecycleCounts;
  readonly stagedReplicas: number;
  readonly gc: GcStatus;
  readonly replication: {
    readonly enabled: boolean;
    readonly protocol: string;
    readonly repairEnabled: boolean;
    /** A repair pass or cycle is in progress. */
    readonly running: boolean;
    /** The active cycle, else the last completed one (counts, lastCompletedAt, lastCompletedSuccessfully, backlog); null before any. */
    readonly cycle: RepairCycleView | null;
  };
}

/**
 * The public storage metrics from the last scan (values refresh on the scan schedule, not per request, spec
 * §2.6), the collector's and the repair job's current state (`repair`, default: no repair job). No CID, filename or
 * peer identity can reach this object: it is built from counts only.
 */
export function storageMetrics(
  measurement: DiskMeasurement | null,
  gc: GcStatus,
  settings: StorageMetricsSettings,
  now: number,
  repair: RepairJobStatus = IDLE_REPAIR_JOB,
): StorageMetrics {
  const availableBytes = measurement?.availableBytes ?? 0;
  return {
    timestamp: now,
    measuredAt: measurement?.measuredAt ?? null,
    pinnedBytes: measurement?.pinnedBytes ?? 0,
    reclaimableBytes: measurement?.reclaimableBytes ?? 0,
    availableBytes,
    reservedBytes: settings.diskReserveBytes,
    usableBytes: usableBytes(availableBytes, settings.diskReserveBytes),
    files: measurement ? { ...measurement.files } : { temporary: 0, confirmed: 0, expired: 0 },
    stagedReplicas: measurement?.stagedReplicas ?? 0,
    gc: { ...gc, lastRun: gc.lastRun ? { ...gc.lastRun, errors: [...gc.lastRun.errors] } : null },
    replication: {
      enabled: settings.replication.enabled,
      protocol: REPLICATION_PROTOCOL,
      repairEnabled: settings.replication.repairEnabled,
      running: repair.running,
      cycle: repair.cycle ? { ...repair.cycle } : null,
    },
  };
}

/** The node as the p2p runtime reports it (libp2p status text, notes C16). */
export interface NodeIdentity {
  /** libp2p status: `starting`, `started`, `stopping` or `stopped` (`stopped` when no node runs). */
  readonly runtimeStatus: string;
  /** null when no node runs (the runtime is restarting or stopping). */
  readonly peerId: string | null;
  readonly multiAddresses: readonly string[];
}

/** GET /api/node/info (spec §2.4): no peer identity, no topology. */
export interface LegacyNodeInfo {
  readonly version: string;
  readonly timestamp: number;
  readonly runtimeStatus: string;
  /** The original's field name, kept for the legacy PWA and iOS clients (notes A.1, C16). */
  readonly heliaStatus: string;
  readonly blockstoreSizeMb: number;
  readonly datastoreSizeMb: number;
  readonly availableSizeInMb: number;
}

/**
 * The legacy info fields (notes B.5): the two sizes are fractional MB, the free space a whole number of MB
 * (the original divided BigInts). Before the first scan every size is 0.
 */
export function legacyNodeInfo(measurement: DiskMeasurement | null, runtimeStatus: string, version: string, now: number): LegacyNodeInfo {
  return {
    version,
    timestamp: now,
    runtimeStatus,
    heliaStatus: runtimeStatus,
    blockstoreSizeMb: (measurement?.blockstoreBytes ?? 0) / BYTES_PER_MB,
    datastoreSizeMb: (measurement?.datastoreBytes ?? 0) / BYTES_PER_MB,
    availableSizeInMb: Math.floor((measurement?.availableBytes ?? 0) / BYTES_PER_MB),
  };
}
