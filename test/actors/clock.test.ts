// deadline() (actors/clock.ts): deadlines on the injected clock, so a SimulatedClock drives them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedClock } from 'xstate';
import { spawn } from 'node:child_process';
import { deadline } from '../../actors/clock.js';

test('a deadline fires when the clock reaches it, not before, and says it expired', () => {
  const clock = new SimulatedClock();
  const limit = deadline(clock, 1_000);
  clock.increment(999);
  assert.equal(limit.signal.aborted, false);
  clock.increment(1);
  assert.equal(limit.signal.aborted, true);
  assert.equal(limit.expired, true);
  assert.equal((limit.signal.reason as DOMException).name, 'TimeoutError');
});

test("a caller's signal aborts the deadline's with its own reason, and that is no expiry", () => {
  const clock = new SimulatedClock();
  const caller = new AbortController();
  const limit = deadline(clock, 1_000, caller.signal);
  caller.abort(new Error('client gone'));
  assert.equal(limit.signal.aborted, true);
  assert.equal((limit.signal.reason as Error).message, 'client gone');
  assert.equal(limit.expired, false);
  // Already aborted when the deadline is made: aborted at once.
  assert.equal(deadline(clock, 1_000, caller.signal).signal.aborted, true);
});

test('clear() before the deadline: nothing fires later and the caller signal keeps no listener', () => {
  const clock = new SimulatedClock();
  const caller = new AbortController();
  const limit = deadline(clock, 1_000, caller.signal);
  limit.clear();
  clock.increment(5_000);
  caller.abort();
  assert.equal(limit.signal.aborted, false);
  assert.equal(limit.expired, false);
});

test('on the system clock a pending deadline keeps no process alive (its timer is unref-ed)', async () => {
  const module = new URL('../../actors/clock.js', import.meta.url).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(module)}); m.deadline(m.systemClock, 60_000);`], { stdio: 'ignore' });
  const started = Date.now();
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 10_000, `exited after ${Date.now() - started} ms`);
});
