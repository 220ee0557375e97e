// Peering targets and one bounded pass (src/files/peering.ts; docs/notes/files-node.md B.4), with fake dials.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedClock } from 'xstate';
import type { FilesNode } from '../../src/files/config-peers.js';
import { passBoundMs, PEERING_DEFAULTS, peeringTargets, runPeeringPass } from '../../src/files/peering.js';
import { watchPromise } from '../support/wait.js';

const node = (name: string, peerId: string): FilesNode => ({ name, peerId, multiAddr: `/ip4/127.0.0.1/tcp/1/p2p/${peerId}` });
const SHARED = [node('alpha', 'A'), node('beta', 'B'), node('gamma', 'C')];

test('peeringTargets leaves out this node\'s own entry, by peer id, so one list serves every node', () => {
  assert.deepEqual(peeringTargets(SHARED, 'B').map((n) => n.name), ['alpha', 'gamma']);
  assert.deepEqual(peeringTargets(SHARED, 'Z').map((n) => n.name), ['alpha', 'beta', 'gamma']);
  assert.deepEqual(peeringTargets([node('self', 'A')], 'A'), []);
});

test('a pass dials only targets that are not connected and reports the connected names in list order', async () => {
  const dialled: string[] = [];
  const result = await runPeeringPass(
    SHARED,
    {
      isConnected: (peerId) => peerId === 'A',
      dial: async (address) => {
        dialled.push(address);
        if (address.endsWith('/C')) throw new Error('refused');
      },
    },
    { dialTimeoutMs: 1_000, concurrency: 2 },
    new SimulatedClock(),
  );
  assert.deepEqual(dialled.sort(), [SHARED[1]!.multiAddr, SHARED[2]!.multiAddr]);
  assert.deepEqual(result, { connected: ['alpha', 'beta'], total: 3, failed: 1 });
});

test('a dial that never answers is cut at the dial timeout on the injected clock, and the pass then settles', async () => {
  const clock = new SimulatedClock();
  // A minute on the wall clock: only the simulated clock can end the dial within the test's cap.
  const dialTimeoutMs = 60_000;
  let dialling!: () => void;
  const silentDialStarted = new Promise<void>((resolve) => (dialling = resolve));
  const dialAborts: unknown[] = [];
  const pass = watchPromise(
    runPeeringPass(
      [node('silent', 'S'), node('ok', 'O')],
      {
        isConnected: () => false,
        dial: (address, signal) => {
          if (address.endsWith('/O')) return Promise.resolve();
          dialling();
          return new Promise<void>((_, reject) =>
            signal.addEventListener('abort', () => {
              dialAborts.push(signal.reason);
              reject(signal.reason);
            }),
          );
        },
      },
      { dialTimeoutMs, concurrency: 4 },
      clock,
    ),
    'the peering pass',
  );
  await silentDialStarted;
  clock.increment(dialTimeoutMs - 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(pass.settled, false, 'the silent dial is still waiting short of its timeout');
  assert.equal(dialAborts.length, 0);
  clock.increment(1);
  assert.deepEqual(await pass.settle(), { connected: ['ok'], total: 2, failed: 1 });
  assert.equal((dialAborts[0] as DOMException).name, 'TimeoutError');
});

test('at most `concurrency` dials are in flight at once', async () => {
  let inFlight = 0;
  let peak = 0;
  const targets = Array.from({ length: 7 }, (_, i) => node(`n${i}`, `P${i}`));
  const result = await runPeeringPass(
    targets,
    {
      isConnected: () => false,
      dial: async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
      },
    },
    { dialTimeoutMs: 1_000, concurrency: 3 },
    new SimulatedClock(),
  );
  assert.equal(peak, 3);
  assert.equal(result.connected.length, 7);
});

test('an aborted pass starts no further dials', async () => {
  const controller = new AbortController();
  controller.abort();
  let dials = 0;
  const result = await runPeeringPass(SHARED, { isConnected: () => false, dial: async () => void dials++ }, PEERING_DEFAULTS, new SimulatedClock(), controller.signal);
  assert.equal(dials, 0);
  assert.deepEqual(result.connected, []);
});

test('passBoundMs: waves of `concurrency` dials, one dial timeout each', () => {
  assert.equal(passBoundMs(0), 0);
  assert.equal(passBoundMs(4, { dialTimeoutMs: 5_000, concurrency: 4, startupBoundMs: 1 }), 5_000);
  assert.equal(passBoundMs(5, { dialTimeoutMs: 5_000, concurrency: 4, startupBoundMs: 1 }), 10_000);
});
