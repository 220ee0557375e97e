// A walk over every block of a DAG, several blocks at a time, that reads a block only for its links: the pin walks
// (root-pins.datastore.ts) and a copy's fetch (actors/files/replication.actor.ts) use it.
//
// Why not helia's walk or the unixfs exporter: helia's pin walk takes one block at a time; the exporter's `cat` hands
// out the file's bytes, and every block it reads is copied once more on the way (it-to-buffer concatenates even a
// single piece): a copy of 64 MiB spent ~0.9 s of a replica's CPU in those copies alone (issue 29, profiled).
// Here a raw leaf is not read at all once present (LINKS_ONLY, storage/files/blockstore.fs.ts); a missing one is
// fetched by the blockstore given (helia's, or a bitswap session's) and then only proven present.

import type { Helia } from '@helia/utils';
import type { Libp2p } from '@libp2p/interface';
import { createUnsafe } from 'multiformats/block';
import type { CID } from 'multiformats/cid';
import { LINKS_ONLY } from './blockstore.fs.js';

/** The raw codec (multicodec 0x55): a leaf without links. */
const RAW_CODE = 0x55;

/** A block as blockstores hand it over: in pieces (sync or async), or whole. */
type BlockRead = Iterable<Uint8Array> | AsyncIterable<Uint8Array> | Promise<Uint8Array>;

/** What the walk needs of a blockstore: helia's networked one, which fetches a missing block unless `offline`. */
export interface WalkBlockstore {
  get(cid: CID, options?: { signal?: AbortSignal; offline?: boolean; linksOnly?: boolean }): BlockRead;
}

export interface DagWalkOptions {
  readonly blockstore: WalkBlockstore;
  readonly getCodec: Helia<Libp2p>['getCodec'];
  /** Blocks in flight at once. */
  readonly concurrency: number;
  /** How deep under the root (helia's pin depth; Infinity for the whole DAG). */
  readonly depth?: number;
  readonly signal?: AbortSignal;
  /** Local blocks only: a missing block fails (or is skipped) instead of being fetched from a peer. */
  readonly offline?: boolean;
  /** A missing block is still visited, the DAG under it is not (a removal frees what it can reach). */
  readonly skipMissing?: boolean;
}

/** The links of a block, decoded with its codec (a raw block has none and is not decoded). */
export async function linksOf(getCodec: Helia<Libp2p>['getCodec'], cid: CID, bytes: Uint8Array): Promise<CID[]> {
  if (cid.code === RAW_CODE) return [];
  const block = createUnsafe({ bytes, cid, codec: await getCodec(cid.code) });
  return [...block.links()].map(([, link]) => link);
}

/** A block not held here: helia's storage refuses to fetch it while offline, or the blockstore lacks it. */
function missingBlock(error: unknown, signal: AbortSignal | undefined): boolean {
  signal?.throwIfAborted();
  const { name } = error as Error;
  return name === 'NotFoundError' || name === 'BlockNotFoundWhileOfflineError';
}

async function bytesOf(read: BlockRead): Promise<Uint8Array> {
  if (read instanceof Promise) return read;
  const pieces: Uint8Array[] = [];
  for await (const piece of read) pieces.push(piece);
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
}

/**
 * Visits every block of the DAG under `root` once (a block repeated in the DAG is visited once), `concurrency`
 * blocks at a time; `visit` runs after the block was read (or found missing, with `skipMissing`). The first failure
 * stops the walk (the blocks in flight finish) and is thrown.
 */
export function walkDag(root: CID, options: DagWalkOptions, visit: (cid: CID) => Promise<void> = async () => {}): Promise<void> {
  const { blockstore, getCodec, concurrency, signal, offline, skipMissing } = options;
  const seen = new Set<string>();
  const waiting: Array<{ cid: CID; depth: number }> = [];
  let running = 0;
  let failure: { error: unknown } | undefined;
  const { promise: finished, resolve, reject } = Promise.withResolvers<void>();

  const enqueue = (cid: CID, depth: number): void => {
    const key = Buffer.from(cid.multihash.bytes).toString('base64');
    if (seen.has(key)) return;
    seen.add(key);
    waiting.push({ cid, depth });
  };
  const step = async (cid: CID, depth: number): Promise<void> => {
    signal?.throwIfAborted();
    let bytes: Uint8Array;
    try {
      bytes = await bytesOf(blockstore.get(cid, { signal, offline, ...LINKS_ONLY }));
    } catch (error) {
      if (!(skipMissing && missingBlock(error, signal))) throw error;
      bytes = new Uint8Array(0);
    }
    await visit(cid);
    // A raw leaf comes back empty (it has no links), and so does a missing block that is skipped.
    if (depth <= 0 || bytes.length === 0) return;
    for (const link of await linksOf(getCodec, cid, bytes)) enqueue(link, depth - 1);
  };
  const pump = (): void => {
    while (!failure && running < concurrency && waiting.length > 0) {
      const next = waiting.shift()!;
      running++;
      step(next.cid, next.depth).then(
        () => {
          running--;
          pump();
        },
        (error: unknown) => {
          running--;
          failure ??= { error };
          pump();
        },
      );
    }
    if (running > 0) return;
    if (failure) reject(failure.error);
    else if (waiting.length === 0) resolve();
  };

  enqueue(root, options.depth ?? Infinity);
  pump();
  return finished;
}
