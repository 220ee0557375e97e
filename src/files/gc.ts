// Garbage-collection planning and the GC report (docs/specs/files-node.md §2.8, §4.3; docs/notes/files-node.md A.4 rules
// 1-7, A.7, C3, C20, C-shapes "GC report"). Pure: the run machine (machines/files/gc-run.machine.ts) calls these
// in its guards and `assign`s; the actors measure, read the registry and touch pins and blocks.
//
// Releasing is not deleting (rule 5). A run
//   1. releases (unpins, state `expired`) every temporary file past its expiry, whatever the pressure (rule 4a);
//   2. under pressure, releases the oldest temporary files until enough would be reclaimable (rule 4b);
//   3. deletes unpinned blocks only when there is pressure or the run is forced (spec §4.3), and then only as
//      many as the pressure asks for, or all of them when forced.
// A confirmed file this node holds is never selected for release (spec §4.3). It may only be *handed over*
// (rule 4c, notes A.7 "collector handover"): when this node is outside the file's designated set and every
// designated holder confirmed over the protocol that it has the file, the run drops the local pin and keeps the
// record (`confirmed`, `heldLocally: false`), listed in `demoted`. Asking the holders is I/O: the candidates are
// picked while the registry is read (`summarizeRegistry` with a handover pick, the rule of `handoverCandidates`),
// the GC actor probes them before planning and hands `planGc` the CIDs every holder confirmed. Without replication (or on one node) there are no candidates and `demoted` stays empty.

import { PackedStrings, type PageSource } from '../packed-strings.js';
import { isPastExpiry } from './lifecycle.js';
import { placementOf, type PlacementTier } from './placement.js';
import { scrubText } from './scrub.js';
import type { FileEvent, FileRecord, GcLastRun } from './types.js';

/** Why blocks are deleted (notes C20); `none`: nothing is deleted, releases still happen. */
export type GcTrigger = 'none' | 'highWatermark' | 'diskReserve' | 'force';

/** Why a file is released: its TTL ran out (rule 4a) or the store is under pressure (rule 4b). */
export type ReleaseReason = 'expired' | 'pressure';

/**
 * A reserve-triggered run evicts until the reserve is honoured with a 25 % margin (rule 5): stopping exactly at
 * the reserve would have the next upload's claim push free space straight back into it.
 */
export const RESERVE_MARGIN = 1.25;

export interface GcSettings {
  /** `storage.gc.highWatermarkBytes`: blockstore size above which collection starts. */
  readonly highWatermarkBytes: number;
  /** `storage.gc.lowWatermarkBytes`: a watermark run evicts until the blockstore is below it. */
  readonly lowWatermarkBytes: number;
  /** `storage.diskReserveBytes`: free space below it is pressure too. */
  readonly diskReserveBytes: number;
}

/** What the run measured before planning. */
export interface GcMeasurement {
  /** The run's time: expiry is judged at this instant. */
  readonly now: number;
  /** Bytes of `<store>/blockstore`. */
  readonly blockstoreBytes: number;
  /** Free bytes on the blockstore's filesystem. */
  readonly freeBytes: number;
}

export interface PlannedRelease {
  readonly cid: string;
  readonly reason: ReleaseReason;
  /** The record as planned: the run applies its plan only to records still matching it (rule 7). */
  readonly createdAt: number;
  readonly expiresAt: number | null;
  readonly dagBytes: number;
}

/** A confirmed file whose local copy is handed over to its designated holders (rule 4c). */
export interface PlannedDemotion {
  readonly cid: string;
  /** The record as planned: the run demotes only a record still matching it (rule 7). */
  readonly createdAt: number;
  readonly dagBytes: number;
}

export interface GcPlan {
  readonly trigger: GcTrigger;
  /** Expired temporaries first (soonest expiry first), then pressure releases oldest first. */
  readonly release: readonly PlannedRelease[];
  /** Handovers, by CID: confirmed held files every designated holder confirmed (rule 4c). */
  readonly demote: readonly PlannedDemotion[];
  /** Pinned files the plan keeps (neither released nor demoted), by CID; packed: at a million files ~920k of them. */
  readonly retainedCids: PackedStrings;
  /** Bytes the deletion pass should free: null = every unpinned block (force), 0 = no deletion. */
  readonly bytesToFree: number | null;
  readonly estimatedBytesAfter: number;
}

const bytesOf = (record: Pick<FileRecord, 'dagBytes'>) => Math.max(0, record.dagBytes ?? 0);
const byCid = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** A confirmed file this node pins and holds: the only kind a handover can take (rule 4c). */
const isHeldConfirmed = (record: FileRecord) => record.state === 'confirmed' && record.pinned && record.heldLocally;

/**
 * The measurement shows pressure: a run may release unexpired temporary files (rule 4b). Without it the plan reads
 * only the temporaries past their expiry, so the registry pass keeps no other (summarizeRegistry's `onlyExpiredAt`).
 */
export function underPressure(measurement: GcMeasurement, settings: GcSettings): boolean {
  const { highWatermark, diskReserve } = pressureBytes(measurement, settings);
  return Math.max(highWatermark, diskReserve) > 0;
}

/** Bytes a run must free to end the pressure it measured (0: none). */
export function pressureBytes(measurement: GcMeasurement, settings: GcSettings): { highWatermark: number; diskReserve: number } {
  const { blockstoreBytes, freeBytes } = measurement;
  // "passes the high watermark" (spec §4.3): strictly above it; then "below the low watermark" (rule 4b): strictly.
  const highWatermark = blockstoreBytes > settings.highWatermarkBytes ? blockstoreBytes - settings.lowWatermarkBytes + 1 : 0;
  // "free space falls into the disk reserve": strictly less free space than reserved.
  const diskReserve = freeBytes < settings.diskReserveBytes ? Math.ceil(settings.diskReserveBytes * RESERVE_MARGIN) - freeBytes : 0;
  return { highWatermark: Math.max(0, highWatermark), diskReserve: Math.max(0, diskReserve) };
}

/**
 * What a run's plan needs of the registry: the pinned files' CIDs and bytes, every temporary record (rules 4a, 4b),
 * and, when a handover is possible, the run's handover candidates (rule 4c). A million records as objects are some
 * hundreds of MiB; this keeps the pinned CIDs packed (src/packed-strings.ts), the temporaries, and at most a run's
 * candidates of the confirmed files (all of them, ~830k records at a million files, were kept before the candidates
 * were picked while reading).
 */
export interface GcRecordSummary {
  /** Pinned files, in CID order. */
  readonly pinnedCids: PackedStrings;
  readonly pinnedBytes: number;
  /** Every temporary record, pinned or not; only those past their expiry when read with `onlyExpiredAt`. */
  readonly temporaries: readonly FileRecord[];
  /** The records of the handover candidates (`handover.candidates`), in the same order. */
  readonly heldConfirmed: readonly FileRecord[];
  /** The run's handover candidates (`handoverCandidates` over the confirmed records): none without a handover. */
  readonly handover: HandoverSelection;
}

/**
 * What the summary reads of the registry, each once, a page at a time: the actor reads the registry in pages and lets
 * the event loop turn between them (a million pinned CIDs are ~1 s of reading: in one piece they held every request
 * of the node; tests give one page of records). The pinned CIDs alone, not their records: at a million files a pass
 * that built every record cost twice the CPU and left ~1M short-lived objects for V8 to collect.
 */
export interface GcRegistryReads {
  /** The CIDs of pinned records, in CID order. */
  pinnedCids(): RegistryPages<string>;
  /** Sum of `dagBytes` over pinned records. */
  pinnedBytes(): number;
  /** Every temporary record. */
  temporaries(): RegistryPages<FileRecord>;
  /** Every confirmed record, in CID order: read only for a handover pick. */
  confirmed(): RegistryPages<FileRecord>;
}

/** A registry read as its pages, in order. */
export type RegistryPages<T> = AsyncIterable<readonly T[]> | Iterable<readonly T[]>;

/** How a run picks its handover candidates while it reads the registry (`handoverCandidates`). */
export interface HandoverPick {
  readonly scope: HandoverScope;
  /** Where the last real run's candidates ended (exclusive). */
  readonly after: string | undefined;
  readonly limit?: number;
}

/**
 * Summarizes the registry for a run's plan. Pinned CIDs out of CID order are sorted here, at a cost. With `handover`,
 * the confirmed records are offered to a handover pick as they pass. The pages are read over several turns of the
 * event loop, so a record written meanwhile may or may not be in them, and `pinnedBytes` (read last) may count it:
 * the plan is an estimate, and the run re-reads every record before it changes one (rule 7). The pinned CIDs are
 * packed on `pages` (the collector's pool: the plan's `retainedCids` is a view of them, released with the report).
 */
export async function summarizeRegistry(
  reads: GcRegistryReads,
  options: { handover?: HandoverPick; pages?: PageSource; onlyExpiredAt?: number } = {},
): Promise<GcRecordSummary> {
  // A run without pressure plans only expiries (rule 4a): the other temporaries (6% of the files in the scale bench's
  // mix, ~19 MiB of records at a million files) are not kept for the run, long enough for V8 to promote them.
  const { onlyExpiredAt } = options;
  const temporaries: FileRecord[] = [];
  for await (const page of reads.temporaries()) {
    for (const record of page) if (onlyExpiredAt === undefined || isPastExpiry(record.expiresAt, onlyExpiredAt)) temporaries.push(record);
  }
  let pinnedCids = new PackedStrings(options.pages);
  let lastCid: string | undefined;
  let inOrder = true;
  for await (const page of reads.pinnedCids()) {
    for (const cid of page) {
      if (lastCid !== undefined && cid < lastCid) inOrder = false;
      lastCid = cid;
      pinnedCids.push(cid);
    }
  }
  if (!inOrder) {
    const unsorted = pinnedCids;
    pinnedCids = PackedStrings.from([...unsorted].sort(byCid), options.pages);
    unsorted.release();
  }
  let picked: ReturnType<HandoverPicker['picked']> = { selection: { candidates: [], next: undefined }, records: [] };
  if (options.handover) {
    const picker = new HandoverPicker(options.handover);
    for await (const page of reads.confirmed()) for (const record of page) picker.offer(record);
    picked = picker.picked();
  }
  return { pinnedCids, pinnedBytes: reads.pinnedBytes(), temporaries, heldConfirmed: picked.records, handover: picked.selection };
}

/**
 * The plan of one run over the registry's summary. `force` (spec §4.3) makes the run delete every unpinned
 * block even without pressure, and never releases anything rule 4a and 4b would not. `handover` are the CIDs whose
 * designated holders all confirmed they hold them (probed by the actor before planning); only those still
 * confirmed, pinned and held here are demoted. Handover is independent of pressure, like expiry: a run without a
 * trigger demotes too. Demoted bytes become unpinned, so they count as reclaimable before any temporary file is
 * released under pressure: a copy that exists elsewhere goes before the only copy of an unconfirmed upload.
 */
export function planGc(
  records: GcRecordSummary,
  measurement: GcMeasurement,
  settings: GcSettings,
  force: boolean,
  handover: readonly string[] = [],
): GcPlan {
  const { now, blockstoreBytes } = measurement;
  const pressure = pressureBytes(measurement, settings);
  const need = Math.max(pressure.highWatermark, pressure.diskReserve);
  // The reserve is the more urgent pressure (uploads are refused in it), so it names the trigger when both apply.
  const trigger: GcTrigger = force ? 'force' : pressure.diskReserve > 0 ? 'diskReserve' : pressure.highWatermark > 0 ? 'highWatermark' : 'none';
  const { pinnedBytes } = records;

  // Rule 4c: the confirmed files every designated holder confirmed, if this node still holds them.
  const confirmedByHolders = new Set(handover);
  const demote: PlannedDemotion[] = records.heldConfirmed
    .filter((record) => confirmedByHolders.has(record.cid) && isHeldConfirmed(record))
    .sort((a, b) => byCid(a.cid, b.cid))
    .map((record) => ({ cid: record.cid, createdAt: record.createdAt, dagBytes: bytesOf(record) }));
  let releasedBytes = 0;
  for (const entry of demote) releasedBytes += entry.dagBytes;

  // Rule 4a: every temporary past its expiry, soonest expiry first (the registry's expiredTemporaries order).
  const expired = records.temporaries
    .filter((record) => isPastExpiry(record.expiresAt, now))
    .sort((a, b) => (a.expiresAt ?? 0) - (b.expiresAt ?? 0) || byCid(a.cid, b.cid));
  const release: PlannedRelease[] = expired.map((record) => planned(record, 'expired'));
  const releasing = new Set(release.map((entry) => entry.cid));
  for (const record of expired) if (record.pinned) releasedBytes += bytesOf(record);

  // Rule 4b: under pressure, the oldest unconfirmed files until what is reclaimable covers the need. Only
  // temporary, pinned records qualify: confirmed files this node holds are never selected (spec §4.3).
  if (need > 0) {
    let reclaimable = Math.max(0, blockstoreBytes - pinnedBytes) + releasedBytes;
    const candidates = records.temporaries
      .filter((record) => record.pinned && !releasing.has(record.cid))
      .sort((a, b) => a.createdAt - b.createdAt || byCid(a.cid, b.cid));
    for (const record of candidates) {
      if (reclaimable >= need) break;
      release.push(planned(record, 'pressure'));
      releasing.add(record.cid);
      reclaimable += bytesOf(record);
      releasedBytes += bytesOf(record);
    }
  }

  // The pinned CIDs less the released and demoted ones, in CID order, sharing the summary's pages.
  const retainedCids = records.pinnedCids.without(new Set([...releasing, ...demote.map((entry) => entry.cid)]));
  const bytesToFree = trigger === 'force' ? null : trigger === 'none' ? 0 : need;
  return { trigger, release, demote, retainedCids, bytesToFree, estimatedBytesAfter: estimateAfter(blockstoreBytes, pinnedBytes - releasedBytes, bytesToFree) };
}

/**
 * The blockstore size once the deletion pass has run: everything still pinned stays, so the floor is the pinned
 * bytes; a pressure run stops once it freed what it needed; no deletion leaves the size as it was.
 */
function estimateAfter(blockstoreBytes: number, pinnedAfter: number, bytesToFree: number | null): number {
  if (bytesToFree === 0) return blockstoreBytes;
  const floor = Math.min(blockstoreBytes, Math.max(0, pinnedAfter));
  return bytesToFree === null ? floor : Math.max(floor, blockstoreBytes - bytesToFree);
}

function planned(record: FileRecord, reason: ReleaseReason): PlannedRelease {
  return { cid: record.cid, reason, createdAt: record.createdAt, expiresAt: record.expiresAt, dagBytes: bytesOf(record) };
}

/**
 * Rule 7: a planned release applies only if the record, re-read now, is still what the plan saw: a temporary file
 * created at the same time (not deleted and re-uploaded), and for an expiry release still past its expiry. A file
 * confirmed since the plan is therefore never released.
 */
export function stillMatchesPlan(entry: PlannedRelease, current: FileRecord | undefined, now: number): boolean {
  if (!current || current.state !== 'temporary' || current.createdAt !== entry.createdAt) return false;
  if (entry.reason === 'expired') return current.expiresAt === entry.expiresAt && isPastExpiry(current.expiresAt, now);
  return current.pinned;
}

/**
 * The lifecycle event a release sends (the lifecycle machine decides the new state): `file.expire` for a TTL
 * release, which the machine accepts only past expiry (notes C3); `file.unpin` for a pressure release of a file
 * not yet expired (notes A.7, the collector's watermark row), which it accepts from `temporary`.
 */
export function releaseEvent(entry: PlannedRelease, now: number): FileEvent {
  return entry.reason === 'expired' ? { type: 'file.expire', at: now } : { type: 'file.unpin', at: now };
}

// ---------------------------------------------------------------------------------------------------------
// Handover (rule 4c)

/**
 * Candidates a run probes at most. Each one costs a `have` request to every designated holder (bounded by
 * `replication.requestTimeoutMs`), so a run over a large registry stays bounded; the next run goes on after the
 * last candidate this one probed (`HandoverSelection.next`), in CID order, wrapping around.
 */
export const HANDOVER_CANDIDATES_PER_RUN = 100;

/** Where placement is computed from: this node, the configured peers, the placement tiers, the run's time. */
export interface HandoverScope {
  /** This node's peer id. */
  readonly self: string;
  /** Peer ids of the configured `nodes` (this node counts as a member even when its own entry is missing). */
  readonly members: readonly string[];
  readonly tiers: readonly PlacementTier[];
  readonly now: number;
}

export interface HandoverCandidate {
  readonly cid: string;
  /** The designated holders to ask (this node is not among them), best first. */
  readonly holders: readonly string[];
}

export interface HandoverSelection {
  readonly candidates: readonly HandoverCandidate[];
  /** Where the next run starts (exclusive); undefined: every candidate was taken, start from the first. */
  readonly next: string | undefined;
}

/**
 * The confirmed files this node holds although it is outside their designated set (placement over the members
 * and this node, by the file's age at `now`), in CID order starting after `after` and wrapping around, at most
 * `limit` of them. A dry run passes the same `after` as the real run would (rule 1: it leaves the sweep
 * position unchanged).
 */
export function handoverCandidates(
  records: Iterable<FileRecord>,
  scope: HandoverScope,
  after: string | undefined,
  limit: number = HANDOVER_CANDIDATES_PER_RUN,
): HandoverSelection {
  const picker = new HandoverPicker({ scope, after, limit });
  for (const record of records) picker.offer(record);
  return picker.picked().selection;
}

interface Picked {
  readonly candidate: HandoverCandidate;
  readonly record: FileRecord;
}

/**
 * `handoverCandidates` one record at a time, holding at most twice `limit` of them: the first eligible CIDs after
 * `after`, and the first ones up to it (where the sweep wraps around). Records may come in any order; in CID order
 * (the registry's) each one costs its placement and a comparison.
 */
class HandoverPicker {
  readonly #scope: HandoverScope;
  readonly #after: string | undefined;
  readonly #limit: number;
  /** Eligible CIDs after `after`, the smallest `limit`, in CID order. */
  readonly #following: Picked[] = [];
  /** Eligible CIDs up to `after`, the smallest `limit`, in CID order. */
  readonly #wrapped: Picked[] = [];
  #eligible = 0;

  constructor(pick: HandoverPick) {
    this.#scope = pick.scope;
    this.#after = pick.after;
    this.#limit = Math.max(0, pick.limit ?? HANDOVER_CANDIDATES_PER_RUN);
  }

  offer(record: FileRecord): void {
    if (!isHeldConfirmed(record)) return;
    const { self, members, tiers, now } = this.#scope;
    const { designated } = placementOf(record.cid, members, self, tiers, Math.max(0, now - record.createdAt));
    // The designated set is never empty (this node is a member), so outside it there is always someone to ask.
    if (designated.includes(self) || designated.length === 0) return;
    this.#eligible++;
    const kept = this.#after !== undefined && record.cid <= this.#after ? this.#wrapped : this.#following;
    const last = kept[kept.length - 1];
    if (kept.length >= this.#limit && (last === undefined || record.cid >= last.candidate.cid)) return;
    let at = kept.length;
    while (at > 0 && kept[at - 1]!.candidate.cid > record.cid) at--;
    kept.splice(at, 0, { candidate: { cid: record.cid, holders: [...designated] }, record });
    if (kept.length > this.#limit) kept.pop();
  }

  picked(): { selection: HandoverSelection; records: FileRecord[] } {
    const picked = [...this.#following, ...this.#wrapped].slice(0, this.#limit);
    const candidates = picked.map((entry) => entry.candidate);
    const next = this.#eligible > candidates.length ? candidates[candidates.length - 1]?.cid : undefined;
    return { selection: { candidates, next }, records: picked.map((entry) => entry.record) };
  }
}

/**
 * Rule 7 for a handover: demote only a record still confirmed, pinned and held here, created when the plan saw it
 * (not deleted and re-uploaded since). A file unpinned or demoted meanwhile is left as it is.
 */
export function stillMatchesDemotion(entry: PlannedDemotion, current: FileRecord | undefined): boolean {
  return current !== undefined && isHeldConfirmed(current) && current.createdAt === entry.createdAt;
}

/** The lifecycle event of a handover: the machine keeps the file confirmed and drops the pin (notes A.7). */
export function demoteEvent(now: number): FileEvent {
  return { type: 'file.demote', at: now };
}

/**
 * Files whose pins must exist before anything is deleted (rule 6): confirmed held files, and any pinned record.
 * A demoted file (confirmed, not pinned, not held) is not among them: its pin was dropped on purpose.
 */
export function mustBePinned(record: FileRecord): boolean {
  return (record.state === 'confirmed' && record.heldLocally) || record.pinned;
}

// ---------------------------------------------------------------------------------------------------------
// The report

/** Body of `POST /api/storage/gc` (spec §2.8; notes C-shapes). Key order is the wire order. */
export interface GcReport {
  readonly startedAt: number;
  readonly durationMs: number;
  readonly dryRun: boolean;
  /** Whether the deletion pass ran to its end (false for dry runs, runs without a trigger, abandoned and failed runs). */
  readonly collected: boolean;
  readonly trigger: GcTrigger;
  readonly blockstoreBytesBefore: number;
  /** A dry run's estimate from the plan; after a real run, the size before minus the bytes actually deleted. */
  readonly estimatedBytesAfter: number;
  /** What was released (a dry run: what would be); not what was planned but skipped (rule 7). */
  readonly releasedCids: readonly string[];
  /**
   * Packed (src/packed-strings.ts): JSON writes it as an array of strings. On the collector's pages: its reader
   * releases it when done (actors/files/gc.actor.ts).
   */
  readonly retainedCids: PackedStrings;
  /**
   * Confirmed files handed over to their designated holders (rule 4c; a dry run: what would be): their local pin
   * dropped, records kept with `heldLocally: false`. Always empty on one node or without replication.
   */
  readonly demoted: readonly string[];
  readonly removedBlocks: number;
  /** Block CIDs as the blockstore lists them (CIDv0 for sha2-256 blocks, notes A.4 rule 7), not file CIDs. */
  readonly removedCids: readonly string[];
  readonly repairedPins: readonly string[];
  readonly unprotected: readonly string[];
  /** Short texts without CIDs or stacks. */
  readonly errors: readonly string[];
}

/** How a run ended (the run machine's final state). */
export type GcOutcome = 'previewed' | 'released' | 'collected' | 'abandoned' | 'failed';

/** Everything a run decided and did; the report adds the timing and `collected` (from the outcome). */
export interface GcRunResult extends Omit<GcReport, 'startedAt' | 'durationMs' | 'collected'> {
  readonly outcome: GcOutcome;
}

export function gcReport(result: GcRunResult, startedAt: number, finishedAt: number): GcReport {
  return {
    startedAt,
    durationMs: Math.max(0, finishedAt - startedAt),
    dryRun: result.dryRun,
    collected: result.outcome === 'collected',
    trigger: result.trigger,
    blockstoreBytesBefore: result.blockstoreBytesBefore,
    estimatedBytesAfter: result.estimatedBytesAfter,
    releasedCids: [...result.releasedCids],
    // Not copied: at a million files it is most of the report, and nothing changes a packed list once read.
    retainedCids: result.retainedCids,
    demoted: [...result.demoted],
    removedBlocks: result.removedBlocks,
    removedCids: [...result.removedCids],
    repairedPins: [...result.repairedPins],
    unprotected: [...result.unprotected],
    errors: [...result.errors],
  };
}

/** `gc.lastRun` of the storage metrics (notes C-shapes): counts only, no CID lists. */
export function gcLastRun(report: GcReport): GcLastRun {
  return {
    startedAt: report.startedAt,
    durationMs: report.durationMs,
    dryRun: report.dryRun,
    collected: report.collected,
    trigger: report.trigger,
    releasedCount: report.releasedCids.length,
    removedBlocks: report.removedBlocks,
    errors: [...report.errors],
  };
}

/**
 * A run as the registry keeps it (`gc_runs`, 20 runs): the report without `retainedCids`, which lists every file the
 * run kept (at a million files ~60 MB of JSON per run, issue 30), counted instead. What a run released, demoted,
 * removed or repaired stays listed: that is the evidence of what it did.
 */
export type GcEvidence = Omit<GcReport, 'retainedCids'> & { readonly retainedCount: number };

export function gcEvidence(report: GcReport): GcEvidence {
  const { retainedCids, ...rest } = report;
  return { ...rest, retainedCount: retainedCids.length };
}

/** A stored report read back (registry JSON, maybe from an older version): its summary, or null when unusable. */
export function storedGcLastRun(value: unknown): GcLastRun | null {
  if (typeof value !== 'object' || value === null) return null;
  const report = value as Partial<Record<keyof GcReport, unknown>>;
  const isNumber = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  if (!isNumber(report.startedAt) || !isNumber(report.durationMs) || !isNumber(report.removedBlocks)) return null;
  if (typeof report.dryRun !== 'boolean' || typeof report.collected !== 'boolean' || typeof report.trigger !== 'string') return null;
  if (!Array.isArray(report.releasedCids) || !Array.isArray(report.errors)) return null;
  // The fields gcLastRun reads were checked above; non-text errors of an older format are dropped.
  return gcLastRun({ ...(report as GcReport), errors: report.errors.filter((text): text is string => typeof text === 'string') });
}

/** Stages of a run, named in error texts. */
export type GcStage = 'measure' | 'plan' | 'probe' | 'lease' | 'release' | 'verify' | 'delete';

const MAX_ERROR_TEXT = 200;

/**
 * An error text for the report: the stage and the error's first message line, scrubbed of CIDs, peer ids and
 * multiaddrs (the report is admin-only, but `errors` also reaches the public metrics through `gc.lastRun`).
 * Never the stack.
 */
export function gcErrorText(stage: GcStage, error: unknown): string {
  const raw = error instanceof Error ? error.message || error.name : typeof error === 'string' ? error : 'unknown error';
  const firstLine = raw.split('\n', 1)[0]!.trim() || 'unknown error';
  const text = scrubText(firstLine);
  return `${stage} failed: ${text.length > MAX_ERROR_TEXT ? `${text.slice(0, MAX_ERROR_TEXT)}…` : text}`;
}
