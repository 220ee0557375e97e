// One injectable clock for machines, supervisors and actors (DESIGN.md rule 2).
// Its timer half is exactly XState's `Clock`, so the same object is passed to `createActor(…, { clock })`;
// tests use XState's SimulatedClock, which also has `now()`. The clock itself, its deadlines and the system clock are
// in src/clock.ts; the runtime's `sleep` is here.

import type { Clock } from '../src/clock.js';

export type { Clock };
// Deadlines are pure over the Clock interface, so they live with it in src/ (pure code bounds its work with them too).
export { deadline, timeoutReason, type Deadline } from '../src/clock.js';

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
