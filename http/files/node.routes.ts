// Node and storage-state routes (docs/specs/files-node.md §2.3-§2.6, §4.1, §4.3 metrics, §5; docs/notes/files-node.md A.2,
// A.2.1, A.4, C16, E4, E14, E15, E18, E50). Every value comes from the files actors: the health checkpoint and
// the node's identity from `files.health`, sizes and counts from the last scan of `files.disk`.
//
//   GET /api/node/health     public   200 always, the Health object
//   GET /api/node/info       public   legacy info, no peer identity or topology
//   GET /api/node/details    admin    info + identity, byte totals, health, HTTP totals, admission occupancy
//   GET /api/storage/metrics public   the cached storage metrics (counts and byte totals, no CID/filename/peer id)

import { healthSettings } from '../../actors/files/health.actor.js';
import { NodeNotRunningError } from '../../actors/files/node.js';
import { FILES_VERSION } from '../../src/files/version.js';
import { initialSnapshot, readHealth, type HealthObject } from '../../src/files/health.js';
import { legacyNodeInfo, storageMetrics } from '../../src/files/storage-metrics.js';
import { adminJson, json, withHeaders, type FilesRouteContext } from './files.http.js';

/**
 * Both actors answer from memory (the disk actor from its cached scan, health from its last attempt plus that
 * cache), so a few seconds only ever pass when an actor is restarting or the event loop is saturated.
 */
const NODE_ASK_MS = 3_000;

/** A monitor must see each read as it is produced (spec §3.2: states change on read), never a cached copy. */
const NO_STORE = { 'cache-control': 'no-store' };

export function registerNodeRoutes(context: FilesRouteContext): void {
  const { server, config, runtime } = context;
  const clock = runtime.clock;
  const { settings, membershipVersion } = healthSettings(config);
  const metricsSettings = { diskReserveBytes: config.storage.diskReserveBytes, replication: config.replication };
  // The height this listener last reported: the fallback below must not show a persisted height going backwards.
  let lastHeight = 0;

  const { api } = context;
  const disk = (signal: AbortSignal) => api.disk({ type: 'disk.snapshot' }, { signal, timeoutMs: NODE_ASK_MS });
  const identity = (signal: AbortSignal) => api.health({ type: 'node.identity' }, { signal, timeoutMs: NODE_ASK_MS });

  /**
   * The Health object, or — when the health actor cannot answer (restarting, overloaded) — an honest stand-in:
   * `stale`, "readiness evidence is unusable" (spec §3.2), every prerequisite unproven. Not `starting`: that state
   * means the startup walk has not finished, which this listener cannot know. Still 200: the spec's "200 always,
   * consumers must read `state`".
   */
  const health = async (signal: AbortSignal): Promise<HealthObject> => {
    try {
      const answer = await api.health({ type: 'health.read' }, { signal, timeoutMs: NODE_ASK_MS });
      lastHeight = Math.max(lastHeight, answer.height);
      return answer;
    } catch (error) {
      if (signal.aborted) throw error;
      context.logger.warn({ err: error }, 'health could not be read; answering stale');
      const now = clock.now();
      const unproven = { ...initialSnapshot(null, settings, membershipVersion, now), state: 'stale' as const, height: lastHeight };
      return readHealth(unproven, null, settings, now, { version: FILES_VERSION, startedAt: now - Math.round(process.uptime() * 1000) });
    }
  };

  server.route('get', '/api/node/health', async (_request, { signal }) => json(200, await health(signal), NO_STORE));

  // notes A.9: info and metrics count against the read rate limit; health never does (monitors poll it).
  server.route('get', '/api/node/info', async (request, { signal }) => {
    const rate = context.limitRate('read', context.clientKey(request));
    const [snapshot, node] = await Promise.all([disk(signal), identity(signal)]);
    return withHeaders(json(200, legacyNodeInfo(snapshot.measurement, node.runtimeStatus, FILES_VERSION, clock.now())), rate);
  });

  server.route(
    'get',
    '/api/node/details',
    context.admin(async (_request, { signal }) => {
      const [snapshot, node, healthObject] = await Promise.all([disk(signal), identity(signal), health(signal)]);
      // No node runs only while the runtime restarts or stops: there is no identity to report.
      if (node.peerId === null) throw new NodeNotRunningError();
      const now = clock.now();
      const metrics = storageMetrics(snapshot.measurement, snapshot.gc, metricsSettings, now, snapshot.replication);
      return adminJson(200, {
        ...legacyNodeInfo(snapshot.measurement, node.runtimeStatus, FILES_VERSION, now),
        peerId: node.peerId,
        multiAddresses: node.multiAddresses,
        pinnedBytes: metrics.pinnedBytes,
        reclaimableBytes: metrics.reclaimableBytes,
        availableBytes: metrics.availableBytes,
        reservedBytes: metrics.reservedBytes,
        health: healthObject,
        http: server.totals.snapshot(),
        concurrency: context.admission.snapshot(),
      });
    }),
  );

  server.route('get', '/api/storage/metrics', async (request, { signal }) => {
    const rate = context.limitRate('read', context.clientKey(request));
    const snapshot = await disk(signal);
    return withHeaders(json(200, storageMetrics(snapshot.measurement, snapshot.gc, metricsSettings, clock.now(), snapshot.replication)), rate);
  });
}
