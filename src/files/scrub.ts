// The files service's log scrubber (docs/specs/files-node.md §6; docs/notes/files-node.md A.12): "messages pass a
// scrubber that replaces content identifiers, peer ids, multiaddrs and stack traces with fixed placeholders".
//
// Wiring into pino (done once, at logger construction):
//   formatters: { log: scrubLogObject }   // every logged object, before pino's serializers run
//   serializers: { msg: scrubValue }      // the message string, which `formatters.log` never sees
// `scrubValue` keeps an Error an Error (same prototype, scrubbed `message`/`stack`/own fields), so pino's
// `err` serializer still reports its `type`.
//
// Everything here is pure, precompiled once, and never throws.

import { isRecord } from '../is-record.js';

/** Placeholders (fixed strings, so log consumers can count them). */
export const SCRUB_PLACEHOLDERS = {
  cid: '<cid>',
  peerId: '<peer-id>',
  multiaddr: '<multiaddr>',
  stack: '<stack>',
} as const;

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
/** Identifier-like tokens must not be glued to other letters or digits. */
const START = '(?<![A-Za-z0-9])';
const END = '(?![A-Za-z0-9])';

// Multiaddr protocols (the multicodec table's names). Valued ones carry `/<value>`; flags stand alone.
const VALUED = [
  'ip4',
  'ip6',
  'ip6zone',
  'ipcidr',
  'dns',
  'dns4',
  'dns6',
  'dnsaddr',
  'tcp',
  'udp',
  'dccp',
  'sctp',
  'p2p',
  'ipfs',
  'sni',
  'certhash',
  'unix',
  'onion',
  'onion3',
  'garlic32',
  'garlic64',
  'http-path',
  'memory',
].join('|');
const FLAGS = [
  'p2p-circuit',
  'p2p-webrtc-star',
  'p2p-webrtc-direct',
  'p2p-websocket-star',
  'p2p-stardust',
  'quic-v1',
  'quic',
  'webrtc-direct',
  'webrtc',
  'webtransport',
  'wss',
  'ws',
  'tls',
  'noise',
  'https',
  'http',
  'utp',
  'udt',
].join('|');
/** A component value: anything up to the next `/`, whitespace or typical delimiter around a logged address. */
const VALUE = `[^\\s/"'<>,;()\\[\\]{}]+`;
const COMPONENT = `/(?:(?:${VALUED})/${VALUE}|(?:${FLAGS})(?![A-Za-z0-9-]))`;
/**
 * A multiaddr starts with an addressing protocol (or a relay hop), so ordinary paths such as `/api/file/x`
 * or a URL's `/ws` segment are left alone. `/ipfs/<cid>` content paths are not multiaddrs either: their CID
 * is scrubbed on its own.
 */
const FIRST = `/(?:(?:ip4|ip6|ip6zone|dns|dns4|dns6|dnsaddr|tcp|udp|p2p|unix|onion|onion3|garlic32|garlic64|memory)/${VALUE}|p2p-circuit(?![A-Za-z0-9-]))`;
const MULTIADDR = `${FIRST}(?:${COMPONENT})*`;

/** Stack frames: every consecutive `\n    at …` line, collapsed into one placeholder. */
const STACK = `(?:\\r?\\n[ \\t]+at [^\\r\\n]*)+`;

/** Ed25519 (`12D3KooW…`, 52 chars) and secp256k1 (`16Uiu2HA…`) peer ids; RSA ids are CIDv0-shaped (`Qm…`). */
const PEER_ID = `${START}(?:12D3KooW|16Uiu2HA)${BASE58}{40,}${END}`;

const CID = `${START}(?:${[
  `Qm${BASE58}{44}`, // CIDv0 (and RSA peer ids)
  'b[a-z2-7]{50,}', // CIDv1 base32 (bafy…, bafk…, bafz… peer ids)
  'B[A-Z2-7]{50,}', // CIDv1 base32 upper
  'CIQ[A-Z2-7]{40,}', // a sha2-256 multihash in base32 upper: blockstore-fs and datastore key names
  'k[0-9a-z]{50,}', // CIDv1 base36 (k51… libp2p keys, k2… pins keys)
  `z${BASE58}{45,}`, // CIDv1 base58btc (zb2…, zdj…)
].join('|')})${END}`;

/** One pass over the text; the alternation order is the priority (a multiaddr swallows its peer id). */
const PATTERN = new RegExp(`(${MULTIADDR})|(${STACK})|(${PEER_ID})|(?:${CID})`, 'g');

function replacer(_match: string, multiaddr: string | undefined, stack: string | undefined, peerId: string | undefined): string {
  if (multiaddr !== undefined) return SCRUB_PLACEHOLDERS.multiaddr;
  if (stack !== undefined) return `\n${SCRUB_PLACEHOLDERS.stack}`;
  if (peerId !== undefined) return SCRUB_PLACEHOLDERS.peerId;
  return SCRUB_PLACEHOLDERS.cid;
}

/** The shortest text that can hold any pattern (`/tcp/1` is 6). */
const MIN_LENGTH = 6;

/** Replaces CIDs, peer ids, multiaddrs and stack frames in `text` with fixed placeholders. */
export function scrubText(text: string): string {
  if (typeof text !== 'string' || text.length < MIN_LENGTH) return text;
  try {
    return text.replace(PATTERN, replacer);
  } catch {
    // Only an engine failure (e.g. out of memory on a huge string) lands here: drop the text, never leak it.
    return '<unscrubbable>';
  }
}

/** Objects nested deeper than this are replaced by a marker instead of being walked (and possibly leaking). */
export const SCRUB_MAX_DEPTH = 8;
const TRUNCATED = '[Truncated]';
const CIRCULAR = '[Circular]';
const UNREADABLE = '[Unreadable]';

type Seen = WeakSet<object>;

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as object | null;
  return proto === Object.prototype || proto === null;
}

function scrubArray(array: readonly unknown[], depth: number, seen: Seen): unknown[] {
  let copy: unknown[] | undefined;
  for (let index = 0; index < array.length; index++) {
    const before = array[index];
    const after = scrubInner(before, depth + 1, seen);
    if (after !== before) {
      copy ??= array.slice();
      copy[index] = after;
    }
  }
  return copy ?? (array as unknown[]);
}

/** Own enumerable string keys, as JSON.stringify (and pino) would write them. */
function scrubRecord(record: Record<string, unknown>, depth: number, seen: Seen): Record<string, unknown> {
  const keys = Object.keys(record);
  const values: unknown[] = new Array(keys.length);
  let changed = false;
  for (let index = 0; index < keys.length; index++) {
    let before: unknown;
    try {
      before = record[keys[index]!];
    } catch {
      // A throwing getter: its value is unknown, so it cannot be shown (and must not be read again).
      values[index] = UNREADABLE;
      changed = true;
      continue;
    }
    const after = scrubInner(before, depth + 1, seen);
    values[index] = after;
    if (after !== before) changed = true;
  }
  if (!changed) return record;
  // Rebuilt from the values read once (a spread would call getters again).
  // defineProperty, not assignment: a `__proto__` key (JSON.parse makes those) stays a plain field.
  const copy: Record<string, unknown> = {};
  for (let index = 0; index < keys.length; index++) {
    Object.defineProperty(copy, keys[index]!, { value: values[index], enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** A copy with the same prototype (so `err.constructor.name` still names the class) and scrubbed own fields. */
function scrubError(error: Error, depth: number, seen: Seen): Error {
  let changed = false;
  const descriptors: [string | symbol, PropertyDescriptor][] = [];
  for (const key of Reflect.ownKeys(error)) {
    const descriptor = Object.getOwnPropertyDescriptor(error, key);
    if (!descriptor) continue;
    let before: unknown;
    try {
      before = 'value' in descriptor ? descriptor.value : (error as unknown as Record<string | symbol, unknown>)[key];
    } catch {
      before = UNREADABLE;
    }
    const after = scrubInner(before, depth + 1, seen);
    if (after !== before || !('value' in descriptor)) changed = true;
    descriptors.push([key, { value: after, writable: true, configurable: true, enumerable: descriptor.enumerable ?? false }]);
  }
  if (!changed) return error;
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  for (const [key, descriptor] of descriptors) Object.defineProperty(copy, key, descriptor);
  return copy;
}

function scrubInner(value: unknown, depth: number, seen: Seen): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return value;
  if (depth >= SCRUB_MAX_DEPTH) return TRUNCATED;
  if (seen.has(value)) return CIRCULAR;
  seen.add(value);
  try {
    if (Array.isArray(value)) return scrubArray(value, depth, seen);
    if (value instanceof Error) return scrubError(value, depth, seen);
    if (isPlainObject(value)) return scrubRecord(value as Record<string, unknown>, depth, seen);
    // Class instances serialize through `toJSON` when they have one (CID → {"/": "bafy…"}, PeerId and
    // Multiaddr → strings): scrub what would be written.
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      const json: unknown = toJSON.call(value);
      const scrubbed = scrubInner(json, depth, seen);
      return scrubbed === json ? value : scrubbed;
    }
    // Other instances are written as their own enumerable fields; copy them only if something changes.
    return scrubRecord(value as Record<string, unknown>, depth, seen);
  } catch {
    return UNREADABLE;
  } finally {
    // Siblings may share an object legitimately; only an object inside itself is circular.
    seen.delete(value);
  }
}

/**
 * Applies `scrubText` to every string inside plain objects, arrays and errors (bounded depth, cycles marked).
 * Returns the same reference when nothing changed, a shallow-copied path otherwise; never mutates, never throws.
 */
export function scrubValue(value: unknown): unknown {
  try {
    return scrubInner(value, 0, new WeakSet());
  } catch {
    return UNREADABLE;
  }
}

/** pino `formatters.log` hook: a logged object in, a scrubbed object out. */
export function scrubLogObject(object: Record<string, unknown>): Record<string, unknown> {
  const scrubbed = scrubValue(object);
  return isRecord(scrubbed) ? scrubbed : { msg: scrubbed };
}
