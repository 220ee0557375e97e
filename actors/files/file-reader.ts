// A file's bytes in order, straight from its DAG, for downloads (issue 14, item 5).
//
// Why not `unixfs.cat`: the exporter (ipfs-unixfs-exporter 15) pushes every leaf it has read into an unbounded
// queue whatever the consumer's pace, so a download read far ahead of its socket (RSS 470-500 MiB after one 256 MiB
// download), and it gathers each block with it-to-buffer, which copies every block once more. Here at most
// `readAhead` blocks are read ahead of the one being sent, and a raw leaf's bytes are the buffer the blockstore
// read, passed on as they are.
//
// It reads UnixFS files (a raw block, or a dag-pb `file`/`raw` node over raw or dag-pb children, with data on any
// node, in the importer's depth-first order). Anything else (a directory, dag-cbor, an identity root) is not a plain
// file: `isPlainFileRoot` says so first, and the caller keeps `unixfs.cat` for those, with its errors.

import * as dagPb from '@ipld/dag-pb';
import { UnixFS } from 'ipfs-unixfs';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';

/** Multihash code of the identity "hash": the digest is the block itself, nothing is stored. */
const IDENTITY = 0x00;

/**
 * Memory for one block of `size` bytes, lent by the reader. A source that reads a block into it lets the reader use
 * the same memory again once that block has been sent, instead of allocating 1 MiB per leaf and leaving the old one
 * to V8's next collection (4 concurrent 256 MiB downloads went from ~172 to ~250 MiB RSS that way; issue 14 item 5).
 */
export type BlockMemory = (size: number) => Uint8Array;

/** The bytes of one block (local first, then the network), honouring `signal`, in `memory` where it can. */
export type BlockSource = (cid: CID, signal: AbortSignal, memory?: BlockMemory) => Promise<Uint8Array>;

/** A block of the DAG is not what a UnixFS file's DAG holds, or the leaves do not add up to the file's size. */
export class InvalidFileDagError extends Error {
  override readonly name = 'InvalidFileDagError';
}

/** Whether `read` can serve `cid`: a raw block, or a dag-pb node (its UnixFS type is checked when it is read). */
export function isPlainFileRoot(cid: CID): boolean {
  return cid.multihash.code !== IDENTITY && (cid.code === raw.code || cid.code === dagPb.code);
}

interface Pending {
  readonly cid: CID;
  bytes?: Promise<Uint8Array>;
}

export interface ReadFileOptions {
  readonly signal: AbortSignal;
  readonly readAhead: number;
  /**
   * Reuse the memory of a raw leaf once the consumer asks for the next chunk. Only for a consumer that is done with
   * a chunk when it pulls the next one (the HTTP edge: HttpReply.stream); one that keeps chunks must not set it.
   */
  readonly reuseChunks?: boolean;
}

/**
 * The bytes of the file `root` (`size` bytes, from its stat), in order. At most `readAhead` blocks are being read
 * or waiting at any time, the one the consumer waits for included; a consumer that stops pulling stops the reading.
 */
export async function* readFile(root: CID, size: number, getBlock: BlockSource, options: ReadFileOptions): AsyncGenerator<Uint8Array> {
  const { signal, readAhead } = options;
  const pool = options.reuseChunks ? new LeafMemory() : undefined;
  const read = (cid: CID): Promise<Uint8Array> => {
    if (cid.multihash.code === IDENTITY) return Promise.resolve(cid.multihash.digest);
    const bytes = getBlock(cid, signal, pool?.lend);
    // A block read ahead may fail after the consumer left; it is awaited only when its turn comes.
    bytes.catch(() => {});
    return bytes;
  };
  // The blocks still to visit, in file order; a dag-pb node's children take its place when it is visited.
  const queue: Pending[] = [{ cid: root }];
  let sent = 0;
  /** The raw leaf the consumer was last given: its memory is free once the consumer pulls again (we are here). */
  let sentLeaf: Uint8Array | undefined;
  while (queue.length > 0) {
    if (sentLeaf) pool?.giveBack(sentLeaf);
    sentLeaf = undefined;
    for (let i = 0; i < Math.min(readAhead, queue.length); i++) queue[i]!.bytes ??= read(queue[i]!.cid);
    const next = queue.shift()!;
    const block = await next.bytes!;
    signal.throwIfAborted();
    let data: Uint8Array | undefined;
    if (next.cid.code === raw.code) {
      // Only a raw leaf's memory is reused: a dag-pb node's children CIDs are views into its block.
      data = sentLeaf = block;
    } else if (next.cid.code === dagPb.code) {
      const { data: own, children } = fileNode(block);
      data = own;
      queue.unshift(...children.map((cid) => ({ cid })));
    } else {
      throw new InvalidFileDagError(`a file's DAG holds a block of codec 0x${next.cid.code.toString(16)}`);
    }
    if (data === undefined || data.byteLength === 0) continue;
    sent += data.byteLength;
    if (sent > size) throw new InvalidFileDagError('the file DAG holds more bytes than its size');
    yield data;
  }
  if (sent !== size) throw new InvalidFileDagError('the file DAG holds fewer bytes than its size');
}

/**
 * The memory of one download's raw leaves: a few buffers lent to the block source and taken back once their leaf
 * was sent. Only memory it lent is ever taken back (a block fetched from the network arrives in helia's memory).
 */
class LeafMemory {
  readonly #spare: Uint8Array[] = [];
  readonly #lent = new WeakSet<ArrayBufferLike>();

  readonly lend: BlockMemory = (size) => {
    const index = this.#spare.findIndex((buffer) => buffer.byteLength >= size);
    if (index !== -1) return this.#spare.splice(index, 1)[0]!.subarray(0, size);
    // Its own ArrayBuffer, never a slice of Node's shared pool, so the whole of it is ours to reuse.
    const fresh = Buffer.allocUnsafeSlow(size);
    this.#lent.add(fresh.buffer);
    return fresh;
  };

  giveBack(leaf: Uint8Array): void {
    if (this.#lent.has(leaf.buffer)) this.#spare.push(new Uint8Array(leaf.buffer));
  }
}

/** A dag-pb node of a file: the bytes it holds itself and its children, in order. */
function fileNode(block: Uint8Array): { data: Uint8Array | undefined; children: CID[] } {
  let node: dagPb.PBNode;
  let unixfs: UnixFS;
  try {
    node = dagPb.decode(block);
    if (node.Data === undefined) throw new Error('no UnixFS data');
    unixfs = UnixFS.unmarshal(node.Data);
  } catch (error) {
    throw new InvalidFileDagError(`a dag-pb block of the file is not a UnixFS node: ${(error as Error).message}`);
  }
  if (unixfs.type !== 'file' && unixfs.type !== 'raw') throw new InvalidFileDagError(`a UnixFS ${unixfs.type} node where file content was expected`);
  if (node.Links.length !== unixfs.blockSizes.length) throw new InvalidFileDagError('a UnixFS file node with links and block sizes that disagree');
  // dag-pb decodes its links with its own copy of multiformats; the blockstore and helia take this project's CID.
  return { data: unixfs.data, children: node.Links.map((link) => CID.decode(link.Hash.bytes)) };
}
