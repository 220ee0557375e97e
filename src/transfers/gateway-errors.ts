// The gateway's wire contract for errors (spec A §7, notes B.2): one table from failure kind to HTTP status, every
// body `{"code","details","hint","message"}` in PostgREST's key order with null for absent fields. PostgreSQL errors
// pass through with their SQLSTATE and are mapped by PostgREST's table (Error.hs pgErrorStatus); connection failures
// become PGRST000/001/003. Callers match on `name` / `code`, never on message text (docs/DESIGN.md, Style).

/** What the HTTP edge writes: status, headers and body ('' for HEAD). */
export interface GatewayReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface GatewayErrorInit {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly details?: string | null;
  readonly hint?: string | null;
  /** Extra response headers, e.g. the `Content-Range` of a 416 whose count is known (notes B.2). */
  readonly headers?: Readonly<Record<string, string>>;
}

export class GatewayError extends Error {
  override readonly name: string = 'GatewayError';
  readonly status: number;
  readonly code: string;
  readonly details: string | null;
  readonly hint: string | null;
  readonly headers: Readonly<Record<string, string>>;
  constructor(init: GatewayErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.details = init.details ?? null;
    this.hint = init.hint ?? null;
    this.headers = init.headers ?? {};
  }
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

// ---- the errors the read pipeline raises ------------------------------------------------------------------------

/** PGRST100: a query parameter does not parse; message and details are Parsec's (notes B.1). */
export function queryParseError(message: string, details: string): GatewayError {
  return new GatewayError({ status: 400, code: 'PGRST100', message, details });
}

/**
 * PGRST123: an aggregate in `select` (`count()`, `amount.sum()`, …). PostgREST refuses them unless
 * db-aggregates-enabled is on, which it is not by default (and aggregates over an unbounded table are a cheap way to
 * load the database), so a stock PostgREST answers exactly this (Error.hs AggregatesNotAllowed).
 */
export function aggregatesNotAllowed(): GatewayError {
  return new GatewayError({ status: 400, code: 'PGRST123', message: 'Use of aggregate functions is not allowed', details: null, hint: null });
}

/** PGRST100 for grammar PostgREST accepts but this gateway does not serve (casts to non-type names). */
export function unsupportedFeature(message: string, details: string | null = null, hint: string | null = null): GatewayError {
  return new GatewayError({ status: 400, code: 'PGRST100', message, details, hint });
}

/**
 * PGRST108: a filter, order or limit names an embedded resource the request does not embed. Wording of PostgREST's
 * Error.hs (ApiRequestError NotEmbedded, v12 on): no details, the hint points at `select`.
 */
export function notEmbedded(name: string): GatewayError {
  return new GatewayError({
    status: 400,
    code: 'PGRST108',
    message: `'${name}' is not an embedded resource in this request`,
    hint: `Verify that '${name}' is included in the 'select' query parameter.`,
  });
}

/**
 * PGRST200: an embedded resource (`select=*,other(*)`) with no relationship to the relation read. This gateway
 * knows no relationships, so every embed ends here, as it would in PostgREST on a schema without foreign keys.
 * Texts of PostgREST's Error.hs (SchemaCacheError NoRelBetween); its hint suggests near relation names from the
 * relationships it knows, so with none it is null.
 */
export function noRelationship(schema: string, relation: string, embedded: string, embedHint?: string): GatewayError {
  const using = embedHint === undefined ? '' : `' using the hint '${embedHint}`;
  return new GatewayError({
    status: 400,
    code: 'PGRST200',
    message: `Could not find a relationship between '${relation}' and '${embedded}' in the schema cache`,
    details: `Searched for a foreign key relationship between '${relation}' and '${embedded}${using}' in the schema '${schema}', but no matches were found.`,
  });
}

const RANGE_NOT_SATISFIABLE = 'Requested range not satisfiable';

/** PGRST103 for `Range: 1-0` (notes B.2, exact body of RangeSpec.hs). */
export function rangeLowerAboveUpper(): GatewayError {
  return new GatewayError({
    status: 416,
    code: 'PGRST103',
    message: RANGE_NOT_SATISFIABLE,
    details: 'The lower boundary must be lower than or equal to the upper boundary in the Range header.',
  });
}

/** PGRST103 for `limit=-1` (and, as in PostgREST, any other empty window that is not `limit=0`). */
export function negativeLimit(): GatewayError {
  return new GatewayError({ status: 416, code: 'PGRST103', message: RANGE_NOT_SATISFIABLE, details: 'Limit should be greater than or equal to zero.' });
}

/** PGRST103 when a count shows the first requested row is past the end (notes B.2 status rule). */
export function offsetBeyondTotal(offset: bigint, total: bigint): GatewayError {
  return new GatewayError({
    status: 416,
    code: 'PGRST103',
    message: RANGE_NOT_SATISFIABLE,
    details: `An offset of ${offset} was requested, but there are only ${total} rows.`,
    headers: { 'Content-Range': `*/${total}` },
  });
}

/** notes F.3: the operator's MAX_OFFSET cap. */
export function offsetTooLarge(maxOffset: number): GatewayError {
  return new GatewayError({ status: 400, code: 'PGRST100', message: 'offset too large', details: `max offset is ${maxOffset}`, hint: 'use keyset pagination' });
}

/** PGRST122: `Prefer: handling=strict` with preferences PostgREST does not know (notes B.2). */
export function invalidPreferences(preferences: readonly string[]): GatewayError {
  return new GatewayError({
    status: 400,
    code: 'PGRST122',
    message: 'Invalid preferences given with handling=strict',
    details: `Invalid preferences: ${preferences.join(', ')}`,
  });
}

/** 405 PGRST117 for verbs PostgREST does not know (notes B.2, F.5). */
export function methodNotAllowed(method: string): GatewayError {
  return new GatewayError({ status: 405, code: 'PGRST117', message: `Unsupported HTTP method: ${method}` });
}

/** 405 PGRST101: the write verbs on /rpc/<function> (PostgREST's InvalidRpcMethod). */
export function rpcMethodNotAllowed(method: string): GatewayError {
  return new GatewayError({ status: 405, code: 'PGRST101', message: `Cannot use the ${method} method on RPC` });
}

/** 400 PGRST102: a call body that is not JSON (or not objects). */
export function invalidJsonBody(): GatewayError {
  return new GatewayError({ status: 400, code: 'PGRST102', message: 'Empty or invalid json' });
}

/** 404 PGRST125: PostgREST has no nested paths (`/a/b`); only `/<relation>` and `/rpc/<function>`. */
export function invalidPath(): GatewayError {
  return new GatewayError({ status: 404, code: 'PGRST125', message: 'Invalid path specified in request URL' });
}

export interface FunctionLookup {
  readonly schema: string;
  readonly name: string;
  /** The argument names the call carried (query keys, or a JSON body's keys), sorted. */
  readonly argumentKeys: readonly string[];
  /** How the arguments came: in the query string, a JSON body, or one unnamed text/xml/bytea body. */
  readonly body: 'none' | 'application/json' | 'text/plain' | 'text/xml' | 'application/octet-stream';
}

const SINGLE_UNNAMED: Readonly<Record<string, string>> = { 'text/plain': 'text', 'text/xml': 'xml', 'application/octet-stream': 'bytea' };

/**
 * 404 PGRST202, PostgREST's NoRpc texts: the gateway exposes no functions, so every /rpc/<function> is not found
 * (no hint: there is no function to suggest).
 */
export function functionNotFound(lookup: FunctionLookup): GatewayError {
  const fn = `${lookup.schema}.${lookup.name}`;
  const keys = [...new Set(lookup.argumentKeys)].sort();
  const unnamed = SINGLE_UNNAMED[lookup.body];
  const withParameters = keys.length === 0 ? ' without parameters' : ` with parameter${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
  const detail = unnamed !== undefined ? ` with a single unnamed ${unnamed} parameter` : lookup.body === 'application/json' ? `${withParameters} or with a single unnamed json/jsonb parameter` : withParameters;
  return new GatewayError({
    status: 404,
    code: 'PGRST202',
    message: `Could not find the function ${fn}${unnamed !== undefined ? '' : keys.length === 0 ? ' without parameters' : `(${keys.join(', ')})`} in the schema cache`,
    details: `Searched for the function ${fn}${detail}, but no matches were found in the schema cache.`,
  });
}

/** 404 PGRST205 with PostgREST's fuzzy "Perhaps you meant" hint (notes B.2, ErrorSpec.hs). */
export function relationNotFound(schema: string, name: string, known: readonly string[]): GatewayError {
  const closest = closestName(name, known);
  return new GatewayError({
    status: 404,
    code: 'PGRST205',
    message: `Could not find the table '${schema}.${name}' in the schema cache`,
    hint: closest === undefined ? null : `Perhaps you meant the table '${schema}.${closest}'`,
  });
}

// ---- fuzzy matching for the PGRST205 hint -----------------------------------------------------------------------
// PostgREST uses a FuzzySet: trigram, then bigram, cosine candidates (the best 50) rescored by a Levenshtein ratio
// 1 - distance / longer length, the best one at or above a minimum score. PostgREST raised that minimum for table
// hints from the library's 0.33 to 0.75 (Error.hs getFuzzyHint, issue #4675: unrelated names were suggested and
// table names could be enumerated): `projectx` (0.875) and `projecxx` (0.75) suggest `projects`, `projxxxx` (0.5)
// and `non_existent_table` do not (ErrorSpec.hs). A schema of 500 or more relations gets no hint at all
// (SchemaCache.hs maxDbTablesForFuzzySearch: no fuzzy index is built for it).

const MIN_MATCH_SCORE = 0.75;
const MAX_RELATIONS_FOR_HINT = 500;

function grams(value: string, size: number): Map<string, number> {
  const simplified = `-${value.toLowerCase().replace(/[^\p{L}\p{N}, ]+/gu, '')}-`;
  const chars = Array.from(simplified.length < size ? simplified.padEnd(size, '-') : simplified);
  const counts = new Map<string, number>();
  for (let i = 0; i + size <= chars.length; i++) {
    const gram = chars.slice(i, i + size).join('');
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

function levenshtein(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length]!;
}

export function closestName(name: string, known: readonly string[]): string | undefined {
  if (known.length >= MAX_RELATIONS_FOR_HINT) return undefined;
  for (const size of [3, 2]) {
    const wanted = grams(name, size);
    const norm = Math.sqrt([...wanted.values()].reduce((sum, n) => sum + n * n, 0));
    const candidates: { name: string; cosine: number }[] = [];
    for (const candidate of known) {
      const theirs = grams(candidate, size);
      let dot = 0;
      for (const [gram, n] of wanted) dot += n * (theirs.get(gram) ?? 0);
      if (dot === 0) continue;
      const theirNorm = Math.sqrt([...theirs.values()].reduce((sum, n) => sum + n * n, 0));
      candidates.push({ name: candidate, cosine: dot / (norm * theirNorm) });
    }
    const scored = candidates
      .sort((a, b) => b.cosine - a.cosine)
      .slice(0, 50)
      .map((candidate) => {
        const a = name.toLowerCase();
        const b = candidate.name.toLowerCase();
        return { name: candidate.name, score: 1 - levenshtein(a, b) / Math.max(Array.from(a).length, Array.from(b).length) };
      })
      .filter((candidate) => candidate.score >= MIN_MATCH_SCORE)
      .sort((a, b) => b.score - a.score);
    if (scored.length > 0) return scored[0]!.name;
  }
  return undefined;
}

// ---- any error → reply ------------------------------------------------------------------------------------------

interface PostgresErrorLike {
  readonly code: string;
  readonly message: string;
  readonly detail?: unknown;
  readonly hint?: unknown;
}

/** SQLSTATE classes PostgreSQL uses (plus PostgREST's PTxxx for custom statuses); keeps Node's EPIPE etc. out. */
const SQLSTATE = /^(?:[0-5][0-9A-Z]|F0|HV|P0|XX|PT)[0-9A-Z]{3}$/;

function isPostgresError(error: unknown): error is PostgresErrorLike {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' && SQLSTATE.test(code) && typeof message === 'string';
}

/** PostgREST's pgErrorStatus (Error.hs) for an anonymous request: 42501 is 401, not 403. */
export function statusOfSqlState(code: string): number {
  const exact: Record<string, number> = {
    '23503': 409,
    '23505': 409,
    '25006': 405,
    '21000': 500,
    '53400': 500,
    '57P01': 503,
    P0001: 400,
    '42883': 404,
    '42P01': 404,
    '42P17': 500,
    '42501': 401,
  };
  if (exact[code] !== undefined) return exact[code]!;
  if (code.startsWith('PT')) {
    const status = Number(code.slice(2));
    return Number.isInteger(status) && status >= 100 && status <= 599 ? status : 500;
  }
  const byClass: Record<string, number> = {
    '08': 503, // connection exception
    '09': 500, // triggered action exception
    '0L': 403, // invalid grantor
    '0P': 403, // invalid role specification
    '25': 500, // invalid transaction state
    '28': 403, // invalid authorization specification
    '2D': 500, // invalid transaction termination
    '38': 500, // external routine exception
    '39': 500, // external routine invocation exception
    '3B': 500, // savepoint exception
    '40': 500, // transaction rollback
    '53': 503, // insufficient resources
    '54': 500, // program limit exceeded
    '55': 500, // object not in prerequisite state
    '57': 500, // operator intervention (57014 statement timeout included)
    '58': 500, // system error
    F0: 500, // configuration file error
    HV: 500, // foreign data wrapper error
    P0: 500, // PL/pgSQL error
    XX: 500, // internal error
  };
  return byClass[code.slice(0, 2)] ?? 400;
}

/** Socket-level failures to reach the database (PostgREST's ConnectionUsageError → PGRST000). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ECONNABORTED', 'ENOENT']);

function systemCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errors } = error as { code?: unknown; errors?: unknown };
  if (typeof code === 'string') return code;
  // Node's happy-eyeballs connect rejects with an AggregateError of the per-address failures.
  if (Array.isArray(errors)) return errors.map(systemCode).find((c) => c !== undefined);
  return undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'string' ? error : '';
}

function reply(status: number, body: { code: string; details: string | null; hint: string | null; message: string }, headers: Readonly<Record<string, string>> = {}): GatewayReply {
  return {
    status,
    headers: { 'Content-Type': JSON_CONTENT_TYPE, 'Proxy-Status': `PostgREST; error=${body.code}`, ...headers },
    body: JSON.stringify({ code: body.code, details: body.details, hint: body.hint, message: body.message }),
  };
}

const textOrNull = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

export function gatewayErrorReply(error: unknown): GatewayReply {
  if (error instanceof GatewayError) {
    return reply(error.status, { code: error.code, details: error.details, hint: error.hint, message: error.message }, error.headers);
  }
  const code = systemCode(error);
  if (code !== undefined && CONNECTION_CODES.has(code)) {
    return reply(503, { code: 'PGRST000', details: messageOf(error) || code, hint: null, message: 'Database connection error. Retrying the connection.' });
  }
  if (isPostgresError(error)) {
    return reply(statusOfSqlState(error.code), { code: error.code, details: textOrNull(error.detail), hint: textOrNull(error.hint), message: error.message });
  }
  const message = messageOf(error);
  // node-postgres and PGlite report a lost or closed client without a code.
  if (/timeout exceeded when trying to connect/i.test(message)) {
    return reply(504, { code: 'PGRST003', details: null, hint: null, message: 'Timed out acquiring connection from connection pool.' });
  }
  if (/connection terminated due to connection timeout/i.test(message)) {
    return reply(503, { code: 'PGRST000', details: message, hint: null, message: 'Database connection error. Retrying the connection.' });
  }
  if (/connection terminated|not queryable|cannot use a pool after calling end|pglite is closed/i.test(message)) {
    return reply(503, { code: 'PGRST001', details: message, hint: null, message: 'Database client error. Retrying the connection.' });
  }
  // Anything else is a bug here, not the client's fault; its text stays in the server log, not in the answer.
  return reply(500, { code: 'XX000', details: null, hint: null, message: 'Internal server error' });
}
