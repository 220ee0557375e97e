// Downloads read a file's DAG themselves (actors/files/file-reader.ts): the same bytes as `unixfs.cat` for every DAG
// shape the importer makes, at most `readAhead` blocks ahead of the consumer, and a stop when the signal aborts.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { unixfs } from '@helia/unixfs';
import { importByteStream, type ImporterOptions } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import { CID } from 'multiformats/cid';
import { InvalidFileDagError, isPlainFileRoot, readFile, type BlockSource } from '../../../actors/files/file-reader.js';
import { IMPORTER_SETTINGS } from '../../../actors/files/upload-session.js';
import { WholeBlockFsBlockstore } from '../../../storage/files/blockstore.fs.js';
import { homeWithOriginalStore, originalStoreManifest } from '../../support/fixtures.js';

function bytesOf(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let x = seed | 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

async function gather(source: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const pieces: Uint8Array[] = [];
  for await (const piece of source) pieces.push(piece);
  return Buffer.concat(pieces);
}

async function withStore(run: (store: WholeBlockFsBlockstore) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'file-reader-'));
  const store = new WholeBlockFsBlockstore(dir);
  await store.open();
  try {
    await run(store);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const fromStore = (store: WholeBlockFsBlockstore): BlockSource => (cid, signal) => store.getBlock(cid, { signal });
const signal = () => new AbortController().signal;

// Small chunks and fan-outs so a few KiB make every shape: one raw leaf, one layer, several layers, dag-pb leaves.
const SHAPES: Array<[string, Partial<ImporterOptions>, number]> = [
  ['the node settings, one raw leaf', IMPORTER_SETTINGS, 300_000],
  ['the node settings, empty file', IMPORTER_SETTINGS, 0],
  ['the node settings, two raw leaves', IMPORTER_SETTINGS, 1_048_577],
  ['three layers of raw leaves', { ...IMPORTER_SETTINGS, chunker: fixedSize({ chunkSize: 1000 }), layout: balanced({ maxChildrenPerNode: 3 }) }, 25_123],
  ['dag-pb leaves (Kubo style)', { cidVersion: 0, rawLeaves: false, chunker: fixedSize({ chunkSize: 1000 }), layout: balanced({ maxChildrenPerNode: 4 }) }, 9_999],
];

test('gives the bytes unixfs.cat gives, for every DAG shape', async () => {
  await withStore(async (store) => {
    for (const [index, [name, settings, size]] of SHAPES.entries()) {
      const bytes = bytesOf(size, index + 1);
      const { cid } = await importByteStream([bytes], store, settings);
      const root = CID.decodeFirst(cid.bytes)[0];
      assert.ok(isPlainFileRoot(root), name);
      const read = await gather(readFile(root, size, fromStore(store), { signal: signal(), readAhead: 3 }));
      assert.equal(read.length, size, name);
      assert.deepEqual(read, Buffer.from(bytes), name);
      assert.deepEqual(read, await gather(unixfs({ blockstore: store }).cat(root)), name);
    }
  });
});

test("serves the original node's files with their sizes and sha256", async () => {
  const home = homeWithOriginalStore();
  try {
    const manifest = originalStoreManifest();
    const store = new WholeBlockFsBlockstore(join(home, manifest.storeFolder, 'blockstore'));
    for (const file of manifest.files) {
      const bytes = await gather(readFile(CID.parse(file.cid), file.size, fromStore(store), { signal: signal(), readAhead: 3 }));
      assert.equal(bytes.length, file.size, file.name);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), file.sha256, file.name);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('reads at most readAhead blocks ahead of a consumer that does not pull', async () => {
  await withStore(async (store) => {
    const size = 40_000;
    const { cid } = await importByteStream([bytesOf(size, 7)], store, { ...IMPORTER_SETTINGS, chunker: fixedSize({ chunkSize: 1000 }), layout: balanced({ maxChildrenPerNode: 1024 }) });
    const started: string[] = [];
    const counting: BlockSource = (block, blockSignal) => {
      started.push(block.toString());
      return store.getBlock(block, { signal: blockSignal });
    };
    const reader = readFile(cid, size, counting, { signal: signal(), readAhead: 3 })[Symbol.asyncIterator]();
    const first = await reader.next();
    assert.equal((first.value as Uint8Array).length, 1000);
    // Give any unbounded reading every chance to run on.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    // The root, then the first leaf and the two leaves read ahead of it: 40 leaves are not read.
    assert.equal(started.length, 1 + 3);
    await reader.next();
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(started.length, 1 + 4);
    await reader.return?.(undefined);
  });
});

test('stops with the signal and tells a DAG that does not add up to the size', async () => {
  await withStore(async (store) => {
    const size = 5_000;
    const { cid } = await importByteStream([bytesOf(size, 9)], store, { ...IMPORTER_SETTINGS, chunker: fixedSize({ chunkSize: 1000 }) });
    const controller = new AbortController();
    const reason = new Error('client gone');
    const reader = readFile(cid, size, fromStore(store), { signal: controller.signal, readAhead: 2 })[Symbol.asyncIterator]();
    await reader.next();
    controller.abort(reason);
    await assert.rejects(reader.next(), (error) => error === reason);
    await assert.rejects(gather(readFile(cid, size + 1, fromStore(store), { signal: signal(), readAhead: 2 })), InvalidFileDagError);
    await assert.rejects(gather(readFile(cid, size - 1, fromStore(store), { signal: signal(), readAhead: 2 })), InvalidFileDagError);
  });
});

test('with reuseChunks, raw leaves come in a few reused buffers and the bytes are still exact', async () => {
  await withStore(async (store) => {
    const size = 200_000;
    const bytes = bytesOf(size, 11);
    const { cid } = await importByteStream([bytes], store, { ...IMPORTER_SETTINGS, chunker: fixedSize({ chunkSize: 1000 }) });
    const memories = new Set<ArrayBufferLike>();
    const copies: Buffer[] = [];
    // A consumer as the HTTP edge is: done with a chunk once it pulls the next one (it keeps a copy here).
    for await (const chunk of readFile(cid, size, (block, blockSignal, memory) => store.getBlock(block, { signal: blockSignal, memory }), {
      signal: signal(),
      readAhead: 3,
      reuseChunks: true,
    })) {
      memories.add(chunk.buffer);
      copies.push(Buffer.from(chunk));
    }
    assert.deepEqual(Buffer.concat(copies), Buffer.from(bytes));
    // 200 leaves: the ones being read ahead plus the one being sent, not one buffer per leaf.
    assert.ok(memories.size <= 3 + 1, `${memories.size} distinct buffers for 200 leaves`);
  });
});

test('memory a block source did not take from the reader is never reused', async () => {
  await withStore(async (store) => {
    const size = 20_000;
    const bytes = bytesOf(size, 12);
    const { cid } = await importByteStream([bytes], store, { ...IMPORTER_SETTINGS, chunker: fixedSize({ chunkSize: 1000 }) });
    // A source that ignores the lent memory (as the network path does): every block in its own memory, kept by us.
    const kept: Uint8Array[] = [];
    for await (const chunk of readFile(cid, size, (block, blockSignal) => store.getBlock(block, { signal: blockSignal }), { signal: signal(), readAhead: 3, reuseChunks: true })) {
      kept.push(chunk);
    }
    assert.deepEqual(Buffer.concat(kept), Buffer.from(bytes), 'chunks kept by the consumer were never overwritten');
  });
});
