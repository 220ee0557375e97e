// The block pull protocol between real libp2p nodes on 127.0.0.1 (storage/files/block-pull.libp2p.ts, served and
// used by actors/files/replication.actor.ts): a copy comes over one stream with its bytes intact and its pin in place;
// a peer that lacks a block, is not a member, does not offer the protocol, sends a wrong or unexpected block, or
// breaks the stream midway leaves nothing unverified written, and the copy falls back to bitswap.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Stream } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import { importByteStream } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import { createActor, type AnyActorRef } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { blockFrameHead } from '../../../src/files/block-frames.js';
import { BLOCKS_MAX_REQUEST_BYTES, BLOCKS_PROTOCOL } from '../../../src/files/wire.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { replicationResponderLogic } from '../../../actors/files/replication.actor.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { IMPORTER_SETTINGS } from '../../../actors/files/upload-session.js';
import { pullBlocks, type PullOptions } from '../../../storage/files/block-pull.libp2p.js';
import { linksOf } from '../../../storage/files/dag-walk.js';
import { copyClient, type CopyClient } from '../../../storage/files/peer-copy.libp2p.js';
import { changeProtocols, readFrame } from '../../../storage/files/protocol-stream.libp2p.js';
import { freePort } from '../../support/cli.js';
import { startStore, type TestStore } from '../../support/files-store.js';
import { captureLogger, type CapturedLogger } from '../../support/logger.js';

const NO_SIGNAL = new AbortController().signal;
const MIB = 1_048_576;
const PULL_FAILED = 'the block pull failed; fetching the copy over bitswap';

describe('the block pull protocol between real nodes', { timeout: 180_000 }, () => {
  let home: string;
  let a: FilesNode;
  let b: FilesNode;
  let client: CopyClient;
  const running: Array<{ actor: AnyActorRef; store: TestStore }> = [];
  let bLog: CapturedLogger;

  /** A replication responder on `node` (the serving side of the block pull comes with it), members A and B. */
  const respond = async (node: FilesNode, overrides: { members?: string[]; requestTimeoutMs?: number } = {}): Promise<CapturedLogger> => {
    const holder = new NodeHolder();
    holder.set(node);
    const store = startStore(holder);
    const log = captureLogger('debug');
    const actor = createActor(
      replicationResponderLogic({
        holder,
        members: overrides.members ?? [a.peerId, b.peerId],
        store: store.port,
        tryIncomingCopy: () => () => {},
        claimDisk: async () => ({ release: () => {} }),
        requestTimeoutMs: overrides.requestTimeoutMs ?? 15_000,
        clock: systemClock,
        logger: log.logger,
      }),
    ).start();
    running.push({ actor, store });
    await changeProtocols(node.libp2p, async () => {});
    return log;
  };
  const stopResponders = async () => {
    for (const { actor, store } of running.splice(0)) {
      actor.stop();
      store.stop();
    }
    await changeProtocols(a.libp2p, async () => {});
    await changeProtocols(b.libp2p, async () => {});
  };

  /** A file on A imported as the node imports uploads (1 MiB raw leaves under a dag-pb root). */
  const importOnA = async (content: Uint8Array): Promise<CID> => {
    const storage = { put: async (cid: CID, bytes: Uint8Array) => (await a.store.blockstore.put(cid, bytes), cid) };
    return (await importByteStream([content], storage, IMPORTER_SETTINGS)).cid;
  };
  const bytesOn = async (node: FilesNode, cid: CID): Promise<Buffer> => {
    const pieces: Uint8Array[] = [];
    for await (const piece of node.unixfs.cat(cid, { offline: true })) pieces.push(piece);
    return Buffer.concat(pieces);
  };
  /** Every block of `cid`'s DAG as B's blockstore has it (true) or not. */
  const blocksOnB = async (cids: CID[]) => Promise.all(cids.map((cid) => b.store.blockstore.has(cid)));
  /** The CIDs of `root`'s DAG on A (root first). */
  const dagOnA = async (root: CID): Promise<CID[]> => {
    const rootBytes = await a.store.blockstore.getBlock(root);
    return [root, ...(await linksOf(a.helia.getCodec, root, rootBytes))];
  };
  /** B's own pull (no actor), writes recorded; each write takes at least `writeMs`. */
  const pullOnB = (from: FilesNode, root: CID, signal = AbortSignal.timeout(10_000), writeMs = 0) => {
    const written: string[] = [];
    const options: PullOptions = {
      linksOf: (cid, bytes) => linksOf(b.helia.getCodec, cid, bytes),
      write: async (cid, bytes) => {
        written.push(cid.toString());
        if (writeMs > 0) await new Promise((resolve) => setTimeout(resolve, writeMs));
        await b.store.blockstore.put(cid, bytes);
      },
      signal,
    };
    return { written, pull: pullBlocks(b.libp2p, peerIdFromString(from.peerId), root, options) };
  };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-block-pull-'));
    const silent = captureLogger('warn').logger;
    a = await startFilesNode({ storeDirectory: join(home, 'a'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder: new NodeHolder(), logger: silent });
    const bPort = await freePort();
    b = await startFilesNode({ storeDirectory: join(home, 'b'), listen: [`/ip4/127.0.0.1/tcp/${bPort}`], allow: [], holder: new NodeHolder(), logger: silent });
    client = copyClient({ libp2p: () => a.libp2p, peers: [{ peerId: b.peerId, multiAddr: `/ip4/127.0.0.1/tcp/${bPort}/p2p/${b.peerId}` }], requestTimeoutMs: 20_000, clock: systemClock });
    await a.libp2p.dial(b.libp2p.getMultiaddrs()[0]!);
  });

  after(async () => {
    await stopResponders();
    await stopFilesNode(b);
    await stopFilesNode(a);
    rmSync(home, { recursive: true, force: true });
  });

  it('a 5 MiB file with a leaf repeated: copied over the pull, bytes identical, pinned and registered on B', async () => {
    await respond(a);
    bLog = await respond(b);
    const leaf = randomBytes(MIB);
    const content = Buffer.concat([leaf, randomBytes(MIB), leaf, randomBytes(MIB), leaf, randomBytes(123_456)]);
    const cid = await importOnA(content);
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored');
    assert.ok((await bytesOn(b, cid)).equals(content), 'the same bytes on B');
    assert.equal(await b.pins.has(cid), true);
    assert.equal(b.registry.get(cid.toString())?.state, 'confirmed');
    assert.equal(bLog.lines.find((line) => line['msg'] === PULL_FAILED), undefined, 'no fallback to bitswap');
    await stopResponders();
  });

  it('the pull itself: every block written once, the repeated leaf once; a single raw block too', async () => {
    await respond(a);
    const leaf = randomBytes(MIB);
    const cid = await importOnA(Buffer.concat([leaf, leaf, randomBytes(1000)]));
    const { written, pull } = pullOnB(a, cid);
    assert.deepEqual(await pull, { blocks: 3, bytes: (await a.store.blockstore.getBlock(cid)).length + MIB + 1000 });
    assert.equal(written.length, 3);
    assert.deepEqual(await blocksOnB(await dagOnA(cid)), [true, true, true, true]);
    const single = await importOnA(randomBytes(500_000));
    const one = pullOnB(a, single);
    assert.deepEqual(await one.pull, { blocks: 1, bytes: 500_000 });
    assert.deepEqual(one.written, [single.toString()]);
    await stopResponders();
  });

  it('64 MiB to a writer slower than the network: the stream is paused and resumed (paused, it buffers past libp2p\'s 4 MiB default), every block arrives', async () => {
    await respond(a);
    const content = randomBytes(64 * MIB + 5);
    const cid = await importOnA(content);
    const { pull, written } = pullOnB(a, cid, AbortSignal.timeout(60_000), 2);
    assert.equal((await pull).blocks, 66);
    assert.equal(new Set(written).size, 66);
    assert.ok((await bytesOn(b, cid)).equals(content));
    await stopResponders();
  });

  it('A lacks a block: the pull is refused (notFound) mid-stream; the copy then fails cleanly, nothing pinned', async () => {
    await respond(a);
    bLog = await respond(b, { requestTimeoutMs: 3_000 });
    const cid = await importOnA(randomBytes(3 * MIB + 10));
    const dag = await dagOnA(cid);
    unlinkSync(a.store.blockstore.pathOf(dag[2]!));
    const { pull } = pullOnB(a, cid);
    await assert.rejects(pull, (error: unknown) => (error as Error).name === 'BlocksRefusedError' && (error as { code: string }).code === 'notFound');
    assert.equal(await b.store.blockstore.has(dag[2]!), false);
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'failed', 'bitswap finds the block nowhere either');
    assert.ok(bLog.lines.some((line) => line['msg'] === PULL_FAILED && line['kind'] === 'BlocksRefusedError'));
    assert.equal(await b.pins.has(cid), false);
    assert.equal(b.registry.get(cid.toString()), undefined);
    assert.deepEqual(b.registry.intents(), []);
    await stopResponders();
  });

  it('a peer outside the serving node\'s nodes is refused (unauthorized)', async () => {
    await respond(a, { members: [a.peerId] });
    const cid = await importOnA(randomBytes(2 * MIB));
    const { pull, written } = pullOnB(a, cid);
    await assert.rejects(pull, (error: unknown) => (error as { code?: string }).code === 'unauthorized');
    assert.deepEqual(written, []);
    await stopResponders();
  });

  it('A without the protocol (an original node, an older version): the copy comes over bitswap', async () => {
    bLog = await respond(b);
    const cid = await importOnA(randomBytes(2 * MIB + 5));
    // A's answers to bitswap come from helia itself; no responder on A means no block pull handler there.
    assert.equal(await client.place(b.peerId, cid.toString(), NO_SIGNAL), 'stored');
    assert.equal(await b.pins.has(cid), true);
    assert.ok(bLog.lines.some((line) => line['msg'] === PULL_FAILED && line['kind'] === 'UnsupportedProtocolError'), JSON.stringify(bLog.lines.map((l) => l['kind'])));
    await stopResponders();
  });

  describe('a serving peer that misbehaves (a handler of our own on A)', () => {
    /** Registers `serve` as A's block pull handler: it gets the stream and the requested root. */
    const misbehave = async (serve: (stream: Stream, root: CID, dag: Map<string, Uint8Array>) => Promise<void>, dag: Map<string, Uint8Array>) => {
      await a.libp2p.handle(
        BLOCKS_PROTOCOL,
        (stream) => {
          void (async () => {
            const request = (await readFrame(stream, BLOCKS_MAX_REQUEST_BYTES, AbortSignal.timeout(5_000))) as { cid: string };
            await serve(stream, CID.parse(request.cid), dag);
          })().catch((error: unknown) => stream.abort(error as Error));
        },
        { force: true },
      );
    };
    const sendBlock = (stream: Stream, cid: CID, bytes: Uint8Array) => {
      stream.send(blockFrameHead(cid.bytes, bytes.length));
      stream.send(bytes);
    };
    after(async () => {
      await a.libp2p.unhandle(BLOCKS_PROTOCOL);
    });

    const fileOnA = async () => {
      const cid = await importOnA(randomBytes(3 * MIB + 77));
      const cids = await dagOnA(cid);
      const dag = new Map<string, Uint8Array>();
      dag.set(cid.toString(), await a.store.blockstore.getBlock(cid));
      return { cid, cids, dag };
    };

    it('a block whose bytes do not hash to its CID: refused, never written', async () => {
      const { cid, cids, dag } = await fileOnA();
      await misbehave(async (stream, root) => {
        sendBlock(stream, root, dag.get(root.toString())!);
        const forged = Buffer.from(await a.store.blockstore.getBlock(cids[1]!));
        forged[0] ^= 1;
        sendBlock(stream, cids[1]!, forged);
        await stream.close();
      }, dag);
      const { pull, written } = pullOnB(a, cid);
      await assert.rejects(pull, (error: unknown) => (error as Error).name === 'UnverifiedBlockError');
      assert.ok(!written.includes(cids[1]!.toString()), 'the forged leaf was not written');
      assert.equal(await b.store.blockstore.has(cids[1]!), false);
    });

    it('a block the DAG does not name (before or instead of its own): refused, never written', async () => {
      const { cid, cids, dag } = await fileOnA();
      const stranger = await importOnA(randomBytes(1000));
      await misbehave(async (stream, root) => {
        sendBlock(stream, root, dag.get(root.toString())!);
        sendBlock(stream, stranger, await a.store.blockstore.getBlock(stranger));
        await stream.close();
      }, dag);
      const { pull, written } = pullOnB(a, cid);
      await assert.rejects(pull, (error: unknown) => (error as Error).name === 'UnverifiedBlockError');
      assert.deepEqual(written, [cid.toString()], 'only the verified root');
      assert.equal(await b.store.blockstore.has(stranger), false);
      assert.deepEqual(await blocksOnB(cids.slice(1)), [false, false, false, false]);
    });

    it('a stream that ends early, or is reset midway: the pull fails, the copy falls back to bitswap, pinned once', async () => {
      const ended = await fileOnA();
      await misbehave(async (stream, root) => {
        sendBlock(stream, root, ended.dag.get(root.toString())!);
        sendBlock(stream, ended.cids[1]!, await a.store.blockstore.getBlock(ended.cids[1]!));
        await stream.close();
      }, ended.dag);
      await assert.rejects(pullOnB(a, ended.cid).pull, (error: unknown) => (error as Error).name === 'BlockStreamEndedError');

      const reset = await fileOnA();
      await misbehave(async (stream, root) => {
        sendBlock(stream, root, reset.dag.get(root.toString())!);
        sendBlock(stream, reset.cids[1]!, await a.store.blockstore.getBlock(reset.cids[1]!));
        stream.abort(new Error('gone midway'));
      }, reset.dag);
      await assert.rejects(pullOnB(a, reset.cid).pull);

      bLog = await respond(b);
      const holder = { place: () => client.place(b.peerId, reset.cid.toString(), NO_SIGNAL) };
      const other = await fileOnA();
      await misbehave(async (stream, root) => {
        sendBlock(stream, root, other.dag.get(root.toString())!);
        stream.abort(new Error('gone midway'));
      }, other.dag);
      // B's copies of both files: the pulls break, bitswap brings the rest (A's helia still answers it).
      assert.equal(await client.place(b.peerId, other.cid.toString(), NO_SIGNAL), 'stored');
      assert.equal(await holder.place(), 'stored');
      assert.ok(bLog.lines.some((line) => line['msg'] === PULL_FAILED));
      assert.equal(await b.pins.has(other.cid), true);
      assert.equal(await b.pins.has(reset.cid), true);
      assert.deepEqual(await blocksOnB(other.cids), other.cids.map(() => true));
      await stopResponders();
    });
  });
});
