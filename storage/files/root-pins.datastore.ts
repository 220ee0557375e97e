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
import { CID } from 'multiformats/cid';
import { walkDag, type WalkBlockstore } from './dag-walk.js';
import type { RootPins } from './root-pins.js';
import type { FolderNames } from './node-store.js';
import { base36CidV1ToText } from '../../src/files/cid-text.js';

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

export interface DatastoreRootPinsOptions {
  readonly datastore: Datastore;
  readonly blockstore: WalkBlockstore;
  readonly getCodec: Helia<Libp2p>['getCodec'];
  /** Blocks at once per walk (default BLOCK_CONCURRENCY). */
  readonly concurrency?: number;
  /** The datastore's fast folder listing, when it has one (storage/files/node-store.ts); else keys are queried. */
  readonly names?: FolderNames;
}

const PIN_PREFIX = '/pin/';
const pinKey = (cid: CID): Key => new Key(`${PIN_PREFIX}${(cid.version === 0 ? cid.toV1() : cid).toString(base36)}`);
const blockKey = (cid: CID): Key => new Key(`/pinned-block/${base36.encode(cid.multihash.bytes)}`);

/** A NotFoundError that means absence: after an abort, datastore-fs reports NotFoundError too (it proves nothing). */
function absent(error: unknown, signal: AbortSignal | undefined): boolean {
  signal?.throwIfAborted();
  return (error as Error).name === 'NotFoundError';
}

function equals(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
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

/**
 * A pin record's name (base36 CID text) as the registry keys the file: `cid.toString()`. A name that is no CID (a
 * stray file in the pin folder) names no pin this node can know: undefined, and the walk passes over it.
 */
function pinNameToText(name: string): string | undefined {
  const fast = base36CidV1ToText(name);
  if (fast !== undefined) return fast;
  try {
    return CID.parse(name, base36).toString();
  } catch {
    return undefined;
  }
}

export function datastoreRootPins(options: DatastoreRootPinsOptions): RootPins {
  const { datastore } = options;
  const pinNames: (signal?: AbortSignal) => AsyncIterable<readonly string[]> =
    options.names === undefined
      ? async function* (signal) {
          for await (const key of datastore.queryKeys({ prefix: PIN_PREFIX }, { signal })) yield [key.toString().slice(PIN_PREFIX.length)];
        }
      : (signal) => options.names!(PIN_PREFIX, signal);
  const walking = { blockstore: options.blockstore, getCodec: options.getCodec, concurrency: options.concurrency ?? BLOCK_CONCURRENCY };
  /** The last update queued per block record key: each update of a record starts after the one before it. */
  const chains = new Map<string, Promise<void>>();

  /** Reads, changes (`change` returns false to leave it) and writes or deletes one block's record, in its turn. */
  function updateBlock(cid: CID, change: (block: PinnedBlock) => boolean, signal?: AbortSignal): Promise<void> {
    const key = blockKey(cid);
    const name = key.toString();
    // The signal is checked, not handed to datastore-fs: it races each call against the signal with one 'abort'
    // listener per call, and a walk's 16 updates in flight on one signal passed Node's limit of 10 listeners
    // (MaxListenersExceededWarning). A record's read and write are short local file operations.
    const run = async (): Promise<void> => {
      signal?.throwIfAborted();
      let block: PinnedBlock = { pinCount: 0, pinnedBy: [] };
      try {
        block = cborg.decode(await datastore.get(key)) as PinnedBlock;
      } catch (error) {
        if ((error as Error).name !== 'NotFoundError') throw error;
      }
      if (!change(block)) return;
      if (block.pinCount <= 0) await datastore.delete(key);
      else await datastore.put(key, cborg.encode(block));
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

  return {
    async has(cid, signal) {
      // One access(2) of the pin's file, where reading the record was four calls (open, fstat, read, close): the store
      // owner asks once per pin of an original store's startup walk. The fs datastore answers false for any error, as
      // its get answered not-found for any error; an abort is not an answer.
      const present = await datastore.has(pinKey(cid), { signal });
      signal?.throwIfAborted();
      return present;
    },

    async add(cid, addOptions = {}) {
      const { signal } = addOptions;
      const key = pinKey(cid);
      if (await datastore.has(key, { signal })) return;
      const depth = Infinity;
      const counted: CID[] = [];
      try {
        const count = (block: CID) =>
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
          );
        await walkDag(cid, { ...walking, depth, signal, offline: addOptions.offline }, count);
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

    async *rootTexts(signal) {
      // Names only: the pin folder's files are listed and none is opened.
      for await (const names of pinNames(signal)) {
        const texts: string[] = [];
        for (const name of names) {
          const text = pinNameToText(name);
          if (text !== undefined) texts.push(text);
        }
        if (texts.length > 0) yield texts;
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
      const uncounted = (block: CID) => updateBlock(block, (pinned) => uncount(pinned, cid), signal);
      await walkDag(cid, { ...walking, depth: record.depth, signal, offline: true, skipMissing: true }, uncounted);
    },
  };
}
