// Large JSON answers written in pieces (issue 30). A GC report at a million files lists ~900k retained CIDs, 56 MB of
// JSON: `JSON.stringify` built it as one string and the edge copied it into a Buffer, 281 MiB of heap at their peak
// (measured on 885k CIDs; 84 MiB in pieces), when the node's memory peaked. Here the body is serialized twice: once to
// count its bytes (both engines announce Content-Length), once while it is sent, 64 KiB at a time with the edge's
// backpressure; both let the event loop turn every few milliseconds. The output is byte for byte what
// `JSON.stringify(value)` gives for plain data.
//
// A packed list (src/packed-strings.ts) is counted and written from its bytes, with no JS string per entry, where each
// CID used to be made into a string, quoted, and gathered into a 64 KiB string, twice (count and write): on 920k CIDs
// the count went from 0.76–1.30 s to 0.50–0.56 s and the write from 0.84–1.06 s to 0.61–0.64 s (docs/scale.md).

import { setImmediate } from 'node:timers/promises';
import { PackedJsonValues, PackedStrings, type ByteSpan } from '../src/packed-strings.js';
import type { HttpReply } from './server.js';
import { endingWith } from './stream-end.js';

/** Bytes gathered before a piece is sent (the edge's large-body slices are of this order). */
const CHUNK_BYTES = 64 * 1024;

const objectPrototype = Object.prototype;

/**
 * An array, a packed list (of strings or JSON texts), or an object with the plain prototype and no `toJSON`: walked
 * here. Anything else is stringified whole.
 */
function walked(value: unknown): value is Record<string, unknown> | unknown[] | PackedStrings | PackedJsonValues {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value) || value instanceof PackedStrings || value instanceof PackedJsonValues) return true;
  const prototype = Object.getPrototypeOf(value);
  return (prototype === objectPrototype || prototype === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}

/**
 * What JSON.stringify writes for a value it does not walk, typed as it behaves: undefined for the ones it leaves out
 * (undefined, functions, symbols), which its TypeScript signature does not say.
 */
const whole = (value: unknown): string | undefined => JSON.stringify(value);

/** A packed list met in the value: its entries are strings to quote, or JSON texts already. */
interface PackedPiece {
  readonly list: PackedStrings;
  readonly quote: boolean;
}

/** The text of `JSON.stringify(value)`, in pieces, in order; a packed list as itself, for its bytes to be copied. */
function* jsonPieces(value: unknown, path: Set<object>): Generator<string | PackedPiece> {
  if (!walked(value)) {
    const text = whole(value);
    if (text === undefined) throw new TypeError('jsonPieces: the value has no JSON form');
    yield text;
    return;
  }
  if (value instanceof PackedStrings) {
    yield { list: value, quote: true };
    return;
  }
  if (value instanceof PackedJsonValues) {
    yield { list: value.texts, quote: false };
    return;
  }
  // JSON.stringify refuses a cycle; so does this walk (a plain recursion would overflow the stack instead).
  if (path.has(value)) throw new TypeError('jsonPieces: a cyclic structure has no JSON form');
  path.add(value);
  if (Array.isArray(value)) {
    yield '[';
    for (let index = 0; index < value.length; index++) {
      const item = value[index];
      const separator = index === 0 ? '' : ',';
      if (walked(item)) {
        if (separator) yield separator;
        yield* jsonPieces(item, path);
      } else {
        // A member JSON.stringify leaves out of an object is `null` in an array.
        yield separator + (whole(item) ?? 'null');
      }
    }
    yield ']';
  } else {
    let first = true;
    for (const key of Object.keys(value)) {
      const member = value[key];
      const nested = walked(member);
      const text = nested ? undefined : whole(member);
      if (!nested && text === undefined) continue; // left out, as JSON.stringify leaves out undefined and functions
      const head = `${first ? '{' : ','}${JSON.stringify(key)}:`;
      first = false;
      if (nested) {
        yield head;
        yield* jsonPieces(member, path);
      } else yield head + text;
    }
    yield first ? '{}' : '}';
  }
  path.delete(value);
}

/**
 * The bytes of a packed entry's JSON when they are its own bytes, quoted if `quote`: always for a list whose strings
 * need no escape (`jsonPlain`: CIDs), else when this one has no `"`, `\\` or control character. Undefined otherwise:
 * such an entry goes through JSON.stringify.
 */
function copiedLength(span: Readonly<ByteSpan>, quote: boolean, plain: boolean): number | undefined {
  const { page, start, end } = span;
  if (!quote) return end - start;
  if (!plain) {
    for (let at = start; at < end; at++) {
      const byte = page[at]!;
      if (byte < 0x20 || byte === 0x22 || byte === 0x5c) return undefined;
    }
  }
  return end - start + 2;
}

/** An entry's JSON made the slow way (it has characters to escape). */
const entryJson = (span: Readonly<ByteSpan>, quote: boolean): string => {
  const text = span.text ?? span.page.toString('utf8', span.start, span.end);
  return quote ? JSON.stringify(text) : text;
};

/**
 * Bytes counted or sent between two turns of the event loop (a few ms of work). A GC report at a million files
 * takes ~0.7 s to count and as long to send; a client that reads as fast as it is written (loopback) never pushes
 * back, so without these turns either pass held every other request of the node for all that time.
 */
const TURN_BYTES = 256 * 1024;

/** The bytes `JSON.stringify(value)` would take in UTF-8, counted without building it, letting the event loop turn. */
export async function jsonByteLength(value: unknown): Promise<number> {
  let bytes = 0;
  let sinceTurn = 0;
  for (const piece of jsonPieces(value, new Set())) {
    if (typeof piece === 'string') {
      bytes += Buffer.byteLength(piece);
      sinceTurn += piece.length;
    } else {
      // A packed list: `[` or `,` before each entry, `]` after them all (`[]` for none).
      const { list, quote } = piece;
      const plain = list.jsonPlain;
      let entries = 0;
      for (const span of list.spans()) {
        const entry = 1 + (copiedLength(span, quote, plain) ?? Buffer.byteLength(entryJson(span, quote)));
        entries++;
        bytes += entry;
        sinceTurn += entry;
        if (sinceTurn >= TURN_BYTES) {
          sinceTurn = 0;
          await setImmediate();
        }
      }
      bytes += entries === 0 ? 2 : 1;
    }
    if (sinceTurn >= TURN_BYTES) {
      sinceTurn = 0;
      await setImmediate();
    }
  }
  return bytes;
}

/** `JSON.stringify(value)` as UTF-8 chunks of about `chunkBytes` bytes each (a piece larger than that alone). */
export async function* jsonChunks(value: unknown, chunkBytes = CHUNK_BYTES): AsyncGenerator<Uint8Array> {
  let chunk = Buffer.allocUnsafe(chunkBytes);
  let used = 0;
  let sinceTurn = 0;
  /**
   * Makes room for `bytes` more: the chunk as it stands goes out (a new one is made, as the edge may hold a chunk
   * until the client has taken it) when they would not fit, and the event loop gets a turn every TURN_BYTES.
   */
  async function* room(bytes: number): AsyncGenerator<Uint8Array> {
    if (used === 0 || used + bytes <= chunkBytes) return;
    yield chunk.subarray(0, used);
    sinceTurn += used;
    chunk = Buffer.allocUnsafe(chunkBytes);
    used = 0;
    if (sinceTurn >= TURN_BYTES) {
      sinceTurn = 0;
      await setImmediate();
    }
  }
  /** `bytes` that do not fit in a chunk at all: out on their own, after the chunk before them. */
  async function* alone(bytes: Buffer): AsyncGenerator<Uint8Array> {
    yield* room(chunkBytes + 1);
    yield bytes;
    sinceTurn += bytes.length;
  }
  async function* text(piece: string): AsyncGenerator<Uint8Array> {
    const bytes = Buffer.byteLength(piece);
    if (bytes > chunkBytes) yield* alone(Buffer.from(piece));
    else {
      yield* room(bytes);
      used += chunk.write(piece, used);
    }
  }
  for (const piece of jsonPieces(value, new Set())) {
    if (typeof piece === 'string') {
      yield* text(piece);
      continue;
    }
    // A packed list: `[` or `,` and each entry's bytes copied into the chunk, `]` after them all.
    let separator = 0x5b;
    const plain = piece.list.jsonPlain;
    for (const span of piece.list.spans()) {
      const copied = copiedLength(span, piece.quote, plain);
      if (copied === undefined) yield* text(String.fromCharCode(separator) + entryJson(span, piece.quote));
      else if (1 + copied > chunkBytes) yield* alone(Buffer.concat([Buffer.of(separator), quoted(span, piece.quote)]));
      else {
        // Only a full chunk costs a step of the generator: an entry that fits is copied in place.
        if (used + 1 + copied > chunkBytes) yield* room(1 + copied);
        chunk[used++] = separator;
        if (piece.quote) chunk[used++] = 0x22;
        used += span.page.copy(chunk, used, span.start, span.end);
        if (piece.quote) chunk[used++] = 0x22;
      }
      separator = 0x2c;
    }
    yield* text(separator === 0x5b ? '[]' : ']');
  }
  if (used > 0) yield chunk.subarray(0, used);
}

/** An entry's bytes, quoted if `quote`, as a Buffer of its own (an entry larger than a chunk). */
function quoted(span: Readonly<ByteSpan>, quote: boolean): Buffer {
  const bytes = span.page.subarray(span.start, span.end);
  return quote ? Buffer.concat([Buffer.of(0x22), bytes, Buffer.of(0x22)]) : Buffer.from(bytes);
}

/**
 * A JSON answer streamed in pieces (see the top of this file): for bodies that grow with the data. `ended` is called
 * once the edge is done with the body: written whole, cut off, or the client gone (the edge ends every stream it
 * started with `return`); never for an answer the edge did not start to write (the client was gone before it).
 */
export async function streamedJson(status: number, value: unknown, headers: Readonly<Record<string, string>>, ended?: () => void): Promise<HttpReply> {
  const length = await jsonByteLength(value);
  const chunks = jsonChunks(value);
  return { status, headers, stream: { length, chunks: ended === undefined ? chunks : endingWith(chunks, ended) } };
}
