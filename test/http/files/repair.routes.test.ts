// POST /api/storage/repair against a real in-process node (supervisor + helia + files actors + uWS on 127.0.0.1):
// docs/specs/files-node.md §2.3 rule 2, §4.3, §7; docs/notes/files-node.md A.4, C10, C-shapes "Repair report", E48. The node's
// one configured peer is a silent TCP listener: it accepts connections and never answers, so every probe and every
// copy request to it runs into `replication.requestTimeoutMs` (a repair batch that takes a while, and a copy that
// stays missing).

import assert from 'node:assert/strict';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';
import { waitFor } from '../../support/wait.js';

const KEY = '7c1e9a3f5b2d8064a9e1f3c5b7d9e0a2c4f6b8d0e2a4c6e8f0b2d4f6a8c0e2b4';
const ADMIN = { 'x-api-key': KEY };
const REQUEST_TIMEOUT_MS = 1_000;

describe('POST /api/storage/repair (one silent peer)', () => {
  let home: string;
  let node: TestFilesNode;
  let silent: Server;
  const sockets = new Set<Socket>();

  const url = (path: string) => `http://127.0.0.1:${node.port}${path}`;
  const repair = async (headers: Record<string, string> = ADMIN) => {
    const response = await fetch(url('/api/storage/repair'), { method: 'POST', headers });
    return { status: response.status, headers: response.headers, body: (await response.json()) as any };
  };
  const health = async () => (await (await fetch(url('/api/node/health'))).json()) as any;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'repair-http-'));
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const peerId = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
    node = await startTestFilesNode(
      join(home, '.adm-ipfs'),
      [
        {
          adminApiKey: KEY,
          nodes: [{ name: 'silent', multiAddr: `/ip4/127.0.0.1/tcp/${port}/p2p/${peerId}` }],
          peerDiscovery: { listen: ['/ip4/127.0.0.1/tcp/0'] },
          rateLimits: { upload: { windowMs: 900_000, limit: 1_000 }, read: { windowMs: 60_000, limit: 1_000 } },
          // Scheduled repair far away: only the startup cycle and this test's requests run.
          replication: { requestTimeoutMs: REQUEST_TIMEOUT_MS, repairSchedule: '0 0 0 1 1 *' },
          health: { requiredPeerCount: 0 },
        },
      ],
      { peering: { dialTimeoutMs: 500, startupBoundMs: 1_000 } },
    );
    await node.startupDone;
  });
  after(async () => {
    await node?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    rmSync(home, { recursive: true, force: true });
  });

  it('needs the key; after the startup cycle over the empty registry repair evidence is fresh', async () => {
    assert.equal((await repair({})).status, 401);
    assert.equal((await repair({ 'x-api-key': 'x'.repeat(64) })).status, 401);
    const replication = await waitFor(async () => {
      const body = await health();
      return body.replication.lastCompleteAt !== null ? body.replication : undefined;
    }, { what: 'the startup cycle', timeoutMs: 10_000, intervalMs: 50 });
    assert.equal(replication.repairRequired, true);
    assert.equal(replication.backlog, 0);
  });

  it('200: the batch report with its cycle, counts only; the missing copy is backlog in health', async () => {
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(randomBytes(2_000))]), 'r.bin');
    const uploaded = await fetch(url('/api/file/upload'), { method: 'POST', body: form });
    assert.equal(uploaded.status, 200);
    const cid = ((await uploaded.json()) as any).cids[0] as string;

    const response = await repair();
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const report = response.body;
    assert.deepEqual(Object.keys(report), ['examined', 'checked', 'underReplicated', 'repaired', 'stillMissing', 'unrecoverable', 'cycleCompleted', 'cycle']);
    assert.deepEqual(
      { ...report, cycle: undefined },
      { examined: 1, checked: 1, underReplicated: 1, repaired: 0, stillMissing: 1, unrecoverable: 0, cycleCompleted: true, cycle: undefined },
    );
    assert.equal(report.cycle.examined, 1);
    assert.equal(report.cycle.lastCompletedSuccessfully, false);
    assert.equal(report.cycle.backlog, 1);
    assert.ok(Number.isInteger(report.cycle.startedAt) && Number.isInteger(report.cycle.lastCompletedAt));
    assert.ok(!JSON.stringify(report).includes(cid), 'no CID in the report');

    const after = await health();
    assert.equal(after.replication.backlog, 1);
    assert.equal(after.replication.lastCompleteAt, report.cycle.lastCompletedAt);
    assert.equal(after.checks.repairFresh, false, 'a cycle with a missing copy is no fresh repair evidence');
  });

  it('E48: an overlapping request answers 409 while a batch runs; the first one answers 200', async () => {
    let firstDoneAt = 0;
    const first = repair().then((result) => ((firstDoneAt = Date.now()), result));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await repair();
    assert.equal(second.status, 409);
    assert.deepEqual(second.body, { error: 'Replication repair is already running' });
    assert.equal(firstDoneAt, 0, 'the first batch was still running');
    const result = await first;
    assert.equal(result.status, 200);
    assert.equal(result.body.examined, 1);
    assert.equal((await repair()).status, 200, 'the next request runs');
  });
});
