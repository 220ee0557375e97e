// The node's block files: blockstore-fs (FsBlockstore) for the layout and every write, with reads that take a
// block file whole.
//
// Why: FsBlockstore 3.0.2 reads a block through `createReadStream()` in 64 KiB pieces, and every reader of a block
// (helia's exporter, pins, bitswap) gathers them with it-to-buffer, which concatenates piece by piece: a 1 MiB block
// is copied 16 times over (~8.5 MiB of copies) and leaves 16 dead buffers per block. A 256 MiB download spent about
// 2.4 s copying and 1.7 s in GC (issue 14, item 5). Here a block is one `read()` into one buffer of the file's size,
// yielded once.
//
// Why `has` and `get` take no abort listener: FsBlockstore races each `fs.access`/`fs.open` against the caller's
// signal with race-signal, one 'abort' listener per call in flight. A download passes one signal to every block read
// (helia's storage calls `has` then `get` per block, several blocks at a time), so that signal went past Node's
// limit of 10 listeners and every large download printed MaxListenersExceededWarning. A local open/stat/read of
// one block file is short: the signal is checked before and after it instead of raced against it.
//
// The on-disk layout is blockstore-fs's own, unchanged and byte-compatible with the original node's store
// (docs/specs/files-node.md §1, notes B.7): `<store>/blockstore/<last 2 chars>/<base32upper(multihash)>.data`. The
// sharding object is one NextToLast instance handed to FsBlockstore as well, so reads and writes cannot disagree.

import { type Dir } from 'node:fs';
import { access, open, opendir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { NextToLast } from 'blockstore-fs/sharding';
import type { CID } from 'multiformats/cid';

interface ReadOptions {
  signal?: AbortSignal;
}

interface BlockReadOptions extends ReadOptions {
  /** Memory of the block's size to read into (the caller reuses it); fresh memory when absent. */
  memory?: (size: number) => Uint8Array;
}

/**
 * Read options of a caller that wants a block only for its links (helia's pin walk, `LINKS_ONLY`): a raw block has
 * none, so its bytes are not read. helia's storage has already checked that the block is here (or fetched it from a
 * peer and handed the fetched bytes over itself), so presence is still proven block by block.
 */
export interface LinksOnlyReadOptions extends ReadOptions {
  readonly linksOnly?: boolean;
}
export const LINKS_ONLY = { linksOnly: true } as const;

/** The raw codec (multicodec 0x55): a leaf of the node's files, bytes without links. */
const RAW_CODE = 0x55;
/** Blocks per batch of `blockBatches`, and directory entries per read. */
const BLOCKS_PER_BATCH = 256;
const NO_BYTES = new Uint8Array(0);

/**
 * A block the store does not hold (or cannot read). Same `name` as interface-store's NotFoundError, which
 * FsBlockstore throws: helia (pins, unixfs stat, bitswap's ledger) and this project (actors/files/node.ts) match
 * that failure by name, never by class.
 */
export class NotFoundError extends Error {
  static override readonly name = 'NotFoundError';
  override readonly name = 'NotFoundError';
  constructor(readonly code: string | undefined) {
    super(`block not found in the blockstore${code ? ` (${code})` : ''}`);
  }
}

export class WholeBlockFsBlockstore extends FsBlockstore {
  readonly #sharding: NextToLast;

  constructor(location: string) {
    const sharding = new NextToLast();
    super(location, { shardingStrategy: sharding });
    this.#sharding = sharding;
  }

  /** Where the block of `cid` lives (blockstore-fs's NextToLast layout). */
  pathOf(cid: CID): string {
    const { dir, file } = this.#sharding.encode(cid);
    return join(this.path, dir, file);
  }

  override async has(cid: CID, options?: ReadOptions): Promise<boolean> {
    options?.signal?.throwIfAborted();
    try {
      await access(this.pathOf(cid));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The size of a block held here, from its file's metadata (one stat, no open, no read); undefined when the block
   * is not here. A block file is complete once it has its name (written under a temporary name and renamed).
   */
  async sizeOf(cid: CID): Promise<number | undefined> {
    try {
      return (await stat(this.pathOf(cid))).size;
    } catch {
      return undefined;
    }
  }

  /**
   * Every block held here, in batches of at most BLOCKS_PER_BATCH from one shard folder, each CID as blockstore-fs's
   * `getAll` names it (the multihash decoded as a CID: CIDv0 for sha2-256). Why not `getAll`: it lists through
   * fast-glob's stream, which walks on ahead of a slow reader with no limit, and it opens every block for reading. Here
   * a folder is read a batch at a time (Node's `opendir`), so a walk that checks a pin per block holds one small batch,
   * short-lived enough for V8 to collect it young. The caller may delete a batch's blocks before asking for the next:
   * removing a name already read does not change which of the others a directory read returns (POSIX readdir).
   * Entries that are not block files (steno's `.<name>.tmp` while a block is written, anything foreign) are skipped.
   */
  async *blockBatches(signal?: AbortSignal): AsyncGenerator<CID[]> {
    const extension = this.#sharding.extension;
    const folders = await readdir(this.path, { withFileTypes: true });
    for (const folder of folders) {
      signal?.throwIfAborted();
      if (!folder.isDirectory()) continue;
      let entries: Dir;
      try {
        entries = await opendir(join(this.path, folder.name), { bufferSize: BLOCKS_PER_BATCH });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      let batch: CID[] = [];
      // The loop closes the directory when it ends, throws, or the caller stops early.
      for await (const entry of entries) {
        if (entry.isDirectory() || !entry.name.endsWith(extension) || entry.name.startsWith('.')) continue;
        try {
          batch.push(this.#sharding.decode(entry.name));
        } catch {
          continue; // not a block's name: never listed, so never deleted
        }
        if (batch.length === BLOCKS_PER_BATCH) {
          signal?.throwIfAborted();
          yield batch;
          batch = [];
        }
      }
      signal?.throwIfAborted();
      if (batch.length > 0) yield batch;
    }
  }

  override async *get(cid: CID, options?: LinksOnlyReadOptions): AsyncGenerator<Uint8Array> {
    // A pin walk over a 256 MiB file otherwise reads all of it back from disk right after the upload wrote it.
    if (options?.linksOnly === true && cid.code === RAW_CODE) {
      options.signal?.throwIfAborted();
      yield NO_BYTES;
      return;
    }
    yield await this.getBlock(cid, options);
  }

  /**
   * The bytes of one block, read in one go into one buffer of the file's size. A missing or unreadable block
   * fails with NotFoundError, as FsBlockstore's `get` does; an aborted signal fails with its reason (FsBlockstore
   * reported that as NotFoundError too, which made a cancelled read look like a missing block).
   */
  async getBlock(cid: CID, options?: BlockReadOptions): Promise<Uint8Array> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    let bytes: Uint8Array;
    try {
      bytes = await readWhole(this.pathOf(cid), options?.memory);
    } catch (error) {
      signal?.throwIfAborted();
      throw new NotFoundError((error as NodeJS.ErrnoException).code);
    }
    signal?.throwIfAborted();
    return bytes;
  }
}

/**
 * The whole file in one buffer of its size, normally with one read() call. A block file never changes once it is
 * in place (blockstore-fs writes a temporary file and renames it), so the size from fstat is the block's size; the
 * loop only covers a read() that returns fewer bytes than asked.
 */
async function readWhole(path: string, memory?: (size: number) => Uint8Array): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    // Not from Buffer's shared pool: a consumer may keep a small block (a DAG root) for long, and a pooled
    // slice would pin the whole 8 KiB pool slab with it.
    const buffer = memory ? memory(size) : Buffer.allocUnsafeSlow(size);
    let filled = 0;
    while (filled < size) {
      const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
      if (bytesRead === 0) return buffer.subarray(0, filled);
      filled += bytesRead;
    }
    return buffer;
  } finally {
    await handle.close();
  }
}
