// The files node's durable state, one folder treated as one unit (docs/specs/files-node.md §1; notes B.7):
//   <home>/<storeFolder>/blockstore/      FsBlockstore (blockstore-fs), the original's layout, read whole per block
//                                         (blockstore.fs.ts)
//   <home>/<storeFolder>/datastore/       FsDatastore (datastore-fs): peer key /pkcs8/self, pins, peer store
//   <home>/<storeFolder>/registry.sqlite  file registry, pin-intent markers, GC evidence, actor state
// Opening an existing original store keeps its peer key, pins and blocks.

import { mkdirSync, type Dir } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FsDatastore } from 'datastore-fs';
import { WholeBlockFsBlockstore } from './blockstore.fs.js';

/** datastore-fs's own types for the key listing (its interface packages are not dependencies of this project). */
type KeyListing = FsDatastore['_allKeys'];
type Key = ReturnType<FsDatastore['_decode']>;

/** datastore-fs's file extension, named here because the key listing below reads the folders itself. */
const DATASTORE_EXTENSION = '.data';

/**
 * FsDatastore that takes no writes once closed, and lists keys without reading whole folders (`_allKeys` below). libp2p saves its own peer record from a debounced callback
 * that can fire about a second after the node stopped; written then, it would recreate the store's folders
 * after the process (or a test) considered the store finished and removed them. The record is a cache
 * rebuilt at the next start, so dropping that late write loses nothing.
 */
class ClosableFsDatastore extends FsDatastore {
  #closed = false;

  constructor(location: string) {
    super(location, { extension: DATASTORE_EXTENSION });
  }

  /**
   * The keys under a prefix, read as a stream of directory entries. datastore-fs lists them with fast-glob, which
   * reads each folder whole into memory: the pin folder is one flat folder with an entry per pin, and listing it
   * (the startup walk, RootPins.roots) held 66 MiB of heap at 100,000 pins, so about 660 MiB at a million (issue 30).
   * The same keys under a folder prefix (`/pin/`): every file with the extension below it, recursively; `queryKeys`
   * (datastore-core) then keeps those that start with the prefix. A prefix ending inside a name (`/pin/bafy`) lists the
   * keys that start with it, as interface-datastore says; datastore-fs's glob lists none there (no caller does that).
   */
  override async *_allKeys(q: Parameters<KeyListing>[0], options?: Parameters<KeyListing>[1]): AsyncGenerator<Key> {
    const prefix = (q.prefix ?? '').replace(/^\/+/, '');
    // `/pin/` is a folder; `/pin/bafy` names files in the folder `/pin`.
    const pending = [prefix.endsWith('/') || prefix === '' ? join(this.path, prefix) : dirname(join(this.path, prefix))];
    while (pending.length > 0) {
      const folder = pending.pop()!;
      let entries: Dir;
      try {
        entries = await opendir(folder);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue;
        throw error;
      }
      // The loop closes the directory when it ends or throws.
      for await (const entry of entries) {
        options?.signal?.throwIfAborted();
        const path = join(folder, entry.name);
        if (entry.isDirectory()) pending.push(path);
        else if (entry.isFile() && entry.name.endsWith(DATASTORE_EXTENSION)) yield this._decode(path);
      }
    }
  }

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
