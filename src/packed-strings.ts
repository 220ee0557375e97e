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
//
// Pages can come from a PagePool and go back to it (`release`) once the list's last reader is done. V8 frees a dead
// Buffer only at a full collection, and forces one for external memory only after it has grown by 64 MiB: GC runs
// back to back at a million files each held the run before's 54 MiB of dead pages beside their own, and the node's
// RSS went from 258–283 MiB for one run to 316–341 MiB. A collector that reuses its pages holds one run's worth.

/** Bytes of a page: large enough that the pages are few, small enough that the last one wastes little. */
export const PAGE_BYTES = 1 << 20;
const LENGTH_BYTES = 4;
/** Written after a page's last entry when there is room: no entry has this length (pages are smaller). */
const END_OF_PAGE = 0xffff_ffff;

/** Where a list takes its pages and where it gives them back on `release`. */
export interface PageSource {
  /** A page of at least `bytes` bytes, its content undefined. */
  take(bytes: number): Buffer;
  /** Pages no list reads any more. */
  give(pages: readonly Buffer[]): void;
}

/**
 * Pages of PAGE_BYTES kept for the next list: a list released gives its pages back, the next list takes them before
 * any new page is made. It keeps at most as many as the last list given back had, so two lists alive at once (a slow
 * reader of one run's report while the next run fills its own) leave one list's worth, not two.
 */
export class PagePool implements PageSource {
  readonly #free: Buffer[] = [];

  /** Pages kept for reuse. */
  get size(): number {
    return this.#free.length;
  }

  take(bytes: number): Buffer {
    return (bytes <= PAGE_BYTES ? this.#free.pop() : undefined) ?? newPage(bytes);
  }

  give(pages: readonly Buffer[]): void {
    const reusable = pages.filter((page) => page.length === PAGE_BYTES);
    this.#free.push(...reusable);
    if (this.#free.length > reusable.length) this.#free.length = reusable.length;
  }
}

/** allocUnsafeSlow: a page of its own, not a slice of Node's shared pool; every byte of it is written before read. */
const newPage = (bytes: number): Buffer => Buffer.allocUnsafeSlow(Math.max(PAGE_BYTES, bytes));

/** Pages of lists that are not given back: made new, freed by V8. */
const NEW_PAGES: PageSource = { take: newPage, give: () => {} };

/** One string of a list: its UTF-8 bytes are `page[start, end)`; `text` when the walk decoded it anyway. */
export interface ByteSpan {
  page: Buffer;
  start: number;
  end: number;
  text: string | undefined;
}

const EMPTY_PAGE = Buffer.alloc(0);

/** The characters JSON.stringify escapes in a well-formed string. */
const JSON_ESCAPED = /["\\\u0000-\u001f]/;

/** The pages of a list and of its views (`without`), released together. */
interface PageSet {
  readonly pages: Buffer[];
  readonly source: PageSource;
  released: boolean;
}

export class PackedStrings implements Iterable<string> {
  #set: PageSet;
  #used = 0;
  /** Undefined for a view (`without`) not counted yet: counting reads every entry. */
  #length: number | undefined = 0;
  /** Every string pushed so far is ASCII: read back as latin1, a copy of the bytes (UTF-8 decoding cost ~2x). */
  #ascii = true;
  /** No string pushed so far has a character JSON escapes (`"`, `\\`, a control character): its JSON is its bytes, quoted. */
  #jsonPlain = true;
  /** Strings left out when iterating (`without`). */
  #skipped: ReadonlySet<string> | undefined;
  #sealed = false;

  /** An empty list whose pages come from `source` (made new by default). */
  constructor(source: PageSource = NEW_PAGES) {
    this.#set = { pages: [], source, released: false };
  }

  /** The strings of `strings`, in their order. */
  static from(strings: Iterable<string>, source?: PageSource): PackedStrings {
    const list = new PackedStrings(source);
    for (const text of strings) list.push(text);
    return list;
  }

  /** The number of strings; a view (`without`) counts its own on first use, reading every page (see `countInTurns`). */
  get length(): number {
    if (this.#length === undefined) {
      let count = 0;
      for (const page of this.#readablePages()) count += this.#keptOnPage(page);
      this.#length = count;
    }
    return this.#length;
  }

  /**
   * Counts a view's strings a page at a time, awaiting `turn` after each page: a view of ~920k CIDs takes ~0.4 s to
   * count, which in one piece would hold the event loop (a GC run's retained list at a million files). `length` is
   * then known.
   */
  async countInTurns(turn: () => Promise<unknown>): Promise<number> {
    if (this.#length !== undefined) return this.#length;
    let count = 0;
    // A copy of the page list, as in reading: a release between two pages must throw, not end the count early.
    for (const page of [...this.#readablePages()]) {
      count += this.#keptOnPage(page);
      await turn();
    }
    this.#length = count;
    return count;
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
    if (this.#jsonPlain && JSON_ESCAPED.test(text)) this.#jsonPlain = false;
    const pages = this.#readablePages();
    let page = pages[pages.length - 1];
    if (page === undefined || this.#used + LENGTH_BYTES + bytes > page.length) {
      page = this.#set.source.take(LENGTH_BYTES + bytes);
      pages.push(page);
      this.#used = 0;
    }
    page.writeUInt32LE(bytes, this.#used);
    page.write(text, this.#used + LENGTH_BYTES, bytes, ascii ? 'latin1' : 'utf8');
    this.#used += LENGTH_BYTES + bytes;
    if (this.#used + LENGTH_BYTES <= page.length) page.writeUInt32LE(END_OF_PAGE, this.#used);
    this.#length = this.length + 1; // a list that takes strings is never a view: its length is known
  }

  /**
   * The same list without the strings in `excluded`, sharing the pages (no copy): for a list of unique strings,
   * such as CIDs read by primary key. Its `length` is counted when first asked for. Seals this list: pushing to it
   * afterwards would change the view.
   */
  without(excluded: ReadonlySet<string>): PackedStrings {
    this.#sealed = true;
    const view = new PackedStrings();
    view.#set = this.#set;
    view.#ascii = this.#ascii;
    view.#jsonPlain = this.#jsonPlain;
    view.#sealed = true;
    view.#skipped = new Set([...(this.#skipped ?? []), ...excluded]);
    view.#length = undefined;
    return view;
  }

  /**
   * Gives the pages back to their source, for the list and every view of it: for the last reader, once it is done.
   * Reading any of them afterwards throws (a page may hold another list's strings by then). Once is enough; more is
   * nothing.
   */
  release(): void {
    const set = this.#set;
    if (set.released) return;
    set.released = true;
    set.source.give(set.pages.splice(0));
  }

  #readablePages(): Buffer[] {
    if (this.#set.released) throw new Error('PackedStrings: the list was released');
    return this.#set.pages;
  }

  #keptOnPage(page: Buffer): number {
    let count = 0;
    for (const _ of this.#keptSpans(page, { page, start: 0, end: 0, text: undefined })) count++;
    return count;
  }

  *[Symbol.iterator](): Generator<string> {
    const encoding = this.#ascii ? 'latin1' : 'utf8';
    for (const span of this.spans()) yield span.text ?? span.page.toString(encoding, span.start, span.end);
  }

  /**
   * True when no string of the list has a character JSON escapes: each one's JSON is its UTF-8 bytes between quotes
   * (JSON.stringify writes every other character as itself; the list holds only well-formed strings).
   */
  get jsonPlain(): boolean {
    return this.#jsonPlain;
  }

  /**
   * Where each kept string's UTF-8 bytes lie, in order, without making a string of it: for a writer that copies the
   * bytes (http/json-body.ts writes a GC report's ~920k CIDs so). A list that skips strings (`without`) must decode
   * each one to tell; that string is then given as `text`. The same span object moves along: read it before the
   * next step.
   */
  *spans(): Generator<Readonly<ByteSpan>> {
    const span: ByteSpan = { page: EMPTY_PAGE, start: 0, end: 0, text: undefined };
    // A copy of the page list: a release empties it, and the walk must see that rather than a shorter list.
    for (const page of [...this.#readablePages()]) yield* this.#keptSpans(page, span);
  }

  /**
   * The kept strings of a page, one at a time: each decoded string (a view's check) is garbage as soon as its
   * reader is done with it (a page decoded into an array kept 16k strings alive while a slow reader took them, long
   * enough for V8 to promote them: during GC runs at a million files the heap grew to 196 MiB instead of ~120).
   */
  *#keptSpans(page: Buffer, span: ByteSpan): Generator<ByteSpan> {
    const skipped = this.#skipped;
    const encoding = this.#ascii ? 'latin1' : 'utf8';
    const set = this.#set;
    span.page = page;
    let offset = 0;
    while (offset + LENGTH_BYTES <= page.length) {
      // Released while a reader was between two strings: the page may be another list's by now.
      if (set.released) throw new Error('PackedStrings: the list was released while it was read');
      const bytes = page.readUInt32LE(offset);
      if (bytes === END_OF_PAGE) break;
      span.start = offset + LENGTH_BYTES;
      span.end = span.start + bytes;
      offset = span.end;
      if (skipped === undefined) {
        span.text = undefined;
        yield span;
      } else {
        const text = page.toString(encoding, span.start, span.end);
        if (skipped.has(text)) continue;
        span.text = text;
        yield span;
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
