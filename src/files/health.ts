// The health checkpoint, pure (docs/specs/files-node.md §2.3, §3.2; docs/notes/files-node.md A.6, C5, C17, C18, C19).
//
// Two moments, two functions:
// - `evaluateCheckpoint` is one checkpoint attempt: it decides every check at `now`, the state, and — only when
//   every prerequisite passes — the new persisted checkpoint (the only way to reach `ready`, spec §3.2).
// - `readHealth` is a read of `GET /api/node/health`: it recomputes the three freshness checks and the ages at the
//   read time and may only downgrade the evaluated state (ready → degraded, non-starting → stale). Recovery is never
//   decided on a read (spec §3.2).
//
// Nothing here reads a clock: every time is a parameter.

import { createHash } from 'node:crypto';

export type HealthState = 'starting' | 'ready' | 'stale' | 'degraded';

/** Check names, exactly and in the spec's order (spec §2.3). */
export const HEALTH_CHECK_NAMES = [
  'checkpointFresh',
  'clockConsistent',
  'runtime',
  'startupReconciliation',
  'storageFresh',
  'storageReserve',
  'repairFresh',
  'peerAttestations',
] as const;
export type HealthCheckName = (typeof HEALTH_CHECK_NAMES)[number];
export type HealthChecks = Record<HealthCheckName, boolean>;

/** The `health.*` configuration plus the disk reserve (spec §8; config validates the bounds). */
export interface HealthSettings {
  /** `health.checkpointIntervalMs` (>= 1000): the fixed round length and the attempt period. */
  readonly intervalMs: number;
  /** `health.maxCheckpointAgeMs` (>= 1000): older evidence is `stale` (exactly equal is still valid). */
  readonly maxCheckpointAgeMs: number;
  readonly storageMaxAgeMs: number;
  readonly repairMaxAgeMs: number;
  /** Peers that must attest the round; 0 → `peerAttestations` is always true (spec §2.3 rule 7). */
  readonly requiredPeerCount: number;
  /** `storage.diskReserveBytes`: `storageReserve` demands at least this much free space. */
  readonly diskReserveBytes: number;
}

/** The current persisted-checkpoint format. A different version is not read (docs/DESIGN.md rule 7). */
export const CHECKPOINT_VERSION = 1;

/** What survives a restart (one record in the store folder, spec §1 "health checkpoint"). */
export interface PersistedCheckpoint {
  readonly version: typeof CHECKPOINT_VERSION;
  /** `membership.version` the checkpoint was earned under; a different one discards it (spec §2.3 rule 6). */
  readonly membershipVersion: string;
  /** Unix ms at the start of the last valid fixed round (notes C18). */
  readonly height: number;
  /** Unix ms of the successful attempt. */
  readonly completedAt: number;
  readonly attestedPeers: number;
}

/** What the actor layer gathers for one attempt (the evidence other actors keep). */
export interface HealthInputs {
  readonly startup: { readonly complete: boolean; readonly healthy: boolean };
  /** The p2p runtime reports `started` (check `runtime`, notes C16). */
  readonly runtimeStarted: boolean;
  readonly storage: { readonly measuredAt: number | null; readonly availableBytes: number | null };
  readonly repair: {
    /** False when replication or repair is disabled (spec §2.3 rule 2). */
    readonly required: boolean;
    readonly lastCompleteAt: number | null;
    readonly backlog: number;
    readonly lastCycleSuccessful: boolean;
  };
  /** Peers that attested this round (0 when none are required: the calls are skipped). */
  readonly attestedPeers: number;
}

/** The evidence the read-time freshness checks are recomputed from (spec §2.3 rule 1). */
export interface FreshnessInputs {
  readonly storage: { readonly measuredAt: number | null };
  readonly repair: HealthInputs['repair'];
}

/** The result of one attempt: everything a read needs to produce the Health object. */
export interface HealthSnapshot {
  readonly state: HealthState;
  readonly height: number;
  /** When the attempt ran (it may have failed). */
  readonly evaluatedAt: number;
  /** The last successful attempt (or the restored checkpoint's), null when there never was one. */
  readonly observedAt: number | null;
  /** Every check as decided at `evaluatedAt`. */
  readonly checks: HealthChecks;
  readonly membership: { readonly version: string; readonly requiredPeers: number; readonly attestedPeers: number };
  readonly startup: { readonly complete: boolean; readonly healthy: boolean };
  readonly storage: { readonly measuredAt: number | null; readonly availableBytes: number | null; readonly reserveHealthy: boolean };
  readonly replication: {
    readonly repairRequired: boolean;
    readonly lastCompleteAt: number | null;
    readonly backlog: number;
    readonly lastCycleSuccessful: boolean;
  };
}

/** The body of `GET /api/node/health` (spec §2.3). */
export interface HealthObject {
  version: string;
  uptimeMs: number;
  state: HealthState;
  height: number;
  timestamp: number;
  evaluatedAt: number;
  checkpoint: { intervalMs: number; observedAt: number | null; ageMs: number | null; maxAgeMs: number };
  membership: { version: string; requiredPeers: number; attestedPeers: number };
  startup: { complete: boolean; healthy: boolean };
  storage: { measuredAt: number | null; measurementAgeMs: number | null; reserveHealthy: boolean };
  replication: { repairRequired: boolean; lastCompleteAt: number | null; ageMs: number | null; backlog: number };
  checks: HealthChecks;
}

/**
 * `membership.version`: sha256 hex of the configured peer ids (every `nodes` entry, this node included), sorted and
 * joined with `\n` (notes C17). Order-independent, so every node of one cluster computes the same digest.
 */
export function membershipVersion(peerIds: readonly string[]): string {
  const sorted = [...peerIds].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(sorted.join('\n'), 'utf8').digest('hex');
}

const MEMBERSHIP_VERSION = /^[a-f0-9]{64}$/;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * Reads a stored checkpoint record. Anything that is not a well-formed version-1 record is null: the node then
 * starts at height 0, exactly as after a membership change, instead of trusting evidence it cannot read.
 */
export function parseCheckpoint(raw: unknown): PersistedCheckpoint | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  if (r['version'] !== CHECKPOINT_VERSION) return null;
  if (typeof r['membershipVersion'] !== 'string' || !MEMBERSHIP_VERSION.test(r['membershipVersion'])) return null;
  if (!isCount(r['height']) || !isCount(r['completedAt']) || !isCount(r['attestedPeers'])) return null;
  return {
    version: CHECKPOINT_VERSION,
    membershipVersion: r['membershipVersion'],
    height: r['height'],
    completedAt: r['completedAt'],
    attestedPeers: r['attestedPeers'],
  };
}

/** The checkpoint if it was earned under `membership`, else null (spec §2.3 rule 6; notes A.6 "discarded at start"). */
export function adoptCheckpoint(checkpoint: PersistedCheckpoint | null, membership: string): PersistedCheckpoint | null {
  return checkpoint !== null && checkpoint.membershipVersion === membership ? checkpoint : null;
}

/** Start of the fixed round `now` falls in (notes C18). */
export function roundStart(now: number, intervalMs: number): number {
  return Math.floor(now / intervalMs) * intervalMs;
}

/** `now − at ≤ maxAge` with a known `at` (spec §3.2: exactly equal is still valid). */
const within = (at: number | null, now: number, maxAgeMs: number): boolean => at !== null && now - at <= maxAgeMs;
/** `now` is not behind `at` (a null `at` records nothing to be behind of). */
const notBehind = (at: number | null, now: number): boolean => at === null || now >= at;
const ageOf = (at: number | null, now: number): number | null => (at === null ? null : Math.max(0, now - at));

/** `repairFresh` (spec §2.3 rule 2): not required, or a complete healthy cycle, no backlog, within the max age. */
function repairFresh(repair: HealthInputs['repair'], clockConsistent: boolean, now: number, settings: HealthSettings): boolean {
  if (!repair.required) return true;
  return clockConsistent && within(repair.lastCompleteAt, now, settings.repairMaxAgeMs) && repair.backlog === 0 && repair.lastCycleSuccessful;
}

/** The state of an attempt that did not pass (notes A.6, C5, C19). */
function failedState(startupComplete: boolean, previous: PersistedCheckpoint | null, now: number, settings: HealthSettings): HealthState {
  if (!startupComplete) return 'starting';
  // Only an existing checkpoint can be expired: a node that never checkpointed is degraded, not stale (C19).
  if (previous !== null && now - previous.completedAt > settings.maxCheckpointAgeMs) return 'stale';
  return 'degraded';
}

/**
 * One checkpoint attempt at `now` (notes A.6, exact semantics).
 *
 * `previous` is the persisted checkpoint (discarded here when earned under another membership); `lastObservedAt` the
 * last successful attempt known to this process. When every prerequisite passes the state is `ready`, `height` is
 * `max(previous height, start of the current round)` and `persist` is the record to write; otherwise the height
 * freezes, `persist` is null, and the state is `starting` / `stale` / `degraded`.
 */
export function evaluateCheckpoint(
  previous: PersistedCheckpoint | null,
  lastObservedAt: number | null,
  inputs: HealthInputs,
  settings: HealthSettings,
  membership: string,
  now: number,
): { snapshot: HealthSnapshot; persist: PersistedCheckpoint | null } {
  const prior = adoptCheckpoint(previous, membership);
  // An observation made under a discarded membership proves nothing under this one.
  const observedBefore = prior === null && previous !== null ? null : lastObservedAt;

  // A clock behind any recorded instant stops advancement until it catches up (spec §2.3 rule 4).
  const clockConsistent =
    notBehind(prior?.completedAt ?? null, now) &&
    notBehind(observedBefore, now) &&
    notBehind(inputs.storage.measuredAt, now) &&
    notBehind(inputs.repair.lastCompleteAt, now);
  const storageFresh = clockConsistent && within(inputs.storage.measuredAt, now, settings.storageMaxAgeMs);
  const storageReserve = inputs.storage.availableBytes !== null && inputs.storage.availableBytes >= settings.diskReserveBytes;
  const prerequisites = {
    clockConsistent,
    runtime: inputs.runtimeStarted,
    startupReconciliation: inputs.startup.complete && inputs.startup.healthy,
    storageFresh,
    storageReserve,
    repairFresh: repairFresh(inputs.repair, clockConsistent, now, settings),
    peerAttestations: settings.requiredPeerCount === 0 || inputs.attestedPeers >= settings.requiredPeerCount,
  };
  const passed = Object.values(prerequisites).every(Boolean);

  const persist: PersistedCheckpoint | null = passed
    ? {
        version: CHECKPOINT_VERSION,
        membershipVersion: membership,
        height: Math.max(prior?.height ?? 0, roundStart(now, settings.intervalMs)),
        completedAt: now,
        attestedPeers: inputs.attestedPeers,
      }
    : null;
  const observedAt = passed ? now : observedBefore;

  const snapshot: HealthSnapshot = {
    state: passed ? 'ready' : failedState(inputs.startup.complete, prior, now, settings),
    height: persist?.height ?? prior?.height ?? 0,
    evaluatedAt: now,
    observedAt,
    checks: {
      checkpointFresh: within(observedAt, now, settings.maxCheckpointAgeMs),
      ...prerequisites,
    },
    membership: { version: membership, requiredPeers: settings.requiredPeerCount, attestedPeers: inputs.attestedPeers },
    startup: { complete: inputs.startup.complete, healthy: inputs.startup.healthy },
    storage: { measuredAt: inputs.storage.measuredAt, availableBytes: inputs.storage.availableBytes, reserveHealthy: storageReserve },
    replication: {
      repairRequired: inputs.repair.required,
      lastCompleteAt: inputs.repair.lastCompleteAt,
      backlog: inputs.repair.backlog,
      lastCycleSuccessful: inputs.repair.lastCycleSuccessful,
    },
  };
  return { snapshot, persist };
}

/** Evidence of a node that has not gathered anything yet: nothing proven. */
const NOTHING_GATHERED: HealthInputs = {
  startup: { complete: false, healthy: false },
  runtimeStarted: false,
  storage: { measuredAt: null, availableBytes: null },
  // Unknown is not proven: report repair as required with no evidence until the first attempt gathers it.
  repair: { required: true, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false },
  attestedPeers: 0,
};

/**
 * What reads see before the first attempt has finished: `starting`, with the restored checkpoint's height and
 * observation (when earned under this membership), every prerequisite unproven.
 */
export function initialSnapshot(
  restored: PersistedCheckpoint | null,
  settings: HealthSettings,
  membership: string,
  now: number,
): HealthSnapshot {
  const prior = adoptCheckpoint(restored, membership);
  const observedAt = prior?.completedAt ?? null;
  return {
    state: 'starting',
    height: prior?.height ?? 0,
    evaluatedAt: now,
    observedAt,
    checks: {
      checkpointFresh: within(observedAt, now, settings.maxCheckpointAgeMs),
      clockConsistent: notBehind(observedAt, now),
      runtime: false,
      startupReconciliation: false,
      storageFresh: false,
      storageReserve: false,
      repairFresh: false,
      peerAttestations: settings.requiredPeerCount === 0,
    },
    membership: { version: membership, requiredPeers: settings.requiredPeerCount, attestedPeers: 0 },
    startup: { ...NOTHING_GATHERED.startup },
    storage: { measuredAt: null, availableBytes: null, reserveHealthy: false },
    replication: {
      repairRequired: NOTHING_GATHERED.repair.required,
      lastCompleteAt: null,
      backlog: 0,
      lastCycleSuccessful: false,
    },
  };
}

/**
 * The Health object for a read at `now` (spec §2.3, §3.2; notes A.6 "read-time refresh").
 *
 * `fresh` is the current storage measurement and repair evidence the three freshness checks are recomputed from;
 * null recomputes them from the evidence the snapshot was evaluated with. `clockConsistent` may only be cleared here,
 * the state may only be downgraded: `stale` when the checkpoint age exceeds the maximum (any state but `starting`;
 * no checkpoint ever → no age → never stale, notes C19), else `ready` → `degraded` when a read-time check fails.
 */
export function readHealth(
  snapshot: HealthSnapshot,
  fresh: FreshnessInputs | null,
  settings: HealthSettings,
  now: number,
  meta: { readonly version: string; readonly startedAt: number },
): HealthObject {
  const storageMeasuredAt = fresh === null ? snapshot.storage.measuredAt : fresh.storage.measuredAt;
  const repair: HealthInputs['repair'] = fresh?.repair ?? {
    required: snapshot.replication.repairRequired,
    lastCompleteAt: snapshot.replication.lastCompleteAt,
    backlog: snapshot.replication.backlog,
    lastCycleSuccessful: snapshot.replication.lastCycleSuccessful,
  };

  const clockConsistent =
    snapshot.checks.clockConsistent &&
    now >= snapshot.evaluatedAt &&
    notBehind(snapshot.observedAt, now) &&
    notBehind(storageMeasuredAt, now) &&
    notBehind(repair.lastCompleteAt, now);
  const checks: HealthChecks = {
    checkpointFresh: within(snapshot.observedAt, now, settings.maxCheckpointAgeMs),
    clockConsistent,
    runtime: snapshot.checks.runtime,
    startupReconciliation: snapshot.checks.startupReconciliation,
    storageFresh: clockConsistent && within(storageMeasuredAt, now, settings.storageMaxAgeMs),
    storageReserve: snapshot.checks.storageReserve,
    repairFresh: repairFresh(repair, clockConsistent, now, settings),
    peerAttestations: snapshot.checks.peerAttestations,
  };

  let state = snapshot.state;
  if (state !== 'starting' && snapshot.observedAt !== null && now - snapshot.observedAt > settings.maxCheckpointAgeMs) {
    state = 'stale';
  } else if (state === 'ready' && !(checks.checkpointFresh && checks.clockConsistent && checks.storageFresh && checks.repairFresh)) {
    state = 'degraded';
  }

  return {
    version: meta.version,
    uptimeMs: Math.max(0, now - meta.startedAt),
    state,
    height: snapshot.height,
    timestamp: now,
    evaluatedAt: snapshot.evaluatedAt,
    checkpoint: {
      intervalMs: settings.intervalMs,
      observedAt: snapshot.observedAt,
      ageMs: ageOf(snapshot.observedAt, now),
      maxAgeMs: settings.maxCheckpointAgeMs,
    },
    membership: { ...snapshot.membership },
    startup: { ...snapshot.startup },
    storage: {
      measuredAt: storageMeasuredAt,
      measurementAgeMs: ageOf(storageMeasuredAt, now),
      reserveHealthy: snapshot.storage.reserveHealthy,
    },
    replication: {
      repairRequired: repair.required,
      lastCompleteAt: repair.lastCompleteAt,
      ageMs: ageOf(repair.lastCompleteAt, now),
      backlog: repair.backlog,
    },
    checks,
  };
}
