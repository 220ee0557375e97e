// Work about one key (a CID) run one piece after another, never interleaved; different keys run side by side.
// A piece that fails does not stop the ones queued behind it. An idle key holds no memory.

export class KeyedQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const run = (this.#tails.get(key) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => {});
    this.#tails.set(key, settled);
    void settled.then(() => {
      if (this.#tails.get(key) === settled) this.#tails.delete(key);
    });
    return run;
  }
}
