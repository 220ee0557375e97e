// The clock every part of the runtime takes instead of the wall clock (docs/DESIGN.md rule 2). Its timer half is exactly
// XState's `Clock`, so the same object is passed to `createActor(…, { clock })`; tests use XState's SimulatedClock,
// which also has `now()`. Deadlines over it are here, so pure code (src/files/peering.ts) bounds its work on the
// clock its caller injects; the system clock and `sleep` too: every layer but machines/ takes them from here.

export interface Clock {
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, timeoutMs: number): unknown;
  clearTimeout(id: unknown): void;
}

/** The wall clock and Node's timers: what the process runs on outside tests. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return timer;
  },
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

/** What a deadline aborts with: the same as AbortSignal.timeout's reason, so callers tell a timeout apart the same way. */
export function timeoutReason(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

export interface Deadline {
  /** Aborts at the deadline (reason: timeoutReason()) or with the first of the given signals that aborts. */
  readonly signal: AbortSignal;
  /** True once the deadline itself passed (not when one of the given signals aborted). */
  readonly expired: boolean;
  /** The work ended (settled, failed or was aborted): cancels the timer and the listeners. Call it in a `finally`. */
  clear(): void;
}

/**
 * A deadline `ms` from now on `clock`, instead of AbortSignal.timeout on the wall clock, so tests with a
 * SimulatedClock drive it (docs/DESIGN.md rule 2).
 *
 * On the system clock the timer is referenced: it keeps the process alive until it fires or `clear()` runs. Work
 * bounded by a deadline may hold no handle of its own (a dial that never answers, a stub), and an unreferenced timer
 * then let the event loop end with the work neither done nor timed out. So every caller clears it in a `finally`.
 */
export function deadline(clock: Clock, ms: number, ...signals: AbortSignal[]): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = clock.setTimeout(() => {
    expired = true;
    controller.abort(timeoutReason());
  }, ms);
  const listeners: Array<() => void> = [];
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    listeners.push(() => signal.removeEventListener('abort', onAbort));
  }
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    clear() {
      clock.clearTimeout(timer);
      for (const remove of listeners.splice(0)) remove();
    },
  };
}

/** Resolves after `ms` on `clock`, or rejects when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clock.clearTimeout(id);
      reject(signal!.reason);
    };
    const id = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
