// The node's root pins, as the files actors need them: the narrow face of helia's pin set that the record owner
// (file-records.ts) is given instead of the whole node.

import type { Helia } from '@helia/utils';
import type { Libp2p } from '@libp2p/interface';
import type { CID } from 'multiformats/cid';

export interface RootPins {
  /**
   * Whether `cid` has a root pin of its own. Not `pins.isPinned`: helia marks each block as it walks the DAG, the
   * root first, so a `pins.add` that failed or was aborted midway leaves `isPinned(root)` true with no pin behind it
   * (seen with helia 6). Block-level questions ("does any pin protect this block?") still use `isPinned`.
   */
  has(cid: CID, signal?: AbortSignal): Promise<boolean>;
  /** Pins `cid` and its whole DAG; `offline` reads only local blocks (a missing block fails instead of fetching). */
  add(cid: CID, options?: { signal?: AbortSignal; offline?: boolean }): Promise<void>;
  /** Releases the root pin of `cid`; a CID that is not pinned as a root (only inside another DAG) is left alone. */
  remove(cid: CID, signal?: AbortSignal): Promise<void>;
}

/** Consumes a helia pin generator (`pins.add` and `pins.rm` yield every block they visit). */
export async function drain(iterable: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of iterable) {
    // each visited block; nothing to do with it
  }
}

export function heliaRootPins(pins: Helia<Libp2p>['pins']): RootPins {
  return {
    async has(cid, signal) {
      try {
        await pins.get(cid, { signal });
        return true;
      } catch (error) {
        if ((error as Error).name === 'NotFoundError') return false;
        throw error;
      }
    },
    async add(cid, options = {}) {
      // `offline` reaches the blockstore read of every block the pin walks (helia's AddOptions do not declare it).
      await drain(pins.add(cid, options as Parameters<Helia<Libp2p>['pins']['add']>[1]));
    },
    async remove(cid, signal) {
      try {
        await drain(pins.rm(cid, { signal }));
      } catch (error) {
        if ((error as Error).name !== 'NotFoundError') throw error;
      }
    },
  };
}
