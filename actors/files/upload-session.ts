// An upload request's session (docs/specs/files-node.md §4.2; notes A.8, B.1): it imports each file with the
// original's importer settings, straight into the file-backed blockstore, and records the blocks it
// created. On any failure or disconnect it deletes exactly those blocks, except a block another in-flight
// session also created or a pin protects; a block that existed before the request is never touched.

import type { FsBlockstore } from 'blockstore-fs';
import { importByteStream } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import type { CID } from 'multiformats/cid';

/**
 * Byte-identical CIDs to the original (notes B.1): CIDv1, raw leaves, 1 MiB fixed chunks, balanced DAG of
 * 1024 children, a single leaf reduced to itself, no directory wrapping (importByteStream never wraps).
 */
export const IMPORTER_SETTINGS = {
  cidVersion: 1,
  rawLeaves: true,
  reduceSingleLeafToSelf: true,
  layout: balanced({ maxChildrenPerNode: 1024 }),
  chunker: fixedSize({ chunkSize: 1_048_576 }),
  // The importer otherwise holds 10 leaves before writing: one at a time keeps memory bounded and puts
  // every finished leaf on disk at once (so an aborted upload is cleaned up from real, recorded blocks).
  blockWriteConcurrency: 1,
} as const;

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

  /** Imports one file's bytes; the returned CID is the file itself, never a wrapping directory. */
  async importFile(content: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<ImportedFile> {
    let dagBytes = 0;
    const storage = {
      put: async (cid: CID, bytes: Uint8Array) => {
        signal.throwIfAborted();
        const key = blockKey(cid);
        if (!this.#seen.has(key)) {
          this.#seen.add(key);
          dagBytes += bytes.length;
          if (!(await this.blockstore.has(cid))) {
            this.#created.push(cid);
            this.inFlight.add(key);
          }
        }
        await this.blockstore.put(cid, bytes);
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
    const result = await importByteStream(counted(), storage, IMPORTER_SETTINGS);
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
