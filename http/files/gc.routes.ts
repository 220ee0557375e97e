// POST /api/storage/gc (docs/specs/files-node.md §2.8, §4.3, §7; docs/notes/files-node.md A.4, C10, E46-E48): one
// garbage-collection run on request, answered with its full report. Admin only; `dryRun` and `force` are query
// booleans. A run already in progress (manual or scheduled) answers 409 through mapFilesError
// (RunInProgressError → `{"error":"Garbage collection is already running"}`). Disabling scheduled collection
// (`storage.gc.enabled: false`) leaves this endpoint working.

import { adminJsonInPieces, type FilesRouteContext } from './files.http.js';

/**
 * A run walks the registry and, when it deletes, the blockstore: minutes on a large store. The default ask bound
 * (discovery + 5 s) would answer 500 while the run goes on; past this bound the run still finishes and is
 * recorded (storage metrics `gc.lastRun`), only the answer is lost.
 */
export const GC_ASK_TIMEOUT_MS = 30 * 60_000;

/** notes A.4: query booleans are true only for the literal `true` (the original's `req.query.dryRun === 'true'`). */
export function queryFlag(query: string, name: string): boolean {
  return new URLSearchParams(query).get(name) === 'true';
}

export function registerGcRoutes(context: FilesRouteContext): void {
  context.server.route(
    'post',
    '/api/storage/gc',
    context.admin(async (request, { signal }) => {
      const dryRun = queryFlag(request.query, 'dryRun');
      const force = queryFlag(request.query, 'force');
      const report = await context.api.gc({ type: 'gc.run', dryRun, force }, { signal, timeoutMs: GC_ASK_TIMEOUT_MS });
      // 56 MB of JSON at a million files (every retained CID): sent in pieces, then its pages go back to the collector.
      return adminJsonInPieces(200, report, () => report.retainedCids.release());
    }),
  );
}
