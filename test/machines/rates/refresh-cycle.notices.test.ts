// Every notice the refresh cycle sends: its exact text, its level and its cadence, under a simulated clock
// (docs/specs/rates.md §6; docs/notes/rates.md B.2, E.3, F.1, F.8). Cycles are driven with scripted source outcomes, as
// in refresh-cycle.machine.test.ts; `publishNotices` records what actors/rates would log and send.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import {
  refreshCycleMachine,
  type DiscoveryOutput,
  type FetchOutput,
  type RefreshInput,
  type StoreOutput,
} from '../../../machines/rates/refresh-cycle.machine.js';
import type { Notice, SourceOutcome } from '../../../src/rates/cycle.js';
import { MINUTE, REFRESH_INPUT, REFRESH_MERGE, START } from '../../support/rates-refresh.js';

const flush = async () => {
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
};

type Step = (now: number) => SourceOutcome[];

interface Harness {
  readonly clock: SimulatedClock;
  readonly actor: ReturnType<typeof createActor<typeof refreshCycleMachine>>;
  /** Notices published so far, one array per publication (each idle entry publishes one cycle's notices). */
  readonly published: Notice[][];
  fetches: number;
  storeFails: boolean;
}

function start(script: Step | Step[], options: { input?: Partial<RefreshInput>; discovery?: Partial<DiscoveryOutput> } = {}): Harness {
  const clock = new SimulatedClock();
  clock.set(START);
  const harness = { clock, published: [] as Notice[][], fetches: 0, storeFails: false } as Harness & { actor: Harness['actor'] };
  const machine = refreshCycleMachine.provide({
    actors: {
      discoverSources: fromPromise<DiscoveryOutput>(async () => ({ disabled: [], notices: [], finishedAt: clock.now(), ...options.discovery })),
      fetchSources: fromPromise<FetchOutput, { disabled: readonly string[] }>(async () => {
        const startedAt = clock.now();
        const step = Array.isArray(script) ? (script[harness.fetches] ?? script[script.length - 1]!) : script;
        harness.fetches++;
        return { startedAt, finishedAt: clock.now(), outcomes: step(startedAt) };
      }),
      storeSnapshot: fromPromise<StoreOutput, { table: Record<string, number> }>(async () => {
        if (harness.storeFails) throw new Error('disk full');
        return { _id: 'a'.repeat(24), date: clock.now() };
      }),
    },
    actions: { publishNotices: (_, { notices }) => void harness.published.push([...notices]) },
  });
  (harness as { actor: Harness['actor'] }).actor = createActor(machine, { input: { ...REFRESH_INPUT, ...options.input }, clock }).start();
  return harness;
}

/** Runs the first cycle (right after discovery), then `cycles - 1` more, one refresh interval apart. */
async function runCycles(h: Harness, cycles: number): Promise<void> {
  await flush();
  for (let i = 1; i < cycles; i++) {
    h.clock.increment(REFRESH_INPUT.intervalMs);
    await flush();
  }
  assert.equal(h.fetches, cycles, `${cycles} cycles ran`);
  assert.equal(h.actor.getSnapshot().value, 'idle');
}

const texts = (notices: readonly Notice[]) => notices.map((n) => `${n.level}: ${n.message}`);
/** The notices of each cycle (the discovery publication, always first, is left out). */
const perCycle = (h: Harness) => h.published.slice(1).map(texts);

const ok = (source: string, price: number) => (now: number): SourceOutcome => ({ source, ok: true, quotes: [{ pair: 'BTC/USD', price }], receivedAt: now });
const failed = (source: string, error: string): SourceOutcome => ({ source, ok: false, error, permanent: false });

test('a source failing on three consecutive cycles is reported on each of them, once per cycle', async () => {
  const h = start((now) => [ok('A', 100)(now), failed('B', 'HTTP 503')]);
  await flush();
  assert.equal(h.fetches, 1);
  assert.deepEqual(perCycle(h), [['warn: Unable to fetch valid data from B. HTTP 503']], 'cycle 1');
  h.clock.increment(REFRESH_INPUT.intervalMs);
  await flush();
  assert.deepEqual(perCycle(h)[1], ['warn: Unable to fetch valid data from B. HTTP 503'], 'cycle 2: not deduplicated');
  h.clock.increment(REFRESH_INPUT.intervalMs);
  await flush();
  assert.equal(h.fetches, 3);
  assert.deepEqual(perCycle(h), [
    ['warn: Unable to fetch valid data from B. HTTP 503'],
    ['warn: Unable to fetch valid data from B. HTTP 503'],
    ['warn: Unable to fetch valid data from B. HTTP 503'],
  ]);
  h.actor.stop();
});

test('a source that answers without one valid rate fails every cycle and is reported every cycle (F.8)', async () => {
  const h = start((now) => [ok('A', 100)(now), { source: 'B', ok: true, quotes: [], receivedAt: now }]);
  await runCycles(h, 3);
  const expected = ['warn: Unable to fetch valid data from B. Its answer held no valid rate.'];
  assert.deepEqual(perCycle(h), [expected, expected, expected]);
  h.actor.stop();
});

test("CoinMarketCap's 'Unable to get all of N coin rates' goes out at error level, every cycle (notes D.5, E.3)", async () => {
  const reason = 'Unable to get all of 3 coin rates. Check Coinmarketcap service and configuration file.';
  const h = start((now) => [ok('A', 100)(now), { ...failed('Coinmarketcap', reason), severity: 'error' }]);
  await runCycles(h, 2);
  const expected = [`error: Unable to fetch valid data from Coinmarketcap. ${reason}`];
  assert.deepEqual(perCycle(h), [expected, expected]);
  h.actor.stop();
});

test('the same words quoted inside another reason do not raise the level', async () => {
  const h = start((now) => [ok('A', 100)(now), failed('B', 'HTTP 400: Unable to get all of 3 coin rates')]);
  await runCycles(h, 1);
  assert.deepEqual(perCycle(h), [['warn: Unable to fetch valid data from B. HTTP 400: Unable to get all of 3 coin rates']]);
  h.actor.stop();
});

test('a source whose discovery failed is reported every cycle; a permanent refusal only once (notes D.10, F.22)', async () => {
  const setup = 'It could not be set up (no answer within 20000 ms) and is disabled until restart.';
  const h = start((now) => [ok('A', 100)(now)], {
    discovery: {
      disabled: ['CoinLore', 'Binance'],
      unavailable: { CoinLore: setup },
      notices: [
        { level: 'error', message: 'Unable to set up CoinLore after 4 attempts: no answer within 20000 ms. The source is disabled until restart.' },
        { level: 'error', message: 'Unable to set up Binance: HTTP 451: unavailable from this location. The source is disabled until restart.' },
      ],
    },
  });
  await runCycles(h, 3);
  assert.deepEqual(texts(h.published[0]!), [
    'error: Unable to set up CoinLore after 4 attempts: no answer within 20000 ms. The source is disabled until restart.',
    'error: Unable to set up Binance: HTTP 451: unavailable from this location. The source is disabled until restart.',
  ]);
  const expected = [`warn: Unable to fetch valid data from CoinLore. ${setup}`];
  assert.deepEqual(perCycle(h), [expected, expected, expected]);
  h.actor.stop();
});

test('a permanent refusal during a cycle: a warning and an error that cycle, then silence (notes D.10)', async () => {
  const h = start([
    (now) => [ok('A', 100)(now), { source: 'Binance', ok: false, error: 'HTTP 451: unavailable from this location', permanent: true }],
    (now) => [ok('A', 100)(now)],
  ]);
  await runCycles(h, 3);
  assert.deepEqual(perCycle(h), [
    [
      'warn: Unable to fetch valid data from Binance. HTTP 451: unavailable from this location',
      'error: Binance is disabled for the rest of this run: HTTP 451: unavailable from this location',
    ],
    [],
    [],
  ]);
  assert.deepEqual(h.actor.getSnapshot().context.disabled, ['Binance']);
  h.actor.stop();
});

test('every source failing: one warning per source and the all-sources error, every cycle (B.2.5)', async () => {
  const h = start(() => [failed('A', 'HTTP 500'), failed('B', 'request failed (ECONNREFUSED)')]);
  await runCycles(h, 2);
  const expected = [
    'warn: Unable to fetch valid data from A. HTTP 500',
    'warn: Unable to fetch valid data from B. request failed (ECONNREFUSED)',
    'error: Unable to get new rates from all sources. No data has been saved',
  ];
  assert.deepEqual(perCycle(h), [expected, expected]);
  h.actor.stop();
});

test('a failed history write is an error, each time (B.2.7)', async () => {
  const h = start((now) => [ok('A', 100)(now), ok('B', 102)(now)]);
  h.storeFails = true;
  await runCycles(h, 2);
  const expected = ['error: Error: Unable to save new rates in history database: disk full. See logs for details'];
  assert.deepEqual(perCycle(h), [expected, expected]);
  h.actor.stop();
});

test('pairs below their minSources threshold: a warning every cycle (B.2.6)', async () => {
  const h = start((now) => [ok('A', 100)(now), failed('B', 'HTTP 500')], { input: { merge: { ...REFRESH_MERGE, minSources: 2 } } });
  await runCycles(h, 2);
  const expected = [
    'warn: Unable to fetch valid data from B. HTTP 500',
    "warn: The following rates have been fetched from fewer sources than expected and therefore won't be saved: BTC/USD (expected 2, but got 1)",
  ];
  assert.deepEqual(perCycle(h), [expected, expected]);
  h.actor.stop();
});

test('pair conflicts: the three classes of B.2.4d with their levels, every cycle', async () => {
  const conflict = 'The difference between sources is too big: 100 (A) against 200 (B)';
  // Never resolved: nothing to fall back on.
  const never = start((now) => [ok('A', 100)(now), ok('B', 200)(now)]);
  await runCycles(never, 2);
  const neverText = [`error: The rates won't be saved for the following pairs, and there are no previous rates to fall back on: BTC/USD (${conflict})`];
  assert.deepEqual(perCycle(never), [neverText, neverText]);
  never.actor.stop();

  // Resolved once, then in conflict: served from the previous value while it is fresh (warn), then an error once
  // it is older than rateLifetime (60 min here, with a 10 min refresh).
  const later = start([(now) => [ok('A', 100)(now), ok('B', 102)(now)], (now) => [ok('A', 100)(now), ok('B', 200)(now)]]);
  await runCycles(later, 8);
  const kept = [`warn: The previously stored rates will be saved for the following pairs, but they require attention: BTC/USD (${conflict}), but it persists not longer than 60 min`];
  const agedOut = [`error: The rates won't be saved for the following pairs, and these errors have persisted for more than 60 min: BTC/USD (${conflict})`];
  assert.deepEqual(perCycle(later), [[], kept, kept, kept, kept, kept, agedOut, agedOut]);
  later.actor.stop();
});

test('a quiet cycle sends nothing; notices of one cycle are not repeated in the next', async () => {
  const h = start([(now) => [ok('A', 100)(now), failed('B', 'HTTP 500')], (now) => [ok('A', 100)(now), ok('B', 101)(now)]]);
  await runCycles(h, 3);
  assert.deepEqual(perCycle(h), [['warn: Unable to fetch valid data from B. HTTP 500'], [], []]);
  h.actor.stop();
});

test('the first cycle follows the discovery notices; the clock alone drives the next ones', async () => {
  const h = start((now) => [failed('A', 'HTTP 500'), ok('B', 100)(now)]);
  await flush();
  assert.equal(h.fetches, 1);
  h.clock.increment(REFRESH_INPUT.intervalMs - 1);
  await flush();
  assert.equal(h.fetches, 1, 'no cycle before the interval is over');
  assert.equal(perCycle(h).length, 1);
  h.clock.increment(1);
  await flush();
  assert.equal(h.fetches, 2);
  assert.equal(perCycle(h).length, 2);
  assert.equal(h.clock.now(), START + 10 * MINUTE);
  h.actor.stop();
});
