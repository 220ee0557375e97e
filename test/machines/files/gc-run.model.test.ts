// Model-based test of one GC run (machines/files/gc-run.machine.ts): every path of its graph replayed on a real actor
// (test/support/model.ts), for a dry run, a run and a forced run. The stage outputs are sampled so that every guard
// goes both ways: a calm and a pressured measurement, a release with a failure, a verification that lost a pin or
// could not check, a deletion with a failure, and every stage failing as a whole. Effects checked per step (notes A.4
// rules 1, 4c, 5-8; spec §4.3): a dry run touches nothing; the lease is given back exactly once, on every way out of
// `exclusive`; the deletion pass gets the plan's byte budget; a stage failure is reported by its stage; the outcome
// names the final state.

import assert from 'node:assert/strict';
import type { AnyMachineSnapshot } from 'xstate';
import { gcRunMachine, type DeleteUnpinnedOutput, type ReleaseFilesOutput, type VerifyPinsOutput } from '../../../machines/files/gc-run.machine.js';
import { gcErrorText, type GcMeasurement, type GcSettings, type GcStage } from '../../../src/files/gc.js';
import type { FileRecord } from '../../../src/files/types.js';
import { modelTest } from '../../support/model.js';
import { summaryWithEveryHeldCandidate } from '../../support/gc-summary.js';

const NOW = 1_700_000_000_000;
const MB = 1_000_000;
const SETTINGS: GcSettings = { highWatermarkBytes: 100 * MB, lowWatermarkBytes: 80 * MB, diskReserveBytes: 0 };
const RECORDS: FileRecord[] = [
  { cid: 'c1', state: 'confirmed', pinned: true, heldLocally: true, createdAt: NOW - 9_000, expiresAt: null, confirmedAt: NOW - 9_000, dagBytes: 10 * MB, origin: 'upload' },
  { cid: 't-expired', state: 'temporary', pinned: true, heldLocally: true, createdAt: NOW - 8_000, expiresAt: NOW - 1, confirmedAt: null, dagBytes: 5 * MB, origin: 'upload' },
  { cid: 't-live', state: 'temporary', pinned: true, heldLocally: true, createdAt: NOW - 7_000, expiresAt: NOW + 60_000, confirmedAt: null, dagBytes: 5 * MB, origin: 'upload' },
];
const SUMMARY = summaryWithEveryHeldCandidate(RECORDS);
const CALM: GcMeasurement = { now: NOW, blockstoreBytes: 30 * MB, freeBytes: 1_000 * MB };
const PRESSURE: GcMeasurement = { now: NOW, blockstoreBytes: 120 * MB, freeBytes: 1_000 * MB };

const released: ReleaseFilesOutput = { releasedCids: ['t-expired'], demotedCids: ['c1'], keptCids: [], failures: [] };
const releaseFailed: ReleaseFilesOutput = { releasedCids: [], demotedCids: ['c1'], keptCids: ['t-expired'], failures: [new Error('unpin failed')] };
const verified: VerifyPinsOutput = { repairedPins: ['t-live'], unprotected: [], failures: [] };
const pinLost: VerifyPinsOutput = { repairedPins: [], unprotected: ['t-live'], failures: [] };
const verifyFailed: VerifyPinsOutput = { repairedPins: [], unprotected: [], failures: [new Error('pin check failed')] };
const deleted: DeleteUnpinnedOutput = { removedCids: ['QmA', 'QmB'], freedBytes: 4 * MB, failures: [] };
const deleteFailed: DeleteUnpinnedOutput = { removedCids: ['QmA'], freedBytes: 2 * MB, failures: [new Error('delete failed')] };

/** Alternative outcomes only on the unforced calm run (the other runs take the main line: the graph stays small). */
const varied = (s: AnyMachineSnapshot) => !s.context.force && s.context.measurement?.blockstoreBytes !== PRESSURE.blockstoreBytes;
const STAGE_OF_STATE: Record<string, GcStage> = { measuring: 'measure', planning: 'plan', probingHolders: 'probe', locking: 'lease', releasing: 'release', verifyingPins: 'verify', deleting: 'delete' };
const OUTCOME_OF_STATE: Record<string, string> = { previewed: 'previewed', releasedOnly: 'released', collected: 'collected', abandoned: 'abandoned', failed: 'failed' };
const SAMPLE_NAMES = new Map<unknown, string>([
  [CALM, 'calm'],
  [PRESSURE, 'pressure'],
  [released, 'ok'],
  [releaseFailed, 'a release failed'],
  [verified, 'ok'],
  [pinLost, 'pin lost'],
  [verifyFailed, 'a check failed'],
  [deleted, 'ok'],
  [deleteFailed, 'a deletion failed'],
]);
const leaf = (value: unknown): string => (typeof value === 'string' ? value : leaf(Object.values(value as object)[0]));

modelTest({
  machine: gcRunMachine,
  scenarios: [
    { name: 'dry run', input: { dryRun: true, force: false, settings: SETTINGS } },
    { name: 'run', input: { dryRun: false, force: false, settings: SETTINGS } },
    { name: 'forced run', input: { dryRun: false, force: true, settings: SETTINGS } },
  ],
  outputs: {
    measure: (s) => (s.context.dryRun || s.context.force ? [CALM] : [CALM, PRESSURE]),
    loadRecords: [SUMMARY],
    probeHolders: [['c1']],
    acquireLease: [undefined],
    releaseFiles: (s) => (varied(s) ? [released, releaseFailed] : [released]),
    // Pins are verified only by a run that will delete: under pressure here (a calm run ends after releasing).
    verifyPins: (s) => (s.context.force ? [verified] : [verified, pinLost, verifyFailed]),
    deleteUnpinned: (s) => (s.context.force ? [deleted] : [deleted, deleteFailed]),
  },
  errors: Object.fromEntries(['measure', 'loadRecords', 'probeHolders', 'acquireLease', 'releaseFiles', 'verifyPins', 'deleteUnpinned'].map((src) => [src, (s: AnyMachineSnapshot) => (varied(s) || src === 'deleteUnpinned' || (src === 'verifyPins' && !s.context.force) ? [new Error(`${src} broke`)] : [])])),
  describe: (event) => SAMPLE_NAMES.get(event.output),
  effect: ({ event, before, after, actions, invoked }) => {
    const ctx = after.context;
    const lease = actions.filter((a) => a.type === 'releaseLease').length;
    // Rule 8: leaving `exclusive` by any path gives the lease back, once; nothing else does.
    assert.equal(lease, before?.matches('exclusive') && !after.matches('exclusive') ? 1 : 0, 'releaseLease exactly on leaving exclusive');
    // Rule 1: a dry run measures, plans and probes, and touches nothing.
    if (ctx.dryRun) assert.deepEqual(invoked.filter((f) => !['measure', 'loadRecords', 'probeHolders'].includes(f.src)), [], 'a dry run takes no lease and changes nothing');
    for (const fake of invoked) {
      if (fake.src === 'loadRecords') {
        // At the run's time (handover candidates are picked in that pass), knowing whether all temporaries are needed.
        const pressure = ctx.measurement.blockstoreBytes === PRESSURE.blockstoreBytes;
        assert.deepEqual(fake.input, { now: ctx.measurement.now, underPressure: pressure }, 'the registry is read at the run’s time, with its pressure');
      }
      if (fake.src === 'probeHolders') assert.deepEqual(fake.input, { records: SUMMARY }, 'holders are probed over the loaded records');
      if (fake.src === 'releaseFiles') assert.equal(fake.input.now, ctx.measurement.now, 'expiry is judged at the measured time');
      if (fake.src === 'verifyPins') assert.notEqual(ctx.plan.trigger, 'none', 'rule 6: pins are verified before deleting, by a run that deletes');
      if (fake.src === 'deleteUnpinned') assert.deepEqual(fake.input, { bytesToFree: ctx.force ? null : ctx.plan.bytesToFree }, 'a forced pass deletes all, a pressured one what the pressure needs');
      if (fake.src === 'deleteUnpinned' && !ctx.force) assert.ok(ctx.plan.bytesToFree > 0);
    }
    if (ctx.plan) assert.equal(ctx.records, null, 'the registry read is dropped once the plan is made');
    if (event.type.startsWith('xstate.error.actor.')) {
      const stage = STAGE_OF_STATE[leaf(before!.value)]!;
      assert.equal(ctx.errors.at(-1), gcErrorText(stage, event.error), 'a failed stage is reported by name');
    }
    if (after.status === 'done') {
      const state = leaf(after.value);
      assert.equal(after.output.outcome, OUTCOME_OF_STATE[state], 'the outcome names the final state');
      if (state === 'collected') assert.deepEqual(after.output.removedCids, deleted.removedCids);
      if (state === 'abandoned') assert.deepEqual([after.output.unprotected, after.output.removedBlocks], [pinLost.unprotected, 0], 'nothing deleted after a pin was lost');
      if (state === 'failed') assert.ok(after.output.errors.length > 0, 'a failed run says why');
      if (state === 'previewed') assert.deepEqual(after.output.releasedCids, ['t-expired'], 'a dry run lists what a run would release');
    }
  },
});
