// Upload sessions: the original's CIDs (notes B.1 test vectors) and exact rollback (notes A.8).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FsBlockstore } from 'blockstore-fs';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { contiguousChunker, InFlightBlocks, UploadSession } from '../../../actors/files/upload-session.js';
import { prng } from '../../support/random.js';

/** notes B.1: `det(n)` = sha256("adm-0") ‖ sha256("adm-1") ‖ … truncated to n bytes. */
export function det(n: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0, size = 0; size < n; i++, size += 32) parts.push(createHash('sha256').update(`adm-${i}`).digest());
  return Buffer.concat(parts).subarray(0, n);
}

async function* inChunks(bytes: Uint8Array, size = 65_536) {
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function withBlockstore(run: (blockstore: FsBlockstore) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'session-'));
  const blockstore = new FsBlockstore(join(dir, 'blockstore'));
  await blockstore.open();
  try {
    await run(blockstore);
  } finally {
    await blockstore.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const VECTORS: Array<[string, Buffer, string]> = [
  ['README file.txt', Buffer.from('Hello ipfs-node!\n'), 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm'],
  ['no newline', Buffer.from('Hello ipfs-node!'), 'bafkreif6swrxk7fldfr53ygglbky7omhd4eocufp3dgwufd2fc7kyplwxq'],
  ['empty', Buffer.alloc(0), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku'],
  ['a', Buffer.from('a'), 'bafkreigks6arfsq3xxfpvqrrwonchxcnu6do76auprhhfomao6c273sixm'],
  ['det(1 MiB)', det(1_048_576), 'bafkreigtv2muapfhrmk3kqurgk5mzug4z6xhxkklcc6yjpufblimgs3v3m'],
  ['det(1 MiB + 1)', det(1_048_577), 'bafybeicj4t7q6xw7h7bzrpdpj7rffwlnqqdlzeyrgtseg2p3zarf33ghna'],
  ['det(3 MiB + 123)', det(3_145_851), 'bafybeifqo3sxf74hkamxibmhgts4dhyuhxrdb2d3vksldoidd5htvzrd5q'],
];

test('imports give the original CIDs for every test vector of notes B.1', async () => {
  await withBlockstore(async (blockstore) => {
    for (const [name, bytes, cid] of VECTORS) {
      const session = new UploadSession(blockstore, new InFlightBlocks());
      const imported = await session.importFile(inChunks(bytes), new AbortController().signal);
      assert.equal(imported.cid.toString(), cid, name);
      assert.equal(imported.size, bytes.length, name);
      session.commit();
    }
  });
});

test('rollback removes exactly the blocks the session created, never one that existed before', async () => {
  await withBlockstore(async (blockstore) => {
    const inFlight = new InFlightBlocks();
    // An earlier upload stored the first 1 MiB leaf.
    const earlier = new UploadSession(blockstore, inFlight);
    const leaf = await earlier.importFile(inChunks(det(1_048_576)), new AbortController().signal);
    earlier.commit();
    const session = new UploadSession(blockstore, inFlight);
    const big = await session.importFile(inChunks(det(3_145_851)), new AbortController().signal);
    assert.equal(session.createdBlocks, 4, 'four leaves and a root, less the first leaf that existed');
    assert.equal(await session.rollback(async () => false), 4);
    assert.equal(await blockstore.has(big.cid), false, 'the root this session created is gone');
    assert.equal(await blockstore.has(leaf.cid), true, 'the block that existed before is kept');
  });
});

test('rollback keeps blocks another in-flight session created or a pin protects', async () => {
  await withBlockstore(async (blockstore) => {
    const inFlight = new InFlightBlocks();
    const first = new UploadSession(blockstore, inFlight);
    const second = new UploadSession(blockstore, inFlight);
    const bytes = Buffer.from('shared content');
    const a = await first.importFile(inChunks(bytes), new AbortController().signal);
    // The second session sees the block already written but not committed: it does not count it as its own.
    const b = await second.importFile(inChunks(bytes), new AbortController().signal);
    assert.equal(a.cid.toString(), b.cid.toString());
    assert.equal(await second.rollback(async () => false), 0);
    assert.equal(await blockstore.has(a.cid), true);
    const pinnedElsewhere = new UploadSession(blockstore, new InFlightBlocks());
    const c = await pinnedElsewhere.importFile(inChunks(Buffer.from('pinned by someone')), new AbortController().signal);
    assert.equal(await pinnedElsewhere.rollback(async (cid) => cid.equals(c.cid)), 0, 'a pinned block is never deleted');
    assert.equal(await blockstore.has(c.cid), true);
    assert.equal(await first.rollback(async () => false), 1, 'the creator removes it once nothing else needs it');
    assert.equal(await blockstore.has(a.cid), false);
  });
});

test('the contiguous chunker cuts exactly as fixedSize, hands out views where the pieces lie next to each other, copies only across buffers', async () => {
  const random = prng(2711);
  const collect = async (chunks: AsyncIterable<Uint8Array>) => {
    const out: Uint8Array[] = [];
    for await (const chunk of chunks) out.push(chunk);
    return out;
  };
  const size = 1000;
  for (let round = 0; round < 60; round++) {
    const total = round === 0 ? 0 : Math.floor(random() * 5 * size) + (round % 3 === 0 ? size - (round % 7) : 0);
    const bytes = Uint8Array.from({ length: total }, () => Math.floor(random() * 256));
    // The body as the edge hands it on: views of a few slabs, cut at random, with now and then a piece of its own
    // (the multipart parser's copy of a boundary look-behind) and an empty piece.
    const slabBytes = 1 + Math.floor(random() * 3 * size);
    const pieces: Uint8Array[] = [];
    let slab = new Uint8Array(0);
    let slabUsed = 0;
    for (let offset = 0; offset < total; ) {
      const length = Math.min(total - offset, 1 + Math.floor(random() * size * 0.7));
      if (random() < 0.1) {
        pieces.push(bytes.slice(offset, offset + length));
        if (random() < 0.3) pieces.push(new Uint8Array(0));
        offset += length;
        continue;
      }
      if (slabUsed + length > slab.byteLength) {
        slab = new Uint8Array(Math.max(slabBytes, length));
        slabUsed = 0;
      }
      slab.set(bytes.subarray(offset, offset + length), slabUsed);
      pieces.push(slab.subarray(slabUsed, slabUsed + length));
      slabUsed += length;
      offset += length;
    }
    const expected = await collect(fixedSize({ chunkSize: size })(toIterable(pieces)));
    const actual = await collect(contiguousChunker(size)(toIterable(pieces)));
    assert.deepEqual(actual.map((chunk) => Buffer.from(chunk).toString('hex')), expected.map((chunk) => Buffer.from(chunk).toString('hex')), `round ${round}: ${total} bytes`);
  }
  // One slab, cut into many pieces: every whole chunk is a view of it.
  const slab = Uint8Array.from({ length: 3 * size + 17 }, (_, index) => index % 251);
  const pieces = Array.from({ length: Math.ceil(slab.byteLength / 97) }, (_, index) => slab.subarray(index * 97, (index + 1) * 97));
  const views = await collect(contiguousChunker(size)(toIterable(pieces)));
  assert.deepEqual(views.map((chunk) => chunk.byteLength), [size, size, size, 17]);
  assert.ok(views.every((chunk) => chunk.buffer === slab.buffer), 'no chunk was copied');
});

async function* toIterable(pieces: readonly Uint8Array[]): AsyncGenerator<Uint8Array> {
  yield* pieces;
}
