// Large JSON answers written in pieces (issue 30). A GC report at a million files lists ~900k retained CIDs, 56 MB of
// JSON: `JSON.stringify` built it as one string and the edge copied it into a Buffer, 281 MiB of heap at their peak
// (measured on 885k CIDs; 84 MiB in pieces), when the node's memory peaked. Here the body is serialized twice: once to
// count its bytes (both engines announce Content-Length), once while it is sent, 64 KiB at a time with the edge's
// backpressure; both let the event loop turn every few milliseconds. The output is byte for byte what
// `JSON.stringify(value)` gives for plain data.

import { setImmediate } from 'node:timers/promises';
import { PackedJsonValues, PackedStrings } from '../src/packed-strings.js';
import type { HttpReply } from './server.js';
import { endingWith } from './stream-end.js';

/** Characters gathered before a piece is sent (the edge's large-body slices are of this order). */
const CHUNK_CHARS = 64 * 1024;

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

/** The text of `JSON.stringify(value)`, in pieces, in order. */
function* jsonPieces(value: unknown, path: Set<object>): Generator<string> {
  if (!walked(value)) {
    const text = whole(value);
    if (text === undefined) throw new TypeError('jsonPieces: the value has no JSON form');
    yield text;
    return;
  }
  if (value instanceof PackedStrings) {
    yield* packedArray(value, true);
    return;
  }
  if (value instanceof PackedJsonValues) {
    yield* packedArray(value.texts, false);
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
 * A packed list as a JSON array, an entry at a time (its toJSON would build the whole array): strings `quote`d, or
 * texts that are JSON already.
 */
function* packedArray(texts: Iterable<string>, quote: boolean): Generator<string> {
  let separator = '[';
  for (const text of texts) {
    yield separator + (quote ? JSON.stringify(text) : text);
    separator = ',';
  }
  yield separator === '[' ? '[]' : ']';
}

/**
 * Characters counted or sent between two turns of the event loop (a few ms of work). A GC report at a million files
 * takes ~0.7 s to count and as long to send; a client that reads as fast as it is written (loopback) never pushes
 * back, so without these turns either pass held every other request of the node for all that time.
 */
const TURN_CHARS = 256 * 1024;

/** The bytes `JSON.stringify(value)` would take in UTF-8, counted without building it, letting the event loop turn. */
export async function jsonByteLength(value: unknown): Promise<number> {
  let bytes = 0;
  let sinceTurn = 0;
  for (const piece of jsonPieces(value, new Set())) {
    bytes += Buffer.byteLength(piece);
    sinceTurn += piece.length;
    if (sinceTurn >= TURN_CHARS) {
      sinceTurn = 0;
      await setImmediate();
    }
  }
  return bytes;
}

/** `JSON.stringify(value)` as UTF-8 chunks of about `chunkChars` characters each. */
export async function* jsonChunks(value: unknown, chunkChars = CHUNK_CHARS): AsyncGenerator<Uint8Array> {
  let gathered = '';
  let sinceTurn = 0;
  for (const piece of jsonPieces(value, new Set())) {
    gathered += piece;
    if (gathered.length >= chunkChars) {
      sinceTurn += gathered.length;
      yield Buffer.from(gathered);
      gathered = '';
      if (sinceTurn >= TURN_CHARS) {
        sinceTurn = 0;
        await setImmediate();
      }
    }
  }
  if (gathered.length > 0) yield Buffer.from(gathered);
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
