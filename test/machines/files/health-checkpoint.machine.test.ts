// The health-checkpoint machine under a simulated clock (docs/DESIGN.md testing levels: machines; notes A.6 scheduling).
// Its actors are replaced with scripted ones, as actors/files replaces them with real I/O.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import {
  healthCheckpointMachine,
  healthObject,
  type GatherInput,
  type GatherOutput,
  type HealthCheckpointInput,
  type PersistInput,
  type PersistOutput,
} from '../../../machines/files/health-checkpoint.machine.js';
import { membershipVersion, roundStart, type HealthInputs, type HealthSettings, type PersistedCheckpoint } from '../../../src/files/health.js';

const INTERVAL = 60_000;
const START = 1_700_000_010_000;
const settings: HealthSettings = {
  intervalMs: INTERVAL,
  maxCheckpointAgeMs: 3 * INTERVAL,
  storageMaxAgeMs: 2 * INTERVAL,
  repairMaxAgeMs: 3_600_000,
  requiredPeerCount: 0,
  diskReserveBytes: 0,
};
const MV = membershipVersion(['self']);
const META = { version: '0.1.0', startedAt: START };

/** Lets pending promise callbacks (fromPromise actors) run. */
const flush = async (times = 3) => {
  for (let i = 0; i < times; i++) await new Promise((resolve) => setImmediate(resolve));
};

interface Harness {
  clock: SimulatedClock;
  actor: ReturnType<typeof createActor<typeof healthCheckpointMachine>>;
  gathers: number[];
  persisted: PersistedCheckpoint[];
  failures: Array<{ stage: string; error: unknown }>;
  startupComplete: boolean;
  healthyEvidence: boolean;
  persistFails: boolean;
  /** When set, gathering waits for it. */
  hold: Promise<void> | null;
}

interface Options {
  restored?: PersistedCheckpoint | null;
  /** Evidence of the first attempt (the first gather runs as the actor starts). */
  startupComplete?: boolean;
  healthyEvidence?: boolean;
  persistFails?: boolean;
  hold?: Promise<void> | null;
  input?: Partial<HealthCheckpointInput>;
}

function start(options: Options = {}): Harness {
  const clock = new SimulatedClock();
  clock.set(START);
  const h: Harness = {
    clock,
    actor: undefined as never,
    gathers: [],
    persisted: [],
    failures: [],
    startupComplete: options.startupComplete ?? true,
    healthyEvidence: options.healthyEvidence ?? true,
    persistFails: options.persistFails ?? false,
    hold: options.hold ?? null,
  };
  const evidence = (now: number): HealthInputs => ({
    startup: { complete: h.startupComplete, healthy: h.startupComplete },
    runtimeStarted: true,
    storage: { measuredAt: now, availableBytes: 1_000 },
    repair: { required: false, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false },
    attestedPeers: 0,
    ...(h.healthyEvidence ? {} : { runtimeStarted: false }),
  });
  const machine = healthCheckpointMachine.provide({
    actors: {
      gatherInputs: fromPromise<GatherOutput, GatherInput>(async () => {
        const now = clock.now();
        h.gathers.push(now);
        const inputs = evidence(now);
        if (h.hold) await h.hold;
        return { now, finishedAt: clock.now(), inputs };
      }),
      persistCheckpoint: fromPromise<PersistOutput, PersistInput>(async ({ input }) => {
        if (h.persistFails) throw new Error('disk full');
        h.persisted.push(input.checkpoint);
        return { finishedAt: clock.now() };
      }),
    },
    actions: { reportFailure: (_, params) => void h.failures.push(params) },
  });
  h.actor = createActor(machine, {
    input: { settings, membershipVersion: MV, restored: options.restored ?? null, startedAt: START, ...options.input },
    clock,
  }).start();
  return h;
}

test('one attempt at start; reads see starting until it finishes, then ready with a persisted checkpoint', async () => {
  const h = start();
  assert.equal(h.actor.getSnapshot().value, 'checking');
  assert.equal(healthObject(h.actor.getSnapshot().context, null, START, META).state, 'starting');
  await flush();
  assert.deepEqual(h.gathers, [START]);
  assert.equal(h.actor.getSnapshot().value, 'idle');
  const { context } = h.actor.getSnapshot();
  assert.equal(context.snapshot.state, 'ready');
  assert.equal(context.snapshot.height, roundStart(START, INTERVAL));
  assert.deepEqual(h.persisted, [{ version: 1, membershipVersion: MV, height: roundStart(START, INTERVAL), completedAt: START, attestedPeers: 0 }]);
  assert.equal(healthObject(context, null, START + 1, META).state, 'ready');
  h.actor.stop();
});

test('then one attempt every interval: nothing at interval − 1, an attempt at the interval', async () => {
  const h = start();
  await flush();
  for (let round = 1; round <= 3; round++) {
    h.clock.increment(INTERVAL - 1);
    await flush();
    assert.equal(h.gathers.length, round, `no attempt before interval ${round}`);
    h.clock.increment(1);
    await flush();
    assert.equal(h.gathers.length, round + 1, `attempt at interval ${round}`);
    assert.equal(h.gathers[round], START + round * INTERVAL);
  }
  assert.equal(h.persisted.length, 4);
  const heights = h.persisted.map((c) => c.height);
  assert.deepEqual(heights, [...heights].sort((a, b) => a - b), 'monotonic');
  assert.ok(heights.every((x) => x % INTERVAL === 0));
  h.actor.stop();
});

test('health.startupComplete: an immediate attempt from idle, out of schedule; starting → ready', async () => {
  const h = start({ startupComplete: false });
  await flush();
  assert.equal(h.actor.getSnapshot().context.snapshot.state, 'starting');
  assert.equal(h.persisted.length, 0, 'nothing persisted by a failed attempt');

  h.clock.increment(5_000);
  h.startupComplete = true;
  h.actor.send({ type: 'health.startupComplete' });
  await flush();
  assert.deepEqual(h.gathers, [START, START + 5_000]);
  assert.equal(h.actor.getSnapshot().context.snapshot.state, 'ready');
  assert.equal(h.persisted.length, 1);
  // The schedule follows the latest attempt.
  h.clock.increment(INTERVAL - 1);
  await flush();
  assert.equal(h.gathers.length, 2);
  h.clock.increment(1);
  await flush();
  assert.equal(h.gathers.length, 3);
  h.actor.stop();
});

test('health.startupComplete during an attempt: one more attempt right after it, never two at once', async () => {
  let release!: () => void;
  const h = start({ startupComplete: false, hold: new Promise<void>((resolve) => (release = resolve)) });
  await flush();
  assert.equal(h.actor.getSnapshot().value, 'checking');
  h.startupComplete = true;
  h.actor.send({ type: 'health.startupComplete' });
  h.clock.increment(3 * INTERVAL);
  await flush();
  assert.equal(h.gathers.length, 1, 'still one attempt in flight');
  h.hold = null;
  release();
  await flush();
  assert.equal(h.gathers.length, 2, 'the re-run followed at once');
  assert.equal(h.actor.getSnapshot().context.snapshot.state, 'ready');
  assert.equal(h.actor.getSnapshot().value, 'idle');
  h.actor.stop();
});

test('an attempt that outlives its interval is followed at once by the next one', async () => {
  const h = start();
  await flush();
  let release!: () => void;
  h.hold = new Promise<void>((resolve) => (release = resolve));
  h.clock.increment(INTERVAL);
  await flush();
  assert.equal(h.gathers.length, 2);
  h.clock.increment(INTERVAL + 5_000);
  await flush();
  assert.equal(h.gathers.length, 2, 'no overlap');
  h.hold = null;
  release();
  await flush();
  assert.equal(h.gathers.length, 3, 'the skipped tick re-runs once');
  assert.equal(h.gathers[2], START + 2 * INTERVAL + 5_000);
  h.actor.stop();
});

test('persistence is called only when the attempt passes; a failed attempt freezes the height', async () => {
  const h = start();
  await flush();
  assert.equal(h.persisted.length, 1);
  const height = h.actor.getSnapshot().context.snapshot.height;
  h.healthyEvidence = false;
  h.clock.increment(INTERVAL);
  await flush();
  h.clock.increment(INTERVAL);
  await flush();
  assert.equal(h.gathers.length, 3);
  assert.equal(h.persisted.length, 1, 'no write for failed attempts');
  const { snapshot } = h.actor.getSnapshot().context;
  assert.equal(snapshot.state, 'degraded');
  assert.equal(snapshot.height, height);
  assert.equal(snapshot.observedAt, START);
  h.healthyEvidence = true;
  h.clock.increment(INTERVAL);
  await flush();
  assert.equal(h.persisted.length, 2);
  assert.equal(h.actor.getSnapshot().context.snapshot.height, roundStart(START + 3 * INTERVAL, INTERVAL));
  h.actor.stop();
});

test('a failed write is reported and the schedule goes on', async () => {
  const h = start({ persistFails: true });
  await flush();
  assert.equal(h.actor.getSnapshot().value, 'idle');
  assert.equal(h.failures.length, 1);
  assert.equal(h.failures[0]!.stage, 'persist');
  assert.equal(h.actor.getSnapshot().context.pendingPersist, null);
  h.persistFails = false;
  h.clock.increment(INTERVAL);
  await flush();
  assert.equal(h.persisted.length, 1);
  h.actor.stop();
});

test('restored from a persisted checkpoint: same membership keeps its height; another membership starts at 0', async () => {
  const past = START - 2 * INTERVAL;
  const stored: PersistedCheckpoint = { version: 1, membershipVersion: MV, height: roundStart(past, INTERVAL), completedAt: past, attestedPeers: 0 };

  const same = start({ restored: stored, healthyEvidence: false });
  assert.equal(same.actor.getSnapshot().context.snapshot.height, stored.height, 'reads see the restored height at once');
  await flush();
  assert.equal(same.actor.getSnapshot().context.snapshot.height, stored.height, 'frozen, not reset, by a failed attempt');
  assert.equal(same.actor.getSnapshot().context.snapshot.state, 'degraded', 'not older than maxCheckpointAgeMs');
  same.actor.stop();

  const other = start({ restored: { ...stored, membershipVersion: membershipVersion(['self', 'peer']) }, healthyEvidence: false });
  assert.equal(other.actor.getSnapshot().context.previous, null);
  assert.equal(other.actor.getSnapshot().context.snapshot.height, 0);
  await flush();
  assert.equal(other.actor.getSnapshot().context.snapshot.height, 0);
  assert.equal(other.actor.getSnapshot().context.snapshot.state, 'degraded');
  other.actor.stop();
});

test('system.shutdown from any state reaches the final state', async () => {
  for (const at of ['checking', 'idle'] as const) {
    const h = start({ hold: at === 'checking' ? new Promise<void>(() => {}) : null });
    await flush();
    assert.equal(h.actor.getSnapshot().value, at);
    h.actor.send({ type: 'system.shutdown' });
    assert.equal(h.actor.getSnapshot().value, 'stopped');
    assert.equal(h.actor.getSnapshot().status, 'done');
    h.clock.increment(10 * INTERVAL);
    await flush();
    assert.equal(h.gathers.length, 1, 'no attempt after shutdown');
  }
});

test('a gather that fails is reported, keeps the last snapshot, and the next attempt comes one interval later', async () => {
  let fail = true;
  const clock = new SimulatedClock();
  clock.set(START);
  const failures: string[] = [];
  let gathers = 0;
  const machine = healthCheckpointMachine.provide({
    actors: {
      gatherInputs: fromPromise<GatherOutput, GatherInput>(async () => {
        gathers++;
        if (fail) throw new Error('registry unavailable');
        const now = clock.now();
        return {
          now,
          finishedAt: now,
          inputs: {
            startup: { complete: true, healthy: true },
            runtimeStarted: true,
            storage: { measuredAt: now, availableBytes: 1 },
            repair: { required: false, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false },
            attestedPeers: 0,
          },
        };
      }),
      persistCheckpoint: fromPromise<PersistOutput, PersistInput>(async () => ({ finishedAt: clock.now() })),
    },
    actions: { reportFailure: (_, { stage }) => void failures.push(stage) },
  });
  const actor = createActor(machine, { input: { settings, membershipVersion: MV, restored: null, startedAt: START }, clock }).start();
  await flush();
  assert.deepEqual(failures, ['gather']);
  assert.equal(actor.getSnapshot().value, 'idle');
  assert.equal(actor.getSnapshot().context.snapshot.state, 'starting', 'the snapshot before the failed attempt');
  fail = false;
  clock.increment(INTERVAL - 1);
  await flush();
  assert.equal(gathers, 1);
  clock.increment(1);
  await flush();
  assert.equal(gathers, 2);
  assert.equal(actor.getSnapshot().context.snapshot.state, 'ready');
  actor.stop();
});
