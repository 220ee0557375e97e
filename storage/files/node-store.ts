// The files node's durable state, one folder treated as one unit (docs/specs/files-node.md §1; notes B.7):
//   <home>/<storeFolder>/blockstore/      FsBlockstore (blockstore-fs), the original's layout, read whole per block
//                                         (blockstore.fs.ts)
//   <home>/<storeFolder>/datastore/       FsDatastore (datastore-fs): peer key /pkcs8/self, pins, peer store
//   <home>/<storeFolder>/registry.sqlite  file registry, pin-intent markers, GC evidence, actor state
// Opening an existing original store keeps its peer key, pins and blocks.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FsDatastore } from 'datastore-fs';
import { WholeBlockFsBlockstore } from './blockstore.fs.js';

/**
 * FsDatastore that takes no writes once closed. libp2p saves its own peer record from a debounced callback
 * that can fire about a second after the node stopped; written then, it would recreate the store's folders
 * after the process (or a test) considered the store finished and removed them. The record is a cache
 * rebuilt at the next start, so dropping that late write loses nothing.
 */
class ClosableFsDatastore extends FsDatastore {
  #closed = false;

  override async open(): Promise<void> {
    this.#closed = false;
    await super.open();
  }

  override async close(): Promise<void> {
    this.#closed = true;
    await super.close();
  }

  override async put(...args: Parameters<FsDatastore['put']>): ReturnType<FsDatastore['put']> {
    if (this.#closed) return args[0];
    return super.put(...args);
  }
}

export interface NodeStore {
  readonly directory: string;
  readonly blockstore: WholeBlockFsBlockstore;
  readonly datastore: FsDatastore;
  readonly registryPath: string;
  close(): Promise<void>;
}

export async function openNodeStore(directory: string): Promise<NodeStore> {
  mkdirSync(directory, { recursive: true });
  const blockstore = new WholeBlockFsBlockstore(join(directory, 'blockstore'));
  const datastore = new ClosableFsDatastore(join(directory, 'datastore'));
  await blockstore.open();
  try {
    await datastore.open();
  } catch (error) {
    await blockstore.close();
    throw error;
  }
  return {
    directory,
    blockstore,
    datastore,
    registryPath: join(directory, 'registry.sqlite'),
    async close() {
      await datastore.close();
      await blockstore.close();
    },
  };
}
