// Model-based test of the transfers database lifecycle (machines/transfers/database.machine.ts): every path of its
// graph replayed on a real actor (test/support/model.ts). Effects checked per step: the database is opened at start
// and closed on shutdown (whether or not the close succeeds); a shutdown while opening aborts the open and still
// closes whatever it may have opened.

import assert from 'node:assert/strict';
import { databaseMachine } from '../../../machines/transfers/database.machine.js';
import { modelTest } from '../../support/model.js';

modelTest({
  machine: databaseMachine,
  scenarios: [{ name: 'database' }],
  errors: { closeDatabase: [new Error('connection reset')] },
  simplePaths: { maxStates: 10, maxPaths: 10 },
  effect: ({ index, event, before, after, invoked, fakes }) => {
    const srcs = invoked.map((f) => f.src);
    if (index === 0) return assert.deepEqual(srcs, ['openDatabase'], 'opened at start');
    if (event.type === 'system.shutdown') {
      assert.deepEqual([after.value, srcs], ['closing', ['closeDatabase']], 'shutdown closes');
      if (before!.value === 'opening') assert.equal(fakes.find((f) => f.src === 'openDatabase')?.signal.aborted, true, 'the open in flight is aborted');
    } else {
      assert.deepEqual(srcs, [], 'nothing else opens or closes');
    }
    if (before!.value === 'closing') assert.equal(after.value, 'closed', 'closed, even when the close failed');
  },
});
