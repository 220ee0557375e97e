// The schema of the files service's `config.json5` (docs/notes/files-node.md B.6; docs/specs/files-node.md §8): types and
// numeric bounds only. Objects stay open: UNKNOWN KEYS ARE IGNORED (spec §8: "Unknown configuration keys are
// ignored"), so a file can keep keys of past releases. Required keys, enums, cron expressions, multiaddrs and
// cross-field rules are checked afterwards (config.ts) with messages that name the field.

import { Type, type Static } from '../typebox.js';

const MAX = Number.MAX_SAFE_INTEGER;
const Int = (minimum: number, maximum = MAX) => Type.Optional(Type.Integer({ minimum, maximum }));
const Bool = () => Type.Optional(Type.Boolean());
const Text = () => Type.Optional(Type.String({ minLength: 1 }));
const Cron = () => Type.Optional(Type.String({ minLength: 1 }));
const RateLimitSchema = Type.Optional(Type.Object({ windowMs: Int(1), limit: Int(1) }));

export const FilesConfigSchema = Type.Object({
  nodes: Type.Optional(Type.Array(Type.Object({ name: Text(), multiAddr: Text() }))),
  storeFolder: Text(),
  logLevel: Type.Optional(Type.String()),
  prettyLogs: Bool(),
  peerDiscovery: Type.Optional(
    Type.Object({
      bootstrap: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
      listen: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    }),
  ),
  serverPort: Int(0, 65535),
  peeringSchedule: Cron(),
  /** Legacy (original `autoPeeringPeriod`, replaced by `peeringSchedule`): read only to warn. */
  autoPeeringPeriod: Type.Optional(Type.Unknown()),
  diskUsageScanPeriod: Cron(),
  uploadLimitSizeBytes: Int(1),
  maxFileCount: Int(1, 100),
  findFileTimeout: Int(1),
  downloadIdleTimeout: Int(1),
  downloadMinBytesPerSecond: Int(1),
  downloadMaxDurationMs: Int(1),
  uploadIdleTimeout: Int(1000),
  uploadMaxDurationMs: Int(1000),
  uploadMinBytes: Int(0),
  uploadMinBytesWindowMs: Int(1000),
  httpEngine: Type.Optional(Type.Unknown()),
  cors: Type.Optional(Type.Object({ allowedOrigins: Type.Optional(Type.Unknown()) })),
  trustProxy: Type.Optional(Type.Unknown()),
  adminApiKey: Type.Optional(Type.String()),
  enableDebugApi: Bool(),
  rateLimits: Type.Optional(Type.Object({ upload: RateLimitSchema, pin: RateLimitSchema, read: RateLimitSchema })),
  storage: Type.Optional(
    Type.Object({
      maxRequestSizeBytes: Int(1),
      maxConcurrentUploads: Int(1),
      maxConcurrentDownloads: Int(1),
      maxConcurrentDownloadsPerClient: Int(1),
      diskReserveBytes: Int(0),
      confirmationRequired: Bool(),
      temporaryTtlMs: Int(1),
      gc: Type.Optional(
        Type.Object({ enabled: Bool(), schedule: Cron(), highWatermarkBytes: Int(1), lowWatermarkBytes: Int(1) }),
      ),
    }),
  ),
  replication: Type.Optional(
    Type.Object({
      enabled: Bool(),
      placement: Type.Optional(Type.Array(Type.Object({ minAgeMs: Int(0), copies: Int(1) }), { minItems: 1 })),
      ackQuorum: Int(1),
      requireQuorumOnUpload: Bool(),
      requestTimeoutMs: Int(1),
      repairEnabled: Bool(),
      repairSchedule: Cron(),
      repairBatchDelayMs: Int(0),
      repairProbeConcurrency: Int(1),
      repairRecheckMs: Int(0),
    }),
  ),
  health: Type.Optional(
    Type.Object({
      // Spec §8: both at least 1000.
      checkpointIntervalMs: Int(1000),
      maxCheckpointAgeMs: Int(1000),
      storageMaxAgeMs: Int(1),
      repairMaxAgeMs: Int(1),
      clockSkewToleranceMs: Int(0),
      peerAttestationTimeoutMs: Int(1),
      requiredPeerCount: Int(0),
    }),
  ),
});

/** A configuration file as written by the operator (before defaults). */
export type RawFilesConfig = Static<typeof FilesConfigSchema>;
