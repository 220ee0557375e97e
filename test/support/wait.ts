// Bounded polling for tests that observe asynchronous effects (never an unbounded loop).

export async function waitFor<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, { timeoutMs = 5_000, intervalMs = 10, what = 'condition' } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A promise a test watches: whether it has settled yet, and its outcome awaited with a cap. */
export interface WatchedPromise<T> {
  readonly settled: boolean;
  /** The outcome; rejects naming `what` when the promise has not settled within `timeoutMs` of wall-clock time. */
  settle(timeoutMs?: number): Promise<T>;
}

/**
 * Watches `promise` for tests that drive a deadline with a SimulatedClock: before the clock is advanced it must not
 * have settled, and after it must settle promptly (the cap stays far below the deadline on the wall clock).
 */
export function watchPromise<T>(promise: Promise<T>, what: string): WatchedPromise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return {
    get settled() {
      return settled;
    },
    async settle(timeoutMs = 5_000) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not settle within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        return await Promise.race([promise, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
