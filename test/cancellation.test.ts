// settledByAbort (src/cancellation.ts): a deadline answers on time even when the work it bounds notices its signal
// late (issue 29, seed 637360666: helia's bitswap ended a want seconds after the download's discovery deadline).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settledByAbort } from '../src/cancellation.js';

/** Work that takes the signal but only gives up `lateMs` after it fired, as helia's want did. */
function lateToNotice(signal: AbortSignal, lateMs: number): { work: Promise<string>; ended: () => boolean } {
  let ended = false;
  const work = new Promise<string>((_resolve, reject) => {
    signal.addEventListener('abort', () => setTimeout(() => {
      ended = true;
      reject(new Error('Want was aborted'));
    }, lateMs));
  });
  return { work, ended: () => ended };
}

test('rejects with the signal reason as soon as it fires, while the work still runs; its late failure is dropped', async () => {
  const controller = new AbortController();
  const { work, ended } = lateToNotice(controller.signal, 300);
  const settled = settledByAbort(work, controller.signal);
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('discovery deadline')), 50);
  await assert.rejects(settled, /discovery deadline/);
  assert.ok(Date.now() - started < 250, `answered ${Date.now() - started} ms after the start, not when the work gave up`);
  assert.equal(ended(), false, 'the work had not ended yet');
  // The late rejection must not surface as an unhandled rejection (node:test fails the file if it does).
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(ended(), true);
});

test('the work’s own outcome when it comes first; an already fired signal rejects at once', async () => {
  const controller = new AbortController();
  assert.equal(await settledByAbort(Promise.resolve('stat'), controller.signal), 'stat');
  await assert.rejects(settledByAbort(Promise.reject(new Error('not found')), controller.signal), /not found/);
  controller.abort(new Error('gone'));
  await assert.rejects(settledByAbort(new Promise(() => {}), controller.signal), /gone/);
  await assert.rejects(settledByAbort(Promise.reject(new Error('late')), controller.signal), /gone/);
});
