// Replication repair, pure (docs/specs/files-node.md §1.4, §2.3 rules 2-3, §2.6, §4.3 "POST /api/storage/repair";
// docs/notes/files-node.md A.4 "Repair rules", A.6 `repairFresh`, C21, C-shapes "Repair report" and "Storage metrics").
//
// "Repair places copies of any confirmed file whose designated holders have not all acknowledged." The registry is
// walked in bounded batches of REPAIR_BATCH_SIZE records ordered by CID; a persisted cursor (the last CID of the
// previous batch) makes every batch advance. A *cycle* is one walk over the whole registry: it starts at cursor null
// and completes with the first batch that returns fewer records than asked for. Its counts are the cycle evidence
// the health checkpoint reads (`repairFresh`, spec §2.3 rule 2). This module folds batch results into that evidence
// and shapes the answers; the I/O (registry, probes, copies) lives in actors/files/repair.actor.ts, the order of
// things in machines/files/repair-run.machine.ts. Nothing here reads a clock: every time is a parameter.

import { createHash, hash } from 'node:crypto';
import { isRecord } from '../is-record.js';
import type { HealthInputs } from './health.js';
import { copyTargets, placementOf, type PlacementTier } from './placement.js';
import type { FileRecord } from './types.js';

/** Records per batch (notes C21): bounded, and small enough for one POST to answer within a request timeout. */
export const REPAIR_BATCH_SIZE = 100;

/** The current persisted-state format (docs/DESIGN.md actor rule 7); another version is discarded at start. */
export const REPAIR_STATE_VERSION = 1;

/** Counts of a batch or of a cycle (notes A.4 cycle evidence; counts only, never CIDs or peer ids). */
export interface RepairCounts {
  /** Confirmed records looked at. */
  readonly examined: number;
  /** Records in repair scope whose designated holders were probed. */
  readonly checked: number;
  /** Probed records with at least one designated holder missing its copy. */
  readonly underReplicated: number;
  /** Under-replicated records whose every missing copy was stored when asked. */
  readonly repaired: number;
  /** Copies still missing after asking (a timeout, a refusal, a cached-only copy). */
  readonly stillMissing: number;
  /** Under-replicated records this node cannot be the source for (its own copy is not pinned). */
  readonly unrecoverable: number;
}

export const NO_COUNTS: RepairCounts = { examined: 0, checked: 0, underReplicated: 0, repaired: 0, stillMissing: 0, unrecoverable: 0 };

const COUNT_KEYS = ['examined', 'checked', 'underReplicated', 'repaired', 'stillMissing', 'unrecoverable'] as const;

export function addCounts(a: RepairCounts, b: RepairCounts): RepairCounts {
  return {
    examined: a.examined + b.examined,
    checked: a.checked + b.checked,
    underReplicated: a.underReplicated + b.underReplicated,
    repaired: a.repaired + b.repaired,
    stillMissing: a.stillMissing + b.stillMissing,
    unrecoverable: a.unrecoverable + b.unrecoverable,
  };
}

/** A copy of just the six counts, in the report's key order. */
function countsOf(counts: RepairCounts): RepairCounts {
  return {
    examined: counts.examined,
    checked: counts.checked,
    underReplicated: counts.underReplicated,
    repaired: counts.repaired,
    stillMissing: counts.stillMissing,
    unrecoverable: counts.unrecoverable,
  };
}

/** What repair needs is unresolved: missing copies plus records that cannot be repaired from here (notes A.4). */
export function backlogOf(counts: RepairCounts): number {
  return counts.stillMissing + counts.unrecoverable;
}

// ---------------------------------------------------------------------------------------------------------------
// One record

/** Repair scope (notes A.4): confirmed files this node holds; an expired or handed-over file is not its business. */
export function inRepairScope(record: FileRecord): boolean {
  return record.state === 'confirmed' && record.pinned && record.heldLocally;
}

/**
 * The peers that should hold a copy of `record` besides this node: its designated set over the configured members
 * (this node counted even when its own entry is missing), for the file's age at `now` (spec §2.1 placement tiers).
 */
export function repairTargets(record: FileRecord, members: readonly string[], self: string, tiers: readonly PlacementTier[], now: number): string[] {
  return copyTargets(placementOf(record.cid, members, self, tiers, Math.max(0, now - record.createdAt)), self);
}

/**
 * Whether a designated peer must be asked `have` about its copy again. Yes when it never acknowledged one, when its
 * acknowledgement is dated after `now` (a clock set back), or when it is older than this copy's share of the recheck
 * window (`replication.repairRecheckMs`); a window of 0 asks every copy on every cycle, as the original did.
 * Asking about every copy every cycle does not scale: one `have` costs a stream and ~3 ms of CPU on each side, so a
 * cycle over a million files with a peer took hours and `repairFresh` could never hold (issue 30).
 * A copy's share is between half and the whole window, fixed by a hash of the CID and the peer: the copies a first
 * cycle over a large store acknowledged within minutes come due spread over half a window, not all in one cycle.
 */
export function copyDue(acknowledgedAt: number | undefined, cid: string, peerId: string, now: number, recheckMs: number): boolean {
  if (recheckMs <= 0 || acknowledgedAt === undefined || acknowledgedAt > now) return true;
  return now - acknowledgedAt >= recheckMs * recheckShare(cid, peerId);
}

/** In [0.5, 1): the part of the recheck window after which this peer's copy of this file is asked about again. */
export function recheckShare(cid: string, peerId: string): number {
  const word = hash('sha256', `${cid}\0${peerId}`, 'buffer').readUInt32BE(0);
  return 0.5 + word / 2 ** 33;
}

/** What happened to one examined record (the actor probes and places; this is only its outcome). */
export interface RecordRepairOutcome {
  /** In scope and with at least one designated peer due a recheck (copyDue), which were asked `have`. */
  readonly probed: boolean;
  /** Designated peers that did not confirm a copy. */
  readonly missing: number;
  /** Missing peers that stored a copy when asked (a cached copy is no acknowledgement, notes A.4). */
  readonly stored: number;
  /** Copies were missing and this node's own copy is not pinned: it cannot be their source. */
  readonly unrecoverable: boolean;
}

/**
 * A record that was examined and needed nothing: out of scope, no peer designated besides this node, or every designated
 * peer acknowledged its copy within the recheck window.
 */
export const NOT_PROBED: RecordRepairOutcome = { probed: false, missing: 0, stored: 0, unrecoverable: false };

/**
 * The counts one record contributes. An unrecoverable record counts once, as unrecoverable, and its missing copies
 * are not also counted in `stillMissing` (backlog would count the same record twice).
 */
export function recordCounts(outcome: RecordRepairOutcome): RepairCounts {
  const under = outcome.probed && outcome.missing > 0;
  return {
    examined: 1,
    checked: outcome.probed ? 1 : 0,
    underReplicated: under ? 1 : 0,
    repaired: under && !outcome.unrecoverable && outcome.stored >= outcome.missing ? 1 : 0,
    stillMissing: under && !outcome.unrecoverable ? Math.max(0, outcome.missing - outcome.stored) : 0,
    unrecoverable: under && outcome.unrecoverable ? 1 : 0,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Cycles and the persisted state

/** The cycle in progress: its counts so far and when its first batch started. */
export interface ActiveCycle extends RepairCounts {
  readonly startedAt: number;
}

/** The last completed cycle (the evidence `repairFresh` reads). */
export interface CompletedCycle {
  readonly counts: RepairCounts;
  readonly startedAt: number;
  readonly completedAt: number;
  /** stillMissing = 0 and unrecoverable = 0 (notes A.4). */
  readonly successful: boolean;
}

/** What survives a restart (one record in the store folder, spec §1 "repair cursor and cycle evidence"). */
export interface RepairState {
  readonly version: typeof REPAIR_STATE_VERSION;
  /** The membership and placement policy the evidence was gathered under (repairPolicyVersion). */
  readonly policyVersion: string;
  /** The last CID of the previous batch of the active cycle; null: the next batch starts a cycle. */
  readonly cursor: string | null;
  readonly active: ActiveCycle | null;
  readonly last: CompletedCycle | null;
}

/**
 * The policy the evidence belongs to: sha256 hex of the membership version and the placement tiers. Another node
 * list or other tiers designate other holders, so evidence gathered under the old ones proves nothing (notes A.4:
 * "reset when membership or placement policy changes").
 */
export function repairPolicyVersion(membershipVersion: string, tiers: readonly PlacementTier[]): string {
  const policy = JSON.stringify(tiers.map((tier) => ({ minAgeMs: tier.minAgeMs, copies: tier.copies })));
  return createHash('sha256').update(membershipVersion, 'utf8').update('\n', 'utf8').update(policy, 'utf8').digest('hex');
}

export function freshRepairState(policyVersion: string): RepairState {
  return { version: REPAIR_STATE_VERSION, policyVersion, cursor: null, active: null, last: null };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

function parseCounts(raw: unknown): RepairCounts | null {
  if (!isRecord(raw)) return null;
  for (const key of COUNT_KEYS) if (!isCount(raw[key])) return null;
  return countsOf(raw as unknown as RepairCounts);
}

function parseActive(raw: unknown): ActiveCycle | null | undefined {
  if (raw === null) return null;
  const counts = parseCounts(raw);
  if (!counts || !isCount((raw as Record<string, unknown>)['startedAt'])) return undefined;
  return { startedAt: (raw as Record<string, number>)['startedAt']!, ...counts };
}

function parseLast(raw: unknown): CompletedCycle | null | undefined {
  if (raw === null) return null;
  if (!isRecord(raw)) return undefined;
  const counts = parseCounts(raw['counts']);
  if (!counts || !isCount(raw['startedAt']) || !isCount(raw['completedAt']) || typeof raw['successful'] !== 'boolean') return undefined;
  return { counts, startedAt: raw['startedAt'], completedAt: raw['completedAt'], successful: raw['successful'] };
}

/** Why a stored state was not used: another format, or evidence of another membership or placement policy. */
export type RepairStateDiscard = 'format' | 'policy';

/**
 * Reads the stored state back at start. Nothing stored: a fresh state. A record that is not a well-formed
 * version-1 state, or that belongs to another policy, is discarded (the caller logs why) and repair starts fresh:
 * a new cycle from the first CID, no evidence until it completes.
 */
export function restoreRepairState(raw: unknown, policyVersion: string): { state: RepairState; discarded: RepairStateDiscard | null } {
  const fresh = { state: freshRepairState(policyVersion), discarded: null };
  if (raw === undefined || raw === null) return fresh;
  if (!isRecord(raw) || raw['version'] !== REPAIR_STATE_VERSION || typeof raw['policyVersion'] !== 'string') return { ...fresh, discarded: 'format' };
  const cursor = raw['cursor'];
  const active = parseActive(raw['active']);
  const last = parseLast(raw['last']);
  if ((cursor !== null && typeof cursor !== 'string') || active === undefined || last === undefined) return { ...fresh, discarded: 'format' };
  if (raw['policyVersion'] !== policyVersion) return { ...fresh, discarded: 'policy' };
  return { state: { version: REPAIR_STATE_VERSION, policyVersion, cursor, active, last }, discarded: null };
}

// ---------------------------------------------------------------------------------------------------------------
// Batches, the report, and what readers see

/** One batch as the actor ran it. */
export interface BatchOutcome {
  readonly counts: RepairCounts;
  /** Records the registry returned (fewer than the batch size: the walk reached the end). */
  readonly fetched: number;
  /** CID of the batch's last record, null for an empty batch. */
  readonly lastCid: string | null;
  readonly startedAt: number;
  readonly finishedAt: number;
}

/** The cycle as the repair report and storage metrics show it (notes C-shapes): counts only. */
export interface RepairCycleView extends RepairCounts {
  /** When the cycle shown started: the active one, else the last completed one. */
  readonly startedAt: number;
  readonly lastCompletedAt: number | null;
  readonly lastCompletedSuccessfully: boolean;
  readonly backlog: number;
}

/** The body of POST /api/storage/repair (notes C-shapes "Repair report"): this batch, and the cycle it belongs to. */
export interface RepairReport extends RepairCounts {
  /** This batch completed its cycle (the cursor went back to the start). */
  readonly cycleCompleted: boolean;
  readonly cycle: RepairCycleView | null;
}

/** The repair job in storage metrics (spec §2.6 "replication job state"). */
export interface RepairJobStatus {
  readonly running: boolean;
  readonly cycle: RepairCycleView | null;
}

export const IDLE_REPAIR_JOB: RepairJobStatus = { running: false, cycle: null };

/**
 * Folds one batch into the state: its counts join the active cycle (started by this batch when none is active); a
 * batch that returned fewer records than asked for completes the cycle, which becomes `last` and resets the
 * cursor, else the cursor moves to the batch's last CID.
 */
export function foldBatch(state: RepairState, batch: BatchOutcome, batchSize: number = REPAIR_BATCH_SIZE): { state: RepairState; report: RepairReport } {
  const counts = addCounts(state.active ?? NO_COUNTS, batch.counts);
  const startedAt = state.active?.startedAt ?? batch.startedAt;
  const cycleCompleted = batch.fetched < batchSize;
  const next: RepairState = cycleCompleted
    ? {
        ...state,
        cursor: null,
        active: null,
        last: { counts, startedAt, completedAt: batch.finishedAt, successful: counts.stillMissing === 0 && counts.unrecoverable === 0 },
      }
    : { ...state, cursor: batch.lastCid ?? state.cursor, active: { startedAt, ...counts } };
  return { state: next, report: repairReport(batch.counts, cycleCompleted, next) };
}

/** Backlog (notes A.4): the larger of the last completed cycle's and the active cycle's. */
export function repairBacklog(state: RepairState): number {
  return Math.max(state.last ? backlogOf(state.last.counts) : 0, state.active ? backlogOf(state.active) : 0);
}

/** The cycle shown to readers: the active one, else the last completed one; null before any batch. */
export function cycleView(state: RepairState): RepairCycleView | null {
  const shown = state.active ? { startedAt: state.active.startedAt, counts: state.active } : state.last ? { startedAt: state.last.startedAt, counts: state.last.counts } : null;
  if (!shown) return null;
  return {
    startedAt: shown.startedAt,
    ...countsOf(shown.counts),
    lastCompletedAt: state.last?.completedAt ?? null,
    lastCompletedSuccessfully: state.last?.successful ?? false,
    backlog: repairBacklog(state),
  };
}

export function repairReport(batch: RepairCounts, cycleCompleted: boolean, state: RepairState): RepairReport {
  return { ...countsOf(batch), cycleCompleted, cycle: cycleView(state) };
}

/** Repair is required iff replication and repair are both enabled (spec §2.3 rule 2; notes A.4). */
export function repairRequired(replication: { readonly enabled: boolean; readonly repairEnabled: boolean }): boolean {
  return replication.enabled && replication.repairEnabled;
}

/**
 * The health checkpoint's repair input (notes A.6 `repairFresh`): the last completed cycle's time and success and the
 * backlog. Without a state (not restored yet) there is no evidence.
 */
export function repairHealthInputs(required: boolean, state: RepairState | null): HealthInputs['repair'] {
  return {
    required,
    lastCompleteAt: state?.last?.completedAt ?? null,
    backlog: state ? repairBacklog(state) : 0,
    lastCycleSuccessful: state?.last?.successful ?? false,
  };
}
