// `files.reconcile`: the startup walk (docs/specs/files-node.md §3.1, §9.6; notes A.7, C22). Runs once the
// runtime is up, without blocking the API:
//   1. pin-intent markers left by an interrupted upload: the pin is made to match the committed record
//      (unpinned when there is none), then the marker goes, so no pin is left without a record;
//   2. every pin unknown to the registry whose DAG is fully local is registered as confirmed, dated now;
//      a pin whose DAG is not fully local is skipped.
// It finishes (a transient child); the collector and the health startup check wait for it.

import { CID } from 'multiformats/cid';
import { fromPromise } from 'xstate';
import { backfillRecord } from '../../src/files/lifecycle.js';
import type { Logger } from '../../src/logger.js';
import type { Clock } from '../../src/clock.js';
import type { FilesNode, NodeHolder } from './node.js';
import type { StorePort } from './store.actor.js';

export interface ReconcileResult {
  readonly intentsResolved: number;
  readonly backfilled: number;
  readonly skipped: number;
}

export function reconcileLogic(options: { holder: NodeHolder; store: StorePort; clock: Clock; logger: Logger; onComplete: (result: ReconcileResult) => void }) {
  return fromPromise<ReconcileResult>(async ({ signal }) => {
    // The runtime is its earlier sibling and counts as started only once the node runs (tree.ts readyWhen).
    const result = await reconcile(options.holder.get(), options.store, options.clock.now(), signal);
    options.logger.info({ ...result }, 'startup reconciliation complete');
    options.onComplete(result);
    return result;
  });
}

/** The walk reads the pin set and the blocks itself; every write (an intent settled, a record backfilled) is the owner's. */
export async function reconcile(node: FilesNode, store: StorePort, now: number, signal: AbortSignal): Promise<ReconcileResult> {
  let intentsResolved = 0;
  for (const intent of node.registry.intents()) {
    signal.throwIfAborted();
    await store.ask({ type: 'store.settleIntent', intent, cid: CID.parse(intent.cid) }, { signal });
    intentsResolved++;
  }

  let backfilled = 0;
  let skipped = 0;
  // The pin set's keys only (RootPins.roots): a pin the registry knows costs one indexed lookup and no file read.
  for await (const cid of node.pins.roots(signal)) {
    const text = cid.toString();
    if (node.registry.get(text)) continue;
    try {
      // offline: only local blocks count; a missing block fails the walk (notes A.7).
      const stat = await node.unixfs.stat(cid, { offline: true, signal });
      await walkLocal(node, cid, signal);
      if (await store.ask({ type: 'store.backfill', record: backfillRecord(text, now, Number((stat as { size?: bigint | number }).size ?? 0)) }, { signal })) backfilled++;
    } catch (error) {
      if (signal.aborted) throw error;
      skipped++;
    }
  }
  return { intentsResolved, backfilled, skipped };
}

/** Reads every block of the DAG from the local blockstore only; throws when one is missing. */
async function walkLocal(node: FilesNode, cid: CID, signal: AbortSignal): Promise<void> {
  for await (const _ of node.unixfs.cat(cid, { offline: true, signal })) {
    // reading the content touches every leaf; stat above touched the root
  }
}
