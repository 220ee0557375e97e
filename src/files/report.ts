// The replication report of an upload on a node that places no remote copies (specs/files-node.md §2.1;
// notes A.3 derivations, C14, C15): the local pinned copy is the only acknowledged one, and the network
// (this node alone) is no larger than the desired copy count, so `networkTooSmall` is true.

export interface ReplicationReport {
  readonly mode: 'quorum';
  readonly desiredCopies: number;
  readonly copies: number;
  readonly required: number;
  readonly acknowledged: number;
  readonly replicaCount: number;
  readonly cachedCount: number;
  readonly satisfied: boolean;
  readonly networkTooSmall: boolean;
  readonly failedAttemptCount: number;
  readonly attempts: ReadonlyArray<{ ok: boolean; outcome: 'stored' | 'cached' | 'failed' }>;
}

/** `desiredCopies`: the fresh placement tier's copies (1 when replication is disabled). */
export function localOnlyReport(desiredCopies: number, ackQuorum: number): ReplicationReport {
  const networkSize = 1;
  const copies = Math.min(desiredCopies, networkSize);
  const required = Math.max(1, Math.min(ackQuorum, copies));
  const acknowledged = 1;
  return {
    mode: 'quorum',
    desiredCopies,
    copies,
    required,
    acknowledged,
    replicaCount: 0,
    cachedCount: 0,
    satisfied: acknowledged >= required,
    networkTooSmall: networkSize <= desiredCopies,
    failedAttemptCount: 0,
    attempts: [],
  };
}
