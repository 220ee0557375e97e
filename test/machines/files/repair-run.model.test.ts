// Model-based test of the repair job (machines/files/repair-run.machine.ts): every path of its graph replayed on a real
// actor with a SimulatedClock (test/support/model.ts), with repair required and not. A batch is sampled full (the cycle
// goes on) and short (the walk reached the end: the cycle completes); it also fails as a whole. The graph tells states
// apart by the run, the cursor and whether a cycle is active or completed, not by the counts (they add up forever).
// Effects checked per step (spec §4.3; notes A.4, C21): every batch is folded and published, and persisted unless an
// unpaced cycle goes on (those are written once per `unpacedBatchesPerWrite`); a batch starts
// at the persisted cursor; a cycle waits `batchDelayMs` between batches that asked peers, none after one that asked none; a tick during a run is skipped, not queued; a
// disabled repair answers a manual batch at once with an empty report and runs nothing; a failure is published.

import assert from 'node:assert/strict';
import { repairRunMachine } from '../../../machines/files/repair-run.machine.js';
import { foldBatch, freshRepairState, NO_COUNTS, REPAIR_BATCH_SIZE, repairReport, type BatchOutcome } from '../../../src/files/repair.js';
import { modelTest } from '../../support/model.js';

const T0 = 1_700_000_000_000;
const DELAY = 5_000;
const FRESH = freshRepairState('a'.repeat(64));
const counts = { ...NO_COUNTS, examined: 3, checked: 3, underReplicated: 1, repaired: 1 };
const full: BatchOutcome = { counts, fetched: REPAIR_BATCH_SIZE, lastCid: 'cid-full', startedAt: T0, finishedAt: T0 + 10 };
const short: BatchOutcome = { counts, fetched: 3, lastCid: 'cid-end', startedAt: T0 + 20, finishedAt: T0 + 30 };
/** A full batch in which no record had a holder to probe (a node without peers): no peer was asked. */
const unprobed: BatchOutcome = { counts: { ...NO_COUNTS, examined: REPAIR_BATCH_SIZE }, fetched: REPAIR_BATCH_SIZE, lastCid: 'cid-quiet', startedAt: T0, finishedAt: T0 + 10 };
const NAMES = new Map<unknown, string>([[full, 'full batch'], [unprobed, 'full batch, no peer asked'], [short, 'end of the walk']]);

modelTest({
  machine: repairRunMachine,
  scenarios: [
    // Two unpaced batches per write: a path of the model reaches the write that is due.
    { name: 'required', input: { required: true, batchDelayMs: DELAY, unpacedBatchesPerWrite: 2, restored: FRESH } },
    { name: 'not required', input: { required: false, batchDelayMs: DELAY, unpacedBatchesPerWrite: 2, restored: FRESH } },
  ],
  startAt: T0,
  outputs: { runBatch: [full, unprobed, short] },
  errors: { runBatch: [new Error('registry unavailable')] },
  abstract: ({ context: { run, state, lastReport } }) => ({ run, cursor: state.cursor, active: state.active !== null, last: state.last !== null, completed: lastReport?.cycleCompleted ?? null }),
  describe: (event) => NAMES.get(event.output),
  simplePaths: { maxStates: 12, maxPaths: 10 },
  effect: ({ index, event, before, after, actions, invoked, elapsed }) => {
    const ctx = after.context;
    const of = (type: string) => actions.filter((a) => a.type === type).map((a) => a.params);
    if (!ctx.required) assert.deepEqual(invoked, [], 'a disabled repair runs nothing');
    for (const fake of invoked) assert.deepEqual(fake.input, { cursor: ctx.state.cursor }, 'a batch starts at the persisted cursor');
    if (index === 0) return;
    const prev = before!.context;
    if (event.type === 'repair.batch' && !ctx.required) {
      assert.deepEqual(of('publishPass'), [{ run: 'batch', report: repairReport(NO_COUNTS, false, prev.state) }], 'an empty batch report, at once');
    }
    if (event.type === 'repair.cycle' && before!.value !== 'idle') assert.deepEqual([of('noteSkipped').length, after.value], [1, before!.value], 'a tick during a run is skipped');
    if (event.type.startsWith('xstate.done.actor.')) {
      const folded = foldBatch(prev.state, event.output);
      assert.deepEqual(of('publishPass'), [{ run: prev.run, report: folded.report }], 'the batch report is published');
      assert.equal(folded.report.cycleCompleted, event.output.fetched < REPAIR_BATCH_SIZE);
      const goesOn = prev.run === 'cycle' && !folded.report.cycleCompleted;
      // A cycle going on after a batch that asked no peer writes only every UNPACED_BATCHES_PER_WRITE batches.
      const persists = !(goesOn && event.output.counts.checked === 0) || prev.unpersistedBatches + 1 >= prev.unpacedBatchesPerWrite;
      assert.deepEqual(of('persistState'), persists ? [{ state: folded.state }] : [], persists ? 'the folded state is persisted' : 'an unpaced batch waits for the next write');
      assert.equal(ctx.unpersistedBatches, persists ? 0 : prev.unpersistedBatches + 1);
      assert.equal(after.value, !goesOn ? 'idle' : event.output.counts.checked === 0 ? 'passing' : 'waitingBetweenBatches', 'only an unfinished cycle goes on, paced when it asked peers');
    } else {
      assert.deepEqual(of('persistState'), [], 'nothing is persisted without a batch');
    }
    if (event.type.startsWith('xstate.error.actor.')) {
      assert.deepEqual(of('publishFailure'), [{ run: prev.run, error: event.error }], 'the failure is published');
      assert.deepEqual(ctx.state, prev.state, 'a failed batch moves nothing');
    }
    if (after.value === 'idle') assert.equal(ctx.run, null, 'idle runs nothing');
    if (event.type.startsWith('xstate.after.')) assert.deepEqual([after.value, invoked.length, elapsed], ['passing', 1, DELAY], 'the next batch of the cycle after batchDelayMs');
  },
});
