// The repair job as a machine (machines/files/repair-run.machine.ts), with scripted batches in place of the real I/O
// that actors/files/repair.actor.ts provides, on a SimulatedClock (docs/DESIGN.md testing levels: machines). Covers one
// manual batch, a whole cycle with its pauses, the refusal of a second run, a disabled repair and a failed batch
// (docs/specs/files-node.md §4.3; docs/notes/files-node.md A.4, C21).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { repairRunMachine, UNPACED_BATCHES_PER_WRITE, type RepairRunKind, type RunBatchInput } from '../../../machines/files/repair-run.machine.js';
import { freshRepairState, NO_COUNTS, type BatchOutcome, type RepairReport, type RepairState } from '../../../src/files/repair.js';
import { waitFor } from '../../support/wait.js';

const POLICY = 'a'.repeat(64);
const DELAY = 5_000;
const T0 = 1_700_000_000_000;

interface Trace {
  inputs: Array<string | null>;
  persisted: RepairState[];
  passes: Array<{ run: RepairRunKind; report: RepairReport }>;
  failures: Array<{ run: RepairRunKind; error: unknown }>;
  skipped: number;
}

/** Batches answer from `sizes` in turn (records fetched), each CID `cid-<running total>`; `fail` rejects instead. */
function start(options: { sizes: number[]; required?: boolean; restored?: RepairState; fail?: Error; hold?: Promise<void>; probed?: boolean }) {
  const clock = new SimulatedClock();
  clock.set(T0);
  const trace: Trace = { inputs: [], persisted: [], passes: [], failures: [], skipped: 0 };
  let total = 0;
  const machine = repairRunMachine.provide({
    actors: {
      runBatch: fromPromise<BatchOutcome, RunBatchInput>(async ({ input }) => {
        trace.inputs.push(input.cursor);
        await options.hold;
        if (options.fail) throw options.fail;
        const fetched = options.sizes.shift() ?? 0;
        total += fetched;
        const now = clock.now();
        return { counts: { ...NO_COUNTS, examined: fetched, checked: options.probed === false ? 0 : fetched }, fetched, lastCid: fetched > 0 ? `cid-${total}` : null, startedAt: now, finishedAt: now + 10 };
      }),
    },
    actions: {
      persistState: (_, params: { state: RepairState }) => void trace.persisted.push(params.state),
      publishPass: (_, params: { run: RepairRunKind; report: RepairReport }) => void trace.passes.push(params),
      publishFailure: (_, params: { run: RepairRunKind; error: unknown }) => void trace.failures.push(params),
      noteSkipped: () => void trace.skipped++,
    },
  });
  const actor = createActor(machine, {
    clock,
    input: { required: options.required ?? true, batchDelayMs: DELAY, unpacedBatchesPerWrite: UNPACED_BATCHES_PER_WRITE, restored: options.restored ?? freshRepairState(POLICY) },
  });
  actor.start();
  return { actor, clock, trace, value: () => actor.getSnapshot().value };
}

describe('repair-run machine', () => {
  it('a manual batch: idle → passing → idle, folds, persists and publishes; no second run while passing', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const m = start({ sizes: [100], hold });
    assert.equal(m.value(), 'idle');
    assert.equal(m.actor.getSnapshot().can({ type: 'repair.batch' }), true);
    m.actor.send({ type: 'repair.batch' });
    assert.equal(m.value(), 'passing');
    assert.equal(m.actor.getSnapshot().can({ type: 'repair.batch' }), false, 'the actor answers 409');
    m.actor.send({ type: 'repair.cycle' });
    assert.equal(m.trace.skipped, 1, 'a scheduled cycle while a batch runs is skipped');
    release();
    await waitFor(() => m.value() === 'idle', { what: 'the batch to end' });
    assert.deepEqual(m.trace.inputs, [null]);
    assert.equal(m.trace.persisted.length, 1);
    assert.equal(m.trace.persisted[0]!.cursor, 'cid-100');
    assert.equal(m.trace.passes.length, 1);
    assert.equal(m.trace.passes[0]!.run, 'batch');
    assert.equal(m.trace.passes[0]!.report.examined, 100);
    assert.equal(m.trace.passes[0]!.report.cycleCompleted, false);
    assert.equal(m.actor.getSnapshot().context.run, null);
    // A manual batch is exactly one batch: the delay passing changes nothing.
    m.clock.increment(DELAY * 3);
    assert.equal(m.value(), 'idle');
    assert.equal(m.trace.inputs.length, 1);
    m.actor.stop();
  });

  it('a cycle: batches separated by the delay until one comes back short, then idle; no manual batch meanwhile', async () => {
    const m = start({ sizes: [100, 100, 37] });
    m.actor.send({ type: 'repair.cycle' });
    await waitFor(() => m.value() === 'waitingBetweenBatches', { what: 'the first pause' });
    assert.equal(m.actor.getSnapshot().can({ type: 'repair.batch' }), false);
    m.actor.send({ type: 'repair.cycle' });
    assert.equal(m.trace.skipped, 1);
    m.clock.increment(DELAY - 1);
    assert.equal(m.value(), 'waitingBetweenBatches', 'not before the delay');
    m.clock.increment(1);
    await waitFor(() => m.trace.inputs.length === 2 && m.value() === 'waitingBetweenBatches', { what: 'the second pause' });
    m.clock.increment(DELAY);
    await waitFor(() => m.value() === 'idle', { what: 'the cycle to complete' });
    assert.deepEqual(m.trace.inputs, [null, 'cid-100', 'cid-200'], 'each batch starts after the previous one');
    assert.deepEqual(
      m.trace.passes.map((pass) => [pass.run, pass.report.examined, pass.report.cycleCompleted]),
      [
        ['cycle', 100, false],
        ['cycle', 100, false],
        ['cycle', 37, true],
      ],
    );
    const state = m.actor.getSnapshot().context.state;
    assert.equal(state.cursor, null);
    assert.equal(state.active, null);
    assert.equal(state.last!.counts.examined, 237);
    assert.equal(state.last!.startedAt, T0);
    assert.equal(state.last!.successful, true);
    assert.deepEqual(m.trace.persisted.at(-1), state, 'every batch is persisted, the last one too');
    m.clock.increment(DELAY * 3);
    assert.equal(m.trace.inputs.length, 3, 'nothing after the cycle');
    m.actor.stop();
  });

  it('a cycle whose batches asked no peer runs them back to back (nothing to pace), still one at a time', async () => {
    const m = start({ sizes: [100, 100, 100, 5], probed: false });
    m.actor.send({ type: 'repair.cycle' });
    await waitFor(() => m.value() === 'idle' && m.trace.passes.length === 4, { what: 'the cycle to complete without the clock moving' });
    assert.deepEqual(m.trace.inputs, [null, 'cid-100', 'cid-200', 'cid-300'], 'each batch starts after the previous one');
    assert.equal(m.actor.getSnapshot().context.state.last!.counts.examined, 305);
    assert.equal(m.trace.skipped, 0);
    m.actor.stop();
  });

  it('unpaced batches are persisted once per UNPACED_BATCHES_PER_WRITE, and the cycle\'s end always; paced ones every time', async () => {
    // 120 batches that asked no peer, then the end of the walk: writes after the 50th, the 100th and the last.
    const m = start({ sizes: [...Array.from({ length: 120 }, () => 100), 7], probed: false });
    m.actor.send({ type: 'repair.cycle' });
    await waitFor(() => m.value() === 'idle' && m.trace.passes.length === 121, { what: 'the cycle to complete' });
    assert.equal(UNPACED_BATCHES_PER_WRITE, 50);
    assert.deepEqual(
      m.trace.persisted.map((state) => state.cursor),
      ['cid-5000', 'cid-10000', null],
      'the cursor after batch 50 and 100, then the completed cycle',
    );
    assert.equal(m.trace.persisted.at(-1)!.last!.counts.examined, 12_007);
    assert.deepEqual(m.trace.persisted.at(-1), m.actor.getSnapshot().context.state, 'the last write is the state in memory');
    m.actor.stop();
    // Batches that asked peers: every one is written (the test above: 'a whole cycle').
    const paced = start({ sizes: [100, 100, 3] });
    paced.actor.send({ type: 'repair.cycle' });
    for (let pause = 0; pause < 2; pause++) {
      await waitFor(() => paced.value() === 'waitingBetweenBatches', { what: 'a pause' });
      paced.clock.increment(DELAY);
    }
    await waitFor(() => paced.value() === 'idle' && paced.trace.passes.length === 3, { what: 'the paced cycle' });
    assert.deepEqual(paced.trace.persisted.map((state) => state.cursor), ['cid-100', 'cid-200', null]);
    paced.actor.stop();
  });

  it('a cycle continues from a restored cursor instead of starting over', async () => {
    const restored: RepairState = { ...freshRepairState(POLICY), cursor: 'cid-100', active: { startedAt: T0 - 60_000, ...NO_COUNTS, examined: 100 } };
    const m = start({ sizes: [12], restored });
    m.actor.send({ type: 'repair.cycle' });
    await waitFor(() => m.trace.passes.length === 1 && m.value() === 'idle', { what: 'the cycle to complete' });
    assert.deepEqual(m.trace.inputs, ['cid-100']);
    const last = m.actor.getSnapshot().context.state.last!;
    assert.equal(last.counts.examined, 112);
    assert.equal(last.startedAt, T0 - 60_000, 'the cycle keeps its start');
    m.actor.stop();
  });

  it('not required: a manual batch is answered at once with an empty report, a cycle does nothing', () => {
    const m = start({ sizes: [100], required: false });
    assert.equal(m.actor.getSnapshot().can({ type: 'repair.cycle' }), false);
    m.actor.send({ type: 'repair.cycle' });
    assert.equal(m.value(), 'idle');
    assert.equal(m.actor.getSnapshot().can({ type: 'repair.batch' }), true, 'answered (200), not refused');
    m.actor.send({ type: 'repair.batch' });
    assert.equal(m.value(), 'idle');
    assert.deepEqual(m.trace.inputs, [], 'no batch ran');
    assert.deepEqual(m.trace.passes, [{ run: 'batch', report: { ...NO_COUNTS, cycleCompleted: false, cycle: null } }]);
    assert.equal(m.trace.persisted.length, 0);
    m.actor.stop();
  });

  it('a failed batch: back to idle, the failure published, the state untouched', async () => {
    const restored: RepairState = { ...freshRepairState(POLICY), cursor: 'cid-100', active: { startedAt: T0, ...NO_COUNTS, examined: 100 } };
    const m = start({ sizes: [], restored, fail: new Error('registry unreadable') });
    m.actor.send({ type: 'repair.cycle' });
    await waitFor(() => m.trace.failures.length === 1, { what: 'the failure' });
    assert.equal(m.value(), 'idle');
    assert.equal(m.trace.failures[0]!.run, 'cycle');
    assert.equal((m.trace.failures[0]!.error as Error).message, 'registry unreadable');
    assert.equal(m.trace.persisted.length, 0);
    assert.deepEqual(m.actor.getSnapshot().context.state, restored);
    assert.equal(m.actor.getSnapshot().can({ type: 'repair.batch' }), true, 'the next request runs');
    m.actor.stop();
  });
});
