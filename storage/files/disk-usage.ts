// Disk measurements of the store folder (notes B.5): the size of a directory tree and the free space of the
// filesystem it lives on. The blockstore's filesystem is measured, not `/` as the original did (notes A.9).

import { readdir, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * stat() calls in flight at once. A store of a million small files holds a million block files and twice as many
 * pin entries; one stat at a time left libuv's other threads idle and took most of a minute per scan (issue 30).
 */
const STAT_CONCURRENCY = 64;

/** The size of a file, 0 when it went away meanwhile (GC deleting a block). */
async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
}

/** Sum of the sizes of every regular file under `dir` (0 when it does not exist). Symlinks are not followed. */
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
    const files: string[] = [];
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) files.push(path);
    }
    for (let first = 0; first < files.length; first += STAT_CONCURRENCY) {
      signal?.throwIfAborted();
      const sizes = await Promise.all(files.slice(first, first + STAT_CONCURRENCY).map(sizeOf));
      for (const size of sizes) total += size;
    }
  }
  return total;
}

/** Bytes an unprivileged process may still write on the filesystem holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir, { bigint: true });
  return Number(stats.bavail * stats.bsize);
}
