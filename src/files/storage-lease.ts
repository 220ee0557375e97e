// The storage lease (docs/notes/files-node.md A.4 rule 8): uploads and incoming copies hold it SHARED from their
// first block write until commit or rollback; the collector holds it EXCLUSIVELY for its release + deletion
// pass. Blocks an upload has written are not pinned until it commits, so a deletion pass running beside an
// upload would delete them ("unpinned") and corrupt the upload; the lease keeps the two apart. It is the state of
// the store's owner (actors/files/store.actor.ts), which grants holds in answer to messages.
//
// Writer preference without starvation: requests are served in arrival order. A shared request is granted at
// once only when nothing exclusive is held or waiting; once an exclusive request waits, later shared requests
// queue behind it (a queued collector blocks later intake, rule 8), and it is granted when the shared holders
// that came before it have released. When it releases, the shared requests queued behind it are granted
// together, up to the next exclusive request. So neither side waits for more than the work ahead of it.
//
// Pure: no I/O, no timers. Waits are abortable: an aborted wait leaves the queue (and may unblock the
// requests behind it) and rejects with the signal's reason.

/** Gives the lease back. Calling it again does nothing, so every cleanup path may call it. */
export type LeaseRelease = () => void;

export type LeaseMode = 'shared' | 'exclusive';

interface Waiter {
  readonly mode: LeaseMode;
  readonly grant: () => void;
}

/** Occupancy, for logs and tests. */
export interface LeaseState {
  readonly shared: number;
  readonly exclusive: boolean;
  readonly waitingShared: number;
  readonly waitingExclusive: number;
}


export class StorageLease {
  #shared = 0;
  #exclusive = false;
  readonly #queue: Waiter[] = [];

  /** Shared hold (uploads, copies): waits while the collector holds the lease or is waiting for it. */
  acquireShared(signal?: AbortSignal): Promise<LeaseRelease> {
    return this.#acquire('shared', signal);
  }

  /** Exclusive hold (the collector's pass): waits for every earlier holder and request. */
  acquireExclusive(signal?: AbortSignal): Promise<LeaseRelease> {
    return this.#acquire('exclusive', signal);
  }

  get state(): LeaseState {
    let waitingShared = 0;
    for (const waiter of this.#queue) if (waiter.mode === 'shared') waitingShared++;
    return { shared: this.#shared, exclusive: this.#exclusive, waitingShared, waitingExclusive: this.#queue.length - waitingShared };
  }

  #acquire(mode: LeaseMode, signal: AbortSignal | undefined): Promise<LeaseRelease> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    // Only an empty queue lets a request pass: anything waiting arrived first (FIFO, no overtaking).
    if (this.#queue.length === 0 && this.#canGrant(mode)) return Promise.resolve(this.#take(mode));
    return new Promise<LeaseRelease>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#queue.indexOf(waiter);
        if (index === -1) return;
        this.#queue.splice(index, 1);
        reject(abortReason(signal!));
        // A waiting exclusive request that gives up may have been the only thing holding shared ones back.
        this.#drain();
      };
      const waiter: Waiter = {
        mode,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#take(mode));
        },
      };
      this.#queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #canGrant(mode: LeaseMode): boolean {
    return mode === 'shared' ? !this.#exclusive : !this.#exclusive && this.#shared === 0;
  }

  /** Records the hold and returns its one-shot release. */
  #take(mode: LeaseMode): LeaseRelease {
    if (mode === 'shared') this.#shared++;
    else this.#exclusive = true;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (mode === 'shared') this.#shared--;
      else this.#exclusive = false;
      this.#drain();
    };
  }

  /** Grants waiting requests from the head of the queue for as long as the head can be granted. */
  #drain(): void {
    while (this.#queue.length > 0) {
      const head = this.#queue[0]!;
      if (!this.#canGrant(head.mode)) return;
      this.#queue.shift();
      head.grant();
    }
  }
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}
