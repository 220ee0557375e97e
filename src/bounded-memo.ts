// A memo of a pure function whose keys strangers choose (query strings, statement texts): at most `maxEntries`
// results, forgotten all at once when full (no per-entry bookkeeping on the hot path), and keys longer than
// `maxKeyLength` computed every time, so its memory stays bounded whatever is sent.

export class BoundedMemo<V> {
  readonly #entries = new Map<string, V>();

  constructor(
    private readonly compute: (key: string) => V,
    readonly maxEntries: number,
    private readonly maxKeyLength = Infinity,
  ) {}

  get(key: string): V {
    let value = this.#entries.get(key);
    if (value === undefined) {
      value = this.compute(key);
      if (key.length <= this.maxKeyLength) {
        if (this.#entries.size >= this.maxEntries) this.#entries.clear();
        this.#entries.set(key, value);
      }
    }
    return value;
  }
}
