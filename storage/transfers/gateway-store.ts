// What the read gateway needs from the database (notes B.2, F.8; spec A §5): the relations of the exposed schema
// for its schema cache, and a statement runner that reads as the anonymous read-only role, never as the login.

import { arrayLiteral } from '../../src/transfers/read-sql.js';
import type { Cancellation } from '../../src/cancellation.js';
import { groupColumns, groupCommonValues, type CommonValuesBySchema, type JsonColumnsBySchema } from '../../src/transfers/relation-facts.js';
import type { SqlClient, SqlQuery, SqlRow } from './sql-client.js';
import { ROLE_NAME } from './schema.js';

/**
 * Tables, views, materialized views, foreign and partitioned tables of each schema, as PostgREST exposes them. A
 * listed schema that does not exist has no relations (PostgREST serves it as empty, every path a 404).
 */
export async function listRelations(db: SqlClient, schemas: readonly string[]): Promise<Record<string, string[]>> {
  const rows = await db.query(
    `SELECT n.nspname::text AS schema, c.relname::text AS name FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY ($1::text[]) AND c.relkind IN ('r', 'v', 'm', 'f', 'p') ORDER BY c.relname`,
    [schemas],
  );
  const bySchema: Record<string, string[]> = Object.fromEntries(schemas.map((schema) => [schema, []]));
  for (const row of rows) bySchema[String(row.schema)]?.push(String(row.name));
  return bySchema;
}

export interface ReadOptions {
  /**
   * The statement may be kept prepared and PostgreSQL may keep a generic plan for it (its relation's common values are
   * known, src/transfers/relation-facts.ts); otherwise it is planned for its values every time.
   */
  readonly reusePlan?: boolean;
  /**
   * And it runs with the generic plan, not only when PostgreSQL's plan cache finds it no costlier than custom plans
   * (src/transfers/read-sql.ts anchoredByEquality says when that is safe).
   */
  readonly genericPlan?: boolean;
  /** The caller's: the statement is cancelled on the server when it fires (the client went away). */
  readonly cancellation?: Cancellation;
}

/** The json and jsonb columns of the exposed schemas' relations (JSON arrows apply to them without to_jsonb). */
export async function listJsonColumns(db: Pick<SqlQuery, 'query'>, schemas: readonly string[]): Promise<JsonColumnsBySchema> {
  const rows = await db.query(
    `SELECT n.nspname::text AS schema, c.relname::text AS relation, a.attname::text AS column
       FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ANY ($1::text[]) AND c.relkind IN ('r', 'v', 'm', 'f', 'p') AND a.attnum > 0 AND NOT a.attisdropped
        AND a.atttypid IN ('json'::regtype, 'jsonb'::regtype)`,
    [schemas],
  );
  return groupColumns(rows.map((row) => ({ schema: String(row.schema), relation: String(row.relation), column: String(row.column) })));
}

/** Runs one read statement with bound parameters as the anonymous role. */
export type AnonymousRead = (text: string, values: readonly (string | null)[], options?: ReadOptions) => Promise<SqlRow[]>;

/**
 * At most this many common values in all (pg_stats keeps at most a column's statistics target of them, 100 by
 * default): past it none is used, and every read is planned for its values, as without statistics.
 */
export const MAX_COMMON_VALUES = 100_000;

/**
 * Runs a pg_stats query over the exposed schemas (`$1`) whose rows are (schema, relation, column, value or null) and
 * groups them; past MAX_COMMON_VALUES rows (the query asks for one more) nothing is used.
 */
async function readColumnValues(read: AnonymousRead, text: string, schemas: readonly string[]): Promise<CommonValuesBySchema> {
  const rows = await read(text, [arrayLiteral(schemas)]);
  if (rows.length > MAX_COMMON_VALUES) return new Map();
  return groupCommonValues(rows.map((row) => ({ schema: String(row.schema), relation: String(row.relation), column: String(row.column), value: row.value === null ? null : String(row.value) })));
}

/**
 * The most common values of every column of the exposed schemas' relations, as the reading role may see them (pg_stats
 * shows only columns it may select, and no rows under row level security). Values come as their text output.
 */
export async function listCommonValues(read: AnonymousRead, schemas: readonly string[]): Promise<CommonValuesBySchema> {
  return readColumnValues(
    read,
    `SELECT s.schemaname::text AS schema, s.tablename::text AS relation, s.attname::text AS column, v.value
       FROM pg_catalog.pg_stats s LEFT JOIN LATERAL unnest(s.most_common_vals::text::text[]) AS v(value) ON true
      WHERE s.schemaname = ANY ($1::text[]) LIMIT ${MAX_COMMON_VALUES + 1}`,
    schemas,
  );
}

/**
 * A column is selective when PostgreSQL's generic estimate of `column = $n` is at most this share of the table's rows:
 * (1 - null_frac) / n_distinct, the average over all its values (selfuncs.c var_eq_non_const; it may lower it further
 * to the most common value's share). At 1% an equality's rows are fetched by an index (or a small bitmap) in any plan;
 * a seq scan pays off only for far larger shares.
 */
export const SELECTIVE_SHARE = 0.01;

/**
 * The selective columns (SELECTIVE_SHARE) of the exposed schemas' relations, each with its heavy values: the common
 * values that are more than that share of the rows on their own (`contract_to = ''`), as the reading role sees the
 * statistics. An equality with any other value bounds a read (read-sql.ts anchoredByEquality).
 */
export async function listSelectiveColumns(read: AnonymousRead, schemas: readonly string[]): Promise<CommonValuesBySchema> {
  return readColumnValues(
    read,
    `SELECT s.schemaname::text AS schema, s.tablename::text AS relation, s.attname::text AS column, heavy.value
       FROM pg_catalog.pg_stats s
       JOIN pg_catalog.pg_namespace n ON n.nspname = s.schemaname
       JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = s.tablename
       LEFT JOIN LATERAL (SELECT v.value FROM unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(value, share) WHERE v.share > ${SELECTIVE_SHARE}) heavy ON true
      WHERE s.schemaname = ANY ($1::text[]) AND s.n_distinct <> 0 AND c.reltuples > 0
        AND (1 - s.null_frac) / (CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * c.reltuples ELSE s.n_distinct END) <= ${SELECTIVE_SHARE}
      LIMIT ${MAX_COMMON_VALUES + 1}`,
    schemas,
  );
}

/** A read that may run longer is cancelled by the server (57014 → 500), so a heavy query cannot pin a connection. */
export const GATEWAY_STATEMENT_TIMEOUT = '30s';

/**
 * Distinct read statements a gateway connection keeps prepared (sql-client.pg.ts namedStatementsPerConnection). The
 * spec's reads are a handful of shapes (a shape is the query string without its values: filters, order, select,
 * limit present or not, Prefer count, Accept), so 256 holds every shape a real client sends; a stranger inventing
 * shapes fills it and the rest run unnamed. Each kept statement is a parse tree and maybe a plan in the backend
 * (tens of KB at most): 256 × pool size stays small.
 */
export const GATEWAY_NAMED_STATEMENTS = 256;

/**
 * The session settings of a gateway connection (pg): the anonymous role, read-only transactions and the statement
 * timeout, set once per connection (openPgClient's sessionSetup; a connection whose setup fails is never used).
 *
 * Plans: reads whose relation has known common values are named prepared statements (GATEWAY_NAMED_STATEMENTS) under
 * PostgreSQL's default plan_cache_mode (auto, as PostgREST runs them): after five executions a statement keeps a
 * generic plan when it costs no more than the custom ones. Planning was about half of each spec read; the generic plan
 * halves it (keyset 0.35 vs 0.85 ms per execution on 1M rows). It is safe because a common value never reaches it as a
 * parameter (read-sql.ts writes those as literals): without that, the native history's `contract_to = ''` (~70% of
 * the rows) got a generic plan that took `''` for rare, 100x slower (116 ms vs 0.6 ms). The setting is set anyway, so
 * a server configured for force_generic_plan or force_custom_plan behaves the same. A read bounded by a selective
 * equality in every part runs with its generic plan even where auto would keep planning it (ReadOptions.genericPlan:
 * the token history on 1,000,000 rows, where a generic estimate of `contract_to = $n` counts the common `''`).
 */
export function anonymousSessionSetup(role: string): string {
  if (!ROLE_NAME.test(role)) throw new Error(`role name not allowed: ${role}`);
  return `SET ROLE "${role}"; SET default_transaction_read_only = on; SET statement_timeout = '${GATEWAY_STATEMENT_TIMEOUT}'; SET plan_cache_mode = auto`;
}

/**
 * For a client shared with the indexer (PGlite is one session): each read runs in its own transaction that switches
 * to the role and to read-only with SET LOCAL, so the shared session never changes identity.
 */
export function anonymousReadInTransaction(db: SqlClient, role: string): AnonymousRead {
  if (!ROLE_NAME.test(role)) throw new Error(`role name not allowed: ${role}`);
  const setup = `SET LOCAL ROLE "${role}"; SET LOCAL transaction_read_only = on`;
  // PGlite runs one statement at a time in this process: a read is not cancelled once it started.
  return (text, values, options) => {
    if (options?.cancellation?.aborted) return Promise.reject(options.cancellation.reason);
    return db.transaction(async (tx) => {
      await tx.exec(setup);
      return tx.query(text, values);
    });
  };
}
