// What work done for a caller needs of the caller's cancellation: whether it happened, why, and a way to be told.
// An AbortSignal is one; the HTTP edge hands its request handlers a lighter one (http/server.ts), because making an
// AbortController per request cost the console server, a proxy answering thousands of calls a second, about 5% of
// its CPU.
// onAbort (below) waits on any of them, one listener per AbortSignal however many exchanges share it.

export interface Cancellation {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A Cancellation that fires once, for its one owner to cancel; listeners are plain callbacks. */
export class CancellationSource implements Cancellation {
  aborted = false;
  reason: unknown = undefined;
  #listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    (this.#listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.#listeners;
    if (!listeners) return;
    const at = listeners.lastIndexOf(listener);
    if (at >= 0) listeners.splice(at, 1);
  }

  cancel(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.#listeners;
    this.#listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }
}

/**
 * What waits on each caller's AbortSignal. A JSON-RPC batch runs all its calls under the one cancellation of its HTTP
 * request, so one 'abort' listener per node call put 11 or more on an AbortSignal and Node printed
 * MaxListenersExceededWarning (a batch may hold 100 calls, a vote resolves up to 33 names). Each AbortSignal gets one
 * listener, added with its first waiting exchange and removed with its last; that listener runs the callbacks of the
 * exchanges still waiting. Other cancellations (the edge's) take any number of listeners as they are.
 */
const waiting = new WeakMap<AbortSignal, { readonly callbacks: Set<() => void>; readonly listener: () => void }>();

/** Runs `callback` when `cancellation` fires; the returned function cancels it. */
export function onAbort(cancellation: Cancellation, callback: () => void): () => void {
  if (cancellation.aborted) {
    // A fired cancellation fires no more events: the callback runs on its own, unless cancelled first.
    let live = true;
    queueMicrotask(() => live && callback());
    return () => void (live = false);
  }
  if (!(cancellation instanceof AbortSignal)) {
    const listener = () => callback();
    cancellation.addEventListener('abort', listener);
    return () => cancellation.removeEventListener('abort', listener);
  }
  const signal = cancellation;
  let entry = waiting.get(signal);
  if (!entry) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      waiting.delete(signal);
      for (const waiter of [...callbacks]) waiter();
    };
    entry = { callbacks, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { callbacks, listener } = entry;
  const wrapped = () => callback();
  callbacks.add(wrapped);
  return () => {
    if (!callbacks.delete(wrapped) || callbacks.size > 0 || waiting.get(signal)?.callbacks !== callbacks) return;
    waiting.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}

/**
 * `work`'s outcome, or a rejection with `signal`'s reason as soon as it fires, whichever comes first. For a library
 * call that takes the signal but may notice it late: helia's bitswap ended a want seconds after its signal fired when
 * the only peers that could answer were cut off (issue 29, seed 637360666: a download's 4 s discovery deadline
 * answered after 10 s, past its ask's timeout, so the client got a 500 instead of the 408). The work goes on
 * unawaited, with its signal fired; its late outcome is dropped. So only for reads: work that changes state (a pin
 * that fetches, actors/files/store.actor.ts) must be waited for, or its owner would decide on a state still moving.
 */
export function settledByAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  const dropLate = () => void work.catch(() => undefined);
  if (signal.aborted) {
    dropLate();
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      dropLate();
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A signal that aborts when any of its sources does, for work that ends: `release` stops listening to the sources. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  release(): void;
}

/**
 * `AbortSignal.any(sources)` for work under a long-lived signal (an owner's lifetime). Why not AbortSignal.any: Node
 * keeps a combined signal that has an 'abort' listener reachable from its sources for as long as they live, so one
 * per request under a lifetime signal never went away. 100,000 of them held ~120 MiB after full collections on Node
 * 20.20, 22.23 and 24.21 alike (measured; 1.2 KB a request for the files store's owner, its replication protocol and
 * the chain client). Here each source is waited on through `onAbort` (one listener per signal however many works
 * share it), and `release` stops waiting once the work has settled; the caller must release (in a `finally`).
 */
export function linkSignals(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const fired = sources.find((source) => source.aborted);
  if (fired) {
    controller.abort(fired.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const release = () => cancels.forEach((cancel) => cancel());
  const cancels = sources.map((source) =>
    onAbort(source, () => {
      controller.abort(source.reason);
      release();
    }),
  );
  return { signal: controller.signal, release };
}
