// Model-based test of the transfers indexer (machines/transfers/indexer-sync.machine.ts): every path of its graph
// replayed on a real actor with a SimulatedClock (test/support/model.ts). The chain is sampled as: a head two batches
// ahead, a head at the cursor (caught up), our tip replaced (reorg); a batch writes up to its `to` or finds a parent
// mismatch; a rewind goes back to block 104 (or to nothing); every actor fails. Failures are sampled only while none
// is pending, and the graph ignores the running totals, so it stays finite.
// Effects checked per step (spec A; notes A.4, F.10): batches are contiguous from START_BLOCK, at most `batchBlocks`
// long, never past head − CONFIRMATIONS_BLOCK, each chained to the cursor's hash; a reorg writes nothing and rewinds
// from the cursor; progress, rewinds, catching up and failures are reported; a failure backs off retryDelayMs(n) and
// restarts from the stored cursor.

import assert from 'node:assert/strict';
import type { AnyMachineSnapshot } from 'xstate';
import { indexerSyncMachine, type SyncBatchOutput } from '../../../machines/transfers/indexer-sync.machine.js';
import { nextBatch, retryDelayMs, syncTarget } from '../../../src/transfers/sync.js';
import { modelTest } from '../../support/model.js';

const INPUT = { startBlock: 100, confirmations: 2, periodMs: 10_000, batchBlocks: 10 };
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const AHEAD = { head: 113, tipOnChain: true }; // target 111: two batches from 100
const REORG = { head: 113, tipOnChain: false };
const caughtUp = (s: AnyMachineSnapshot) => ({ head: (s.context.lastBlock ?? INPUT.startBlock - 1) + INPUT.confirmations, tipOnChain: true });
const batch = (s: AnyMachineSnapshot) => nextBatch(s.context.lastBlock, INPUT.startBlock, syncTarget(s.context.head, INPUT.confirmations), INPUT.batchBlocks)!;
const written = (s: AnyMachineSnapshot): SyncBatchOutput => {
  const { from, to } = batch(s);
  return { kind: 'written', lastBlock: to, lastHash: hash(to), blocks: to - from + 1, rows: 3 * (to - from + 1) };
};
const rewound = (s: AnyMachineSnapshot) =>
  s.context.lastBlock !== null && s.context.lastBlock > 104
    ? { lastBlock: 104, lastHash: hash(104), depth: s.context.lastBlock - 104, deletedRows: 5 }
    : { lastBlock: null, lastHash: null, depth: 0, deletedRows: 0 };
// Up to two failures in a row for the cursor read (the backoff doubles), one for the others.
const fail = (src: string) => (s: AnyMachineSnapshot) => (s.context.failures < (src === 'loadCursor' ? 2 : 1) ? [new Error(`${src}: ECONNREFUSED`)] : []);

modelTest({
  machine: indexerSyncMachine,
  scenarios: [{ name: 'from START_BLOCK', input: INPUT }],
  outputs: {
    loadCursor: [{ lastBlock: null, lastHash: null }],
    checkChain: (s) => [AHEAD, caughtUp(s), REORG],
    syncBatch: (s) => [written(s), { kind: 'reorg' }],
    rewind: (s) => [rewound(s)],
  },
  errors: Object.fromEntries(['loadCursor', 'checkChain', 'syncBatch', 'rewind'].map((src) => [src, fail(src)])),
  abstract: ({ context }) => ({ ...context, indexedBlocks: undefined, indexedRows: undefined, reorgs: undefined }),
  describe: (event) =>
    event.output === AHEAD ? 'behind' : event.output === REORG ? 'tip replaced' : event.output?.tipOnChain ? 'caught up' : event.output?.kind,
  effect: ({ index, event, before, after, actions, invoked, elapsed }) => {
    const ctx = after.context;
    const of = (type: string) => actions.filter((a) => a.type === type).map((a) => a.params);
    for (const fake of invoked) {
      if (fake.src === 'syncBatch') {
        const { from, to, expectedParent } = fake.input;
        assert.equal(from, ctx.lastBlock === null ? INPUT.startBlock : ctx.lastBlock + 1, 'batches are contiguous from START_BLOCK');
        assert.ok(to >= from && to - from + 1 <= INPUT.batchBlocks, 'at most batchBlocks blocks');
        assert.ok(to <= ctx.head - INPUT.confirmations, 'never past head − CONFIRMATIONS_BLOCK');
        assert.equal(expectedParent, ctx.lastHash, 'chained to the cursor’s hash');
      }
      if (fake.src === 'rewind') assert.deepEqual(fake.input, { lastBlock: ctx.lastBlock }, 'rewinds from the cursor');
      if (fake.src === 'checkChain') assert.deepEqual(fake.input, { lastBlock: ctx.lastBlock, lastHash: ctx.lastHash });
    }
    if (index === 0) return assert.deepEqual(invoked.map((f) => f.src), ['loadCursor'], 'the cursor is read first');
    const prev = before!.context;
    const done = event.type.startsWith('xstate.done.actor.');
    if (done && event.output?.kind === 'written') {
      assert.deepEqual([ctx.lastBlock, ctx.lastHash, ctx.failures], [event.output.lastBlock, event.output.lastHash, 0], 'the cursor moves to the batch');
      assert.deepEqual([ctx.indexedBlocks - prev.indexedBlocks, ctx.indexedRows - prev.indexedRows], [event.output.blocks, event.output.rows]);
      assert.deepEqual(of('reportProgress'), [{ blocks: event.output.blocks, rows: event.output.rows, lastBlock: event.output.lastBlock, head: prev.head }]);
      assert.equal(after.value, nextBatch(ctx.lastBlock, INPUT.startBlock, syncTarget(ctx.head, INPUT.confirmations), INPUT.batchBlocks) ? 'syncing' : 'idle', 'the next batch while behind');
    }
    if (done && event.output?.kind === 'reorg') assert.deepEqual([after.value, ctx.lastBlock, ctx.lastHash], ['rewinding', prev.lastBlock, prev.lastHash], 'a parent mismatch writes nothing');
    if (done && before!.value === 'rewinding') {
      assert.deepEqual([ctx.lastBlock, ctx.reorgs, ctx.failures], [event.output.lastBlock, prev.reorgs + 1, 0]);
      assert.deepEqual(of('reportRewind'), [{ depth: event.output.depth, deletedRows: event.output.deletedRows, lastBlock: event.output.lastBlock }]);
    }
    if (done && before!.value === 'checking') assert.equal(ctx.head, event.output.head, 'the head is noted');
    if (event.type.startsWith('xstate.error.actor.')) {
      assert.deepEqual([after.value, ctx.failures, ctx.lastError], ['backingOff', prev.failures + 1, `Error: ${event.error.message}`]);
      assert.deepEqual(of('reportFailure'), [{ error: ctx.lastError, failures: ctx.failures, retryInMs: retryDelayMs(ctx.failures) }], 'the failure and its backoff are reported');
    }
    if (after.value === 'idle' && before!.value !== 'idle') assert.deepEqual(of('reportCaughtUp'), [{ lastBlock: ctx.lastBlock, head: ctx.head }], 'caught up is reported');
    if (event.type.startsWith('xstate.after.') && before!.value === 'backingOff') {
      assert.deepEqual(invoked.map((f) => f.src), ['loadCursor'], 'a retry re-reads the stored cursor');
      assert.equal(elapsed, retryDelayMs(prev.failures), 'the backoff: 1 s, 2 s, … after the n-th failure in a row');
    }
    if (event.type.startsWith('xstate.after.') && before!.value === 'idle') assert.equal(elapsed, INPUT.periodMs, 'polled every period');
    if (event.type === 'system.shutdown') assert.deepEqual([after.value, Object.keys(after.children)], ['stopped', []]);
  },
});
