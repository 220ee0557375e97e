// GC registry summaries for plan and machine tests: the registry's reads over records in memory, and a summary in
// which every confirmed file held here is a handover candidate (placement beside the point), asked of one holder.

import { summarizeRegistry, type GcRecordSummary, type GcRegistryReads } from '../../src/files/gc.js';
import type { FileRecord } from '../../src/files/types.js';

/** What the registry would answer for these records (CID order, as its primary key gives them). */
export function readsOfRecords(records: Iterable<FileRecord>): GcRegistryReads {
  const sorted = [...records].sort((a, b) => (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
  return {
    pinnedCids: () => sorted.filter((record) => record.pinned).map((record) => record.cid),
    pinnedBytes: () => sorted.reduce((sum, record) => sum + (record.pinned ? Math.max(0, record.dagBytes ?? 0) : 0), 0),
    temporaries: () => sorted.filter((record) => record.state === 'temporary'),
    confirmed: () => sorted.filter((record) => record.state === 'confirmed'),
  };
}

export function summaryWithEveryHeldCandidate(records: Iterable<FileRecord>): GcRecordSummary {
  const all = [...records];
  const held = all.filter((record) => record.state === 'confirmed' && record.pinned && record.heldLocally);
  return {
    ...summarizeRegistry(readsOfRecords(all)),
    heldConfirmed: held,
    handover: { candidates: held.map((record) => ({ cid: record.cid, holders: ['peer-holder'] })), next: undefined },
  };
}
