// The health checkpoint, pure (docs/specs/files-node.md §2.3 rules 1–7, §3.2; docs/notes/files-node.md A.6, C5, C17–C19).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import {
  HEALTH_CHECK_NAMES,
  evaluateCheckpoint,
  initialSnapshot,
  membershipVersion,
  parseCheckpoint,
  readHealth,
  roundStart,
  type FreshnessInputs,
  type HealthInputs,
  type HealthSettings,
  type HealthSnapshot,
  type PersistedCheckpoint,
} from '../../src/files/health.js';

const INTERVAL = 60_000;
const T0 = 1_700_000_010_000; // 30 s into a round (rounds start at multiples of 60 000)
const settings: HealthSettings = {
  intervalMs: INTERVAL,
  maxCheckpointAgeMs: 3 * INTERVAL,
  storageMaxAgeMs: 2 * INTERVAL,
  repairMaxAgeMs: 3_600_000,
  requiredPeerCount: 1,
  diskReserveBytes: 1_000,
};
const MV = membershipVersion(['peerA', 'peerB', 'peerC']);
const OTHER_MV = membershipVersion(['peerA', 'peerB']);
const META = { version: '0.1.0', startedAt: T0 - 5_000 };

/** Everything passing, measured just now. */
function healthy(now: number, over: Partial<HealthInputs> = {}): HealthInputs {
  return {
    startup: { complete: true, healthy: true },
    runtimeStarted: true,
    storage: { measuredAt: now - 1_000, availableBytes: 10_000 },
    repair: { required: true, lastCompleteAt: now - 10_000, backlog: 0, lastCycleSuccessful: true },
    attestedPeers: 1,
    ...over,
  };
}

const checkpoint = (over: Partial<PersistedCheckpoint> = {}): PersistedCheckpoint => ({
  version: 1,
  membershipVersion: MV,
  height: roundStart(T0 - INTERVAL, INTERVAL),
  completedAt: T0 - INTERVAL,
  attestedPeers: 1,
  ...over,
});

/** A snapshot evaluated as `ready` at `at`, then read at `now`. */
function readyAt(at: number): HealthSnapshot {
  const { snapshot } = evaluateCheckpoint(null, null, healthy(at), settings, MV, at);
  assert.equal(snapshot.state, 'ready');
  return snapshot;
}

test('membership.version: sha256 hex of the sorted peer ids joined with \\n, order-independent (C17)', () => {
  const expected = createHash('sha256').update('a\nb\nc').digest('hex');
  assert.equal(membershipVersion(['c', 'a', 'b']), expected);
  assert.equal(membershipVersion(['a', 'b', 'c']), expected);
  assert.match(membershipVersion([]), /^[a-f0-9]{64}$/);
  assert.notEqual(membershipVersion(['a', 'b']), expected);
});

test('all prerequisites pass → ready, height = start of the current round, a checkpoint to persist (C18)', () => {
  const { snapshot, persist } = evaluateCheckpoint(null, null, healthy(T0), settings, MV, T0);
  assert.equal(snapshot.state, 'ready');
  assert.equal(snapshot.height, T0 - 30_000);
  assert.equal(snapshot.height % INTERVAL, 0);
  assert.equal(snapshot.evaluatedAt, T0);
  assert.equal(snapshot.observedAt, T0);
  assert.deepEqual(Object.keys(snapshot.checks).sort(), [...HEALTH_CHECK_NAMES].sort());
  assert.ok(Object.values(snapshot.checks).every(Boolean));
  assert.deepEqual(persist, { version: 1, membershipVersion: MV, height: T0 - 30_000, completedAt: T0, attestedPeers: 1 });
  assert.deepEqual(snapshot.membership, { version: MV, requiredPeers: 1, attestedPeers: 1 });
});

test('height is monotonic and always a multiple of the interval', () => {
  let previous: PersistedCheckpoint | null = null;
  let observed: number | null = null;
  let last = 0;
  for (const now of [T0, T0 + 1, T0 + 29_999, T0 + 30_000, T0 + 95_000, T0 + 200_000]) {
    const { snapshot, persist } = evaluateCheckpoint(previous, observed, healthy(now), settings, MV, now);
    assert.equal(snapshot.state, 'ready');
    assert.ok(snapshot.height >= last, `height ${snapshot.height} at ${now} went below ${last}`);
    assert.equal(snapshot.height % INTERVAL, 0);
    assert.equal(snapshot.height, roundStart(now, INTERVAL));
    last = snapshot.height;
    previous = persist;
    observed = snapshot.observedAt;
  }
  // A recorded height above the current round is kept (max), never lowered.
  const high = checkpoint({ height: roundStart(T0, INTERVAL) + INTERVAL, completedAt: T0 - 1 });
  const { snapshot } = evaluateCheckpoint(high, T0 - 1, healthy(T0), settings, MV, T0);
  assert.equal(snapshot.height, high.height);
});

test('rule 5: two healthy nodes evaluated either side of a round boundary report heights one interval apart', () => {
  const boundary = roundStart(T0, INTERVAL) + INTERVAL;
  const a = evaluateCheckpoint(null, null, healthy(boundary - 1), settings, MV, boundary - 1).snapshot;
  const b = evaluateCheckpoint(null, null, healthy(boundary), settings, MV, boundary).snapshot;
  assert.equal(b.height - a.height, INTERVAL);
  assert.equal(a.membership.version, b.membership.version);
});

test('rule 3: any failing prerequisite freezes the height and persists nothing', () => {
  const prev = checkpoint();
  const failures: Array<[string, HealthInputs, keyof HealthSnapshot['checks']]> = [
    ['startup unhealthy', healthy(T0, { startup: { complete: true, healthy: false } }), 'startupReconciliation'],
    ['runtime down', healthy(T0, { runtimeStarted: false }), 'runtime'],
    ['storage never measured', healthy(T0, { storage: { measuredAt: null, availableBytes: 10_000 } }), 'storageFresh'],
    ['storage too old', healthy(T0, { storage: { measuredAt: T0 - 2 * INTERVAL - 1, availableBytes: 10_000 } }), 'storageFresh'],
    ['reserve short', healthy(T0, { storage: { measuredAt: T0, availableBytes: 999 } }), 'storageReserve'],
    ['reserve unknown', healthy(T0, { storage: { measuredAt: T0, availableBytes: null } }), 'storageReserve'],
    ['repair backlog', healthy(T0, { repair: { required: true, lastCompleteAt: T0 - 1, backlog: 3, lastCycleSuccessful: true } }), 'repairFresh'],
    ['repair cycle failed', healthy(T0, { repair: { required: true, lastCompleteAt: T0 - 1, backlog: 0, lastCycleSuccessful: false } }), 'repairFresh'],
    ['repair never completed', healthy(T0, { repair: { required: true, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: true } }), 'repairFresh'],
    ['repair too old', healthy(T0, { repair: { required: true, lastCompleteAt: T0 - 3_600_001, backlog: 0, lastCycleSuccessful: true } }), 'repairFresh'],
    ['too few attestations', healthy(T0, { attestedPeers: 0 }), 'peerAttestations'],
  ];
  for (const [label, inputs, check] of failures) {
    const { snapshot, persist } = evaluateCheckpoint(prev, prev.completedAt, inputs, settings, MV, T0);
    assert.equal(persist, null, label);
    assert.equal(snapshot.checks[check], false, label);
    assert.equal(snapshot.state, 'degraded', label);
    assert.equal(snapshot.height, prev.height, `${label}: height frozen`);
    assert.equal(snapshot.observedAt, prev.completedAt, `${label}: observedAt is the last successful attempt`);
    assert.equal(snapshot.evaluatedAt, T0, `${label}: evaluatedAt is this attempt`);
  }
});

test('exact-equal ages are still valid (storage, repair, checkpoint)', () => {
  const inputs = healthy(T0, {
    storage: { measuredAt: T0 - settings.storageMaxAgeMs, availableBytes: settings.diskReserveBytes },
    repair: { required: true, lastCompleteAt: T0 - settings.repairMaxAgeMs, backlog: 0, lastCycleSuccessful: true },
  });
  const { snapshot } = evaluateCheckpoint(null, null, inputs, settings, MV, T0);
  assert.equal(snapshot.state, 'ready', 'reserve exactly met, storage and repair exactly at their maximum age');

  // A failing attempt with a checkpoint exactly maxAge old: degraded, not stale.
  const prev = checkpoint({ completedAt: T0 - settings.maxCheckpointAgeMs });
  const failing = evaluateCheckpoint(prev, prev.completedAt, healthy(T0, { attestedPeers: 0 }), settings, MV, T0).snapshot;
  assert.equal(failing.state, 'degraded');
  assert.equal(failing.checks.checkpointFresh, true);

  // A read exactly maxAge after the observation: still ready.
  const ready = readyAt(T0);
  const fresh: FreshnessInputs = {
    storage: { measuredAt: T0 + settings.maxCheckpointAgeMs - 1 },
    repair: { required: false, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false },
  };
  const atLimit = readHealth(ready, fresh, settings, T0 + settings.maxCheckpointAgeMs, META);
  assert.equal(atLimit.state, 'ready');
  assert.equal(atLimit.checkpoint.ageMs, settings.maxCheckpointAgeMs);
  assert.equal(atLimit.checks.checkpointFresh, true);
  const past = readHealth(ready, fresh, settings, T0 + settings.maxCheckpointAgeMs + 1, META);
  assert.equal(past.state, 'stale');
  assert.equal(past.checks.checkpointFresh, false);
});

test('rule 4: a clock behind the recorded checkpoint clears clockConsistent and freezes height until it catches up', () => {
  const prev = checkpoint({ completedAt: T0, height: roundStart(T0, INTERVAL) });
  const behind = T0 - 120_000;
  const inputs = healthy(behind);
  const { snapshot, persist } = evaluateCheckpoint(prev, prev.completedAt, inputs, settings, MV, behind);
  assert.equal(snapshot.checks.clockConsistent, false);
  assert.equal(snapshot.checks.storageFresh, false, 'freshness cannot be proven on an inconsistent clock');
  assert.equal(snapshot.checks.repairFresh, false);
  assert.equal(persist, null);
  assert.equal(snapshot.height, prev.height);
  assert.equal(snapshot.state, 'degraded');

  // Behind a storage measurement or a repair completion counts the same.
  const aheadStorage = evaluateCheckpoint(null, null, healthy(T0, { storage: { measuredAt: T0 + 1, availableBytes: 10_000 } }), settings, MV, T0);
  assert.equal(aheadStorage.snapshot.checks.clockConsistent, false);
  const aheadRepair = evaluateCheckpoint(
    null,
    null,
    healthy(T0, { repair: { required: false, lastCompleteAt: T0 + 1, backlog: 0, lastCycleSuccessful: true } }),
    settings,
    MV,
    T0,
  );
  assert.equal(aheadRepair.snapshot.checks.clockConsistent, false);
  assert.equal(aheadRepair.persist, null);

  // Caught up (now ≥ completedAt): consistent again and the height advances.
  const later = T0 + INTERVAL;
  const caught = evaluateCheckpoint(prev, prev.completedAt, healthy(later), settings, MV, later);
  assert.equal(caught.snapshot.checks.clockConsistent, true);
  assert.equal(caught.snapshot.state, 'ready');
  assert.equal(caught.snapshot.height, prev.height + INTERVAL);
  // Equal is not behind.
  assert.equal(evaluateCheckpoint(prev, prev.completedAt, healthy(T0), settings, MV, T0).snapshot.checks.clockConsistent, true);
});

test('rule 6: a checkpoint earned under another membership is discarded: height 0 until the first valid checkpoint', () => {
  const foreign = checkpoint({ membershipVersion: OTHER_MV, completedAt: T0 - 10 * settings.maxCheckpointAgeMs });
  const failing = evaluateCheckpoint(foreign, foreign.completedAt, healthy(T0, { attestedPeers: 0 }), settings, MV, T0).snapshot;
  assert.equal(failing.height, 0);
  assert.equal(failing.observedAt, null);
  assert.equal(failing.state, 'degraded', 'no checkpoint under this membership: degraded, not stale');
  assert.equal(failing.membership.version, MV);

  const { snapshot, persist } = evaluateCheckpoint(foreign, foreign.completedAt, healthy(T0), settings, MV, T0);
  assert.equal(snapshot.height, roundStart(T0, INTERVAL));
  assert.equal(persist?.membershipVersion, MV);
  // A foreign checkpoint with a higher height does not leak into the new membership's height.
  const tall = checkpoint({ membershipVersion: OTHER_MV, height: roundStart(T0, INTERVAL) + 10 * INTERVAL, completedAt: T0 });
  assert.equal(evaluateCheckpoint(tall, T0, healthy(T0), settings, MV, T0).snapshot.height, roundStart(T0, INTERVAL));
});

test('rule 7: requiredPeerCount 0 → peerAttestations true with no attested peer', () => {
  const solo = { ...settings, requiredPeerCount: 0 };
  const { snapshot } = evaluateCheckpoint(null, null, healthy(T0, { attestedPeers: 0 }), solo, MV, T0);
  assert.equal(snapshot.checks.peerAttestations, true);
  assert.equal(snapshot.state, 'ready');
  assert.deepEqual(snapshot.membership, { version: MV, requiredPeers: 0, attestedPeers: 0 });
  // More attested than required is fine too.
  assert.equal(evaluateCheckpoint(null, null, healthy(T0, { attestedPeers: 2 }), settings, MV, T0).snapshot.checks.peerAttestations, true);
});

test('rule 2: repair not required → repairFresh true whatever the repair evidence', () => {
  const inputs = healthy(T0, { repair: { required: false, lastCompleteAt: null, backlog: 7, lastCycleSuccessful: false } });
  const { snapshot } = evaluateCheckpoint(null, null, inputs, settings, MV, T0);
  assert.equal(snapshot.checks.repairFresh, true);
  assert.equal(snapshot.state, 'ready');
  const body = readHealth(snapshot, null, settings, T0 + 10 * settings.repairMaxAgeMs, META);
  assert.equal(body.checks.repairFresh, true);
  assert.deepEqual(body.replication, { repairRequired: false, lastCompleteAt: null, ageMs: null, backlog: 7 });
});

test('startup incomplete → starting, whatever else fails (C5); complete but unhealthy → degraded', () => {
  const prev = checkpoint({ completedAt: T0 - 10 * settings.maxCheckpointAgeMs });
  const inputs = healthy(T0, { startup: { complete: false, healthy: false }, runtimeStarted: false });
  const { snapshot, persist } = evaluateCheckpoint(prev, prev.completedAt, inputs, settings, MV, T0);
  assert.equal(snapshot.state, 'starting', 'starting wins over an expired checkpoint');
  assert.equal(snapshot.checks.startupReconciliation, false);
  assert.equal(persist, null);
  // Reads never make a starting node stale.
  assert.equal(readHealth(snapshot, null, settings, T0 + 100 * INTERVAL, META).state, 'starting');
});

test('a failing attempt is stale when the checkpoint is older than the maximum age (C5), else degraded', () => {
  const old = checkpoint({ completedAt: T0 - settings.maxCheckpointAgeMs - 1 });
  const inputs = healthy(T0, { runtimeStarted: false });
  assert.equal(evaluateCheckpoint(old, old.completedAt, inputs, settings, MV, T0).snapshot.state, 'stale');
  const recent = checkpoint({ completedAt: T0 - settings.maxCheckpointAgeMs });
  assert.equal(evaluateCheckpoint(recent, recent.completedAt, inputs, settings, MV, T0).snapshot.state, 'degraded');
});

test('a node that never checkpointed is degraded, never stale, on evaluation and on read (C19)', () => {
  const { snapshot } = evaluateCheckpoint(null, null, healthy(T0, { attestedPeers: 0 }), settings, MV, T0);
  assert.equal(snapshot.state, 'degraded');
  assert.equal(snapshot.height, 0);
  assert.equal(snapshot.observedAt, null);
  assert.equal(snapshot.checks.checkpointFresh, false);
  const body = readHealth(snapshot, null, settings, T0 + 1_000 * INTERVAL, META);
  assert.equal(body.state, 'degraded');
  assert.equal(body.checkpoint.ageMs, null);
  assert.equal(body.checkpoint.observedAt, null);
});

test('read: ready → degraded when a read-time freshness check fails before the checkpoint expires (§3.2)', () => {
  const ready = readyAt(T0);
  const now = T0 + INTERVAL;
  const good: FreshnessInputs = {
    storage: { measuredAt: now - 1 },
    repair: { required: true, lastCompleteAt: now - 1, backlog: 0, lastCycleSuccessful: true },
  };
  assert.equal(readHealth(ready, good, settings, now, META).state, 'ready');

  const oldStorage = readHealth(ready, { ...good, storage: { measuredAt: now - settings.storageMaxAgeMs - 1 } }, settings, now, META);
  assert.equal(oldStorage.state, 'degraded');
  assert.equal(oldStorage.checks.storageFresh, false);
  assert.equal(oldStorage.storage.measurementAgeMs, settings.storageMaxAgeMs + 1);

  const backlog = readHealth(ready, { ...good, repair: { ...good.repair, backlog: 1 } }, settings, now, META);
  assert.equal(backlog.state, 'degraded');
  assert.equal(backlog.checks.repairFresh, false);
  assert.equal(backlog.replication.backlog, 1);

  // Without current evidence, the snapshot's own evidence ages: storage measured at T0−1000 is too old 2 intervals on.
  const aged = readHealth(ready, null, settings, T0 + settings.storageMaxAgeMs, META);
  assert.equal(aged.checks.storageFresh, false);
  assert.equal(aged.state, 'degraded');
});

test('read: a clock behind the evaluation clears clockConsistent (only ever cleared on read)', () => {
  const ready = readyAt(T0);
  const body = readHealth(ready, null, settings, T0 - 1, META);
  assert.equal(body.checks.clockConsistent, false);
  assert.equal(body.checks.storageFresh, false);
  assert.equal(body.state, 'degraded');
  assert.equal(body.checkpoint.ageMs, 0, 'ages are never negative');

  const inconsistent = evaluateCheckpoint(null, null, healthy(T0, { storage: { measuredAt: T0 + 5, availableBytes: 10_000 } }), settings, MV, T0).snapshot;
  assert.equal(readHealth(inconsistent, null, settings, T0 + 10, META).checks.clockConsistent, false, 'not set again by a read');
});

test('read never upgrades: degraded stays degraded and stale stays stale with every check passing', () => {
  const degraded = evaluateCheckpoint(checkpoint(), T0 - INTERVAL, healthy(T0, { attestedPeers: 0 }), settings, MV, T0).snapshot;
  assert.equal(degraded.state, 'degraded');
  const now = T0 + 1;
  const good: FreshnessInputs = {
    storage: { measuredAt: now },
    repair: { required: true, lastCompleteAt: now, backlog: 0, lastCycleSuccessful: true },
  };
  const body = readHealth(degraded, good, settings, now, META);
  assert.equal(body.state, 'degraded');
  assert.equal(body.checks.checkpointFresh && body.checks.storageFresh && body.checks.repairFresh, true);

  const old = checkpoint({ completedAt: T0 - settings.maxCheckpointAgeMs - 1 });
  const stale = evaluateCheckpoint(old, old.completedAt, healthy(T0, { attestedPeers: 0 }), settings, MV, T0).snapshot;
  assert.equal(stale.state, 'stale');
  assert.equal(readHealth(stale, good, settings, now, META).state, 'stale');
  // Degraded turns stale on read once the checkpoint ages past the maximum.
  assert.equal(readHealth(degraded, good, settings, T0 - INTERVAL + settings.maxCheckpointAgeMs + 1, META).state, 'stale');
});

test('the Health object: every §2.3 field, exactly the 8 check names, timestamp = now, uptime, ages', () => {
  const ready = readyAt(T0);
  const now = T0 + 1_500;
  const body = readHealth(ready, null, settings, now, META);
  assert.deepEqual(Object.keys(body).sort(), [
    'checkpoint', 'checks', 'evaluatedAt', 'height', 'membership', 'replication', 'startup', 'state', 'storage', 'timestamp', 'uptimeMs', 'version',
  ]);
  assert.deepEqual(Object.keys(body.checks), [...HEALTH_CHECK_NAMES]);
  assert.equal(HEALTH_CHECK_NAMES.length, 8);
  assert.ok(Object.values(body.checks).every((v) => typeof v === 'boolean'));
  assert.equal(body.version, '0.1.0');
  assert.equal(body.timestamp, now);
  assert.equal(body.uptimeMs, now - META.startedAt);
  assert.equal(body.evaluatedAt, T0);
  assert.equal(body.height, roundStart(T0, INTERVAL));
  assert.deepEqual(body.checkpoint, { intervalMs: INTERVAL, observedAt: T0, ageMs: 1_500, maxAgeMs: settings.maxCheckpointAgeMs });
  assert.deepEqual(body.membership, { version: MV, requiredPeers: 1, attestedPeers: 1 });
  assert.match(body.membership.version, /^[a-f0-9]{64}$/);
  assert.deepEqual(body.startup, { complete: true, healthy: true });
  assert.deepEqual(body.storage, { measuredAt: T0 - 1_000, measurementAgeMs: 2_500, reserveHealthy: true });
  assert.deepEqual(body.replication, { repairRequired: true, lastCompleteAt: T0 - 10_000, ageMs: 11_500, backlog: 0 });
  assert.equal(body.state, 'ready');
});

test('rule 1: only the three freshness checks are recomputed on read; the others describe evaluatedAt', () => {
  const snap = evaluateCheckpoint(null, null, healthy(T0, { runtimeStarted: false, attestedPeers: 0 }), settings, MV, T0).snapshot;
  const body = readHealth(snap, null, settings, T0 + 1, META);
  assert.equal(body.checks.runtime, false);
  assert.equal(body.checks.peerAttestations, false);
  assert.equal(body.checks.startupReconciliation, true);
  assert.equal(body.checks.storageReserve, true);
  assert.equal(body.evaluatedAt, T0);
});

test('before the first attempt: starting, with a restored same-membership height; a foreign one is ignored', () => {
  const restored = checkpoint();
  const snap = initialSnapshot(restored, settings, MV, T0);
  assert.equal(snap.state, 'starting');
  assert.equal(snap.height, restored.height);
  assert.equal(snap.observedAt, restored.completedAt);
  assert.equal(readHealth(snap, null, settings, T0 + 100 * INTERVAL, META).state, 'starting');
  const foreign = initialSnapshot(checkpoint({ membershipVersion: OTHER_MV }), settings, MV, T0);
  assert.equal(foreign.height, 0);
  assert.equal(foreign.observedAt, null);
  assert.deepEqual(Object.keys(foreign.checks).sort(), [...HEALTH_CHECK_NAMES].sort());
});

test('persisted checkpoint: version 1 is read back, anything else is discarded', () => {
  const good = checkpoint();
  assert.deepEqual(parseCheckpoint(JSON.parse(JSON.stringify(good))), good);
  assert.equal(parseCheckpoint({ ...good, version: 2 }), null);
  assert.equal(parseCheckpoint({ ...good, version: undefined }), null);
  assert.equal(parseCheckpoint({ ...good, membershipVersion: 'nope' }), null);
  assert.equal(parseCheckpoint({ ...good, height: -1 }), null);
  assert.equal(parseCheckpoint({ ...good, completedAt: 1.5 }), null);
  assert.equal(parseCheckpoint({ ...good, attestedPeers: '1' }), null);
  assert.equal(parseCheckpoint(null), null);
  assert.equal(parseCheckpoint('{}'), null);
});
