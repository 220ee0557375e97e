// One GC run as a machine (machines/files/gc-run.machine.ts), with scripted actors in place of the real I/O that
// actors/files/gc.actor.ts provides (docs/DESIGN.md testing levels: machines). Covers every final state and the order
// of the stages (notes A.4 rules 1, 4c, 5-8).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  gcRunMachine,
  gcRunResult,
  type GcRunContext,
  type DeleteUnpinnedInput,
  type DeleteUnpinnedOutput,
  type LoadRecordsInput,
  type ProbeHoldersInput,
  type ReleaseFilesInput,
  type ReleaseFilesOutput,
  type VerifyPinsOutput,
} from '../../../machines/files/gc-run.machine.js';
import { type GcMeasurement, type GcRecordSummary, type GcRunResult, type GcSettings } from '../../../src/files/gc.js';
import type { FileRecord } from '../../../src/files/types.js';
import { PackedStrings } from '../../../src/packed-strings.js';
import { summaryWithEveryHeldCandidate } from '../../support/gc-summary.js';

const NOW = 1_700_000_000_000;
const MB = 1_000_000;
const SETTINGS: GcSettings = { highWatermarkBytes: 100 * MB, lowWatermarkBytes: 80 * MB, diskReserveBytes: 0 };
const CID_TEXT = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

const RECORDS: FileRecord[] = [
  { cid: 'c1', state: 'confirmed', pinned: true, heldLocally: true, createdAt: NOW - 9_000, expiresAt: null, confirmedAt: NOW - 9_000, dagBytes: 10 * MB, origin: 'upload' },
  { cid: 't-expired', state: 'temporary', pinned: true, heldLocally: true, createdAt: NOW - 8_000, expiresAt: NOW - 1, confirmedAt: null, dagBytes: 5 * MB, origin: 'upload' },
  { cid: 't-live', state: 'temporary', pinned: true, heldLocally: true, createdAt: NOW - 7_000, expiresAt: NOW + 60_000, confirmedAt: null, dagBytes: 5 * MB, origin: 'upload' },
];

interface Script {
  records?: FileRecord[];
  /** The CIDs every designated holder confirmed (default: none). */
  probe?: (input: ProbeHoldersInput) => Promise<string[]>;
  measure?: () => Promise<GcMeasurement>;
  release?: (input: ReleaseFilesInput) => Promise<ReleaseFilesOutput>;
  verify?: () => Promise<VerifyPinsOutput>;
  remove?: (input: DeleteUnpinnedInput) => Promise<DeleteUnpinnedOutput>;
  lease?: () => Promise<void>;
}

interface Trace {
  calls: string[];
  loadInput?: LoadRecordsInput;
  probeInput?: ProbeHoldersInput;
  releaseInput?: ReleaseFilesInput;
  deleteInput?: DeleteUnpinnedInput;
  leaseReleased: number;
}

async function runOnce(input: { dryRun: boolean; force: boolean }, script: Script = {}): Promise<{ result: GcRunResult; trace: Trace }> {
  const trace: Trace = { calls: [], leaseReleased: 0 };
  const machine = gcRunMachine.provide({
    actors: {
      measure: fromPromise<GcMeasurement, void>(async () => {
        trace.calls.push('measure');
        return script.measure ? script.measure() : { now: NOW, blockstoreBytes: 30 * MB, freeBytes: 1_000 * MB };
      }),
      loadRecords: fromPromise<GcRecordSummary, LoadRecordsInput>(async ({ input }) => {
        trace.calls.push('loadRecords');
        trace.loadInput = input;
        return summaryWithEveryHeldCandidate(script.records ?? RECORDS);
      }),
      probeHolders: fromPromise<string[], ProbeHoldersInput>(async ({ input }) => {
        trace.calls.push('probeHolders');
        trace.probeInput = input;
        return script.probe ? script.probe(input) : [];
      }),
      acquireLease: fromPromise<void, void>(async () => {
        trace.calls.push('acquireLease');
        await script.lease?.();
      }),
      releaseFiles: fromPromise<ReleaseFilesOutput, ReleaseFilesInput>(async ({ input }) => {
        trace.calls.push('releaseFiles');
        trace.releaseInput = input;
        return script.release
          ? script.release(input)
          : { releasedCids: input.release.map((entry) => entry.cid), demotedCids: input.demote.map((entry) => entry.cid), keptCids: [], failures: [] };
      }),
      verifyPins: fromPromise<VerifyPinsOutput, void>(async () => {
        trace.calls.push('verifyPins');
        return script.verify ? script.verify() : { repairedPins: [], unprotected: [], failures: [] };
      }),
      deleteUnpinned: fromPromise<DeleteUnpinnedOutput, DeleteUnpinnedInput>(async ({ input }) => {
        trace.calls.push('deleteUnpinned');
        trace.deleteInput = input;
        return script.remove ? script.remove(input) : { removedCids: ['QmA', 'QmB'], freedBytes: 4 * MB, failures: [] };
      }),
    },
    actions: {
      releaseLease: () => {
        trace.calls.push('releaseLease');
        trace.leaseReleased++;
      },
    },
  });
  const actor = createActor(machine, { input: { ...input, settings: SETTINGS } });
  actor.start();
  const result = await toPromise(actor);
  return { result, trace };
}

describe('gc-run machine', () => {
  it('the registry is read knowing whether the measurement shows pressure (the high watermark or the disk reserve)', async () => {
    const cases = [
      { measurement: { now: NOW, blockstoreBytes: 30 * MB, freeBytes: 1_000 * MB }, pressure: false },
      { measurement: { now: NOW, blockstoreBytes: 100 * MB, freeBytes: 1_000 * MB }, pressure: false },
      { measurement: { now: NOW, blockstoreBytes: 100 * MB + 1, freeBytes: 1_000 * MB }, pressure: true },
    ];
    for (const { measurement, pressure } of cases) {
      const { trace } = await runOnce({ dryRun: true, force: true }, { measure: async () => measurement });
      assert.equal(trace.loadInput?.underPressure, pressure, `${measurement.blockstoreBytes} bytes stored`);
    }
    const reserve = await runOnce({ dryRun: true, force: false }, { measure: async () => ({ now: NOW, blockstoreBytes: 30 * MB, freeBytes: 0 }) });
    assert.equal(reserve.trace.loadInput?.underPressure, false, 'no disk reserve configured here');
  });

  it('a dry run measures and plans, then stops: no lease, no release, no verification, no deletion', async () => {
    const { result, trace } = await runOnce({ dryRun: true, force: true });
    assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders']);
    assert.equal(result.outcome, 'previewed');
    assert.equal(result.dryRun, true);
    assert.deepEqual(result.releasedCids, ['t-expired'], 'the exact CIDs a real run would release');
    assert.deepEqual([...result.retainedCids], ['c1', 't-live']);
    assert.equal(result.trigger, 'force');
    assert.equal(result.estimatedBytesAfter, 15 * MB, 'the plan’s estimate: what stays pinned');
    assert.equal(result.removedBlocks, 0);
  });

  it('without a trigger the run releases expired files under the lease, and neither verifies pins nor deletes (rule 6: before deleting)', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: false });
    assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders', 'acquireLease', 'releaseFiles', 'releaseLease']);
    assert.deepEqual(trace.releaseInput?.release.map((entry) => entry.cid), ['t-expired']);
    assert.equal(trace.releaseInput?.now, NOW, 'expiry is judged at the measured time');
    assert.equal(result.outcome, 'released');
    assert.equal(result.trigger, 'none');
    assert.deepEqual(result.releasedCids, ['t-expired']);
    assert.equal(result.estimatedBytesAfter, 30 * MB);
  });

  it('a forced run deletes every unpinned block after verifying pins, then gives the lease back once', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: true });
    assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders', 'acquireLease', 'releaseFiles', 'verifyPins', 'deleteUnpinned', 'releaseLease']);
    assert.deepEqual(trace.deleteInput, { bytesToFree: null });
    assert.equal(trace.leaseReleased, 1);
    assert.equal(result.outcome, 'collected');
    assert.equal(result.removedBlocks, 2);
    assert.deepEqual(result.removedCids, ['QmA', 'QmB']);
    assert.equal(result.estimatedBytesAfter, 26 * MB, 'the size before minus the bytes actually freed');
  });

  it('a watermark run asks the deletion pass for just the bytes the pressure needs', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: false }, { measure: async () => ({ now: NOW, blockstoreBytes: 120 * MB, freeBytes: 1_000 * MB }) });
    assert.equal(result.trigger, 'highWatermark');
    assert.deepEqual(trace.deleteInput, { bytesToFree: 40 * MB + 1 });
    // 100 MB of the 120 MB are unpinned already: no live temporary has to go.
    assert.deepEqual(trace.releaseInput?.release.map((entry) => [entry.cid, entry.reason]), [['t-expired', 'expired']]);
    assert.equal(result.outcome, 'collected');
  });

  it('the release stage waits for the exclusive lease', async () => {
    let grant!: () => void;
    const granted = new Promise<void>((resolve) => (grant = resolve));
    let leaseWaiting = false;
    const pending = runOnce({ dryRun: false, force: true }, { lease: () => ((leaseWaiting = true), granted) });
    for (let i = 0; i < 10 && !leaseWaiting; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(leaseWaiting, true);
    grant();
    const { trace } = await pending;
    assert.ok(trace.calls.indexOf('acquireLease') < trace.calls.indexOf('releaseFiles'));
  });

  it('rule 6: restored pins are reported and the run goes on to delete', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: true }, { verify: async () => ({ repairedPins: ['c1'], unprotected: [], failures: [] }) });
    assert.ok(trace.calls.includes('deleteUnpinned'));
    assert.deepEqual(result.repairedPins, ['c1']);
    assert.equal(result.outcome, 'collected');
  });

  it('rule 6: a pin that cannot be restored abandons the run before anything is deleted', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: true }, { verify: async () => ({ repairedPins: ['c2'], unprotected: ['c1'], failures: [] }) });
    assert.ok(!trace.calls.includes('deleteUnpinned'));
    assert.equal(trace.leaseReleased, 1);
    assert.equal(result.outcome, 'abandoned');
    assert.deepEqual(result.unprotected, ['c1']);
    assert.deepEqual(result.repairedPins, ['c2']);
    assert.equal(result.removedBlocks, 0);
    assert.deepEqual(result.releasedCids, ['t-expired'], 'releases already applied stay reported');
  });

  it('rule 7: planned releases the run did not apply are reported as retained, not released', async () => {
    const { result } = await runOnce({ dryRun: false, force: false }, { release: async () => ({ releasedCids: [], demotedCids: [], keptCids: ['t-expired'], failures: [] }) });
    assert.deepEqual(result.releasedCids, []);
    assert.deepEqual([...result.retainedCids], ['c1', 't-expired', 't-live']);
  });

  it('a release that failed keeps its record and stops the run before verification and deletion', async () => {
    const { result, trace } = await runOnce(
      { dryRun: false, force: true },
      { release: async () => ({ releasedCids: [], demotedCids: [], keptCids: ['t-expired'], failures: [new Error(`unpin of ${CID_TEXT} failed`)] }) },
    );
    assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders', 'acquireLease', 'releaseFiles', 'releaseLease']);
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(result.errors, ['release failed: unpin of <cid> failed']);
  });

  it('a helia failure while deleting: not collected, the error text without CID or stack, the lease given back', async () => {
    const failure = new Error(`could not delete block ${CID_TEXT}\n    at FsBlockstore.delete (file.js:1:1)`);
    const { result, trace } = await runOnce({ dryRun: false, force: true }, { remove: async () => Promise.reject(failure) });
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(result.errors, ['delete failed: could not delete block <cid>']);
    assert.equal(trace.leaseReleased, 1);
    assert.equal(result.removedBlocks, 0);
  });

  it('a deletion pass that stopped on an error keeps the blocks it removed in the report', async () => {
    const { result } = await runOnce(
      { dryRun: false, force: true },
      { remove: async () => ({ removedCids: ['QmA'], freedBytes: 1 * MB, failures: [new Error('EACCES: permission denied')] }) },
    );
    assert.equal(result.outcome, 'failed');
    assert.equal(result.removedBlocks, 1);
    assert.deepEqual(result.errors, ['delete failed: EACCES: permission denied']);
  });

  it('a failed measurement ends the run before the lease: trigger none, the error reported', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: true }, { measure: async () => Promise.reject(new Error('ENOENT: no such file')) });
    assert.deepEqual(trace.calls, ['measure']);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.trigger, 'none');
    assert.deepEqual(result.errors, ['measure failed: ENOENT: no such file']);
  });

  it('verification errors (not missing pins) fail the run without deleting', async () => {
    const { result, trace } = await runOnce({ dryRun: false, force: true }, { verify: async () => ({ repairedPins: [], unprotected: [], failures: [new Error('datastore closed')] }) });
    assert.ok(!trace.calls.includes('deleteUnpinned'));
    assert.equal(result.outcome, 'failed');
    assert.deepEqual(result.errors, ['verify failed: datastore closed']);
  });

  describe('handover (rule 4c)', () => {
    // c-away: a confirmed file held here whose designated holders (elsewhere) all confirmed it; c-home stays.
    const HANDOVER: FileRecord[] = [
      ...RECORDS,
      { cid: 'c-away', state: 'confirmed', pinned: true, heldLocally: true, createdAt: NOW - 6_000, expiresAt: null, confirmedAt: NOW - 6_000, dagBytes: 4 * MB, origin: 'upload' },
    ];
    // The probe answers with a temporary file too: only confirmed held files are ever demoted.
    const probe = async () => ['c-away', 't-live'];

    it('the registry is read with the run’s time (candidates are picked in that pass), the holders probed after it and before any lease', async () => {
      const { trace } = await runOnce({ dryRun: false, force: false }, { records: HANDOVER, probe });
      assert.ok(trace.calls.indexOf('loadRecords') < trace.calls.indexOf('probeHolders'));
      assert.ok(trace.calls.indexOf('probeHolders') < trace.calls.indexOf('acquireLease'));
      assert.equal(trace.loadInput?.now, NOW);
      assert.equal(trace.loadInput?.underPressure, false, '30 MB stored, the high watermark at 100 MB');
      // The candidates picked while reading are what the probe asks about.
      assert.deepEqual(trace.probeInput?.records.handover.candidates.map((candidate) => candidate.cid), ['c1', 'c-away']);
    });

    it('a dry run probes too and lists what it would demote, touching nothing (rule 1)', async () => {
      const { result, trace } = await runOnce({ dryRun: true, force: true }, { records: HANDOVER, probe });
      assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders']);
      assert.equal(result.outcome, 'previewed');
      assert.deepEqual(result.demoted, ['c-away']);
      assert.deepEqual([...result.retainedCids], ['c1', 't-live'], 'a demoted file is not retained');
      assert.deepEqual(result.releasedCids, ['t-expired']);
      // 24 MB pinned, minus 5 MB expired, minus 4 MB demoted: what a forced run would leave.
      assert.equal(result.estimatedBytesAfter, 15 * MB);
      const unconfirmed = await runOnce({ dryRun: true, force: true }, { records: HANDOVER });
      assert.deepEqual(unconfirmed.result.demoted, []);
      assert.equal(unconfirmed.result.estimatedBytesAfter, 19 * MB, 'without the holders’ confirmation the 4 MB stay pinned');
    });

    it('a real run without a trigger demotes under the lease with the releases, and reports what it demoted', async () => {
      const { result, trace } = await runOnce({ dryRun: false, force: false }, { records: HANDOVER, probe });
      assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders', 'acquireLease', 'releaseFiles', 'releaseLease']);
      assert.deepEqual(trace.releaseInput?.demote, [{ cid: 'c-away', createdAt: NOW - 6_000, dagBytes: 4 * MB }]);
      assert.equal(result.outcome, 'released');
      assert.equal(result.trigger, 'none');
      assert.deepEqual(result.demoted, ['c-away']);
      assert.deepEqual([...result.retainedCids], ['c1', 't-live']);
    });

    it('rule 7: a planned demotion the run did not apply is not reported as demoted; still pinned, it is retained', async () => {
      const { result } = await runOnce(
        { dryRun: false, force: false },
        { records: HANDOVER, probe, release: async (input) => ({ releasedCids: input.release.map((entry) => entry.cid), demotedCids: [], keptCids: ['c-away'], failures: [] }) },
      );
      assert.deepEqual(result.demoted, []);
      assert.deepEqual([...result.retainedCids], ['c-away', 'c1', 't-live']);
    });

    it('nobody confirmed: nothing demoted, the file retained', async () => {
      const { result, trace } = await runOnce({ dryRun: false, force: false }, { records: HANDOVER });
      assert.deepEqual(trace.releaseInput?.demote, []);
      assert.deepEqual(result.demoted, []);
      assert.deepEqual([...result.retainedCids], ['c-away', 'c1', 't-live']);
    });

    it('a probe stage that fails ends the run before the lease, its error reported', async () => {
      const { result, trace } = await runOnce({ dryRun: false, force: true }, { records: HANDOVER, probe: async () => Promise.reject(new Error('node stopped')) });
      assert.deepEqual(trace.calls, ['measure', 'loadRecords', 'probeHolders']);
      assert.equal(result.outcome, 'failed');
      assert.deepEqual(result.errors, ['probe failed: node stopped']);
      assert.deepEqual(result.demoted, []);
    });
  });

  it('the retained list is the plan\'s sorted list merged with the kept CIDs: sorted, each once', () => {
    const context = (retainedCids: string[], keptCids: string[]): GcRunContext => ({
      dryRun: false,
      force: false,
      settings: SETTINGS,
      measurement: null,
      records: null,
      plan: { trigger: 'none', release: [], demote: [], retainedCids: PackedStrings.from(retainedCids), bytesToFree: 0, estimatedBytesAfter: 0 },
      releasedCids: [],
      demotedCids: [],
      keptCids,
      repairedPins: [],
      unprotected: [],
      removedCids: [],
      freedBytes: 0,
      errors: [],
      outcome: 'released',
    });
    assert.deepEqual([...gcRunResult(context(['b', 'd', 'f'], [])).retainedCids], ['b', 'd', 'f']);
    assert.deepEqual([...gcRunResult(context(['b', 'd', 'f'], ['g', 'a', 'd', 'c'])).retainedCids], ['a', 'b', 'c', 'd', 'f', 'g']);
    assert.deepEqual([...gcRunResult(context([], ['b', 'a', 'b'])).retainedCids], ['a', 'b']);
    // The same order as a plain sort of the union (UTF-16 code units), with CIDv0 (upper case) and CIDv1 texts.
    const plan = ['Qm1', 'QmZ', 'bafk1', 'bafkz'];
    const kept = ['bafk5', 'QmA', 'zz', 'Qm1'];
    assert.deepEqual([...gcRunResult(context(plan, kept)).retainedCids], [...new Set([...plan, ...kept])].sort());
  });
});

