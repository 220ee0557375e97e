// deadline() (src/clock.ts): deadlines on the injected clock, so a SimulatedClock
// drives them; on the system clock a pending deadline holds the process like any timer until it fires or is cleared.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SimulatedClock } from 'xstate';
import { spawn } from 'node:child_process';
import { deadline } from '../src/clock.js';

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

/**
 * Runs `script` in a child process with `m` bound to src/clock.js (deadline, systemClock); resolves to its stdout and
 * exit code, killing it when it has not exited within `capMs`.
 */
async function runChild(script: string, capMs: number): Promise<{ stdout: string; code: number | null; killed: boolean }> {
  const module = new URL('../src/clock.js', import.meta.url).href;
  const child = spawn(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(module)}); ${script}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  let killed = false;
  const cap = setTimeout(() => {
    killed = true;
    child.kill('SIGKILL');
  }, capMs);
  try {
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    return { stdout, code, killed };
  } finally {
    clearTimeout(cap);
  }
}

test('on the system clock a pending deadline keeps the process alive until it fires', async () => {
  // Nothing else holds the event loop: only the deadline's own timer lets the child see it expire.
  const { stdout, code, killed } = await runChild(
    `const limit = m.deadline(m.systemClock, 200); limit.signal.addEventListener('abort', () => process.stdout.write(limit.expired ? 'expired' : 'aborted'));`,
    20_000,
  );
  assert.equal(killed, false, 'the child exited by itself once the deadline fired');
  assert.equal(code, 0);
  assert.equal(stdout, 'expired');
});

test('clear() lets the process exit at once, without the deadline firing', async () => {
  // A minute-long deadline: the child outlives the cap unless clear() released the timer.
  const { stdout, code, killed } = await runChild(
    `const limit = m.deadline(m.systemClock, 60_000); limit.signal.addEventListener('abort', () => process.stdout.write('expired')); limit.clear();`,
    20_000,
  );
  assert.equal(killed, false, 'the child exited by itself');
  assert.equal(code, 0);
  assert.equal(stdout, '');
});
