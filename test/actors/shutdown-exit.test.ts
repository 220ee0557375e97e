// docs/specs/files-node.md §8: each signal is handled once (a second one is ignored), a clean stop exits 0, and a
// shutdown still running at the 15 s deadline logs the timeout and exits 1.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SHUTDOWN_DEADLINE_MS } from '../../src/lifecycle.js';
import { SIGNAL_ROOT_ENV } from '../support/signal-root.js';

const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'signal-root.js');

async function run(mode: 'quick' | 'hang' | 'stuck-start', signals: NodeJS.Signals[]) {
  const child = spawn(process.execPath, [script], { env: { ...process.env, [SIGNAL_ROOT_ENV]: mode }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes(mode === 'stuck-start' ? '"msg":"starting"' : '"msg":"ready"')) ready();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), SHUTDOWN_DEADLINE_MS + 15_000);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  await started;
  const signalledAt = Date.now();
  for (const signal of signals) {
    child.kill(signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const result = await exited;
  clearTimeout(killer);
  const lines = out.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { ...result, lines, elapsedMs: Date.now() - signalledAt };
}

test('a second signal during a shutdown is ignored; the clean stop exits 0', async () => {
  const { code, signal, lines } = await run('quick', ['SIGTERM', 'SIGINT', 'SIGTERM']);
  assert.equal(signal, null, 'not killed by the second signal');
  assert.equal(code, 0);
  assert.equal(lines.filter((line) => line.msg === 'already shutting down; signal ignored').length, 2);
  assert.ok(lines.some((line) => line.msg === 'stopped'));
});

test('a shutdown still running at the deadline logs the timeout and exits 1', async () => {
  const { code, lines, elapsedMs } = await run('hang', ['SIGTERM']);
  assert.equal(code, 1);
  const timeout = lines.find((line) => line.msg === 'shutdown timed out; exiting');
  assert.ok(timeout, 'the timeout is logged');
  assert.equal(timeout!.level, 'error');
  assert.ok(elapsedMs >= SHUTDOWN_DEADLINE_MS - 100, `exited after ${elapsedMs} ms`);
});

test('a signal while startup hangs still meets the deadline: exit 1 with the timeout line', async () => {
  const { code, lines, elapsedMs } = await run('stuck-start', ['SIGTERM']);
  assert.equal(code, 1);
  assert.ok(lines.some((line) => line.msg === 'shutdown timed out; exiting'));
  assert.ok(elapsedMs >= SHUTDOWN_DEADLINE_MS - 100 && elapsedMs < SHUTDOWN_DEADLINE_MS + 10_000, `exited after ${elapsedMs} ms`);
});
