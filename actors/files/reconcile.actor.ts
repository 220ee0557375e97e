// `files.reconcile`: the startup walk (docs/specs/files-node.md §3.1, §9.6; notes A.7, C22). Runs once the
// runtime is up, without blocking the API:
//   1. pin-intent markers left by an interrupted upload: the pin is made to match the committed record
//      (unpinned when there is none), then the marker goes, so no pin is left without a record;
//   2. every pin unknown to the registry whose DAG is fully local is registered as confirmed, dated now;
//      a pin whose DAG is not fully local is skipped.
// It finishes (a transient child); the collector and the health startup check wait for it.

import { CID } from 'multiformats/cid';
import { code as RAW_CODEC } from 'multiformats/codecs/raw';
import pLimit from 'p-limit';
import { fromPromise } from 'xstate';
import { backfillRecord } from '../../src/files/lifecycle.js';
import type { FileRecord } from '../../src/files/types.js';
import { walkDag } from '../../storage/files/dag-walk.js';
import type { Logger } from '../../src/logger.js';
import type { Clock } from '../../src/clock.js';
import type { FilesNode, NodeHolder } from './node.js';
import type { StorePort } from './store.actor.js';

/** Unknown pins registered per ask of the store's owner (one transaction each). */
const BACKFILL_BATCH = 256;
/** Unknown pins proven local at once. */
const BACKFILL_CONCURRENCY = 8;
/** Blocks of one DAG read at once while proving it local. */
const WALK_CONCURRENCY = 8;
/** The identity multihash: the block is inside the CID, never in a block file. */
const IDENTITY_HASH = 0x00;
/** At most one progress line per this long: an original store of a million pins takes a quarter of an hour. */
const PROGRESS_LOG_MS = 30_000;

export interface ReconcileResult {
  readonly intentsResolved: number;
  readonly backfilled: number;
  readonly skipped: number;
}

/** Where the walk stands: the pins checked against the registry so far, and what it registered and skipped of them. */
export interface ReconcileProgress {
  readonly checked: number;
  readonly backfilled: number;
  readonly skipped: number;
}

export function reconcileLogic(options: { holder: NodeHolder; store: StorePort; clock: Clock; logger: Logger; onComplete: (result: ReconcileResult) => void }) {
  return fromPromise<ReconcileResult>(async ({ signal }) => {
    // The runtime is its earlier sibling and counts as started only once the node runs (tree.ts readyWhen).
    const { clock, logger } = options;
    let loggedAt = clock.now();
    const progress = (where: ReconcileProgress) => {
      if (clock.now() - loggedAt < PROGRESS_LOG_MS) return;
      loggedAt = clock.now();
      logger.info({ ...where }, 'startup reconciliation in progress');
    };
    const result = await reconcile(options.holder.get(), options.store, clock.now(), signal, progress);
    options.logger.info({ ...result }, 'startup reconciliation complete');
    options.onComplete(result);
    return result;
  });
}

/** The walk reads the pin set and the blocks itself; every write (an intent settled, a record backfilled) is the owner's. */
export async function reconcile(
  node: FilesNode,
  store: StorePort,
  now: number,
  signal: AbortSignal,
  progress: (where: ReconcileProgress) => void = () => {},
): Promise<ReconcileResult> {
  let intentsResolved = 0;
  for (const intent of node.registry.intents()) {
    signal.throwIfAborted();
    await store.ask({ type: 'store.settleIntent', intent, cid: CID.parse(intent.cid) }, { signal });
    intentsResolved++;
  }

  let backfilled = 0;
  let skipped = 0;
  let checked = 0;
  // Unknown pins are proven local BACKFILL_CONCURRENCY at once and registered BACKFILL_BATCH per ask: an original
  // store has no registry, so every pin is unknown (issue 30: one registry transaction per pin, each with its fsync,
  // was half of the walk's CPU).
  const limit = pLimit(BACKFILL_CONCURRENCY);
  const registerBatch = async (cids: readonly CID[]): Promise<void> => {
    const proven = await Promise.all(cids.map((cid) => limit(() => provenLocal(node, cid, now, signal))));
    const records = proven.filter((record) => record !== undefined);
    skipped += cids.length - records.length;
    if (records.length > 0) backfilled += (await store.ask({ type: 'store.backfill', records }, { signal })).length;
  };
  // The pin set's names only (RootPins.rootTexts): a pin the registry knows costs one indexed lookup and no file read.
  // The lookups go BACKFILL_BATCH at a time, in one read transaction each; only an unknown pin's CID is built.
  for await (const texts of node.pins.rootTexts(signal)) {
    for (let from = 0; from < texts.length; from += BACKFILL_BATCH) {
      const unknown = node.registry.unregistered(texts.slice(from, from + BACKFILL_BATCH)).map((text) => CID.parse(text));
      if (unknown.length > 0) await registerBatch(unknown);
    }
    checked += texts.length;
    progress({ checked, backfilled, skipped });
  }
  return { intentsResolved, backfilled, skipped };
}

/**
 * The backfill record of a pin whose DAG is wholly in the local blockstore, else undefined (notes A.7: a missing block
 * skips the pin). The walk reads each interior block for its links and proves a raw leaf present without reading it.
 * The record's size is the file's (unixfs stat), which for a raw root is its block's length.
 */
async function provenLocal(node: FilesNode, cid: CID, now: number, signal: AbortSignal): Promise<FileRecord | undefined> {
  // A raw root is a whole file of one block: its block file's presence and size are one stat, where helia's stat and
  // walk opened and read the block (most of an original store's pins are small files; at 1M the walk took >20 min).
  if (cid.code === RAW_CODEC && cid.multihash.code !== IDENTITY_HASH) {
    const size = await node.store.blockstore.sizeOf(cid);
    signal.throwIfAborted();
    return size === undefined ? undefined : backfillRecord(cid.toString(), now, size);
  }
  try {
    const stat = await node.unixfs.stat(cid, { offline: true, signal });
    await walkDag(cid, { blockstore: node.helia.blockstore, getCodec: node.helia.getCodec, concurrency: WALK_CONCURRENCY, offline: true, signal });
    return backfillRecord(cid.toString(), now, Number((stat as { size?: bigint | number }).size ?? 0));
  } catch (error) {
    if (signal.aborted) throw error;
    return undefined;
  }
}
