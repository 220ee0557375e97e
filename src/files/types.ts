// Shared vocabulary of the files service (docs/specs/files-node.md §2, §3; docs/notes/files-node.md A.7, C).

/** File lifecycle states (spec §3.1; notes A.7: unpin and TTL expiry both lead to `expired`). */
export type FileState = 'temporary' | 'confirmed' | 'expired';

/** How a record came to exist: an upload, the startup pin-set walk, the operator pin route, a peer copy. */
export type RecordOrigin = 'upload' | 'backfill' | 'pin' | 'replica';

/** One row of the file registry (persisted in `<home>/<storeFolder>/registry.sqlite`). */
export interface FileRecord {
  /** The CID string as uploaded (CIDv1 base32 for uploads; CIDv0 `Qm…` kept as given). */
  readonly cid: string;
  readonly state: FileState;
  /** Whether this node holds a pin for it (false after unpin, expiry, or a handover demotion). */
  readonly pinned: boolean;
  /** Whether this node is meant to keep a copy (false after a handover demotion). */
  readonly heldLocally: boolean;
  /** Unix ms. */
  readonly createdAt: number;
  /** Unix ms; null when it does not expire (confirmed files). */
  readonly expiresAt: number | null;
  /** Unix ms; null until confirmed (notes C7). */
  readonly confirmedAt: number | null;
  /** Bytes of the file's whole DAG (root + leaves), for `pinnedBytes`; null when unknown. */
  readonly dagBytes: number | null;
  readonly origin: RecordOrigin;
}

/** Events of the file lifecycle machine (machines/files/file-lifecycle.machine.ts). */
export type FileEvent =
  | { type: 'file.confirm'; at: number }
  | { type: 'file.unpin'; at: number }
  | { type: 'file.expire'; at: number }
  | { type: 'file.repin'; at: number }
  /** The collector's handover (notes A.4 rule 4c, A.7): a confirmed file's local copy is left to its designated holders. */
  | { type: 'file.demote'; at: number };

/** Admission-limiter occupancy (spec §2.5 "Concurrency metrics"). */
export interface ConcurrencyMetrics {
  readonly uploads: { readonly active: number; readonly limit: number };
  readonly incomingCopies: { readonly active: number; readonly limit: number };
  readonly downloads: { readonly active: number; readonly limit: number; readonly perClientLimit: number };
}

/** The newest GC run as storage metrics show it (notes C-shapes, `gc.lastRun`). */
export interface GcLastRun {
  readonly startedAt: number;
  readonly durationMs: number;
  readonly dryRun: boolean;
  readonly collected: boolean;
  readonly trigger: string;
  readonly releasedCount: number;
  readonly removedBlocks: number;
  readonly errors: readonly string[];
}

/** The collector's job state in storage metrics (spec §2.6; notes C-shapes `gc`). */
export interface GcStatus {
  readonly enabled: boolean;
  readonly schedule: string;
  readonly running: boolean;
  readonly lastRun: GcLastRun | null;
}
