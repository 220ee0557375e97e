// The indexer's arithmetic (src/transfers/sync.ts): inclusive START_BLOCK and head − CONFIRMATIONS_BLOCK
// (notes F.10, fixing the original's off-by-ones of notes A.3), batches, backoff.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextBatch, nextBlock, retryDelayMs, syncTarget } from '../../src/transfers/sync.js';

test('START_BLOCK itself is indexed, and the cursor resumes one after the last block', () => {
  assert.equal(nextBlock(null, 5), 5);
  assert.equal(nextBlock(9, 5), 10);
  // A cursor below START_BLOCK (configuration raised since) starts at START_BLOCK.
  assert.equal(nextBlock(2, 5), 5);
});

test('head − CONFIRMATIONS_BLOCK is included; batches never pass it', () => {
  assert.equal(syncTarget(100, 3), 97);
  assert.deepEqual(nextBatch(null, 1, 97, 50), { from: 1, to: 50 });
  assert.deepEqual(nextBatch(50, 1, 97, 50), { from: 51, to: 97 });
  assert.equal(nextBatch(97, 1, 97, 50), undefined);
  assert.deepEqual(nextBatch(null, 0, 0, 50), { from: 0, to: 0 });
  assert.equal(nextBatch(null, 1, syncTarget(2, 3), 50), undefined);
});

test('retry delays double from 1 s and stop at 60 s', () => {
  assert.deepEqual([1, 2, 3, 4, 7, 20].map(retryDelayMs), [1_000, 2_000, 4_000, 8_000, 60_000, 60_000]);
});
