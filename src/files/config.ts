// The files service's configuration: the original ipfs-node `config.json5` format (notes/files-node.md B.6)
// plus the spec-era keys (specs/files-node.md §5, §8; notes A.9, A.10, C-table). Validated once, every
// problem reported at once as `path: message` lines, then normalized (defaults filled) and frozen.
//
// Unlike the rates service, UNKNOWN KEYS ARE IGNORED (spec §8: "Unknown configuration keys are ignored"), so a
// file can keep keys of past releases. Legacy keys that an operator may expect to still work
// (`autoPeeringPeriod`, `cors.origin`, `cors.originRegexps`, `cors.credentials`) are ignored with a warning.
//
// Decisions where the spec and notes leave room (each next to its rule below):
// - Required, as in the later upstream documentation (C-table): `maxFileCount`, `uploadLimitSizeBytes`,
//   `findFileTimeout` and `cors.allowedOrigins`. Everything else has a default.
// - `cors.allowedOrigins` entries: exact origins (`https://app.example.org`), any-depth subdomain wildcards
//   (`https://*.example.org`), or `'*'` alone meaning every origin, which is what the original's
//   `cors.origin: '*'` did; the admin key travels in a header, never a cookie, and credentials stay disabled.
// - `trustProxy` takes `false`, one address or CIDR, or a non-empty array of them (spec §5); `true`, a hop
//   count, names like `loopback`, and any range that covers every address (`*`, `0.0.0.0/0`, `::/0`, any /0)
//   are refused. It is normalized to a list (`[]` = trust no proxy).
// - `nodes` defaults to `[]` (a standalone node); `serverPort` defaults to 4000 and may be 0 (an ephemeral
//   port, for tests).
// - `storeFolder` must be relative: the store lives in `<home>/<storeFolder>` (B.7).

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { trustEntryProblem } from './client-address.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { base32 } from 'multiformats/bases/base32';
import { base36 } from 'multiformats/bases/base36';
import Type, { type Static } from 'typebox';
import { deepFreeze, httpEngineProblem, schemaProblems, type HttpEngineName } from '../config.js';
import { isCronError, parseCron } from '../cron.js';

// ---------------------------------------------------------------------------------------------
// Version

/** Used only when package.json cannot be found next to the compiled code (it always ships with it). */
const FALLBACK_VERSION = '0.1.0';

/**
 * The software version reported in health, info and details (spec §9.1): the package version, read once from
 * the nearest `package.json` named `adm-infra` above this file (works from `dist/` and any other outDir).
 */
function readPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 8; level++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'adm-infra' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return FALLBACK_VERSION;
}

export const FILES_VERSION: string = readPackageVersion();

// ---------------------------------------------------------------------------------------------
// Defaults (notes C-table, from the later upstream documentation; B.6 for the original keys)

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
 * Placeholders shipped in upstream templates and docs (notes A.10); compared case-insensitively after
 * trimming. A copied template must fail at startup instead of protecting the admin routes with a public text.
 */
const PLACEHOLDER_KEYS = new Set(
  ['change-me-use-openssl-rand-hex-32', 'replace-with-output-of-openssl-rand-hex-32', 'your-generated-key-here'].map((key) => key.toLowerCase()),
);
export const ADMIN_KEY_MIN_LENGTH = 32;
/** A "unique secret" (spec §5.4) is random: 32 characters drawn from fewer than 8 symbols are not. */
const ADMIN_KEY_MIN_DISTINCT = 8;

// ---------------------------------------------------------------------------------------------
// Schema of the file format: types and numeric bounds only. Objects stay open (unknown keys ignored);
// required keys, enums, cron expressions, multiaddrs and cross-field rules are checked afterwards with
// messages that name the field.

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

// ---------------------------------------------------------------------------------------------
// Normalized configuration

export interface FilesNode {
  readonly name: string;
  readonly multiAddr: string;
  /** The peer id of the last `/p2p/` component, in its canonical (base58btc) text form. */
  readonly peerId: string;
}

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
  /** Cron (6 fields with seconds, or 5). */
  readonly peeringSchedule: string;
  readonly diskUsageScanPeriod: string;
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
      readonly schedule: string;
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
    readonly repairSchedule: string;
    readonly repairBatchDelayMs: number;
    readonly repairProbeConcurrency: number;
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

// ---------------------------------------------------------------------------------------------
// Defensive accessors: the checks below run even when the schema failed, so that every problem is reported
// at once; a value of the wrong type counts as absent (its type problem is already reported).

type Loose = Record<string, unknown>;
const isRecord = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);
const recordAt = (value: unknown): Loose => (isRecord(value) ? value : {});
const intAt = (value: unknown): number | undefined => (Number.isSafeInteger(value) ? (value as number) : undefined);
const boolAt = (value: unknown): boolean | undefined => (typeof value === 'boolean' ? value : undefined);
const textAt = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const stringsAt = (value: unknown): string[] | undefined =>
  Array.isArray(value) && value.every((entry) => typeof entry === 'string' && entry !== '') ? (value as string[]) : undefined;

/** `(default N)` when the value was not written in the file: tells the operator which side to change. */
const shown = (value: number, explicit: boolean): string => (explicit ? String(value) : `${value}, the default`);

// ---------------------------------------------------------------------------------------------
// Multiaddrs and peer ids (notes B.4)

/**
 * CIDv1 peer ids (`bafz…`, `k51…`). @libp2p/peer-id types its parameter against its own multiformats copy;
 * a decoder only needs `decode(text)`, so the cast is structural.
 */
const PEER_ID_DECODER = base32.decoder.or(base36.decoder) as unknown as Parameters<typeof peerIdFromString>[1];

/** Canonical text of a peer id, or undefined when `text` is not one. */
export function canonicalPeerId(text: string): string | undefined {
  try {
    const first = text[0];
    return peerIdFromString(text, first === '1' || first === 'Q' ? undefined : PEER_ID_DECODER).toString();
  } catch {
    return undefined;
  }
}

function multiaddrProblem(text: string): string | undefined {
  try {
    multiaddr(text);
    return undefined;
  } catch (error) {
    return `is not a valid multiaddr (${(error as Error).message})`;
  }
}

/**
 * The peer id a node entry names: the value of its LAST `/p2p/` component (so `/p2p-circuit` relay addresses
 * resolve to the target), which must also be the final component: "a full multiaddr ending in a peer-id
 * component" (spec §8). A bare `/p2p/<id>` is not full: it cannot be dialled without peer routing, which
 * this node does not have.
 */
export function peerIdOfNodeMultiaddr(text: string): { peerId: string } | { error: string } {
  let components: ReturnType<ReturnType<typeof multiaddr>['getComponents']>;
  try {
    components = multiaddr(text).getComponents();
  } catch (error) {
    return { error: `is not a valid multiaddr (${(error as Error).message})` };
  }
  const last = components[components.length - 1];
  if (last === undefined || last.name !== 'p2p' || last.value === undefined) {
    return { error: 'must be a full multiaddr ending in /p2p/<peer id>, e.g. /ip4/203.0.113.5/tcp/4001/p2p/12D3KooW…' };
  }
  if (components.length < 2) {
    return { error: 'must be a full multiaddr: a dialable address before /p2p/<peer id>, e.g. /ip4/203.0.113.5/tcp/4001/p2p/12D3KooW…' };
  }
  const peerId = canonicalPeerId(last.value);
  if (peerId === undefined) return { error: 'ends in /p2p/ with a value that is not a valid peer id' };
  return { peerId };
}

// ---------------------------------------------------------------------------------------------
// CORS origins and proxy addresses

const MAX_ORIGIN_LENGTH = 255;
const ORIGIN_RULE =
  "must be an exact origin such as 'https://app.example.org', a subdomain wildcard such as 'https://*.example.org', or '*' alone for every origin";

function originProblem(entry: string): string | undefined {
  if (entry.length > MAX_ORIGIN_LENGTH) return `must be at most ${MAX_ORIGIN_LENGTH} characters`;
  const wildcard = /^(https?):\/\/\*\.([^/:?#]+)(?::(\d{1,5}))?$/.exec(entry);
  if (wildcard) {
    const [, scheme, suffix, port] = wildcard as unknown as [string, string, string, string | undefined];
    if (!suffix.includes('.') || suffix.startsWith('.') || suffix.endsWith('.') || suffix.includes('..') || suffix.length > 253) {
      return `'*.${suffix}' needs a registrable suffix such as '*.example.org'`;
    }
    if (port !== undefined && Number(port) > 65535) return 'has a port above 65535';
    try {
      const probe = new URL(`${scheme}://x.${suffix}${port === undefined ? '' : `:${port}`}`);
      if (probe.hostname !== `x.${suffix}`) return ORIGIN_RULE + ' (lowercase, without a path)';
    } catch {
      return ORIGIN_RULE;
    }
    return undefined;
  }
  if (entry.includes('*')) return ORIGIN_RULE;
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return ORIGIN_RULE;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${ORIGIN_RULE} (http or https)`;
  // An origin is scheme://host[:port] exactly: no path, query, fragment, credentials or trailing slash.
  if (url.origin !== entry) return `${ORIGIN_RULE}; write it as '${url.origin}' (no path, trailing slash, default port or uppercase)`;
  return undefined;
}

function checkAllowedOrigins(cors: unknown, problems: string[], warnings: string[]): string[] | undefined {
  const block = recordAt(cors);
  for (const legacy of ['origin', 'originRegexps', 'credentials'] as const) {
    if (block[legacy] !== undefined) warnings.push(`cors.${legacy}: ignored (legacy key); cors.allowedOrigins lists the accepted origins`);
  }
  const value = block.allowedOrigins;
  if (value === undefined) {
    problems.push(
      "cors.allowedOrigins: required: a non-empty array of browser origins, e.g. ['https://app.example.org', 'https://*.example.org'], or ['*'] for every origin",
    );
    return undefined;
  }
  if (!Array.isArray(value) || value.length === 0) {
    problems.push('cors.allowedOrigins: must be a non-empty array of origins');
    return undefined;
  }
  let valid = true;
  value.forEach((entry, index) => {
    const path = `cors.allowedOrigins[${index}]`;
    if (typeof entry !== 'string' || entry === '') {
      problems.push(`${path}: must be a non-empty string`);
      valid = false;
    } else if (entry === '*') {
      if (value.length > 1) {
        problems.push(`${path}: '*' (every origin) must be the only entry`);
        valid = false;
      }
    } else {
      const problem = originProblem(entry);
      if (problem !== undefined) {
        problems.push(`${path}: ${problem}`);
        valid = false;
      }
    }
  });
  return valid ? [...new Set(value as string[])] : undefined;
}

function proxyEntryProblem(entry: string): string | undefined {
  if (entry === '') return 'must not be empty';
  if (entry.trim() !== entry) return 'must not have surrounding whitespace';
  if (entry.includes(',')) return 'one address or range per entry (use an array, not a comma-separated string)';
  if (entry === '*') return "'*' would trust every forwarded address; list the exact proxy addresses";
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return 'must be an IP address or CIDR range of the proxy (names such as loopback are not accepted)';
  if (slash === -1) return undefined;
  const prefix = entry.slice(slash + 1);
  const maxPrefix = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > maxPrefix) return `has an invalid prefix length (0-${maxPrefix})`;
  if (Number(prefix) === 0) return `'${entry}' covers every address and would trust every forwarded address; list the exact proxy addresses`;
  // The matcher's own reading (e.g. `::ffff:0:0/96` is every IPv4 address): what it refuses is refused here.
  const matcherProblem = trustEntryProblem(entry);
  return matcherProblem === undefined ? undefined : `'${entry}' ${matcherProblem}`;
}

function checkTrustProxy(value: unknown, problems: string[]): string[] | undefined {
  if (value === undefined || value === false) return [];
  if (value === true) {
    problems.push('trustProxy: true is rejected: it would trust every forwarded address; list the exact proxy addresses or CIDR ranges');
    return undefined;
  }
  if (typeof value === 'number') {
    problems.push('trustProxy: a hop count is not accepted; list the exact proxy addresses or CIDR ranges');
    return undefined;
  }
  if (typeof value === 'string') {
    const problem = proxyEntryProblem(value);
    if (problem !== undefined) {
      problems.push(`trustProxy: ${problem}`);
      return undefined;
    }
    return [value];
  }
  if (Array.isArray(value) && value.length > 0) {
    let valid = true;
    value.forEach((entry, index) => {
      const problem = typeof entry === 'string' ? proxyEntryProblem(entry) : 'must be a string';
      if (problem !== undefined) {
        problems.push(`trustProxy[${index}]: ${problem}`);
        valid = false;
      }
    });
    return valid ? [...new Set(value as string[])] : undefined;
  }
  problems.push('trustProxy: must be false, a proxy address or CIDR range, or a non-empty array of them');
  return undefined;
}

function checkAdminApiKey(value: unknown, problems: string[]): void {
  // Messages never echo the key.
  if (typeof value !== 'string' || value === '') return;
  if (PLACEHOLDER_KEYS.has(value.trim().toLowerCase())) {
    problems.push('adminApiKey: is a documentation placeholder, not a secret; generate one with `openssl rand -hex 32` (or leave it empty)');
    return;
  }
  if (value.length < ADMIN_KEY_MIN_LENGTH) {
    problems.push(`adminApiKey: must be an empty value or a unique secret of at least ${ADMIN_KEY_MIN_LENGTH} characters`);
    return;
  }
  if (value.trim() !== value) {
    problems.push('adminApiKey: must not start or end with whitespace (HTTP trims header values, so it could never match)');
    return;
  }
  if (new Set(value).size < ADMIN_KEY_MIN_DISTINCT) {
    problems.push('adminApiKey: is not a unique secret (too few distinct characters); generate one with `openssl rand -hex 32`');
  }
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

function checkCron(path: string, value: unknown, problems: string[]): void {
  if (typeof value !== 'string' || value === '') return;
  const parsed = parseCron(value);
  if (isCronError(parsed)) problems.push(`${path}: invalid cron expression: ${parsed.error}`);
}

function checkNodes(value: unknown, problems: string[], warnings: string[]): FilesNode[] {
  const nodes: FilesNode[] = [];
  if (!Array.isArray(value)) return nodes;
  const byPeer = new Map<string, number>();
  const byName = new Map<string, number>();
  value.forEach((entry, index) => {
    if (!isRecord(entry)) return; // the schema reports it
    const path = `nodes[${index}]`;
    if (entry.name === undefined) problems.push(`${path}.name: required (a non-empty label used in logs)`);
    if (entry.multiAddr === undefined) problems.push(`${path}.multiAddr: required (a full multiaddr ending in /p2p/<peer id>)`);
    const name = textAt(entry.name);
    const address = textAt(entry.multiAddr);
    if (name !== undefined) {
      const earlier = byName.get(name);
      if (earlier !== undefined) warnings.push(`${path}.name: same name as nodes[${earlier}]; logs will not tell them apart`);
      else byName.set(name, index);
    }
    if (address === undefined) return;
    const resolved = peerIdOfNodeMultiaddr(address);
    if ('error' in resolved) {
      problems.push(`${path}.multiAddr: ${resolved.error}`);
      return;
    }
    const earlier = byPeer.get(resolved.peerId);
    if (earlier !== undefined) {
      problems.push(`${path}.multiAddr: resolves to the same peer id as nodes[${earlier}].multiAddr; each node may be listed once`);
      return;
    }
    byPeer.set(resolved.peerId, index);
    if (name !== undefined) nodes.push({ name, multiAddr: address, peerId: resolved.peerId });
  });
  return nodes;
}

function checkMultiaddrList(path: string, value: unknown, problems: string[]): void {
  if (!Array.isArray(value)) return;
  value.forEach((entry, index) => {
    if (typeof entry !== 'string' || entry === '') return; // the schema reports it
    const problem = multiaddrProblem(entry);
    if (problem !== undefined) problems.push(`${path}[${index}]: ${problem}`);
  });
}

function rateLimit(value: unknown, fallback: RateLimitPolicy): RateLimitPolicy {
  const block = recordAt(value);
  return { windowMs: intAt(block.windowMs) ?? fallback.windowMs, limit: intAt(block.limit) ?? fallback.limit };
}

function resolveDraft(raw: Loose, problems: string[], warnings: string[]): Draft {
  const D = FILES_DEFAULTS;

  // --- top level and the original keys
  const nodes = checkNodes(raw.nodes, problems, warnings);
  const nodeCount = Array.isArray(raw.nodes) ? raw.nodes.length : 0;

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
  checkCron('peeringSchedule', raw.peeringSchedule, problems);
  checkCron('diskUsageScanPeriod', raw.diskUsageScanPeriod, problems);

  // --- upload and download limits
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

  // --- access
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

  // --- storage
  const storageRaw = recordAt(raw.storage);
  const gcRaw = recordAt(storageRaw.gc);
  checkCron('storage.gc.schedule', gcRaw.schedule, problems);
  const maxRequestSizeBytes = intAt(storageRaw.maxRequestSizeBytes) ?? D.storage.maxRequestSizeBytes;
  if (uploadLimitSizeBytes !== undefined && maxRequestSizeBytes < uploadLimitSizeBytes) {
    problems.push(
      `storage.maxRequestSizeBytes: must be at least uploadLimitSizeBytes (${uploadLimitSizeBytes}), otherwise no file of the allowed size fits in a request (now ${shown(maxRequestSizeBytes, storageRaw.maxRequestSizeBytes !== undefined)})`,
    );
  }
  const maxConcurrentUploads = intAt(storageRaw.maxConcurrentUploads) ?? D.storage.maxConcurrentUploads;
  const maxConcurrentDownloads = intAt(storageRaw.maxConcurrentDownloads) ?? D.storage.maxConcurrentDownloads;
  const maxConcurrentDownloadsPerClient = intAt(storageRaw.maxConcurrentDownloadsPerClient) ?? D.storage.maxConcurrentDownloadsPerClient;
  if (maxConcurrentDownloadsPerClient > maxConcurrentDownloads) {
    problems.push(
      `storage.maxConcurrentDownloadsPerClient: must not exceed storage.maxConcurrentDownloads (${shown(maxConcurrentDownloads, storageRaw.maxConcurrentDownloads !== undefined)})`,
    );
  }
  const highWatermarkBytes = intAt(gcRaw.highWatermarkBytes) ?? D.storage.gc.highWatermarkBytes;
  const lowWatermarkBytes = intAt(gcRaw.lowWatermarkBytes) ?? D.storage.gc.lowWatermarkBytes;
  if (lowWatermarkBytes >= highWatermarkBytes) {
    problems.push(
      `storage.gc.lowWatermarkBytes: must be lower than storage.gc.highWatermarkBytes (low ${shown(lowWatermarkBytes, gcRaw.lowWatermarkBytes !== undefined)}, high ${shown(highWatermarkBytes, gcRaw.highWatermarkBytes !== undefined)})`,
    );
  }
  const confirmationRequired = boolAt(storageRaw.confirmationRequired) ?? D.storage.confirmationRequired;

  // --- replication
  const replicationRaw = recordAt(raw.replication);
  checkCron('replication.repairSchedule', replicationRaw.repairSchedule, problems);
  const placement: PlacementTier[] = Array.isArray(replicationRaw.placement)
    ? replicationRaw.placement.map((tier) => ({
        minAgeMs: intAt(recordAt(tier).minAgeMs) ?? D.tier.minAgeMs,
        copies: intAt(recordAt(tier).copies) ?? D.tier.copies,
      }))
    : D.replication.placement.map((tier) => ({ ...tier }));
  if (Array.isArray(replicationRaw.placement) && placement.length > 0) {
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
  const ackQuorum = intAt(replicationRaw.ackQuorum) ?? D.replication.ackQuorum;
  const freshCopies = placement[0]?.copies;
  if (freshCopies !== undefined && ackQuorum > freshCopies) {
    problems.push(`replication.ackQuorum: must not exceed the copies of the fresh tier, replication.placement[0].copies (${shown(freshCopies, Array.isArray(replicationRaw.placement))})`);
  }
  const requireQuorumOnUpload = boolAt(replicationRaw.requireQuorumOnUpload) ?? D.replication.requireQuorumOnUpload;
  if (requireQuorumOnUpload && ackQuorum < 2) {
    problems.push(`replication.requireQuorumOnUpload: needs replication.ackQuorum of at least 2, so a strict upload cannot succeed on the local copy alone (ackQuorum is ${shown(ackQuorum, replicationRaw.ackQuorum !== undefined)})`);
  }
  if (requireQuorumOnUpload && confirmationRequired) {
    problems.push('replication.requireQuorumOnUpload: cannot be true together with storage.confirmationRequired (temporary files are not placed before they are confirmed)');
  }

  // --- health
  const healthRaw = recordAt(raw.health);
  const checkpointIntervalMs = intAt(healthRaw.checkpointIntervalMs) ?? D.health.checkpointIntervalMs;
  const maxCheckpointAgeMs = intAt(healthRaw.maxCheckpointAgeMs) ?? checkpointIntervalMs * D.health.maxCheckpointAgeFactor;
  const storageMaxAgeMs = intAt(healthRaw.storageMaxAgeMs) ?? checkpointIntervalMs * D.health.storageMaxAgeFactor;
  const repairMaxAgeMs = intAt(healthRaw.repairMaxAgeMs) ?? Math.max(D.health.repairMaxAgeMs, checkpointIntervalMs);
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
    nodes,
    storeFolder,
    logLevel,
    prettyLogs: boolAt(raw.prettyLogs) ?? D.prettyLogs,
    peerDiscovery: {
      bootstrap: stringsAt(discovery.bootstrap) ?? [...D.bootstrap],
      listen: stringsAt(discovery.listen) ?? [...D.listen],
    },
    serverPort: intAt(raw.serverPort) ?? D.serverPort,
    peeringSchedule: textAt(raw.peeringSchedule) ?? D.peeringSchedule,
    diskUsageScanPeriod: textAt(raw.diskUsageScanPeriod) ?? D.diskUsageScanPeriod,
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
    ...(raw.httpEngine === undefined || httpEngineProblem('httpEngine', raw.httpEngine) ? {} : { httpEngine: raw.httpEngine as HttpEngineName }),
    cors: cors === undefined ? undefined : { allowedOrigins: cors },
    trustProxy,
    adminApiKey,
    enableDebugApi,
    rateLimits: {
      upload: rateLimit(limits.upload, D.rateLimits.upload),
      pin: rateLimit(limits.pin, D.rateLimits.pin),
      read: rateLimit(limits.read, D.rateLimits.read),
    },
    storage: {
      maxRequestSizeBytes,
      maxConcurrentUploads,
      maxConcurrentDownloads,
      maxConcurrentDownloadsPerClient,
      maxConcurrentIncomingCopies: incomingCopyLimit(maxConcurrentUploads),
      diskReserveBytes: intAt(storageRaw.diskReserveBytes) ?? D.storage.diskReserveBytes,
      confirmationRequired,
      temporaryTtlMs: intAt(storageRaw.temporaryTtlMs) ?? D.storage.temporaryTtlMs,
      gc: {
        enabled: boolAt(gcRaw.enabled) ?? D.storage.gc.enabled,
        schedule: textAt(gcRaw.schedule) ?? D.storage.gc.schedule,
        highWatermarkBytes,
        lowWatermarkBytes,
      },
    },
    replication: {
      enabled: boolAt(replicationRaw.enabled) ?? D.replication.enabled,
      placement,
      ackQuorum,
      requireQuorumOnUpload,
      requestTimeoutMs: intAt(replicationRaw.requestTimeoutMs) ?? D.replication.requestTimeoutMs,
      repairEnabled: boolAt(replicationRaw.repairEnabled) ?? D.replication.repairEnabled,
      repairSchedule: textAt(replicationRaw.repairSchedule) ?? D.replication.repairSchedule,
      repairBatchDelayMs: intAt(replicationRaw.repairBatchDelayMs) ?? D.replication.repairBatchDelayMs,
      repairProbeConcurrency: intAt(replicationRaw.repairProbeConcurrency) ?? D.replication.repairProbeConcurrency,
    },
    health: {
      checkpointIntervalMs,
      maxCheckpointAgeMs,
      storageMaxAgeMs,
      repairMaxAgeMs,
      clockSkewToleranceMs: intAt(healthRaw.clockSkewToleranceMs) ?? D.health.clockSkewToleranceMs,
      peerAttestationTimeoutMs: intAt(healthRaw.peerAttestationTimeoutMs) ?? D.health.peerAttestationTimeoutMs,
      requiredPeerCount,
    },
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

// ---------------------------------------------------------------------------------------------
// File location and the embedded default

/** The environment variable that selects the configuration file (notes B.6). */
export const FILES_CONFIG_ENV = 'IPFS_NODE_CONFIG';
export const FILES_DEFAULT_CONFIG_FILE = 'config.json5';

/** `test1` is a name (→ `config.test1.json5`); anything with a path separator or a JSON extension is a path. */
function isConfigName(value: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(value) && !/\.(json5?|jsonc)$/i.test(value);
}

/**
 * Which configuration file the files service reads (notes B.6, later upstream resolution): the `--config`
 * path; else `$IPFS_NODE_CONFIG`, where a name selects `config.<name>.json5` and a path is a path; else
 * `config.json5`. Relative paths resolve against `cwd`; the result is absolute.
 * (Upstream lets the variable win over its positional argument; here an explicit `--config` flag wins,
 * as flags do for every other service of this CLI.)
 */
export function resolveFilesConfigPath(argvConfig: string | undefined, env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  if (argvConfig !== undefined && argvConfig !== '') return resolve(cwd, argvConfig);
  const selected = env[FILES_CONFIG_ENV]?.trim();
  if (selected) return resolve(cwd, isConfigName(selected) ? `config.${selected}.json5` : selected);
  return resolve(cwd, FILES_DEFAULT_CONFIG_FILE);
}

/** `<home>/<storeFolder>`: blockstore, datastore and the registry live inside (notes B.7). */
export function storeDirectory(config: Pick<FilesConfig, 'storeFolder'>, home: string): string {
  return join(home, config.storeFolder);
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
