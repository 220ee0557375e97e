// Model-based test of the health checkpoint schedule (machines/files/health-checkpoint.machine.ts): every path of its
// graph replayed on a real actor with a SimulatedClock (test/support/model.ts). Gathering is sampled as an attempt that
// earns a checkpoint, one that does not, and one that outlives its interval; both actors also fail. The graph ignores
// the attempt counter (every loop adds one), so it is finite; the replay checks the counter against the model.
// Effects checked per step (spec §2.3; notes A.6, C5): never two attempts at once; the record earned is the one
// written; failures are reported by stage; the height never goes down; a restored checkpoint of another membership
// is discarded; shutdown stops the attempt in flight.

import assert from 'node:assert/strict';
import { healthCheckpointMachine, type GatherOutput } from '../../../machines/files/health-checkpoint.machine.js';
import { membershipVersion, roundStart, type HealthInputs, type HealthSettings, type PersistedCheckpoint } from '../../../src/files/health.js';
import { modelTest } from '../../support/model.js';

const INTERVAL = 60_000;
const START = 1_700_000_010_000;
const SETTINGS: HealthSettings = { intervalMs: INTERVAL, maxCheckpointAgeMs: 3 * INTERVAL, storageMaxAgeMs: 2 * INTERVAL, repairMaxAgeMs: 3_600_000, requiredPeerCount: 0, diskReserveBytes: 0 };
const MV = membershipVersion(['self']);
const OTHER_MV = membershipVersion(['self', 'gone']);

const evidence = (healthy: boolean): HealthInputs => ({
  startup: { complete: true, healthy: true },
  runtimeStarted: healthy,
  storage: { measuredAt: START, availableBytes: 1_000 },
  repair: { required: false, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false },
  attestedPeers: 0,
});
const passed: GatherOutput = { now: START, finishedAt: START + 100, inputs: evidence(true) };
const failedCheck: GatherOutput = { now: START, finishedAt: START + 100, inputs: evidence(false) };
const overran: GatherOutput = { now: START, finishedAt: START + INTERVAL + 1, inputs: evidence(false) };
const NAMES = new Map<unknown, string>([[passed, 'passed'], [failedCheck, 'failed checks'], [overran, 'overran its interval']]);
const restoredElsewhere: PersistedCheckpoint = { version: 1, membershipVersion: OTHER_MV, height: START - INTERVAL, completedAt: START - INTERVAL, attestedPeers: 0 };

modelTest({
  machine: healthCheckpointMachine,
  scenarios: [
    { name: 'fresh', input: { settings: SETTINGS, membershipVersion: MV, restored: null, startedAt: START } },
    { name: 'restored under another membership', input: { settings: SETTINGS, membershipVersion: MV, restored: restoredElsewhere, startedAt: START } },
  ],
  startAt: START,
  outputs: { gatherInputs: [passed, failedCheck, overran], persistCheckpoint: [{ finishedAt: START + 200 }] },
  errors: { gatherInputs: [new Error('evidence unavailable')], persistCheckpoint: [new Error('disk full')] },
  abstract: (s) => ({ ...s.context, attempts: undefined }),
  describe: (event) => NAMES.get(event.output),
  effect: ({ index, event, before, after, actions, invoked, elapsed }) => {
    const ctx = after.context;
    assert.ok(Object.keys(after.children).length <= 1, 'two attempts never overlap');
    if (index === 0) {
      assert.equal(ctx.previous, null, 'no checkpoint of another membership is adopted');
      assert.deepEqual(invoked.map((f) => [f.src, f.input]), [['gatherInputs', { settings: SETTINGS, membershipVersion: MV }]], 'one attempt at start');
      return;
    }
    assert.ok(ctx.snapshot.height >= before!.context.snapshot.height, 'the height never goes down');
    if (event.type.startsWith('xstate.done.actor.') && before!.value === 'checking') {
      assert.equal(ctx.attempts, before!.context.attempts + 1);
      assert.equal(ctx.nextAttemptAt, START + INTERVAL, 'the next attempt is due one interval after this one');
      const persist = invoked.find((f) => f.src === 'persistCheckpoint');
      if (event.output === passed) {
        assert.deepEqual(persist?.input, { checkpoint: { version: 1, membershipVersion: MV, height: roundStart(START, INTERVAL), completedAt: START, attestedPeers: 0 } }, 'the earned record is written');
        assert.equal(ctx.snapshot.state, 'ready');
      } else {
        assert.equal(persist, undefined, 'nothing is written for an attempt that did not pass');
      }
    }
    const reported = actions.filter((a) => a.type === 'reportFailure').map((a) => a.params);
    const failing = event.type.startsWith('xstate.error.actor.') ? [{ stage: before!.value === 'checking' ? 'gather' : 'persist', error: event.error }] : [];
    assert.deepEqual(reported, failing, 'a failed gather or write is reported, with its stage');
    if (event.type === 'system.shutdown') assert.deepEqual([after.value, Object.keys(after.children)], ['stopped', []], 'shutdown stops everything');
    if (event.type.startsWith('xstate.after.')) {
      assert.deepEqual(invoked.map((f) => f.src), ['gatherInputs'], 'the timer starts the next attempt');
      assert.equal(elapsed, before!.context.nextAttemptAt - before!.context.idleSince, 'the next attempt when due (fixed cadence)');
    }
  },
});
