// Disk measurements of the store folder (notes B.5): the size of a directory tree and the free space of the
// filesystem it lives on. The blockstore's filesystem is measured, not `/` as the original did (notes A.9).

import { readdir, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Sum of the sizes of every regular file under `dir` (0 when it does not exist). Symlinks are not followed.
 * One awaited `stat` per file. A version that streamed directories and stat'ed synchronously in slices of 1,000
 * (issue 30: a third of the CPU per file in-process) doubled the node's CPU per MiB uploaded in the files bench
 * (8 → 17 ms/MiB, measured against this version on a quiet machine) for a reason not yet found; it was reverted.
 */
export async function directoryBytes(dir: string, signal?: AbortSignal): Promise<number> {
  let total = 0;
  const pending = [dir];
  while (pending.length > 0) {
    signal?.throwIfAborted();
    const current = pending.pop()!;
    let entries;
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch (error) {
      // A directory removed while walking (GC deleting a shard) or never created counts as empty.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) {
        try {
          total += (await stat(path)).size;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
        // A stop in the middle of a large folder ends the walk there, rather than answering a partial size.
        signal?.throwIfAborted();
      }
    }
  }
  return total;
}

/** Bytes an unprivileged process may still write on the filesystem holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir, { bigint: true });
  return Number(stats.bavail * stats.bsize);
}
