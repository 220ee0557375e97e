// The operator listener (docs/DESIGN.md, "Operators see the running system"): its own port, bound to loopback
// unless configured otherwise, every data route behind the admin key (`x-api-key`). It serves the supervision
// tree (as JSON and drawn), one actor's snapshot summary and recent events, each machine's definition (a config
// XState's createMachine accepts), Mermaid diagram and drawing, the inspection stream in @statelyai/inspect's format
// (inspect.ts) as a WebSocket and as a long poll, plus the operator page (`/`, admin.page.ts), which holds no data and
// so is the only thing served without the key: it asks the operator for the key and sends it with every call to the
// other routes.

import type { Runtime } from '../../actors/runtime.js';
import { summarizeContext } from '../../actors/inspector.js';
import { activeStateIds, machineDiagram, MACHINES, toDefinition, toMermaid } from '../../actors/statechart.js';
import { drawDiagram } from '../../src/diagram.js';
import { adminRefusal } from '../auth.js';
import { operatorPage } from './admin.page.js';
import { inspect, inspectSocket } from './inspect.js';
import { drawSupervisionTree, type TreeNode } from './supervision-diagram.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, type HttpReply, type HttpRequest, type RequestContext } from '../server.js';
import type { EngineName } from '../engine.js';
import type { WebSocketRouteOptions } from '../websocket.js';

/** The inspection socket's bounds (README "Inspection stream"); tests lower them. */
export type InspectSocketBounds = Pick<WebSocketRouteOptions, 'maxSockets' | 'maxBacklogBytes' | 'idleTimeoutSeconds'>;

export const INSPECT_SOCKET_BOUNDS: InspectSocketBounds = {
  // Inspectors are people's tools: a handful at once; more is a leak or an attack.
  maxSockets: 8,
  // Far above the present a socket gets first (every actor, each with its machine's definition: the 12 machines'
  // definitions are ~13 KB together) and above any burst of events; a reader this far behind has stopped reading.
  maxBacklogBytes: 1024 * 1024,
  // uWS counts in steps of 4 s; both engines ping a quiet peer before the timeout runs out.
  idleTimeoutSeconds: 60,
};

/** The inspection socket reads nothing: a peer's messages are dropped, and one longer than this closes it. */
const INSPECT_SOCKET_MAX_PAYLOAD = 1024;

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
  readonly inspectSocket?: Partial<InspectSocketBounds>;
}

const json = (status: number, body: unknown): HttpReply => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  body: JSON.stringify(body),
});

const svg = (body: string): HttpReply => ({ status: 200, headers: { 'content-type': 'image/svg+xml; charset=utf-8', 'cache-control': 'no-store' }, body });

/** A machine's drawing never changes while the process runs: laid out once, on first request. */
const drawings = new Map<string, Promise<string>>();
function machineSvg(id: string): Promise<string> {
  let drawing = drawings.get(id);
  if (!drawing) {
    drawing = drawDiagram(machineDiagram(MACHINES.get(id)!));
    drawing.catch(() => drawings.delete(id));
    drawings.set(id, drawing);
  }
  return drawing;
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

  /** Refuses a request that does not carry the admin key `provided`; undefined means allowed. */
  const refuse = (provided: string | undefined): HttpReply | undefined => {
    const refusal = adminRefusal(provided, options.apiKey);
    return refusal && json(refusal.status, { error: refusal.error });
  };
  const guard = (request: HttpRequest): HttpReply | undefined => refuse(request.headers['x-api-key']);
  const guarded =
    (handler: (request: HttpRequest, context: RequestContext) => HttpReply | Promise<HttpReply>) =>
    (request: HttpRequest, context: RequestContext) =>
      guard(request) ?? handler(request, context);

  const node = (systemId: string, depth = 0): TreeNode & { lastTransitions?: unknown } => {
    const record = inspector.get(systemId);
    const result: TreeNode & { lastTransitions?: unknown } = {
      systemId,
      machineId: record?.machineId,
      state: record?.stateValue,
      status: record?.status ?? 'unknown',
      restarts: record?.restarts ?? 0,
      asks: inspector.pendingAsks(systemId),
      lastTransitions: record?.lastTransitions,
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
  server.route('get', '/actors.svg', guarded(async () => svg(await drawSupervisionTree(options.roots.map((id) => node(id))))));
  // A browser's WebSocket cannot send headers, nor can Stately's createWebSocketReceiver (it takes only a URL): the
  // socket also takes the key as `?key=` (compared the same way; the logger scrubs `key=` from what it prints).
  server.webSocket('/inspect/ws', {
    ...INSPECT_SOCKET_BOUNDS,
    ...options.inspectSocket,
    maxPayloadLength: INSPECT_SOCKET_MAX_PAYLOAD,
    authorize: (request) => refuse(request.headers['x-api-key'] ?? new URLSearchParams(request.query).get('key') ?? undefined),
    open: (socket) => inspectSocket(inspector, runtime.clock, options.roots, socket),
  });
  server.route('get', '/inspect', guarded(async (request, { signal }) => json(200, await inspect(inspector, runtime.clock, options.roots, request.query, signal))));

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
        snapshot: snapshot ? { status: snapshot.status, value: snapshot.value, context: summarizeContext(snapshot.context) } : undefined,
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
          svg: `/machines/${id}.svg`,
          actors: inspector.all().filter((r) => r.machineId === id).map((r) => r.systemId),
        })),
      }),
    ),
  );

  server.route(
    'get',
    '/machines/:file',
    guarded(async (request) => {
      const file = request.params[0] ?? '';
      const match = /^(.+)\.(json|mmd|svg)$/.exec(file);
      const machine = match ? MACHINES.get(match[1]!) : undefined;
      if (!match || !machine) return json(404, { error: 'Unknown machine' });
      if (match[2] === 'json') return json(200, toDefinition(machine));
      if (match[2] === 'svg') return svg(await machineSvg(machine.id));
      // Highlight the states of the first running actor of this machine.
      const running = inspector.all().find((r) => r.machineId === machine.id && r.status === 'running');
      const active = running ? activeStateIds(machine.id, running.stateValue) : [];
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }, body: toMermaid(machine, active) };
    }),
  );

  return server;
}
