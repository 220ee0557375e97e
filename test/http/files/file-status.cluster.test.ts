// The file status on a real 3-node cluster on loopback (docs/specs/files-node.md §2.1, §2.2; docs/notes/files-node.md A.3,
// E40, E51, E53; issue 14 item 4): `replication.acknowledged` and `required` are the upload report's figures, and a
// copy that repair places later raises the count.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call, eventually, nodesOf, planCluster, startMember, upload, type ClusterMember } from '../../support/files-cluster.js';
import type { TestFilesNode } from '../../support/files-node.js';

/** Three copies wanted, two acknowledgements required: `required` 2 tells the quorum from the copy count. */
const THREE_COPIES_QUORUM_TWO = { replication: { placement: [{ minAgeMs: 0, copies: 3 }], ackQuorum: 2 }, findFileTimeout: 5_000 };

async function peered(node: TestFilesNode, peers: readonly ClusterMember[]): Promise<void> {
  await eventually('peering', 15_000, async () => {
    const { body } = await call(node, 'GET', '/api/p2p/peers');
    return peers.every((peer) => (body.peers as string[]).includes(peer.peerId)) ? true : undefined;
  });
}

describe('files cluster: the file status counts the stored copies', { timeout: 240_000 }, () => {
  let home: string;
  let members: ClusterMember[];
  const running = new Map<string, TestFilesNode>();
  const node = (name: string) => running.get(name) ?? assert.fail(`${name} is not running`);
  const status = async (name: string, cid: string) => {
    const reply = await call(node(name), 'GET', `/api/file/${cid}/status`, { key: false });
    assert.equal(reply.status, 200, reply.text);
    return reply;
  };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-status-'));
    members = await planCluster(home, ['alpha', 'beta', 'gamma']);
    for (const member of members) running.set(member.name, await startMember(member, nodesOf(members), [THREE_COPIES_QUORUM_TWO]));
    await peered(node('alpha'), members.slice(1));
  });

  after(async () => {
    for (const member of running.values()) await member.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('after an upload placed on both peers, the uploader reports 3 acknowledged of 2 required, like the upload report', async () => {
    const reply = await upload(node('alpha'), 'everywhere.bin', randomBytes(100_000));
    assert.equal(reply.status, 200, reply.text);
    const report = reply.body.files[0].replication;
    assert.deepEqual({ acknowledged: report.acknowledged, required: report.required, replicaCount: report.replicaCount }, { acknowledged: 3, required: 2, replicaCount: 2 });
    const cid = reply.body.cids[0] as string;

    const { body, text } = await status('alpha', cid);
    assert.deepEqual(Object.keys(body), ['cid', 'state', 'pinned', 'createdAt', 'expiresAt', 'confirmedAt', 'replication'], 'spec §2.2 fields in wire order');
    assert.deepEqual(body.replication, { acknowledged: report.acknowledged, required: report.required, heldLocally: true });
    for (const member of members) assert.ok(!text.includes(member.peerId) && !text.includes(member.name), 'no peer id or node name');

    // A holder knows its own copy and the uploader that sent it (the other holder is news to it until its repair asks).
    assert.deepEqual((await status('beta', cid)).body.replication, { acknowledged: 2, required: 2, heldLocally: true });
  });

  it('a holder down during the upload is missing from the count; once repair placed its copy, the count rises', async () => {
    const gamma = members[2]!;
    await node('gamma').stop();
    running.delete('gamma');

    const reply = await upload(node('alpha'), 'while-away.bin', randomBytes(80_000));
    assert.equal(reply.status, 200, reply.text);
    const report = reply.body.files[0].replication;
    assert.deepEqual({ acknowledged: report.acknowledged, required: report.required }, { acknowledged: 2, required: 2 });
    assert.ok(report.failedAttemptCount >= 1);
    const cid = reply.body.cids[0] as string;
    assert.deepEqual((await status('alpha', cid)).body.replication, { acknowledged: 2, required: 2, heldLocally: true }, 'the upload report figures');

    running.set('gamma', await startMember(gamma, nodesOf(members), [THREE_COPIES_QUORUM_TWO]));
    await peered(node('alpha'), [gamma]);
    const cycle = await eventually('a complete repair cycle with nothing missing', 60_000, async () => {
      const batch = await call(node('alpha'), 'POST', '/api/storage/repair');
      if (batch.status === 409) return undefined;
      assert.equal(batch.status, 200, batch.text);
      return batch.body.cycleCompleted && batch.body.cycle.stillMissing === 0 ? batch.body : undefined;
    });
    assert.ok(cycle.cycle.repaired >= 1, 'repair placed the missing copy');
    assert.equal((await status('gamma', cid)).body.pinned, true);
    assert.deepEqual((await status('alpha', cid)).body.replication, { acknowledged: 3, required: 2, heldLocally: true });
  });
});
