// Upload sessions: the original's CIDs (notes B.1 test vectors) and exact rollback (notes A.8).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FsBlockstore } from 'blockstore-fs';
import { importByteStream } from 'ipfs-unixfs-importer';
import { IMPORTER_SETTINGS, InFlightBlocks, UploadSession, WRITE_BEHIND_BLOCKS } from '../../../actors/files/upload-session.js';

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

/** A block store whose writes take `delayMs` each, can fail at the `failAt`-th write, and counts writes in flight. */
class SlowBlockstore extends FsBlockstore {
  running = 0;
  mostRunning = 0;
  writes = 0;
  constructor(
    location: string,
    private readonly delayMs: number,
    private readonly failAt = Infinity,
  ) {
    super(location);
  }
  override async put(...args: Parameters<FsBlockstore['put']>): ReturnType<FsBlockstore['put']> {
    this.writes += 1;
    const nth = this.writes;
    this.running += 1;
    this.mostRunning = Math.max(this.mostRunning, this.running);
    try {
      await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      if (nth === this.failAt) throw new Error('ENOSPC: no space left on device (test)');
      return await super.put(...args);
    } finally {
      this.running -= 1;
    }
  }
}

async function withSlowBlockstore(delayMs: number, failAt: number, run: (blockstore: SlowBlockstore) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'session-'));
  const blockstore = new SlowBlockstore(join(dir, 'blockstore'), delayMs, failAt);
  await blockstore.open();
  try {
    await run(blockstore);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const blockFiles = (blockstore: FsBlockstore) => readdirSync(blockstore.path, { recursive: true }).filter((name) => String(name).endsWith('.data')).length;

test('block files are written behind the import, never more than WRITE_BEHIND_BLOCKS at once, all on disk when it returns', async () => {
  await withSlowBlockstore(20, Infinity, async (blockstore) => {
    const session = new UploadSession(blockstore, new InFlightBlocks());
    const bytes = det(8 * 1_048_576 + 5);
    const imported = await session.importFile(inChunks(bytes), new AbortController().signal);
    let expected = '';
    await withBlockstore(async (plain) => {
      expected = (await importByteStream(inChunks(bytes), plain, IMPORTER_SETTINGS)).cid.toString();
    });
    assert.equal(imported.cid.toString(), expected, 'the same CID as the importer writing each block before the next');
    assert.equal(blockstore.running, 0, 'no write still running after importFile resolved');
    assert.equal(blockFiles(blockstore), 10, 'nine leaves and the root are on disk');
    assert.ok(blockstore.mostRunning > 1, `writes overlapped the next leaves (at most ${blockstore.mostRunning} at once)`);
    assert.ok(blockstore.mostRunning <= WRITE_BEHIND_BLOCKS, `at most ${WRITE_BEHIND_BLOCKS} writes at once, saw ${blockstore.mostRunning}`);
  });
});

test('a failed block write fails the import after every other write ended, and rollback leaves no block behind', async () => {
  await withSlowBlockstore(20, 3, async (blockstore) => {
    const session = new UploadSession(blockstore, new InFlightBlocks());
    await assert.rejects(session.importFile(inChunks(det(8 * 1_048_576)), new AbortController().signal), /ENOSPC/);
    assert.equal(blockstore.running, 0, 'the import failed only once no write was running');
    assert.ok(blockstore.writes < 9, `the import stopped at the failure (${blockstore.writes} writes started)`);
    await session.rollback(async () => false);
    assert.equal(blockFiles(blockstore), 0, 'every block the session wrote was removed');
  });
});

test('an aborted import ends its writes before it rejects, so rollback removes every block', async () => {
  await withSlowBlockstore(30, Infinity, async (blockstore) => {
    const session = new UploadSession(blockstore, new InFlightBlocks());
    const controller = new AbortController();
    async function* abortedMidway() {
      for await (const chunk of inChunks(det(8 * 1_048_576))) {
        if (blockstore.writes >= 3 && !controller.signal.aborted) controller.abort(new Error('client gone'));
        yield chunk;
      }
    }
    await assert.rejects(session.importFile(abortedMidway(), controller.signal), /client gone/);
    assert.equal(blockstore.running, 0);
    await session.rollback(async () => false);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(blockFiles(blockstore), 0, 'no block file appeared after the rollback');
  });
});
