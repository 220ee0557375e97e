// The files node's durable state, one folder treated as one unit (docs/specs/files-node.md §1; notes B.7):
//   <home>/<storeFolder>/blockstore/      FsBlockstore (blockstore-fs), the original's layout, read whole per block
//                                         (blockstore.fs.ts)
//   <home>/<storeFolder>/datastore/       FsDatastore (datastore-fs): peer key /pkcs8/self, pins, peer store
//   <home>/<storeFolder>/registry.sqlite  file registry, pin-intent markers, GC evidence, actor state
// Opening an existing original store keeps its peer key, pins and blocks.

import { mkdirSync, opendirSync, type Dir, type Dirent } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { FsDatastore } from 'datastore-fs';
import type { Key } from 'interface-datastore';
import { WholeBlockFsBlockstore } from './blockstore.fs.js';

/** datastore-fs's own listing type (`_allKeys`). */
type KeyListing = FsDatastore['_allKeys'];

/** datastore-fs's file extension, named here because the key listing below reads the folders itself. */
const DATASTORE_EXTENSION = '.data';

/** Names per batch of `namesIn` (and entries per directory read). */
const NAMES_PER_BATCH = 1_024;

/** Key prefix of libp2p's peer store records (@libp2p/peer-store). */
const PEER_RECORD_PREFIX = '/peers/';
/** Peer records kept in memory once written to disk; beyond this the oldest goes first (a stranger's many peer ids). */
const PEER_RECORD_CACHE_LIMIT = 1_000;
/** How long a changed peer record may wait in memory before it is written. */
const PEER_RECORD_FLUSH_MS = 5_000;

/**
 * FsDatastore with three changes:
 * - It takes no writes once closed. libp2p saves its own peer record from a debounced callback that can fire about
 *   a second after the node stopped; written then, it would recreate the store's folders after the process (or a
 *   test) considered the store finished and removed them. The record is a cache rebuilt at the next start, so
 *   dropping that late write loses nothing.
 * - Peer records are written back, not through. libp2p merges into the peer's record on every stream opened or
 *   accepted (bitswap opens one per message), each merge a file read and a write (mkdir, temp file, rename), since
 *   the record carries its last update time: ~1.5 s of a node's CPU per 64 MiB replicated to two peers (issue 29,
 *   profiled). Here a record is read from disk once, and a changed one is written within PEER_RECORD_FLUSH_MS, before
 *   a query lists records, and when the store closes: the original's layout keeps its peer store, and a crash loses
 *   at most the last seconds of a cache that identify rebuilds.
 */
class ClosableFsDatastore extends FsDatastore {
  #closed = false;
  /** Peer records as last written or read, by key. */
  readonly #peerRecords = new Map<string, { key: Key; value: Uint8Array }>();
  /** Keys of records changed in memory and not yet on disk. */
  readonly #dirty = new Set<string>();
  /** Counts changes of peer records: a disk read that raced one is not kept (it may hold the older value). */
  #peerChanges = 0;
  #flushTimer: NodeJS.Timeout | undefined;
  /** The write-back in progress: one at a time, so an older value never lands after a newer one. */
  #flushing: Promise<void> = Promise.resolve();

  constructor(location: string) {
    super(location, { extension: DATASTORE_EXTENSION });
  }

  /**
   * The keys under a prefix, read as a stream of directory entries. datastore-fs lists them with fast-glob, which
   * reads each folder whole into memory: the pin folder is one flat folder with an entry per pin, and listing it
   * (the startup walk did, before `namesIn` below) held 66 MiB of heap at 100,000 pins, so about 660 MiB at a million
   * (issue 30). The same keys under a folder prefix (`/pin/`): every file with the extension below it, recursively; `queryKeys`
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

  /**
   * The names of the records directly under a folder prefix (`/pin/`), without the extension, in batches of up to
   * NAMES_PER_BATCH as the folder is read: the startup walk lists a million pins at every start, and a key apiece
   * through `queryKeys` (a Key object, path arithmetic and three async generators per record) was ~5 µs a pin. The
   * folder is read with synchronous calls one batch at a time (one `getdents` per NAMES_PER_BATCH entries), the event
   * loop free between batches. A missing folder lists nothing.
   */
  async *namesIn(folderPrefix: string, signal?: AbortSignal): AsyncGenerator<string[]> {
    let folder: Dir;
    try {
      folder = opendirSync(join(this.path, folderPrefix), { bufferSize: NAMES_PER_BATCH });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw error;
    }
    try {
      for (;;) {
        signal?.throwIfAborted();
        const names: string[] = [];
        let entry: Dirent | null = null;
        while (names.length < NAMES_PER_BATCH && (entry = folder.readSync()) !== null) {
          if (entry.isFile() && entry.name.endsWith(DATASTORE_EXTENSION)) names.push(entry.name.slice(0, -DATASTORE_EXTENSION.length));
        }
        if (names.length > 0) yield names;
        if (entry === null) return;
        await setImmediate();
      }
    } finally {
      folder.closeSync();
    }
  }

  override async open(): Promise<void> {
    this.#closed = false;
    await super.open();
  }

  override async close(): Promise<void> {
    await this.#flush();
    this.#closed = true;
    this.#peerRecords.clear();
    await super.close();
  }

  override async put(...args: Parameters<FsDatastore['put']>): ReturnType<FsDatastore['put']> {
    if (this.#closed) return args[0];
    const [key, value] = args;
    const name = peerRecordName(key);
    if (name === undefined) return super.put(...args);
    this.#peerChanges++;
    this.#peerRecords.delete(name);
    this.#peerRecords.set(name, { key, value });
    this.#dirty.add(name);
    this.#trim();
    this.#flushTimer ??= setTimeout(() => void this.#flush(), PEER_RECORD_FLUSH_MS).unref();
    return key;
  }

  override async get(...args: Parameters<FsDatastore['get']>): ReturnType<FsDatastore['get']> {
    const name = peerRecordName(args[0]);
    if (name === undefined) return super.get(...args);
    const known = this.#peerRecords.get(name);
    if (known) {
      args[1]?.signal?.throwIfAborted();
      return known.value;
    }
    const changes = this.#peerChanges;
    const value = await super.get(...args);
    if (changes === this.#peerChanges) this.#remember(name, args[0], value);
    return value;
  }

  override async has(...args: Parameters<FsDatastore['has']>): ReturnType<FsDatastore['has']> {
    const name = peerRecordName(args[0]);
    if (name !== undefined && this.#peerRecords.has(name)) return true;
    return super.has(...args);
  }

  override async delete(...args: Parameters<FsDatastore['delete']>): ReturnType<FsDatastore['delete']> {
    const name = peerRecordName(args[0]);
    if (name !== undefined) {
      this.#peerChanges++;
      this.#peerRecords.delete(name);
      this.#dirty.delete(name);
    }
    return super.delete(...args);
  }

  override async *query(...args: Parameters<FsDatastore['query']>): ReturnType<FsDatastore['query']> {
    // Listings read the disk: changed records go there first.
    await this.#flush();
    yield* super.query(...args);
  }

  override async *queryKeys(...args: Parameters<FsDatastore['queryKeys']>): ReturnType<FsDatastore['queryKeys']> {
    await this.#flush();
    yield* super.queryKeys(...args);
  }

  #remember(name: string, key: Key, value: Uint8Array): void {
    this.#peerRecords.set(name, { key, value });
    this.#trim();
  }

  /** Drops the oldest records beyond the limit; only records already on disk may go. */
  #trim(): void {
    for (const [oldest] of this.#peerRecords) {
      if (this.#peerRecords.size <= PEER_RECORD_CACHE_LIMIT) break;
      if (!this.#dirty.has(oldest)) this.#peerRecords.delete(oldest);
    }
  }

  /** Writes the changed peer records (after any write-back still running). */
  #flush(): Promise<void> {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#flushing = this.#flushing.then(async () => {
      for (const name of [...this.#dirty]) {
        const record = this.#peerRecords.get(name);
        this.#dirty.delete(name);
        if (!record || this.#closed) continue;
        try {
          await super.put(record.key, record.value);
        } catch {
          // Tried again at the next write-back; the record in memory stays the one libp2p reads.
          if (!this.#dirty.has(name) && this.#peerRecords.get(name) === record) this.#dirty.add(name);
        }
      }
    });
    return this.#flushing;
  }
}

/** The key's name when it is a peer record of libp2p's peer store. */
function peerRecordName(key: Key): string | undefined {
  const name = key.toString();
  return name.startsWith(PEER_RECORD_PREFIX) ? name : undefined;
}

/** The datastore's names of the records directly under a folder prefix, in batches (ClosableFsDatastore.namesIn). */
export type FolderNames = (folderPrefix: string, signal?: AbortSignal) => AsyncIterable<readonly string[]>;

export interface NodeStore {
  readonly directory: string;
  readonly blockstore: WholeBlockFsBlockstore;
  readonly datastore: FsDatastore & { readonly namesIn: FolderNames };
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
