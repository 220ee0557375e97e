// The peering schedule loop of files.p2p (actors/files/p2p.actor.ts; docs/notes/files-node.md B.4) on a
// SimulatedClock: a startup pass, one pass per cron tick, ticks during a pass skipped, operator passes
// joining a running one, and stop disarming the timer and aborting the running pass.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedClock } from 'xstate';
import { PeeringLoop, type PassTrigger } from '../../../actors/files/p2p.actor.js';
import { isCronError, parseCron } from '../../../src/cron.js';
import type { PeeringPassResult } from '../../../src/files/peering.js';

const flush = () => new Promise((resolve) => setImmediate(resolve));

function harness() {
  const clock = new SimulatedClock();
  const schedule = parseCron('*/10 * * * * *', { utc: true });
  if (isCronError(schedule)) throw new Error(schedule.error);
  const passes: Array<{ signal: AbortSignal; finish(result?: PeeringPassResult): void; fail(error: Error): void }> = [];
  const finished: Array<{ trigger: PassTrigger; result: PeeringPassResult }> = [];
  const failures: PassTrigger[] = [];
  let skipped = 0;
  const loop = new PeeringLoop({
    clock,
    schedule,
    runPass: (signal) =>
      new Promise<PeeringPassResult>((resolve, reject) => {
        passes.push({ signal, finish: (result = { connected: ['alpha'], total: 1, failed: 0 }) => resolve(result), fail: reject });
      }),
    onPass: (result, trigger) => finished.push({ trigger, result }),
    onPassError: (_error, trigger) => failures.push(trigger),
    onSkippedTick: () => skipped++,
  });
  return { clock, loop, passes, finished, failures, skipped: () => skipped };
}

test('startup pass first; a tick during a pass is skipped; the next tick after it runs a pass', async () => {
  const { clock, loop, passes, finished, skipped } = harness();
  let startupSettled = false;
  void loop.start().then(() => (startupSettled = true));
  assert.equal(passes.length, 1);
  assert.equal(loop.state, 'passing');

  clock.increment(10_000);
  assert.equal(passes.length, 1, 'no overlapping pass');
  assert.equal(skipped(), 1);

  passes[0]!.finish();
  await flush();
  assert.equal(startupSettled, true);
  assert.equal(loop.state, 'idle');
  assert.deepEqual(finished.map((f) => f.trigger), ['startup']);

  clock.increment(10_000);
  assert.equal(passes.length, 2);
  passes[1]!.finish();
  await flush();
  assert.deepEqual(finished.map((f) => f.trigger), ['startup', 'schedule']);
  loop.stop();
});

test('an operator pass joins the running pass, or starts one when idle', async () => {
  const { loop, passes, finished } = harness();
  void loop.start();
  const joined = loop.passNow();
  assert.equal(passes.length, 1, 'joined the startup pass');
  passes[0]!.finish({ connected: ['alpha', 'beta'], total: 2, failed: 0 });
  assert.deepEqual((await joined).connected, ['alpha', 'beta']);
  await flush();

  const own = loop.passNow();
  assert.equal(passes.length, 2);
  passes[1]!.finish();
  assert.deepEqual(await own, { connected: ['alpha'], total: 1, failed: 0 });
  assert.deepEqual(finished.map((f) => f.trigger), ['startup', 'operator']);
  loop.stop();
});

test('a pass that cannot run is reported and the schedule carries on', async () => {
  const { clock, loop, passes, failures } = harness();
  let startupSettled = false;
  void loop.start().then(() => (startupSettled = true));
  passes[0]!.fail(new Error('node not running'));
  await flush();
  assert.equal(startupSettled, true, 'the startup wait never rejects');
  assert.deepEqual(failures, ['startup']);
  clock.increment(10_000);
  assert.equal(passes.length, 2);
  passes[1]!.finish();
  await flush();
  loop.stop();
});

test('stop aborts the running pass and disarms the schedule', async () => {
  const { clock, loop, passes } = harness();
  void loop.start();
  loop.stop();
  assert.equal(passes[0]!.signal.aborted, true);
  clock.increment(60_000);
  assert.equal(passes.length, 1);
  assert.equal(loop.state, 'stopped');
});

test('a run time further away than a Node timer can wait is reached in capped steps, not by a busy loop', async () => {
  const clock = new SimulatedClock();
  const schedule = parseCron('0 0 0 1 1 *', { utc: true });
  if (isCronError(schedule)) throw new Error(schedule.error);
  const delays: number[] = [];
  const recording = {
    now: () => clock.now(),
    setTimeout: (fn: (...args: unknown[]) => void, ms: number) => {
      delays.push(ms);
      return clock.setTimeout(fn, ms);
    },
    clearTimeout: (id: unknown) => clock.clearTimeout(id as number),
  };
  let passes = 0;
  const loop = new PeeringLoop({ clock: recording, schedule, runPass: async () => (passes++, { connected: [], total: 0, failed: 0 }) });
  await loop.start();
  assert.equal(passes, 1);
  // 1 January 1971 00:00 UTC is 365 days after the simulated clock's 0.
  assert.ok(delays.every((ms) => ms <= 2_147_483_647), 'never above the timer limit');
  clock.increment(364 * 86_400_000);
  assert.equal(passes, 1, 'no pass before the run time');
  assert.ok(delays.length < 10, `stepped ${delays.length} times`);
  clock.increment(86_400_000);
  await flush();
  assert.equal(passes, 2);
  loop.stop();
});
