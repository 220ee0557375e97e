// The disk-usage walker thread (storage/files/disk-usage.ts says why the walk runs here). Each message
// `{ id, dir, cancel }` is one walk of the tree under `dir` with synchronous calls, directories read as streams
// (`opendirSync`: the pin folder of a large store is one flat folder with an entry per pin, never held as one
// array); the answer is `{ id, bytes }` or `{ id, error, code }`. `cancel` (an Int32Array over shared memory) set
// to 1 by the asker stops the walk at its next 1,000 entries, without an answer (the asker has rejected already).

import { opendirSync, statSync, type Dir } from 'node:fs';
import { join } from 'node:path';
import { parentPort } from 'node:worker_threads';

const ENTRIES_BETWEEN_CANCEL_CHECKS = 1_000;

class Cancelled extends Error {}

function treeBytes(root: string, cancel: Int32Array): number {
  let total = 0;
  let budget = ENTRIES_BETWEEN_CANCEL_CHECKS;
  const pending = [root];
  while (pending.length > 0) {
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
          budget = ENTRIES_BETWEEN_CANCEL_CHECKS;
          if (Atomics.load(cancel, 0) === 1) throw new Cancelled();
        }
      }
    } finally {
      handle.closeSync();
    }
  }
  return total;
}

parentPort!.on('message', ({ id, dir, cancel }: { id: number; dir: string; cancel: Int32Array }) => {
  try {
    parentPort!.postMessage({ id, bytes: treeBytes(dir, cancel) });
  } catch (error) {
    if (error instanceof Cancelled) return;
    parentPort!.postMessage({ id, error: (error as Error).message, code: (error as NodeJS.ErrnoException).code });
  }
});
