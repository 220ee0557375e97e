// The refresh-cycle machine under a simulated clock (docs/DESIGN.md testing levels: machines).
// Its actors are replaced with scripted ones, as actors/rates replaces them with real I/O.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import {
  refreshCycleMachine,
  refreshStatus,
  type DiscoveryOutput,
  type FetchOutput,
  type StoreOutput,
} from '../../../machines/rates/refresh-cycle.machine.js';
import type { Notice, SourceOutcome } from '../../../src/rates/cycle.js';
import { MINUTE, REFRESH_INPUT, START } from '../../support/rates-refresh.js';

/** Lets pending promise callbacks (fromPromise actors) run. */
const flush = () => new Promise((resolve) => setImmediate(resolve));

interface Harness {
  clock: SimulatedClock;
  actor: ReturnType<typeof createActor<typeof refreshCycleMachine>>;
  fetches: number;
  stores: Array<Record<string, number>>;
  notices: Notice[];
  /** Scripted per-cycle outcomes; when a function, it may keep the fetch pending. */
  script: Array<(now: number) => SourceOutcome[] | Promise<SourceOutcome[]>>;
  storeFails: boolean;
}

function start(): Harness {
  const clock = new SimulatedClock();
  clock.set(START);
  const harness = { clock, fetches: 0, stores: [], notices: [], script: [], storeFails: false } as unknown as Harness;
  const machine = refreshCycleMachine.provide({
    actors: {
      discoverSources: fromPromise<DiscoveryOutput>(async () => ({ disabled: [], notices: [], finishedAt: clock.now() })),
      fetchSources: fromPromise<FetchOutput, { disabled: readonly string[] }>(async () => {
        const startedAt = clock.now();
        const step = harness.script[harness.fetches] ?? (() => []);
        harness.fetches++;
        const outcomes = await step(startedAt);
        return { startedAt, finishedAt: clock.now(), outcomes };
      }),
      storeSnapshot: fromPromise<StoreOutput, { table: Record<string, number> }>(async ({ input: storeInput }) => {
        if (harness.storeFails) throw new Error('disk full');
        harness.stores.push(storeInput.table);
        return { _id: 'a'.repeat(24), date: clock.now() };
      }),
    },
    actions: { publishNotices: (_, { notices }) => void harness.notices.push(...notices) },
  });
  harness.actor = createActor(machine, { input: REFRESH_INPUT, clock }).start();
  return harness;
}

const quotes = (price: number) => (now: number): SourceOutcome[] => [
  { source: 'A', ok: true, quotes: [{ pair: 'BTC/USD', price }], receivedAt: now },
  { source: 'B', ok: true, quotes: [{ pair: 'BTC/USD', price: price + 2 }], receivedAt: now },
];
const failing = (): SourceOutcome[] => [
  { source: 'A', ok: false, error: 'HTTP 500', permanent: false },
  { source: 'B', ok: false, error: 'request timed out after 10000 ms', permanent: false },
];

test('before the first snapshot: ready false, updating true, next_update is the start time, last_updated null', () => {
  const h = start();
  assert.equal(h.actor.getSnapshot().value, 'discovering');
  assert.deepEqual(refreshStatus(h.actor.getSnapshot()), { ready: false, updating: true, next_update: START, last_updated: null });
  h.actor.stop();
});

test('a cycle fetches, merges, stores, and then waits refreshInterval from the stored snapshot', async () => {
  const h = start();
  h.script.push(quotes(100), quotes(200));
  await flush();
  await flush();
  assert.equal(h.actor.getSnapshot().value, 'idle');
  assert.deepEqual(h.stores, [{ 'BTC/USD': 101, 'USD/USD': 1 }].map(() => h.stores[0]));
  assert.equal(h.stores[0]!['BTC/USD'], 101, 'avg of 100 and 102');
  assert.deepEqual(refreshStatus(h.actor.getSnapshot()), {
    ready: true,
    updating: false,
    next_update: START + 10 * MINUTE,
    last_updated: START,
  });
  assert.deepEqual(h.actor.getSnapshot().context.table, h.stores[0], '/get serves exactly what was stored');

  h.clock.increment(10 * MINUTE - 1);
  await flush();
  assert.equal(h.fetches, 1, 'no cycle before the interval has passed');
  h.clock.increment(1);
  await flush();
  await flush();
  assert.equal(h.fetches, 2);
  assert.equal(h.stores.length, 2);
  assert.equal(h.stores[1]!['BTC/USD'], 201);
  assert.equal(h.actor.getSnapshot().context.lastUpdated, START + 10 * MINUTE);
  h.actor.stop();
});

test('never two cycles at once: a slow fetch delays the next cycle instead of overlapping it', async () => {
  const h = start();
  let release!: () => void;
  h.script.push(
    (now) =>
      new Promise<SourceOutcome[]>((resolve) => {
        release = () => resolve(quotes(100)(now));
      }),
  );
  await flush();
  assert.equal(h.actor.getSnapshot().value, 'fetching');
  h.clock.increment(35 * MINUTE);
  await flush();
  assert.equal(h.fetches, 1, 'still one cycle in flight after three intervals');
  assert.equal(refreshStatus(h.actor.getSnapshot()).updating, true);
  release();
  await flush();
  await flush();
  assert.equal(h.actor.getSnapshot().value, 'idle');
  assert.equal(h.fetches, 1);
  h.actor.stop();
});

test('a failed cycle stores nothing, notifies per source and for all sources, and the next attempt follows the schedule', async () => {
  const h = start();
  h.script.push(quotes(100), failing, quotes(300));
  await flush();
  await flush();
  h.notices.length = 0;
  h.clock.increment(10 * MINUTE);
  await flush();
  await flush();
  assert.equal(h.fetches, 2);
  assert.equal(h.stores.length, 1, 'no snapshot after a failed cycle (history gets a gap)');
  const texts = h.notices.map((n) => `${n.level}: ${n.message}`);
  assert.ok(texts.includes('warn: Unable to fetch valid data from A. HTTP 500'), texts.join('\n'));
  assert.ok(texts.some((t) => t.startsWith('warn: Unable to fetch valid data from B.')));
  assert.ok(texts.includes('error: Unable to get new rates from all sources. No data has been saved'));
  const status = refreshStatus(h.actor.getSnapshot());
  assert.equal(status.updating, false, 'idle after a failed cycle (spec §3)');
  assert.equal(status.last_updated, START);
  assert.equal(h.actor.getSnapshot().context.table['BTC/USD'], 101, 'the previous rates keep being served while fresh');
  // The failed cycle started at START+10min: the next attempt is one interval after that start.
  h.clock.increment(10 * MINUTE);
  await flush();
  await flush();
  assert.equal(h.fetches, 3);
  assert.equal(h.stores.length, 2);
  h.actor.stop();
});

test('a store failure is a notice, not a crash; the service stays not-ready until a snapshot is stored', async () => {
  const h = start();
  h.storeFails = true;
  h.script.push(quotes(100));
  await flush();
  await flush();
  assert.equal(h.actor.getSnapshot().status, 'active');
  assert.equal(h.actor.getSnapshot().value, 'idle');
  assert.ok(h.notices.some((n) => n.level === 'error' && n.message === 'Error: Unable to save new rates in history database: disk full. See logs for details'));
  assert.equal(refreshStatus(h.actor.getSnapshot()).ready, false);
  h.actor.stop();
});

test('system.shutdown from any state reaches the final state', async () => {
  for (const at of ['discovering', 'idle'] as const) {
    const h = start();
    h.script.push(quotes(100));
    if (at === 'idle') {
      await flush();
      await flush();
    }
    assert.equal(h.actor.getSnapshot().value, at);
    h.actor.send({ type: 'system.shutdown' });
    assert.equal(h.actor.getSnapshot().value, 'stopped');
    assert.equal(h.actor.getSnapshot().status, 'done');
  }
});
