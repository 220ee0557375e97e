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
