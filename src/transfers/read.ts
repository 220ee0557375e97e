// The gateway's read pipeline (spec A §4.1/§7, notes B.1–B.2, F.1–F.3): query string → grammar → plan → SQL → the
// injected executor → status, headers and body. Pure apart from `execute`: the HTTP edge, the schema cache,
// connections and roles are the caller's. Failures are thrown (GatewayError for the request's own faults,
// PostgreSQL and connection errors as the executor raised them) and turned into replies by gatewayErrorReply.

import { BoundedMemo } from '../bounded-memo.js';
import type { Cancellation } from '../cancellation.js';
import type { GatewayReply } from './gateway-errors.js';
import { negotiateMedia, notSingular } from './negotiate.js';
import { parseQueryParams, planRead, type ParsedQuery } from './query-params.js';
import { canonicalQuery, parseQueryString } from './query-string.js';
import { parsePrefer } from './read-prefer.js';
import { needsMoreRowsProbe, planWindow, rangeOutcome } from './read-range.js';
import { buildReadStatements } from './read-sql.js';
import type { RelationFacts } from './relation-facts.js';

export type { GatewayReply } from './gateway-errors.js';

export interface ReadSettings {
  /** PGRST_DB_MAX_ROWS / MAX_ROWS (notes F.2); undefined = unlimited. */
  readonly maxRows?: number;
  /** MAX_OFFSET (notes F.3); undefined = off. */
  readonly maxOffset?: number;
}

export interface ReadRequest {
  readonly method: 'GET' | 'HEAD';
  readonly schema: string;
  /** A table or view the caller already found in the schema cache. */
  readonly relation: string;
  /** The raw query string without `?`, still percent-encoded. */
  readonly query: string;
  /** The Range request header, if any. */
  readonly range?: string;
  /** The Prefer request header, if any. */
  readonly prefer?: string;
  /** The Accept request header, if any (negotiate.ts). */
  readonly accept?: string;
  /** Fires when the client went away: the running statement is cancelled. */
  readonly cancellation?: Cancellation;
}

/**
 * Runs one SQL statement with bound parameters and resolves with its rows (column name → value). Every statement
 * runRead sends returns text columns, except the EXPLAIN (FORMAT JSON) of a planned count, whose single column may
 * come back as a JSON string or already parsed. `reusePlan`: the relation's common values were known when the
 * statement was written (read-sql.ts), so a plan kept for its text stays right for other values. `genericPlan`: every
 * read in the statement is also bounded by a selective equality, so it may run with the generic plan whatever
 * PostgreSQL's cost comparison says (read-sql.ts anchoredByEquality). `cancellation`: the request's, so a statement
 * whose client went away is cancelled.
 */
export type Execute = (
  text: string,
  values: readonly (string | null)[],
  options: { readonly reusePlan: boolean; readonly genericPlan?: boolean; readonly cancellation?: Cancellation },
) => Promise<readonly Record<string, unknown>[]>;

function text(row: Record<string, unknown>, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw new Error(`read statement: column ${column} is not text`);
  return value;
}

/** The planner's row estimate from `EXPLAIN (FORMAT JSON)`: `[{"Plan": {"Plan Rows": n}}]`. */
export function plannedRows(rows: readonly Record<string, unknown>[]): bigint {
  const first = rows[0] === undefined ? undefined : Object.values(rows[0])[0];
  const document: unknown = typeof first === 'string' ? JSON.parse(first) : first;
  const top = Array.isArray(document) ? document[0] : document;
  const estimate = (top as { Plan?: { 'Plan Rows'?: unknown } } | undefined)?.Plan?.['Plan Rows'];
  if (typeof estimate !== 'number' || !Number.isFinite(estimate)) throw new Error('EXPLAIN (FORMAT JSON) gave no Plan Rows');
  return BigInt(Math.round(estimate));
}

/** Content-Location path segment: the relation name, percent-encoded outside RFC 3986 pchar (no header injection). */
function encodePathSegment(name: string): string {
  let out = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~!$&'()*+,;=:@]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A query string taken apart: what depends on the string alone. */
interface QueryParts {
  readonly parsed: ParsedQuery;
  /** For Content-Location. */
  readonly canonical: string;
}

/**
 * Query strings already parsed. Decoding and the grammar parse are pure functions of the raw string and were the
 * largest CPU cost of a read in the gateway process (a cpu profile under the transfers bench: ~25% of its busy
 * time); a client repeating a read (a wallet polling an address's history, a page reloaded) sends the same string
 * again. Clients choose the strings, so the cache is bounded (BoundedMemo); only successful parses are kept (a
 * refusal throws, so nothing is stored). Entries are never mutated:
 * planRead and buildReadStatements build new objects from them.
 */
const parsedQueries = new BoundedMemo<QueryParts>(
  (raw) => {
    const pairs = parseQueryString(raw);
    return { parsed: parseQueryParams(pairs), canonical: canonicalQuery(pairs) };
  },
  512,
  // Longer strings are parsed every time: keeps the memory bound small whatever strangers send.
  2048,
);

/** `facts`: what the schema cache knows of the relation (relation-facts.ts). */
export async function runRead(request: ReadRequest, settings: ReadSettings, execute: Execute, facts: RelationFacts = {}): Promise<GatewayReply> {
  const { commonValues, jsonColumns, selectiveColumns } = facts;
  const { parsed, canonical } = parsedQueries.get(request.query);
  const window = planWindow({
    method: request.method,
    ...(request.range === undefined ? {} : { rangeHeader: request.range }),
    ...(parsed.limit === undefined ? {} : { limit: parsed.limit }),
    ...(parsed.offset === undefined ? {} : { offset: parsed.offset }),
    ...(settings.maxRows === undefined ? {} : { maxRows: settings.maxRows }),
    ...(settings.maxOffset === undefined ? {} : { maxOffset: settings.maxOffset }),
  });
  const preferences = parsePrefer(request.prefer);
  const media = negotiateMedia(request.accept);
  const plan = planRead(parsed, request);
  const statements = buildReadStatements({
    schema: request.schema,
    relation: request.relation,
    plan,
    window,
    ...(preferences.count === undefined ? {} : { count: preferences.count }),
    ...(settings.maxRows === undefined ? {} : { maxRows: settings.maxRows }),
    withBody: request.method === 'GET',
    format: media.format,
    probeMoreRows: needsMoreRowsProbe(window),
    commonValues,
    jsonColumns,
    selectiveColumns,
  });
  const executeOptions = { reusePlan: commonValues !== undefined, ...(request.cancellation === undefined ? {} : { cancellation: request.cancellation }) };

  const [row] = await execute(statements.main.text, statements.main.values, { ...executeOptions, genericPlan: statements.genericPlan });
  if (row === undefined) throw new Error('read statement returned no row');
  const pageCount = BigInt(text(row, 'page_count'));
  // The object representation is one row or a 406 (PostgREST checks the rows of the page, after limit and range).
  if ((media.format === 'object' || media.format === 'object-stripped') && pageCount !== 1n) throw notSingular(pageCount);
  const planned = async () => plannedRows(await execute(statements.explain.text, statements.explain.values, executeOptions));
  let total: bigint | undefined;
  if (preferences.count === 'planned') {
    total = await planned();
  } else if (statements.totalKind === 'exact') {
    total = BigInt(text(row, 'total'));
  } else if (statements.totalKind === 'bounded') {
    // count=estimated: exact up to max-rows, else the planner's guess, never below what was already counted.
    total = BigInt(text(row, 'total'));
    if (total > BigInt(settings.maxRows!)) {
      const guess = await planned();
      if (guess > total) total = guess;
    }
  }
  const moreRows = row['more_rows'] === undefined ? false : text(row, 'more_rows') === 'true';
  const outcome = rangeOutcome(window, pageCount, total, moreRows);

  const headers: Record<string, string> = {
    'Content-Type': media.contentType,
    'Content-Range': outcome.contentRange,
    'Content-Location': `/${encodePathSegment(request.relation)}${canonical === '' ? '' : `?${canonical}`}`,
  };
  if (preferences.applied !== undefined) headers['Preference-Applied'] = preferences.applied;
  return { status: outcome.status, headers, body: request.method === 'GET' ? text(row, 'body') : '' };
}
