// setTimerAt: a distant time is reached in capped steps and fires once, at the time; cancel stops it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedClock } from 'xstate';
import { MAX_TIMER_MS, setTimerAt } from '../../actors/clock-at.js';

function recordingClock() {
  const clock = new SimulatedClock();
  const delays: number[] = [];
  return {
    clock,
    delays,
    view: {
      now: () => clock.now(),
      setTimeout: (fn: (...args: unknown[]) => void, ms: number) => (delays.push(ms), clock.setTimeout(fn, ms)),
      clearTimeout: (id: unknown) => clock.clearTimeout(id as number),
    },
  };
}

test('a time beyond the Node timer limit is reached in capped steps and fires once', () => {
  const { clock, delays, view } = recordingClock();
  const year = 365 * 86_400_000;
  let fired = 0;
  setTimerAt(view, year, () => fired++);
  assert.deepEqual(delays, [MAX_TIMER_MS], 'the first step is capped');
  clock.increment(MAX_TIMER_MS);
  assert.equal(fired, 0, 'a step that ends before the time does not fire');
  assert.equal(delays.length, 2, 'the next step is armed');
  clock.increment(year - 1 - MAX_TIMER_MS);
  assert.equal(fired, 0);
  clock.increment(1);
  assert.equal(fired, 1);
  assert.ok(delays.every((ms) => ms <= MAX_TIMER_MS));
  clock.increment(year);
  assert.equal(fired, 1, 'once');
});

test('a past time fires on the next tick; cancel prevents firing', () => {
  const { clock, view } = recordingClock();
  clock.increment(1_000);
  let fired = 0;
  setTimerAt(view, 10, () => fired++);
  const cancel = setTimerAt(view, 2_000, () => fired++);
  clock.increment(0);
  assert.equal(fired, 1);
  cancel();
  cancel();
  clock.increment(5_000);
  assert.equal(fired, 1);
});

test('everyCronRun calls at each run of the schedule, re-arming after each tick, until cancelled', async () => {
  const { everyCronRun } = await import('../../actors/clock-at.js');
  const { requireCron } = await import('../../src/cron.js');
  const clock = new SimulatedClock();
  clock.set(Date.UTC(2026, 0, 1, 0, 0, 30));
  const ticks: number[] = [];
  const cancel = everyCronRun(clock, requireCron('test', '*/5 * * * *'), () => ticks.push(clock.now()));
  clock.increment(4 * 60_000 + 29_999);
  assert.deepEqual(ticks, []);
  clock.increment(1);
  assert.deepEqual(ticks, [Date.UTC(2026, 0, 1, 0, 5)]);
  clock.increment(5 * 60_000);
  clock.increment(5 * 60_000);
  assert.deepEqual(ticks, [Date.UTC(2026, 0, 1, 0, 5), Date.UTC(2026, 0, 1, 0, 10), Date.UTC(2026, 0, 1, 0, 15)]);
  // A tick that comes late (a busy process, a suspended machine) fires once, then the next run after now: no burst.
  clock.increment(12 * 60_000);
  assert.deepEqual(ticks.slice(3), [Date.UTC(2026, 0, 1, 0, 27)]);
  clock.increment(3 * 60_000);
  assert.deepEqual(ticks.slice(3), [Date.UTC(2026, 0, 1, 0, 27), Date.UTC(2026, 0, 1, 0, 30)]);
  cancel();
  clock.increment(60 * 60_000);
  assert.equal(ticks.length, 5);
  assert.throws(() => requireCron('storage.gc.schedule', 'not a cron'), /^Error: storage\.gc\.schedule: /);
});
