// The transfers database layout (notes A.1, A.4 "Recommended design", F.7–F.9) as versioned migrations run at
// startup, plus the parts refreshed on every start (the `max_block` view carries the indexer version; the
// anonymous role's grants).
//
// Public contract, exactly as the original: `public.ethtxs` with its ten columns in order (no key: the original
// has none, and `select=*` key order is column order), the original's index names, `public.max_block`
// (`max`, `version`) and `public.aval`. Every statement is idempotent against a database the original indexer
// wrote, so the drop-in keeps its rows, indexes and grants. Internal state lives in schema `indexer`, which the
// gateway never exposes (it serves one configured schema, `public` by default).

import type { SqlClient, SqlQuery } from './sql-client.js';

interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'ethtxs, aval, indexer state',
    sql: `
      CREATE EXTENSION IF NOT EXISTS citext;
      CREATE TABLE IF NOT EXISTS public.ethtxs (
        "time" integer,
        txfrom citext,
        txto citext,
        gas bigint,
        gasprice bigint,
        block integer,
        txhash citext,
        value numeric,
        contract_to citext,
        contract_value citext
      );
      -- create_indexes.sql and create_indexes_add.sql of the original, same names (notes A.1).
      CREATE INDEX IF NOT EXISTS block_index ON public.ethtxs (block);
      CREATE INDEX IF NOT EXISTS contract_to_index ON public.ethtxs (contract_to);
      CREATE INDEX IF NOT EXISTS txfrom_index ON public.ethtxs (txfrom);
      CREATE INDEX IF NOT EXISTS txto_index ON public.ethtxs (txto);
      CREATE INDEX IF NOT EXISTS time_index ON public.ethtxs ("time");
      CREATE INDEX IF NOT EXISTS txto_txfrom_index ON public.ethtxs (txto, txfrom);
      CREATE INDEX IF NOT EXISTS txto_contract_to_index ON public.ethtxs (txto, contract_to);
      CREATE INDEX IF NOT EXISTS txto_w_empty_contract_to_index ON public.ethtxs (txto) WHERE contract_to = '';

      -- /aval is one boolean row (spec A 2.3); versions before 04d7165 had aval(status integer) holding 1.
      CREATE TABLE IF NOT EXISTS public.aval (status boolean);
      DO $$
      BEGIN
        IF (SELECT data_type FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name = 'aval' AND column_name = 'status') <> 'boolean' THEN
          ALTER TABLE public.aval ALTER COLUMN status TYPE boolean USING (status::text <> '0');
        END IF;
      END $$;
      DELETE FROM public.aval;
      INSERT INTO public.aval (status) VALUES (true);

      -- The cursor: the last block whose rows are written (spec A 2.2 "last synchronized block").
      CREATE TABLE indexer.state (
        singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
        last_block integer
      );
      INSERT INTO indexer.state (singleton) VALUES (true);
      -- Hashes of recently written blocks, for reorg detection (notes A.4).
      CREATE TABLE indexer.blocks (
        number integer PRIMARY KEY,
        hash text NOT NULL,
        parent_hash text NOT NULL
      );

      -- A database the original indexer filled: its cursor was MAX(block), and it deleted that block's rows at
      -- every start because the block may be partial (notes A.3). Do the same once, and resume after it.
      DELETE FROM public.ethtxs WHERE block = (SELECT max(block) FROM public.ethtxs);
      UPDATE indexer.state SET last_block = (SELECT max(block) FROM public.ethtxs);
    `,
  },
];

/** The migrations this build knows; the highest is the schema version it needs. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export interface MigrationReport {
  readonly from: number;
  readonly to: number;
  readonly applied: readonly string[];
}

/** A database written by a newer build: running on it could corrupt what that build relies on. */
export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
  constructor(readonly found: number) {
    super(`the database schema is at version ${found}, newer than this build's ${SCHEMA_VERSION}; upgrade adm-infra`);
  }
}

/**
 * Applies the missing migrations in one transaction under an advisory lock (two processes starting at once
 * migrate once), then refreshes the `max_block` view with `version`.
 */
export async function migrate(db: SqlClient, indexerVersion: string): Promise<MigrationReport> {
  return db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('adm-infra transfers migrations'))`);
    await tx.query('CREATE SCHEMA IF NOT EXISTS indexer');
    await tx.query(`CREATE TABLE IF NOT EXISTS indexer.migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const [row] = await tx.query('SELECT coalesce(max(version), 0)::int AS version FROM indexer.migrations');
    const from = Number(row?.version ?? 0);
    if (from > SCHEMA_VERSION) throw new SchemaTooNewError(from);
    const applied: string[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= from) continue;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO indexer.migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(`${migration.version} ${migration.name}`);
    }
    await refreshMaxBlockView(tx, indexerVersion);
    return { from, to: SCHEMA_VERSION, applied };
  });
}

/**
 * `max_block` = the greater of the highest block with rows and the last synchronized block, null only when nothing
 * was processed (GREATEST ignores NULLs), plus the indexer version. CREATE OR REPLACE keeps the original view's
 * column names and types (integer, text) and its grants.
 */
async function refreshMaxBlockView(tx: SqlQuery, indexerVersion: string): Promise<void> {
  if (!/^[0-9A-Za-z.+-]+$/.test(indexerVersion)) throw new Error(`not a version: ${indexerVersion}`);
  await tx.query(`CREATE OR REPLACE VIEW public.max_block AS
    SELECT GREATEST((SELECT max(block) FROM public.ethtxs), (SELECT last_block FROM indexer.state)) AS max,
           '${indexerVersion}'::text AS version`);
}

/** Role names go into SQL text (roles cannot be bound parameters): only plain identifiers are accepted. */
export const ROLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface AnonRoleReport {
  readonly created: boolean;
  /** Problems that leave the gateway unable to read (missing privileges); logged as warnings. */
  readonly problems: readonly string[];
}

/**
 * The gateway's anonymous read-only role (spec A §5): created NOLOGIN when missing, granted USAGE on the exposed
 * schema and SELECT on the three relations, and granted to the login doing this so a gateway on the same login
 * can SET ROLE to it. Each step is best effort: a login without CREATEROLE or ownership gets a warning, and the
 * operator grants by hand as in PostgREST's own setup.
 */
export async function ensureAnonRole(db: SqlQuery, role: string): Promise<AnonRoleReport> {
  if (!ROLE_NAME.test(role)) throw new Error(`role name not allowed: ${role}`);
  const problems: string[] = [];
  let created = false;
  const step = async (what: string, sql: string) => {
    try {
      await db.query(sql);
      return true;
    } catch (error) {
      problems.push(`${what}: ${(error as Error).message}`);
      return false;
    }
  };
  const [exists] = await db.query('SELECT 1 AS found FROM pg_roles WHERE rolname = $1', [role]);
  if (!exists) created = await step(`create role ${role}`, `CREATE ROLE "${role}" NOLOGIN`);
  await step(`grant usage on schema public to ${role}`, `GRANT USAGE ON SCHEMA public TO "${role}"`);
  await step(`grant select to ${role}`, `GRANT SELECT ON public.ethtxs, public.max_block, public.aval TO "${role}"`);
  const [member] = await db.query('SELECT pg_has_role(current_user, $1, $2) AS member', [role, 'MEMBER']);
  if (member?.member !== true) await step(`grant ${role} to the current login`, `GRANT "${role}" TO CURRENT_USER`);
  return { created, problems };
}
