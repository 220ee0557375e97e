// What work done for a caller needs of the caller's cancellation: whether it happened, why, and a way to be told.
// An AbortSignal is one; the HTTP edge hands its request handlers a lighter one (http/server.ts), because making an
// AbortController per request cost the console server, a proxy answering thousands of calls a second, about 5% of
// its CPU.

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
