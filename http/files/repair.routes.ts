// POST /api/storage/repair (docs/specs/files-node.md §4.3, §7; docs/notes/files-node.md A.4 "Repair rules", C10, C21,
// C-shapes "Repair report", E48, E53): runs the next bounded, advancing batch of replication repair and answers the
// batch's counts with the progress of its cycle (counts only: no CID, no peer id). Admin only. A pass or a cycle in
// progress (manual or scheduled) answers 409 through mapFilesError (RunInProgressError →
// `{"error":"Replication repair is already running"}`). With replication or repair disabled the answer is 200 with
// an empty batch report: nothing is required, so nothing runs.

import { adminJson, type FilesRouteContext } from './files.http.js';

/**
 * One batch asks up to 100 files' designated holders, each call bounded by `replication.requestTimeoutMs`, and a
 * placement waits for the peer to fetch the file: minutes in a bad case. Past this bound the batch still finishes
 * and its evidence is stored (storage metrics `replication.cycle`), only the answer is lost.
 */
export const REPAIR_ASK_TIMEOUT_MS = 30 * 60_000;

export function registerRepairRoutes(context: FilesRouteContext): void {
  context.server.route(
    'post',
    '/api/storage/repair',
    context.admin(async (_request, { signal }) => {
      const report = await context.api.repair({ type: 'repair.run' }, { signal, timeoutMs: REPAIR_ASK_TIMEOUT_MS });
      return adminJson(200, report);
    }),
  );
}
