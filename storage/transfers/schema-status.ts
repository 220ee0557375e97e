// Where a database stands against this build's migrations (storage/transfers/schema.ts), read without writing and
// without failing on missing privileges: a gateway alone reads it with its own login before it decides to migrate
// (actors/transfers/database.actor.ts), and `adm-infra transfers --migrate` names the login in its report.
//
// The catalog (pg_namespace, pg_class) is readable by every login, so a missing `indexer.migrations` is told apart
// from one this login may not read (a PostgREST authenticator usually has no rights on the `indexer` schema).

import type { SqlQuery } from './sql-client.js';

/**
 * The advisory lock migrate() holds while it runs (storage/transfers/schema.ts takes
 * `pg_advisory_xact_lock(hashtext(MIGRATION_LOCK))`; keep the two in step: a mismatch only makes a gateway wait for
 * the lock instead of answering 503 meanwhile).
 */
export const MIGRATION_LOCK = 'adm-infra transfers migrations';

export type SchemaStatus =
  /** Neither `indexer.migrations` nor `public.ethtxs`: an empty database. */
  | { readonly state: 'missing'; readonly login: string }
  /** `public.ethtxs` without `indexer.migrations`: the original indexer's layout (that indexer may still be writing). */
  | { readonly state: 'unversioned'; readonly login: string }
  /** The highest migration applied (0 when the table exists but is empty). */
  | { readonly state: 'versioned'; readonly version: number; readonly login: string }
  /** The table exists but this login may not read it: someone else owns the schema. */
  | { readonly state: 'unreadable'; readonly login: string };

/** Where the schema stands, and whether another session is migrating it right now (holding MIGRATION_LOCK). */
export async function readSchemaStatus(db: SqlQuery): Promise<SchemaStatus & { readonly migrating: boolean }> {
  const [row] = await db.query(
    `SELECT current_user::text AS login, c.oid IS NOT NULL AS present,
            coalesce(has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT'), false) AS readable,
            EXISTS (SELECT 1 FROM pg_catalog.pg_class t JOIN pg_catalog.pg_namespace p ON p.oid = t.relnamespace
                     WHERE p.nspname = 'public' AND t.relname = 'ethtxs') AS ethtxs,
            -- A one-bigint advisory key is shown as classid = its high 32 bits, objid = its low 32 bits, objsubid 1.
            EXISTS (SELECT 1 FROM pg_catalog.pg_locks l, (SELECT hashtext($1)::bigint AS k) AS key
                     WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
                       AND l.classid::bigint = (key.k >> 32) & 4294967295 AND l.objid::bigint = key.k & 4294967295 AND l.objsubid = 1) AS migrating
       FROM (SELECT 1) AS one
       LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = 'indexer'
       LEFT JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = 'migrations' AND c.relkind IN ('r', 'p')`,
    [MIGRATION_LOCK],
  );
  const login = String(row?.login);
  const migrating = row?.migrating === true;
  if (row?.present !== true) return { state: row?.ethtxs === true ? 'unversioned' : 'missing', login, migrating };
  if (row.readable !== true) return { state: 'unreadable', login, migrating };
  const [version] = await db.query('SELECT coalesce(max(version), 0)::int AS version FROM indexer.migrations');
  return { state: 'versioned', version: Number(version?.version ?? 0), login, migrating };
}
