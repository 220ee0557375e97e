// Failure kinds of the files service, matched by class at the edge (mapFilesError in http/files/files.http.ts).

/** Discovery, idle or complete-transfer deadline passed (spec §4.2, §7: 408 `File request timed out`). */
export class FileTimeoutError extends Error {
  override readonly name = 'FileTimeoutError';
  constructor(readonly deadline: 'discovery' | 'idle' | 'complete') {
    super('File request timed out');
  }
}

/** No registry record for the CID (spec §7: 404 for status, confirm, unpin). */
export class FileNotFoundError extends Error {
  override readonly name = 'FileNotFoundError';
  constructor() {
    super('File not found');
  }
}

/** Storing the request would consume the disk reserve (spec §4.2, §7: 507 `Insufficient storage`). */
export class InsufficientStorageError extends Error {
  override readonly name = 'InsufficientStorageError';
  constructor() {
    super('Insufficient storage');
  }
}

/** A GC or repair run is already in progress (spec §4.3, §7: 409; texts of notes C10). */
export class RunInProgressError extends Error {
  override readonly name = 'RunInProgressError';
  constructor(readonly run: 'gc' | 'repair') {
    super(run === 'gc' ? 'Garbage collection is already running' : 'Replication repair is already running');
  }
}

/** A strict upload did not reach its acknowledgement quorum and was rolled back (spec §4.2, §7: 503; notes C10). */
export class QuorumNotReachedError extends Error {
  override readonly name = 'QuorumNotReachedError';
  constructor() {
    super('Replication quorum not reached');
  }
}

/**
 * A strict upload reached its quorum and was committed here, but a peer did not confirm its staged copy (spec §4.2
 * 500: "replica settlement failed; content may be partly durable; re-upload is safe"). Repair places the copy later.
 */
export class ReplicaSettlementError extends Error {
  override readonly name = 'ReplicaSettlementError';
  constructor() {
    super('a staged replica could not be settled');
  }
}

/**
 * The CID names content this node can never read as a file: its block does not decode as its codec says (a dag-pb
 * CID of raw bytes), or it is not a file (a directory). The client's mistake: 400 `Invalid CID`, never 500 (issue 14).
 */
export class UnreadableContentError extends Error {
  override readonly name = 'UnreadableContentError';
  constructor() {
    super('Invalid CID');
  }
}
