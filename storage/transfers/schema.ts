// The transfers database layout (notes A.1, A.4 "Recommended design", F.7–F.9) as versioned migrations run at
// startup, plus the parts refreshed on every start (the `max_block` view carries the indexer version; the
// anonymous role's grants).
//
// Public contract, exactly as the original: `public.ethtxs` with its ten columns in order (no key: the original
// has none, and `select=*` key order is column order), the original's index names, `public.max_block`
// (`max`, `version`) and `public.aval`. Every statement is idempotent against a database the original indexer
// wrote, so the drop-in keeps its rows, indexes and grants. Internal state lives in schema `indexer`, which the
// gateway never exposes (it serves one configured schema, `public` by default).

import { sleep, systemClock, type Clock } from '../../src/clock.js';
import type { SqlClient, SqlQuery } from './sql-client.js';

/** Statements applied inside the migration transaction. */
interface SqlMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/**
 * Indexes built after the transactional migrations, outside any transaction: on PostgreSQL with CREATE INDEX
 * CONCURRENTLY, so an existing table keeps taking writes while they build (the build holds SHARE UPDATE EXCLUSIVE,
 * which does not conflict with INSERT/UPDATE/DELETE's ROW EXCLUSIVE). Such a migration only adds indexes (nothing a
 * later migration could depend on), so it may complete after later transactional ones; its version is recorded only
 * once every index is built and valid.
 */
interface IndexMigration {
  readonly version: number;
  readonly name: string;
  readonly indexes: readonly IndexDefinition[];
}

export interface IndexDefinition {
  /** Index name, in the table's schema. */
  readonly name: string;
  readonly schema: string;
  readonly table: string;
  /** The key columns as SQL (quoted where needed). */
  readonly columns: string;
}

type Migration = SqlMigration | IndexMigration;

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
  {
    // The access paths of spec A §4.1's own queries, each serving `ORDER BY time DESC, txhash DESC LIMIT n` straight
    // from the index (the gateway splits an OR over these columns into one ordered branch per column,
    // src/transfers/read-sql-branches.ts). With the original's single-column indexes PostgreSQL reads every row of
    // the address (bitmap OR, one heap page each) and sorts them for a page of 25 (notes A.1 lists these as an
    // optional optimisation).
    version: 2,
    name: 'composite indexes for address and token history pages',
    indexes: [
      // Sent by the address: native history and keyset pages (`txfrom = A`, plus a `contract_to = ''` filter).
      { name: 'txfrom_time_txhash_index', schema: 'public', table: 'ethtxs', columns: 'txfrom, "time", txhash' },
      // Received by the address (`txto = A`): keyset pages and any history without a contract_to condition.
      { name: 'txto_time_txhash_index', schema: 'public', table: 'ethtxs', columns: 'txto, "time", txhash' },
      // Token history, sent: `txto = token AND txfrom = A`.
      { name: 'txto_txfrom_time_txhash_index', schema: 'public', table: 'ethtxs', columns: 'txto, txfrom, "time", txhash' },
      // Token history, received: `txto = token AND contract_to = word(A)`; also native received (`txto = A AND
      // contract_to = ''`).
      { name: 'txto_contract_to_time_txhash_index', schema: 'public', table: 'ethtxs', columns: 'txto, contract_to, "time", txhash' },
    ],
  },
];

const isIndexMigration = (migration: Migration): migration is IndexMigration => 'indexes' in migration;

/** The migrations this build knows; the highest is the schema version it needs. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export interface MigrationReport {
  /** The highest version recorded before this run (0: a fresh database). */
  readonly from: number;
  /** The highest version recorded after it. */
  readonly to: number;
  /** `<version> <name>` of each migration this run applied. */
  readonly applied: readonly string[];
  /** Each index this run built (a migration another process completed meanwhile builds nothing here). */
  readonly builtIndexes: readonly IndexBuildReport[];
  /** Index migrations left for buildPendingIndexes (`indexBuilds: 'defer'` on PostgreSQL only). */
  readonly pendingIndexBuilds: boolean;
}

export interface IndexBuildReport {
  readonly name: string;
  /** How: CONCURRENTLY on PostgreSQL, a plain CREATE INDEX on PGlite. */
  readonly concurrently: boolean;
  /** An INVALID index of that name (an interrupted concurrent build) was dropped first. */
  readonly replacedInvalid: boolean;
  readonly ms: number;
}

/** What a long index build reports while it runs (PostgreSQL: pg_stat_progress_create_index), for the logs. */
export interface IndexBuildProgress {
  readonly index: string;
  readonly event: 'waiting for another process' | 'building' | 'built';
  readonly elapsedMs: number;
  /** e.g. `building index: scanning table`, `waiting for writers before build` (building only). */
  readonly phase?: string;
  readonly blocksDone?: number;
  readonly blocksTotal?: number;
  readonly tuplesDone?: number;
  readonly tuplesTotal?: number;
}

export interface IndexBuildOptions {
  /** Called now and then while index migrations build (every PROGRESS_INTERVAL_MS per index) and when each is done. */
  readonly onProgress?: (progress: IndexBuildProgress) => void;
  /** Apply migrations up to this version only (tests and benchmarks that need an older layout). */
  readonly upTo?: number;
  /** Cancels a build in progress (pg_cancel_backend): the INVALID index it leaves is rebuilt next time. */
  readonly signal?: AbortSignal;
  /**
   * What the lock polls and progress reports wait on and the reported times come from (docs/DESIGN.md rule 2): the
   * runtime's clock in the service; the system clock when absent (the `--migrate` command).
   */
  readonly clock?: Clock;
}

export interface MigrateOptions extends IndexBuildOptions {
  /**
   * `defer`: return after the transactional migrations, leaving PostgreSQL's concurrent index builds to a
   * buildPendingIndexes call (a service builds them in the background while it serves; `pendingIndexBuilds` says
   * whether there are any). Default: build them before returning.
   */
  readonly indexBuilds?: 'wait' | 'defer';
}

/** A database written by a newer build: running on it could corrupt what that build relies on. */
export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
  constructor(readonly found: number) {
    super(`the database schema is at version ${found}, newer than this build's ${SCHEMA_VERSION}; upgrade adm-infra`);
  }
}

/** The transactional migrations serialize on this transaction-level advisory lock. */
const MIGRATION_LOCK = 'adm-infra transfers migrations';
/**
 * The index builds serialize on this session-level one, a different key: a process waiting for the transactional
 * lock sits inside a transaction, and a CREATE INDEX CONCURRENTLY waits for every transaction older than its
 * snapshot, so sharing one key could make the two wait on each other.
 */
const INDEX_BUILD_LOCK = 'adm-infra transfers index builds';
/**
 * The index-build lock is polled with pg_try_advisory_lock, never waited for in a statement: a waiting statement
 * holds a snapshot, and the concurrent build holding the lock would wait for that snapshot (a deadlock).
 */
const INDEX_LOCK_POLL_MS = 500;
const PROGRESS_INTERVAL_MS = 10_000;

/**
 * Applies the missing migrations: the transactional ones in one transaction under an advisory lock (two processes
 * starting at once migrate once), refreshing the `max_block` view with `version`; then the index migrations
 * (PostgreSQL: CREATE INDEX CONCURRENTLY on one dedicated session holding a session-level advisory lock, so that
 * writers are never blocked and two processes never build at once; PGlite: plain CREATE INDEX inside the migration
 * transaction). An INVALID index left by an interrupted concurrent build is dropped and built again.
 */
export async function migrate(db: SqlClient, indexerVersion: string, options: MigrateOptions = {}): Promise<MigrationReport> {
  const upTo = options.upTo ?? SCHEMA_VERSION;
  const clock = options.clock ?? systemClock;
  const wanted = MIGRATIONS.filter((migration) => migration.version <= upTo);
  const concurrently = db.backend === 'postgresql';
  const builtIndexes: IndexBuildReport[] = [];
  const first = await db.transaction(async (tx) => {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtext('${MIGRATION_LOCK}'))`);
    await tx.query('CREATE SCHEMA IF NOT EXISTS indexer');
    await tx.query(`CREATE TABLE IF NOT EXISTS indexer.migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = await recordedVersions(tx);
    const from = Math.max(0, ...done);
    if (from > SCHEMA_VERSION) throw new SchemaTooNewError(from);
    const applied: string[] = [];
    for (const migration of wanted) {
      if (done.has(migration.version)) continue;
      if (isIndexMigration(migration)) {
        if (concurrently) continue;
        for (const index of migration.indexes) builtIndexes.push(await buildIndex(tx, index, false, clock, options.onProgress));
      } else {
        await tx.exec(migration.sql);
      }
      await record(tx, migration);
      applied.push(`${migration.version} ${migration.name}`);
    }
    await refreshMaxBlockView(tx, indexerVersion);
    return { from, applied, pending: concurrently ? wanted.filter((m) => isIndexMigration(m) && !done.has(m.version)) : [] };
  });
  if (first.pending.length > 0 && options.indexBuilds === 'defer') {
    return { from: first.from, to: await recordedVersion(db), applied: first.applied, builtIndexes, pendingIndexBuilds: true };
  }
  const built = first.pending.length > 0 ? await buildPendingIndexes(db, options) : { applied: [], builtIndexes: [] };
  return { from: first.from, to: await recordedVersion(db), applied: [...first.applied, ...built.applied], builtIndexes: [...builtIndexes, ...built.builtIndexes], pendingIndexBuilds: false };
}

/**
 * The index migrations the transactional ones left (PostgreSQL): CREATE INDEX CONCURRENTLY on one dedicated session
 * holding a session-level advisory lock, so that writers are never blocked and two processes never build at once (a
 * second one waits, then finds the work done). Each migration is recorded once all its indexes are valid.
 */
export async function buildPendingIndexes(db: SqlClient, options: IndexBuildOptions = {}): Promise<{ applied: string[]; builtIndexes: IndexBuildReport[] }> {
  const upTo = options.upTo ?? SCHEMA_VERSION;
  const { signal } = options;
  const clock = options.clock ?? systemClock;
  const applied: string[] = [];
  const builtIndexes: IndexBuildReport[] = [];
  await db.session(async (session) => {
    const [self] = await session.query('SELECT pg_backend_pid() AS pid');
    // An abort cancels the statement running on this session (from another connection: this one is busy).
    const cancel = () => void db.query('SELECT pg_cancel_backend($1)', [self?.pid]).catch(() => undefined);
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const started = clock.now();
      let told = false;
      while (!(await session.query(`SELECT pg_try_advisory_lock(hashtext('${INDEX_BUILD_LOCK}')) AS locked`))[0]?.locked) {
        signal?.throwIfAborted();
        if (!told) options.onProgress?.({ index: '*', event: 'waiting for another process', elapsedMs: clock.now() - started });
        told = true;
        await sleep(clock, INDEX_LOCK_POLL_MS, signal);
      }
      // No unlock needed: the session's connection is closed when this returns or throws, which releases the lock.
      // A statement_timeout set on the login would cancel a long build and leave an INVALID index to rebuild at
      // every start; this session is closed afterwards, so the setting goes with it.
      await session.query('SET statement_timeout = 0');
      const done = await recordedVersions(session);
      for (const migration of MIGRATIONS) {
        if (migration.version > upTo || done.has(migration.version) || !isIndexMigration(migration)) continue;
        for (const index of migration.indexes) {
          signal?.throwIfAborted();
          builtIndexes.push(await buildIndex(session, index, true, clock, options.onProgress, db));
        }
        await record(session, migration);
        applied.push(`${migration.version} ${migration.name}`);
      }
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  });
  return { applied, builtIndexes };
}

async function recordedVersion(q: SqlQuery): Promise<number> {
  const [row] = await q.query('SELECT coalesce(max(version), 0)::int AS version FROM indexer.migrations');
  return Number(row?.version ?? 0);
}

async function recordedVersions(q: SqlQuery): Promise<Set<number>> {
  return new Set((await q.query('SELECT version FROM indexer.migrations')).map((row) => Number(row.version)));
}

async function record(q: SqlQuery, migration: Migration): Promise<void> {
  await q.query('INSERT INTO indexer.migrations (version, name) VALUES ($1, $2) ON CONFLICT (version) DO NOTHING', [migration.version, migration.name]);
}

/** true: a valid index of that name exists; false: an INVALID one (an interrupted concurrent build); undefined: none. */
async function indexValidity(q: SqlQuery, index: IndexDefinition): Promise<boolean | undefined> {
  const [row] = await q.query(
    `SELECT i.indisvalid AND i.indisready AS valid FROM pg_catalog.pg_index i
       JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2`,
    [index.schema, index.name],
  );
  return row === undefined ? undefined : row.valid === true;
}

/**
 * Builds one index unless a valid one of that name exists. `monitor` (another connection of the same database)
 * polls pg_stat_progress_create_index for the progress reports while a concurrent build runs.
 */
async function buildIndex(
  q: SqlQuery,
  index: IndexDefinition,
  concurrently: boolean,
  clock: Clock,
  onProgress: IndexBuildOptions['onProgress'],
  monitor?: SqlQuery,
): Promise<IndexBuildReport> {
  const started = clock.now();
  const qualified = `"${index.schema}"."${index.name}"`;
  const validity = await indexValidity(q, index);
  if (validity === true) return { name: index.name, concurrently, replacedInvalid: false, ms: 0 };
  // CREATE INDEX … IF NOT EXISTS would keep an invalid index as it is: drop it first.
  if (validity === false) await q.query(`DROP INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF EXISTS ${qualified}`);
  const [pid] = concurrently ? await q.query('SELECT pg_backend_pid() AS pid') : [];
  let building = true;
  let timer: unknown;
  if (onProgress && monitor && pid) {
    // One report every PROGRESS_INTERVAL_MS, the next one armed once the last one's query answered (never two at once).
    const report = () => {
      monitor
        .query(
          `SELECT phase, blocks_done::text AS blocks_done, blocks_total::text AS blocks_total, tuples_done::text AS tuples_done,
                  tuples_total::text AS tuples_total FROM pg_stat_progress_create_index WHERE pid = $1`,
          [pid.pid],
        )
        .then(([p]) => {
          if (!building || p === undefined) return;
          onProgress({
            index: index.name,
            event: 'building',
            elapsedMs: clock.now() - started,
            phase: String(p.phase),
            blocksDone: Number(p.blocks_done),
            blocksTotal: Number(p.blocks_total),
            tuplesDone: Number(p.tuples_done),
            tuplesTotal: Number(p.tuples_total),
          });
        })
        .catch(() => undefined)
        .finally(() => {
          if (building) timer = clock.setTimeout(report, PROGRESS_INTERVAL_MS);
        });
    };
    timer = clock.setTimeout(report, PROGRESS_INTERVAL_MS);
  }
  try {
    await q.query(`CREATE INDEX ${concurrently ? 'CONCURRENTLY ' : ''}IF NOT EXISTS "${index.name}" ON "${index.schema}"."${index.table}" (${index.columns})`);
  } finally {
    building = false;
    clock.clearTimeout(timer);
  }
  // A concurrent build that fails raises its error (and leaves the index INVALID for the next start to rebuild).
  if ((await indexValidity(q, index)) !== true) throw new Error(`index ${index.name} is not valid after its build`);
  const report = { name: index.name, concurrently, replacedInvalid: validity === false, ms: clock.now() - started };
  onProgress?.({ index: index.name, event: 'built', elapsedMs: report.ms });
  return report;
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
