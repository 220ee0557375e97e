// `files.health` on its own: the checkpoint machine with this actor's real gathering and persisting, against a
// node stand-in (libp2p status, registry state) and a controllable startup walk and disk measurement
// (docs/specs/files-node.md §2.3, §3.2; docs/notes/files-node.md A.6, C5, C17-C19).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { HEALTH_CHECKPOINT_KEY, healthLogic, healthSettings, nodeIdentity, type HealthActorOptions } from '../../../actors/files/health.actor.js';
import { NodeHolder, type PeerNetwork } from '../../../actors/files/node.js';
import { StartupSignal } from '../../../actors/files/startup.js';
import { membershipVersion, roundStart, type HealthObject, type HealthSettings } from '../../../src/files/health.js';
import type { DiskMeasurement, NodeIdentity } from '../../../src/files/storage-metrics.js';
import { captureLogger } from '../../support/logger.js';
import { filesTestConfig } from '../../support/files-config.js';
import { waitFor } from '../../support/wait.js';

const INTERVAL = 1_000;
const SETTINGS: HealthSettings = {
  intervalMs: INTERVAL,
  maxCheckpointAgeMs: 3 * INTERVAL,
  storageMaxAgeMs: 2 * INTERVAL,
  repairMaxAgeMs: 3_600_000,
  requiredPeerCount: 0,
  diskReserveBytes: 1_000,
};
const MV = membershipVersion([]);

interface FakeNode {
  status: string;
  state: Map<string, unknown>;
}

/** The two faces of a node the health actor is given: its network and the registry's state table. */
function facesOf(fake: FakeNode): Pick<HealthActorOptions, 'network' | 'state'> {
  const libp2p = {
    get status() {
      return fake.status;
    },
    getMultiaddrs: () => [{ toString: () => '/ip4/127.0.0.1/tcp/4001' }],
  };
  return {
    network: () => ({ peerId: '12D3KooWTestPeer', libp2p }) as unknown as PeerNetwork,
    state: { get: (key) => fake.state.get(key), set: (key, value) => void fake.state.set(key, structuredClone(value)) },
  };
}

interface Harness {
  actor: ReturnType<typeof createActor<ReturnType<typeof healthLogic>>>;
  startup: StartupSignal;
  disk: { availableBytes: number; measured: boolean };
  read(): Promise<HealthObject>;
  identity(): Promise<NodeIdentity>;
}

function startHealth(fake: FakeNode, options: { settings?: HealthSettings; membership?: string; walked?: boolean; availableBytes?: number } = {}): Harness {
  const startup = new StartupSignal();
  if (options.walked) startup.complete({ intentsResolved: 0, backfilled: 0, skipped: 0 });
  const disk = { availableBytes: options.availableBytes ?? 10_000, measured: true };
  const measurement = (): DiskMeasurement | null =>
    disk.measured
      ? { measuredAt: Date.now(), blockstoreBytes: 0, datastoreBytes: 0, availableBytes: disk.availableBytes, pinnedBytes: 0, reclaimableBytes: 0, files: { temporary: 0, confirmed: 0, expired: 0 }, stagedReplicas: 0 }
      : null;
  const actor = createActor(
    healthLogic({
      settings: options.settings ?? SETTINGS,
      membershipVersion: options.membership ?? MV,
      ...facesOf(fake),
      startup,
      readStorage: async () => measurement(),
      clock: systemClock,
      logger: captureLogger('warn').logger,
      meta: { version: '9.9.9', startedAt: Date.now() - 5_000 },
    }),
    { clock: systemClock },
  );
  actor.start();
  const ask = <T>(type: string) => new Promise<T>((resolve, reject) => actor.send({ type, reply: { resolve, reject, signal: new AbortController().signal } } as never));
  return { actor, startup, disk, read: () => ask<HealthObject>('health.read'), identity: () => ask<NodeIdentity>('node.identity') };
}

const walked = { intentsResolved: 0, backfilled: 3, skipped: 1 };

describe('files.health', () => {
  it('is starting until the startup walk completes, then one immediate attempt makes it ready and persists the height', async () => {
    const fake: FakeNode = { status: 'started', state: new Map() };
    const h = startHealth(fake);
    try {
      // Several attempts run (one per interval) while the walk has not finished: all stay `starting`.
      const early = await h.read();
      assert.equal(early.state, 'starting');
      assert.equal(early.height, 0);
      assert.equal(early.startup.complete, false);
      assert.equal(early.version, '9.9.9');
      assert.ok(early.uptimeMs >= 5_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await h.read()).state, 'starting');
      assert.equal(fake.state.size, 0, 'nothing persisted before a successful attempt');

      const completedAt = Date.now();
      h.startup.complete(walked);
      // The startup event triggers an attempt at once: well before the next interval would.
      const ready = await waitFor(async () => {
        const health = await h.read();
        return health.state === 'ready' ? health : undefined;
      }, { timeoutMs: INTERVAL / 2, intervalMs: 5, what: 'ready right after the walk' });
      assert.ok(Date.now() - completedAt < INTERVAL);
      assert.deepEqual(ready.startup, { complete: true, healthy: true });
      assert.ok(ready.height > 0 && ready.height === roundStart(ready.height, INTERVAL), 'the start of a fixed round');
      assert.ok(Object.values(ready.checks).every(Boolean), JSON.stringify(ready.checks));
      assert.equal(ready.membership.version, MV);
      assert.deepEqual(ready.replication, { repairRequired: false, lastCompleteAt: null, ageMs: null, backlog: 0 });

      const persisted = fake.state.get(HEALTH_CHECKPOINT_KEY) as Record<string, unknown>;
      assert.equal(persisted['version'], 1);
      assert.equal(persisted['membershipVersion'], MV);
      assert.equal(persisted['height'], ready.height);
    } finally {
      h.actor.stop();
    }
  });

  it('a restart restores the persisted height before its first attempt; another membership starts from 0', async () => {
    const fake: FakeNode = { status: 'started', state: new Map() };
    const future = roundStart(Date.now(), INTERVAL) + 1_000 * INTERVAL;
    fake.state.set(HEALTH_CHECKPOINT_KEY, { version: 1, membershipVersion: MV, height: future, completedAt: Date.now() - 10, attestedPeers: 0 });

    const same = startHealth(fake, { walked: true });
    try {
      const first = await same.read();
      assert.equal(first.height, future, 'restored, not recomputed');
      const ready = await waitFor(async () => ((await same.read()).state === 'ready' ? same.read() : undefined), { what: 'ready' });
      assert.equal(ready.height, future, 'monotonic: max(restored, current round)');
    } finally {
      same.actor.stop();
    }

    const otherMembership = membershipVersion(['12D3KooWOther']);
    const other = startHealth(fake, { walked: false, membership: otherMembership });
    try {
      const first = await other.read();
      assert.equal(first.height, 0, 'a checkpoint earned under another node list is discarded');
      assert.equal(first.membership.version, otherMembership);
      other.startup.complete(walked);
      const ready = await waitFor(async () => ((await other.read()).state === 'ready' ? other.read() : undefined), { what: 'ready' });
      assert.ok(ready.height < future && ready.height > 0);
      assert.equal((fake.state.get(HEALTH_CHECKPOINT_KEY) as { membershipVersion: string }).membershipVersion, otherMembership);
    } finally {
      other.actor.stop();
    }
  });

  it('free space below the reserve: degraded with storageReserve and reserveHealthy false', async () => {
    const fake: FakeNode = { status: 'started', state: new Map() };
    const h = startHealth(fake, { walked: true, availableBytes: 999 });
    try {
      const health = await waitFor(async () => {
        const read = await h.read();
        return read.startup.complete && read.storage.measuredAt !== null ? read : undefined;
      }, { what: 'an attempt after the walk' });
      assert.equal(health.state, 'degraded');
      assert.equal(health.checks.storageReserve, false);
      assert.equal(health.storage.reserveHealthy, false);
      assert.equal(health.checks.storageFresh, true);
      assert.equal(health.height, 0);
    } finally {
      h.actor.stop();
    }
  });

  it('a runtime that is not started fails the runtime check; no disk measurement fails storage freshness', async () => {
    const fake: FakeNode = { status: 'stopping', state: new Map() };
    const h = startHealth(fake, { walked: true });
    h.disk.measured = false;
    try {
      const health = await waitFor(async () => {
        const read = await h.read();
        return read.startup.complete ? read : undefined;
      }, { what: 'an attempt after the walk' });
      assert.equal(health.state, 'degraded');
      assert.equal(health.checks.runtime, false);
      assert.equal(health.checks.storageFresh, false);
      assert.equal(health.storage.measuredAt, null);
    } finally {
      h.actor.stop();
    }
  });

  it('with peers required and nobody to attest (no attestation settings), peerAttestations fails', async () => {
    const fake: FakeNode = { status: 'started', state: new Map() };
    const h = startHealth(fake, { walked: true, settings: { ...SETTINGS, requiredPeerCount: 1 } });
    try {
      const health = await waitFor(async () => {
        const read = await h.read();
        return read.startup.complete ? read : undefined;
      });
      assert.equal(health.checks.peerAttestations, false);
      assert.deepEqual(health.membership, { version: MV, requiredPeers: 1, attestedPeers: 0 });
      assert.equal(health.state, 'degraded');
    } finally {
      h.actor.stop();
    }
  });

  it('answers node.identity from the running node, and `stopped` without one', async () => {
    const fake: FakeNode = { status: 'started', state: new Map() };
    const h = startHealth(fake, { walked: true });
    try {
      assert.deepEqual(await h.identity(), { runtimeStatus: 'started', peerId: '12D3KooWTestPeer', multiAddresses: ['/ip4/127.0.0.1/tcp/4001'] });
      assert.deepEqual(nodeIdentity(new NodeHolder().network), { runtimeStatus: 'stopped', peerId: null, multiAddresses: [] });
    } finally {
      h.actor.stop();
    }
  });

  it('healthSettings: the health keys, the disk reserve and the membership of the configured node list', () => {
    const config = filesTestConfig({ health: { checkpointIntervalMs: 2_000, requiredPeerCount: 0 }, storage: { diskReserveBytes: 123 } });
    const { settings, membershipVersion: version } = healthSettings(config);
    assert.equal(settings.intervalMs, 2_000);
    assert.equal(settings.maxCheckpointAgeMs, config.health.maxCheckpointAgeMs);
    assert.equal(settings.storageMaxAgeMs, config.health.storageMaxAgeMs);
    assert.equal(settings.diskReserveBytes, 123);
    assert.equal(version, membershipVersion([]));
    assert.match(version, /^[a-f0-9]{64}$/);
  });
});
