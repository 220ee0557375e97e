// The PostgREST-compatible read gateway's edge (spec A §4.1, §7; notes B.2, F.5–F.8). Every path `/<relation>` of
// an exposed schema is an endpoint; what a read means is decided by src/transfers/read.ts, this file only routes:
//
//   GET, HEAD   /<relation>   read (HEAD: the same status and headers, no body); Accept picks the representation
//   OPTIONS     /<relation>   200, empty body, Allow: OPTIONS,GET,HEAD (the gateway is read-only)
//   other verbs               405 PGRST117 with Allow
//   unknown relation          404 PGRST205 (and the schema cache is asked to reload: it may be new)
//   /rpc/<function>           404 PGRST202: the gateway serves no functions (PostgREST's not-found answer)
//   /<a>/<b>…                 404 PGRST125: PostgREST has no nested paths
//   GET, HEAD, OPTIONS /      a minimal OpenAPI 2.0 description of the relations (notes F.6); Allow for OPTIONS
//
// The schema is the first of PGRST_DB_SCHEMAS unless Accept-Profile (GET, HEAD) or Content-Profile (other verbs)
// names another exposed one (406 PGRST106 otherwise); with several schemas every answer says which in
// Content-Profile. Errors use the gateway's wire contract {code, details, hint, message} (gatewayErrorReply).

import type { TransfersApi } from '../../actors/transfers/api.js';
import type { Runtime } from '../../actors/runtime.js';
import { scrubSecrets } from '../../src/logger.js';
import { functionNotFound, gatewayErrorReply, invalidJsonBody, invalidPath, methodNotAllowed, relationNotFound, rpcMethodNotAllowed, GatewayError } from '../../src/transfers/gateway-errors.js';
import { mediaNotAvailable, negotiateSchema, parseAccept } from '../../src/transfers/negotiate.js';
import { decodePathSegment, parseQueryString } from '../../src/transfers/query-string.js';
import type { GatewayReply } from '../../src/transfers/read.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, type HttpReply, type HttpRequest, type RequestContext } from '../server.js';
import type { EngineName } from '../engine.js';

export interface GatewayListenerOptions {
  readonly host: string;
  readonly port: number;
  /** PGRST_DB_SCHEMAS: the first is the default, the others are chosen by profile headers. */
  readonly schemas: readonly string[];
  readonly version: string;
  readonly api: TransfersApi;
  readonly metrics?: HttpMetrics;
  /** `HTTP_ENGINE` (http/engine.ts). */
  readonly engine?: EngineName;
}

const READ_VERBS = 'OPTIONS,GET,HEAD';

/** A POST to /rpc/<function> is read only to name its arguments in the 404 (PostgREST's message lists them). */
const RPC_BODY_MAX_BYTES = 1024 * 1024;

/** PostgREST answers 503 PGRST002 while its schema cache is not loaded yet. */
class SchemaCacheNotReady extends GatewayError {
  constructor() {
    super({ status: 503, code: 'PGRST002', message: 'Could not query the database for the schema cache. Retrying.', details: null, hint: null });
  }
}

/** Query parameters that shape a call rather than name an argument (PostgREST's reserved keys). */
const RESERVED_RPC_KEYS = new Set(['select', 'columns', 'order', 'limit', 'offset', 'and', 'or', 'not.and', 'not.or', 'on_conflict']);

export function gatewayServer(runtime: Runtime, options: GatewayListenerOptions): HttpServer {
  const logger = runtime.logger.child({ actor: 'transfers.http' });
  const { api, schemas } = options;
  // With several schemas every answer names the one it used (PostgREST's Content-Profile), with one it never does.
  const profiled = schemas.length > 1;
  const toHttp = (reply: GatewayReply, method: string, schema?: string): HttpReply => ({
    status: reply.status,
    headers: profiled && schema !== undefined ? { ...reply.headers, 'Content-Profile': schema } : reply.headers,
    body: reply.body,
    withoutBody: method === 'HEAD',
  });
  const schemaOf = (request: HttpRequest) => negotiateSchema(request.method, request.headers, schemas);
  const server = new HttpServer({
    name: 'transfers',
    engine: options.engine,
    host: options.host,
    port: options.port,
    logger,
    clock: runtime.clock,
    metrics: options.metrics,
    mapError: (error, request) => {
      const reply = gatewayErrorReply(error);
      if (reply.status >= 500) logger.warn({ status: reply.status, reason: scrubSecrets(error instanceof Error ? `${error.name}: ${error.message}` : String(error)) }, 'read failed');
      return toHttp(reply, request.method);
    },
    // Paths no route matched: more than one segment (never an endpoint in PostgREST; a trailing `/` makes an empty
    // second segment there too), else a relation not found.
    notFound: (request) => {
      const segments = request.path.slice(1).split('/');
      if (segments.length > 1) return toHttp(gatewayErrorReply(invalidPath()), request.method);
      const schema = schemaOf(request);
      return toHttp(gatewayErrorReply(relationNotFound(schema, decodePathSegment(segments[0] ?? ''), api.relations()?.[schema] ?? [])), request.method);
    },
  });

  /** The schema and relation a path names, after the schema cache said the relation exists. */
  const relationOf = (request: HttpRequest): { schema: string; relation: string } => {
    const schema = schemaOf(request);
    // Decoded as PostgREST's pathInfo is (decodePathSegment): bad percent-encoding is never a 500 here, `/%zz` is the
    // unknown relation `%zz` (404 PGRST205), as from PostgREST itself (issue 15).
    const relation = decodePathSegment(request.params[0] ?? '');
    const relations = api.relations();
    if (relations === null) throw new SchemaCacheNotReady();
    const known = relations[schema] ?? [];
    if (!known.includes(relation)) {
      api.reload();
      throw relationNotFound(schema, relation, known);
    }
    return { schema, relation };
  };

  const read = async (request: HttpRequest, { cancellation }: RequestContext): Promise<HttpReply> => {
    const { schema, relation } = relationOf(request);
    const method = request.method === 'HEAD' ? 'HEAD' : 'GET';
    const { range, prefer, accept } = request.headers;
    const reply = await api.read({ method, schema, relation, query: request.query, range, prefer, accept, cancellation });
    return toHttp(reply, method, schema);
  };

  // The root: PostgREST's OpenAPI description of the schema (its */* and application/openapi+json; JSON accepted too).
  const root = (request: HttpRequest): HttpReply => {
    const schema = schemaOf(request);
    const accept = request.headers.accept;
    if (accept !== undefined && accept.trim() !== '') {
      const accepted = parseAccept(accept);
      if (!accepted.some(({ type }) => ['*/*', 'application/openapi+json', 'application/json'].includes(type.toLowerCase()))) throw mediaNotAvailable(accepted.map(({ type }) => type));
    }
    const body = openApi(api.relations()?.[schema] ?? [], options.version);
    return toHttp({ status: 200, headers: { 'Content-Type': 'application/openapi+json; charset=utf-8' }, body }, request.method, schema);
  };

  // /rpc/<function>: no function is served, so every call is PostgREST's "could not find the function" with the
  // arguments it would have looked for (query keys for GET/HEAD, the JSON body's keys for POST).
  const rpc = (request: HttpRequest): HttpReply => {
    const method = request.method;
    if (method === 'PUT' || method === 'PATCH' || method === 'DELETE') throw rpcMethodNotAllowed(method);
    if (!['GET', 'HEAD', 'POST', 'OPTIONS'].includes(method)) throw methodNotAllowed(method);
    const schema = schemaOf(request);
    const name = decodePathSegment(request.params[0] ?? '');
    if (method !== 'POST') {
      const keys = parseQueryString(request.query)
        .map((pair) => pair.key)
        .filter((key) => !RESERVED_RPC_KEYS.has(key));
      throw functionNotFound({ schema, name, argumentKeys: keys, body: 'none' });
    }
    const contentType = (request.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
    if (contentType === 'text/plain' || contentType === 'text/xml' || contentType === 'application/octet-stream') {
      throw functionNotFound({ schema, name, argumentKeys: [], body: contentType });
    }
    throw functionNotFound({ schema, name, argumentKeys: jsonKeys(request.body ?? Buffer.alloc(0)), body: 'application/json' });
  };

  server.route('get', '/', root);
  server.route('head', '/', root);
  server.route('options', '/', (request) => {
    schemaOf(request);
    return { status: 200, headers: { allow: READ_VERBS }, body: '' };
  });
  server.route('post', '/rpc/:function', rpc, { body: { maxBytes: RPC_BODY_MAX_BYTES } });
  server.route('any', '/rpc/:function', rpc);
  server.route('get', '/:relation', read);
  server.route('head', '/:relation', read);
  server.route('options', '/:relation', (request) => {
    const { schema } = relationOf(request);
    return toHttp({ status: 200, headers: { allow: READ_VERBS }, body: '' }, 'OPTIONS', schema);
  });
  // Write verbs and anything else on a relation path (notes F.5): 405 with Allow, and nothing touches the database.
  server.route('any', '/:relation', (request) => {
    const reply = gatewayErrorReply(methodNotAllowed(request.method));
    return { status: reply.status, headers: { ...reply.headers, allow: READ_VERBS }, body: reply.body };
  });
  return server;
}

/** The argument names of a JSON call body, sorted as PostgREST lists them (an array: every object's keys). */
function jsonKeys(body: Buffer): string[] {
  if (body.length === 0) return [];
  let payload: unknown;
  try {
    payload = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidJsonBody();
  }
  const objects = Array.isArray(payload) ? payload : [payload];
  const keys = new Set<string>();
  for (const item of objects) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw invalidJsonBody();
    for (const key of Object.keys(item)) keys.add(key);
  }
  return [...keys].sort();
}

/** notes F.6: PostgREST serves an OpenAPI description at `/`; this one lists the relations and their read verb. */
function openApi(relations: readonly string[], version: string): string {
  const paths = Object.fromEntries(relations.map((name) => [`/${name}`, { get: { tags: [name], produces: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'], responses: { 200: { description: 'OK' }, 206: { description: 'Partial Content' } } } }]));
  return JSON.stringify({ swagger: '2.0', info: { title: 'adm-infra transfers gateway', description: 'PostgREST-compatible read API', version }, consumes: ['application/json'], produces: ['application/json', 'application/vnd.pgrst.object+json', 'text/csv'], paths });
}
