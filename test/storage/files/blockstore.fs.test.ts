// The node's block files read whole (storage/files/blockstore.fs.ts): byte-compatible with blockstore-fs and with the
// original node's store, the same failure for a missing block, reads that honour a signal without listening on it,
// and pin walks that read no raw leaf.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { getEventListeners } from 'node:events';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { FsBlockstore } from 'blockstore-fs';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { create as createDigest } from 'multiformats/hashes/digest';
import { sha256 } from 'multiformats/hashes/sha2';
import { LINKS_ONLY, WholeBlockFsBlockstore } from '../../../storage/files/blockstore.fs.js';
import { homeWithOriginalStore, originalStoreManifest } from '../../support/fixtures.js';

async function gather(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const pieces: Uint8Array[] = [];
  for await (const piece of source) pieces.push(piece);
  return Buffer.concat(pieces);
}

function bytesOf(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + seed * 7) & 0xff;
  return bytes;
}

async function rawBlock(bytes: Uint8Array): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(bytes));
}

async function withStores(run: (plain: FsBlockstore, whole: WholeBlockFsBlockstore, dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'blockstore-fs-'));
  const plain = new FsBlockstore(dir);
  const whole = new WholeBlockFsBlockstore(dir);
  await plain.open();
  await whole.open();
  try {
    await run(plain, whole, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Sizes around blockstore-fs's 64 KiB stream pieces and the importer's 1 MiB chunk.
const SIZES = [0, 1, 17, 65_535, 65_536, 65_537, 307_200, 1_048_576, 1_048_577];

test('reads exactly the bytes blockstore-fs wrote, from the file blockstore-fs named', async () => {
  await withStores(async (plain, whole, dir) => {
    for (const [index, size] of SIZES.entries()) {
      const bytes = bytesOf(size, index);
      const cid = await rawBlock(bytes);
      await plain.put(cid, bytes);
      // NextToLast: <last 2 chars of base32upper(multihash)>/<base32upper(multihash)>.data
      assert.ok(existsSync(whole.pathOf(cid)), `size ${size}: the block file is where blockstore-fs put it`);
      assert.ok(whole.pathOf(cid).startsWith(dir));
      const read = await whole.getBlock(cid);
      assert.equal(read.byteLength, size);
      assert.deepEqual(Buffer.from(read), Buffer.from(bytes), `size ${size}`);
      // The Blockstore interface: one piece, the same bytes.
      const pieces: Uint8Array[] = [];
      for await (const piece of whole.get(cid)) pieces.push(piece);
      assert.equal(pieces.length, 1);
      assert.deepEqual(Buffer.from(pieces[0]!), Buffer.from(bytes));
      assert.equal(await whole.has(cid), true);
    }
  });
});

test('writes stay blockstore-fs writes: a plain FsBlockstore reads what the adapter stored', async () => {
  await withStores(async (plain, whole) => {
    const bytes = bytesOf(200_000, 3);
    const cid = await rawBlock(bytes);
    await whole.put(cid, bytes);
    assert.deepEqual(await gather(plain.get(cid)), Buffer.from(bytes));
    const listed = [];
    for await (const pair of plain.getAll()) listed.push(pair.cid.multihash.bytes);
    assert.deepEqual(listed, [cid.multihash.bytes]);
  });
});

test("reads every block of the original node's store as blockstore-fs does, and its files' bytes", async () => {
  const home = homeWithOriginalStore();
  try {
    const dir = join(home, originalStoreManifest().storeFolder, 'blockstore');
    const plain = new FsBlockstore(dir);
    const whole = new WholeBlockFsBlockstore(dir);
    let blocks = 0;
    for await (const { cid } of plain.getAll()) {
      blocks++;
      assert.deepEqual(Buffer.from(await whole.getBlock(cid)), await gather(plain.get(cid)));
    }
    assert.ok(blocks >= 6, `the fixture holds its blocks (${blocks})`);
    // The single-block files are raw leaves: their bytes are the files (sha256 from the manifest).
    for (const file of originalStoreManifest().files.filter((entry) => entry.cid.startsWith('bafkrei'))) {
      const bytes = await whole.getBlock(CID.parse(file.cid));
      assert.equal(bytes.byteLength, file.size, file.name);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), file.sha256, file.name);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test("lists in batches exactly the CIDs blockstore-fs's getAll names, on the original node's store and on a busy one", async () => {
  const sorted = (cids: CID[]) => cids.map((cid) => cid.toString()).sort();
  const byFolder = async (whole: WholeBlockFsBlockstore) => {
    const batches: CID[][] = [];
    for await (const cids of whole.blockBatches()) batches.push(cids);
    return batches;
  };
  const home = homeWithOriginalStore();
  try {
    const dir = join(home, originalStoreManifest().storeFolder, 'blockstore');
    const listed: CID[] = [];
    for await (const { cid } of new FsBlockstore(dir).getAll()) listed.push(cid);
    const batches = await byFolder(new WholeBlockFsBlockstore(dir));
    assert.deepEqual(sorted(batches.flat()), sorted(listed));
    for (const batch of batches) {
      const folders = new Set(batch.map((cid) => dirname(new WholeBlockFsBlockstore(dir).pathOf(cid))));
      assert.equal(folders.size, 1, 'a batch comes from one shard folder');
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  await withStores(async (_plain, whole, dir) => {
    const cids: CID[] = [];
    for (let i = 0; i < 300; i++) {
      const bytes = bytesOf(10 + i, i);
      cids.push(await rawBlock(bytes));
      await whole.put(cids[i], bytes);
    }
    // 600 blocks in one shard folder (digests ending alike end alike in base32): more than one batch.
    const crowded: CID[] = [];
    for (let i = 0; i < 600; i++) {
      const digest = new Uint8Array(32);
      digest.set(bytesOf(30, 1_000 + i).map((byte, index) => byte ^ (index === 0 ? i & 0xff : index === 1 ? i >> 8 : 0)));
      digest.set([0xab, 0xcd], 30);
      crowded.push(CID.createV1(raw.code, createDigest(sha256.code, digest)));
      await whole.put(crowded[i]!, bytesOf(5, i));
    }
    assert.equal(new Set(crowded.map((cid) => dirname(whole.pathOf(cid)))).size, 1, 'the crowded blocks share a folder');
    cids.push(...crowded);
    // What must never be listed: steno's temporary file beside a block being written, a foreign file, a file at the top.
    const folder = dirname(whole.pathOf(cids[0]));
    writeFileSync(join(folder, `.${basename(whole.pathOf(cids[1]))}.tmp`), 'half');
    writeFileSync(join(folder, 'NOT-BASE32!.data'), 'x');
    writeFileSync(join(dir, 'stray.data'), 'x');
    const batches = await byFolder(whole);
    assert.equal(batches.flat().length, 900);
    assert.deepEqual(sorted(batches.flat()), sorted(cids.map((cid) => CID.decode(cid.multihash.bytes))), 'CIDv0 of each multihash');
    const crowdedFolder = dirname(whole.pathOf(crowded[0]!));
    const crowdedBatches = batches.filter((batch) => dirname(whole.pathOf(batch[0]!)) === crowdedFolder);
    assert.ok(crowdedBatches.length >= 3, `600 blocks come in batches of at most 256 (${crowdedBatches.map((batch) => batch.length)})`);
    assert.ok(Math.max(...batches.map((batch) => batch.length)) <= 256);
    for (const batch of batches) assert.equal(new Set(batch.map((cid) => dirname(whole.pathOf(cid)))).size, 1, 'a batch comes from one shard folder');
    const aborted = new AbortController();
    aborted.abort(new Error('stop'));
    await assert.rejects(async () => {
      for await (const batch of whole.blockBatches(aborted.signal)) void batch;
    }, /stop/);
    // Deleting a batch's blocks while walking does not disturb the walk.
    let seen = 0;
    for await (const batch of whole.blockBatches()) {
      for (const cid of batch) await whole.delete(cid);
      seen += batch.length;
    }
    assert.equal(seen, 900, 'each block seen once');
    assert.deepEqual(await byFolder(whole), []);
  });
});

test('a missing block fails with NotFoundError, as blockstore-fs does', async () => {
  await withStores(async (plain, whole) => {
    const cid = await rawBlock(bytesOf(10, 9));
    const before = await gather(plain.get(cid)).then(
      () => assert.fail('blockstore-fs read a missing block'),
      (error: Error) => error.name,
    );
    assert.equal(before, 'NotFoundError');
    await assert.rejects(whole.getBlock(cid), { name: 'NotFoundError' });
    await assert.rejects(gather(whole.get(cid)), { name: 'NotFoundError' });
    assert.equal(await whole.has(cid), false);
  });
});

test('honours an abort signal: before the read, and when it is aborted while the read is in flight', async () => {
  await withStores(async (plain, whole) => {
    const bytes = bytesOf(1_048_576, 4);
    const cid = await rawBlock(bytes);
    await plain.put(cid, bytes);
    const reason = new Error('client gone');
    await assert.rejects(whole.getBlock(cid, { signal: AbortSignal.abort(reason) }), (error) => error === reason);
    await assert.rejects(gather(whole.get(cid, { signal: AbortSignal.abort(reason) })), (error) => error === reason);
    await assert.rejects(whole.has(cid, { signal: AbortSignal.abort(reason) }), (error) => error === reason);
    const controller = new AbortController();
    const reading = whole.getBlock(cid, { signal: controller.signal });
    controller.abort(reason);
    await assert.rejects(reading, (error) => error === reason);
    // A missing block read under an aborted signal is an abort, not a missing block.
    const missing = await rawBlock(bytesOf(5, 5));
    const lost = new AbortController();
    const pending = whole.getBlock(missing, { signal: lost.signal });
    lost.abort(reason);
    await assert.rejects(pending, (error) => error === reason);
  });
});

test('many reads under one signal add no abort listener to it (no MaxListenersExceededWarning)', async () => {
  await withStores(async (plain, whole) => {
    const cids: CID[] = [];
    for (let i = 0; i < 24; i++) {
      const bytes = bytesOf(70_000 + i, i);
      const cid = await rawBlock(bytes);
      await plain.put(cid, bytes);
      cids.push(cid);
    }
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const { signal } = new AbortController();
      const reads = cids.flatMap((cid) => [whole.has(cid, { signal }), whole.getBlock(cid, { signal })]);
      assert.equal(getEventListeners(signal, 'abort').length, 0);
      await Promise.all(reads);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning'), []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

test('LINKS_ONLY (a pin walk): a raw block is proven present, never read; a dag-pb block is read as usual', async () => {
  await withStores(async (plain, whole) => {
    const leaf = bytesOf(1_048_576, 3);
    const leafCid = await rawBlock(leaf);
    await plain.put(leafCid, leaf);
    // The block file now holds other bytes: a read would return them.
    writeFileSync(whole.pathOf(leafCid), 'not the leaf');
    assert.deepEqual([...(await gather(whole.get(leafCid, LINKS_ONLY)))], [], 'no bytes for a raw block');
    assert.equal((await gather(whole.get(leafCid))).toString(), 'not the leaf', 'a plain read still reads the file');

    const node = new Uint8Array([0x0a, 0x02, 0x08, 0x01]);
    const nodeCid = CID.createV1(0x70, await sha256.digest(node));
    await plain.put(nodeCid, node);
    assert.deepEqual([...(await gather(whole.get(nodeCid, LINKS_ONLY)))], [...node], 'a dag-pb block keeps its links: read whole');
    const aborted = AbortSignal.abort(new Error('gone'));
    await assert.rejects(gather(whole.get(leafCid, { ...LINKS_ONLY, signal: aborted })), /gone/);
  });
});

