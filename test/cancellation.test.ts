// settledByAbort (src/cancellation.ts): a deadline answers on time even when the work it bounds notices its signal
// late (issue 29, seed 637360666: helia's bitswap ended a want seconds after the download's discovery deadline).
// linkSignals: AbortSignal.any's behaviour for the work, and nothing left on a long-lived source once released.

import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { linkSignals, settledByAbort } from '../src/cancellation.js';

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

test('linkSignals aborts with the first source that fires, and with one already fired at once', () => {
  const lifetime = new AbortController();
  const request = new AbortController();
  const linked = linkSignals([request.signal, lifetime.signal]);
  assert.equal(linked.signal.aborted, false);
  request.abort(new Error('client gone'));
  assert.equal(linked.signal.aborted, true);
  assert.match(String(linked.signal.reason), /client gone/);
  lifetime.abort(new Error('stopped'));
  assert.match(String(linked.signal.reason), /client gone/, 'the first reason stays');
  const late = linkSignals([new AbortController().signal, lifetime.signal]);
  assert.equal(late.signal.aborted, true);
  assert.match(String(late.signal.reason), /stopped/);
  late.release();
});

test('linkSignals: once released, a long-lived source holds nothing of the work, and no longer aborts it', () => {
  const lifetime = new AbortController();
  for (let i = 0; i < 1_000; i++) {
    const linked = linkSignals([new AbortController().signal, lifetime.signal]);
    linked.signal.addEventListener('abort', () => {});
    linked.release();
  }
  assert.equal(getEventListeners(lifetime.signal, 'abort').length, 0, 'every link was removed from the lifetime signal');
  const request = new AbortController();
  const linked = linkSignals([request.signal, lifetime.signal]);
  assert.equal(getEventListeners(lifetime.signal, 'abort').length, 1);
  linked.release();
  assert.equal(getEventListeners(request.signal, 'abort').length, 0);
  lifetime.abort(new Error('stopped'));
  assert.equal(linked.signal.aborted, false, 'released work is not aborted afterwards');
  // A source that fires removes the link from the other sources too.
  const other = new AbortController();
  const fired = new AbortController();
  const both = linkSignals([other.signal, fired.signal]);
  fired.abort();
  assert.equal(both.signal.aborted, true);
  assert.equal(getEventListeners(other.signal, 'abort').length, 0);
});
