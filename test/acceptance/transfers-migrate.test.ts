// Black-box acceptance of who creates the transfers schema (issue: "a gateway alone never starts serving"): the built
// CLI as real processes against a real PostgreSQL 15 cluster, observed through exit codes, output and HTTP.
//
//   - `adm-infra transfers --migrate` on an empty database: exit 0, the report, the tables; a gateway alone then
//     answers /aval 200 at its first request (no 503 PGRST002 that postgrest-js would retry for ~7 s);
//   - `--migrate` refused: a login without rights, a server that is not there, a schema newer than the build (exit 1);
//   - a gateway alone on an empty database whose login owns it: it migrates and serves, no indexer anywhere;
//   - a gateway alone whose login may not create: one clear error line naming what to run, 503 PGRST002 meanwhile,
//     and after `--migrate` by the owner the same process serves, without a restart;
//   - a gateway alone on a schema newer than the build refuses to start (SchemaTooNewError), as the indexer does;
//   - a gateway alone on an older schema its login may not migrate serves it (a warning names what to run);
//   - a gateway alone does not wait behind another process's migration (its listener opens, 503 meanwhile);
//   - a gateway alone on the original indexer's tables (no indexer.migrations) serves them and migrates nothing;
//   - `--migrate` on the embedded database migrates DATA_DIR.
// Each case has its own database and anonymous role (roles are per cluster).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { UWS_MISSING_WARNING } from '../../http/engine.js';
import { migrate, SCHEMA_VERSION } from '../../storage/transfers/schema.js';
import { openPgClient } from '../../storage/transfers/sql-client.pg.js';
import { freePort, startCli, type CliProcess } from '../support/cli.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../support/system-packages.js';
import { waitFor } from '../support/wait.js';

const listening = (line: Record<string, unknown>) => line.msg === 'listening' && line.listener === 'transfers';
const skip = skipWithout(postgresServerPackage(), 'the transfers --migrate acceptance tests (test/acceptance/transfers-migrate.test.ts)');

describe('transfers schema: --migrate and a gateway alone (processes, PostgreSQL)', { skip }, () => {
  let cluster: PostgresCluster;
  let dir: string;
  const running: CliProcess[] = [];

  /** Runs SQL as the superuser on `database`, one statement at a time (CREATE DATABASE refuses a transaction block). */
  const admin = async (database: string, sql: string) => {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${cluster.port}/${database}` });
    await client.connect();
    try {
      let rows: Array<Record<string, unknown>> = [];
      for (const statement of sql.split(';').filter((text) => text.trim())) rows = (await client.query(statement)).rows as Array<Record<string, unknown>>;
      return rows;
    } finally {
      await client.end();
    }
  };
  const url = (login: string, database: string) => `postgres://${login}@127.0.0.1:${cluster.port}/${database}`;
  /** `adm-infra transfers --migrate [args]` to completion. */
  const migrateRun = async (env: Record<string, string>, args: string[] = []) => {
    const cli = startCli(['transfers', '--migrate', ...args], env, dir);
    const code = await cli.exited(60_000);
    return { code, out: cli.stdout(), err: cli.stderr() };
  };
  /** A gateway alone (no ETH_URL) on `dbUri`, as an operator runs it beside (or without) the indexer. */
  const gateway = async (env: Record<string, string>) => {
    const port = await freePort();
    const cli = startCli(['transfers'], { PGRST_SERVER_PORT: String(port), PGRST_SERVER_HOST: '127.0.0.1', ...env }, dir);
    running.push(cli);
    return { cli, get: (path: string) => fetch(`http://127.0.0.1:${port}${path}`) };
  };

  before(async () => {
    cluster = await startPostgres();
    dir = mkdtempSync(join(tmpdir(), 'adm-transfers-migrate-'));
  });
  after(async () => {
    await Promise.allSettled(running.map((cli) => cli.stop()));
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('--migrate on an empty database: exit 0 and the report, the tables exist, a gateway alone then answers /aval 200 at once', async () => {
    await admin('postgres', 'CREATE DATABASE empty_one');
    const env = { DB_NAME: url('postgres', 'empty_one'), PGRST_DB_ANON_ROLE: 'anon_one' };
    const first = await migrateRun(env);
    assert.equal(first.code, 0, first.err);
    assert.match(first.out, /^Migrated the transfers database postgres:\/\/postgres@127\.0\.0\.1:\d+\/empty_one \(login postgres\)$/m);
    assert.match(first.out, /^ {2}from: 0$/m);
    assert.match(first.out, new RegExp(`^  to: ${SCHEMA_VERSION}$`, 'm'));
    assert.match(first.out, /^ {2}applied: 1 ethtxs, aval, indexer state/m);
    assert.match(first.out, /^ {2}anonymous role anon_one: created, SELECT granted/m);
    const tables = await admin('empty_one', `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
      WHERE table_schema IN ('public', 'indexer') ORDER BY 1`);
    assert.deepEqual(tables.map((t) => t.name), ['indexer.blocks', 'indexer.migrations', 'indexer.state', 'public.aval', 'public.ethtxs', 'public.max_block']);

    const again = await migrateRun(env);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, new RegExp(`^  applied: none \\(already at version ${SCHEMA_VERSION}\\)$`, 'm'), 'idempotent');

    const { cli, get } = await gateway({ PGRST_DB_URI: url('postgres', 'empty_one'), PGRST_DB_ANON_ROLE: 'anon_one' });
    await cli.waitForLine(listening, 30_000);
    const aval = await get('/aval');
    assert.equal(aval.status, 200, 'the first request is served: no 503 for a client to retry');
    assert.equal(await aval.text(), '[{"status":true}]');
    assert.equal(cli.lines.some((line) => line.msg === 'database schema migrated'), false, 'a gateway on a current schema writes nothing');
    assert.equal(await cli.stop(), 0);
  });

  test('--migrate refused: no rights, no server, a newer schema (exit 1 with the reason)', async () => {
    await admin('postgres', 'CREATE DATABASE locked; CREATE ROLE nobody LOGIN');
    const denied = await migrateRun({ DB_NAME: url('nobody', 'locked') });
    assert.equal(denied.code, 1);
    assert.match(denied.err, /cannot migrate the transfers database postgres:\/\/nobody@127\.0\.0\.1:\d+\/locked \(login nobody\): no rights: permission denied for database locked/);
    assert.match(denied.err, /a login that can create tables/);
    assert.equal(denied.out, '');
    assert.deepEqual(await admin('locked', `SELECT nspname FROM pg_namespace WHERE nspname = 'indexer'`), [], 'nothing created');

    const closed = await freePort();
    const away = await migrateRun({ DB_NAME: `postgres://postgres@127.0.0.1:${closed}/nothing` });
    assert.equal(away.code, 1);
    assert.match(away.err, /cannot connect: .*ECONNREFUSED/);

    await admin('postgres', 'CREATE DATABASE too_new');
    await admin('too_new', `CREATE SCHEMA indexer; CREATE TABLE indexer.migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO indexer.migrations (version, name) VALUES (${SCHEMA_VERSION + 1}, 'from a newer build')`);
    const newer = await migrateRun({ DB_NAME: url('postgres', 'too_new') });
    assert.equal(newer.code, 1);
    assert.match(newer.err, new RegExp(`schema is at version ${SCHEMA_VERSION + 1}, newer than this build's ${SCHEMA_VERSION}`));
  });

  test('a gateway alone refuses a schema newer than the build (SchemaTooNewError, exit 1), as the indexer does', async () => {
    // too_new is made by the previous test.
    const { cli } = await gateway({ PGRST_DB_URI: url('postgres', 'too_new') });
    assert.equal(await cli.exited(30_000), 1);
    assert.match(cli.stdout(), new RegExp(`newer than this build's ${SCHEMA_VERSION}`));
    assert.equal(cli.lines.some(listening), false, 'no port opened');
  });

  test('a gateway alone on an empty database its login owns: it migrates and /aval answers 200, no indexer', async () => {
    await admin('postgres', 'CREATE ROLE owner_login LOGIN CREATEROLE; CREATE DATABASE owned OWNER owner_login');
    const { cli, get } = await gateway({ PGRST_DB_URI: url('owner_login', 'owned'), PGRST_DB_ANON_ROLE: 'anon_owned' });
    await cli.waitForLine(listening, 30_000);
    const aval = await get('/aval');
    assert.equal(aval.status, 200, await aval.clone().text());
    assert.equal(await aval.text(), '[{"status":true}]');
    assert.equal(await (await get('/max_block')).text(), '[{"max":null,"version":"3.0.0"}]');
    const migrated = cli.lines.find((line) => line.msg === 'database schema migrated');
    // The transactional migrations before serving; the index migration (CREATE INDEX CONCURRENTLY) after, in the
    // background, while it already answers.
    assert.deepEqual([migrated?.login, migrated?.from, migrated?.to], ['owner_login', 0, SCHEMA_VERSION - 1]);
    const indexes = await cli.waitForLine((line) => line.msg === 'database schema migrated: indexes built', 30_000);
    assert.deepEqual(indexes.applied, [`${SCHEMA_VERSION} composite indexes for address and token history pages`]);
    assert.ok(cli.lines.some((line) => line.msg === 'anonymous read-only role created' && line.role === 'anon_owned'));
    // (The one warning allowed is the edge's own where uWS cannot load: Node 22 and 24, or ADM_HTTP_UWS=missing.)
    const problems = cli.lines.filter((line) => (line.level === 'warn' || line.level === 'error') && line.msg !== UWS_MISSING_WARNING);
    assert.deepEqual(problems, [], `no warning or error: ${cli.stdout()}`);
    assert.equal(await cli.stop(), 0);
  });

  const RETRY_LINE = 'the database schema is still not ready; answering 503 PGRST002, retrying';
  test('a gateway alone whose login may not create: one clear error line, 503 PGRST002, then serves after --migrate by the owner without a restart', async () => {
    // As in PostgREST's own setup: an authenticator login that may only switch to the anonymous role.
    await admin('postgres', `CREATE ROLE shared_owner LOGIN; CREATE DATABASE shared OWNER shared_owner;
      CREATE ROLE authenticator LOGIN NOINHERIT; CREATE ROLE anon_shared NOLOGIN; GRANT anon_shared TO authenticator`);
    const { cli, get } = await gateway({ PGRST_DB_URI: url('authenticator', 'shared'), PGRST_DB_ANON_ROLE: 'anon_shared' });
    const explained = await cli.waitForLine((line) => line.level === 'error' && line.actor === 'transfers.db', 30_000);
    assert.match(String(explained.msg), /the database schema is not migrated and the gateway's login \(authenticator\) may not create it: run `adm-infra transfers --migrate` with a login that can create tables/);
    assert.match(String(explained.msg), /or start the indexer once/);
    assert.match(String(explained.reason), /permission denied for database shared/);
    await cli.waitForLine(listening, 30_000);
    const waiting = await get('/aval');
    assert.equal(waiting.status, 503);
    assert.equal(((await waiting.json()) as { code: string }).code, 'PGRST002');
    // The next check (after the 1 s backoff) fails too, with the short line; the migration starts only then, so the
    // retry lines below are there to be checked however fast it runs.
    await cli.waitForLine((line) => line.msg === RETRY_LINE, 30_000);

    // The owner migrates with a config file (the environment adds the rest, as for the service).
    const config = join(dir, 'owner.json5');
    writeFileSync(config, `{ DB_NAME: '${url('shared_owner', 'shared')}', PGRST_DB_ANON_ROLE: 'anon_shared' }`);
    const migrated = await migrateRun({}, ['--config', config]);
    assert.equal(migrated.code, 0, migrated.err);
    assert.match(migrated.out, /from: 0/);
    // The owner may not grant the existing role to itself (no CREATEROLE): a warning, the schema is in place.
    assert.match(migrated.err, /warning: anonymous role anon_shared not fully set up/);

    const served = await waitFor(
      async () => {
        const answer = await get('/aval');
        return answer.status === 200 ? answer.text() : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 250, what: '/aval 200 after --migrate' },
    );
    assert.equal(served, '[{"status":true}]');
    assert.equal(cli.child.exitCode, null, 'the same process, no restart');
    assert.equal(cli.lines.filter((line) => line.level === 'error').length, 1, 'the long error line is written once');
    const retries = cli.lines.filter((line) => line.msg === RETRY_LINE);
    assert.ok(retries.length > 0 && retries.every((line, i) => i === 0 || Date.parse(String(line.time)) - Date.parse(String(retries[i - 1]!.time)) >= 900), 'retries are logged at most once a second (the backoff)');
    assert.ok(cli.lines.some((line) => line.msg === 'the database schema is ready: the gateway serves now'));
    assert.equal(cli.lines.some((line) => line.msg === 'database schema migrated'), false, 'the gateway itself wrote nothing');
    assert.equal(await cli.stop(), 0);
  });

  test('a gateway alone on an older schema its login may not migrate serves it as it is, with a warning naming what to run', async () => {
    await admin('postgres', `CREATE ROLE old_owner LOGIN; CREATE DATABASE olddb OWNER old_owner;
      CREATE ROLE old_auth LOGIN NOINHERIT; CREATE ROLE anon_old NOLOGIN; GRANT anon_old TO old_auth`);
    // An older build's layout: version 1 only, as the owner left it (the anonymous role granted by hand).
    const owner = openPgClient({ connection: { connectionString: url('old_owner', 'olddb') }, maxConnections: 1, applicationName: 'older build' });
    try {
      assert.equal((await migrate(owner, '3.0.0', { upTo: 1 })).to, 1);
      await owner.exec('GRANT USAGE ON SCHEMA public TO anon_old; GRANT SELECT ON public.ethtxs, public.max_block, public.aval TO anon_old');
      // A login that may read the version (so it knows the schema is older) but not change the schema.
      await owner.exec('GRANT USAGE ON SCHEMA indexer TO old_auth; GRANT SELECT ON indexer.migrations TO old_auth');
    } finally {
      await owner.close();
    }
    const { cli, get } = await gateway({ PGRST_DB_URI: url('old_auth', 'olddb'), PGRST_DB_ANON_ROLE: 'anon_old' });
    await cli.waitForLine(listening, 30_000);
    const aval = await get('/aval');
    assert.equal(aval.status, 200, await aval.clone().text());
    assert.equal(await aval.text(), '[{"status":true}]');
    const warning = cli.lines.find((line) => line.level === 'warn' && /older than this build/.test(String(line.msg)));
    assert.ok(warning, cli.stdout());
    assert.match(String(warning.msg), /adm-infra transfers --migrate/);
    assert.deepEqual([warning.from, warning.to], [1, SCHEMA_VERSION]);
    assert.equal(cli.lines.some((line) => line.level === 'error'), false, 'no error: it serves');
    assert.equal(await cli.stop(), 0);
  });

  test('a gateway alone does not queue behind a migration in progress: 503 PGRST002 meanwhile, then it serves', async () => {
    await admin('postgres', 'CREATE ROLE busy_owner LOGIN CREATEROLE; CREATE DATABASE busy OWNER busy_owner');
    // Another process migrating: the lock migrate() holds for its whole transaction.
    const other = new pg.Client({ connectionString: url('postgres', 'busy') });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT pg_advisory_xact_lock(hashtext('adm-infra transfers migrations'))`);
      const { cli, get } = await gateway({ PGRST_DB_URI: url('busy_owner', 'busy'), PGRST_DB_ANON_ROLE: 'anon_busy' });
      await cli.waitForLine(listening, 30_000);
      const busy = await cli.waitForLine((line) => line.msg === 'another process is migrating the database schema; the gateway answers 503 PGRST002 until it is done');
      assert.equal(busy.level, 'warn');
      const waiting = await get('/aval');
      assert.deepEqual([waiting.status, ((await waiting.json()) as { code: string }).code], [503, 'PGRST002']);
      await other.query('COMMIT'); // that migration "ended" without migrating: the gateway's login does it
      const served = await waitFor(async () => ((await get('/aval')).status === 200 ? true : undefined), { timeoutMs: 20_000, intervalMs: 250, what: '/aval 200' });
      assert.equal(served, true);
      assert.ok(cli.lines.some((line) => line.msg === 'database schema migrated' && line.login === 'busy_owner'));
      assert.equal(await cli.stop(), 0);
    } finally {
      await other.end();
    }
  });

  test("a gateway alone on the original indexer's tables (no indexer.migrations) serves them as they are and writes nothing", async () => {
    // The drop-in where only PostgREST is replaced: the original indexer may still be writing these tables.
    await admin('postgres', `CREATE DATABASE original; CREATE ROLE anon_original NOLOGIN`);
    await admin('original', `CREATE TABLE public.ethtxs ("time" integer, txfrom text, txto text, gas bigint, gasprice bigint, block integer,
        txhash text, value numeric, contract_to text, contract_value text);
      INSERT INTO public.ethtxs (block, txhash, value) VALUES (7, '0xa', 1), (8, '0xb', 2);
      CREATE TABLE public.aval (status integer); INSERT INTO public.aval VALUES (1);
      GRANT USAGE ON SCHEMA public TO anon_original; GRANT SELECT ON public.ethtxs, public.aval TO anon_original`);
    const { cli, get } = await gateway({ PGRST_DB_URI: url('postgres', 'original'), PGRST_DB_ANON_ROLE: 'anon_original' });
    await cli.waitForLine(listening, 30_000);
    assert.equal(await (await get('/aval')).text(), '[{"status":1}]', "the original's integer aval, as PostgREST served it");
    assert.deepEqual(await (await get('/ethtxs?select=block&order=block')).json(), [{ block: 7 }, { block: 8 }], 'the last block is not deleted');
    assert.ok(cli.lines.some((line) => String(line.msg).startsWith("the database has the original indexer's tables")));
    assert.deepEqual(await admin('original', `SELECT nspname FROM pg_namespace WHERE nspname = 'indexer'`), [], 'nothing migrated');
    assert.equal(await cli.stop(), 0);
  });

  test('--migrate on the embedded database migrates DATA_DIR', async () => {
    const dataDir = join(dir, 'pglite', 'transfers');
    const result = await migrateRun({ DATA_DIR: dataDir });
    assert.equal(result.code, 0, result.err);
    assert.match(result.out, new RegExp(`^Migrated the transfers database PGlite in ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(login postgres\\)$`, 'm'));
    assert.match(result.out, /^ {2}applied: 1 ethtxs/m);
  });
});
