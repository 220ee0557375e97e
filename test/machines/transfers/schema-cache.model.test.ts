// Model-based test of the gateway's schema cache (machines/transfers/schema-cache.machine.ts): every path of its graph
// replayed on a real actor with a SimulatedClock (test/support/model.ts). A load is sampled with two relation lists and
// fails; failures are sampled only up to two in a row (the graph stays finite; the backoff's arithmetic is
// src/transfers/sync.ts's own test). Effects checked per step (notes B.2, F.8): the list is null until the first
// load, then only a finished load changes it (the previous list keeps serving while reloading or retrying); a
// reload asked during a load runs right after it; the retry waits retryDelayMs(failures); success resets failures.

import assert from 'node:assert/strict';
import { schemaCacheMachine } from '../../../machines/transfers/schema-cache.machine.js';
import { retryDelayMs } from '../../../src/transfers/sync.js';
import { modelTest } from '../../support/model.js';

const REFRESH = 300_000;
const v1 = { relations: { public: ['ethtxs', 'max_block'] }, commonValues: new Map() };
const v2 = { relations: { public: ['aval', 'ethtxs', 'max_block'], api: ['transfers'] }, commonValues: new Map([['public', new Map([['ethtxs', new Map([['contract_to', new Set([''])]])]])]]) };

modelTest({
  machine: schemaCacheMachine,
  scenarios: [{ name: 'gateway', input: { refreshMs: REFRESH } }],
  outputs: { loadCatalog: [v1, v2] },
  errors: { loadCatalog: (s) => (s.context.failures < 2 ? [new Error('relation "x" does not exist')] : []) },
  describe: (event) => (event.output === v1 ? 'v1' : event.output === v2 ? 'v2' : undefined),
  effect: ({ index, event, before, after, invoked, elapsed }) => {
    const ctx = after.context;
    if (index === 0) return assert.deepEqual([after.value, ctx.relations, invoked.map((f) => f.src)], ['loading', null, ['loadCatalog']], 'a load at start, nothing served before it');
    const prev = before!.context;
    if (event.type.startsWith('xstate.done.actor.')) {
      assert.deepEqual([ctx.relations, ctx.commonValues, ctx.failures, ctx.lastError], [event.output.relations, event.output.commonValues, 0, null], 'a load replaces the lists and clears the failures');
      assert.equal(after.value, prev.reloadRequested ? 'loading' : 'ready', 'a reload asked during the load runs right after it');
    } else {
      assert.deepEqual([ctx.relations, ctx.commonValues], [prev.relations, prev.commonValues], 'the previous lists keep serving');
    }
    if (event.type.startsWith('xstate.error.actor.')) {
      assert.deepEqual([after.value, ctx.failures, ctx.lastError], ['retrying', prev.failures + 1, event.error.message]);
    }
    if (event.type.startsWith('xstate.after.')) {
      assert.equal(after.value, 'loading');
      assert.equal(elapsed, before!.value === 'retrying' ? retryDelayMs(prev.failures) : REFRESH, 'retried after the backoff, refreshed on its period');
    }
    if (event.type === 'schema.reload' && before!.value === 'loading') assert.deepEqual([after.value, ctx.reloadRequested, invoked.length], ['loading', true, 0], 'remembered, the load in flight goes on');
    if (after.value === 'loading' && before!.value !== 'loading') assert.deepEqual(invoked.map((f) => f.src), ['loadCatalog'], 'entering loading loads');
  },
});
