// A real 3-node files cluster on 127.0.0.1 (docs/specs/files-node.md §1.4, §2.1, §4.2 503; docs/notes/files-node.md A.3, A.8,
// C1, C25-C27, E51, E55): each node its own store directory, HTTP and libp2p ports, one shared `nodes` list,
// peer ids from a first boot. Copies travel over the replication protocol and the blocks over bitswap.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { placementOf } from '../../../src/files/placement.js';
import { call, eventually, nodesOf, planCluster, startMember, upload, type ClusterMember } from '../../support/files-cluster.js';
import type { TestFilesNode } from '../../support/files-node.js';

const THREE_COPIES = {
  replication: { placement: [{ minAgeMs: 0, copies: 3 }], ackQuorum: 1 },
  findFileTimeout: 5_000,
  // Every node needs one other's attestation to be ready (spec §2.3 rule 3).
  health: { requiredPeerCount: 1 },
};

/** Waits until `node` has an open connection to each of `peers` (peering runs at start and every 2 s). */
async function peered(node: TestFilesNode, peers: readonly ClusterMember[]): Promise<void> {
  await eventually('peering', 15_000, async () => {
    const { body } = await call(node, 'GET', '/api/p2p/peers');
    return peers.every((peer) => (body.peers as string[]).includes(peer.peerId)) ? true : undefined;
  });
}

describe('files cluster: three nodes on loopback', () => {
  let home: string;
  let members: ClusterMember[];
  const running = new Map<string, TestFilesNode>();
  const node = (name: string) => running.get(name) ?? assert.fail(`${name} is not running`);

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-cluster-'));
    members = await planCluster(home, ['alpha', 'beta', 'gamma']);
    for (const member of members) running.set(member.name, await startMember(member, nodesOf(members), [THREE_COPIES]));
    await peered(node('alpha'), members.slice(1));
  });

  after(async () => {
    for (const member of running.values()) await member.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('an upload is copied to every designated holder; the report counts them without naming any', async () => {
    const bytes = randomBytes(300_000);
    const reply = await upload(node('alpha'), 'three.bin', bytes);
    assert.equal(reply.status, 200, reply.text);
    const report = reply.body.files[0].replication;
    assert.deepEqual(
      { desiredCopies: report.desiredCopies, copies: report.copies, acknowledged: report.acknowledged, replicaCount: report.replicaCount },
      { desiredCopies: 3, copies: 3, acknowledged: 3, replicaCount: 2 },
    );
    assert.equal(report.failedAttemptCount, 0);
    assert.equal(report.satisfied, true);
    assert.equal(report.networkTooSmall, true, 'three nodes are no more than three desired copies');
    assert.deepEqual(report.attempts, [
      { ok: true, outcome: 'stored' },
      { ok: true, outcome: 'stored' },
    ]);
    assert.deepEqual(reply.body.replication, report);
    for (const member of members) assert.ok(!reply.text.includes(member.peerId) && !reply.text.includes(member.name), 'no peer id or node name');

    const cid = reply.body.cids[0] as string;
    for (const name of ['beta', 'gamma']) {
      const status = await call(node(name), 'GET', `/api/file/${cid}/status`, { key: false });
      assert.equal(status.status, 200, `${name} registered its copy`);
      assert.equal(status.body.state, 'confirmed');
      assert.equal(status.body.pinned, true);
      assert.equal(status.body.replication.heldLocally, true);
    }
  });

  it('all three are ready with one membership version, attested by their peers, heights within one interval', async () => {
    const healths = await eventually('three ready nodes whose heights agree', 30_000, async () => {
      const all = await Promise.all(members.map(async (member) => (await call(node(member.name), 'GET', '/api/node/health', { key: false })).body));
      const heights = all.map((health) => health.height as number);
      const agree = Math.max(...heights) - Math.min(...heights) <= all[0].checkpoint.intervalMs;
      return all.every((health) => health.state === 'ready') && agree ? all : undefined;
    });
    assert.equal(new Set(healths.map((health) => health.membership.version)).size, 1);
    for (const health of healths) {
      assert.equal(health.checks.peerAttestations, true);
      assert.ok(health.membership.attestedPeers >= 1);
      assert.equal(health.membership.requiredPeers, 1);
      assert.ok(health.height > 0);
    }
  });

  it('the copy on a peer is pinned there and downloads from it', async () => {
    const bytes = randomBytes(2_500_000);
    const reply = await upload(node('alpha'), 'multi-block.bin', bytes);
    assert.equal(reply.status, 200, reply.text);
    const cid = reply.body.cids[0] as string;
    const pinned = await call(node('beta'), 'GET', `/api/runtime/pins/isPinned/${cid}`);
    assert.equal(pinned.body.isPinned, true);
    const download = await fetch(`http://127.0.0.1:${node('beta').port}/api/file/${cid}`);
    assert.equal(download.status, 200);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes));
  });
  it('a stopped holder misses the upload; after its restart, repair batches on the uploader place its copy', async () => {
    const gamma = members[2]!;
    await node('gamma').stop();
    running.delete('gamma');
    const reply = await upload(node('alpha'), 'while-away.bin', randomBytes(200_000));
    assert.equal(reply.status, 200, reply.text);
    const report = reply.body.files[0].replication;
    assert.equal(report.acknowledged, 2);
    assert.ok(report.failedAttemptCount >= 1);
    assert.deepEqual(
      report.attempts.map((attempt: { outcome: string }) => attempt.outcome).sort(),
      ['failed', 'stored'],
    );
    const cid = reply.body.cids[0] as string;

    running.set('gamma', await startMember(gamma, nodesOf(members), [THREE_COPIES]));
    await peered(node('alpha'), [gamma]);
    const cycle = await eventually('a complete repair cycle with nothing missing', 30_000, async () => {
      const batch = await call(node('alpha'), 'POST', '/api/storage/repair');
      if (batch.status === 409) return undefined;
      assert.equal(batch.status, 200, batch.text);
      return batch.body.cycleCompleted && batch.body.cycle.stillMissing === 0 ? batch.body : undefined;
    });
    assert.ok(cycle.cycle.repaired >= 1, 'the missing copy was placed by repair');
    const status = await call(node('gamma'), 'GET', `/api/file/${cid}/status`, { key: false });
    assert.equal(status.status, 200);
    assert.equal(status.body.pinned, true);
    const health = await eventually('repair evidence in alpha health', 10_000, async () => {
      const body = (await call(node('alpha'), 'GET', '/api/node/health', { key: false })).body;
      return body.replication.lastCompleteAt !== null && body.replication.backlog === 0 ? body : undefined;
    });
    assert.equal(health.replication.repairRequired, true);
    assert.equal(health.checks.repairFresh, true);
  });

  it('a changed node list changes membership.version and resets the height to 0 until a valid checkpoint', async () => {
    const gamma = members[2]!;
    // gamma was restarted by the previous test: its first valid checkpoint may still be coming.
    const before = await eventually('a height on gamma', 15_000, async () => {
      const health = (await call(node('gamma'), 'GET', '/api/node/health', { key: false })).body;
      return health.height > 0 ? health : undefined;
    });
    await node('gamma').stop();
    running.delete('gamma');
    // gamma alone with alpha: a membership alpha does not share, so alpha refuses to attest and no checkpoint is valid.
    const pair = nodesOf([members[0]!, gamma]);
    running.set('gamma', await startMember(gamma, pair, [THREE_COPIES]));
    const after = await eventually('a first checkpoint attempt under the new membership', 15_000, async () => {
      const health = (await call(node('gamma'), 'GET', '/api/node/health', { key: false })).body;
      return health.state !== 'starting' ? health : undefined;
    });
    assert.notEqual(after.membership.version, before.membership.version);
    assert.equal(after.height, 0, 'the checkpoint earned under the old membership was discarded');
    assert.equal(after.checks.peerAttestations, false, 'alpha attests only its own membership');
    assert.equal(after.membership.attestedPeers, 0);
  });
});

async function cidOf(bytes: Uint8Array): Promise<string> {
  const { CID } = await import('multiformats/cid');
  const { sha256 } = await import('multiformats/hashes/sha2');
  const raw = 0x55;
  return CID.createV1(raw, await sha256.digest(bytes)).toString();
}

describe('files cluster: strict uploads roll back on every node', () => {
  let home: string;
  let members: ClusterMember[];
  const running = new Map<string, TestFilesNode>();
  const node = (name: string) => running.get(name) ?? assert.fail(`${name} is not running`);
  const STRICT = { replication: { placement: [{ minAgeMs: 0, copies: 3 }], ackQuorum: 3, requireQuorumOnUpload: true }, findFileTimeout: 5_000 };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-strict-'));
    members = await planCluster(home, ['alpha', 'beta', 'gamma']);
    for (const member of members) running.set(member.name, await startMember(member, nodesOf(members), [STRICT]));
    await peered(node('alpha'), members.slice(1));
  });

  after(async () => {
    for (const member of running.values()) await member.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const isPinned = async (name: string, cid: string) => (await call(node(name), 'GET', `/api/runtime/pins/isPinned/${cid}`)).body.isPinned as boolean;

  it('with every holder up the quorum is reached and every copy is registered', async () => {
    const reply = await upload(node('alpha'), 'strict.bin', randomBytes(50_000));
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.files[0].replication.acknowledged, 3);
    const cid = reply.body.cids[0] as string;
    for (const name of ['alpha', 'beta', 'gamma']) {
      assert.equal((await call(node(name), 'GET', `/api/file/${cid}/status`, { key: false })).body.state, 'confirmed', name);
      assert.equal(await isPinned(name, cid), true, name);
    }
  });

  it('a holder down: 503, and the exact pre-request pins and records are back everywhere', async () => {
    const durable = randomBytes(40_000);
    const first = await upload(node('alpha'), 'durable.bin', durable);
    assert.equal(first.status, 200, first.text);
    const durableCid = first.body.cids[0] as string;

    await node('gamma').stop();
    running.delete('gamma');

    const fresh = await upload(node('alpha'), 'fresh.bin', randomBytes(60_000));
    assert.equal(fresh.status, 503, fresh.text);
    assert.deepEqual(fresh.body, { error: 'Replication quorum not reached' });
    const again = await upload(node('alpha'), 'durable.bin', durable);
    assert.equal(again.status, 503, 'a re-upload of a durable file also misses the quorum');

    for (const name of ['alpha', 'beta']) {
      // The durable file stays exactly as it was: confirmed, pinned, held.
      const status = await call(node(name), 'GET', `/api/file/${durableCid}/status`, { key: false });
      assert.equal(status.status, 200, name);
      assert.equal(status.body.state, 'confirmed');
      assert.equal(status.body.pinned, true);
      assert.equal(await isPinned(name, durableCid), true, `${name} keeps the durable pin`);
    }
    // Metrics refresh on the scan schedule (every second here): the aborted stages are gone by the next scan.
    await eventually('no staged copy left on beta', 10_000, async () =>
      (await call(node('beta'), 'GET', '/api/storage/metrics', { key: false })).body.stagedReplicas === 0 ? true : undefined,
    );
  });

  it('the brand-new file of a refused strict upload ends with neither record nor pin on any node', async () => {
    const bytes = randomBytes(70_000);
    const cid = await cidOf(bytes);
    const reply = await upload(node('alpha'), 'gone.bin', bytes);
    assert.equal(reply.status, 503, reply.text);
    for (const name of ['alpha', 'beta']) {
      assert.equal((await call(node(name), 'GET', `/api/file/${cid}/status`, { key: false })).status, 404, `${name} has no record`);
      assert.equal(await isPinned(name, cid), false, `${name} has no pin`);
    }
  });
});

describe('files cluster: a download fetches from a peer over bitswap', () => {
  let home: string;
  const running: TestFilesNode[] = [];

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-fetch-'));
    const members = await planCluster(home, ['alpha', 'beta']);
    // Replication off on both: the only copy is alpha's, and beta finds it through the peer connection.
    for (const member of members) running.push(await startMember(member, nodesOf(members), [{ replication: { enabled: false }, findFileTimeout: 5_000 }]));
    await peered(running[1]!, [members[0]!]);
  });

  after(async () => {
    for (const member of running) await member.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('a file uploaded to alpha downloads from beta with identical bytes; an unknown CID is still 408 there', async () => {
    const [alpha, beta] = running as [TestFilesNode, TestFilesNode];
    const bytes = randomBytes(1_500_000);
    const reply = await upload(alpha, 'elsewhere.bin', bytes);
    assert.equal(reply.status, 200, reply.text);
    assert.deepEqual(reply.body.files[0].replication.attempts, [], 'nothing was placed');
    const cid = reply.body.cids[0] as string;
    assert.equal((await call(beta, 'GET', `/api/file/${cid}/status`, { key: false })).status, 404, 'beta holds no record');
    const download = await fetch(`http://127.0.0.1:${beta.port}/api/file/${cid}`);
    assert.equal(download.status, 200);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes));
    const unknown = await fetch(`http://127.0.0.1:${beta.port}/api/file/${await cidOf(randomBytes(64))}`);
    assert.equal(unknown.status, 408);
    assert.deepEqual(await unknown.json(), { error: 'File request timed out' });
  });
});

describe('files cluster: GC hands a file over to its designated holders', () => {
  let home: string;
  let members: ClusterMember[];
  const running: TestFilesNode[] = [];
  const TWO_COPIES = { replication: { placement: [{ minAgeMs: 0, copies: 2 }], ackQuorum: 1 }, findFileTimeout: 5_000 };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-handover-'));
    members = await planCluster(home, ['alpha', 'beta', 'gamma']);
    for (const member of members) running.push(await startMember(member, nodesOf(members), [TWO_COPIES]));
    await peered(running[0]!, members.slice(1));
  });

  after(async () => {
    for (const member of running) await member.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('an upload alpha is not designated for is demoted there once both holders confirm; a dry run only lists it', async () => {
    const [alpha, beta, gamma] = running as [TestFilesNode, TestFilesNode, TestFilesNode];
    const ids = members.map((member) => member.peerId);
    let bytes = randomBytes(30_000);
    let cid = await cidOf(bytes);
    for (let attempt = 0; placementOf(cid, ids, ids[0]!, [{ minAgeMs: 0, copies: 2 }], 0).designated.includes(ids[0]!); attempt++) {
      assert.ok(attempt < 100, 'some content ranks alpha third');
      bytes = randomBytes(30_000);
      cid = await cidOf(bytes);
    }
    const reply = await upload(alpha, 'handed-over.bin', bytes);
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.body.files[0].replication.acknowledged, 3, 'the local copy and both designated holders');

    const preview = await call(alpha, 'POST', '/api/storage/gc?dryRun=true');
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.body.demoted, [cid]);
    assert.equal((await call(alpha, 'GET', `/api/file/${cid}/status`, { key: false })).body.pinned, true, 'a dry run changes nothing');

    const run = await call(alpha, 'POST', '/api/storage/gc');
    assert.equal(run.status, 200, run.text);
    assert.deepEqual(run.body.demoted, [cid]);
    assert.ok(!run.body.retainedCids.includes(cid));
    const status = (await call(alpha, 'GET', `/api/file/${cid}/status`, { key: false })).body;
    assert.deepEqual({ state: status.state, pinned: status.pinned, heldLocally: status.replication.heldLocally }, { state: 'confirmed', pinned: false, heldLocally: false });
    for (const holder of [beta, gamma]) assert.equal((await call(holder, 'GET', `/api/runtime/pins/isPinned/${cid}`)).body.isPinned, true);
    // Still readable through alpha: its unpinned blocks until collected, the holders' copies after.
    const download = await fetch(`http://127.0.0.1:${alpha.port}/api/file/${cid}`);
    assert.equal(download.status, 200);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(bytes));
  });
});
