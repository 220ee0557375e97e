// The replication protocol between two real libp2p nodes on 127.0.0.1 (actors/files/replication.actor.ts and
// storage/files/peer-copy.libp2p.ts; docs/specs/files-node.md §1.4, §8; docs/notes/files-node.md A.9, C24, C25, C27): who may
// make a node responsible for content, the cache fallback, the incoming-copy slot and the disk reserve, and the
// strict upload's stage / commit / abort with its pin-intent marker.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { multiaddr } from '@multiformats/multiaddr';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { copyClient, HOLDINGS_RECHECK_MS, type CopyClient } from '../../../storage/files/peer-copy.libp2p.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { askPeer, changeProtocols, frameHandler } from '../../../storage/files/protocol-stream.libp2p.js';
import { replicationResponderLogic, type ReplicationResponderOptions } from '../../../actors/files/replication.actor.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { InsufficientStorageError } from '../../../src/files/errors.js';
import { HOLDINGS_MAX_FRAME_BYTES, HOLDINGS_PROTOCOL, REPLICATION_MAX_FRAME_BYTES, REPLICATION_PROTOCOL } from '../../../src/files/wire.js';
import { freePort } from '../../support/cli.js';
import { startStore, type TestStore } from '../../support/files-store.js';
import { captureLogger } from '../../support/logger.js';
import { watchPromise, waitFor } from '../../support/wait.js';

const NO_SIGNAL = new AbortController().signal;
/** For the SimulatedClock tests: a minute on the wall clock, so only the simulated clock can end a wait in a test. */
const SIMULATED_TIMEOUT = 60_000;

/** A disk claim that never answers until the request's signal aborts: a request then hangs inside B's answer. */
function hangingDiskClaim(): { claimDisk: ReplicationResponderOptions['claimDisk']; claims: () => number } {
  let claims = 0;
  return {
    claimDisk: (_bytes, signal) => {
      claims++;
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
    },
    claims: () => claims,
  };
}

describe('the replication protocol between two real nodes', { timeout: 120_000 }, () => {
  let home: string;
  let a: FilesNode;
  let b: FilesNode;
  let bAddress: string;
  let client: CopyClient;
  let responder: AnyActorRef | undefined;
  let owner: TestStore | undefined;

  /** (Re)starts B's responder with `overrides` (members default: A), once its handler is registered. */
  const respond = async (overrides: Partial<ReplicationResponderOptions> = {}) => {
    responder?.stop();
    owner?.stop();
    const holder = new NodeHolder();
    holder.set(b);
    owner = startStore(holder);
    responder = createActor(
      replicationResponderLogic({
        holder,
        members: [a.peerId, b.peerId],
        store: owner.port,
        tryIncomingCopy: () => () => {},
        claimDisk: async () => ({ release: () => {} }),
        requestTimeoutMs: 10_000,
        clock: systemClock,
        logger: captureLogger('warn').logger,
        ...overrides,
      }),
    ).start();
    // Handler changes of one node run in order: a no-op change settles after the responder's own registration.
    await changeProtocols(b.libp2p, async () => {});
  };

  /** CIDs of content nobody holds (raw blocks never written anywhere). */
  const absentCids = async (count: number, prefix: string): Promise<string[]> =>
    Promise.all(Array.from({ length: count }, async (_, i) => CID.createV1(raw.code, await sha256.digest(new TextEncoder().encode(`${prefix} ${i}`))).toString()));

  /**
   * Replaces B's handler of `protocol` (after every earlier handler change): each request is counted and answered by
   * `answer`. The next respond() puts the responder's own handlers back (registered with force).
   */
  const countingHandler = async (protocol: string, maxBytes: number, answer: (request: unknown) => unknown): Promise<{ count: () => number }> => {
    let count = 0;
    const handler = frameHandler(maxBytes, 10_000, systemClock, async (request) => (count++, answer(request)), () => {});
    await changeProtocols(b.libp2p, () => b.libp2p.handle(protocol, handler, { force: true }));
    return { count: () => count };
  };

  /** New content on A only (helia's own importer; the CID's settings do not matter here). */
  const contentOnA = async (size = 300_000): Promise<CID> => a.unixfs.addBytes(randomBytes(size));

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-replication-'));
    const silent = captureLogger('warn').logger;
    a = await startFilesNode({ storeDirectory: join(home, 'a'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder: new NodeHolder(), logger: silent });
    const bPort = await freePort();
    b = await startFilesNode({ storeDirectory: join(home, 'b'), listen: [`/ip4/127.0.0.1/tcp/${bPort}`], allow: [], holder: new NodeHolder(), logger: silent });
    bAddress = `/ip4/127.0.0.1/tcp/${bPort}/p2p/${b.peerId}`;
    client = copyClient({ libp2p: () => a.libp2p, peers: [{ peerId: b.peerId, multiAddr: bAddress }], requestTimeoutMs: 10_000, clock: systemClock });
  });

  after(async () => {
    responder?.stop();
    owner?.stop();
    await stopFilesNode(b);
    await stopFilesNode(a);
    rmSync(home, { recursive: true, force: true });
  });

  it('store: B pulls the DAG, pins it and registers a confirmed replica before it answers; have then says yes', async () => {
    await respond();
    const cid = await contentOnA();
    assert.equal(await client.have(b.peerId, cid.toString(), NO_SIGNAL), false);
    assert.equal(await client.probe(b.peerId, cid.toString(), NO_SIGNAL), 'missing', 'B answered: not here');
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored');
    assert.equal(await b.helia.pins.isPinned(cid), true);
    const record = b.registry.get(cid.toString());
    assert.deepEqual({ state: record?.state, pinned: record?.pinned, heldLocally: record?.heldLocally, origin: record?.origin }, { state: 'confirmed', pinned: true, heldLocally: true, origin: 'replica' });
    assert.ok((record?.dagBytes ?? 0) >= 300_000);
    assert.deepEqual(b.registry.intents(), [], 'the marker went with the commit');
    assert.deepEqual(b.registry.acknowledgedBy(cid.toString()), [a.peerId], 'the asking member is the source: it holds a stored copy');
    assert.deepEqual(await client.probe(b.peerId, cid.toString(), NO_SIGNAL), 'held');
    assert.equal(await client.have(b.peerId, cid.toString(), NO_SIGNAL), true);
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored', 'a second store of a held copy is acknowledged');
  });

  it('a peer outside B\'s nodes cannot make it responsible: the copy falls back to an unpinned cache', async () => {
    await respond({ members: [b.peerId] });
    const cid = await contentOnA();
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'cached');
    assert.equal(await b.helia.pins.isPinned(cid), false);
    assert.equal(b.registry.get(cid.toString()), undefined);
    assert.equal(await b.store.blockstore.has(cid), true, 'the blocks are held, unpinned (collected like read cache)');
    const refusal = await client.request(b.peerId, { op: 'have', cid: cid.toString() }, NO_SIGNAL);
    assert.deepEqual(refusal.ok === false && refusal.code, 'unauthorized');
    assert.equal(await client.probe(b.peerId, cid.toString(), NO_SIGNAL), 'unknown', 'a refusal says nothing about the copy');
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL, 'staged-x'), 'failed', 'a staged copy never falls back to a cache');
  });

  it('no incoming-copy slot or no room above the disk reserve: refused, and accept says so', async () => {
    const cid = await contentOnA(10_000);
    await respond({ tryIncomingCopy: () => undefined });
    assert.deepEqual(await client.request(b.peerId, { op: 'store', cid: cid.toString() }, NO_SIGNAL), { ok: false, code: 'busy', error: 'too many incoming copies' });
    assert.deepEqual(await client.request(b.peerId, { op: 'accept', cid: cid.toString() }, NO_SIGNAL), { ok: true, op: 'accept', willAccept: false });
    await respond({
      claimDisk: async () => {
        throw new InsufficientStorageError();
      },
    });
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'failed');
    const refusal = await client.request(b.peerId, { op: 'cache', cid: cid.toString() }, NO_SIGNAL);
    assert.equal(refusal.ok === false && refusal.code, 'insufficientStorage', 'the reserve binds caches too');
    assert.equal(await b.helia.pins.isPinned(cid), false);
    await respond();
    assert.deepEqual(await client.request(b.peerId, { op: 'accept', cid: cid.toString() }, NO_SIGNAL), { ok: true, op: 'accept', willAccept: true });
  });

  it('stage pins under the session with its marker and no record; abort puts the pre-request state back', async () => {
    await respond();
    const cid = await contentOnA();
    const session = 'staged-0001';
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL, session), 'stored');
    assert.equal(await b.helia.pins.isPinned(cid), true);
    assert.equal(b.registry.get(cid.toString()), undefined, 'not registered before commit');
    assert.deepEqual(
      b.registry.intents().map((intent) => intent.sessionId),
      [session],
    );
    assert.deepEqual(await client.request(b.peerId, { op: 'abort', cid: cid.toString(), session }, NO_SIGNAL), { ok: true, op: 'abort' });
    assert.equal(await b.helia.pins.isPinned(cid), false);
    assert.deepEqual(b.registry.intents(), []);
    assert.equal(b.registry.get(cid.toString()), undefined);
  });

  it('stage then commit registers the copy; a commit of an unknown stage is refused', async () => {
    await respond();
    const cid = await contentOnA();
    const session = 'staged-0002';
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL, session), 'stored');
    assert.deepEqual(await client.request(b.peerId, { op: 'commit', cid: cid.toString(), session }, NO_SIGNAL), { ok: true, op: 'commit' });
    assert.equal(b.registry.get(cid.toString())?.state, 'confirmed');
    assert.deepEqual(b.registry.intents(), []);
    const unknown = await client.request(b.peerId, { op: 'commit', cid: cid.toString(), session: 'staged-none' }, NO_SIGNAL);
    assert.equal(unknown.ok === false && unknown.code, 'notFound');
  });

  it('a temporary file is not held: have says no, and a store makes it a confirmed, held copy', async () => {
    await respond();
    const cid = await contentOnA(20_000);
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored');
    const held = b.registry.get(cid.toString())!;
    b.registry.put({ ...held, state: 'temporary', expiresAt: Date.now() + 60_000, confirmedAt: null });
    assert.equal(await client.have(b.peerId, cid.toString(), NO_SIGNAL), false, 'a temporary file may expire: no durable copy');
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored');
    assert.equal(b.registry.get(cid.toString())?.state, 'confirmed');
  });

  it('a pin walk that was aborted midway is no pin: a later store fetches and pins for real', async () => {
    await respond();
    const cid = await contentOnA(3_500_000);
    // Fetch and mark part of the DAG on B, then abort: helia leaves the root marked as pinned without a pin.
    const controller = new AbortController();
    let visited = 0;
    await assert.rejects(async () => {
      for await (const _ of b.helia.pins.add(cid, { signal: controller.signal })) if (++visited === 2) controller.abort();
    });
    assert.equal(await b.helia.pins.isPinned(cid), true, 'the block marker helia leaves behind');
    assert.equal(await b.pins.has(cid), false);
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored');
    assert.equal(await b.pins.has(cid), true);
    const pins = [];
    for await (const pin of b.helia.pins.ls()) pins.push(pin.cid.toString());
    assert.ok(pins.includes(cid.toString()));
  });

  it('a request that is not one of ours is answered invalid, without touching anything', async () => {
    await respond();
    const answer = await askPeer(a.libp2p, multiaddr(bAddress), REPLICATION_PROTOCOL, { op: 'delete', cid: 'x' }, REPLICATION_MAX_FRAME_BYTES, AbortSignal.timeout(5_000));
    assert.deepEqual(answer, { ok: false, code: 'invalid', error: 'invalid request' });
  });

  it("the asking side's requestTimeoutMs runs on its clock: a peer that never answers fails the request once that clock passes it", async () => {
    const hang = hangingDiskClaim();
    await respond({ claimDisk: hang.claimDisk });
    const cid = await contentOnA(10_000);
    const clock = new SimulatedClock();
    const asker = copyClient({ libp2p: () => a.libp2p, peers: [{ peerId: b.peerId, multiAddr: bAddress }], requestTimeoutMs: SIMULATED_TIMEOUT, clock });
    const request = watchPromise(asker.request(b.peerId, { op: 'accept', cid: cid.toString() }, NO_SIGNAL), 'the accept request');
    await waitFor(() => hang.claims() === 1, { what: "B's answer to reach the disk claim" });
    clock.increment(SIMULATED_TIMEOUT - 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(request.settled, false, 'still waiting short of the timeout');
    clock.increment(1);
    await assert.rejects(request.settle(), (error: unknown) => (error as Error).name === 'TimeoutError');
  });

  it("the responder's requestTimeoutMs runs on its clock: an answer that never comes is given up once that clock passes it", async () => {
    const hang = hangingDiskClaim();
    const clock = new SimulatedClock();
    const log = captureLogger('debug');
    await respond({ claimDisk: hang.claimDisk, clock, requestTimeoutMs: SIMULATED_TIMEOUT, logger: log.logger });
    const cid = await contentOnA(10_000);
    // The asker's own bound is 10 s on the wall clock, past the cap of settle(): only B's bound can end this request.
    const request = watchPromise(client.request(b.peerId, { op: 'store', cid: cid.toString() }, NO_SIGNAL), 'the store request');
    await waitFor(() => hang.claims() === 1, { what: "B's answer to reach the disk claim" });
    clock.increment(SIMULATED_TIMEOUT - 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(request.settled, false, 'still waiting short of the timeout');
    clock.increment(1);
    // B answers "failed" or aborts the stream (its reply may not leave once the bound has passed): never a stored copy.
    const outcome = await request.settle().then(
      (answer) => answer,
      (error: unknown) => error as Error,
    );
    assert.ok(outcome instanceof Error || outcome.ok === false, `not stored: ${JSON.stringify(outcome)}`);
    const line = await waitFor(() => log.lines.find((entry) => entry['msg'] === 'replication request failed'), { timeoutMs: 2_000, what: "B's failure line" });
    assert.deepEqual({ op: line['op'], kind: line['kind'] }, { op: 'store', kind: 'TimeoutError' });
    assert.equal(b.registry.get(cid.toString()), undefined);
  });

  it('holdings: one request answers `have` for up to 100 CIDs, in order; 150 CIDs take two requests', async () => {
    await respond();
    const stored: string[] = [];
    for (let i = 0; i < 3; i++) {
      const cid = (await contentOnA(2_000 + i)).toString();
      assert.equal(await client.place(b.peerId, cid, NO_SIGNAL), 'stored');
      stored.push(cid);
    }
    const cids = await absentCids(150, 'holdings');
    cids[0] = stored[0]!;
    cids[99] = stored[1]!;
    cids[149] = stored[2]!;
    // B's `have` now refuses everything: answers right for the stored copies can only come over holdings.
    const haves = await countingHandler(REPLICATION_PROTOCOL, REPLICATION_MAX_FRAME_BYTES, () => ({ ok: false, code: 'busy', error: 'no' }));
    const answers = await client.probeMany(b.peerId, cids, NO_SIGNAL, 4);
    assert.deepEqual(
      answers,
      cids.map((cid) => (stored.includes(cid) ? 'held' : 'missing')),
    );
    assert.equal(haves.count(), 0, 'no `have` asked');
  });

  it('holdings: a peer outside B\'s nodes is refused (each CID unknown to the asker); a malformed request is invalid', async () => {
    await respond({ members: [b.peerId] });
    const cids = await absentCids(3, 'refused');
    assert.deepEqual(await client.probeMany(b.peerId, cids, NO_SIGNAL, 4), ['unknown', 'unknown', 'unknown']);
    const target = multiaddr(bAddress);
    const ask = (request: unknown) => askPeer(a.libp2p, target, HOLDINGS_PROTOCOL, request, HOLDINGS_MAX_FRAME_BYTES, AbortSignal.timeout(5_000));
    assert.deepEqual(await ask({ cids }), { ok: false, code: 'unauthorized', error: 'Not authorized' });
    assert.deepEqual(await ask({ cids: [] }), { ok: false, code: 'invalid', error: 'invalid request' });
    await respond();
    assert.deepEqual(await ask({ cids: [cids[0], 'not a cid'] }), { ok: false, code: 'invalid', error: 'invalid CID' });
    assert.deepEqual(await ask({ cids }), { ok: true, has: [false, false, false] });
  });

  it('a peer without holdings (the original node): `have` per CID, and holdings is offered again only after HOLDINGS_RECHECK_MS', async () => {
    responder?.stop();
    responder = undefined;
    await changeProtocols(b.libp2p, () => b.libp2p.unhandle(HOLDINGS_PROTOCOL));
    const haves = await countingHandler(REPLICATION_PROTOCOL, REPLICATION_MAX_FRAME_BYTES, (request) => ({ ok: true, op: (request as { op: string }).op, has: true }));
    const clock = new SimulatedClock();
    const asker = copyClient({ libp2p: () => a.libp2p, peers: [{ peerId: b.peerId, multiAddr: bAddress }], requestTimeoutMs: SIMULATED_TIMEOUT, clock });
    const cids = await absentCids(150, 'original');
    assert.deepEqual(await asker.probeMany(b.peerId, cids, NO_SIGNAL, 4), cids.map(() => 'held'));
    assert.equal(haves.count(), 150);
    // The peer is upgraded: it offers holdings now, but the asker does not try it again within the recheck window.
    const holdings = await countingHandler(HOLDINGS_PROTOCOL, HOLDINGS_MAX_FRAME_BYTES, (request) => ({ ok: true, has: (request as { cids: unknown[] }).cids.map(() => false) }));
    assert.deepEqual(await asker.probeMany(b.peerId, cids.slice(0, 10), NO_SIGNAL, 4), cids.slice(0, 10).map(() => 'held'));
    assert.deepEqual([haves.count(), holdings.count()], [160, 0]);
    clock.increment(HOLDINGS_RECHECK_MS);
    assert.deepEqual(await asker.probeMany(b.peerId, cids, NO_SIGNAL, 4), cids.map(() => 'missing'));
    assert.deepEqual([haves.count(), holdings.count()], [160, 2]);
  });
});
