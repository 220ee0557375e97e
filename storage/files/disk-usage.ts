// Disk measurements of the store folder (notes B.5): the size of a directory tree and the free space of the
// filesystem it lives on. The blockstore's filesystem is measured, not `/` as the original did (notes A.9).

import { statfs } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

interface WalkAnswer {
  readonly id: number;
  readonly bytes?: number;
  readonly error?: string;
  readonly code?: string;
}

interface Walker {
  readonly lane: WalkLane;
  readonly worker: Worker;
  readonly pending: Map<number, { resolve(bytes: number): void; reject(error: Error): void }>;
  /** Set while no walk is pending: ends the thread unless a walk comes first. */
  linger?: NodeJS.Timeout;
}

/**
 * The walker threads: one per lane (WalkLane) and process, started by a walk and ended WALKER_LINGER_MS after the
 * lane's last pending walk answered. A live walker costs the node ~12 MiB of memory (its own V8 isolate; a fresh node,
 * idle after its first scan: RSS 166-168 MiB without the thread against 178-184 MiB with it), and scans are seconds
 * apart (the disk actor's `diskUsageScanPeriod`, 30 s by default), while a start costs ~0.1 s of CPU: the two walks of
 * one measurement share one thread. A lane's walks run one after the other; the collector has a lane of its own
 * because at a million files a scan's two walks take ~35 s, and a GC run queued behind them took 36 s where it takes
 * 16 s alone (issue 30). A thread holds the process open only while a walk is pending. A thread that dies fails the
 * walks it had; the next walk starts a new one.
 */
export const WALKER_LINGER_MS = 2_000;

/** Who walks: the disk-usage scan (`scan`) or the garbage collector's measurement (`gc`). */
export type WalkLane = 'scan' | 'gc';

const walkers = new Map<WalkLane, Walker>();
let lastWalkId = 0;

function walkerThread(lane: WalkLane): Walker {
  const running = walkers.get(lane);
  if (running) return running;
  const worker = new Worker(new URL('./disk-usage.worker.js', import.meta.url));
  const pending: Walker['pending'] = new Map();
  const current: Walker = { lane, worker, pending };
  const failAll = (error: Error) => {
    if (walkers.get(lane) === current) walkers.delete(lane);
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  };
  worker.on('message', (answer: WalkAnswer) => {
    const waiting = pending.get(answer.id);
    pending.delete(answer.id);
    idleWhenDone(current);
    if (!waiting) return;
    if (typeof answer.bytes === 'number') waiting.resolve(answer.bytes);
    else waiting.reject(Object.assign(new Error(answer.error ?? 'disk-usage walk failed'), { code: answer.code }));
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the disk-usage walker thread exited (${code})`)));
  walkers.set(lane, current);
  return current;
}

/** Whether the lane's walker thread is running (tests). */
export function walkerRunning(lane: WalkLane = 'scan'): boolean {
  return walkers.has(lane);
}

/** No walk pending: let the process exit, and end the thread if no walk comes within WALKER_LINGER_MS. */
function idleWhenDone(current: Walker): void {
  if (current.pending.size > 0) return;
  current.worker.unref();
  clearTimeout(current.linger);
  current.linger = setTimeout(() => {
    if (current.pending.size > 0) return;
    if (walkers.get(current.lane) === current) walkers.delete(current.lane);
    void current.worker.terminate();
  }, WALKER_LINGER_MS).unref();
}

/**
 * Sum of the sizes of every regular file under `dir` (0 when it does not exist). Symlinks are not followed.
 *
 * The walk runs on a walker thread with synchronous calls (storage/files/disk-usage.worker.ts). A store of a
 * million small files holds about three million files (blocks, pin and pinned-block records); on the main thread
 * one awaited `stat` per file (a promise and a thread-pool hop each) cost three times the system call (issue 30:
 * ~70 against ~23 µs of CPU a file, measured here on a 14,000-file store; 15.6 s of CPU at 100k files). On the
 * walker thread the calls are cheap and the main thread never runs them (a walk that stat'ed synchronously in slices
 * on the main thread was tried first; the upload slowdown it was reverted for turned out to be this machine's
 * variance, README "Scale").
 *
 * An aborted `signal` rejects with its reason at once (never a partial size) and stops the walk at its next 1,000
 * entries. `lane` picks the walker thread (WalkLane).
 */
export function directoryBytes(dir: string, signal?: AbortSignal, lane: WalkLane = 'scan'): Promise<number> {
  signal?.throwIfAborted();
  const current = walkerThread(lane);
  const { worker, pending } = current;
  clearTimeout(current.linger);
  const id = ++lastWalkId;
  const cancel = new Int32Array(new SharedArrayBuffer(4));
  return new Promise<number>((resolve, reject) => {
    const onAbort = () => {
      Atomics.store(cancel, 0, 1);
      pending.delete(id);
      idleWhenDone(current);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    pending.set(id, {
      resolve: (bytes) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(bytes);
      },
      reject: (error) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      },
    });
    worker.ref();
    worker.postMessage({ id, dir, cancel });
  });
}

/** Bytes an unprivileged process may still write on the filesystem holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const stats = await statfs(dir, { bigint: true });
  return Number(stats.bavail * stats.bsize);
}
