// GC registry summaries for plan and machine tests: the registry's reads over records in memory, and a summary in
// which every confirmed file held here is a handover candidate (placement beside the point), asked of one holder.

import type { GcRecordSummary, GcRegistryReads } from '../../src/files/gc.js';
import type { FileRecord } from '../../src/files/types.js';
import { PackedStrings } from '../../src/packed-strings.js';

const inCidOrder = (records: Iterable<FileRecord>) => [...records].sort((a, b) => (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
const pinnedBytesOf = (records: readonly FileRecord[]) => records.reduce((sum, record) => sum + (record.pinned ? Math.max(0, record.dagBytes ?? 0) : 0), 0);

/** What the registry would answer for these records (CID order, as its primary key gives them), each read as one page. */
export function readsOfRecords(records: Iterable<FileRecord>): GcRegistryReads {
  const sorted = inCidOrder(records);
  return {
    pinnedCids: () => [sorted.filter((record) => record.pinned).map((record) => record.cid)],
    pinnedBytes: () => pinnedBytesOf(sorted),
    temporaries: () => [sorted.filter((record) => record.state === 'temporary')],
    confirmed: () => [sorted.filter((record) => record.state === 'confirmed')],
  };
}

/** The summary a run would make of these records (summarizeRegistry, tested on its own), every confirmed held file a candidate. */
export function summaryWithEveryHeldCandidate(records: Iterable<FileRecord>): GcRecordSummary {
  const all = [...records];
  const sorted = inCidOrder(all);
  // In the order given: tests name the candidates' order.
  const held = all.filter((record) => record.state === 'confirmed' && record.pinned && record.heldLocally);
  return {
    pinnedCids: PackedStrings.from(sorted.filter((record) => record.pinned).map((record) => record.cid)),
    pinnedBytes: pinnedBytesOf(sorted),
    temporaries: sorted.filter((record) => record.state === 'temporary'),
    heldConfirmed: held,
    handover: { candidates: held.map((record) => ({ cid: record.cid, holders: ['peer-holder'] })), next: undefined },
  };
}
