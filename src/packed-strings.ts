// A long list of short strings kept as UTF-8 bytes in a few large Buffers instead of one JS string each (issue 30).
// A GC run at a million files holds every pinned CID (~920k strings of 59 characters) from the registry pass until
// its report is written. As JS strings, with the arrays that carry them from the plan to the report, that was ~100 MiB
// of heap per run that lived long enough to be promoted, and the old generation kept three runs' worth before V8
// collected it (in-process, three runs in a row: RSS 52 → 475 MiB). Packed, the same list is 54 MiB outside the heap
// (counted as external memory, which makes V8 collect sooner), and the three runs peaked at 265 MiB.
//
// Each entry is a 4-byte little-endian byte length and the bytes; a page ends where the next entry would not fit, or
// at its end marker. The list is appended to while it is built and only read after: `without` and readers never see
// a page change. Only well-formed strings are taken: UTF-8 has no form for a lone surrogate, which would come back
// as U+FFFD (CIDs are ASCII).

/** Bytes of a page: large enough that the pages are few, small enough that the last one wastes little. */
export const PAGE_BYTES = 1 << 20;
const LENGTH_BYTES = 4;
/** Written after a page's last entry when there is room: no entry has this length (pages are smaller). */
const END_OF_PAGE = 0xffff_ffff;

export class PackedStrings implements Iterable<string> {
  readonly #pages: Buffer[] = [];
  #used = 0;
  #length = 0;
  /** Every string pushed so far is ASCII: read back as latin1, a copy of the bytes (UTF-8 decoding cost ~2x). */
  #ascii = true;
  /** Strings left out when iterating (`without`); their count is already taken from `length`. */
  #skipped: ReadonlySet<string> | undefined;
  #sealed = false;

  /** The strings of `strings`, in their order. */
  static from(strings: Iterable<string>): PackedStrings {
    const list = new PackedStrings();
    for (const text of strings) list.push(text);
    return list;
  }

  get length(): number {
    return this.#length;
  }

  push(text: string): void {
    if (this.#sealed) throw new Error('PackedStrings: a list read through without() no longer takes strings');
    const bytes = Buffer.byteLength(text);
    // As many UTF-8 bytes as characters: every character is ASCII (any other takes two bytes or more).
    const ascii = bytes === text.length;
    if (!ascii) {
      if (!(text as string & { isWellFormed(): boolean }).isWellFormed()) throw new TypeError('PackedStrings: a string with a lone surrogate has no UTF-8 form');
      this.#ascii = false;
    }
    let page = this.#pages[this.#pages.length - 1];
    if (page === undefined || this.#used + LENGTH_BYTES + bytes > page.length) {
      // allocUnsafeSlow: a page of its own, not a slice of Node's shared pool; every byte of it is written before read.
      page = Buffer.allocUnsafeSlow(Math.max(PAGE_BYTES, LENGTH_BYTES + bytes));
      this.#pages.push(page);
      this.#used = 0;
    }
    page.writeUInt32LE(bytes, this.#used);
    page.write(text, this.#used + LENGTH_BYTES, bytes, ascii ? 'latin1' : 'utf8');
    this.#used += LENGTH_BYTES + bytes;
    if (this.#used + LENGTH_BYTES <= page.length) page.writeUInt32LE(END_OF_PAGE, this.#used);
    this.#length++;
  }

  /**
   * The same list without the strings in `excluded`, sharing the pages (no copy): for a list of unique strings,
   * such as CIDs read by primary key; the list is read once to count what is left. Seals this list: pushing to it
   * afterwards would change the view.
   */
  without(excluded: ReadonlySet<string>): PackedStrings {
    this.#sealed = true;
    const view = new PackedStrings();
    view.#pages.push(...this.#pages);
    view.#ascii = this.#ascii;
    view.#sealed = true;
    const skipped = new Set([...(this.#skipped ?? []), ...excluded]);
    view.#skipped = skipped;
    for (const text of this) if (!skipped.has(text)) view.#length++;
    return view;
  }

  *[Symbol.iterator](): Generator<string> {
    const skipped = this.#skipped;
    const encoding = this.#ascii ? 'latin1' : 'utf8';
    for (const page of this.#pages) {
      let offset = 0;
      while (offset + LENGTH_BYTES <= page.length) {
        const bytes = page.readUInt32LE(offset);
        if (bytes === END_OF_PAGE) break;
        const text = page.toString(encoding, offset + LENGTH_BYTES, offset + LENGTH_BYTES + bytes);
        offset += LENGTH_BYTES + bytes;
        if (skipped === undefined || !skipped.has(text)) yield text;
      }
    }
  }

  /** As an array: `JSON.stringify` writes the list as it would write the array (http/json-body.ts streams it instead). */
  toJSON(): string[] {
    return [...this];
  }
}

/**
 * A long list of JSON values kept as their JSON texts in a PackedStrings: for a list of small objects (an operator's
 * pin list at a million pins) where a JS object each would be some hundreds of bytes of heap. Takes plain data only:
 * what `JSON.stringify` writes for a value is what the list gives back.
 */
export class PackedJsonValues {
  readonly texts = new PackedStrings();

  get length(): number {
    return this.texts.length;
  }

  push(value: unknown): void {
    const text = JSON.stringify(value);
    // An array writes what JSON leaves out (undefined, a function) as null: so does this list.
    this.texts.push(text ?? 'null');
  }

  /** The values, parsed back: `JSON.stringify` writes the list as the array of them (http/json-body.ts streams the texts). */
  toJSON(): unknown[] {
    return [...this.texts].map((text) => JSON.parse(text) as unknown);
  }
}
