// Peering and the peer-network operator routes with two real files nodes on 127.0.0.1 (docs/specs/files-node.md
// §4.4, §5; docs/notes/files-node.md A.5, B.4, B.8, C13, E59, E60).
//
// Peer ids come from a first boot of each store (the identity is kept in the store, so the real start keeps
// it), and libp2p listens on ports picked before the start, so both nodes share ONE `nodes` list that names
// A, B (each node's own entry, filtered out by peer id) and a silent peer: a local TCP server that accepts
// and never answers, so a dial to it hangs until its timeout (an unreachable peer without leaving loopback).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import type { PeeringTimings } from '../../../src/files/peering.js';
import { freePort } from '../../support/cli.js';
import { startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';
import { firstBootPeerId } from '../../support/files-cluster.js';

const KEY = '7c1e9a3f5b2d8064a9e1f3c5b7d9e0a2c4f6b8d0e2a4c6e8f0b2d4f6a8c0e2b4';
/** No scheduled pass during the test: passes run at startup and on request only. */
const NEVER_SOON = '0 0 0 1 1 *';
/** Short, so the test stays quick; the startup bound is below the dial timeout to show startup does not wait for a hanging dial. */
const TIMINGS: Partial<PeeringTimings> = { dialTimeoutMs: 2_500, startupBoundMs: 1_000 };

const P2P_ROUTES = ['/status', '/peers', '/connections', '/peerStore', '/peerInfo', '/dial', '/services/ping'];

type RunningNode = TestFilesNode;

const startNode = (storeDirectory: string, overrides: Record<string, unknown>) =>
  startTestFilesNode(storeDirectory, [{ peeringSchedule: NEVER_SOON }, overrides], { logLevel: 'debug', peering: TIMINGS });

/** `key` null sends no x-api-key header. */
async function get(node: RunningNode, path: string, key: string | null = KEY) {
  const response = await fetch(`http://127.0.0.1:${node.port}${path}`, { headers: key === null ? {} : { 'x-api-key': key } });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body, headers: response.headers };
}

describe('peering and the p2p operator routes, two nodes', () => {
  let home: string;
  let silent: Server;
  const sockets = new Set<Socket>();
  let a: RunningNode | undefined;
  let b: RunningNode | undefined;
  let bare: RunningNode | undefined;
  let aId: string;
  let bId: string;
  let gammaId: string;
  let aAddr: string;
  let gammaAddr: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-p2p-'));
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    gammaId = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();
    gammaAddr = `/ip4/127.0.0.1/tcp/${silentPort}/p2p/${gammaId}`;

    aId = await firstBootPeerId(join(home, 'a'));
    bId = await firstBootPeerId(join(home, 'b'));
    const aPort = await freePort();
    const bPort = await freePort();
    aAddr = `/ip4/127.0.0.1/tcp/${aPort}/p2p/${aId}`;
    const nodes = [
      { name: 'alpha', multiAddr: aAddr },
      { name: 'beta', multiAddr: `/ip4/127.0.0.1/tcp/${bPort}/p2p/${bId}` },
      { name: 'gamma', multiAddr: gammaAddr },
    ];
    const shared = { adminApiKey: KEY, nodes, health: { requiredPeerCount: 0 } };
    a = await startNode(join(home, 'a'), { ...shared, peerDiscovery: { listen: [`/ip4/127.0.0.1/tcp/${aPort}`] }, enableDebugApi: false });
    b = await startNode(join(home, 'b'), { ...shared, peerDiscovery: { listen: [`/ip4/127.0.0.1/tcp/${bPort}`] }, enableDebugApi: true });
    bare = await startNode(join(home, 'bare'), { adminApiKey: '', enableDebugApi: true });
  });

  after(async () => {
    await b?.stop();
    await a?.stop();
    await bare?.stop();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    rmSync(home, { recursive: true, force: true });
  });

  it('B dialled A at startup, before the API served; the silent peer did not hold startup past the bound', async () => {
    const peers = await get(b!, '/api/p2p/peers');
    assert.equal(peers.status, 200);
    assert.ok(peers.body.peers.includes(aId), 'B is connected to A as soon as its API answers');
    assert.ok(!peers.body.peers.includes(gammaId));
    // The hanging dial lasts dialTimeoutMs (2.5 s); startup waited at most startupBoundMs (1 s) for it.
    assert.ok(b!.startMs < TIMINGS.dialTimeoutMs!, `B started in ${b!.startMs} ms`);
    // …and it did wait for the pass: the silent dial kept the pass running through the whole bound.
    assert.ok(b!.startMs >= TIMINGS.startupBoundMs! - 20, `B started in ${b!.startMs} ms`);
    const aPeers = await get(a!, '/api/p2p/peers');
    assert.ok(aPeers.body.peers.includes(bId), 'A sees the inbound connection');
  });

  it('each node filters its own entry out of the shared list (no self-dial); logs carry counts only', async () => {
    const startup = b!.lines.find((line) => line.msg === 'peering pass' && line.trigger === 'startup');
    // The startup pass may still be waiting on the silent peer when the API starts: it ends at the dial timeout.
    const pass = startup ?? (await waitForLine(b!, 'startup'));
    assert.equal(pass.total, 2, 'alpha and gamma; beta is B itself');
    assert.equal(pass.connected, 1);
    const text = JSON.stringify(b!.lines);
    for (const secret of [aId, bId, gammaId, aAddr, gammaAddr]) assert.ok(!text.includes(secret), 'no peer id or multiaddr in the logs');
  });

  it('status, connections, peerStore and peerInfo answer the original payloads (JSON-safe)', async () => {
    const status = await get(b!, '/api/p2p/status');
    assert.equal(status.status, 200);
    assert.equal(status.body.status, 'started');
    assert.equal(status.body.peerId, bId);
    assert.equal(status.headers.get('cache-control'), 'no-store');

    const connections = await get(b!, `/api/p2p/connections?peerId=${encodeURIComponent(aId)}`);
    assert.equal(connections.status, 200);
    assert.ok(connections.body.length >= 1);
    assert.equal(connections.body.connections.length, connections.body.length);
    assert.deepEqual(Object.keys(connections.body.connections[0]).sort(), ['direction', 'peerId', 'remoteAddr', 'status']);
    assert.equal(connections.body.connections[0].peerId, aId);
    assert.equal(connections.body.connections[0].status, 'open');

    const store = await get(b!, '/api/p2p/peerStore');
    assert.equal(store.status, 200);
    assert.ok(store.body.peers.some((peer: { id: string }) => peer.id === aId));
    assert.ok(store.body.length <= 10);
    const filtered = await get(b!, `/api/p2p/peerStore?peerId=${aId}`);
    assert.deepEqual(filtered.body, { length: 1, peers: [{ id: aId }] });

    const info = await get(b!, `/api/p2p/peerInfo?peerId=${aId}`);
    assert.equal(info.status, 200);
    assert.equal(info.body.length, 1);
    assert.equal(info.body.peer[0].id, aId);
    assert.ok(info.body.peer[0].addresses.every((address: unknown) => typeof address === 'string'));
    assert.ok(info.body.peer[0].protocols.includes('/ipfs/ping/1.0.0'), 'identify told B what A speaks');
    assert.deepEqual((await get(b!, '/api/p2p/peerInfo')).status, 400);
  });

  it('ping answers a latency in milliseconds; /api/libp2p is the same family', async () => {
    const ping = await get(b!, `/api/p2p/services/ping?peerId=${aId}`);
    assert.equal(ping.status, 200, JSON.stringify(ping.body));
    assert.equal(typeof ping.body.pong, 'number');
    assert.ok(ping.body.pong >= 0);
    const alias = await get(b!, '/api/libp2p/status');
    assert.equal(alias.status, 200);
    assert.equal(alias.body.status, 'started');
    const aliasPing = await get(b!, `/api/libp2p/services/ping?peerId=${encodeURIComponent(aId)}`);
    assert.equal(aliasPing.status, 200, JSON.stringify(aliasPing.body));
    assert.equal(typeof aliasPing.body.pong, 'number');
    // Back-to-back and concurrent pings: each one's stream may still be closing when the next opens.
    const together = await Promise.all([1, 2, 3].map(() => get(b!, `/api/p2p/services/ping?peerId=${aId}`)));
    assert.deepEqual(together.map((reply) => reply.status), [200, 200, 200], JSON.stringify(together.map((reply) => reply.body)));
  });

  it('dial: by multiaddr or peer id → success; invalid input → 400; refused → 502; silent → 408', async () => {
    const byAddr = await get(b!, `/api/p2p/dial?multiAddr=${encodeURIComponent(aAddr)}`);
    assert.equal(byAddr.status, 200, JSON.stringify(byAddr.body));
    assert.equal(byAddr.body.success, true);
    assert.equal(byAddr.body.connection.peerId, aId);
    assert.equal(typeof byAddr.body.connection.remoteAddr, 'string');
    const byId = await get(b!, `/api/p2p/dial?peerId=${aId}`);
    assert.equal(byId.status, 200);
    assert.equal(byId.body.connection.peerId, aId);

    for (const query of ['multiAddr=not-a-multiaddr', 'multiAddr=%2Fip4%2F999.1.1.1%2Ftcp%2F1', 'peerId=not-a-peer-id', '']) {
      const bad = await get(b!, `/api/p2p/dial?${query}`);
      assert.equal(bad.status, 400, query);
      assert.deepEqual(Object.keys(bad.body), ['error']);
    }
    const self = await get(b!, `/api/p2p/dial?peerId=${bId}`);
    assert.equal(self.status, 400);

    const closedPort = await freePort();
    const refused = await get(b!, `/api/p2p/dial?multiAddr=${encodeURIComponent(`/ip4/127.0.0.1/tcp/${closedPort}/p2p/${gammaId}`)}`);
    assert.equal(refused.status, 502, JSON.stringify(refused.body));
    assert.match(refused.body.error, /^Dial failed/);

    const hanging = await get(b!, `/api/p2p/dial?multiAddr=${encodeURIComponent(gammaAddr)}`);
    assert.equal(hanging.status, 408, JSON.stringify(hanging.body));
    assert.deepEqual(hanging.body, { error: 'Peer request timed out' });
  });

  it('every p2p route needs the key (401) and fails closed without a configured key (503)', async () => {
    for (const prefix of ['/api/p2p', '/api/libp2p']) {
      for (const route of P2P_ROUTES) {
        const missing = await get(b!, `${prefix}${route}`, null);
        assert.equal(missing.status, 401, `${prefix}${route}`);
        assert.deepEqual(missing.body, { error: 'Unauthorized' });
        assert.equal((await get(b!, `${prefix}${route}`, 'wrong-key')).status, 401);
        const unconfigured = await get(bare!, `${prefix}${route}`);
        assert.equal(unconfigured.status, 503, `${prefix}${route}`);
        assert.deepEqual(unconfigured.body, { error: 'Service not configured' });
      }
    }
    assert.equal((await get(bare!, '/api/debug/autopeering')).status, 503);
  });

  it('E59: /api/debug/autopeering is not mounted without enableDebugApi; mounted, it needs the key and runs a pass', async () => {
    const unmounted = await get(a!, '/api/debug/autopeering');
    assert.equal(unmounted.status, 404);
    assert.deepEqual(unmounted.body, { error: 'Not found' });
    assert.equal((await get(b!, '/api/debug/autopeering', null)).status, 401);
    const pass = await get(b!, '/api/debug/autopeering');
    assert.equal(pass.status, 200, JSON.stringify(pass.body));
    assert.deepEqual(pass.body, { peeredSuccessfullyTo: ['alpha'] });
  });

  it('E60: the provider-lookup route no longer exists', async () => {
    const cid = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';
    assert.equal((await get(b!, `/api/runtime/routing/findProviders/${cid}`)).status, 404);
    assert.equal((await get(b!, `/api/helia/routing/findProviders/${cid}`)).status, 404);
  });
});

async function waitForLine(node: RunningNode, trigger: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = node.lines.find((entry) => entry.msg === 'peering pass' && entry.trigger === trigger);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no '${trigger}' peering pass logged`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
