// The root pins port (root-pins.ts), written in the datastore records helia's pin set uses, byte for byte:
//   /pin/<base36 CIDv1>               cbor { depth, metadata }       one per root pin
//   /pinned-block/<base36 multihash>  cbor { pinCount, pinnedBy }    one per block some pin covers
// so the original node reads the pins this node makes and the other way round (notes B.7), and helia's
// `pins.isPinned`/`pins.ls` (the collector's block check, the startup walk) read them unchanged.
//
// Written here rather than through helia's `pins.add`/`pins.rm` (@helia/utils 2.5), for what they cost and what they lose:
// - Speed: helia updates the blocks' records one after the other, and a datastore-fs write is a mkdir, a temp file
//   and a rename: 236-747 ms of a 256 MiB upload (issue 27). Here up to BLOCK_CONCURRENCY blocks at a time.
// - Pin counts: helia reads, changes and writes a block's record with nothing ordering two pins of the same block.
//   Two roots sharing a block (two files with a common chunk), pinned side by side, both read "not pinned" and
//   both write a count of 1: one pin is lost, the next unpin of either deletes the record and the collector may
//   delete a block the other root still needs. Its `rm` also counts a block down once per visit (a block repeated
//   in a DAG) and keeps only the removed root in `pinnedBy`. Here the updates of one block's record run one after
//   the other (a chain per record key, below), a walk visits each block once, and a removal takes its root out of
//   `pinnedBy`. The chain is not a lock between actors: this adapter belongs to the store owner (files.store), the
//   only caller of add and remove, and orders its own concurrent writes to one record.

import type { Helia } from '@helia/utils';
import type { Libp2p } from '@libp2p/interface';
import * as cborg from 'cborg';
import type { Datastore } from 'interface-datastore';
import { Key } from 'interface-datastore';
import { base36 } from 'multiformats/bases/base36';
import { createUnsafe } from 'multiformats/block';
import type { CID } from 'multiformats/cid';
import { LINKS_ONLY } from './blockstore.fs.js';
import type { RootPins } from './root-pins.js';

/** Blocks read and records written at once by one pin walk. */
export const BLOCK_CONCURRENCY = 16;

/** helia's pin record. */
interface PinRecord {
  depth: number;
  metadata: Record<string, unknown>;
}

/** helia's record of the pins that cover one block. */
interface PinnedBlock {
  pinCount: number;
  pinnedBy: Uint8Array[];
}

interface WalkOptions {
  readonly signal?: AbortSignal;
  /** Local blocks only: a missing block fails (or is skipped) instead of being fetched from a peer. */
  readonly offline?: boolean;
  /** A missing block's own record is still visited, the DAG under it is not (a removal frees what it can reach). */
  readonly skipMissing?: boolean;
}

/** What the walk needs of a blockstore: helia's networked one, which fetches a missing block unless `offline`. */
export interface WalkBlockstore {
  get(cid: CID, options?: { signal?: AbortSignal; offline?: boolean; linksOnly?: boolean }): AsyncIterable<Uint8Array> | Promise<Uint8Array>;
}

export interface DatastoreRootPinsOptions {
  readonly datastore: Datastore;
  readonly blockstore: WalkBlockstore;
  readonly getCodec: Helia<Libp2p>['getCodec'];
  /** Blocks at once per walk (default BLOCK_CONCURRENCY). */
  readonly concurrency?: number;
}

const pinKey = (cid: CID): Key => new Key(`/pin/${(cid.version === 0 ? cid.toV1() : cid).toString(base36)}`);
const blockKey = (cid: CID): Key => new Key(`/pinned-block/${base36.encode(cid.multihash.bytes)}`);

/** A NotFoundError that means absence: after an abort, datastore-fs reports NotFoundError too (it proves nothing). */
function absent(error: unknown, signal: AbortSignal | undefined): boolean {
  signal?.throwIfAborted();
  return (error as Error).name === 'NotFoundError';
}

function equals(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/** A block not held here: helia's storage refuses to fetch it while offline (or the blockstore lost it). */
function missingBlock(error: unknown, signal: AbortSignal | undefined): boolean {
  return absent(error, signal) || (error as Error).name === 'BlockNotFoundWhileOfflineError';
}

/** Takes `root` out of a block's record; false when the record does not count it. */
function uncount(pinned: PinnedBlock, root: CID): boolean {
  const others = pinned.pinnedBy.filter((by) => !equals(by, root.bytes));
  if (others.length === pinned.pinnedBy.length) {
    // Not listed: the original's rm keeps only the root it removes in `pinnedBy`, so a record it wrote may have lost
    // this root's entry. Counted down only if the count says a pin is unlisted; else left as it is (a block kept too
    // long, never one freed too soon).
    if (pinned.pinCount <= pinned.pinnedBy.length) return false;
  }
  pinned.pinnedBy = others;
  pinned.pinCount = Math.max(pinned.pinCount - 1, others.length);
  return true;
}

async function bytesOf(read: AsyncIterable<Uint8Array> | Promise<Uint8Array>): Promise<Uint8Array> {
  if (read instanceof Promise) return read;
  const pieces: Uint8Array[] = [];
  for await (const piece of read) pieces.push(piece);
  if (pieces.length === 1) return pieces[0]!;
  const whole = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    whole.set(piece, at);
    at += piece.length;
  }
  return whole;
}

export function datastoreRootPins(options: DatastoreRootPinsOptions): RootPins {
  const { datastore, blockstore, getCodec } = options;
  const concurrency = options.concurrency ?? BLOCK_CONCURRENCY;
  /** The last update queued per block record key: each update of a record starts after the one before it. */
  const chains = new Map<string, Promise<void>>();

  /** Reads, changes (`change` returns false to leave it) and writes or deletes one block's record, in its turn. */
  function updateBlock(cid: CID, change: (block: PinnedBlock) => boolean, signal?: AbortSignal): Promise<void> {
    const key = blockKey(cid);
    const name = key.toString();
    const run = async (): Promise<void> => {
      let block: PinnedBlock = { pinCount: 0, pinnedBy: [] };
      try {
        block = cborg.decode(await datastore.get(key, { signal })) as PinnedBlock;
      } catch (error) {
        if (!absent(error, signal)) throw error;
      }
      if (!change(block)) return;
      if (block.pinCount <= 0) await datastore.delete(key, { signal });
      else await datastore.put(key, cborg.encode(block), { signal });
    };
    const previous = chains.get(name);
    const turn = previous ? previous.then(run, run) : run();
    const settled = turn.then(
      () => {},
      () => {},
    );
    chains.set(name, settled);
    void settled.then(() => {
      if (chains.get(name) === settled) chains.delete(name);
    });
    return turn;
  }

  /**
   * Visits every block of the DAG under `root` once, down to `depth` (helia's pin depth), `concurrency` blocks at a
   * time; `visit` runs after the block was read. The first failure stops the walk (the blocks in flight finish) and
   * is thrown.
   */
  async function walk(root: CID, depth: number, visit: (cid: CID) => Promise<void>, walkOptions: WalkOptions): Promise<void> {
    const seen = new Set<string>();
    const waiting: Array<{ cid: CID; depth: number }> = [];
    let running = 0;
    let failure: { error: unknown } | undefined;
    const { promise: finished, resolve, reject } = Promise.withResolvers<void>();

    const step = async (cid: CID, remaining: number): Promise<void> => {
      const { signal, offline, skipMissing } = walkOptions;
      signal?.throwIfAborted();
      let bytes: Uint8Array;
      try {
        bytes = await bytesOf(blockstore.get(cid, { signal, offline, ...LINKS_ONLY }));
      } catch (error) {
        if (!(skipMissing && missingBlock(error, signal))) throw error;
        bytes = new Uint8Array(0);
      }
      await visit(cid);
      if (remaining <= 0 || bytes.length === 0) return;
      const block = createUnsafe({ bytes, cid, codec: await getCodec(cid.code) });
      for (const [, link] of block.links()) enqueue(link, remaining - 1);
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
      if (running === 0) {
        if (failure) reject(failure.error);
        else if (waiting.length === 0) resolve();
      }
    };
    function enqueue(cid: CID, remaining: number): void {
      const name = base36.encode(cid.multihash.bytes);
      if (seen.has(name)) return;
      seen.add(name);
      waiting.push({ cid, depth: remaining });
    }

    enqueue(root, depth);
    pump();
    return finished;
  }

  return {
    async has(cid, signal) {
      try {
        await datastore.get(pinKey(cid), { signal });
        return true;
      } catch (error) {
        if (absent(error, signal)) return false;
        throw error;
      }
    },

    async add(cid, addOptions = {}) {
      const { signal } = addOptions;
      const key = pinKey(cid);
      if (await datastore.has(key, { signal })) return;
      const depth = Infinity;
      const counted: CID[] = [];
      try {
        await walk(
          cid,
          depth,
          (block) =>
            updateBlock(
              block,
              (pinned) => {
                // A block already counted for this root (an earlier add cut short) is not counted again.
                if (pinned.pinnedBy.some((by) => equals(by, cid.bytes))) return false;
                pinned.pinCount++;
                pinned.pinnedBy.push(cid.bytes);
                counted.push(block);
                return true;
              },
              signal,
            ),
          { signal, offline: addOptions.offline },
        );
        const record: PinRecord = { depth, metadata: {} };
        await datastore.put(key, cborg.encode(record), { signal });
      } catch (error) {
        // Counted blocks without a pin would never be counted down (nothing walks a pin that does not exist), and the
        // collector would keep them for ever: an operator pin that timed out fetching would leave every block it
        // fetched. Uncounted here, without the signal (it may be why the add failed); a crash in between still leaks.
        await Promise.all(counted.map((block) => updateBlock(block, (pinned) => uncount(pinned, cid)))).catch(() => {});
        throw error;
      }
    },

    async remove(cid, signal) {
      const key = pinKey(cid);
      let record: PinRecord;
      try {
        record = cborg.decode(await datastore.get(key, { signal })) as PinRecord;
      } catch (error) {
        if (absent(error, signal)) return;
        throw error;
      }
      await datastore.delete(key, { signal });
      await walk(
        cid,
        record.depth,
        (block) =>
          updateBlock(
            block,
            (pinned) => uncount(pinned, cid),
            signal,
          ),
        { signal, offline: true, skipMissing: true },
      );
    },
  };
}
