// Migration 2 (storage/transfers/schema.ts): the composite indexes of spec A §4.1's access paths, built on an
// existing table. PostgreSQL: CREATE INDEX CONCURRENTLY on a dedicated session after the transactional migrations,
// writers not blocked, an INVALID index (an interrupted concurrent build) rebuilt, two processes building once.
// PGlite: plain CREATE INDEX. Both: rows kept, a re-run changes nothing.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { buildPendingIndexes, migrate, SCHEMA_VERSION, type IndexBuildProgress } from '../../../storage/transfers/schema.js';
import type { SqlClient, SqlQuery } from '../../../storage/transfers/sql-client.js';
import { openPgClient } from '../../../storage/transfers/sql-client.pg.js';
import { openPgliteClient } from '../../../storage/transfers/sql-client.pglite.js';
import { startPostgres, type PostgresCluster } from '../../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../../support/system-packages.js';

const COMPOSITE = {
  txfrom_time_txhash_index: '(txfrom, "time", txhash)',
  txto_time_txhash_index: '(txto, "time", txhash)',
  txto_txfrom_time_txhash_index: '(txto, txfrom, "time", txhash)',
  txto_contract_to_time_txhash_index: '(txto, contract_to, "time", txhash)',
} as const;
const NAMES = Object.keys(COMPOSITE).sort();
const ROWS = 20_000;

/** `n` rows: 97 senders, 89 recipients, 10 rows a block sharing a time, every tenth a token transfer. */
async function fill(db: SqlQuery, n: number, first = 1): Promise<void> {
  await db.query(
    `INSERT INTO public.ethtxs
     SELECT 1600000000 + (i / 10) * 12, '0x' || lpad(to_hex(i % 97), 40, '0'), '0x' || lpad(to_hex(1000 + i % 89), 40, '0'), 21000, 1, i / 10,
            '0x' || md5(i::text) || md5((i + 1)::text), i, CASE WHEN i % 10 = 0 THEN lpad(to_hex(i % 97), 64, '0') ELSE '' END,
            CASE WHEN i % 10 = 0 THEN lpad(to_hex(i), 64, '0') ELSE '' END
       FROM generate_series($1::int, $2::int) AS i`,
    [first, first + n - 1],
  );
}

/** name → { valid, definition } of ethtxs's composite indexes. */
async function composites(db: SqlQuery): Promise<Record<string, { valid: boolean; definition: string; oid: string }>> {
  const rows = await db.query(
    `SELECT c.relname::text AS name, i.indisvalid AND i.indisready AS valid, pg_get_indexdef(c.oid) AS definition, c.oid::text AS oid
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'public.ethtxs'::regclass AND c.relname = ANY ($1) ORDER BY 1`,
    [NAMES],
  );
  return Object.fromEntries(rows.map((row) => [String(row.name), { valid: row.valid === true, definition: String(row.definition), oid: String(row.oid) }]));
}

function assertComposites(found: Awaited<ReturnType<typeof composites>>): void {
  assert.deepEqual(Object.keys(found), NAMES);
  for (const [name, columns] of Object.entries(COMPOSITE)) {
    assert.equal(found[name]!.valid, true, `${name} valid`);
    assert.equal(found[name]!.definition, `CREATE INDEX ${name} ON public.ethtxs USING btree ${columns}`);
  }
}

const count = async (db: SqlQuery) => Number((await db.query('SELECT count(*)::int AS n FROM public.ethtxs'))[0]?.n);

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('migration 2, composite indexes: PostgreSQL', { skip: skipWithout(postgresServerPackage(), 'the PostgreSQL half of the index migration tests') }, () => {
  let cluster: PostgresCluster;
  let databases = 0;
  const opened: Array<{ close(): Promise<void> }> = [];
  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    for (const client of opened.reverse()) await client.close().catch(() => undefined);
    await cluster?.stop();
  });
  const client = (url: string, maxConnections = 3): SqlClient => {
    const db = openPgClient({ connection: { connectionString: url }, maxConnections, applicationName: 'test migrate' });
    opened.push(db);
    return db;
  };
  const raw = async (url: string) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    opened.push({ close: () => c.end() });
    return c;
  };
  /** A database at schema version 1 (what the previous build left) holding ROWS rows. */
  const v1 = async () => {
    const url = await cluster.createDatabase(`indexes_${++databases}`);
    const db = client(url);
    const report = await migrate(db, '3.0.0', { upTo: 1 });
    assert.equal(report.to, 1);
    await fill(db, ROWS);
    return { url, db };
  };
  /** The backend running a CREATE INDEX CONCURRENTLY on ethtxs, and the phase pg_stat_progress_create_index shows. */
  const concurrentBuild = async (db: SqlQuery) => {
    const [row] = await db.query(
      `SELECT a.pid, p.phase, a.query FROM pg_stat_activity a JOIN pg_stat_progress_create_index p ON p.pid = a.pid
        WHERE p.relid = 'public.ethtxs'::regclass`,
    );
    return row === undefined ? undefined : { pid: Number(row.pid), phase: String(row.phase), query: String(row.query) };
  };

  test('a version 1 database with rows: its rows stay, the four indexes are built CONCURRENTLY and valid, every row is in them; a re-run is a no-op', async () => {
    const { db } = await v1();
    assert.deepEqual(await composites(db), {});
    const progress: IndexBuildProgress[] = [];
    const report = await migrate(db, '3.0.0', { onProgress: (p) => progress.push(p) });
    assert.deepEqual(report.applied, ['2 composite indexes for address and token history pages']);
    assert.equal(report.from, 1);
    assert.equal(report.to, SCHEMA_VERSION);
    assert.deepEqual(report.builtIndexes.map((b) => [b.name, b.concurrently, b.replacedInvalid]).sort(), NAMES.map((name) => [name, true, false]));
    assert.deepEqual(progress.filter((p) => p.event === 'built').map((p) => p.index).sort(), NAMES);
    assert.equal(await count(db), ROWS);
    const built = await composites(db);
    assertComposites(built);
    await db.query('CREATE EXTENSION IF NOT EXISTS amcheck');
    for (const name of NAMES) await db.query(`SELECT bt_index_check($1::regclass, true)`, [`public.${name}`]);

    const again = await migrate(db, '3.0.0');
    assert.deepEqual(again.applied, []);
    assert.deepEqual(again.builtIndexes, []);
    assert.deepEqual(await composites(db), built, 'the same index objects (oids), untouched');
    assert.deepEqual((await db.query('SELECT version FROM indexer.migrations ORDER BY 1')).map((r) => r.version), [1, 2]);
  });

  test('writers are not blocked while the concurrent build runs: it holds SHARE UPDATE EXCLUSIVE on ethtxs, and an INSERT from another connection commits during it', async () => {
    const { url, db } = await v1();
    // A writer transaction open before the build: CREATE INDEX CONCURRENTLY waits for it to end (phase "waiting for
    // writers before build"), which keeps the build running for as long as this test needs.
    const early = await raw(url);
    await early.query('BEGIN');
    await early.query(`INSERT INTO public.ethtxs (txfrom, txto, "time", txhash, contract_to, contract_value) VALUES ('0xEarly', '0xB', 1, '0x01', '', '')`);
    const migrating = migrate(db, '3.0.0');
    try {
      const build = await until('a concurrent index build', () => concurrentBuild(db));
      assert.match(build.query, /^CREATE INDEX CONCURRENTLY IF NOT EXISTS "txfrom_time_txhash_index" ON "public"\."ethtxs"/);
      const locks = await db.query(
        `SELECT mode, granted FROM pg_locks WHERE pid = $1 AND locktype = 'relation' AND relation = 'public.ethtxs'::regclass ORDER BY mode`,
        [build.pid],
      );
      // Plain CREATE INDEX takes SHARE, which conflicts with INSERT/UPDATE/DELETE's ROW EXCLUSIVE; this one does not.
      assert.deepEqual(locks, [{ mode: 'ShareUpdateExclusiveLock', granted: true }]);

      const writer = await raw(url);
      await writer.query(`SET lock_timeout = '5s'`);
      const started = Date.now();
      await writer.query(`INSERT INTO public.ethtxs (txfrom, txto, "time", txhash, contract_to, contract_value) VALUES ('0xDuring', '0xB', 2, '0x02', '', '')`);
      await writer.query(`UPDATE public.ethtxs SET gas = 1 WHERE txhash = '0x02'`);
      const ms = Date.now() - started;
      // Still the same build, not finished: the writes happened while it ran.
      assert.equal((await concurrentBuild(db))?.pid, build.pid);
      assert.ok(ms < 2_000, `the INSERT and UPDATE took ${ms} ms`);
    } finally {
      await early.query('COMMIT');
    }
    const done = await migrating;
    assert.equal(done.builtIndexes.length, NAMES.length);
    assert.equal(await count(db), ROWS + 2);
    assertComposites(await composites(db));
    // Both rows written around and during the build are in every index (amcheck's heapallindexed).
    await db.query('CREATE EXTENSION IF NOT EXISTS amcheck');
    for (const name of NAMES) await db.query(`SELECT bt_index_check($1::regclass, true)`, [`public.${name}`]);
  });

  test('an abort (the service shutting down) cancels the background build at once: nothing keeps building, version 2 is not recorded, the next start builds', async () => {
    const { url, db } = await v1();
    const deferred = await migrate(db, '3.0.0', { indexBuilds: 'defer' });
    assert.deepEqual(deferred.builtIndexes, []);
    // An open writer transaction holds the build in "waiting for writers", so it is surely running when aborted.
    const early = await raw(url);
    await early.query('BEGIN');
    await early.query(`INSERT INTO public.ethtxs (txfrom, txto, "time", txhash, contract_to, contract_value) VALUES ('0xEarly', '0xB', 1, '0x01', '', '')`);
    const stop = new AbortController();
    const building = buildPendingIndexes(db, { signal: stop.signal });
    try {
      await until('a concurrent index build', () => concurrentBuild(db));
      const started = Date.now();
      stop.abort(new Error('shutting down'));
      await assert.rejects(building);
      assert.ok(Date.now() - started < 5_000, `the build stopped ${Date.now() - started} ms after the abort`);
      await until('no index build running', async () => (await concurrentBuild(db)) === undefined || undefined);
      assert.deepEqual((await db.query('SELECT version FROM indexer.migrations ORDER BY 1')).map((r) => r.version), [1]);
    } finally {
      await early.query('COMMIT');
    }
    const next = await buildPendingIndexes(db);
    assert.deepEqual(next.applied, ['2 composite indexes for address and token history pages']);
    assertComposites(await composites(db));
    assert.equal(await count(db), ROWS + 1);
  });

  test('an INVALID index left by an interrupted concurrent build is dropped and built again on the next start', async () => {
    const { db } = await v1();
    // A concurrent build that fails (a unique index over duplicates) leaves its index behind, INVALID, under the name
    // migration 2 uses, as a build cancelled or killed part way does.
    await assert.rejects(db.query('CREATE UNIQUE INDEX CONCURRENTLY txfrom_time_txhash_index ON public.ethtxs (txfrom)'), (error: { code?: string }) => error.code === '23505');
    assert.equal((await composites(db)).txfrom_time_txhash_index?.valid, false);
    const report = await migrate(db, '3.0.0');
    assert.deepEqual(report.builtIndexes.filter((b) => b.replacedInvalid).map((b) => b.name), ['txfrom_time_txhash_index']);
    assertComposites(await composites(db));
    assert.equal(await count(db), ROWS);
  });

  test('two processes migrating at once: one builds, the other waits for it (without blocking it) and builds nothing', async () => {
    const { url } = await v1();
    const early = await raw(url);
    await early.query('BEGIN');
    await early.query(`INSERT INTO public.ethtxs (txfrom, "time", txhash) VALUES ('0xEarly', 1, '0x01')`);
    const first = client(url);
    const second = client(url);
    const waits: IndexBuildProgress[] = [];
    let a: Promise<Awaited<ReturnType<typeof migrate>>> | undefined;
    let b: typeof a;
    try {
      a = migrate(first, '3.0.0');
      await until('the first build', () => concurrentBuild(first));
      b = migrate(second, '3.0.0', { onProgress: (p) => waits.push(p) });
      await until('the second process to wait', async () => (waits.some((p) => p.event === 'waiting for another process') ? true : undefined));
    } finally {
      await early.query('COMMIT');
    }
    const [ra, rb] = await Promise.all([a!, b!]);
    assert.equal(ra.builtIndexes.length, NAMES.length);
    assert.deepEqual(ra.applied, ['2 composite indexes for address and token history pages']);
    assert.deepEqual(rb.builtIndexes, []);
    assert.deepEqual(rb.applied, []);
    assert.equal(rb.to, SCHEMA_VERSION);
    assertComposites(await composites(first));
    assert.deepEqual((await first.query('SELECT version FROM indexer.migrations ORDER BY 1')).map((r) => r.version), [1, 2]);
  });
});

describe('migration 2, composite indexes: PGlite', () => {
  let db: SqlClient;
  before(async () => {
    db = await openPgliteClient(undefined);
  });
  after(async () => db.close());

  test('a version 1 database with rows: plain CREATE INDEX (no CONCURRENTLY on the one embedded session), rows kept, indexes valid; a re-run is a no-op', async () => {
    assert.equal((await migrate(db, '3.0.0', { upTo: 1 })).to, 1);
    await fill(db, 2_000);
    const report = await migrate(db, '3.0.0');
    assert.deepEqual(report.applied, ['2 composite indexes for address and token history pages']);
    assert.deepEqual(report.builtIndexes.map((b) => [b.name, b.concurrently]).sort(), NAMES.map((name) => [name, false]));
    assert.equal(await count(db), 2_000);
    const built = await composites(db);
    assertComposites(built);
    const again = await migrate(db, '3.0.0');
    assert.deepEqual([again.applied, again.builtIndexes], [[], []]);
    assert.deepEqual(await composites(db), built);
  });
});
