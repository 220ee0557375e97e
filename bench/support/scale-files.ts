// A files store of N small files for `npm run bench -- scale` (issue 30), written the way the node writes it but
// without HTTP: the node's own storage layer (startFilesNode: the store's FsBlockstore and FsDatastore, its root pins,
// the SQLite registry), in this process, in batches.
//
// Per file: one raw block of 1-4 KiB (a file of at most one chunk is one raw block, notes B.1) put into the
// blockstore; for a pinned record, the node's `pins.add` (the pin record and pinned-block entries its uploads leave
// in the datastore); its registry row, committed with the other rows of its batch in one transaction
// (the node commits one per upload: the only shortcut taken, and it changes what the rows are, not what they say).
// No pin intent is left behind: the store looks like one whose uploads all finished.
//
// The mix of lifecycle states (seeded, so every run builds the same store):
//   83% confirmed, pinned and held (origin: 90% upload, 8% replica, 2% pin)
//    6% temporary, pinned, TTL not yet run out (expires within the next 24 h)
//    3% temporary, pinned, TTL run out (the collector's expiry candidates)
//    6% expired: unpinned and released, blocks still on disk (what a GC run deletes)
//    2% confirmed but demoted by a handover: unpinned, not held here
// createdAt spread over the year before `now`.

import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import pLimit from 'p-limit';
import { NodeHolder } from '../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../actors/files/runtime.actor.js';
import type { FileRecord } from '../../src/files/types.js';
import { createLogger } from '../../src/logger.js';
import { prng } from '../../test/support/random.js';

const DAY_MS = 86_400_000;
/** Rows per registry transaction, and files whose blocks and pins are written before the next batch starts. */
const BATCH = 2_000;
/** Blocks and pins written at once (each is a few small file writes in the store's folders). */
const WRITE_CONCURRENCY = 32;

export interface FilledStore {
  readonly files: number;
  readonly pinned: number;
  readonly blockBytes: number;
  readonly counts: Readonly<Record<FileRecord['state'], number>>;
  /** CIDs of pinned, held files (confirmed or temporary), for status and download requests. */
  readonly sampleHeld: readonly string[];
  readonly ms: number;
  /** The store's own peer id (its key, made by the fill as the node makes it). */
  readonly peerId: string;
}

/** The record of file `index` of a store built at `now` from `seed` (the state mix above). */
function recordOf(cid: string, bytes: number, random: () => number, now: number): FileRecord {
  const createdAt = Math.floor(now - random() * 365 * DAY_MS);
  const pick = random();
  const base = { cid, createdAt, dagBytes: bytes };
  if (pick < 0.83) {
    const o = random();
    return { ...base, state: 'confirmed', pinned: true, heldLocally: true, expiresAt: null, confirmedAt: createdAt, origin: o < 0.9 ? 'upload' : o < 0.98 ? 'replica' : 'pin' };
  }
  if (pick < 0.89) return { ...base, createdAt: now - Math.floor(random() * DAY_MS), state: 'temporary', pinned: true, heldLocally: true, expiresAt: now + Math.floor(random() * DAY_MS), confirmedAt: null, origin: 'upload' };
  if (pick < 0.92) return { ...base, state: 'temporary', pinned: true, heldLocally: true, expiresAt: createdAt + DAY_MS, confirmedAt: null, origin: 'upload' };
  if (pick < 0.98) return { ...base, state: 'expired', pinned: false, heldLocally: false, expiresAt: createdAt + DAY_MS, confirmedAt: null, origin: 'upload' };
  return { ...base, state: 'confirmed', pinned: false, heldLocally: false, expiresAt: null, confirmedAt: createdAt, origin: 'upload' };
}

/** Content of file `index`: 1-4 KiB, distinct per (seed, index). */
function contentOf(seed: number, index: number, random: () => number): Uint8Array {
  const size = 1024 + Math.floor(random() * 3073);
  const bytes = new Uint8Array(size);
  const view = new DataView(bytes.buffer);
  view.setUint32(0, seed >>> 0);
  view.setUint32(4, index >>> 0);
  for (let i = 8; i < size; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

/**
 * Writes `count` files into the store folder `storeDirectory` (created when missing; its peer key is made as the node
 * makes it), the files numbered from 0. `progress` hears the number written after each batch.
 */
export async function fillFilesStore(storeDirectory: string, count: number, options: { seed: number; now: number; progress?: (written: number) => void }): Promise<FilledStore> {
  const started = Date.now();
  const holder = new NodeHolder();
  const node = await startFilesNode({ storeDirectory, listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder, logger: createLogger({ level: 'warn' }) });
  const random = prng(options.seed);
  const limit = pLimit(WRITE_CONCURRENCY);
  const counts = { temporary: 0, confirmed: 0, expired: 0 };
  const sampleHeld: string[] = [];
  let pinned = 0;
  let blockBytes = 0;
  try {
    for (let first = 0; first < count; first += BATCH) {
      const files = Array.from({ length: Math.min(BATCH, count - first) }, (_, i) => contentOf(options.seed, first + i, random));
      const records: FileRecord[] = [];
      for (const bytes of files) {
        const cid = CID.createV1(raw.code, await sha256.digest(bytes));
        const record = recordOf(cid.toString(), bytes.length, random, options.now);
        records.push(record);
        counts[record.state]++;
        blockBytes += bytes.length;
        if (record.pinned) pinned++;
        if (record.pinned && record.heldLocally && sampleHeld.length < 1_000 && random() < 0.1) sampleHeld.push(record.cid);
      }
      await Promise.all(
        records.map((record, i) =>
          limit(async () => {
            const cid = CID.parse(record.cid);
            await node.store.blockstore.put(cid, files[i]!);
            if (record.pinned) await node.pins.add(cid, { offline: true });
          }),
        ),
      );
      node.registry.putMany(records);
      options.progress?.(first + records.length);
    }
  } finally {
    holder.set(undefined);
    await stopFilesNode(node);
  }
  return { files: count, pinned, blockBytes, counts, sampleHeld, ms: Date.now() - started, peerId: node.peerId };
}
