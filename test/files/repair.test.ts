// Replication repair, pure (src/files/repair.ts; docs/specs/files-node.md §1.4, §2.3 rule 2, §4.3; docs/notes/files-node.md
// A.4 "Repair rules", A.6 `repairFresh`, C21, C-shapes "Repair report"): what one record counts, how batches fold
// into cycles, the persisted state and its reset on a policy change, and what health and metrics read.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { membershipVersion } from '../../src/files/health.js';
import { placementOf } from '../../src/files/placement.js';
import {
  backlogOf,
  copyDue,
  cycleView,
  foldBatch,
  freshRepairState,
  inRepairScope,
  NO_COUNTS,
  NOT_PROBED,
  recheckShare,
  recordCounts,
  REPAIR_BATCH_SIZE,
  repairBacklog,
  repairHealthInputs,
  repairPolicyVersion,
  repairReport,
  repairRequired,
  repairTargets,
  restoreRepairState,
  type RepairCounts,
  type RepairState,
} from '../../src/files/repair.js';
import type { FileRecord } from '../../src/files/types.js';

const TIERS = [
  { minAgeMs: 0, copies: 3 },
  { minAgeMs: 10_000, copies: 2 },
];
const MEMBERS = ['peer-a', 'peer-b', 'peer-c', 'peer-d'];
const POLICY = repairPolicyVersion(membershipVersion(MEMBERS), TIERS);
const T0 = 1_700_000_000_000;

const counts = (partial: Partial<RepairCounts>): RepairCounts => ({ ...NO_COUNTS, ...partial });

function record(cid: string, partial: Partial<FileRecord> = {}): FileRecord {
  return { cid, state: 'confirmed', pinned: true, heldLocally: true, createdAt: T0, expiresAt: null, confirmedAt: T0, dagBytes: 10, origin: 'upload', ...partial };
}

describe('one record', () => {
  it('scope: confirmed files this node holds', () => {
    assert.equal(inRepairScope(record('a')), true);
    assert.equal(inRepairScope(record('a', { state: 'expired', pinned: false, heldLocally: false })), false);
    assert.equal(inRepairScope(record('a', { state: 'temporary', expiresAt: T0 + 1 })), false);
    assert.equal(inRepairScope(record('a', { heldLocally: false, pinned: false })), false, 'handed over');
    assert.equal(inRepairScope(record('a', { pinned: false })), false);
  });

  it('targets: the designated set for the file age, without this node', () => {
    for (const cid of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6']) {
      const young = repairTargets(record(cid), MEMBERS, 'peer-a', TIERS, T0 + 1);
      const old = repairTargets(record(cid), MEMBERS, 'peer-a', TIERS, T0 + 10_000);
      assert.ok(!young.includes('peer-a') && !old.includes('peer-a'));
      const designated = placementOf(cid, MEMBERS, 'peer-a', TIERS, 1).designated;
      assert.deepEqual(young, designated.filter((peer) => peer !== 'peer-a'));
      assert.equal(young.length, designated.includes('peer-a') ? 2 : 3, 'three copies for a fresh file');
      assert.ok(old.length <= 2, 'two copies from the second tier on');
    }
    // A clock behind the record's creation is age 0, not a negative age.
    assert.deepEqual(repairTargets(record('c1'), MEMBERS, 'peer-a', TIERS, T0 - 5_000), repairTargets(record('c1'), MEMBERS, 'peer-a', TIERS, T0));
    assert.deepEqual(repairTargets(record('c1'), [], 'self', TIERS, T0), [], 'a node alone has no one to ask');
  });

  it('recheck: a copy is asked about again after its share of the window, spread over half a window', () => {
    const DAY = 86_400_000;
    const shares: number[] = [];
    for (let i = 0; i < 2_000; i++) shares.push(recheckShare(`cid-${i}`, 'peer-b'));
    assert.ok(shares.every((share) => share >= 0.5 && share < 1), 'between half and the whole window');
    const quarters = [0, 0, 0, 0];
    for (const share of shares) quarters[Math.floor((share - 0.5) * 8)]!++;
    assert.ok(quarters.every((count) => count > 400), `spread over the half window, not bunched: ${quarters.join(' / ')}`);
    assert.equal(recheckShare('cid-1', 'peer-b'), recheckShare('cid-1', 'peer-b'), 'fixed per copy');
    assert.notEqual(recheckShare('cid-1', 'peer-b'), recheckShare('cid-1', 'peer-c'), 'per peer too');

    const share = recheckShare('cid-1', 'peer-b');
    const due = (acknowledgedAt: number | undefined, now: number, window = DAY) => copyDue(acknowledgedAt, 'cid-1', 'peer-b', now, window);
    assert.equal(due(undefined, T0), true, 'never acknowledged');
    assert.equal(due(T0, T0 + 60_000), false, 'confirmed a minute ago');
    assert.equal(due(T0, T0 + Math.ceil(DAY * share) - 1), false, 'just inside its share');
    assert.equal(due(T0, T0 + Math.ceil(DAY * share)), true, 'at its share');
    assert.equal(due(T0, T0 + DAY), true, 'a whole window is past every share');
    assert.equal(due(T0 + 60_000, T0), true, 'dated after now (a clock set back): asked');
    assert.equal(due(T0, T0, 0), true, 'a window of 0 asks every cycle');
  });

  it('counts: examined always, checked when probed, repaired only when every missing copy was stored', () => {
    assert.deepEqual(recordCounts(NOT_PROBED), counts({ examined: 1 }));
    assert.deepEqual(recordCounts({ probed: true, missing: 0, stored: 0, unrecoverable: false }), counts({ examined: 1, checked: 1 }));
    assert.deepEqual(recordCounts({ probed: true, missing: 2, stored: 2, unrecoverable: false }), counts({ examined: 1, checked: 1, underReplicated: 1, repaired: 1 }));
    assert.deepEqual(recordCounts({ probed: true, missing: 3, stored: 1, unrecoverable: false }), counts({ examined: 1, checked: 1, underReplicated: 1, stillMissing: 2 }));
    assert.deepEqual(
      recordCounts({ probed: true, missing: 2, stored: 0, unrecoverable: true }),
      counts({ examined: 1, checked: 1, underReplicated: 1, unrecoverable: 1 }),
      'an unrecoverable record counts once, not also as missing copies',
    );
  });
});

describe('batches and cycles', () => {
  const batch = (partial: Partial<RepairCounts>, fetched: number, lastCid: string | null, startedAt: number) => ({
    counts: counts(partial),
    fetched,
    lastCid,
    startedAt,
    finishedAt: startedAt + 500,
  });

  it(`a full batch (${REPAIR_BATCH_SIZE} records) advances the cursor; a short one completes the cycle and resets it`, () => {
    const fresh = freshRepairState(POLICY);
    const first = foldBatch(fresh, batch({ examined: 100, checked: 90, underReplicated: 3, repaired: 2, stillMissing: 1 }, 100, 'cid-100', T0));
    assert.equal(first.report.cycleCompleted, false);
    assert.equal(first.state.cursor, 'cid-100');
    assert.deepEqual(first.state.active, { startedAt: T0, ...counts({ examined: 100, checked: 90, underReplicated: 3, repaired: 2, stillMissing: 1 }) });
    assert.equal(first.state.last, null);
    assert.deepEqual(first.report.cycle, {
      startedAt: T0,
      ...counts({ examined: 100, checked: 90, underReplicated: 3, repaired: 2, stillMissing: 1 }),
      lastCompletedAt: null,
      lastCompletedSuccessfully: false,
      backlog: 1,
    });

    const second = foldBatch(first.state, batch({ examined: 40, checked: 40, underReplicated: 1, unrecoverable: 1 }, 40, 'cid-140', T0 + 5_000));
    assert.equal(second.report.cycleCompleted, true);
    assert.equal(second.state.cursor, null, 'the next batch starts a new cycle');
    assert.equal(second.state.active, null);
    assert.deepEqual(second.state.last, {
      counts: counts({ examined: 140, checked: 130, underReplicated: 4, repaired: 2, stillMissing: 1, unrecoverable: 1 }),
      startedAt: T0,
      completedAt: T0 + 5_500,
      successful: false,
    });
    // The report: this batch's counts first, then the cycle; keys in the C-shapes order; counts only.
    assert.deepEqual(Object.keys(second.report), ['examined', 'checked', 'underReplicated', 'repaired', 'stillMissing', 'unrecoverable', 'cycleCompleted', 'cycle']);
    assert.deepEqual(second.report.examined, 40);
    assert.deepEqual(Object.keys(second.report.cycle!), [
      'startedAt',
      'examined',
      'checked',
      'underReplicated',
      'repaired',
      'stillMissing',
      'unrecoverable',
      'lastCompletedAt',
      'lastCompletedSuccessfully',
      'backlog',
    ]);
    assert.equal(second.report.cycle!.examined, 140);
    assert.equal(second.report.cycle!.lastCompletedAt, T0 + 5_500);
    assert.equal(second.report.cycle!.backlog, 2);
    assert.ok(!JSON.stringify(second.report).includes('cid-'), 'no CID in a report');
  });

  it('a cycle is successful only with nothing still missing and nothing unrecoverable', () => {
    const clean = foldBatch(freshRepairState(POLICY), batch({ examined: 7, checked: 7, underReplicated: 2, repaired: 2 }, 7, 'x', T0));
    assert.equal(clean.state.last!.successful, true);
    assert.equal(clean.report.cycle!.lastCompletedSuccessfully, true);
    const missing = foldBatch(freshRepairState(POLICY), batch({ examined: 7, checked: 7, underReplicated: 1, stillMissing: 1 }, 7, 'x', T0));
    assert.equal(missing.state.last!.successful, false);
    const empty = foldBatch(freshRepairState(POLICY), batch({}, 0, null, T0));
    assert.equal(empty.report.cycleCompleted, true, 'an empty registry is a complete cycle');
    assert.equal(empty.state.last!.successful, true);
  });

  it('backlog is the larger of the last completed cycle and the active one', () => {
    const state: RepairState = {
      ...freshRepairState(POLICY),
      cursor: 'c',
      last: { counts: counts({ examined: 9, stillMissing: 2, unrecoverable: 1 }), startedAt: T0, completedAt: T0 + 1, successful: false },
      active: { startedAt: T0 + 2, ...counts({ examined: 100, stillMissing: 1 }) },
    };
    assert.equal(backlogOf(state.last!.counts), 3);
    assert.equal(repairBacklog(state), 3);
    assert.equal(repairBacklog({ ...state, active: { startedAt: T0 + 2, ...counts({ stillMissing: 5 }) } }), 5);
    // Readers see the active cycle's counts with the last completion's time and success.
    const view = cycleView(state)!;
    assert.equal(view.startedAt, T0 + 2);
    assert.equal(view.examined, 100);
    assert.equal(view.lastCompletedAt, T0 + 1);
    assert.equal(view.lastCompletedSuccessfully, false);
    assert.equal(cycleView(freshRepairState(POLICY)), null, 'nothing before the first batch');
  });

  it('the empty report of a repair that is not required', () => {
    assert.deepEqual(repairReport(NO_COUNTS, false, freshRepairState(POLICY)), { ...NO_COUNTS, cycleCompleted: false, cycle: null });
  });
});

describe('the persisted state', () => {
  it('the policy version changes with the node list and with the placement tiers, not with their order', () => {
    assert.match(POLICY, /^[a-f0-9]{64}$/);
    assert.equal(repairPolicyVersion(membershipVersion([...MEMBERS].reverse()), TIERS), POLICY);
    assert.notEqual(repairPolicyVersion(membershipVersion(MEMBERS.slice(1)), TIERS), POLICY);
    assert.notEqual(repairPolicyVersion(membershipVersion(MEMBERS), [{ minAgeMs: 0, copies: 3 }]), POLICY);
  });

  it('round-trips through JSON; nothing stored is a fresh state', () => {
    const { state } = foldBatch(freshRepairState(POLICY), { counts: counts({ examined: 100 }), fetched: 100, lastCid: 'cid-100', startedAt: T0, finishedAt: T0 + 1 });
    assert.deepEqual(restoreRepairState(JSON.parse(JSON.stringify(state)), POLICY), { state, discarded: null });
    assert.deepEqual(restoreRepairState(undefined, POLICY), { state: freshRepairState(POLICY), discarded: null });
  });

  it('another policy, another version or a malformed record is discarded', () => {
    const stored = { ...freshRepairState('f'.repeat(64)), cursor: 'cid-7', last: { counts: NO_COUNTS, startedAt: 1, completedAt: 2, successful: true } };
    assert.deepEqual(restoreRepairState(stored, POLICY), { state: freshRepairState(POLICY), discarded: 'policy' });
    const valid = { ...freshRepairState(POLICY), cursor: 'cid-7' };
    assert.equal(restoreRepairState({ ...valid, version: 2 }, POLICY).discarded, 'format');
    assert.equal(restoreRepairState({ ...valid, cursor: 7 }, POLICY).discarded, 'format');
    assert.equal(restoreRepairState({ ...valid, active: { startedAt: 1, examined: -1 } }, POLICY).discarded, 'format');
    assert.equal(restoreRepairState({ ...valid, last: { counts: NO_COUNTS, startedAt: 1, completedAt: 2 } }, POLICY).discarded, 'format');
    assert.equal(restoreRepairState('nonsense', POLICY).discarded, 'format');
    assert.deepEqual(restoreRepairState({ ...valid, version: 2 }, POLICY).state, freshRepairState(POLICY));
  });
});

describe('what health reads', () => {
  it('required iff replication and repair are both enabled', () => {
    assert.equal(repairRequired({ enabled: true, repairEnabled: true }), true);
    assert.equal(repairRequired({ enabled: false, repairEnabled: true }), false);
    assert.equal(repairRequired({ enabled: true, repairEnabled: false }), false);
  });

  it('the last completed cycle and the backlog; no evidence before a cycle completed', () => {
    assert.deepEqual(repairHealthInputs(true, null), { required: true, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false });
    assert.deepEqual(repairHealthInputs(false, freshRepairState(POLICY)), { required: false, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false });
    const { state } = foldBatch(freshRepairState(POLICY), { counts: counts({ examined: 3, checked: 3, underReplicated: 1, stillMissing: 1 }), fetched: 3, lastCid: 'z', startedAt: T0, finishedAt: T0 + 9 });
    assert.deepEqual(repairHealthInputs(true, state), { required: true, lastCompleteAt: T0 + 9, backlog: 1, lastCycleSuccessful: false });
  });
});
