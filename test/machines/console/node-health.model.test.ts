// Model-based test of the console's node pool health (machines/console/node-health.machine.ts): every path of its
// graph replayed on a real actor with a SimulatedClock (test/support/model.ts). A check is sampled with every node up
// and with the first node down; it also throws. The graph ignores the check counter (each loop adds one).
// Effects checked per step (spec B; notes C.3): every configured node is checked; the order follows the last
// successful check (orderNodes), the configuration order before the first one and after a check that threw; a failed
// node asks for a check at once, the period does too; shutdown stops a check in flight.

import assert from 'node:assert/strict';
import { nodeHealthMachine } from '../../../machines/console/node-health.machine.js';
import { orderNodes, type NodeHealth } from '../../../src/console/node-choice.js';
import { modelTest } from '../../support/model.js';

const NODES = ['https://a.example', 'https://b.example', 'https://c.example'];
const RECHECK = 30_000;
const allUp: NodeHealth[] = NODES.map((url, i) => ({ url, height: 1_000 + i * 10, latencyMs: 20 }));
const firstDown: NodeHealth[] = NODES.map((url, i) => ({ url, height: i === 0 ? null : 1_000, latencyMs: i === 0 ? null : 20 }));
const NAMES = new Map<unknown, string>([[allUp, 'all up'], [firstDown, 'first down']]);

modelTest({
  machine: nodeHealthMachine,
  scenarios: [{ name: 'three nodes', input: { nodes: NODES, recheckMs: RECHECK } }],
  outputs: { checkNodes: [allUp, firstDown] },
  errors: { checkNodes: [new Error('checker bug')] },
  events: { 'node.failed': [{ type: 'node.failed', url: NODES[0] }] },
  abstract: (s) => ({ ...s.context, checks: undefined }),
  describe: (event) => NAMES.get(event.output),
  simplePaths: { maxStates: 10, maxPaths: 20 },
  effect: ({ index, event, before, after, invoked, elapsed }) => {
    const ctx = after.context;
    for (const fake of invoked) assert.deepEqual(fake.input, { nodes: NODES }, 'every configured node is checked');
    if (index === 0) return assert.deepEqual(ctx.order, NODES, 'the configuration order until the first check');
    if (event.type.startsWith('xstate.done.actor.')) {
      assert.deepEqual([ctx.health, ctx.order, ctx.checks], [event.output, orderNodes(event.output), before!.context.checks + 1], 'the order follows the check');
      if (event.output === firstDown) assert.equal(ctx.order.at(-1), NODES[0], 'a node that did not answer is tried last');
    } else {
      assert.deepEqual([ctx.order, ctx.health], [before!.context.order, before!.context.health], 'only a finished check changes the order');
    }
    if (after.value === 'checking') assert.deepEqual(invoked.map((f) => f.src), ['checkNodes'], 'entering checking checks');
    if (event.type === 'node.failed' && before!.value === 'checking') assert.equal(invoked.length, 0, 'a check in flight is not restarted');
    if (event.type === 'system.shutdown') assert.deepEqual(Object.keys(after.children), []);
    if (event.type.startsWith('xstate.after.')) assert.equal(elapsed, RECHECK, 'rechecked on its period');
  },
});
