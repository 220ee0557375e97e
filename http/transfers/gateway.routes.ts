// The PostgREST-compatible read gateway's edge (spec A §4.1, §7; notes B.2, F.5–F.8). Every path `/<relation>` of
// the exposed schema is an endpoint; what a read means is decided by src/transfers/read.ts, this file only routes:
//
//   GET, HEAD   /<relation>   read (HEAD: the same status and headers, no body)
//   OPTIONS     /<relation>   200, empty body, Allow: OPTIONS,GET,HEAD (the gateway is read-only)
//   other verbs               405 PGRST117 with Allow
//   unknown relation          404 PGRST205 (and the schema cache is asked to reload: it may be new)
//   GET /                     a minimal OpenAPI 2.0 description of the relations (notes F.6)
//
// Errors use the gateway's wire contract {code, details, hint, message} (one table: gatewayErrorReply).

import type { GatewayView } from '../../actors/transfers/gateway.js';
import type { Runtime } from '../../actors/runtime.js';
import { scrubSecrets } from '../../src/logger.js';
import { gatewayErrorReply, methodNotAllowed, relationNotFound, GatewayError } from '../../src/transfers/gateway-errors.js';
import { decodePathSegment } from '../../src/transfers/query-string.js';
import type { GatewayReply } from '../../src/transfers/read.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, type HttpReply, type HttpRequest } from '../server.js';
import type { EngineName } from '../engine.js';

export interface GatewayListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly schema: string;
  readonly version: string;
  readonly view: GatewayView;
  readonly metrics?: HttpMetrics;
  /** `HTTP_ENGINE` (http/engine.ts). */
  readonly engine?: EngineName;
}

const READ_VERBS = 'OPTIONS,GET,HEAD';

/** PostgREST answers 503 PGRST002 while its schema cache is not loaded yet. */
class SchemaCacheNotReady extends GatewayError {
  constructor() {
    super({ status: 503, code: 'PGRST002', message: 'Could not query the database for the schema cache. Retrying.', details: null, hint: null });
  }
}

export function gatewayServer(runtime: Runtime, options: GatewayListenerOptions): HttpServer {
  const logger = runtime.logger.child({ actor: 'transfers.http' });
  const { view, schema } = options;
  const toHttp = (reply: GatewayReply, method: string): HttpReply => ({
    status: reply.status,
    headers: reply.headers,
    body: reply.body,
    withoutBody: method === 'HEAD',
  });
  const server = new HttpServer({
    name: 'transfers',
    engine: options.engine,
    host: options.host,
    port: options.port,
    logger,
    metrics: options.metrics,
    mapError: (error, request) => {
      const reply = gatewayErrorReply(error);
      if (reply.status >= 500) logger.warn({ status: reply.status, reason: scrubSecrets(error instanceof Error ? `${error.name}: ${error.message}` : String(error)) }, 'read failed');
      return toHttp(reply, request.method);
    },
    notFound: (request) => toHttp(gatewayErrorReply(relationNotFound(schema, request.path.slice(1), view.relations() ?? [])), request.method),
  });

  /** The relation a path names, after the schema cache said it exists. */
  const relationOf = (request: HttpRequest): string => {
    // Decoded as PostgREST's pathInfo is (decodePathSegment): bad percent-encoding is never a 500 here, `/%zz` is the
    // unknown relation `%zz` (404 PGRST205), as from PostgREST itself (issue 15).
    const name = decodePathSegment(request.params[0] ?? '');
    const relations = view.relations();
    if (relations === null) throw new SchemaCacheNotReady();
    if (!relations.includes(name)) {
      view.reload();
      throw relationNotFound(schema, name, relations);
    }
    return name;
  };

  const read = async (request: HttpRequest): Promise<HttpReply> => {
    const relation = relationOf(request);
    const method = request.method === 'HEAD' ? 'HEAD' : 'GET';
    const reply = await view.read({
      method,
      schema,
      relation,
      query: request.query,
      range: request.headers.range,
      prefer: request.headers.prefer,
    });
    return toHttp(reply, method);
  };

  server.route('get', '/', () => ({
    status: 200,
    headers: { 'content-type': 'application/openapi+json; charset=utf-8' },
    body: openApi(view.relations() ?? [], options.version),
  }));
  server.route('get', '/:relation', read);
  server.route('head', '/:relation', read);
  server.route('options', '/:relation', (request) => {
    relationOf(request);
    return { status: 200, headers: { allow: READ_VERBS }, body: '' };
  });
  // Write verbs and anything else on a relation path (notes F.5): 405 with Allow, and nothing touches the database.
  server.route('any', '/:relation', (request) => {
    const reply = gatewayErrorReply(methodNotAllowed(request.method));
    return { status: reply.status, headers: { ...reply.headers, allow: READ_VERBS }, body: reply.body };
  });
  return server;
}

/** notes F.6: PostgREST serves an OpenAPI description at `/`; this one lists the relations and their read verb. */
function openApi(relations: readonly string[], version: string): string {
  const paths = Object.fromEntries(relations.map((name) => [`/${name}`, { get: { tags: [name], produces: ['application/json'], responses: { 200: { description: 'OK' }, 206: { description: 'Partial Content' } } } }]));
  return JSON.stringify({ swagger: '2.0', info: { title: 'adm-infra transfers gateway', description: 'PostgREST-compatible read API', version }, consumes: ['application/json'], produces: ['application/json'], paths });
}
