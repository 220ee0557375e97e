// One injectable clock for machines, supervisors and actors (DESIGN.md rule 2).
// Its timer half is exactly XState's `Clock`, so the same object is passed to `createActor(…, { clock })`;
// tests use XState's SimulatedClock, which also has `now()`.

import type { Clock } from '../src/clock.js';

export type { Clock };

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return timer;
  },
  clearTimeout: (id) => clearTimeout(id as NodeJS.Timeout),
};

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

/** What a deadline aborts with: the same as AbortSignal.timeout's reason, so callers tell a timeout apart the same way. */
export function timeoutReason(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}

export interface Deadline {
  /** Aborts at the deadline (reason: timeoutReason()) or with the first of the given signals that aborts. */
  readonly signal: AbortSignal;
  /** True once the deadline itself passed (not when one of the given signals aborted). */
  readonly expired: boolean;
  /** Done before the deadline: cancels the timer and the listeners. */
  clear(): void;
}

/**
 * A deadline `ms` from now on `clock`, instead of AbortSignal.timeout on the wall clock, so machine tests with a
 * SimulatedClock drive it (DESIGN.md rule 2). On the system clock its timer keeps no process alive.
 */
export function deadline(clock: Clock, ms: number, ...signals: AbortSignal[]): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = clock.setTimeout(() => {
    expired = true;
    controller.abort(timeoutReason());
  }, ms);
  (timer as { unref?: () => void } | undefined)?.unref?.();
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
