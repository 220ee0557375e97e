// The operator listener (docs/DESIGN.md, "Operators see the running system"): its own port, bound to loopback
// unless configured otherwise, every JSON route behind the admin key (`x-api-key`). It serves the supervision
// tree, one actor's snapshot summary and recent events, and each machine's definition as JSON and Mermaid,
// plus the operator page (`/`, admin.page.ts), which holds no data and so is the only thing served without
// the key: it asks the operator for the key and sends it with every call to the JSON routes.

import type { Runtime } from '../../actors/runtime.js';
import type { PendingAsks } from '../../actors/inspector.js';
import { activeStateIds, MACHINES, toJson, toMermaid } from '../../actors/statechart.js';
import { adminRefusal } from '../auth.js';
import { operatorPage } from './admin.page.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, type HttpReply, type HttpRequest } from '../server.js';
import type { EngineName } from '../engine.js';

export interface AdminListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly apiKey: string | undefined;
  /** systemIds of the supervision roots to draw (normally one: `root`). */
  readonly roots: readonly string[];
  /** The request counters of every listener of the process (`GET /metrics`). */
  readonly metrics?: HttpMetrics;
  /** `ADMIN_ENGINE` (http/engine.ts). */
  readonly engine?: EngineName;
}

const json = (status: number, body: unknown): HttpReply => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});

interface TreeNode {
  systemId: string;
  machineId: string | undefined;
  state: unknown;
  status: string;
  restarts: number;
  /** Asks waiting on the actor: how many, and the oldest one's age (where requests wait). */
  asks: PendingAsks;
  children?: TreeNode[];
}

export function adminServer(runtime: Runtime, options: AdminListenerOptions): HttpServer {
  const { inspector } = runtime;
  const server = new HttpServer({
    name: 'admin',
    engine: options.engine,
    host: options.host,
    port: options.port,
    logger: runtime.logger.child({ actor: 'admin.http' }),
    clock: runtime.clock,
    mapError: (error) => json(500, { error: error instanceof Error ? error.name : 'Error' }),
    notFound: (request) => guard(request) ?? json(404, { error: 'Not found' }),
    metrics: options.metrics,
  });

  /** Refuses the request unless it carries the admin key; undefined means allowed. */
  const guard = (request: HttpRequest): HttpReply | undefined => {
    const refusal = adminRefusal(request.headers['x-api-key'], options.apiKey);
    return refusal && json(refusal.status, { error: refusal.error });
  };
  const guarded = (handler: (request: HttpRequest) => HttpReply) => (request: HttpRequest) => guard(request) ?? handler(request);

  const node = (systemId: string, depth = 0): TreeNode => {
    const record = inspector.get(systemId);
    const result: TreeNode = {
      systemId,
      machineId: record?.machineId,
      state: record?.stateValue,
      status: record?.status ?? 'unknown',
      restarts: record?.restarts ?? 0,
      asks: inspector.pendingAsks(systemId),
    };
    // Depth bound: the tree is built from data, so never recurse without limit.
    if (record?.children && depth < 16) result.children = record.children.map((child) => node(child, depth + 1));
    return result;
  };

  // The page and its two static files: no key needed (no data in them), every other route is guarded.
  const page = operatorPage();
  if (page) for (const [path, reply] of page) server.route('get', path, () => reply);
  else runtime.logger.warn({ actor: 'admin.http' }, 'operator page files not found (http/admin/page); only the JSON routes are served');

  server.route('get', '/metrics', guarded(() => json(200, { routes: server.metrics.snapshot() })));

  server.route('get', '/actors', guarded(() => json(200, { roots: options.roots.map((id) => node(id)) })));

  server.route(
    'get',
    '/actors/:systemId',
    guarded((request) => {
      let systemId: string;
      try {
        systemId = decodeURIComponent(request.params[0] ?? '');
      } catch {
        return json(404, { error: 'Unknown actor' });
      }
      const record = inspector.get(systemId);
      if (!record) return json(404, { error: 'Unknown actor' });
      const ref = runtime.registry.lookup(systemId);
      const snapshot = ref?.getSnapshot() as { status?: string; value?: unknown; context?: unknown } | undefined;
      return json(200, {
        systemId,
        machineId: record.machineId,
        status: record.status,
        state: record.stateValue,
        restarts: record.restarts,
        asks: inspector.pendingAsks(systemId),
        lastError: record.lastError,
        children: record.children,
        snapshot: snapshot ? { status: snapshot.status, value: snapshot.value, context: summarize(snapshot.context) } : undefined,
        events: record.events,
      });
    }),
  );

  server.route(
    'get',
    '/machines',
    guarded(() =>
      json(200, {
        machines: [...MACHINES.keys()].map((id) => ({
          id,
          json: `/machines/${id}.json`,
          mermaid: `/machines/${id}.mmd`,
          actors: inspector.all().filter((r) => r.machineId === id).map((r) => r.systemId),
        })),
      }),
    ),
  );

  server.route(
    'get',
    '/machines/:file',
    guarded((request) => {
      const file = request.params[0] ?? '';
      const match = /^(.+)\.(json|mmd)$/.exec(file);
      const machine = match ? MACHINES.get(match[1]!) : undefined;
      if (!match || !machine) return json(404, { error: 'Unknown machine' });
      if (match[2] === 'json') return json(200, toJson(machine));
      // Highlight the states of the first running actor of this machine.
      const running = inspector.all().find((r) => r.machineId === machine.id && r.status === 'running');
      const active = running ? activeStateIds(machine.id, running.stateValue) : [];
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: toMermaid(machine, active) };
    }),
  );

  return server;
}

/** Context as operators need it: scalars as they are, collections by size (they can be large). */
function summarize(context: unknown): unknown {
  if (!context || typeof context !== 'object') return context;
  const summary: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (Array.isArray(value)) summary[key] = { items: value.length };
    else if (value && typeof value === 'object') summary[key] = { keys: Object.keys(value).length };
    else summary[key] = value;
  }
  return summary;
}
