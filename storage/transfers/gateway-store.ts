// What the read gateway needs from the database (notes B.2, F.8; spec A §5): the relations of the exposed schema
// for its schema cache, and a statement runner that reads as the anonymous read-only role, never as the login.

import type { SqlClient, SqlRow } from './sql-client.js';
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

/** Runs one read statement with bound parameters as the anonymous role. */
export type AnonymousRead = (text: string, values: readonly (string | null)[]) => Promise<SqlRow[]>;

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
 * plan_cache_mode = force_custom_plan: reads are named prepared statements (GATEWAY_NAMED_STATEMENTS), and after five
 * executions PostgreSQL may switch a prepared statement to a generic plan, planned without the parameters' values.
 * On skewed data that plan is wrong: the transfers bench's native history (`contract_to.eq.` — the empty string, ~70%
 * of the rows) got a generic plan that trusted contract_to_index as if `''` were rare, 100x slower than the custom
 * plan (116 ms vs 0.6 ms p50). Custom plans keep the per-value plan; the saved parse and analysis remain.
 */
export function anonymousSessionSetup(role: string): string {
  if (!ROLE_NAME.test(role)) throw new Error(`role name not allowed: ${role}`);
  return `SET ROLE "${role}"; SET default_transaction_read_only = on; SET statement_timeout = '${GATEWAY_STATEMENT_TIMEOUT}'; SET plan_cache_mode = force_custom_plan`;
}

/**
 * For a client shared with the indexer (PGlite is one session): each read runs in its own transaction that switches
 * to the role and to read-only with SET LOCAL, so the shared session never changes identity.
 */
export function anonymousReadInTransaction(db: SqlClient, role: string): AnonymousRead {
  if (!ROLE_NAME.test(role)) throw new Error(`role name not allowed: ${role}`);
  const setup = `SET LOCAL ROLE "${role}"; SET LOCAL transaction_read_only = on`;
  return (text, values) =>
    db.transaction(async (tx) => {
      await tx.exec(setup);
      return tx.query(text, values);
    });
}
