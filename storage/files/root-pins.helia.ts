// The root pins port (root-pins.ts) over helia's pin set.

import type { Helia } from '@helia/utils';
import type { Libp2p } from '@libp2p/interface';
import { base36 } from 'multiformats/bases/base36';
import { CID } from 'multiformats/cid';
import { LINKS_ONLY } from './blockstore.fs.js';
import type { RootPins } from './root-pins.js';

/** Consumes a helia pin generator (`pins.add` and `pins.rm` yield every block they visit). */
async function drain(iterable: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of iterable) {
    // each visited block; nothing to do with it
  }
}

/**
 * Whether a NotFoundError means "no such pin". datastore-fs answers every failed read with NotFoundError, an aborted
 * one too (it races the read against the signal inside a catch-all), so after an abort it proves nothing: the abort is
 * thrown instead. Taken for absence, it let a rollback that ran while the node stopped report the pin removed and drop
 * the intent marker with the pin still there (found by the fault harness, issue 29).
 */
function absent(error: unknown, signal: AbortSignal | undefined): boolean {
  signal?.throwIfAborted();
  return (error as Error).name === 'NotFoundError';
}

/**
 * Where helia keeps a root pin: one datastore key per pin, `/pin/<the CID as v1 in base36>` (@helia/utils 2,
 * pins.ts `DATASTORE_PIN_PREFIX` and `toDSKey`; `pins.ls` parses the same keys back, and reads each record's value
 * besides). The test beside this file compares `roots` with `pins.ls`, so a helia that moves its pins fails there.
 */
const PIN_KEY_PREFIX = '/pin/';

/** `datastore` is the one helia keeps its pins in (the store's FsDatastore): `roots` reads its keys. */
export function heliaRootPins(pins: Helia<Libp2p>['pins'], datastore: Pick<Helia<Libp2p>['datastore'], 'queryKeys'>): RootPins {
  return {
    async has(cid, signal) {
      try {
        await pins.get(cid, { signal });
        return true;
      } catch (error) {
        if (absent(error, signal)) return false;
        throw error;
      }
    },
    async add(cid, options = {}) {
      // `offline` and LINKS_ONLY reach the blockstore read of every block the pin walks (helia's AddOptions declare
      // neither): the walk needs links only, so raw leaves are not read back (storage/files/blockstore.fs.ts).
      await drain(pins.add(cid, { ...options, ...LINKS_ONLY } as Parameters<Helia<Libp2p>['pins']['add']>[1]));
    },
    async remove(cid, signal) {
      try {
        await drain(pins.rm(cid, { signal, ...LINKS_ONLY }));
      } catch (error) {
        if (!absent(error, signal)) throw error;
      }
    },
    async *roots(signal) {
      // Keys only: datastore-fs lists the files of the pin folder and opens none of them.
      for await (const key of datastore.queryKeys({ prefix: PIN_KEY_PREFIX }, { signal })) {
        yield CID.parse(key.toString().slice(PIN_KEY_PREFIX.length), base36);
      }
    },
  };
}
