// Model-based test of the transfers database lifecycle (machines/transfers/database.machine.ts): every path of its
// graph replayed on a real actor (test/support/model.ts). Effects checked per step: the database is opened at start
// and closed on shutdown (whether or not the close succeeds); a shutdown while opening or preparing the schema aborts
// the call in flight and still closes whatever it may have opened. A gateway alone ('unchecked') prepares its schema
// before it is open; a failed preparation is reported and retried after schemaRetryDelayMs(failures) (1 s … 30 s),
// sampled up to two failures in a row (the graph stays finite); success resets the count and tells the gateway; a
// schema newer than the build is not retried: the actor errors (its supervisor sees a crash).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseMachine, SCHEMA_RETRY_MAX_MS, schemaRetryDelayMs } from '../../../machines/transfers/database.machine.js';
import { modelTest } from '../../support/model.js';

const ready = { schema: 'ready' };
const unchecked = { schema: 'unchecked' };
const noRights = Object.assign(new Error('permission denied for database appdb'), { code: '42501' });
const tooNew = Object.assign(new Error('the database schema is at version 9, newer than this build'), { name: 'SchemaTooNewError' });

modelTest({
  machine: databaseMachine,
  scenarios: [{ name: 'database' }],
  outputs: { openDatabase: [ready, unchecked] },
  errors: {
    closeDatabase: [new Error('connection reset')],
    prepareSchema: (s) => (s.context.failures < 2 ? [noRights, tooNew] : [tooNew]),
  },
  describe: (event) => (event.output === ready ? 'ready' : event.output === unchecked ? 'unchecked' : event.error === noRights ? 'no rights' : event.error === tooNew ? 'too new' : undefined),
  simplePaths: { maxStates: 12, maxPaths: 20 },
  effect: ({ index, event, before, after, invoked, fakes, actions, elapsed }) => {
    const srcs = invoked.map((f) => f.src);
    if (index === 0) return assert.deepEqual(srcs, ['openDatabase'], 'opened at start');
    if (event.type === 'system.shutdown') {
      assert.deepEqual([after.value, srcs], ['closing', ['closeDatabase']], 'shutdown closes');
      const inFlight = before!.value === 'opening' ? 'openDatabase' : before!.value === 'preparingSchema' ? 'prepareSchema' : undefined;
      if (inFlight) assert.equal(fakes.filter((f) => f.src === inFlight).at(-1)?.signal.aborted, true, 'the call in flight is aborted');
    } else if (before!.value === 'opening' && event.type.startsWith('xstate.done.actor.')) {
      assert.equal(after.value, event.output === unchecked ? 'preparingSchema' : 'open', 'a gateway alone prepares its schema first');
      assert.deepEqual(srcs, event.output === unchecked ? ['prepareSchema'] : []);
    } else if (before!.value === 'waitingToRetry') {
      assert.deepEqual([after.value, srcs, elapsed], ['preparingSchema', ['prepareSchema'], schemaRetryDelayMs(before!.context.failures)], 'retried after the backoff');
    } else {
      assert.deepEqual(srcs, [], 'nothing else opens or closes');
    }
    if (before!.value === 'preparingSchema' && event.type.startsWith('xstate.done.actor.')) {
      assert.deepEqual([after.value, after.context.failures, actions.map((a) => a.type)], ['open', 0, ['schemaReady']], 'ready: the gateway is told');
    }
    if (before!.value === 'preparingSchema' && event.type.startsWith('xstate.error.actor.')) {
      if (event.error === tooNew) {
        assert.deepEqual([after.status, after.error], ['error', tooNew], 'a newer schema crashes the actor: no retry');
      } else {
        const failures = before!.context.failures + 1;
        assert.deepEqual([after.value, after.context.failures], ['waitingToRetry', failures]);
        assert.deepEqual(actions, [{ type: 'reportSchemaFailure', params: { error: `Error: ${noRights.message}`, failures, retryInMs: schemaRetryDelayMs(failures) } }], 'each failure is reported once, with the retry delay');
      }
    }
    if (before!.value === 'closing') assert.equal(after.value, 'closed', 'closed, even when the close failed');
  },
});

test('schemaRetryDelayMs: 1 s, 2 s, 4 s … capped at 30 s', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 20].map(schemaRetryDelayMs), [1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
  assert.equal(SCHEMA_RETRY_MAX_MS, 30_000);
});
