// Model-based test of one console request against the node pool (machines/console/rpc-session.machine.ts): every path
// of its graph replayed on a real actor (test/support/model.ts), for GETs and POSTs over one to four nodes and over
// none. A node failure is sampled as certainly never sent (connection refused) and as maybe received.
// Effects checked per step (spec B; notes C.3): a GET is tried on at most GET_ATTEMPTS nodes, in order; a POST moves on
// only when the failed node certainly never got it, else its outcome is unknown; every failure is kept, oldest first;
// without nodes the request is exhausted at once.

import assert from 'node:assert/strict';
import { GET_ATTEMPTS, rpcSessionMachine } from '../../../machines/console/rpc-session.machine.js';
import { modelTest } from '../../support/model.js';

const nodes = (n: number) => Array.from({ length: n }, (_, i) => `https://n${i}.example`);
const refused = { type: 'node.failed', reason: 'n: connection refused', neverSent: true };
const timedOut = { type: 'node.failed', reason: 'n: timed out', neverSent: false };

modelTest({
  machine: rpcSessionMachine,
  scenarios: [
    { name: 'GET, no node', input: { method: 'GET', nodes: [] } },
    { name: 'GET, 4 nodes', input: { method: 'GET', nodes: nodes(4) } },
    { name: 'GET, 2 nodes', input: { method: 'GET', nodes: nodes(2) } },
    { name: 'POST, 2 nodes', input: { method: 'POST', nodes: nodes(2) } },
    { name: 'POST, no node', input: { method: 'POST', nodes: [] } },
  ],
  events: { 'node.failed': [refused, timedOut] },
  describe: (event) => (event === refused ? 'never sent' : event === timedOut ? 'maybe received' : undefined),
  simplePaths: { maxStates: 12, maxPaths: 12 },
  effect: ({ index, event, before, after }) => {
    const ctx = after.context;
    const limit = ctx.method === 'GET' ? Math.min(GET_ATTEMPTS, ctx.nodes.length) : ctx.nodes.length;
    if (index === 0) {
      assert.equal(after.value, ctx.nodes.length === 0 ? 'exhausted' : 'requesting', 'no node: exhausted at once');
      return assert.deepEqual([ctx.attempt, ctx.failures], [0, []]);
    }
    const prev = before!.context;
    assert.ok(ctx.attempt < Math.max(limit, 1), 'never more attempts than allowed');
    if (event.type === 'node.answered') return assert.deepEqual([after.value, ctx.failures], ['answered', prev.failures]);
    assert.deepEqual(ctx.failures, [...prev.failures, event.reason], 'every failure is kept, oldest first');
    const expected =
      ctx.method === 'POST' && !event.neverSent ? 'outcomeUnknown' : prev.attempt + 1 < limit ? 'requesting' : 'exhausted';
    assert.equal(after.value, expected, 'the next node, an unknown outcome, or exhausted');
    assert.equal(ctx.attempt, expected === 'requesting' ? prev.attempt + 1 : prev.attempt, 'the next node in the order');
  },
});
