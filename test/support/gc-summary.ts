// A GC run's registry summary for plan and machine tests where placement is beside the point: every confirmed file
// held here is a handover candidate (as if this node were outside every designated set), asked of one holder.

import { summarizeRecords, type GcRecordSummary } from '../../src/files/gc.js';
import type { FileRecord } from '../../src/files/types.js';

export function summaryWithEveryHeldCandidate(records: Iterable<FileRecord>): GcRecordSummary {
  const all = [...records];
  const held = all.filter((record) => record.state === 'confirmed' && record.pinned && record.heldLocally);
  return {
    ...summarizeRecords(all),
    heldConfirmed: held,
    handover: { candidates: held.map((record) => ({ cid: record.cid, holders: ['peer-holder'] })), next: undefined },
  };
}
