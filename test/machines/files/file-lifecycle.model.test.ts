// Model-based test of one file's lifecycle (machines/files/file-lifecycle.machine.ts): every path of its graph, from
// each state a persisted record can be in (uploads are stored `confirmed` or `temporary`; rule 3 applies the machine
// to the row with `resolveState`), replayed on a real actor (test/support/model.ts). The effect of each step is
// checked against `applyFileEvent`, the function the one writer of file records (actors/files/file-records.ts)
// really calls: the same record and the same pin/unpin effect as the markers the actor executed; and the invariants
// of docs/specs/files-node.md §3.1, §4.2.

import assert from 'node:assert/strict';
import { applyFileEvent, fileLifecycleMachine, type FileLifecycleContext } from '../../../machines/files/file-lifecycle.machine.js';
import type { FileRecord, FileState } from '../../../src/files/types.js';
import { modelTest } from '../../support/model.js';

const T = 1_700_000_000_000;
const TTL = 60_000;
const EXPIRES = T + TTL;
const ctx = (pinned: boolean, heldLocally: boolean, expiresAt: number | null, confirmedAt: number | null): FileLifecycleContext => ({ pinned, heldLocally, expiresAt, confirmedAt });
const record = (state: FileState, context: FileLifecycleContext): FileRecord => ({ cid: 'bafkfile', state, createdAt: T, dagBytes: 1_000, origin: 'upload', ...context });

modelTest({
  machine: fileLifecycleMachine,
  scenarios: [
    { name: 'temporary, pinned and held', input: ctx(true, true, EXPIRES, null) },
    { name: 'temporary, pinned, not held', input: ctx(true, false, EXPIRES, null) },
    { name: 'temporary, not pinned', input: ctx(false, false, EXPIRES, null) },
    { name: 'confirmed upload', from: { value: 'confirmed', context: ctx(true, true, null, T) } },
    { name: 'confirmed, pinned, not held', from: { value: 'confirmed', context: ctx(true, false, null, T) } },
    { name: 'confirmed, demoted', from: { value: 'confirmed', context: ctx(false, false, null, T) } },
    { name: 'expired, pin left', from: { value: 'expired', context: ctx(true, false, EXPIRES, null) } },
    { name: 'expired', from: { value: 'expired', context: ctx(false, false, EXPIRES, null) } },
  ],
  events: {
    'file.confirm': [{ type: 'file.confirm', at: T + 1_000 }],
    'file.repin': [{ type: 'file.repin', at: T + 2_000 }],
    'file.unpin': [{ type: 'file.unpin', at: T + 3_000 }],
    'file.demote': [{ type: 'file.demote', at: T + 4_000 }],
    // At the expiry instant (not yet past: notes C3, strictly after) and one millisecond later.
    'file.expire': [
      { type: 'file.expire', at: EXPIRES },
      { type: 'file.expire', at: EXPIRES + 1 },
    ],
  },
  simplePaths: { maxStates: 12, maxPaths: 6 },
  effect: ({ index, event, before, after, actions }) => {
    const markers = actions.map((a) => a.type);
    assert.ok(markers.every((m) => m === 'pinContent' || m === 'unpinContent'), 'only effect markers are named actions');
    assert.ok(markers.length <= 1, 'at most one effect per event');
    if (index === 0 || !before) return;
    const applied = applyFileEvent(record(before.value as FileState, before.context), event as never);
    assert.equal(applied.record.state, after.value, 'applyFileEvent gives the same state');
    assert.deepEqual({ ...applied.record }, record(after.value as FileState, after.context), 'applyFileEvent gives the same record');
    assert.equal(applied.effect, markers[0] === 'pinContent' ? 'pin' : markers[0] === 'unpinContent' ? 'unpin' : 'none', 'applyFileEvent reports the executed marker');
    assert.equal(applied.changed, before.value !== after.value || JSON.stringify(before.context) !== JSON.stringify(after.context), 'changed iff the record changed');
    // A pin is only asked for when none is held, an unpin only for a pin held (machine header: demoted records).
    if (markers[0] === 'pinContent') assert.equal(before.context.pinned, false);
    if (markers[0] === 'unpinContent') assert.equal(before.context.pinned, true);
    // Invariants per state (spec §3.1, §4.2; notes C3, C4, C7).
    if (after.value === 'confirmed') assert.equal(after.context.expiresAt, null, 'a confirmed file never expires');
    if (after.value === 'confirmed' && before.value !== 'confirmed') {
      assert.deepEqual([after.context.pinned, after.context.heldLocally, after.context.confirmedAt], [true, true, event.at], 'confirming pins, holds and stamps confirmedAt');
    }
    if (after.value === 'expired' && before.value !== 'expired') assert.deepEqual([after.context.pinned, after.context.heldLocally], [false, false], 'expiry releases');
    if (event.type === 'file.expire' && before.value === 'temporary') assert.equal(after.value, event.at > EXPIRES ? 'expired' : 'temporary', 'expiry strictly after expiresAt');
  },
});
