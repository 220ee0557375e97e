// The console's node-health machine (machines/console/node-health.machine.ts) with scripted checks on a
// SimulatedClock, and the ordering rule (src/console/node-choice.ts; notes C.3: highest height, buckets of 5).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { nodeHealthMachine } from '../../../machines/console/node-health.machine.js';
import { orderNodes, type NodeHealth } from '../../../src/console/node-choice.js';
import { waitFor } from '../../support/wait.js';

describe('node ordering', () => {
  test('higher height buckets first, configuration order inside a bucket, silent nodes last', () => {
    const health: NodeHealth[] = [
      { url: 'a', height: 100, latencyMs: 5 },
      { url: 'b', height: null, latencyMs: null },
      { url: 'c', height: 103, latencyMs: 9 },
      { url: 'd', height: 120, latencyMs: 50 },
      { url: 'e', height: 98, latencyMs: 1 },
    ];
    assert.deepEqual(orderNodes(health), ['d', 'a', 'c', 'e', 'b']);
  });
});

describe('node-health machine', () => {
  test('uses the configuration order until the first check, rechecks on its period and after a failure', async () => {
    const clock = new SimulatedClock();
    const heights: Array<Record<string, number | null>> = [
      { a: 10, b: 20 },
      { a: 30, b: 20 },
      { a: null, b: 40 },
    ];
    let checks = 0;
    let release!: () => void;
    const first = new Promise<void>((resolve) => (release = resolve));
    const machine = nodeHealthMachine.provide({
      actors: {
        checkNodes: fromPromise<readonly NodeHealth[], { nodes: readonly string[] }>(async ({ input }) => {
          if (checks === 0) await first;
          const round = heights[Math.min(checks++, heights.length - 1)]!;
          return input.nodes.map((url) => ({ url, height: round[url] ?? null, latencyMs: 1 }));
        }),
      },
    });
    const actor = createActor(machine, { clock, input: { nodes: ['a', 'b'], recheckMs: 60_000 } }).start();
    assert.deepEqual(actor.getSnapshot().context.order, ['a', 'b'], 'before any check: the configuration order');
    release();
    await waitFor(() => actor.getSnapshot().value === 'ready');
    assert.deepEqual(actor.getSnapshot().context.order, ['b', 'a']);
    clock.increment(60_000);
    await waitFor(() => actor.getSnapshot().context.checks === 2 && actor.getSnapshot().value === 'ready');
    assert.deepEqual(actor.getSnapshot().context.order, ['a', 'b']);
    actor.send({ type: 'node.failed', url: 'a' });
    await waitFor(() => actor.getSnapshot().context.checks === 3 && actor.getSnapshot().value === 'ready');
    assert.deepEqual(actor.getSnapshot().context.order, ['b', 'a']);
    actor.send({ type: 'system.shutdown' });
    assert.equal(actor.getSnapshot().status, 'done');
  });
});
