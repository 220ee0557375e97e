// Pure helpers around one file's lifecycle record (docs/specs/files-node.md §2.2, §3.1, §9.6;
// docs/notes/files-node.md A.7, C2, C3, C7). No xstate here: the transitions themselves live in
// machines/files/file-lifecycle.machine.ts (`applyFileEvent`), which uses these predicates.

import type { FileRecord, FileState, RecordOrigin } from './types.js';

export interface UploadRecordOptions {
  /** `storage.confirmationRequired` (default false): uploads start `temporary` when true (notes C2). */
  readonly confirmationRequired: boolean;
  /** `temporaryTtlMs` (default 24 h): lifetime of a temporary file. */
  readonly temporaryTtlMs: number;
  /** Bytes of the whole DAG, or null when unknown. */
  readonly dagBytes: number | null;
}

/**
 * The record an upload commits (notes A.7 first two rows): `confirmed` with `confirmedAt = createdAt`
 * by default; `temporary` with `expiresAt = createdAt + temporaryTtlMs` when confirmation is required
 * (notes C2). Either way this node pins it and keeps the copy.
 */
export function newUploadRecord(cid: string, now: number, options: UploadRecordOptions): FileRecord {
  if (options.confirmationRequired) {
    return {
      cid,
      state: 'temporary',
      pinned: true,
      heldLocally: true,
      createdAt: now,
      expiresAt: now + options.temporaryTtlMs,
      confirmedAt: null,
      dagBytes: options.dagBytes,
      origin: 'upload',
    };
  }
  return confirmedRecord(cid, now, 'upload', options.dagBytes);
}

/** A confirmed, pinned, locally held record created at `now` (uploads, operator pins, peer copies). */
export function confirmedRecord(cid: string, now: number, origin: RecordOrigin, dagBytes: number | null): FileRecord {
  return {
    cid,
    state: 'confirmed',
    pinned: true,
    heldLocally: true,
    createdAt: now,
    expiresAt: null,
    confirmedAt: now,
    dagBytes,
    origin,
  };
}

/**
 * A pin found by the startup pin-set walk with no record (spec §3.1 row 2, §9.6): confirmed, "dated at
 * the backfill" — createdAt and confirmedAt are the walk's time, so a legacy file counts as fresh for
 * placement and repair copies it widely.
 */
export function backfillRecord(cid: string, now: number, dagBytes: number | null): FileRecord {
  return confirmedRecord(cid, now, 'backfill', dagBytes);
}

/**
 * Whether a temporary file's TTL has run out at `now` (notes C3: strictly `now > expiresAt`, so a file
 * is still temporary at the exact expiry instant). A record with no expiry never expires.
 */
export function isPastExpiry(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && now > expiresAt;
}

/** Replication figures of the public status (src/files/placement.ts `statusReplication`). */
export interface StatusReplication {
  readonly acknowledged: number;
  readonly required: number;
}

/** Body of `GET /api/file/{cid}/status`, confirm and unpin (spec §2.2; notes A.3, C6). Key order is the wire order. */
export interface FileStatus {
  readonly cid: string;
  readonly state: FileState;
  readonly pinned: boolean;
  readonly createdAt: number;
  readonly expiresAt: number | null;
  /** Null until confirmed (notes C7: the spec types it integer, but an unconfirmed file has no such time). */
  readonly confirmedAt: number | null;
  readonly replication: { readonly acknowledged: number; readonly required: number; readonly heldLocally: boolean };
}

/**
 * The public status of a record: no filename, no peer identity (spec §2.2). The replication figures are always
 * the caller's (there is no default: a guessed "1 of 1" would misreport every replicated file).
 */
export function publicStatus(record: FileRecord, replication: StatusReplication): FileStatus {
  return {
    cid: record.cid,
    state: record.state,
    pinned: record.pinned,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    confirmedAt: record.confirmedAt,
    replication: {
      acknowledged: replication.acknowledged,
      required: replication.required,
      heldLocally: record.heldLocally,
    },
  };
}

/** Count per lifecycle state (`files` of the storage metrics, spec §2.6). */
export interface LifecycleCounts {
  temporary: number;
  confirmed: number;
  expired: number;
}

export function emptyLifecycleCounts(): LifecycleCounts {
  return { temporary: 0, confirmed: 0, expired: 0 };
}

export function lifecycleCounts(records: Iterable<Pick<FileRecord, 'state'>>): LifecycleCounts {
  const counts = emptyLifecycleCounts();
  for (const record of records) counts[record.state] += 1;
  return counts;
}
