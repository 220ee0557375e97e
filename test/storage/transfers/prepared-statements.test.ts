// The gateway's named prepared statements on PostgreSQL (storage/transfers/sql-client.pg.ts queryPrepared): the same
// rows as unnamed statements, at most namedStatementsPerConnection statements kept per connection whatever is sent,
// failures that do not leave a statement behind give its slot back, the session setup (SET ROLE) still applies, and a
// caller's cancellation cancels the running statement on the server.
// Each client here has one connection, so pg_prepared_statements read through `query` (unnamed) is that connection's.

import assert from 'node:assert/strict';
import { INDEXER_VERSION } from '../../../src/transfers/config.js';
import { after, before, describe, test } from 'node:test';
import { CancellationSource } from '../../../src/cancellation.js';
import { anonymousSessionSetup } from '../../../storage/transfers/gateway-store.js';
import { ensureAnonRole, migrate } from '../../../storage/transfers/schema.js';
import { openPgClient, statementName, type PgSqlClient } from '../../../storage/transfers/sql-client.pg.js';
import { startPostgres, type PostgresCluster } from '../../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../../support/system-packages.js';
import { prng } from '../../support/random.js';
import { waitFor } from '../../support/wait.js';

const skip = skipWithout(postgresServerPackage(), 'the named prepared statements of the gateway on PostgreSQL (test/storage/transfers/prepared-statements.test.ts)');

describe('named prepared statements on PostgreSQL', { skip }, () => {
  let cluster: PostgresCluster;
  let url: string;
  const clients: PgSqlClient[] = [];
  const open = (cap: number, sessionSetup?: string) => {
    const client = openPgClient({
      connection: { connectionString: url },
      maxConnections: 1,
      applicationName: 'test prepared',
      namedStatementsPerConnection: cap,
      ...(sessionSetup === undefined ? {} : { sessionSetup }),
    });
    clients.push(client);
    return client;
  };
  const preparedNames = async (client: PgSqlClient) =>
    (await client.query('SELECT name FROM pg_prepared_statements ORDER BY name')).map((row) => String(row.name));

  before(async () => {
    cluster = await startPostgres();
    url = cluster.url;
    const admin = openPgClient({ connection: { connectionString: url }, maxConnections: 1, applicationName: 'test setup' });
    try {
      await migrate(admin, INDEXER_VERSION);
      assert.deepEqual((await ensureAnonRole(admin, 'web_anon')).problems, []);
      await admin.query(`INSERT INTO public.ethtxs (time, txfrom, txto, gas, gasprice, block, txhash, value, contract_to, contract_value)
        SELECT 1700000000 + n, '0xaa', '0xbb', 21000, 1, n, '0x' || lpad(to_hex(n), 64, '0'), n * 1000000000000000000::numeric, '', '' FROM generate_series(1, 50) n`);
    } finally {
      await admin.close();
    }
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await cluster?.stop();
  });

  test('the same rows as unnamed statements; a repeated statement is prepared once, under the name of its text', async () => {
    const client = open(4);
    const text = 'SELECT block::text, value::text FROM public.ethtxs WHERE block >= $1 ORDER BY block DESC LIMIT $2';
    for (const [from, limit] of [['10', '3'], ['45', '10'], ['60', '5'], ['1', '50'], ['2', '1'], ['3', '2'], ['48', '4']]) {
      assert.deepEqual(await client.queryPrepared(text, [from, limit]), await client.query(text, [from, limit]));
    }
    assert.deepEqual(await preparedNames(client), [statementName(text)]);
  });

  test('at most the cap of distinct statements per connection; the others still answer, unnamed', async () => {
    const client = open(3);
    for (let round = 0; round < 2; round++) {
      for (let k = 0; k < 20; k++) {
        const rows = await client.queryPrepared(`SELECT count(*)::int AS n, ${k} AS k FROM public.ethtxs WHERE block > $1`, [String(k)]);
        assert.deepEqual(rows, [{ n: 50 - k, k }]);
      }
    }
    const names = await preparedNames(client);
    assert.deepEqual(names.sort(), [0, 1, 2].map((k) => statementName(`SELECT count(*)::int AS n, ${k} AS k FROM public.ethtxs WHERE block > $1`)).sort());
    // Concurrent first uses of new statements cannot overshoot the cap either.
    const wide = open(2);
    await Promise.all(Array.from({ length: 12 }, (_, k) => wide.queryPrepared(`SELECT ${k} + $1::int AS v`, ['1'])));
    assert.equal((await preparedNames(wide)).length, 2);
  });

  test('a statement the server refused to parse gives its slot back; one that failed later keeps it (it is prepared)', async () => {
    const client = open(2);
    for (let k = 0; k < 5; k++) {
      await assert.rejects(client.queryPrepared(`SELECT no_such_column_${k} FROM public.ethtxs WHERE block = $1`, ['1']), (error: { code?: string }) => error.code === '42703');
    }
    assert.deepEqual(await preparedNames(client), []);
    // Parsed, then failed at bind: the server keeps it; it counts and runs again with valid values.
    const typed = 'SELECT count(*)::int AS n FROM public.ethtxs WHERE block = $1';
    await assert.rejects(client.queryPrepared(typed, ['abc']), (error: { code?: string }) => error.code === '22P02');
    assert.deepEqual(await client.queryPrepared(typed, ['7']), [{ n: 1 }]);
    await assert.rejects(client.queryPrepared('SELECT count(*)::int AS n FROM public.ethtxs WHERE time = $1', ['x']), (error: { code?: string }) => error.code === '22P02');
    // Full: a third statement, failing or not, runs unnamed.
    await assert.rejects(client.queryPrepared('SELECT count(*)::int AS n FROM public.ethtxs WHERE gas = $1', ['y']), (error: { code?: string }) => error.code === '22P02');
    assert.deepEqual(await client.queryPrepared('SELECT 1 AS one WHERE $1::int = 1', ['1']), [{ one: 1 }]);
    assert.equal((await preparedNames(client)).length, 2);
  });

  test('prepared statements run in the session the setup made: the anonymous role, read-only', async () => {
    const client = open(8, anonymousSessionSetup('web_anon'));
    for (let k = 0; k < 3; k++) {
      assert.deepEqual(await client.queryPrepared('SELECT current_user::text AS who, count(*)::int AS n FROM public.ethtxs WHERE block <= $1', ['10']), [{ who: 'web_anon', n: 10 }]);
    }
    await assert.rejects(client.queryPrepared('SELECT * FROM indexer.state WHERE $1::int = 1', ['1']), (error: { code?: string }) => error.code === '42501');
    await assert.rejects(client.queryPrepared('DELETE FROM public.ethtxs WHERE block = $1', ['1']), (error: { code?: string }) => error.code === '25006' || error.code === '42501');
    assert.deepEqual(await client.queryPrepared('SELECT current_user::text AS who, count(*)::int AS n FROM public.ethtxs WHERE block <= $1', ['50']), [{ who: 'web_anon', n: 50 }]);
    // PostgreSQL's own choice between custom and generic plans, whatever the server's configuration says: a kept plan
    // is safe because common values never reach it as parameters (gateway-store.ts, read-sql.ts).
    assert.deepEqual(await client.query('SHOW plan_cache_mode'), [{ plan_cache_mode: 'auto' }]);
  });

  test('a cancellation cancels the running statement on the server (named or not); the connection is replaced; one already fired sends nothing', async () => {
    const client = open(8, anonymousSessionSetup('web_anon'));
    const admin = openPgClient({ connection: { connectionString: url }, maxConnections: 1, applicationName: 'test watcher' });
    clients.push(admin);
    const sleeping = async () =>
      Number((await admin.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'test prepared' AND state = 'active' AND query LIKE '%pg_sleep%'"))[0]!.n);
    const [{ pid: firstPid }] = (await client.query('SELECT pg_backend_pid() AS pid')) as Array<{ pid: number }>;
    for (const run of ['named', 'unnamed'] as const) {
      const cancellation = new CancellationSource();
      const text = `SELECT pg_sleep(30)::text AS slept, $1::text AS run`;
      const statement = run === 'named' ? client.queryPrepared(text, [run], cancellation) : client.query(text, [run], cancellation);
      const outcome = statement.then(() => 'answered', (error: unknown) => error);
      await waitFor(async () => (await sleeping()) === 1, { what: `the ${run} statement running`, timeoutMs: 10_000 });
      const reason = new Error('client went away');
      cancellation.cancel(reason);
      assert.equal(await outcome, reason, `${run}: rejects with the cancellation's reason`);
      // Well before pg_sleep's 30 s (the backend reports itself idle a moment after its error reached the client).
      await waitFor(async () => (await sleeping()) === 0, { what: `${run}: nothing left running on the server`, timeoutMs: 5_000 });
    }
    // The connection that ran a cancelled statement is not reused: the next read has a new backend, set up again.
    const [after] = (await client.query('SELECT pg_backend_pid() AS pid, current_user::text AS who')) as Array<{ pid: number; who: string }>;
    assert.notEqual(after!.pid, firstPid);
    assert.equal(after!.who, 'web_anon');
    const fired = new CancellationSource();
    fired.cancel('gone');
    await assert.rejects(client.queryPrepared('SELECT 1 AS one', [], fired), (error) => error === 'gone');
    assert.ok(!(await preparedNames(client)).includes(statementName('SELECT 1 AS one')), 'never prepared');
  });

  test('a storm of cancellations at random moments leaves the pool serving: every read settles, nothing keeps running', async () => {
    const client = openPgClient({
      connection: { connectionString: url },
      maxConnections: 4,
      applicationName: 'test storm',
      namedStatementsPerConnection: 8,
      sessionSetup: anonymousSessionSetup('web_anon'),
    });
    clients.push(client);
    const random = prng(20_261_126);
    const reads = Array.from({ length: 40 }, (_, i) => {
      const cancellation = new CancellationSource();
      const text = i % 2 === 0 ? 'SELECT pg_sleep($1::float8)::text AS slept' : 'SELECT pg_sleep($1::float8)::text AS slept, 1 AS unnamed';
      const read = i % 2 === 0 ? client.queryPrepared(text, ['0.2'], cancellation) : client.query(text, ['0.2'], cancellation);
      const settled = read.then(
        () => 'answered' as const,
        (error: unknown) => (error === cancellation.reason ? ('cancelled' as const) : error),
      );
      // Some before they start, some while queued for a connection, some while running, some never.
      const at = random();
      if (at < 0.75) setTimeout(() => cancellation.cancel(new Error(`gone ${i}`)), Math.floor(at * 600));
      return settled;
    });
    const outcomes = await Promise.all(reads);
    const unexpected = outcomes.filter((outcome) => outcome !== 'answered' && outcome !== 'cancelled');
    assert.deepEqual(unexpected, [], 'every read answered or rejected with its own cancellation');
    assert.ok(outcomes.includes('cancelled') && outcomes.includes('answered'), JSON.stringify(outcomes));
    await waitFor(
      async () => {
        const [row] = await client.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'test storm' AND state = 'active' AND query LIKE '%pg_sleep%'");
        return row!.n === 0;
      },
      { what: 'no cancelled statement left running', timeoutMs: 10_000 },
    );
    // The pool still serves, as the anonymous role, on every connection it opens.
    const after = await Promise.all(Array.from({ length: 8 }, () => client.queryPrepared('SELECT current_user::text AS who', [])));
    assert.ok(after.every((rows) => rows[0]?.who === 'web_anon'));
  });

  test('a client without a cap never names a statement', async () => {
    const client = open(0);
    assert.deepEqual(await client.queryPrepared('SELECT $1::int + 1 AS v', ['1']), [{ v: 2 }]);
    assert.deepEqual(await preparedNames(client), []);
  });

  test("genericPlan: that named statement runs with its generic plan (force_generic_plan); every other statement on the connection runs under the session's auto", async () => {
    const client = open(8, anonymousSessionSetup('web_anon'));
    const mode = 'SELECT current_setting($1) AS mode';
    const setting = ['plan_cache_mode'];
    assert.deepEqual(await client.queryPrepared(mode, setting, undefined, true), [{ mode: 'force_generic_plan' }]);
    assert.deepEqual(await client.query(mode, setting), [{ mode: 'auto' }], 'an unnamed statement after it');
    assert.deepEqual(await client.queryPrepared(mode, setting, undefined, true), [{ mode: 'force_generic_plan' }]);
    assert.deepEqual(await client.queryPrepared(mode, setting), [{ mode: 'auto' }], 'a named statement without it');
    await client.queryPrepared(mode, setting, undefined, true);
    assert.deepEqual(await client.transaction((tx) => tx.query(mode, setting)), [{ mode: 'auto' }], 'a transaction after it');
    await client.queryPrepared(mode, setting, undefined, true);
    await client.exec("SELECT set_config('application_name', current_setting('plan_cache_mode'), false)");
    assert.deepEqual(await client.query("SELECT current_setting('application_name') AS mode"), [{ mode: 'auto' }], 'a script after it');
    // Counted by PostgreSQL: generic from the first execution with it, custom plans (auto's first five) without it.
    const forced = 'SELECT count(*)::int AS n FROM public.ethtxs WHERE txfrom = $1';
    const planned = 'SELECT count(*)::int AS n FROM public.ethtxs WHERE txto = $1';
    for (const address of ['0xaa', '0xAA', '0xcc']) {
      await client.queryPrepared(forced, [address], undefined, true);
      await client.queryPrepared(planned, [address]);
    }
    const plans = async (text: string) => (await client.query('SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1', [statementName(text)]))[0];
    assert.deepEqual(await plans(forced), { generic: 3, custom: 0 });
    assert.deepEqual(await plans(planned), { generic: 0, custom: 3 });
  });
});
