// transfers.db (actors/transfers/database.actor.ts) on PostgreSQL: the concurrent index builds it starts in the
// background run on the runtime's clock (docs/DESIGN.md rule 2). A build that finds another process holding the
// index-build lock polls for it on that clock, and the times it logs come from it: on a SimulatedClock nothing moves
// until the test moves the clock.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createActor, SimulatedClock } from 'xstate';
import { DatabaseHolder, databaseLogic } from '../../../actors/transfers/database.actor.js';
import { parseTransfersConfig } from '../../../src/transfers/config.js';
import { migrate, SCHEMA_VERSION } from '../../../storage/transfers/schema.js';
import { openPgClient } from '../../../storage/transfers/sql-client.pg.js';
import { captureLogger } from '../../support/logger.js';
import { startPostgres, type PostgresCluster } from '../../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../../support/system-packages.js';
import { waitFor } from '../../support/wait.js';

/** The session-level advisory lock the builds take (storage/transfers/schema.ts INDEX_BUILD_LOCK). */
const INDEX_BUILD_LOCK = `hashtext('adm-infra transfers index builds')`;
/** How often a build polls for that lock (storage/transfers/schema.ts INDEX_LOCK_POLL_MS). */
const INDEX_LOCK_POLL_MS = 500;

describe('transfers.db on PostgreSQL', { skip: skipWithout(postgresServerPackage(), 'the transfers.db actor test on PostgreSQL') }, () => {
  let cluster: PostgresCluster;
  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    await cluster?.stop();
  });

  test('a background index build waits for another process on the runtime clock, and logs its time from it', async () => {
    const url = await cluster.createDatabase('clocked_builds');
    // The previous build's schema: the index migration is left for the background build.
    const old = openPgClient({ connection: { connectionString: url }, maxConnections: 1, applicationName: 'test setup' });
    await migrate(old, '3.0.0', { upTo: SCHEMA_VERSION - 1 });
    await old.close();
    // Another process builds: it holds the lock until the test lets go.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    await other.query(`SELECT pg_advisory_lock(${INDEX_BUILD_LOCK})`);

    const parsed = parseTransfersConfig(undefined, { DB_NAME: url, ETH_URL: 'http://127.0.0.1:9', GATEWAY: 'false' });
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('\n'));
    const clock = new SimulatedClock();
    const { logger, lines } = captureLogger('info');
    const actor = createActor(databaseLogic({ config: parsed.config, holder: new DatabaseHolder(), logger, clock }), { clock }).start();
    try {
      await waitFor(() => actor.getSnapshot().value === 'open', { what: 'the database open' });
      const waiting = await waitFor(() => lines.find((line) => line.msg === 'building index' && line.event === 'waiting for another process'), { what: 'the build waiting for the lock' });
      assert.equal(waiting.elapsedMs, 0);
      await other.query(`SELECT pg_advisory_unlock(${INDEX_BUILD_LOCK})`);
      // The lock is free, but the next poll is INDEX_LOCK_POLL_MS away on the simulated clock, which stands still.
      await sleep(300);
      assert.equal(lines.some((line) => line.msg === 'database schema migrated: indexes built'), false, 'no poll before the clock moves');
      clock.increment(INDEX_LOCK_POLL_MS - 1);
      await sleep(100);
      assert.equal(lines.some((line) => line.msg === 'database schema migrated: indexes built'), false, 'no poll before its time');
      clock.increment(1);
      const built = await waitFor(() => lines.find((line) => line.msg === 'database schema migrated: indexes built'), { timeoutMs: 30_000, what: 'the indexes built' });
      assert.deepEqual(built.applied, [`${SCHEMA_VERSION} composite indexes for address and token history pages`]);
      // Measured on the simulated clock: the wait it was moved through, however long the build took in real time.
      assert.equal(built.ms, INDEX_LOCK_POLL_MS);
    } finally {
      actor.send({ type: 'system.shutdown' });
      await waitFor(() => actor.getSnapshot().status === 'done', { what: 'the database closed' });
      await other.end();
    }
  });
});
