// Disk measurements of the store folder (notes B.5): the size of a directory tree and the free space of the
// filesystem it lives on. The blockstore's filesystem is measured, not `/` as the original did (notes A.9).

import { opendirSync, statSync, type Dir } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Directory entries handled between two yields to the event loop. The walk reads directories and stats files
 * synchronously, in slices: a store of a million small files holds a million block files and twice as many pin
 * entries, and the asynchronous calls (a promise and a thread-pool hop per file) cost about three times the CPU of
 * the system calls themselves (issue 30, measured here: 17 against 5.5 µs a stat; a scan of a 30,000-file store's
 * blockstore and datastore took 2.7–4.0 s of CPU one awaited stat at a time and 1.0 s this way, and the default
 * `diskUsageScanPeriod` runs one every 30 s). A slice of 1,000 blocks the loop for a few milliseconds.
 */
const ENTRIES_PER_SLICE = 1_000;

/**
 * Sum of the sizes of every regular file under `dir` (0 when it does not exist). Symlinks are not followed.
 * Directories are read as a stream (`opendirSync`), not as one array: the pin folder of a large store is one flat
 * directory with an entry per pin, a million entries at a million files. `signal` is checked between slices.
 */
export async function directoryBytes(dir: string, signal?: AbortSignal): Promise<number> {
  let total = 0;
  let budget = ENTRIES_PER_SLICE;
  const pending = [dir];
  while (pending.length > 0) {
    signal?.throwIfAborted();
    const current = pending.pop()!;
    let handle: Dir;
    try {
      handle = opendirSync(current);
    } catch (error) {
      // A directory removed while walking (GC deleting a shard) or never created counts as empty.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    try {
      for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
        const path = join(current, entry.name);
        if (entry.isDirectory()) pending.push(path);
        // A file deleted meanwhile (GC removing a block) counts 0.
        else if (entry.isFile()) total += statSync(path, { throwIfNoEntry: false })?.size ?? 0;
        if (--budget === 0) {
          budget = ENTRIES_PER_SLICE;
          await new Promise((resolve) => setImmediate(resolve));
          signal?.throwIfAborted();
        }
      }
    } finally {
      handle.closeSync();
    }
  }
  return total;
}

/** Bytes an unprivileged process may still write on the filesystem holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir, { bigint: true });
  return Number(stats.bavail * stats.bsize);
}
