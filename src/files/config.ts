// The files service's configuration: the original ipfs-node `config.json5` format (docs/notes/files-node.md B.6)
// plus the spec-era keys (docs/specs/files-node.md §5, §8; notes A.9, A.10, C-table). Validated once, every
// problem reported at once as `path: message` lines, then normalized (defaults filled) and frozen.
//
// This file holds the normalized shape and the resolution; each concern has its own file: the schema
// (config-schema.ts), the defaults (config-defaults.ts), nodes and multiaddrs (config-peers.ts), browser origins
// (config-cors.ts), trusted proxies (config-trust-proxy.ts), the admin key (config-admin-key.ts), and which file
// is read (config-file.ts).
//
// Unlike the rates service, UNKNOWN KEYS ARE IGNORED (spec §8), so a file can keep keys of past releases. Legacy
// keys that an operator may expect to still work (`autoPeeringPeriod`, `cors.origin`, `cors.originRegexps`,
// `cors.credentials`) are ignored with a warning.
//
// Decisions where the spec and notes leave room (each next to its rule below):
// - Required, as in the later upstream documentation (C-table): `maxFileCount`, `uploadLimitSizeBytes`,
//   `findFileTimeout` and `cors.allowedOrigins`. Everything else has a default.
// - `storeFolder` must be relative: the store lives in `<home>/<storeFolder>` (B.7).

import { isAbsolute, join } from 'node:path';
import { deepFreeze, httpEngineProblem, schemaProblems, type HttpEngineName } from '../config.js';
import { isCronError, parseCron, requireCron, type CronSchedule } from '../cron.js';
import { boolAt, intAt, isRecord, recordAt, stringsAt, textAt, type Loose } from './config-accessors.js';
import { checkAdminApiKey } from './config-admin-key.js';
import { checkAllowedOrigins } from './config-cors.js';
import { FILES_DEFAULTS, FILES_LOG_LEVELS, incomingCopyLimit, type FilesLogLevel } from './config-defaults.js';
import { checkMultiaddrList, checkNodes, type FilesNode } from './config-peers.js';
import { FilesConfigSchema } from './config-schema.js';
import { checkTrustProxy } from './config-trust-proxy.js';

// ---------------------------------------------------------------------------------------------
// Normalized configuration

export interface RateLimitPolicy {
  readonly windowMs: number;
  readonly limit: number;
}

export interface PlacementTier {
  readonly minAgeMs: number;
  readonly copies: number;
}

export interface FilesConfig {
  /** Every configured node (this node's own entry included; filter it out by peer id). */
  readonly nodes: readonly FilesNode[];
  readonly storeFolder: string;
  readonly logLevel: FilesLogLevel;
  readonly prettyLogs: boolean;
  readonly peerDiscovery: { readonly bootstrap: readonly string[]; readonly listen: readonly string[] };
  readonly serverPort: number;
  /** Cron (6 fields with seconds, or 5), parsed here once (src/cron.ts); prints as the expression. */
  readonly peeringSchedule: CronSchedule;
  readonly diskUsageScanPeriod: CronSchedule;
  readonly uploadLimitSizeBytes: number;
  readonly maxFileCount: number;
  readonly findFileTimeout: number;
  readonly downloadIdleTimeout: number;
  readonly downloadMinBytesPerSecond: number;
  readonly downloadMaxDurationMs: number;
  /** Upload body deadlines (additive keys): no byte for this long → 408. */
  readonly uploadIdleTimeout: number;
  /** The whole upload request must arrive within this. */
  readonly uploadMaxDurationMs: number;
  /** A body delivering fewer than `uploadMinBytes` in any `uploadMinBytesWindowMs` is cut with 408 (0 = no floor). */
  readonly uploadMinBytes: number;
  readonly uploadMinBytesWindowMs: number;
  /** The HTTP engine of this listener (additive key; default $ADM_HTTP_ENGINE, else uws; http/engine.ts). */
  readonly httpEngine?: HttpEngineName;
  /** `['*']` = every origin; otherwise exact origins and `scheme://*.suffix` wildcards. */
  readonly cors: { readonly allowedOrigins: readonly string[] };
  /** Trusted proxy addresses and CIDR ranges; empty = trust no proxy (the file said `false` or nothing). */
  readonly trustProxy: readonly string[];
  /** '' = administrative routes answer 503 (spec §5.3). */
  readonly adminApiKey: string;
  readonly enableDebugApi: boolean;
  readonly rateLimits: { readonly upload: RateLimitPolicy; readonly pin: RateLimitPolicy; readonly read: RateLimitPolicy };
  readonly storage: {
    readonly maxRequestSizeBytes: number;
    readonly maxConcurrentUploads: number;
    readonly maxConcurrentDownloads: number;
    readonly maxConcurrentDownloadsPerClient: number;
    /** Derived, not a key of the file: `incomingCopyLimit(maxConcurrentUploads)`. */
    readonly maxConcurrentIncomingCopies: number;
    readonly diskReserveBytes: number;
    readonly confirmationRequired: boolean;
    readonly temporaryTtlMs: number;
    readonly gc: {
      readonly enabled: boolean;
      readonly schedule: CronSchedule;
      readonly highWatermarkBytes: number;
      readonly lowWatermarkBytes: number;
    };
  };
  readonly replication: {
    readonly enabled: boolean;
    readonly placement: readonly PlacementTier[];
    readonly ackQuorum: number;
    readonly requireQuorumOnUpload: boolean;
    readonly requestTimeoutMs: number;
    readonly repairEnabled: boolean;
    readonly repairSchedule: CronSchedule;
    readonly repairBatchDelayMs: number;
    readonly repairProbeConcurrency: number;
    /** Not in the original's config: how long a peer's confirmed copy is trusted before repair asks again; 0 = every cycle. */
    readonly repairRecheckMs: number;
  };
  readonly health: {
    readonly checkpointIntervalMs: number;
    readonly maxCheckpointAgeMs: number;
    readonly storageMaxAgeMs: number;
    readonly repairMaxAgeMs: number;
    readonly clockSkewToleranceMs: number;
    readonly peerAttestationTimeoutMs: number;
    readonly requiredPeerCount: number;
  };
}

export type ParseFilesConfigResult =
  | { readonly ok: true; readonly config: FilesConfig; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly problems: readonly string[] };

/** `<home>/<storeFolder>`: blockstore, datastore and the registry live inside (notes B.7). */
export function storeDirectory(config: Pick<FilesConfig, 'storeFolder'>, home: string): string {
  return join(home, config.storeFolder);
}

// ---------------------------------------------------------------------------------------------
// Resolution: defaults filled from valid values, cross-field rules checked on the result.

/** The effective configuration, with `undefined` where a required key is missing or invalid. */
type Draft = Omit<FilesConfig, 'uploadLimitSizeBytes' | 'maxFileCount' | 'findFileTimeout' | 'downloadIdleTimeout' | 'downloadMaxDurationMs' | 'cors' | 'trustProxy'> & {
  uploadLimitSizeBytes: number | undefined;
  maxFileCount: number | undefined;
  findFileTimeout: number | undefined;
  downloadIdleTimeout: number | undefined;
  downloadMaxDurationMs: number | undefined;
  cors: { allowedOrigins: readonly string[] } | undefined;
  trustProxy: readonly string[] | undefined;
};

const REQUIRED_NUMBERS = {
  uploadLimitSizeBytes: 'required: the largest accepted file in bytes (the original template uses 268435456 = 256 MiB)',
  maxFileCount: 'required: files per upload request, 1-100 (the original template uses 10)',
  findFileTimeout: 'required: milliseconds to locate a file before a download answers 408 (the original template uses 20000)',
} as const;

/** `(default N)` when the value was not written in the file: tells the operator which side to change. */
const shown = (value: number, explicit: boolean): string => (explicit ? String(value) : `${value}, the default`);

/** A schedule key, parsed once here for the actors to run: the written expression, else the default (always valid). */
function cronAt(path: string, value: unknown, fallback: string, problems: string[]): CronSchedule {
  const written = textAt(value);
  if (written !== undefined) {
    const parsed = parseCron(written);
    if (!isCronError(parsed)) return parsed;
    problems.push(`${path}: invalid cron expression: ${parsed.error}`);
  }
  return requireCron(path, fallback);
}

function rateLimit(value: unknown, fallback: RateLimitPolicy): RateLimitPolicy {
  const block = recordAt(value);
  return { windowMs: intAt(block.windowMs) ?? fallback.windowMs, limit: intAt(block.limit) ?? fallback.limit };
}

/**
 * Every section in document order, so problems and warnings keep the file's order; a section gets what it needs of
 * an earlier one where a rule spans both.
 */
function resolveDraft(raw: Loose, problems: string[], warnings: string[]): Draft {
  const topLevel = resolveTopLevel(raw, problems, warnings);
  const transfers = resolveTransferLimits(raw, problems);
  const access = resolveAccess(raw, problems, warnings);
  const storage = resolveStorage(recordAt(raw.storage), transfers.uploadLimitSizeBytes, problems);
  const replication = resolveReplication(recordAt(raw.replication), storage.confirmationRequired, problems);
  const nodeCount = Array.isArray(raw.nodes) ? raw.nodes.length : 0;
  const health = resolveHealth(recordAt(raw.health), nodeCount, problems);
  return { ...topLevel, ...transfers, ...access, storage, replication, health };
}

type TopLevel = Pick<Draft, 'nodes' | 'storeFolder' | 'logLevel' | 'prettyLogs' | 'peerDiscovery' | 'serverPort' | 'peeringSchedule' | 'diskUsageScanPeriod'>;

/** The original keys: the nodes, the store, logging, discovery, the port and the schedules. */
function resolveTopLevel(raw: Loose, problems: string[], warnings: string[]): TopLevel {
  const D = FILES_DEFAULTS;
  const nodes = checkNodes(raw.nodes, problems, warnings);

  const storeFolder = textAt(raw.storeFolder) ?? D.storeFolder;
  if (typeof raw.storeFolder === 'string' && isAbsolute(raw.storeFolder)) {
    problems.push('storeFolder: must be a folder relative to the home directory (the store lives in <home>/<storeFolder>; set HOME to move it)');
  }

  let logLevel: FilesLogLevel = D.logLevel;
  if (raw.logLevel !== undefined) {
    if ((FILES_LOG_LEVELS as readonly unknown[]).includes(raw.logLevel)) logLevel = raw.logLevel as FilesLogLevel;
    else if (typeof raw.logLevel === 'string') problems.push(`logLevel: must be one of ${FILES_LOG_LEVELS.join(', ')}`);
  }

  const discovery = recordAt(raw.peerDiscovery);
  checkMultiaddrList('peerDiscovery.bootstrap', discovery.bootstrap, problems);
  checkMultiaddrList('peerDiscovery.listen', discovery.listen, problems);

  if (raw.autoPeeringPeriod !== undefined) {
    warnings.push(`autoPeeringPeriod: ignored (legacy key); peeringSchedule (default '${D.peeringSchedule}') redials the configured nodes`);
  }
  const peeringSchedule = cronAt('peeringSchedule', raw.peeringSchedule, D.peeringSchedule, problems);
  const diskUsageScanPeriod = cronAt('diskUsageScanPeriod', raw.diskUsageScanPeriod, D.diskUsageScanPeriod, problems);

  return {
    nodes,
    storeFolder,
    logLevel,
    prettyLogs: boolAt(raw.prettyLogs) ?? D.prettyLogs,
    peerDiscovery: {
      bootstrap: stringsAt(discovery.bootstrap) ?? [...D.bootstrap],
      listen: stringsAt(discovery.listen) ?? [...D.listen],
    },
    serverPort: intAt(raw.serverPort) ?? D.serverPort,
    peeringSchedule,
    diskUsageScanPeriod,
  };
}

type TransferLimits = Pick<
  Draft,
  | 'uploadLimitSizeBytes'
  | 'maxFileCount'
  | 'findFileTimeout'
  | 'downloadIdleTimeout'
  | 'downloadMinBytesPerSecond'
  | 'downloadMaxDurationMs'
  | 'uploadIdleTimeout'
  | 'uploadMaxDurationMs'
  | 'uploadMinBytes'
  | 'uploadMinBytesWindowMs'
>;

/** Upload and download limits: the three required numbers and the deadlines derived from them. */
function resolveTransferLimits(raw: Loose, problems: string[]): TransferLimits {
  const D = FILES_DEFAULTS;
  for (const [key, message] of Object.entries(REQUIRED_NUMBERS)) {
    if (raw[key] === undefined) problems.push(`${key}: ${message}`);
  }
  const uploadLimitSizeBytes = intAt(raw.uploadLimitSizeBytes);
  const maxFileCount = intAt(raw.maxFileCount);
  const findFileTimeout = intAt(raw.findFileTimeout);
  const downloadIdleTimeout = intAt(raw.downloadIdleTimeout) ?? findFileTimeout;
  const downloadMinBytesPerSecond = intAt(raw.downloadMinBytesPerSecond) ?? D.downloadMinBytesPerSecond;
  // The size-aware deadline of the largest accepted file (notes A.3 "Deadlines").
  const sizeDerived =
    uploadLimitSizeBytes !== undefined && downloadIdleTimeout !== undefined
      ? Math.ceil(uploadLimitSizeBytes / downloadMinBytesPerSecond) * 1000 + downloadIdleTimeout
      : undefined;
  const explicitMaxDuration = intAt(raw.downloadMaxDurationMs);
  const downloadMaxDurationMs = explicitMaxDuration ?? (sizeDerived === undefined ? undefined : Math.max(D.downloadMaxDurationFloorMs, sizeDerived));
  if (explicitMaxDuration !== undefined && downloadIdleTimeout !== undefined && explicitMaxDuration < downloadIdleTimeout) {
    problems.push(`downloadMaxDurationMs: must be at least downloadIdleTimeout (${shown(downloadIdleTimeout, raw.downloadIdleTimeout !== undefined)})`);
  } else if (explicitMaxDuration !== undefined && sizeDerived !== undefined && explicitMaxDuration < sizeDerived) {
    problems.push(
      `downloadMaxDurationMs: must be at least ${sizeDerived} (ceil(uploadLimitSizeBytes / downloadMinBytesPerSecond) * 1000 + downloadIdleTimeout), so the largest accepted file is not cut off mid-stream`,
    );
  }
  return {
    uploadLimitSizeBytes,
    maxFileCount,
    findFileTimeout,
    downloadIdleTimeout,
    downloadMinBytesPerSecond,
    downloadMaxDurationMs,
    uploadIdleTimeout: intAt(raw.uploadIdleTimeout) ?? D.uploadIdleTimeout,
    uploadMaxDurationMs: intAt(raw.uploadMaxDurationMs) ?? D.uploadMaxDurationMs,
    uploadMinBytes: intAt(raw.uploadMinBytes) ?? D.uploadMinBytes,
    uploadMinBytesWindowMs: intAt(raw.uploadMinBytesWindowMs) ?? D.uploadMinBytesWindowMs,
  };
}

type Access = Pick<Draft, 'httpEngine' | 'cors' | 'trustProxy' | 'adminApiKey' | 'enableDebugApi' | 'rateLimits'>;

/** Who may call the node and how: the HTTP engine, browser origins, trusted proxies, the admin key, rate limits. */
function resolveAccess(raw: Loose, problems: string[], warnings: string[]): Access {
  const D = FILES_DEFAULTS;
  const engineProblem = httpEngineProblem('httpEngine', raw.httpEngine);
  if (engineProblem) problems.push(engineProblem);
  const cors = checkAllowedOrigins(raw.cors, problems, warnings);
  const trustProxy = checkTrustProxy(raw.trustProxy, problems);
  checkAdminApiKey(raw.adminApiKey, problems);
  const adminApiKey = typeof raw.adminApiKey === 'string' ? raw.adminApiKey : D.adminApiKey;
  const enableDebugApi = boolAt(raw.enableDebugApi) ?? D.enableDebugApi;
  if (enableDebugApi && adminApiKey === '') {
    warnings.push('enableDebugApi: the debug routes still need adminApiKey, which is empty: they will answer 503');
  }
  const limits = recordAt(raw.rateLimits);
  return {
    ...(raw.httpEngine === undefined || engineProblem ? {} : { httpEngine: raw.httpEngine as HttpEngineName }),
    cors: cors === undefined ? undefined : { allowedOrigins: cors },
    trustProxy,
    adminApiKey,
    enableDebugApi,
    rateLimits: {
      upload: rateLimit(limits.upload, D.rateLimits.upload),
      pin: rateLimit(limits.pin, D.rateLimits.pin),
      read: rateLimit(limits.read, D.rateLimits.read),
    },
  };
}

/** `storage`: request size, concurrency, the disk reserve, temporary files and the GC watermarks. */
function resolveStorage(storageRaw: Loose, uploadLimitSizeBytes: number | undefined, problems: string[]): FilesConfig['storage'] {
  const D = FILES_DEFAULTS.storage;
  const gcRaw = recordAt(storageRaw.gc);
  const gcSchedule = cronAt('storage.gc.schedule', gcRaw.schedule, D.gc.schedule, problems);
  const maxRequestSizeBytes = intAt(storageRaw.maxRequestSizeBytes) ?? D.maxRequestSizeBytes;
  if (uploadLimitSizeBytes !== undefined && maxRequestSizeBytes < uploadLimitSizeBytes) {
    problems.push(
      `storage.maxRequestSizeBytes: must be at least uploadLimitSizeBytes (${uploadLimitSizeBytes}), otherwise no file of the allowed size fits in a request (now ${shown(maxRequestSizeBytes, storageRaw.maxRequestSizeBytes !== undefined)})`,
    );
  }
  const maxConcurrentUploads = intAt(storageRaw.maxConcurrentUploads) ?? D.maxConcurrentUploads;
  const maxConcurrentDownloads = intAt(storageRaw.maxConcurrentDownloads) ?? D.maxConcurrentDownloads;
  const maxConcurrentDownloadsPerClient = intAt(storageRaw.maxConcurrentDownloadsPerClient) ?? D.maxConcurrentDownloadsPerClient;
  if (maxConcurrentDownloadsPerClient > maxConcurrentDownloads) {
    problems.push(
      `storage.maxConcurrentDownloadsPerClient: must not exceed storage.maxConcurrentDownloads (${shown(maxConcurrentDownloads, storageRaw.maxConcurrentDownloads !== undefined)})`,
    );
  }
  const highWatermarkBytes = intAt(gcRaw.highWatermarkBytes) ?? D.gc.highWatermarkBytes;
  const lowWatermarkBytes = intAt(gcRaw.lowWatermarkBytes) ?? D.gc.lowWatermarkBytes;
  if (lowWatermarkBytes >= highWatermarkBytes) {
    problems.push(
      `storage.gc.lowWatermarkBytes: must be lower than storage.gc.highWatermarkBytes (low ${shown(lowWatermarkBytes, gcRaw.lowWatermarkBytes !== undefined)}, high ${shown(highWatermarkBytes, gcRaw.highWatermarkBytes !== undefined)})`,
    );
  }
  return {
    maxRequestSizeBytes,
    maxConcurrentUploads,
    maxConcurrentDownloads,
    maxConcurrentDownloadsPerClient,
    maxConcurrentIncomingCopies: incomingCopyLimit(maxConcurrentUploads),
    diskReserveBytes: intAt(storageRaw.diskReserveBytes) ?? D.diskReserveBytes,
    confirmationRequired: boolAt(storageRaw.confirmationRequired) ?? D.confirmationRequired,
    temporaryTtlMs: intAt(storageRaw.temporaryTtlMs) ?? D.temporaryTtlMs,
    gc: {
      enabled: boolAt(gcRaw.enabled) ?? D.gc.enabled,
      schedule: gcSchedule,
      highWatermarkBytes,
      lowWatermarkBytes,
    },
  };
}

/** `replication.placement`: tiers filled from the defaults; written tiers start at age 0, age strictly, and shrink. */
function resolvePlacement(value: unknown, problems: string[]): PlacementTier[] {
  const D = FILES_DEFAULTS;
  if (!Array.isArray(value)) return D.replication.placement.map((tier) => ({ ...tier }));
  const placement = value.map((tier) => ({
    minAgeMs: intAt(recordAt(tier).minAgeMs) ?? D.tier.minAgeMs,
    copies: intAt(recordAt(tier).copies) ?? D.tier.copies,
  }));
  if (placement.length > 0) {
    if (placement[0]!.minAgeMs !== 0) problems.push('replication.placement[0].minAgeMs: must be 0, so every file matches a tier');
    for (let index = 1; index < placement.length; index++) {
      const tier = placement[index]!;
      const before = placement[index - 1]!;
      if (tier.minAgeMs <= before.minAgeMs) {
        problems.push(`replication.placement[${index}].minAgeMs: must be greater than replication.placement[${index - 1}].minAgeMs (${before.minAgeMs})`);
      }
      if (tier.copies > before.copies) {
        problems.push(`replication.placement[${index}].copies: must not exceed replication.placement[${index - 1}].copies (${before.copies}): copies shrink as a file ages`);
      }
    }
  }
  return placement;
}

/** `replication`: placement tiers, the upload quorum and repair. */
function resolveReplication(replicationRaw: Loose, confirmationRequired: boolean, problems: string[]): FilesConfig['replication'] {
  const D = FILES_DEFAULTS.replication;
  const repairSchedule = cronAt('replication.repairSchedule', replicationRaw.repairSchedule, D.repairSchedule, problems);
  const placement = resolvePlacement(replicationRaw.placement, problems);
  const ackQuorum = intAt(replicationRaw.ackQuorum) ?? D.ackQuorum;
  const freshCopies = placement[0]?.copies;
  if (freshCopies !== undefined && ackQuorum > freshCopies) {
    problems.push(`replication.ackQuorum: must not exceed the copies of the fresh tier, replication.placement[0].copies (${shown(freshCopies, Array.isArray(replicationRaw.placement))})`);
  }
  const requireQuorumOnUpload = boolAt(replicationRaw.requireQuorumOnUpload) ?? D.requireQuorumOnUpload;
  if (requireQuorumOnUpload && ackQuorum < 2) {
    problems.push(`replication.requireQuorumOnUpload: needs replication.ackQuorum of at least 2, so a strict upload cannot succeed on the local copy alone (ackQuorum is ${shown(ackQuorum, replicationRaw.ackQuorum !== undefined)})`);
  }
  if (requireQuorumOnUpload && confirmationRequired) {
    problems.push('replication.requireQuorumOnUpload: cannot be true together with storage.confirmationRequired (temporary files are not placed before they are confirmed)');
  }
  return {
    enabled: boolAt(replicationRaw.enabled) ?? D.enabled,
    placement,
    ackQuorum,
    requireQuorumOnUpload,
    requestTimeoutMs: intAt(replicationRaw.requestTimeoutMs) ?? D.requestTimeoutMs,
    repairEnabled: boolAt(replicationRaw.repairEnabled) ?? D.repairEnabled,
    repairSchedule,
    repairBatchDelayMs: intAt(replicationRaw.repairBatchDelayMs) ?? D.repairBatchDelayMs,
    repairProbeConcurrency: intAt(replicationRaw.repairProbeConcurrency) ?? D.repairProbeConcurrency,
    repairRecheckMs: intAt(replicationRaw.repairRecheckMs) ?? D.repairRecheckMs,
  };
}

/** `health`: the checkpoint interval and the ages derived from it; `nodeCount` is every configured node. */
function resolveHealth(healthRaw: Loose, nodeCount: number, problems: string[]): FilesConfig['health'] {
  const D = FILES_DEFAULTS.health;
  const checkpointIntervalMs = intAt(healthRaw.checkpointIntervalMs) ?? D.checkpointIntervalMs;
  const maxCheckpointAgeMs = intAt(healthRaw.maxCheckpointAgeMs) ?? checkpointIntervalMs * D.maxCheckpointAgeFactor;
  const storageMaxAgeMs = intAt(healthRaw.storageMaxAgeMs) ?? checkpointIntervalMs * D.storageMaxAgeFactor;
  const repairMaxAgeMs = intAt(healthRaw.repairMaxAgeMs) ?? Math.max(D.repairMaxAgeMs, checkpointIntervalMs);
  for (const [key, value] of [
    ['maxCheckpointAgeMs', maxCheckpointAgeMs],
    ['storageMaxAgeMs', storageMaxAgeMs],
    ['repairMaxAgeMs', repairMaxAgeMs],
  ] as const) {
    if (healthRaw[key] !== undefined && value < checkpointIntervalMs) {
      problems.push(`health.${key}: must be at least health.checkpointIntervalMs (${shown(checkpointIntervalMs, healthRaw.checkpointIntervalMs !== undefined)})`);
    }
  }
  const remotePeers = Math.max(0, nodeCount - 1);
  const requiredPeerCount = intAt(healthRaw.requiredPeerCount) ?? (nodeCount > 1 ? 1 : 0);
  if (requiredPeerCount > remotePeers) {
    problems.push(
      `health.requiredPeerCount: must not exceed the number of configured remote peers, nodes minus one (${remotePeers}${nodeCount === 0 ? ': no nodes are configured' : ''})`,
    );
  }
  return {
    checkpointIntervalMs,
    maxCheckpointAgeMs,
    storageMaxAgeMs,
    repairMaxAgeMs,
    clockSkewToleranceMs: intAt(healthRaw.clockSkewToleranceMs) ?? D.clockSkewToleranceMs,
    peerAttestationTimeoutMs: intAt(healthRaw.peerAttestationTimeoutMs) ?? D.peerAttestationTimeoutMs,
    requiredPeerCount,
  };
}
/**
 * Validates a parsed `config.json5` (schema + the rules of spec §8 and notes A.10) and normalizes it.
 * Problems are `path: message` lines, all of them at once; they never contain the admin key. The result is
 * deep-frozen. Unknown keys are ignored.
 */
export function parseFilesConfig(raw: unknown): ParseFilesConfigResult {
  const schemaLines = schemaProblems(FilesConfigSchema, raw);
  const warnings: string[] = [];
  if (!isRecord(raw)) return { ok: false, problems: schemaLines.length > 0 ? schemaLines : ['(root): must be an object'] };
  const ruleLines: string[] = [];
  const draft = resolveDraft(raw, ruleLines, warnings);
  // A field whose value already failed its own bounds gets no second, derived complaint.
  const fieldOf = (line: string): string => line.slice(0, line.indexOf(': '));
  const reported = new Set(schemaLines.map(fieldOf));
  const problems = [...new Set([...schemaLines, ...ruleLines.filter((line) => !reported.has(fieldOf(line)))])];
  if (problems.length > 0) return { ok: false, problems };
  // Every value checked above is defined once there are no problems.
  const config: FilesConfig = {
    ...draft,
    uploadLimitSizeBytes: draft.uploadLimitSizeBytes!,
    maxFileCount: draft.maxFileCount!,
    findFileTimeout: draft.findFileTimeout!,
    downloadIdleTimeout: draft.downloadIdleTimeout!,
    downloadMaxDurationMs: draft.downloadMaxDurationMs!,
    cors: draft.cors!,
    trustProxy: draft.trustProxy!,
  };
  return { ok: true, config: deepFreeze(config), warnings };
}
