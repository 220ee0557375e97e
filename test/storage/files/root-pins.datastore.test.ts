// The root pins on the real store (datastore-fs, blockstore-fs through helia's storage): the records are helia's,
// byte for byte, in both directions; pin counts stay right where helia's own pin set loses them (two roots sharing a
// block pinned side by side, a block repeated in a DAG, an add that failed midway); an aborted call never reads as
// "not pinned".
//
// The abort case was found by the fault harness (issue 29, `npm run faults -- --seed 22`): a strict upload answered
// 503, yet after a peer's graceful restart every node held a confirmed record of it. The peer had rolled back its
// staged copy while shutting down: the removal of the pin ran with the owner's signal already aborted, datastore-fs
// answers an aborted read with NotFoundError, so the removal took the pin for one that was never there, the rollback
// deleted the intent marker and the pin stayed; the next start registered it as confirmed and repair copied it.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as cborg from 'cborg';
import { Key } from 'interface-datastore';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { base36 } from 'multiformats/bases/base36';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { captureLogger } from '../../support/logger.js';

const CHUNK = 1024;

/** A file of the given 1 KiB chunks (each chunk one byte repeated) as a DAG of raw leaves under one dag-pb root. */
async function fileOf(node: FilesNode, fills: readonly number[]): Promise<CID> {
  const bytes = new Uint8Array(fills.length * CHUNK);
  fills.forEach((fill, index) => bytes.fill(fill, index * CHUNK, (index + 1) * CHUNK));
  return node.unixfs.addBytes(bytes, { chunker: fixedSize({ chunkSize: CHUNK }), rawLeaves: true });
}

/** The leaf of one chunk filled with `fill`. */
async function leafOf(fill: number): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(new Uint8Array(CHUNK).fill(fill)));
}

/** Every pin record of the store's datastore, by key, as stored bytes. */
async function pinRecords(node: FilesNode): Promise<Map<string, Uint8Array>> {
  const records = new Map<string, Uint8Array>();
  for (const prefix of ['/pin/', '/pinned-block/']) {
    for await (const { key, value } of node.helia.datastore.query({ prefix })) records.set(key.toString(), value);
  }
  return records;
}

async function blockRecord(node: FilesNode, cid: CID): Promise<{ pinCount: number; pinnedBy: string[] } | undefined> {
  try {
    const bytes = await node.helia.datastore.get(new Key(`/pinned-block/${base36.encode(cid.multihash.bytes)}`));
    const record = cborg.decode(bytes) as { pinCount: number; pinnedBy: Uint8Array[] };
    return { pinCount: record.pinCount, pinnedBy: record.pinnedBy.map((by) => CID.decode(by).toString()).sort() };
  } catch (error) {
    if ((error as Error).name === 'NotFoundError') return undefined;
    throw error;
  }
}

async function drain(iterable: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of iterable) {
    // each visited block
  }
}

describe('root pins in helia’s datastore records', () => {
  let home: string;
  const nodes: FilesNode[] = [];

  const startNode = async (name: string): Promise<FilesNode> => {
    const node = await startFilesNode({ storeDirectory: join(home, name), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder: new NodeHolder(), logger: captureLogger('warn').logger });
    nodes.push(node);
    return node;
  };

  before(() => {
    home = mkdtempSync(join(tmpdir(), 'root-pins-'));
  });

  after(async () => {
    for (const node of nodes) await stopFilesNode(node);
    rmSync(home, { recursive: true, force: true });
  });

  it('writes the same records as helia’s pin set, and removes a pin helia made (an original store) down to nothing', async () => {
    const ours = await startNode('ours');
    const helias = await startNode('helia');
    const fills = [1, 2, 3, 4, 5, 6, 7, 8, 9];
    const root = await fileOf(ours, fills);
    assert.deepEqual(await fileOf(helias, fills), root);

    await ours.pins.add(root, { offline: true });
    await drain(helias.helia.pins.add(root, { offline: true } as Parameters<FilesNode['helia']['pins']['add']>[1]));
    const mine = await pinRecords(ours);
    const theirs = await pinRecords(helias);
    assert.equal(mine.size, 1 + 1 + fills.length, 'the pin, its root block and each leaf');
    assert.deepEqual([...mine.keys()].sort(), [...theirs.keys()].sort());
    for (const [key, value] of mine) assert.deepEqual(value, theirs.get(key), `${key}: the same bytes`);

    // helia reads ours.
    assert.deepEqual((await ours.helia.pins.get(root)).depth, Infinity);
    const listed: string[] = [];
    for await (const pin of ours.helia.pins.ls()) listed.push(pin.cid.toString());
    assert.deepEqual(listed, [root.toString()]);
    for (const fill of fills) assert.equal(await ours.helia.pins.isPinned(await leafOf(fill)), true);
    // `rootTexts` lists the pin keys alone, the same CIDs helia's `pins.ls` reads from the records.
    const roots: string[] = [];
    for await (const texts of ours.pins.rootTexts()) roots.push(...texts);
    assert.deepEqual(roots, listed);

    // Ours removes helia's.
    assert.equal(await helias.pins.has(root), true);
    await helias.pins.remove(root);
    assert.equal(await helias.pins.has(root), false);
    assert.deepEqual([...(await pinRecords(helias)).keys()], [], 'no pin and no block record left');
  });

  it('counts a block shared by two roots pinned side by side twice, and keeps it pinned until both are removed', async () => {
    const node = await startNode('shared');
    // Eight files, each with a chunk of its own and the same shared chunk (fill 200), pinned all at once.
    const roots = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((index) => fileOf(node, [10 + index, 200, 20 + index])));
    await Promise.all(roots.map((root) => node.pins.add(root, { offline: true })));
    const shared = await leafOf(200);
    assert.deepEqual(await blockRecord(node, shared), { pinCount: 8, pinnedBy: roots.map(String).sort() });

    for (const root of roots.slice(0, 7)) await node.pins.remove(root);
    assert.deepEqual(await blockRecord(node, shared), { pinCount: 1, pinnedBy: [roots[7]!.toString()] });
    assert.equal(await node.helia.pins.isPinned(shared), true, 'the last root still protects it from the collector');
    assert.equal(await node.helia.pins.isPinned(await leafOf(10)), false, 'a removed root’s own chunk is free');
    await node.pins.remove(roots[7]!);
    assert.deepEqual([...(await pinRecords(node)).keys()], []);
  });

  it('counts a block repeated inside one DAG once, and its removal leaves another root’s count of it alone', async () => {
    const node = await startNode('repeated');
    const repeated = await fileOf(node, [50, 50, 50, 50, 51]);
    const other = await fileOf(node, [50, 52]);
    await node.pins.add(repeated, { offline: true });
    await node.pins.add(other, { offline: true });
    const leaf = await leafOf(50);
    assert.deepEqual(await blockRecord(node, leaf), { pinCount: 2, pinnedBy: [repeated.toString(), other.toString()].sort() });
    await node.pins.remove(repeated);
    assert.deepEqual(await blockRecord(node, leaf), { pinCount: 1, pinnedBy: [other.toString()] });
  });

  it('an add that fails on a missing block leaves no pin, and the add that follows counts nothing twice', async () => {
    const node = await startNode('missing');
    const root = await fileOf(node, [70, 71, 72]);
    const lost = await leafOf(71);
    const bytes = new Uint8Array(CHUNK).fill(71);
    // Under helia's storage, which refuses to delete a pinned block.
    await node.store.blockstore.delete(lost);
    await assert.rejects(node.pins.add(root, { offline: true }), (error: Error) => error.name === 'BlockNotFoundWhileOfflineError');
    assert.equal(await node.pins.has(root), false);
    assert.deepEqual([...(await pinRecords(node)).keys()], [], 'the blocks it had counted are counted down again');
    await node.store.blockstore.put(lost, bytes);
    await node.pins.add(root, { offline: true });
    for (const fill of [70, 71, 72]) assert.deepEqual(await blockRecord(node, await leafOf(fill)), { pinCount: 1, pinnedBy: [root.toString()] });

    // A removal frees what it can reach when a block is gone meanwhile.
    await node.store.blockstore.delete(lost);
    await node.pins.remove(root);
    assert.equal(await node.pins.has(root), false);
    assert.deepEqual([...(await pinRecords(node)).keys()], []);
  });

  it('a walk of many blocks on one signal adds no abort listener per record (no MaxListenersExceededWarning)', async () => {
    const node = await startNode('listeners');
    const root = await fileOf(node, Array.from({ length: 40 }, (_, index) => 100 + index));
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    try {
      const { signal } = new AbortController();
      await node.pins.add(root, { signal, offline: true });
      await node.pins.remove(root, signal);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning')), []);
    assert.deepEqual([...(await pinRecords(node)).keys()], []);
  });

  it('an aborted removal rejects and leaves the pin; an aborted `has` rejects instead of answering false', async () => {
    const node = await startNode('aborted');
    const bytes = new TextEncoder().encode('a staged copy');
    const cid = CID.createV1(raw.code, await sha256.digest(bytes));
    await node.helia.blockstore.put(cid, bytes);
    await node.pins.add(cid, { offline: true });

    const gone = new AbortController();
    gone.abort(new Error('the store stopped'));
    await assert.rejects(node.pins.remove(cid, gone.signal), (error: Error) => error.name !== 'NotFoundError', 'the abort, not a quiet success');
    assert.equal(await node.pins.has(cid), true, 'the pin is still there');
    await assert.rejects(node.pins.has(cid, gone.signal), (error: Error) => error.name !== 'NotFoundError');

    await node.pins.remove(cid);
    assert.equal(await node.pins.has(cid), false);
    await node.pins.remove(cid);
  });
});
