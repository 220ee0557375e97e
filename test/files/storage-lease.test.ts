// The storage lease (src/files/storage-lease.ts; docs/notes/files-node.md A.4 rule 8): shared/exclusive with writer
// preference, FIFO, abortable waits, one-shot releases.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StorageLease, type LeaseRelease } from '../../src/files/storage-lease.js';

const flush = async () => {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Whether a tracked request has been granted (a plain boolean: no narrowing of the tracked state). */
const granted = (state: { release?: LeaseRelease }): boolean => state.release !== undefined;

/** Tracks whether a lease request has been granted yet. */
function track(request: Promise<LeaseRelease>) {
  const state: { release?: LeaseRelease; error?: unknown } = {};
  request.then(
    (release) => (state.release = release),
    (error: unknown) => (state.error = error),
  );
  return state;
}

test('shared holders overlap; an exclusive request waits for all of them', async () => {
  const lease = new StorageLease();
  const a = await lease.acquireShared();
  const b = await lease.acquireShared();
  assert.deepEqual(lease.state, { shared: 2, exclusive: false, waitingShared: 0, waitingExclusive: 0 });
  const gc = track(lease.acquireExclusive());
  await flush();
  assert.equal(granted(gc), false, 'waits while uploads hold it');
  a();
  await flush();
  assert.equal(granted(gc), false, 'one upload still holds it');
  b();
  await flush();
  assert.ok(gc.release, 'granted once the last shared holder released');
  assert.deepEqual(lease.state, { shared: 0, exclusive: true, waitingShared: 0, waitingExclusive: 0 });
});

test('writer preference: a queued exclusive request blocks later shared ones (no starvation of the collector)', async () => {
  const lease = new StorageLease();
  const upload = await lease.acquireShared();
  const gc = track(lease.acquireExclusive());
  const later = track(lease.acquireShared());
  await flush();
  assert.equal(granted(later), false, 'a shared request behind a waiting exclusive one waits');
  assert.deepEqual(lease.state, { shared: 1, exclusive: false, waitingShared: 1, waitingExclusive: 1 });
  upload();
  await flush();
  assert.ok(gc.release);
  assert.equal(granted(later), false, 'still waiting while the collector holds it');
  gc.release!();
  await flush();
  assert.ok(later.release, 'granted when the collector released');
});

test('after an exclusive release the shared requests queued before the next exclusive one go together', async () => {
  const lease = new StorageLease();
  const first = await lease.acquireExclusive();
  const s1 = track(lease.acquireShared());
  const s2 = track(lease.acquireShared());
  const second = track(lease.acquireExclusive());
  const s3 = track(lease.acquireShared());
  await flush();
  first();
  await flush();
  assert.ok(s1.release && s2.release, 'both earlier shared requests granted at once');
  assert.equal(granted(second), false);
  assert.equal(granted(s3), false, 'the one behind the second exclusive request keeps waiting');
  s1.release!();
  s2.release!();
  await flush();
  assert.ok(second.release);
  assert.equal(granted(s3), false);
  second.release!();
  await flush();
  assert.ok(s3.release);
});

test('exclusive holds exclude each other', async () => {
  const lease = new StorageLease();
  const one = await lease.acquireExclusive();
  const two = track(lease.acquireExclusive());
  await flush();
  assert.equal(granted(two), false);
  one();
  await flush();
  assert.ok(two.release);
});

test('an aborted wait leaves the queue with the signal reason, and an aborted exclusive wait unblocks shared ones', async () => {
  const lease = new StorageLease();
  const upload = await lease.acquireShared();
  const controller = new AbortController();
  const gc = track(lease.acquireExclusive(controller.signal));
  const later = track(lease.acquireShared());
  await flush();
  assert.equal(granted(later), false);
  const reason = new Error('gave up');
  controller.abort(reason);
  await flush();
  assert.equal(gc.error, reason);
  assert.ok(later.release, 'nothing exclusive waits any more');
  assert.deepEqual(lease.state, { shared: 2, exclusive: false, waitingShared: 0, waitingExclusive: 0 });
  upload();
  later.release!();
  assert.equal(lease.state.shared, 0);
});

test('an already aborted signal is refused at once; an abort after the grant changes nothing', async () => {
  const lease = new StorageLease();
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(lease.acquireShared(controller.signal), { name: 'AbortError' });
  assert.equal(lease.state.shared, 0);
  const live = new AbortController();
  const release = await lease.acquireExclusive(live.signal);
  live.abort();
  assert.equal(lease.state.exclusive, true, 'the hold is the holder’s to release');
  release();
  assert.equal(lease.state.exclusive, false);
});

test('a release is one-shot: calling it twice gives back one hold', async () => {
  const lease = new StorageLease();
  const a = await lease.acquireShared();
  const b = await lease.acquireShared();
  a();
  a();
  assert.equal(lease.state.shared, 1, 'the second call did not release b’s hold');
  const gc = track(lease.acquireExclusive());
  await flush();
  assert.equal(granted(gc), false);
  b();
  await flush();
  assert.ok(gc.release);
});
