// Node and storage-state routes of one in-process files node (supervisor + real helia runtime + the files actors
// + the uWS listener on 127.0.0.1): the Health object and its checkpoint over restarts, legacy info, admin
// details and storage metrics (docs/specs/files-node.md §2.3-§2.6, §3.2, §4.1, §4.3, §5; docs/notes/files-node.md E4, E6,
// E10, E11, E14, E15, E18, E50).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { DiskClaim } from '../../../actors/files/disk.actor.js';
import { HEALTH_CHECKPOINT_KEY } from '../../../actors/files/health.actor.js';
import { FILES_DISK_ID } from '../../../actors/files/tree.js';
import { FILES_VERSION } from '../../../src/files/version.js';
import { InsufficientStorageError } from '../../../src/files/errors.js';
import { HEALTH_CHECK_NAMES, membershipVersion, type HealthObject } from '../../../src/files/health.js';
import { openSqliteRegistry } from '../../../storage/files/registry.sqlite.js';
import { freePort } from '../../support/cli.js';
import { waitFor } from '../../support/wait.js';
import { startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';

const KEY = '3f9a1c7e5b2d8064a9e1f3c5b7d9e0a2c4f6b8d0e2a4c6e8f0b2d4f6a8c0e2b4';
const INTERVAL = 1_000;

type Node = TestFilesNode;

const startNode = (storeDirectory: string, overrides: Record<string, unknown> = {}) =>
  startTestFilesNode(storeDirectory, [
    {
      adminApiKey: KEY,
      diskUsageScanPeriod: '* * * * * *',
      health: { checkpointIntervalMs: INTERVAL },
      storage: { maxConcurrentUploads: 7, maxConcurrentDownloads: 9, maxConcurrentDownloadsPerClient: 3 },
    },
    overrides,
  ]);

const get = async (node: Node, path: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`http://127.0.0.1:${node.port}${path}`, { headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
};
const health = async (node: Node): Promise<HealthObject> => {
  const { status, body } = await get(node, '/api/node/health');
  assert.equal(status, 200, 'health answers 200 in every state');
  return body as HealthObject;
};
const untilReady = (node: Node, what = 'ready') =>
  waitFor(async () => {
    const read = await health(node);
    return read.state === 'ready' ? read : undefined;
  }, { timeoutMs: 10 * INTERVAL, intervalMs: 50, what });

const isCount = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isCountOrNull = (value: unknown) => value === null || isCount(value);

describe('node routes on one node', () => {
  let home: string;
  let node: Node;
  const seen: Array<{ state: string; startupComplete: boolean }> = [];

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-node-'));
    node = await startNode(join(home, '.adm-ipfs'));
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('E6: a fresh node reaches ready within 10 intervals, startup complete and height > 0; every read answered 200', async (t) => {
    // Polled from the moment the port opened; `health()` asserts the 200 of every read, whatever the state.
    const ready = await waitFor(async () => {
      const read = await health(node);
      seen.push({ state: read.state, startupComplete: read.startup.complete });
      return read.state === 'ready' ? read : undefined;
    }, { timeoutMs: 10 * INTERVAL, intervalMs: 20, what: 'ready within 10 intervals' });
    assert.equal(ready.startup.complete, true);
    assert.equal(ready.startup.healthy, true);
    assert.ok(ready.height > 0);
    assert.equal(ready.height % INTERVAL, 0, 'the start of a fixed round');
    assert.ok(ready.height <= ready.timestamp);
    // Whether `starting` is caught over HTTP depends on how fast the walk is (an empty store: milliseconds);
    // test/actors/files/health.actor.test.ts holds the walk back to prove it.
    t.diagnostic(`states seen before ready: ${[...new Set(seen.map((read) => read.state))].join(', ')}`);
    for (const read of seen) {
      assert.ok(['starting', 'ready', 'degraded'].includes(read.state), `a fresh node is never stale: ${read.state}`);
      if (read.state === 'starting') assert.equal(read.startupComplete, false, '`starting` means the walk has not finished');
    }
  });

  it('E4/E11: every field of the Health object, exactly the 8 checks, a 64-hex membership version', async () => {
    const read = await untilReady(node);
    assert.deepEqual(Object.keys(read).sort(), [
      'checkpoint', 'checks', 'evaluatedAt', 'height', 'membership', 'replication', 'startup', 'state', 'storage', 'timestamp', 'uptimeMs', 'version',
    ]);
    assert.equal(read.version, FILES_VERSION);
    assert.ok(isCount(read.uptimeMs));
    assert.ok(isCount(read.height) && isCount(read.timestamp) && isCount(read.evaluatedAt));
    assert.ok(read.evaluatedAt <= read.timestamp);
    assert.ok(Math.abs(read.timestamp - Date.now()) < 5_000);

    assert.deepEqual(Object.keys(read.checkpoint).sort(), ['ageMs', 'intervalMs', 'maxAgeMs', 'observedAt']);
    assert.equal(read.checkpoint.intervalMs, INTERVAL);
    assert.ok(read.checkpoint.maxAgeMs >= 1_000);
    assert.ok(isCount(read.checkpoint.observedAt) && isCount(read.checkpoint.ageMs));

    assert.deepEqual(Object.keys(read.membership).sort(), ['attestedPeers', 'requiredPeers', 'version']);
    assert.match(read.membership.version, /^[a-f0-9]{64}$/);
    assert.equal(read.membership.version, membershipVersion([]), 'digest of the (empty) configured node list');
    assert.deepEqual(Object.keys(read.startup).sort(), ['complete', 'healthy']);
    assert.deepEqual(Object.keys(read.storage).sort(), ['measuredAt', 'measurementAgeMs', 'reserveHealthy']);
    assert.ok(isCountOrNull(read.storage.measuredAt) && isCountOrNull(read.storage.measurementAgeMs));
    assert.equal(read.storage.reserveHealthy, true);
    assert.deepEqual(Object.keys(read.replication).sort(), ['ageMs', 'backlog', 'lastCompleteAt', 'repairRequired']);
    assert.ok(isCountOrNull(read.replication.lastCompleteAt) && isCountOrNull(read.replication.ageMs) && isCount(read.replication.backlog));

    assert.deepEqual(Object.keys(read.checks).sort(), [...HEALTH_CHECK_NAMES].sort());
    assert.equal(Object.keys(read.checks).length, 8);
    for (const [name, value] of Object.entries(read.checks)) assert.equal(typeof value, 'boolean', name);
    assert.ok(Object.values(read.checks).every(Boolean), JSON.stringify(read.checks));

    // E11: no peer required → the attestation check passes on this node's own evidence.
    assert.equal(read.checks.peerAttestations, true);
    assert.deepEqual({ requiredPeers: read.membership.requiredPeers, attestedPeers: read.membership.attestedPeers }, { requiredPeers: 0, attestedPeers: 0 });
  });

  it('the operator view sees the checkpoint machine behind files.health (statechart id, state value, events)', () => {
    const record = node.runtime.inspector.get('files.health');
    assert.ok(record);
    assert.equal(record.machineId, 'filesHealthCheckpoint');
    assert.ok(['checking', 'deciding', 'persisting', 'idle'].includes(record.stateValue as string), String(record.stateValue));
    assert.ok(record.events.some((event) => event.type.startsWith('xstate.done.actor')), 'attempts are recorded');
    assert.equal(node.runtime.inspector.get('files.disk')?.status, 'running');
  });

  it('the height keeps advancing with the rounds and never goes back', async () => {
    const first = await untilReady(node);
    const later = await waitFor(async () => {
      const read = await health(node);
      assert.ok(read.height >= first.height, 'monotonic');
      return read.state === 'ready' && read.height > first.height ? read : undefined;
    }, { timeoutMs: 5 * INTERVAL, intervalMs: 50, what: 'a later round' });
    assert.equal((later.height - first.height) % INTERVAL, 0);
  });

  it('E14: legacy info has exactly the legacy fields and no peer identity or topology', async () => {
    await waitFor(async () => ((await get(node, '/api/storage/metrics')).body.measuredAt !== null ? true : undefined), { what: 'a scan' });
    const { status, body } = await get(node, '/api/node/info');
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body).sort(), ['availableSizeInMb', 'blockstoreSizeMb', 'datastoreSizeMb', 'heliaStatus', 'runtimeStatus', 'timestamp', 'version']);
    assert.equal(body.version, FILES_VERSION);
    assert.equal(body.runtimeStatus, 'started');
    assert.equal(body.heliaStatus, body.runtimeStatus, 'legacy alias (notes C16)');
    assert.ok(isCount(body.timestamp));
    assert.equal(typeof body.blockstoreSizeMb, 'number');
    assert.ok(body.datastoreSizeMb > 0, 'the datastore holds at least the peer key');
    assert.ok(Number.isInteger(body.availableSizeInMb) && body.availableSizeInMb > 0);
    assert.equal('peerId' in body, false);
    assert.equal('multiAddresses' in body, false);
  });

  it('E15: details need the key (401 without, 401 wrong) and carry identity, byte totals, health, http and concurrency', async () => {
    const none = await get(node, '/api/node/details');
    assert.equal(none.status, 401);
    assert.deepEqual(Object.keys(none.body), ['error']);
    const wrong = await get(node, '/api/node/details', { 'x-api-key': KEY.replace(/.$/, '0') });
    assert.equal(wrong.status, 401);
    assert.equal(typeof wrong.body.error, 'string');

    const { status, headers, body } = await get(node, '/api/node/details', { 'x-api-key': KEY });
    assert.equal(status, 200);
    assert.equal(headers.get('cache-control'), 'no-store');
    for (const key of ['version', 'timestamp', 'runtimeStatus', 'blockstoreSizeMb', 'datastoreSizeMb', 'availableSizeInMb']) assert.ok(key in body, key);
    assert.match(body.peerId, /^12D3KooW/);
    assert.ok(Array.isArray(body.multiAddresses) && body.multiAddresses.length > 0);
    for (const address of body.multiAddresses) assert.match(address, /^\/ip4\/127\.0\.0\.1\/tcp\/\d+/);
    for (const key of ['pinnedBytes', 'reclaimableBytes', 'availableBytes', 'reservedBytes']) assert.ok(isCount(body[key]), key);
    assert.ok(body.availableBytes > 0);
    assert.equal(body.reservedBytes, 0);
    assert.ok(['starting', 'ready', 'stale', 'degraded'].includes(body.health.state));
    assert.equal(Object.keys(body.health.checks).length, 8);

    assert.deepEqual(Object.keys(body.http).sort(), ['aborted', 'averageResponseTimeMs', 'inFlight', 'maxResponseTimeMs', 'requests', 'responses', 'totalResponseTimeMs']);
    assert.deepEqual(Object.keys(body.http.responses).sort(), ['2xx', '3xx', '4xx', '5xx']);
    assert.ok(body.http.requests > 0 && body.http.responses['2xx'] > 0);
    assert.ok(body.http.responses['4xx'] >= 2, 'the two 401s above');
    assert.ok(body.http.inFlight >= 1, 'this request is in flight');

    // E18: the configured admission limits.
    assert.deepEqual(body.concurrency, {
      uploads: { active: 0, limit: 7 },
      incomingCopies: { active: 0, limit: body.concurrency.incomingCopies.limit },
      downloads: { active: 0, limit: 9, perClientLimit: 3 },
    });
    assert.ok(body.concurrency.incomingCopies.limit >= 1);
  });

  it('E50: storage metrics are public, refresh on the scan schedule and show no CID or filename', async () => {
    const name = 'metrics-secret-name.txt';
    const bytes = Buffer.from(`metrics probe ${Date.now()} ${Math.random()}\n`);
    const body = new FormData();
    body.append('files', new Blob([new Uint8Array(bytes)]), name);
    const uploaded = await fetch(`http://127.0.0.1:${node.port}/api/file/upload`, { method: 'POST', body });
    assert.equal(uploaded.status, 200);
    const cid = ((await uploaded.json()) as { cids: string[] }).cids[0]!;
    const uploadedAt = Date.now();

    const metrics = await waitFor(async () => {
      const { status, body: read } = await get(node, '/api/storage/metrics');
      assert.equal(status, 200);
      return read.measuredAt > uploadedAt && read.files.confirmed >= 1 ? read : undefined;
    }, { timeoutMs: 5_000, what: 'a scan after the upload' });
    for (const key of ['pinnedBytes', 'reclaimableBytes', 'availableBytes', 'reservedBytes', 'usableBytes', 'stagedReplicas']) assert.ok(isCount(metrics[key]), key);
    assert.ok(metrics.pinnedBytes >= bytes.length, 'the uploaded file is pinned');
    assert.equal(metrics.usableBytes, Math.max(0, metrics.availableBytes - metrics.reservedBytes));
    assert.equal(metrics.stagedReplicas, 0);
    assert.deepEqual(Object.keys(metrics.files).sort(), ['confirmed', 'expired', 'temporary']);
    assert.ok('lastRun' in metrics.gc);
    assert.equal(typeof metrics.gc.enabled, 'boolean');
    assert.equal(typeof metrics.gc.running, 'boolean');
    if (metrics.gc.lastRun !== null) assert.ok(Array.isArray(metrics.gc.lastRun.errors));
    assert.equal(metrics.replication.protocol, '/adamant/replication/1.0.0');
    const text = JSON.stringify(metrics);
    assert.ok(!text.includes(cid), 'no CID');
    assert.ok(!text.includes(name), 'no filename');
    assert.ok(!/12D3KooW|Qm[1-9A-Za-z]{44}|bafy|bafk/.test(text), 'no peer id or CID-like text');
  });
});

describe('E10: a disk reserve above the free space', () => {
  let home: string;
  let node: Node;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-reserve-'));
    node = await startNode(join(home, '.adm-ipfs'), { storage: { diskReserveBytes: Number.MAX_SAFE_INTEGER } });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('is degraded with storageReserve and reserveHealthy false, never ready; disk claims are refused', async () => {
    const read = await waitFor(async () => {
      const current = await health(node);
      return current.startup.complete && current.storage.measuredAt !== null && current.evaluatedAt > current.storage.measuredAt ? current : undefined;
    }, { timeoutMs: 10 * INTERVAL, intervalMs: 50, what: 'an attempt that saw a measurement' });
    assert.equal(read.state, 'degraded');
    assert.equal(read.checks.storageReserve, false);
    assert.equal(read.storage.reserveHealthy, false);
    assert.equal(read.checks.storageFresh, true, 'the measurement itself is fresh');
    assert.equal(read.height, 0, 'no checkpoint was ever earned');

    // Stays so over further attempts.
    const deadline = Date.now() + 2 * INTERVAL;
    while (Date.now() < deadline) {
      assert.notEqual((await health(node)).state, 'ready');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const metrics = (await get(node, '/api/storage/metrics')).body;
    assert.equal(metrics.reservedBytes, Number.MAX_SAFE_INTEGER);
    assert.equal(metrics.usableBytes, 0);

    // The upload route's 507 is wired to this claim (notes A.9).
    await assert.rejects(
      node.runtime.ask<DiskClaim>(FILES_DISK_ID, { type: 'disk.claim', bytes: 1 }, { timeoutMs: 5_000 }),
      (error: unknown) => error instanceof InsufficientStorageError,
    );
    // E10: and the upload route answers 507 with it, before reading the body.
    const body = new FormData();
    body.append('files', new Blob([new TextEncoder().encode('reserve')]), 'r.txt');
    const upload = await fetch(`http://127.0.0.1:${node.port}/api/file/upload`, { method: 'POST', body });
    assert.equal(upload.status, 507);
    assert.deepEqual(await upload.json(), { error: 'Insufficient storage' });
  });
});

describe('health checkpoint across restarts on the same store', () => {
  let home: string;
  let store: string;

  before(() => {
    home = mkdtempSync(join(tmpdir(), 'files-restart-'));
    store = join(home, '.adm-ipfs');
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  const readCheckpoint = () => {
    const registry = openSqliteRegistry(join(store, 'registry.sqlite'));
    try {
      return registry.getState<{ version: number; membershipVersion: string; height: number; completedAt: number; attestedPeers: number }>(HEALTH_CHECKPOINT_KEY);
    } finally {
      registry.close();
    }
  };
  const writeCheckpoint = (value: unknown) => {
    const registry = openSqliteRegistry(join(store, 'registry.sqlite'));
    try {
      registry.setState(HEALTH_CHECKPOINT_KEY, value);
    } finally {
      registry.close();
    }
  };

  /** Polls from the first read on until ready, applying `check` to every read on the way. */
  const readsUntilReady = async (node: Node, check: (read: HealthObject) => void): Promise<HealthObject> =>
    waitFor(async () => {
      const read = await health(node);
      check(read);
      return read.state === 'ready' ? read : undefined;
    }, { timeoutMs: 10 * INTERVAL, intervalMs: 20, what: 'ready after the restart' });

  it('the height never decreases after a restart; a changed node list resets it', async () => {
    const first = await startNode(store);
    let earned: number;
    try {
      earned = (await untilReady(first)).height;
    } finally {
      await first.stop();
    }
    const persisted = readCheckpoint();
    assert.ok(persisted);
    assert.equal(persisted.version, 1);
    assert.equal(persisted.membershipVersion, membershipVersion([]));
    assert.ok(persisted.height >= earned);

    // Same membership: from the very first read the restored height holds.
    const second = await startNode(store);
    try {
      const ready = await readsUntilReady(second, (read) => assert.ok(read.height >= persisted.height, `height ${read.height} < ${persisted.height}`));
      assert.ok(ready.height >= persisted.height);
    } finally {
      await second.stop();
    }

    // A height far ahead of the clock proves the value is restored, not recomputed from the time.
    const ahead = Math.floor(Date.now() / INTERVAL) * INTERVAL + 3_600 * INTERVAL;
    writeCheckpoint({ ...readCheckpoint()!, height: ahead });
    const third = await startNode(store);
    try {
      const ready = await readsUntilReady(third, (read) => assert.equal(read.height, ahead));
      assert.equal(ready.height, ahead);
    } finally {
      await third.stop();
    }

    // Another node list: another membership version, and the persisted checkpoint no longer counts.
    const other = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
    const nodes = [{ name: 'elsewhere', multiAddr: `/ip4/127.0.0.1/tcp/${await freePort()}/p2p/${other}` }];
    const fourth = await startNode(store, { nodes });
    try {
      const ready = await readsUntilReady(fourth, (read) => {
        assert.equal(read.membership.version, membershipVersion([other]));
        assert.ok(read.height < ahead, 'the old checkpoint was discarded');
        if (read.state !== 'ready') assert.equal(read.height, 0, 'height 0 until the first valid checkpoint');
      });
      assert.ok(ready.height > 0 && ready.height <= Date.now());
    } finally {
      await fourth.stop();
    }
    const reset = readCheckpoint()!;
    assert.equal(reset.membershipVersion, membershipVersion([other]));
    assert.ok(reset.height < ahead);
  });
});
