// The waits and times of PostgreSQL's concurrent index builds (storage/transfers/schema.ts buildPendingIndexes) run on
// the clock they are given (docs/DESIGN.md rule 2): the poll for the index-build lock another process holds, and the
// progress reports during a long build. A scripted database answers the statements the build sends, so a
// SimulatedClock decides when anything happens; the real builds are tested on PostgreSQL in schema-indexes.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SimulatedClock } from 'xstate';
import { buildPendingIndexes, SCHEMA_VERSION, type IndexBuildProgress } from '../../../storage/transfers/schema.js';
import type { SqlClient, SqlQuery, SqlRow } from '../../../storage/transfers/sql-client.js';
import { watchPromise } from '../../support/wait.js';

/** storage/transfers/schema.ts INDEX_LOCK_POLL_MS and PROGRESS_INTERVAL_MS. */
const INDEX_LOCK_POLL_MS = 500;
const PROGRESS_INTERVAL_MS = 10_000;

/**
 * A PostgreSQL whose schema waits for its last (index) migration: the lock is held by another process while
 * `lockHeld`, and each CREATE INDEX runs until `finishBuild()`.
 */
function scriptedDatabase() {
  const state = { lockHeld: false, lockPolls: 0, progressQueries: 0, cancels: 0 };
  const built = new Set<string>();
  let finish: (() => void) | undefined;
  const answer = async (text: string, values: readonly unknown[] = []): Promise<SqlRow[]> => {
    if (text.includes('pg_try_advisory_lock')) return state.lockPolls++, [{ locked: !state.lockHeld }];
    if (text.includes('pg_backend_pid')) return [{ pid: 4242 }];
    if (text.includes('pg_cancel_backend')) return state.cancels++, [];
    if (text.includes('FROM indexer.migrations')) return Array.from({ length: SCHEMA_VERSION - 1 }, (_, i) => ({ version: i + 1 }));
    if (text.includes('pg_catalog.pg_index')) return built.has(String(values[1])) ? [{ valid: true }] : [];
    if (text.includes('pg_stat_progress_create_index')) {
      state.progressQueries++;
      return [{ phase: 'building index: scanning table', blocks_done: '3', blocks_total: '10', tuples_done: '0', tuples_total: '0' }];
    }
    if (text.startsWith('CREATE INDEX')) {
      await new Promise<void>((resolve) => (finish = resolve));
      built.add(/"([^"]+)" ON/.exec(text)![1]!);
    }
    return [];
  };
  const query: SqlQuery = { query: answer, exec: async () => undefined };
  const db: SqlClient = {
    ...query,
    backend: 'postgresql',
    transaction: (work) => work(query),
    session: (work) => work(query),
    close: async () => undefined,
  };
  return {
    db,
    state,
    building: () => finish !== undefined,
    finishBuild() {
      const done = finish;
      finish = undefined;
      done?.();
    },
  };
}

/** Lets the scripted database's answers (promises) run. */
const settle = () => sleep(20);

test('the poll for a lock another process holds waits on the clock, and an abort ends the wait at once', async () => {
  const { db, state } = scriptedDatabase();
  state.lockHeld = true;
  const clock = new SimulatedClock();
  const progress: IndexBuildProgress[] = [];
  const controller = new AbortController();
  const building = watchPromise(buildPendingIndexes(db, { clock, signal: controller.signal, onProgress: (p) => progress.push(p) }), 'the index build');
  await settle();
  assert.equal(state.lockPolls, 1);
  assert.deepEqual(progress, [{ index: '*', event: 'waiting for another process', elapsedMs: 0 }]);
  clock.increment(INDEX_LOCK_POLL_MS - 1);
  await settle();
  assert.equal(state.lockPolls, 1, 'no poll before its time on the clock');
  clock.increment(1);
  await settle();
  assert.equal(state.lockPolls, 2);
  assert.equal(progress.length, 1, 'told once');
  controller.abort();
  await assert.rejects(building.settle(), (error: Error) => error.name === 'AbortError');
  assert.equal(state.lockPolls, 2, 'no poll after the abort');
});

test('a long build reports its progress every PROGRESS_INTERVAL_MS of the clock, with the clock\'s elapsed time', async () => {
  const scripted = scriptedDatabase();
  const { db, state } = scripted;
  const clock = new SimulatedClock();
  const progress: IndexBuildProgress[] = [];
  const building = watchPromise(buildPendingIndexes(db, { clock, onProgress: (p) => progress.push(p) }), 'the index build');
  await settle();
  assert.ok(scripted.building(), 'the first CREATE INDEX runs');
  clock.increment(PROGRESS_INTERVAL_MS - 1);
  await settle();
  assert.equal(state.progressQueries, 0, 'no report before its time on the clock');
  clock.increment(1);
  await settle();
  clock.increment(PROGRESS_INTERVAL_MS);
  await settle();
  const first = progress.filter((p) => p.event === 'building');
  assert.deepEqual(
    first.map((p) => [p.elapsedMs, p.phase, p.blocksDone, p.blocksTotal]),
    [
      [PROGRESS_INTERVAL_MS, 'building index: scanning table', 3, 10],
      [2 * PROGRESS_INTERVAL_MS, 'building index: scanning table', 3, 10],
    ],
  );
  // Each index is done when its build returns; its time is the clock's.
  let finished = 0;
  while (!building.settled && finished < 10) {
    scripted.finishBuild();
    finished++;
    await settle();
  }
  const report = await building.settle();
  assert.equal(report.applied.length, 1);
  assert.equal(report.builtIndexes[0]!.ms, 2 * PROGRESS_INTERVAL_MS);
  assert.deepEqual(report.builtIndexes.slice(1).map((index) => index.ms), [0, 0, 0], 'the clock stood still for the others');
  // No report is left armed on the clock once the builds are done.
  const queries = state.progressQueries;
  clock.increment(10 * PROGRESS_INTERVAL_MS);
  await settle();
  assert.equal(state.progressQueries, queries);
});
