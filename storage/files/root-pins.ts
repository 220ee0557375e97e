// The node's root pins, as the files actors need them: the narrow face of the pin set. The store's owner
// (actors/files/store.actor.ts) alone changes it; the other actors ask `has`.
// One backend: root-pins.datastore.ts (helia's pin records, written by us).

import type { CID } from 'multiformats/cid';

export interface RootPins {
  /**
   * Whether `cid` has a root pin of its own. Not `pins.isPinned`: helia marks each block as it walks the DAG, the
   * root first, so a `pins.add` that failed or was aborted midway leaves `isPinned(root)` true with no pin behind it
   * (seen with helia 6). Block-level questions ("does any pin protect this block?") still use `isPinned`.
   * Rejects once `signal` is aborted: an aborted read never counts as "not pinned".
   */
  has(cid: CID, signal?: AbortSignal): Promise<boolean>;
  /** Pins `cid` and its whole DAG; `offline` reads only local blocks (a missing block fails instead of fetching). */
  add(cid: CID, options?: { signal?: AbortSignal; offline?: boolean }): Promise<void>;
  /**
   * Releases the root pin of `cid`; a CID that is not pinned as a root (only inside another DAG) is left alone.
   * Rejects once `signal` is aborted, even when the pin could not be read: the caller must not take it as removed.
   */
  remove(cid: CID, signal?: AbortSignal): Promise<void>;
  /**
   * Every root pin's CID as text (`cid.toString()`, the registry's key), in batches as the pin set's index is read:
   * no pin record is opened and no CID is built (the startup walk lists a million pins at every start; reading each
   * record cost a file read apiece, and building each CID ~10 µs, issue 30). Order is the backend's.
   */
  rootTexts(signal?: AbortSignal): AsyncIterable<readonly string[]>;
}
