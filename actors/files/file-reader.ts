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

/** The bytes of one block (local first, then the network), honouring `signal`. */
export type BlockSource = (cid: CID, signal: AbortSignal) => Promise<Uint8Array>;

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

/**
 * The bytes of the file `root` (`size` bytes, from its stat), in order. At most `readAhead` blocks are being read
 * or waiting at any time, the one the consumer waits for included; a consumer that stops pulling stops the reading.
 */
export async function* readFile(root: CID, size: number, getBlock: BlockSource, options: { signal: AbortSignal; readAhead: number }): AsyncGenerator<Uint8Array> {
  const { signal, readAhead } = options;
  const read = (cid: CID): Promise<Uint8Array> => {
    if (cid.multihash.code === IDENTITY) return Promise.resolve(cid.multihash.digest);
    const bytes = getBlock(cid, signal);
    // A block read ahead may fail after the consumer left; it is awaited only when its turn comes.
    bytes.catch(() => {});
    return bytes;
  };
  // The blocks still to visit, in file order; a dag-pb node's children take its place when it is visited.
  const queue: Pending[] = [{ cid: root }];
  let sent = 0;
  while (queue.length > 0) {
    for (let i = 0; i < Math.min(readAhead, queue.length); i++) queue[i]!.bytes ??= read(queue[i]!.cid);
    const next = queue.shift()!;
    const block = await next.bytes!;
    signal.throwIfAborted();
    let data: Uint8Array | undefined;
    if (next.cid.code === raw.code) {
      data = block;
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
