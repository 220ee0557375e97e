// GC planning and the report (src/files/gc.ts; docs/specs/files-node.md §2.8, §4.3; docs/notes/files-node.md A.4 rules 1-7
// (4c: the handover), A.7, C3, C20, C-shapes "GC report").

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyFileEvent } from '../../machines/files/file-lifecycle.machine.js';
import {
  demoteEvent,
  gcErrorText,
  gcLastRun,
  gcReport,
  handoverCandidates,
  HANDOVER_CANDIDATES_PER_RUN,
  mustBePinned,
  planGc,
  pressureBytes,
  releaseEvent,
  stillMatchesDemotion,
  stillMatchesPlan,
  gcEvidence,
  storedGcLastRun,
  summarizeRegistry,
  type RegistryPages,
  type GcRunResult,
  type GcSettings,
} from '../../src/files/gc.js';
import { placementOf } from '../../src/files/placement.js';
import type { FileRecord } from '../../src/files/types.js';
import { PackedStrings } from '../../src/packed-strings.js';
import { readsOfRecords, summaryWithEveryHeldCandidate } from '../support/gc-summary.js';
import { prng } from '../support/random.js';

const NOW = 1_700_000_000_000;
const MB = 1_000_000;
const SETTINGS: GcSettings = { highWatermarkBytes: 100 * MB, lowWatermarkBytes: 80 * MB, diskReserveBytes: 0 };
const CID_TEXT = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

function temporary(cid: string, createdAt: number, expiresAt: number, dagBytes: number): FileRecord {
  return { cid, state: 'temporary', pinned: true, heldLocally: true, createdAt, expiresAt, confirmedAt: null, dagBytes, origin: 'upload' };
}
function confirmed(cid: string, createdAt: number, dagBytes: number): FileRecord {
  return { cid, state: 'confirmed', pinned: true, heldLocally: true, createdAt, expiresAt: null, confirmedAt: createdAt, dagBytes, origin: 'upload' };
}
function expired(cid: string, createdAt: number, dagBytes: number): FileRecord {
  return { cid, state: 'expired', pinned: false, heldLocally: false, createdAt, expiresAt: null, confirmedAt: createdAt, dagBytes, origin: 'upload' };
}
const measured = (blockstoreBytes: number, freeBytes = 1_000 * MB) => ({ now: NOW, blockstoreBytes, freeBytes });
/** The plan over records as the run reads them: summarized in one pass, the confirmed held files kept (a handover is possible). */
const planOf = (records: readonly FileRecord[], ...rest: Parameters<typeof planGc> extends [unknown, ...infer R] ? R : never) =>
  planGc(summaryWithEveryHeldCandidate(records), ...rest);

describe('summarizeRegistry: what a plan keeps of the registry', () => {
  const records = [
    confirmed('c-held', NOW - 9_000, 3 * MB),
    { ...confirmed('c-away', NOW - 8_000, 2 * MB), pinned: false, heldLocally: false },
    temporary('t-pinned', NOW - 7_000, NOW + 1, 1 * MB),
    { ...temporary('t-unpinned', NOW - 6_000, NOW - 1, 4 * MB), pinned: false },
    expired('e', NOW - 5_000, 7 * MB),
  ];

  it('keeps the pinned CIDs with their bytes and every temporary, reading each once; the confirmed records only for a handover pick', async () => {
    const reads = readsOfRecords(records);
    const calls: string[] = [];
    // Async generators of one-record pages, as the actor's reads are pages: each may be read once.
    const once = <T>(name: string, read: () => RegistryPages<T>) =>
      async function* () {
        calls.push(name);
        for await (const page of read()) for (const item of page) yield [item];
      };
    const counted = { pinnedCids: once('pinnedCids', reads.pinnedCids), pinnedBytes: reads.pinnedBytes, temporaries: once('temporaries', reads.temporaries), confirmed: once('confirmed', reads.confirmed) };
    const summary = await summarizeRegistry(counted);
    assert.deepEqual([...summary.pinnedCids], ['c-held', 't-pinned']);
    assert.equal(summary.pinnedBytes, 4 * MB);
    assert.deepEqual(summary.temporaries.map((record) => record.cid), ['t-pinned', 't-unpinned']);
    assert.deepEqual(summary.heldConfirmed, [], 'no handover possible: no confirmed file kept');
    assert.deepEqual(summary.handover, { candidates: [], next: undefined });
    assert.deepEqual(calls.sort(), ['pinnedCids', 'temporaries'], 'the confirmed records are not read without a handover pick');
  });

  it('onlyExpiredAt (a run without pressure): only the temporaries past their expiry are kept, and the plan is the same', async () => {
    const only = await summarizeRegistry(readsOfRecords(records), { onlyExpiredAt: NOW });
    assert.deepEqual(
      only.temporaries.map((record) => record.cid),
      ['t-unpinned'],
      't-pinned expires after NOW',
    );
    // Random registries: with and without the filter, the same plan for every measurement that shows no pressure.
    const random = prng(7);
    for (let round = 0; round < 200; round++) {
      const registry: FileRecord[] = [];
      for (let i = 0; i < 12; i++) {
        const pick = random();
        const createdAt = NOW - Math.floor(random() * 100_000);
        const dagBytes = Math.floor(random() * 5 * MB);
        if (pick < 0.5) registry.push({ ...temporary(`t${round}-${i}`, createdAt, NOW + Math.floor((random() - 0.5) * 20_000), dagBytes), pinned: random() < 0.8 });
        else if (pick < 0.8) registry.push(confirmed(`c${round}-${i}`, createdAt, dagBytes));
        else registry.push(expired(`e${round}-${i}`, createdAt, dagBytes));
      }
      const measurement = measured(Math.floor(random() * 100 * MB));
      const force = random() < 0.3;
      const plans = await Promise.all(
        [undefined, NOW].map(async (onlyExpiredAt) => {
          const plan = planGc(await summarizeRegistry(readsOfRecords(registry), onlyExpiredAt === undefined ? {} : { onlyExpiredAt }), measurement, SETTINGS, force);
          return { ...plan, retainedCids: [...plan.retainedCids] };
        }),
      );
      assert.deepEqual(plans[1], plans[0], `round ${round}`);
    }
  });

  it('pinned CIDs out of CID order are sorted', async () => {
    const reads = { ...readsOfRecords([]), pinnedCids: () => [['z', 'b'], ['m', 'a']] };
    assert.deepEqual([...(await summarizeRegistry(reads)).pinnedCids], ['a', 'b', 'm', 'z']);
  });
});

describe('planGc: release rules', () => {
  it('rule 4a: temporaries past expiry are released without pressure, soonest expiry first; exactly at expiry is not past it', () => {
    const records = [
      temporary('t-late', NOW - 50_000, NOW - 1, 5 * MB),
      temporary('t-early', NOW - 90_000, NOW - 10_000, 5 * MB),
      temporary('t-now', NOW - 90_000, NOW, 5 * MB),
      temporary('t-future', NOW - 90_000, NOW + 1, 5 * MB),
      confirmed('c', NOW - 100_000, 5 * MB),
    ];
    const plan = planOf(records, measured(25 * MB), SETTINGS, false);
    assert.deepEqual(
      plan.release.map((entry) => [entry.cid, entry.reason]),
      [
        ['t-early', 'expired'],
        ['t-late', 'expired'],
      ],
    );
    assert.equal(plan.trigger, 'none');
    assert.equal(plan.bytesToFree, 0, 'releasing is not deleting');
    assert.equal(plan.estimatedBytesAfter, 25 * MB, 'nothing deleted without a trigger');
    assert.deepEqual([...plan.retainedCids], ['c', 't-future', 't-now']);
  });

  it('rule 4b: above the high watermark the oldest unconfirmed files go until the estimate is below the low watermark', () => {
    // 120 MB stored, all of it pinned: 20 MB of confirmed, 100 MB in five 20 MB temporaries.
    const records = [
      confirmed('c-old', NOW - 10_000_000, 20 * MB),
      temporary('t3', NOW - 3_000, NOW + 1_000_000, 20 * MB),
      temporary('t1', NOW - 5_000, NOW + 1_000_000, 20 * MB),
      temporary('t5', NOW - 1_000, NOW + 1_000_000, 20 * MB),
      temporary('t2', NOW - 4_000, NOW + 1_000_000, 20 * MB),
      temporary('t4', NOW - 2_000, NOW + 1_000_000, 20 * MB),
    ];
    const plan = planOf(records, measured(120 * MB), SETTINGS, false);
    assert.equal(plan.trigger, 'highWatermark');
    // Below 80 MB means freeing 40 MB + 1 byte: three 20 MB files, oldest first.
    assert.equal(plan.bytesToFree, 40 * MB + 1);
    assert.deepEqual(
      plan.release.map((entry) => [entry.cid, entry.reason]),
      [
        ['t1', 'pressure'],
        ['t2', 'pressure'],
        ['t3', 'pressure'],
      ],
    );
    assert.equal(plan.estimatedBytesAfter, 80 * MB - 1);
    assert.deepEqual([...plan.retainedCids], ['c-old', 't4', 't5'], 'the confirmed file is never selected, however old');
  });

  it('rule 4b: unpinned bytes already reclaimable (read cache, released files) count before any file is released', () => {
    const records = [expired('gone', NOW - 9_000, 30 * MB), temporary('t1', NOW - 5_000, NOW + 1_000, 20 * MB), confirmed('c', NOW - 1, 60 * MB)];
    // 110 MB stored, 80 MB pinned: 30 MB reclaimable, 30 MB + 1 needed → one temporary must still go.
    const plan = planOf(records, measured(110 * MB), SETTINGS, false);
    assert.deepEqual(plan.release.map((entry) => entry.cid), ['t1']);
    // 104 MB stored, 24 MB reclaimable; below 81 MB needs 23 MB + 1: covered without releasing anything.
    const covered = planOf(records, measured(104 * MB), { ...SETTINGS, lowWatermarkBytes: 81 * MB }, false);
    assert.equal(covered.trigger, 'highWatermark');
    assert.equal(covered.bytesToFree, 23 * MB + 1);
    assert.deepEqual(covered.release, []);
    assert.equal(covered.estimatedBytesAfter, 81 * MB - 1);
  });

  it('pressure never selects a confirmed file: with nothing else to release the estimate stays above the goal', () => {
    const records = [confirmed('a', NOW - 5, 70 * MB), confirmed('b', NOW - 4, 50 * MB)];
    const plan = planOf(records, measured(120 * MB), SETTINGS, false);
    assert.equal(plan.trigger, 'highWatermark');
    assert.deepEqual(plan.release, []);
    assert.deepEqual([...plan.retainedCids], ['a', 'b']);
    assert.equal(plan.estimatedBytesAfter, 120 * MB, 'everything stored is pinned');
  });

  it('exactly at the high watermark is not above it; the expired ones still go', () => {
    const records = [temporary('t', NOW - 5, NOW - 1, 10 * MB), confirmed('c', NOW - 1, 90 * MB)];
    const plan = planOf(records, measured(100 * MB), SETTINGS, false);
    assert.equal(plan.trigger, 'none');
    assert.deepEqual(plan.release.map((entry) => entry.cid), ['t']);
  });

  it('disk reserve: evicts until the reserve is honoured with a 25 % margin, and names the trigger over the watermark', () => {
    const settings = { ...SETTINGS, diskReserveBytes: 40 * MB };
    assert.deepEqual(pressureBytes(measured(50 * MB, 30 * MB), settings), { highWatermark: 0, diskReserve: 20 * MB });
    assert.deepEqual(pressureBytes(measured(50 * MB, 40 * MB), settings), { highWatermark: 0, diskReserve: 0 }, 'exactly the reserve is outside it');
    const records = [temporary('t1', NOW - 3, NOW + 9, 15 * MB), temporary('t2', NOW - 2, NOW + 9, 15 * MB), temporary('t3', NOW - 1, NOW + 9, 15 * MB), confirmed('c', NOW - 9, 5 * MB)];
    // Below the high watermark, 30 MB free of a 40 MB reserve: 50 MB − 30 MB = 20 MB to free, two 15 MB files.
    const plan = planOf(records, measured(50 * MB, 30 * MB), settings, false);
    assert.equal(plan.trigger, 'diskReserve');
    assert.equal(plan.bytesToFree, 20 * MB);
    assert.deepEqual(plan.release.map((entry) => entry.cid), ['t1', 't2']);
    assert.equal(plan.estimatedBytesAfter, 30 * MB);
    // Both pressures: the reserve names the trigger, the larger need sets the goal.
    const both = planOf(records, measured(120 * MB, 30 * MB), settings, false);
    assert.equal(both.trigger, 'diskReserve');
    assert.equal(both.bytesToFree, 40 * MB + 1);
  });

  it('force: deletes every unpinned block without pressure, releases only what the rules release, never confirmed files', () => {
    const records = [confirmed('c', NOW - 9, 10 * MB), temporary('t', NOW - 5, NOW + 1_000, 5 * MB), temporary('old', NOW - 8, NOW - 2, 5 * MB), expired('x', NOW - 7, 3 * MB)];
    const plan = planOf(records, measured(30 * MB), SETTINGS, true);
    assert.equal(plan.trigger, 'force');
    assert.equal(plan.bytesToFree, null);
    assert.deepEqual(plan.release.map((entry) => entry.cid), ['old']);
    assert.deepEqual([...plan.retainedCids], ['c', 't']);
    assert.equal(plan.estimatedBytesAfter, 15 * MB, 'only what stays pinned is left');
  });
});

describe('rule 7: a release applies only to a record still matching the plan', () => {
  const record = temporary(CID_TEXT, NOW - 100, NOW - 1, 10);
  const [entry] = planOf([record], measured(10), SETTINGS, false).release;

  it('matches when unchanged and still past expiry', () => {
    assert.equal(stillMatchesPlan(entry!, record, NOW), true);
  });

  it('does not match a record confirmed, deleted, re-created or given a new expiry since', () => {
    assert.equal(stillMatchesPlan(entry!, { ...record, state: 'confirmed', expiresAt: null, confirmedAt: NOW }, NOW), false);
    assert.equal(stillMatchesPlan(entry!, undefined, NOW), false);
    assert.equal(stillMatchesPlan(entry!, { ...record, createdAt: NOW - 5 }, NOW), false);
    assert.equal(stillMatchesPlan(entry!, { ...record, expiresAt: NOW + 5 }, NOW), false);
  });

  it('a pressure release needs the file still pinned', () => {
    const pressure = { ...entry!, reason: 'pressure' as const };
    assert.equal(stillMatchesPlan(pressure, record, NOW), true);
    assert.equal(stillMatchesPlan(pressure, { ...record, pinned: false }, NOW), false);
  });

  it('the lifecycle machine turns either release into `expired`, unpinned, with an unpin effect', () => {
    const ttl = applyFileEvent(record, releaseEvent(entry!, NOW));
    assert.equal(ttl.record.state, 'expired');
    assert.equal(ttl.record.pinned, false);
    assert.equal(ttl.record.heldLocally, false);
    assert.equal(ttl.effect, 'unpin');
    const fresh = temporary(CID_TEXT, NOW - 100, NOW + 1_000, 10);
    const pressure = applyFileEvent(fresh, releaseEvent({ ...entry!, reason: 'pressure', expiresAt: fresh.expiresAt }, NOW));
    assert.equal(pressure.record.state, 'expired');
    assert.equal(pressure.effect, 'unpin');
    // A TTL release sent to a not-yet-expired file is refused by the machine itself.
    assert.equal(applyFileEvent(fresh, releaseEvent(entry!, NOW)).changed, false);
  });
});

describe('rule 4c: handover', () => {
  const SELF = 'peer-self';
  const PEERS = ['peer-a', 'peer-b', 'peer-c', 'peer-d'];
  const TIERS = [{ minAgeMs: 0, copies: 2 }];
  const scope = { self: SELF, members: PEERS, tiers: TIERS, now: NOW };
  /** CIDs for which this node is outside (or inside) the designated set, found with the same placement function. */
  const cids = (outside: boolean, count: number) => {
    const found: string[] = [];
    for (let i = 0; found.length < count; i++) {
      const cid = `cid-${String(i).padStart(4, '0')}`;
      if (placementOf(cid, PEERS, SELF, TIERS, 0).designated.includes(SELF) !== outside) found.push(cid);
    }
    return found;
  };

  it('candidates: confirmed files held here whose designated set leaves this node out, with those holders to ask', () => {
    const [away, awayUnpinned, awayTemporary] = cids(true, 3);
    const [home] = cids(false, 1);
    const records = [
      confirmed(away!, NOW - 10, 1),
      { ...confirmed(awayUnpinned!, NOW - 10, 1), pinned: false, heldLocally: false },
      temporary(awayTemporary!, NOW - 10, NOW + 1_000, 1),
      confirmed(home!, NOW - 10, 1),
    ];
    const { candidates, next } = handoverCandidates(records, scope, undefined);
    assert.deepEqual(candidates, [{ cid: away, holders: placementOf(away!, PEERS, SELF, TIERS, 10).designated }]);
    assert.equal(candidates[0]!.holders.length, 2);
    assert.ok(!candidates[0]!.holders.includes(SELF));
    assert.equal(next, undefined, 'every candidate taken: the next run starts from the first');
  });

  it('candidates: no one to hand over to on one node or when every member is designated', () => {
    const records = cids(true, 3).map((cid) => confirmed(cid, NOW - 10, 1));
    assert.deepEqual(handoverCandidates(records, { ...scope, members: [] }, undefined).candidates, []);
    assert.deepEqual(handoverCandidates(records, { ...scope, tiers: [{ minAgeMs: 0, copies: 5 }] }, undefined).candidates, []);
  });

  it('candidates: the file’s age picks the tier (an older file may need fewer copies, leaving this node out)', () => {
    const tiers = [
      { minAgeMs: 0, copies: 5 },
      { minAgeMs: 1_000, copies: 1 },
    ];
    const [cid] = cids(true, 1);
    const fresh = handoverCandidates([confirmed(cid!, NOW - 999, 1)], { ...scope, tiers }, undefined);
    assert.deepEqual(fresh.candidates, [], 'five copies over five members: this node is designated');
    const aged = handoverCandidates([confirmed(cid!, NOW - 1_000, 1)], { ...scope, tiers }, undefined);
    // Outside the best two (how `cids` picked it), so outside the best one as well.
    assert.deepEqual(aged.candidates.map((c) => [c.cid, c.holders.length]), [[cid, 1]]);
  });

  it('candidates: at most a bounded number per run, in CID order, the next run going on after the last one and wrapping around', () => {
    assert.equal(HANDOVER_CANDIDATES_PER_RUN, 100);
    const away = cids(true, 5);
    const records = [...away].reverse().map((cid) => confirmed(cid, NOW - 10, 1));
    const first = handoverCandidates(records, scope, undefined, 2);
    assert.deepEqual(first.candidates.map((c) => c.cid), away.slice(0, 2));
    assert.equal(first.next, away[1]);
    const second = handoverCandidates(records, scope, first.next, 2);
    assert.deepEqual(second.candidates.map((c) => c.cid), away.slice(2, 4));
    const third = handoverCandidates(records, scope, second.next, 2);
    assert.deepEqual(third.candidates.map((c) => c.cid), [away[4], away[0]], 'wraps around to the first CID');
    assert.equal(third.next, away[0]);
    const all = handoverCandidates(records, scope, away[2], 10);
    assert.deepEqual(all.candidates.map((c) => c.cid), [...away.slice(3), ...away.slice(0, 3)]);
    assert.equal(all.next, undefined);
  });

  it('summarizeRegistry picks the same candidates while reading, keeping only their records', async () => {
    const away = cids(true, 250);
    const home = cids(false, 50);
    const records = [...away.map((cid) => confirmed(cid, NOW - 10, 1)), ...home.map((cid) => confirmed(cid, NOW - 10, 1)), temporary('t', NOW - 5, NOW + 1, 1)];
    const inCidOrder = [...records].sort((a, b) => (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
    for (const after of [undefined, away[0], away[120], away[249], 'zzz']) {
      const expected = handoverCandidates(inCidOrder, scope, after);
      const summary = await summarizeRegistry(readsOfRecords(inCidOrder), { handover: { scope, after } });
      assert.deepEqual(summary.handover, expected, `after ${after}`);
      assert.equal(summary.handover.candidates.length, HANDOVER_CANDIDATES_PER_RUN);
      assert.deepEqual(summary.heldConfirmed.map((record) => record.cid), expected.candidates.map((candidate) => candidate.cid), 'only the candidates\' records are kept');
      // The pick does not depend on the order records come in.
      assert.deepEqual((await summarizeRegistry({ ...readsOfRecords(records), confirmed: () => [[...records].reverse()] }, { handover: { scope, after } })).handover, expected);
    }
    const sorted = [...away].sort();
    const fromStart = (await summarizeRegistry(readsOfRecords(inCidOrder), { handover: { scope, after: undefined } })).handover;
    assert.deepEqual(fromStart.candidates.map((candidate) => candidate.cid), sorted.slice(0, HANDOVER_CANDIDATES_PER_RUN));
    assert.equal(fromStart.next, sorted[HANDOVER_CANDIDATES_PER_RUN - 1]);
  });

  it('planGc: demotes only confirmed files still held here, never retains them, and counts their bytes as released', () => {
    const records = [confirmed('c-away', NOW - 9, 10 * MB), confirmed('c-home', NOW - 9, 10 * MB), temporary('t', NOW - 5, NOW + 1_000, 5 * MB), expired('x', NOW - 7, 3 * MB)];
    // The probe's answer may name files that changed since: only the confirmed held one is planned.
    const plan = planOf(records, measured(30 * MB), SETTINGS, true, ['c-away', 't', 'x', 'unknown']);
    assert.deepEqual(plan.demote, [{ cid: 'c-away', createdAt: NOW - 9, dagBytes: 10 * MB }]);
    assert.deepEqual(plan.release, []);
    assert.deepEqual([...plan.retainedCids], ['c-home', 't']);
    assert.equal(plan.estimatedBytesAfter, 15 * MB, 'only what stays pinned is left');
    const noTrigger = planOf(records, measured(30 * MB), SETTINGS, false, ['c-away']);
    assert.equal(noTrigger.trigger, 'none');
    assert.deepEqual(noTrigger.demote.map((entry) => entry.cid), ['c-away'], 'handover does not wait for pressure');
    assert.equal(noTrigger.estimatedBytesAfter, 30 * MB, 'nothing deleted without a trigger');
    assert.deepEqual(planOf(records, measured(30 * MB), SETTINGS, true).demote, [], 'no confirmation, no handover');
  });

  it('planGc: under pressure a handed-over copy counts as reclaimable before any unconfirmed upload is released', () => {
    // 120 MB stored and pinned; below 80 MB needs 40 MB + 1: the 50 MB handed over cover it.
    const records = [confirmed('c-away', NOW - 9, 50 * MB), temporary('t1', NOW - 5, NOW + 1_000, 20 * MB), confirmed('c-home', NOW - 9, 50 * MB)];
    const plan = planOf(records, measured(120 * MB), SETTINGS, false, ['c-away']);
    assert.equal(plan.trigger, 'highWatermark');
    assert.deepEqual(plan.release, []);
    assert.deepEqual(plan.demote.map((entry) => entry.cid), ['c-away']);
    assert.equal(plan.estimatedBytesAfter, 80 * MB - 1);
    assert.deepEqual(planOf(records, measured(120 * MB), SETTINGS, false).release.map((entry) => entry.cid), ['t1'], 'without it the upload goes');
  });

  it('rule 7: a demotion applies only to a record still confirmed, pinned and held, created when planned', () => {
    const record = confirmed(CID_TEXT, NOW - 100, 10);
    const [entry] = planOf([record], measured(10), SETTINGS, false, [CID_TEXT]).demote;
    assert.equal(stillMatchesDemotion(entry!, record), true);
    assert.equal(stillMatchesDemotion(entry!, undefined), false);
    assert.equal(stillMatchesDemotion(entry!, { ...record, createdAt: NOW - 5 }), false);
    assert.equal(stillMatchesDemotion(entry!, { ...record, state: 'expired', pinned: false, heldLocally: false }), false);
    assert.equal(stillMatchesDemotion(entry!, { ...record, pinned: false, heldLocally: false }), false, 'already demoted');
  });

  it('the lifecycle machine keeps a demoted file confirmed, unpinned and not held, with an unpin effect', () => {
    const record = confirmed(CID_TEXT, NOW - 100, 10);
    const demoted = applyFileEvent(record, demoteEvent(NOW));
    assert.deepEqual(demoted.record, { ...record, pinned: false, heldLocally: false });
    assert.equal(demoted.effect, 'unpin');
    assert.equal(mustBePinned(demoted.record), false, 'pin verification does not restore a handed-over pin');
    assert.equal(applyFileEvent(demoted.record, demoteEvent(NOW + 1)).changed, false, 'demoting twice changes nothing');
  });
});

describe('rule 6: which files must be pinned before deleting', () => {
  it('confirmed held files and any pinned record; not released or demoted ones', () => {
    assert.equal(mustBePinned(confirmed('c', NOW, 1)), true);
    assert.equal(mustBePinned(temporary('t', NOW, NOW + 1, 1)), true);
    assert.equal(mustBePinned(expired('x', NOW, 1)), false);
    assert.equal(mustBePinned({ ...confirmed('d', NOW, 1), pinned: false, heldLocally: false }), false);
  });
});

describe('the report', () => {
  const result: GcRunResult = {
    outcome: 'collected',
    dryRun: false,
    trigger: 'force',
    blockstoreBytesBefore: 1_000,
    estimatedBytesAfter: 400,
    releasedCids: ['a'],
    retainedCids: PackedStrings.from(['b', 'c']),
    demoted: [],
    removedBlocks: 2,
    removedCids: ['Qm1', 'Qm2'],
    repairedPins: ['c'],
    unprotected: [],
    errors: [],
  };

  it('has every field of spec §2.8 and notes C-shapes, in wire order', () => {
    const report = gcReport(result, NOW, NOW + 250);
    assert.deepEqual(Object.keys(report), [
      'startedAt',
      'durationMs',
      'dryRun',
      'collected',
      'trigger',
      'blockstoreBytesBefore',
      'estimatedBytesAfter',
      'releasedCids',
      'retainedCids',
      'demoted',
      'removedBlocks',
      'removedCids',
      'repairedPins',
      'unprotected',
      'errors',
    ]);
    assert.equal(report.durationMs, 250);
    assert.equal(report.collected, true);
    assert.deepEqual(report.demoted, []);
    assert.ok(Number.isInteger(report.removedBlocks));
    const handedOver = { ...result, demoted: ['d'] };
    const withHandover = gcReport(handedOver, NOW, NOW);
    assert.deepEqual(withHandover.demoted, ['d'], 'the run’s demotions, as they are');
    assert.notEqual(withHandover.demoted, handedOver.demoted, 'a copy, not the run’s own list');
  });

  it('collected only when the deletion pass ran to its end', () => {
    for (const outcome of ['previewed', 'released', 'abandoned', 'failed'] as const) {
      assert.equal(gcReport({ ...result, outcome }, NOW, NOW).collected, false, outcome);
    }
  });

  it('the metrics summary counts, never lists CIDs; a stored report reads back to the same summary', () => {
    const report = gcReport({ ...result, errors: ['delete failed: disk'] }, NOW, NOW + 5);
    const summary = gcLastRun(report);
    assert.deepEqual(summary, {
      startedAt: NOW,
      durationMs: 5,
      dryRun: false,
      collected: true,
      trigger: 'force',
      releasedCount: 1,
      removedBlocks: 2,
      errors: ['delete failed: disk'],
    });
    assert.deepEqual(storedGcLastRun(JSON.parse(JSON.stringify(report))), summary);
    // The stored evidence counts the retained files instead of listing them, and still reads back to the summary.
    const evidence = JSON.parse(JSON.stringify(gcEvidence(report)));
    assert.equal('retainedCids' in evidence, false);
    assert.equal(evidence.retainedCount, report.retainedCids.length);
    assert.deepEqual(evidence.releasedCids, report.releasedCids);
    assert.deepEqual(evidence.removedCids, report.removedCids);
    assert.deepEqual(storedGcLastRun(evidence), summary);
    assert.equal(storedGcLastRun(undefined), null);
    assert.equal(storedGcLastRun({ startedAt: 'x' }), null);
  });

  it('error texts name the stage, keep the first line only and carry no CID or stack', () => {
    const error = new Error(`Could not delete ${CID_TEXT}\n    at Object.delete (/x/y.js:1:2)`);
    const text = gcErrorText('delete', error);
    assert.equal(text, 'delete failed: Could not delete <cid>');
    assert.ok(!text.includes('at Object'));
    assert.equal(gcErrorText('measure', 'plain'), 'measure failed: plain');
    assert.equal(gcErrorText('verify', new Error('')), 'verify failed: Error');
  });
});
