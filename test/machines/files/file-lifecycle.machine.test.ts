// The file lifecycle machine, one step at a time with XState's pure `transition()` (docs/DESIGN.md testing
// levels: machines), one case per row of docs/notes/files-node.md A.7 that the machine owns, plus the
// idempotent moves of notes C6 and the expiry guard of notes C3; then `applyFileEvent`, the way the
// writer of file records uses it, and the pure helpers of src/files/lifecycle.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor, transition } from 'xstate';
import {
  applyFileEvent,
  fileLifecycleContext,
  fileLifecycleMachine,
  fileLifecycleSnapshot,
} from '../../../machines/files/file-lifecycle.machine.js';
import {
  backfillRecord,
  confirmedRecord,
  isPastExpiry,
  lifecycleCounts,
  newUploadRecord,
  publicStatus,
} from '../../../src/files/lifecycle.js';
import type { FileEvent, FileRecord } from '../../../src/files/types.js';

const T0 = 1_700_000_000_000;
const TTL = 86_400_000;
const CID = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

const temporary: FileRecord = {
  cid: CID,
  state: 'temporary',
  pinned: true,
  heldLocally: true,
  createdAt: T0,
  expiresAt: T0 + TTL,
  confirmedAt: null,
  dagBytes: 17,
  origin: 'upload',
};
const confirmed: FileRecord = { ...temporary, state: 'confirmed', expiresAt: null, confirmedAt: T0 + 5 };
/** After unpin of a confirmed file (notes C4): expiresAt unchanged (null), confirmedAt kept. */
const expired: FileRecord = { ...confirmed, state: 'expired', pinned: false, heldLocally: false };
/** A confirmed file whose local copy was handed to its designated holders (notes A.7 handover row). */
const demoted: FileRecord = { ...confirmed, pinned: false, heldLocally: false };

/** One pure step: the next state value, context and the effect markers chosen. */
function step(record: FileRecord, event: FileEvent) {
  const [next, actions] = transition(fileLifecycleMachine, fileLifecycleSnapshot(record), event);
  return { value: next.value, context: next.context, actions: actions.map((a) => a.type) };
}

describe('file lifecycle machine: single steps with transition()', () => {
  it('temporary --file.confirm--> confirmed: expiresAt null, confirmedAt = at, pin kept, no effect', () => {
    const r = step(temporary, { type: 'file.confirm', at: T0 + 100 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, { pinned: true, heldLocally: true, expiresAt: null, confirmedAt: T0 + 100 });
    assert.deepEqual(r.actions, []);
  });

  it('temporary --file.expire--> expired only strictly after expiresAt (guard)', () => {
    const before = step(temporary, { type: 'file.expire', at: T0 + TTL - 1 });
    assert.equal(before.value, 'temporary');
    assert.deepEqual(before.context, fileLifecycleContext(temporary));
    assert.deepEqual(before.actions, []);

    const atExpiry = step(temporary, { type: 'file.expire', at: T0 + TTL });
    assert.equal(atExpiry.value, 'temporary', 'exactly at expiresAt the file is still temporary');

    const after = step(temporary, { type: 'file.expire', at: T0 + TTL + 1 });
    assert.equal(after.value, 'expired');
    assert.deepEqual(after.context, { pinned: false, heldLocally: false, expiresAt: T0 + TTL, confirmedAt: null });
    assert.deepEqual(after.actions, ['unpinContent']);
  });

  it('temporary --file.unpin--> expired (collector watermark release, oldest first)', () => {
    const r = step(temporary, { type: 'file.unpin', at: T0 + 1 });
    assert.equal(r.value, 'expired');
    assert.deepEqual(r.context, { pinned: false, heldLocally: false, expiresAt: T0 + TTL, confirmedAt: null });
    assert.deepEqual(r.actions, ['unpinContent']);
  });

  it('temporary --file.repin--> confirmed (operator pin route registers it as confirmed)', () => {
    const r = step(temporary, { type: 'file.repin', at: T0 + 7 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, { pinned: true, heldLocally: true, expiresAt: null, confirmedAt: T0 + 7 });
    assert.deepEqual(r.actions, []);
  });

  it('confirmed --file.unpin--> expired: unpinned, not held, expiresAt and confirmedAt kept', () => {
    const r = step(confirmed, { type: 'file.unpin', at: T0 + 200 });
    assert.equal(r.value, 'expired');
    assert.deepEqual(r.context, { pinned: false, heldLocally: false, expiresAt: null, confirmedAt: T0 + 5 });
    assert.deepEqual(r.actions, ['unpinContent']);
  });

  it('confirmed --file.confirm--> confirmed is idempotent and keeps confirmedAt', () => {
    const r = step(confirmed, { type: 'file.confirm', at: T0 + 999 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, fileLifecycleContext(confirmed));
    assert.deepEqual(r.actions, []);
  });

  it('confirmed --file.repin--> confirmed is idempotent when pinned and held', () => {
    const r = step(confirmed, { type: 'file.repin', at: T0 + 999 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, fileLifecycleContext(confirmed));
    assert.deepEqual(r.actions, []);
  });

  it('confirmed --file.expire--> nothing: confirmed files never expire', () => {
    const r = step(confirmed, { type: 'file.expire', at: T0 + 100 * TTL });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, fileLifecycleContext(confirmed));
  });

  it('expired --file.repin--> confirmed: re-pinned, held, confirmedAt = at, expiresAt null', () => {
    const fromTtl: FileRecord = { ...temporary, state: 'expired', pinned: false, heldLocally: false };
    const r = step(fromTtl, { type: 'file.repin', at: T0 + 300 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, { pinned: true, heldLocally: true, expiresAt: null, confirmedAt: T0 + 300 });
    assert.deepEqual(r.actions, ['pinContent']);
  });

  it('expired --file.confirm--> confirmed with a re-pin intent (notes C6)', () => {
    const r = step(expired, { type: 'file.confirm', at: T0 + 400 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, { pinned: true, heldLocally: true, expiresAt: null, confirmedAt: T0 + 400 });
    assert.deepEqual(r.actions, ['pinContent']);
  });

  it('expired --file.unpin / file.expire--> nothing (idempotent)', () => {
    for (const event of [
      { type: 'file.unpin', at: T0 + 500 },
      { type: 'file.expire', at: T0 + 100 * TTL },
    ] as const) {
      const r = step(expired, event);
      assert.equal(r.value, 'expired', event.type);
      assert.deepEqual(r.context, fileLifecycleContext(expired), event.type);
      assert.deepEqual(r.actions, [], event.type);
    }
  });

  it('confirmed --file.demote--> confirmed (collector handover): pin dropped, not held, an unpin effect, dates kept', () => {
    const r = step(confirmed, { type: 'file.demote', at: T0 + 50 });
    assert.equal(r.value, 'confirmed');
    assert.deepEqual(r.context, { pinned: false, heldLocally: false, expiresAt: null, confirmedAt: T0 + 5 });
    assert.deepEqual(r.actions, ['unpinContent']);
    assert.deepEqual(applyFileEvent(confirmed, { type: 'file.demote', at: T0 + 50 }), { record: demoted, changed: true, effect: 'unpin' });
  });

  it('file.demote changes nothing but a held confirmed file: temporary, expired and demoted records stay as they are', () => {
    for (const record of [temporary, expired, demoted]) {
      const r = step(record, { type: 'file.demote', at: T0 + 50 });
      assert.equal(r.value, record.state, record.state);
      assert.deepEqual(r.context, fileLifecycleContext(record));
      assert.deepEqual(r.actions, []);
      assert.equal(applyFileEvent(record, { type: 'file.demote', at: T0 + 50 }).record, record);
    }
  });

  it('a demoted confirmed record: unpin asks for no unpin, repin asks for the pin back', () => {
    const unpinned = step(demoted, { type: 'file.unpin', at: T0 + 1 });
    assert.equal(unpinned.value, 'expired');
    assert.deepEqual(unpinned.actions, []);

    const repinned = step(demoted, { type: 'file.repin', at: T0 + 2 });
    assert.equal(repinned.value, 'confirmed');
    assert.deepEqual(repinned.context, { pinned: true, heldLocally: true, expiresAt: null, confirmedAt: T0 + 5 });
    assert.deepEqual(repinned.actions, ['pinContent']);
  });

  it('runs as a live actor too (statecharts, inspector), with the same moves', () => {
    const actor = createActor(fileLifecycleMachine, { input: fileLifecycleContext(temporary) }).start();
    actor.send({ type: 'file.confirm', at: T0 + 10 });
    actor.send({ type: 'file.unpin', at: T0 + 20 });
    actor.send({ type: 'file.repin', at: T0 + 30 });
    const snapshot = actor.getSnapshot();
    assert.equal(snapshot.value, 'confirmed');
    assert.deepEqual(snapshot.context, { pinned: true, heldLocally: true, expiresAt: null, confirmedAt: T0 + 30 });
    actor.stop();
  });
});

describe('applyFileEvent', () => {
  it('returns the new record and the pin effect, leaving the input untouched', () => {
    const input = { ...confirmed };
    const result = applyFileEvent(input, { type: 'file.unpin', at: T0 + 50 });
    assert.equal(result.changed, true);
    assert.equal(result.effect, 'unpin');
    assert.deepEqual(result.record, expired);
    assert.deepEqual(input, confirmed, 'the input record is not mutated');
  });

  it('keeps cid, createdAt, dagBytes and origin whatever happens', () => {
    const replica: FileRecord = { ...expired, origin: 'replica', dagBytes: 4096, createdAt: T0 - 1 };
    const { record } = applyFileEvent(replica, { type: 'file.repin', at: T0 + 60 });
    assert.equal(record.cid, CID);
    assert.equal(record.createdAt, T0 - 1);
    assert.equal(record.dagBytes, 4096);
    assert.equal(record.origin, 'replica');
  });

  it('unchanged: the same object, changed false, no effect', () => {
    for (const [record, event] of [
      [confirmed, { type: 'file.confirm', at: T0 + 1 }],
      [confirmed, { type: 'file.repin', at: T0 + 1 }],
      [expired, { type: 'file.unpin', at: T0 + 1 }],
      [temporary, { type: 'file.expire', at: T0 + TTL }],
      [confirmed, { type: 'file.expire', at: T0 + 2 * TTL }],
    ] as const) {
      const result = applyFileEvent(record, event);
      assert.equal(result.record, record, `${record.state} + ${event.type}`);
      assert.equal(result.changed, false);
      assert.equal(result.effect, 'none');
    }
  });

  it('effects per move: confirm none, expire unpin, repin of expired pin', () => {
    assert.equal(applyFileEvent(temporary, { type: 'file.confirm', at: T0 + 1 }).effect, 'none');
    assert.equal(applyFileEvent(temporary, { type: 'file.expire', at: T0 + TTL + 1 }).effect, 'unpin');
    assert.equal(applyFileEvent(expired, { type: 'file.repin', at: T0 + 1 }).effect, 'pin');
    assert.equal(applyFileEvent(expired, { type: 'file.confirm', at: T0 + 1 }).effect, 'pin');
    const confirmedNow = applyFileEvent(temporary, { type: 'file.confirm', at: T0 + 1 });
    assert.equal(confirmedNow.changed, true);
    assert.equal(confirmedNow.record.state, 'confirmed');
    assert.equal(confirmedNow.record.confirmedAt, T0 + 1);
    assert.equal(confirmedNow.record.expiresAt, null);
  });
});

describe('src/files/lifecycle.ts', () => {
  it('newUploadRecord: confirmed by default, confirmedAt = createdAt (notes A.7)', () => {
    assert.deepEqual(newUploadRecord(CID, T0, { confirmationRequired: false, temporaryTtlMs: TTL, dagBytes: 17 }), {
      cid: CID,
      state: 'confirmed',
      pinned: true,
      heldLocally: true,
      createdAt: T0,
      expiresAt: null,
      confirmedAt: T0,
      dagBytes: 17,
      origin: 'upload',
    });
  });

  it('newUploadRecord: temporary with expiresAt = createdAt + ttl when confirmation is required (notes C2)', () => {
    assert.deepEqual(newUploadRecord(CID, T0, { confirmationRequired: true, temporaryTtlMs: TTL, dagBytes: 17 }), temporary);
  });

  it('backfillRecord: confirmed, dated at the backfill (spec §3.1, §9.6)', () => {
    const record = backfillRecord('QmQPeNsJPyVWPFDVHb9qRUdUa1dXXZVd1rm4U8QNMPtBvE', T0 + 9, null);
    assert.deepEqual(record, {
      cid: 'QmQPeNsJPyVWPFDVHb9qRUdUa1dXXZVd1rm4U8QNMPtBvE',
      state: 'confirmed',
      pinned: true,
      heldLocally: true,
      createdAt: T0 + 9,
      expiresAt: null,
      confirmedAt: T0 + 9,
      dagBytes: null,
      origin: 'backfill',
    });
    assert.equal(confirmedRecord(CID, T0, 'replica', 5).origin, 'replica');
  });

  it('isPastExpiry is strict and never true without an expiry', () => {
    assert.equal(isPastExpiry(100, 100), false);
    assert.equal(isPastExpiry(100, 101), true);
    assert.equal(isPastExpiry(null, Number.MAX_SAFE_INTEGER), false);
  });

  it('publicStatus: the spec §2.2 body in wire order, with the replication figures it is given', () => {
    const status = publicStatus(temporary, { acknowledged: 1, required: 1 });
    assert.deepEqual(Object.keys(status), ['cid', 'state', 'pinned', 'createdAt', 'expiresAt', 'confirmedAt', 'replication']);
    assert.deepEqual(status, {
      cid: CID,
      state: 'temporary',
      pinned: true,
      createdAt: T0,
      expiresAt: T0 + TTL,
      confirmedAt: null,
      replication: { acknowledged: 1, required: 1, heldLocally: true },
    });
    assert.deepEqual(Object.keys(status.replication), ['acknowledged', 'required', 'heldLocally']);
    assert.deepEqual(publicStatus(expired, { acknowledged: 0, required: 1 }).replication, { acknowledged: 0, required: 1, heldLocally: false });
    assert.deepEqual(publicStatus(demoted, { acknowledged: 3, required: 2 }).replication, {
      acknowledged: 3,
      required: 2,
      heldLocally: false,
    });
  });

  it('lifecycleCounts counts every state, zero for absent ones', () => {
    assert.deepEqual(lifecycleCounts([]), { temporary: 0, confirmed: 0, expired: 0 });
    assert.deepEqual(lifecycleCounts([temporary, confirmed, confirmed, expired, demoted]), {
      temporary: 1,
      confirmed: 3,
      expired: 1,
    });
  });
});
