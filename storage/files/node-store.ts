// The files node's durable state, one folder treated as one unit (specs/files-node.md §1; notes B.7):
//   <home>/<storeFolder>/blockstore/      FsBlockstore (blockstore-fs), the original's layout
//   <home>/<storeFolder>/datastore/       FsDatastore (datastore-fs): peer key /pkcs8/self, pins, peer store
//   <home>/<storeFolder>/registry.sqlite  file registry, pin-intent markers, GC evidence, actor state
// Opening an existing original store keeps its peer key, pins and blocks.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { FsDatastore } from 'datastore-fs';

export interface NodeStore {
  readonly directory: string;
  readonly blockstore: FsBlockstore;
  readonly datastore: FsDatastore;
  readonly registryPath: string;
  close(): Promise<void>;
}

export async function openNodeStore(directory: string): Promise<NodeStore> {
  mkdirSync(directory, { recursive: true });
  const blockstore = new FsBlockstore(join(directory, 'blockstore'));
  const datastore = new FsDatastore(join(directory, 'datastore'));
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
