// An upload request's session (docs/specs/files-node.md §4.2; notes A.8, B.1): it imports each file with the
// original's importer settings, straight into the file-backed blockstore, and records the blocks it
// created. On any failure or disconnect it deletes exactly those blocks, except a block another in-flight
// session also created or a pin protects; a block that existed before the request is never touched.

import type { FsBlockstore } from 'blockstore-fs';
import { importByteStream } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import type { CID } from 'multiformats/cid';
import { LEAF_BYTES } from '../../src/files/block-frames.js';

/**
 * Byte-identical CIDs to the original (notes B.1): CIDv1, raw leaves, 1 MiB fixed chunks, balanced DAG of
 * 1024 children, a single leaf reduced to itself, no directory wrapping (importByteStream never wraps).
 */
export const IMPORTER_SETTINGS = {
  cidVersion: 1,
  rawLeaves: true,
  reduceSingleLeafToSelf: true,
  layout: balanced({ maxChildrenPerNode: 1024 }),
  chunker: fixedSize({ chunkSize: LEAF_BYTES }),
  // The importer otherwise gathers 10 leaves before it hashes and stores any: one at a time keeps memory bounded.
  // The session's own write-behind (below) overlaps the block files' writes with the next leaf instead.
  blockWriteConcurrency: 1,
} as const;

/**
 * Block files one upload may have being written while its next leaves are received, chunked and hashed. The
 * importer waits for each `put` before it takes the next leaf, so with the write inside `put` the main thread sat
 * idle through each block file's mkdir, open, write, close and rename (six thread-pool round trips and the 1 MiB copy
 * into the page cache, serial with the body). Each block waiting holds its leaf: at most this many MiB per upload.
 */
export const WRITE_BEHIND_BLOCKS = 3;

const blockKey = (cid: CID) => Buffer.from(cid.multihash.bytes).toString('base64');

/** Blocks created by sessions still in flight, counted per session that created them. */
export class InFlightBlocks {
  readonly #refs = new Map<string, number>();

  add(key: string): void {
    this.#refs.set(key, (this.#refs.get(key) ?? 0) + 1);
  }

  /** Drops one session's reference; true when no other in-flight session still holds the block. */
  release(key: string): boolean {
    const count = (this.#refs.get(key) ?? 1) - 1;
    if (count <= 0) this.#refs.delete(key);
    else this.#refs.set(key, count);
    return count <= 0;
  }
}

export interface ImportedFile {
  readonly cid: CID;
  /** File size in bytes. */
  readonly size: number;
  /** Bytes of every block of the DAG this import wrote or found (root and leaves). */
  readonly dagBytes: number;
}

export class UploadSession {
  readonly #created: CID[] = [];
  readonly #seen = new Set<string>();
  #settled = false;

  constructor(
    private readonly blockstore: FsBlockstore,
    private readonly inFlight: InFlightBlocks,
  ) {}

  /** Blocks this session created (for tests and logs). */
  get createdBlocks(): number {
    return this.#created.length;
  }

  /**
   * Imports one file's bytes; the returned CID is the file itself, never a wrapping directory. Block files are
   * written behind the import (WRITE_BEHIND_BLOCKS), and every write has ended before this returns or throws:
   * on success every block is on disk, and on failure `rollback` sees every block the session created.
   */
  async importFile(content: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<ImportedFile> {
    let dagBytes = 0;
    const writes = new WriteBehind(WRITE_BEHIND_BLOCKS);
    const storage = {
      put: async (cid: CID, bytes: Uint8Array) => {
        signal.throwIfAborted();
        const key = blockKey(cid);
        // A leaf repeated within the file (a run of zeros) is written once.
        if (this.#seen.has(key)) return cid;
        this.#seen.add(key);
        dagBytes += bytes.length;
        await writes.start(async () => {
          signal.throwIfAborted();
          if (!(await this.blockstore.has(cid))) {
            this.#created.push(cid);
            this.inFlight.add(key);
          }
          await this.blockstore.put(cid, bytes);
        });
        return cid;
      },
    };
    // The importer's `size` counts DAG bytes, so the file size is counted on the way in.
    let size = 0;
    async function* counted() {
      for await (const chunk of content) {
        size += chunk.length;
        yield chunk;
      }
    }
    // The importer takes no signal: an abort surfaces through `put` above and through the content stream.
    let result: Awaited<ReturnType<typeof importByteStream>>;
    try {
      result = await importByteStream(counted(), storage, IMPORTER_SETTINGS);
    } finally {
      // Also after a failure: rollback must not run while a block file is still being written.
      await writes.settled();
    }
    writes.throwIfFailed();
    return { cid: result.cid, size, dagBytes };
  }

  /** The request succeeded: its blocks stay (the caller has pinned and registered them). */
  commit(): void {
    if (this.#settled) return;
    this.#settled = true;
    for (const cid of this.#created) this.inFlight.release(blockKey(cid));
  }

  /** The request failed: delete the blocks it created that nothing else needs. Returns how many went. */
  async rollback(isPinned: (cid: CID) => Promise<boolean>): Promise<number> {
    if (this.#settled) return 0;
    this.#settled = true;
    let removed = 0;
    for (const cid of this.#created) {
      const lastHolder = this.inFlight.release(blockKey(cid));
      if (!lastHolder || (await isPinned(cid))) continue;
      await this.blockstore.delete(cid);
      removed++;
    }
    return removed;
  }
}

/**
 * At most `limit` writes running at once; `start` waits for a free slot (so the importer, which awaits each put, is
 * held back once that many blocks wait for the disk) and fails with the first failed write, so a full disk stops
 * the import at its next block.
 */
class WriteBehind {
  readonly #running = new Set<Promise<void>>();
  #failure: { error: unknown } | undefined;

  constructor(private readonly limit: number) {}

  async start(write: () => Promise<void>): Promise<void> {
    while (this.#running.size >= this.limit) await Promise.race(this.#running);
    this.throwIfFailed();
    const running: Promise<void> = write().then(
      () => void this.#running.delete(running),
      (error: unknown) => {
        this.#failure ??= { error };
        this.#running.delete(running);
      },
    );
    this.#running.add(running);
  }

  /** Every write started has ended (failures are kept for throwIfFailed). */
  async settled(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running);
  }

  throwIfFailed(): void {
    if (this.#failure) throw this.#failure.error;
  }
}
