// The file registry port (docs/specs/files-node.md §1 "Durable state", §2.6, §9.6; docs/notes/files-node.md A.4,
// A.7, A.8, B.7, C22). One backend: registry.sqlite.ts, in `<home>/<storeFolder>/registry.sqlite`.
//
// The port is SYNCHRONOUS on purpose: SQLite is a local file reached through better-sqlite3, every call is
// a short indexed statement. A synchronous port also lets the store's owner (actors/files/store.actor.ts) read a
// record, apply `applyFileEvent` and write, or commit a session, in one turn that nothing interleaves with.
// Methods throw on storage failure; callers (actors) turn that into their own error events.

import type { LifecycleCounts } from '../../src/files/lifecycle.js';
import type { FileRecord, FileState } from '../../src/files/types.js';

export type { LifecycleCounts } from '../../src/files/lifecycle.js';
export type { FileRecord, FileState } from '../../src/files/types.js';

/** GC runs kept as evidence (`gc.lastRun` of the metrics, operators' history); older ones are dropped. */
export const DEFAULT_GC_RUNS_KEPT = 20;

export interface ListQuery {
  /** Only records in this state. */
  readonly state?: FileState;
  /** Exclusive cursor: records whose CID sorts after this one (byte order of the stored strings). */
  readonly afterCid?: string;
  /** At most this many records (an integer >= 0). */
  readonly limit: number;
}

/**
 * A pin-intent marker (notes C22): written before pinning for an upload or an incoming copy, removed at
 * commit or rollback. At startup, the caller rolls back (unpins) every intent whose CID has no committed
 * record, then clears the markers.
 */
export interface PinIntent {
  readonly cid: string;
  readonly sessionId: string;
  readonly createdAt: number;
}

/** One stored GC run (notes A.4; report shape owned by the GC code, stored as JSON). */
export interface GcRunEvidence<R = unknown> {
  /** Increasing with every recorded run. */
  readonly id: number;
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly report: R;
}

/** What the peers said about one file's copies (actors/files/store.actor.ts `store.noteHolders`). */
export interface HolderNote {
  readonly cid: string;
  /** Peers that confirmed or stored a copy. */
  readonly held?: readonly string[];
  /** Peers that answered they have none. */
  readonly gone?: readonly string[];
  /**
   * When these peers were asked (ms); absent: the time the whole notice gives. Notes reach the registry in the order
   * they are sent, not the order the peers answered: a repair batch that heard "not here" before a handover probe heard
   * "I have it" may send its note last, so a `gone` only strikes an acknowledgement older than its own question.
   */
  readonly at?: number;
}

export interface FileRegistry {
  /** The record of a CID, matched exactly as stored (no CID normalization here). */
  get(cid: string): FileRecord | undefined;
  /**
   * Those of `cids` that have no record, in their order, looked up in one read transaction: a lookup outside one pays
   * SQLite's locking per statement, about 3x its cost (18 vs 5.5 µs here; the startup walk does one per pin).
   */
  unregistered(cids: readonly string[]): string[];
  /** Inserts or replaces the record of `record.cid`. */
  put(record: FileRecord): void;
  /** Inserts or replaces every record in one transaction: all or nothing. */
  putMany(records: readonly FileRecord[]): void;
  /** Removes a record and its acknowledgements; true when a record was there. */
  delete(cid: string): boolean;
  /**
   * Notes that `peerIds` acknowledged a stored (pinned, registered) copy of `cid` at `now` (spec §2.1, §2.2
   * `acknowledged`; a cached copy is no acknowledgement and is never passed here). Ignored for a CID without a
   * record; a peer already noted keeps the later of the two times. Returns how many rows were written.
   */
  acknowledge(cid: string, peerIds: readonly string[], now: number): number;
  /** Forgets the acknowledgements of `peerIds` for `cid`, whenever noted (they said they no longer hold it); returns how many went. */
  forgetAcknowledgements(cid: string, peerIds: readonly string[]): number;
  /**
   * The peers that acknowledged a stored copy of `cid`, sorted. Every peer ever noted and not forgotten: whether it
   * still counts (still a designated holder under the current membership) is the reader's question.
   */
  acknowledgedBy(cid: string): string[];
  /**
   * The same peers for many files at once, each with the time it last acknowledged its copy (ms), for the repair's
   * recheck window (a repair batch: one range read of the table, not a query per file): each of `cids` that has
   * acknowledgements maps to them.
   */
  acknowledgementsOf(cids: readonly string[]): Map<string, Map<string, number>>;
  /**
   * What peers said about many files, in one transaction (one fsync): each `held` peer is acknowledged at its note's
   * time (`at`, else `now`; new, or its time moved forward, never back), each `gone` peer forgotten unless it
   * acknowledged after that time. Returns how many rows were written or removed.
   */
  noteHolders(notes: readonly HolderNote[], now: number): number;
  /** Records ordered by CID (cursor walks for repair and the GC plan). */
  list(query: ListQuery): FileRecord[];
  /** The CIDs alone of `list({ state, afterCid, limit })`: read from the state index, no record built. */
  listCids(query: ListQuery & { readonly state: FileState }): string[];
  /** The CIDs of pinned records (any state) after `afterCid`, in CID order, at most `limit`: no record built. */
  listPinnedCids(query: Omit<ListQuery, 'state'>): string[];
  /** Count per lifecycle state, zero for absent states. */
  counts(): LifecycleCounts;
  /** Sum of `dagBytes` over pinned records (`pinnedBytes`, spec §2.6; unknown sizes count 0). */
  pinnedBytes(): number;
  /** Temporary records with `now > expiresAt` (notes C3), soonest expiry first, at most `limit`. */
  expiredTemporaries(now: number, limit: number): FileRecord[];
  /** Temporary records oldest first by `createdAt` (watermark release, notes A.4 rule 4b), at most `limit`. */
  oldestUnconfirmed(limit: number): FileRecord[];

  /** Records a pin intent of a session (idempotent: a repeated call keeps the first time). */
  addIntent(cid: string, sessionId: string, now: number): void;
  /** Removes one intent; true when it was there. */
  removeIntent(cid: string, sessionId: string): boolean;
  /** Removes every intent of a session (rollback); returns how many there were. */
  removeSessionIntents(sessionId: string): number;
  /** Every intent, oldest first (then CID, then session). */
  intents(): PinIntent[];
  /**
   * Commits an upload or copy session in one transaction: upserts `records` and removes every intent of
   * `sessionId`. Either both happen or neither does, so after a crash a marker without a record means
   * "roll the pin back" and a record never lacks its pin decision (notes A.8, C22).
   */
  commitUpload(records: readonly FileRecord[], sessionId: string): void;

  /** Stores one GC run and drops the oldest beyond the kept count; returns the run's id. */
  recordGcRun(run: { startedAt: number; finishedAt: number; report: unknown }): number;
  /** The newest stored GC run. */
  lastGcRun<R = unknown>(): GcRunEvidence<R> | undefined;
  /** Stored GC runs, newest first. */
  gcRuns<R = unknown>(): GcRunEvidence<R>[];

  /**
   * Persisted actor state (health checkpoint, repair cursor and cycle evidence) as JSON. The value
   * carries its own version field (docs/DESIGN.md actor rule 7); the registry does not interpret it.
   */
  getState<T>(key: string): T | undefined;
  setState(key: string, value: unknown): void;
  deleteState(key: string): boolean;

  /** Closes the database; idempotent. Any other call afterwards throws. */
  close(): void;
}
