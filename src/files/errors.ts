// Failure kinds of the files service, matched by class at the edge (http/files/files.errors.ts).

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
