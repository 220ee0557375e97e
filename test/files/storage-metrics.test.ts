// The pure shaping of storage metrics and legacy node info, and the disk-claim rule (docs/specs/files-node.md §2.4,
// §2.6; docs/notes/files-node.md A.9, B.5, C-shapes).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimFits, legacyNodeInfo, reclaimableBytes, storageMetrics, usableBytes, type DiskMeasurement } from '../../src/files/storage-metrics.js';

const MEASURED: DiskMeasurement = {
  measuredAt: 1_700_000_000_000,
  blockstoreBytes: 3 * 1_048_576 + 524_288,
  datastoreBytes: 262_144,
  availableBytes: 10 * 1_048_576 + 1,
  pinnedBytes: 2_000_000,
  reclaimableBytes: reclaimableBytes(3 * 1_048_576 + 524_288, 2_000_000),
  files: { temporary: 1, confirmed: 5, expired: 2 },
  stagedReplicas: 3,
};
const GC = { enabled: true, schedule: '0 */15 * * * *', running: false, lastRun: { startedAt: 1, durationMs: 2, dryRun: false, collected: true, trigger: 'force', releasedCount: 0, removedBlocks: 3, errors: ['x'] } };
const SETTINGS = { diskReserveBytes: 4 * 1_048_576, replication: { enabled: true, repairEnabled: false } };

test('storage metrics: flat byte fields, usable = available − reserved, counts, gc and replication state', () => {
  const metrics = storageMetrics(MEASURED, GC, SETTINGS, 1_700_000_000_500);
  assert.deepEqual(metrics, {
    timestamp: 1_700_000_000_500,
    measuredAt: MEASURED.measuredAt,
    pinnedBytes: 2_000_000,
    reclaimableBytes: MEASURED.blockstoreBytes - 2_000_000,
    availableBytes: MEASURED.availableBytes,
    reservedBytes: SETTINGS.diskReserveBytes,
    usableBytes: MEASURED.availableBytes - SETTINGS.diskReserveBytes,
    files: { temporary: 1, confirmed: 5, expired: 2 },
    stagedReplicas: 3,
    gc: GC,
    replication: { enabled: true, protocol: '/adamant/replication/1.0.0', repairEnabled: false, running: false, cycle: null },
  });
  assert.notEqual(metrics.gc.lastRun!.errors, GC.lastRun.errors, 'a copy: callers cannot change the board');
});

test('storage metrics before the first scan: measuredAt null, zero bytes and counts', () => {
  const metrics = storageMetrics(null, { ...GC, lastRun: null }, SETTINGS, 5);
  assert.equal(metrics.measuredAt, null);
  assert.equal(metrics.availableBytes, 0);
  assert.equal(metrics.usableBytes, 0);
  assert.deepEqual(metrics.files, { temporary: 0, confirmed: 0, expired: 0 });
  assert.equal(metrics.gc.lastRun, null);
});

test('byte arithmetic never goes below 0', () => {
  assert.equal(reclaimableBytes(100, 500), 0);
  assert.equal(usableBytes(100, 500), 0);
  assert.equal(usableBytes(500, 100), 400);
});

test('claims fit while free − claimed − request ≥ reserve (reaching the reserve exactly is allowed)', () => {
  assert.equal(claimFits(1_000, 0, 700, 300), true);
  assert.equal(claimFits(1_000, 1, 700, 300), false);
  assert.equal(claimFits(1_000, 400, 400, 300), false);
  assert.equal(claimFits(0, 0, 0, 0), true);
  assert.equal(claimFits(10, 0, 0, 11), false, 'a reserve above the free space refuses even an empty request');
});

test('legacy info: fractional MB sizes, whole MB free space, heliaStatus alias, no identity', () => {
  const info = legacyNodeInfo(MEASURED, 'started', '1.2.3', 42);
  assert.deepEqual(info, {
    version: '1.2.3',
    timestamp: 42,
    runtimeStatus: 'started',
    heliaStatus: 'started',
    blockstoreSizeMb: 3.5,
    datastoreSizeMb: 0.25,
    availableSizeInMb: 10,
  });
  assert.deepEqual(legacyNodeInfo(null, 'stopped', '1.2.3', 1), {
    version: '1.2.3', timestamp: 1, runtimeStatus: 'stopped', heliaStatus: 'stopped', blockstoreSizeMb: 0, datastoreSizeMb: 0, availableSizeInMb: 0,
  });
});
