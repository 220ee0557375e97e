// Seeded random interleavings of everything that writes a files node's store, against two real nodes on loopback
// (docs/specs/files-node.md §2.1, §3.1, §4.2, §4.3; issue 27): uploads of the same few contents to either node,
// confirms (which place a copy on the peer: an incoming copy there), unpins, operator pins and forced collector runs,
// fired a few at a time over HTTP. Every write goes through each node's store owner (actors/files/store.actor.ts).
// After each run, on each node: every request was answered with an expected status, every record agrees with the
// root pin set (`pinned` of the status is `isPinned`), and every pinned file has all of its blocks on disk.
//
// A failing seed is printed; replay it with ADM_STORE_SEEDS=<seed>.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as dagPb from '@ipld/dag-pb';
import { CID } from 'multiformats/cid';
import { code as RAW_CODEC } from 'multiformats/codecs/raw';
import { WholeBlockFsBlockstore } from '../../../storage/files/blockstore.fs.js';
import { call, eventually, nodesOf, planCluster, startMember, upload, type ClusterMember } from '../../support/files-cluster.js';
import type { TestFilesNode } from '../../support/files-node.js';
import { prng } from '../../support/random.js';

const SEEDS = (process.env.ADM_STORE_SEEDS ?? '27,1127,40961')
  .split(',')
  .map((seed) => Number(seed.trim()))
  .filter((seed) => Number.isInteger(seed));
/** Operations per run, sent in waves of up to WAVE at once. */
const OPERATIONS = 36;
const WAVE = 6;

const CONFIG = {
  // Uploads start temporary, so confirms matter: a confirm places the file on the peer.
  storage: { confirmationRequired: true },
  replication: { placement: [{ minAgeMs: 0, copies: 2 }], ackQuorum: 1 },
  // A pin of content collected everywhere waits this long for a provider before 408.
  findFileTimeout: 1_500,
  // The runs send more uploads and pins from one address than the default budgets allow.
  rateLimits: { upload: { windowMs: 900_000, limit: 10_000 }, read: { windowMs: 60_000, limit: 10_000 }, pin: { windowMs: 900_000, limit: 10_000 } },
};

type Kind = 'upload' | 'confirm' | 'unpin' | 'pin' | 'gc';
/** The answers each operation may get; anything else (a 5xx above all) fails the run. */
const EXPECTED: Record<Kind, readonly number[]> = {
  upload: [200],
  // 404: no record on that node (yet); 408: an expired file whose blocks were collected everywhere.
  confirm: [200, 404, 408],
  unpin: [200, 404],
  pin: [200, 408],
  gc: [200, 409],
};

/** Contents of different shapes: one raw block, a two-leaf DAG (1 MiB chunks), a small raw block. */
function contents(random: () => number): Uint8Array[] {
  const bytes = (size: number) => Uint8Array.from({ length: size }, () => Math.floor(random() * 256));
  return [bytes(40_000), bytes(1_300_000), bytes(3_000)];
}

/** Whether every block of `cid`'s DAG is in `blockstore` (read straight from the store folder). */
async function wholeDagOnDisk(blockstore: WholeBlockFsBlockstore, cid: CID): Promise<boolean> {
  if (!(await blockstore.has(cid))) return false;
  if (cid.code === RAW_CODEC) return true;
  const node = dagPb.decode(await blockstore.getBlock(cid));
  for (const link of node.Links) if (!(await wholeDagOnDisk(blockstore, link.Hash))) return false;
  return true;
}

describe('the files store under random interleavings of uploads, lifecycle changes, copies and collector runs', { timeout: 600_000 }, () => {
  let home: string;
  let members: ClusterMember[];
  const running: TestFilesNode[] = [];

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-interleavings-'));
    members = await planCluster(home, ['alpha', 'beta']);
    for (const member of members) running.push(await startMember(member, nodesOf(members), [CONFIG]));
    await eventually('peering', 15_000, async () => {
      const { body } = await call(running[0]!, 'GET', '/api/p2p/peers');
      return (body.peers as string[]).includes(members[1]!.peerId) ? true : undefined;
    });
  });

  after(async () => {
    for (const node of running) await node.stop();
    rmSync(home, { recursive: true, force: true });
  });

  for (const seed of SEEDS) {
    it(`seed ${seed}: every request answered, every record agrees with its pin, no pinned block missing`, async (t) => {
      const random = prng(seed);
      const files = contents(random);
      const cids: string[] = [];
      // Known CIDs first (so lifecycle operations have targets from the start): each content uploaded once to alpha.
      for (const [index, bytes] of files.entries()) {
        const reply = await upload(running[0]!, `seed-${seed}-${index}.bin`, bytes);
        assert.equal(reply.status, 200, reply.text);
        cids.push(reply.body.cids[0] as string);
      }
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const log: string[] = [];
      const failures: string[] = [];
      for (let sent = 0; sent < OPERATIONS; sent += WAVE) {
        const wave = Array.from({ length: Math.min(WAVE, OPERATIONS - sent) }, async () => {
          const kind = pick<Kind>(['upload', 'upload', 'confirm', 'confirm', 'unpin', 'unpin', 'pin', 'gc']);
          const on = Math.floor(random() * running.length);
          const index = Math.floor(random() * files.length);
          const node = running[on]!;
          const what = `${kind} ${index} on ${members[on]!.name}`;
          log.push(what);
          let status: number;
          try {
            if (kind === 'upload') status = (await upload(node, `again-${index}.bin`, files[index]!)).status;
            else if (kind === 'gc') status = (await call(node, 'POST', '/api/storage/gc?force=true')).status;
            else if (kind === 'pin') status = (await call(node, 'POST', `/api/runtime/pin/${cids[index]}`)).status;
            else status = (await call(node, 'POST', `/api/file/${cids[index]}/${kind}`)).status;
          } catch (error) {
            failures.push(`${what}: no answer (${(error as Error).message})`);
            return;
          }
          if (!EXPECTED[kind].includes(status)) failures.push(`${what}: ${status}`);
        });
        await Promise.all(wave);
      }
      t.diagnostic(`seed ${seed}: ${log.join(', ')}`);
      assert.deepEqual(failures, [], `seed ${seed}: unexpected answers`);

      // A confirm places its copy on the peer after answering: the nodes are checked once that settled.
      const settled = await eventually(`seed ${seed}: records and pins agree on both nodes`, 20_000, async () => {
        const problems: string[] = [];
        for (const [on, node] of running.entries()) {
          const blockstore = new WholeBlockFsBlockstore(join(node.storeDirectory, 'blockstore'));
          await blockstore.open();
          try {
            for (const [index, cid] of cids.entries()) {
              const status = await call(node, 'GET', `/api/file/${cid}/status`, { key: false });
              const isPinned = (await call(node, 'GET', `/api/runtime/pins/isPinned/${cid}`)).body.isPinned as boolean;
              const where = `file ${index} on ${members[on]!.name}`;
              if (status.status === 404) {
                if (isPinned) problems.push(`${where}: pinned with no record`);
                continue;
              }
              if (status.body.pinned !== isPinned) problems.push(`${where}: the record says pinned=${status.body.pinned}, the pin set ${isPinned}`);
              if (status.body.pinned && !(await wholeDagOnDisk(blockstore, CID.parse(cid)))) problems.push(`${where}: pinned with a block missing`);
            }
          } finally {
            await blockstore.close();
          }
        }
        if (problems.length > 0) throw new Error(problems.join('; '));
        return true;
      });
      assert.equal(settled, true);
    });
  }
});
