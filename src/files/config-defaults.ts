// The files service's defaults (docs/notes/files-node.md C-table, from the later upstream documentation; B.6 for the
// original keys) and the embedded configuration `adm-infra all` runs on.
//
// - `nodes` defaults to `[]` (a standalone node); `serverPort` defaults to 4000 and may be 0 (an ephemeral port,
//   for tests).

import { deepFreeze } from '../config.js';
import type { RawFilesConfig } from './config-schema.js';

export const FILES_LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type FilesLogLevel = (typeof FILES_LOG_LEVELS)[number];

/** Spec §8 names the limits; the numbers are the later upstream defaults (notes C11). */
export const FILES_DEFAULTS = deepFreeze({
  storeFolder: '.adm-ipfs',
  logLevel: 'info' as FilesLogLevel,
  prettyLogs: false,
  bootstrap: [] as string[],
  listen: ['/ip4/0.0.0.0/tcp/4001'],
  /** Notes C8: the original template's port. */
  serverPort: 4000,
  peeringSchedule: '*/30 * * * * *',
  diskUsageScanPeriod: '*/30 * * * * *',
  downloadMinBytesPerSecond: 32_768,
  /** The floor of the derived `downloadMaxDurationMs` default: 4 hours. */
  downloadMaxDurationFloorMs: 14_400_000,
  // Upload body deadlines (additive keys; issue 14): the original's node:http server allowed 300 s per request
  // (Node's `requestTimeout`) and had no idle limit; a stalled body is cut after 30 s, a trickled one below the floor.
  uploadIdleTimeout: 30_000,
  uploadMaxDurationMs: 300_000,
  uploadMinBytes: 1024,
  uploadMinBytesWindowMs: 20_000,
  trustProxy: false,
  adminApiKey: '',
  enableDebugApi: false,
  rateLimits: {
    upload: { windowMs: 900_000, limit: 10 },
    pin: { windowMs: 900_000, limit: 10 },
    read: { windowMs: 60_000, limit: 100 },
  },
  storage: {
    maxRequestSizeBytes: 536_870_912, // 512 MiB
    maxConcurrentUploads: 32,
    maxConcurrentDownloads: 64,
    maxConcurrentDownloadsPerClient: 8,
    diskReserveBytes: 5_368_709_120, // 5 GiB
    confirmationRequired: false,
    temporaryTtlMs: 86_400_000, // 24 h
    gc: {
      enabled: true,
      schedule: '0 */15 * * * *',
      highWatermarkBytes: 53_687_091_200, // 50 GiB
      lowWatermarkBytes: 42_949_672_960, // 40 GiB
    },
  },
  replication: {
    enabled: true,
    placement: [
      { minAgeMs: 0, copies: 4 },
      { minAgeMs: 15_552_000_000, copies: 3 }, // 180 days
      { minAgeMs: 31_536_000_000, copies: 2 }, // 365 days
    ],
    ackQuorum: 1,
    requireQuorumOnUpload: false,
    requestTimeoutMs: 30_000,
    repairEnabled: true,
    repairSchedule: '0 */30 * * * *',
    repairBatchDelayMs: 1_000,
    repairProbeConcurrency: 4,
    /** 24 h: a copy a peer confirmed is asked about again after 12–24 h (src/files/repair.ts copyDue). */
    repairRecheckMs: 86_400_000,
  },
  health: {
    checkpointIntervalMs: 60_000,
    /** × checkpointIntervalMs */
    maxCheckpointAgeFactor: 3,
    /** × checkpointIntervalMs */
    storageMaxAgeFactor: 2,
    repairMaxAgeMs: 3_600_000,
    clockSkewToleranceMs: 10_000,
    peerAttestationTimeoutMs: 5_000,
  },
  /** Placement tier fields left out of a tier (upstream defaults). */
  tier: { minAgeMs: 0, copies: 1 },
});

/** Incoming peer copies get a quarter of the upload slots (notes A.9: "¼ of maxConcurrentUploads upstream"). */
export function incomingCopyLimit(maxConcurrentUploads: number): number {
  return Math.max(1, Math.floor(maxConcurrentUploads / 4));
}

/**
 * The embedded default for `adm-infra all` / `adm-infra files` without a file: a standalone node that is
 * safe on a developer machine. libp2p listens on loopback on an ephemeral port (no peer can reach it, and
 * two instances do not collide); HTTP on 4000 (the original's port); admin routes fail closed (503) until a
 * key is configured; every browser origin may call the public API (the original's `cors.origin: '*'`); the
 * disk reserve is lowered to 512 MiB so a laptop with a few GiB free can still accept uploads.
 */
export const FILES_DEFAULT_CONFIG: RawFilesConfig = deepFreeze({
  nodes: [],
  storeFolder: FILES_DEFAULTS.storeFolder,
  logLevel: 'info',
  prettyLogs: false,
  peerDiscovery: { bootstrap: [], listen: ['/ip4/127.0.0.1/tcp/0'] },
  serverPort: FILES_DEFAULTS.serverPort,
  peeringSchedule: FILES_DEFAULTS.peeringSchedule,
  diskUsageScanPeriod: FILES_DEFAULTS.diskUsageScanPeriod,
  uploadLimitSizeBytes: 268_435_456,
  maxFileCount: 10,
  findFileTimeout: 20_000,
  cors: { allowedOrigins: ['*'] },
  trustProxy: false,
  adminApiKey: '',
  enableDebugApi: false,
  storage: { diskReserveBytes: 536_870_912 },
});
