// The client address a request is counted under (docs/specs/files-node.md §5 last paragraph, §8; notes A.9, A.10):
// rate limits and the per-client download limit key on it. Pure: text in, text out.
//
// Proxy trust is exact. `trustProxy` lists proxy addresses and CIDR ranges (IPv4 and IPv6); an empty list
// trusts nothing, so behind a proxy every client shares the proxy's bucket until the operator names the
// proxy (spec §5). When the socket peer is trusted, `X-Forwarded-For` is walked from the right, because the
// right end is what the nearest proxy appended and the left end is whatever the client chose to send:
// trusted hops are skipped, the first untrusted address is the client. When every entry is trusted, the
// leftmost one is the client (the same answer as Express's proxy-addr, which the original used).
//
// Decisions:
// - A malformed entry (not an address, an empty list item, a name) stops the walk, and the last address
//   that was reached is the key: the socket peer or the trusted hop right of the bad entry. That hop did
//   not vouch for anything readable, so its bucket is the honest one; using the bad text as the key would
//   let a client behind a trusted range mint a fresh bucket per request.
// - Entries may carry a port the way some proxies write them (`203.0.113.7:51234`, `[2001:db8::1]:443`);
//   the port is dropped. An IPv6 zone (`fe80::1%eth0`) is dropped too: the zone names an interface of the
//   proxy, not a different client.
// - Addresses are normalized before they are compared or used as keys: IPv4-mapped IPv6 (`::ffff:a.b.c.d`,
//   and uWS's expanded `0000:…:ffff:7f00:0001` from a dual-stack listener) becomes IPv4; other IPv6
//   addresses take their RFC 5952 text (lower case, zeros compressed), so one client never gets two buckets
//   from two spellings. An IPv4 address also matches IPv6 ranges that contain its mapped form.
// - IPv6 clients are keyed on the full address, as the spec says ("keys on the client address"); a host
//   that owns a whole /64 can rotate addresses, which an operator limits at the proxy.
// - `X-Forwarded-For` is the only forwarding header read; RFC 7239 `Forwarded` is ignored (the original
//   read only X-Forwarded-For).

/** A parsed address: 4 or 16 bytes. IPv4-mapped IPv6 is always returned as IPv4. */
interface Address {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

interface Range extends Address {
  readonly prefix: number;
}

// ---------------------------------------------------------------------------------------------
// Parsing

const IPV4_OCTET = /^(?:0|[1-9]\d{0,2})$/;

/** Dotted quad; leading zeros are refused (some parsers read them as octal, so they are ambiguous). */
function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!IPV4_OCTET.test(part)) return undefined;
    const value = Number(part);
    if (value > 255) return undefined;
    bytes[i] = value;
  }
  return bytes;
}

const IPV6_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** RFC 4291 text forms: full, `::`-compressed, with a trailing dotted quad. */
function parseIpv6(text: string): Uint8Array | undefined {
  if (text.length === 0 || text.length > 45) return undefined;
  const double = text.indexOf('::');
  if (double !== -1 && text.indexOf('::', double + 1) !== -1) return undefined;
  const head = double === -1 ? text : text.slice(0, double);
  const tail = double === -1 ? '' : text.slice(double + 2);
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const words: number[] = [];
  const groups = [...headGroups, ...tailGroups];
  // A dotted quad may only end the address, and counts as two groups.
  const last = groups[groups.length - 1];
  let embedded: Uint8Array | undefined;
  if (last !== undefined && last.includes('.')) {
    // Before a `::` it would not end the address (`1.2.3.4::`).
    if (tailGroups.length === 0 && double !== -1) return undefined;
    embedded = parseIpv4(last);
    if (!embedded) return undefined;
    groups.pop();
    if (tailGroups.length > 0) tailGroups.pop();
    else headGroups.pop();
  }
  for (const group of groups) if (!IPV6_GROUP.test(group)) return undefined;
  const explicit = groups.length + (embedded ? 2 : 0);
  if (double === -1 ? explicit !== 8 : explicit > 7) return undefined;
  for (const group of headGroups) words.push(parseInt(group, 16));
  for (let i = 0; i < 8 - explicit; i++) words.push(0);
  for (const group of tailGroups) words.push(parseInt(group, 16));
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[i * 2] = word >> 8;
    bytes[i * 2 + 1] = word & 0xff;
  });
  if (embedded) bytes.set(embedded, 12);
  return bytes;
}

/** `::ffff:0:0/96` holds IPv4 addresses as seen by an IPv6 socket. */
function isIpv4Mapped(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/** A bare address (no port, no brackets); a zone suffix is dropped. */
function parseBare(text: string): Address | undefined {
  if (text.includes(':')) {
    const zone = text.indexOf('%');
    const bytes = parseIpv6(zone === -1 ? text : text.slice(0, zone));
    if (!bytes) return undefined;
    return isIpv4Mapped(bytes) ? { family: 4, bytes: bytes.slice(12) } : { family: 6, bytes };
  }
  const bytes = parseIpv4(text);
  return bytes ? { family: 4, bytes } : undefined;
}

const PORT = /^\d{1,5}$/;

/** One `X-Forwarded-For` item: a bare address, `[v6]`, `[v6]:port` or `v4:port`. */
function parseForwarded(item: string): Address | undefined {
  if (item.startsWith('[')) {
    const close = item.indexOf(']');
    if (close === -1) return undefined;
    const rest = item.slice(close + 1);
    if (rest !== '' && !(rest.startsWith(':') && PORT.test(rest.slice(1)))) return undefined;
    const address = parseBare(item.slice(1, close));
    // Brackets only ever hold IPv6 text (a mapped one included).
    return address && item.slice(1, close).includes(':') ? address : undefined;
  }
  const colon = item.indexOf(':');
  if (colon !== -1 && colon === item.lastIndexOf(':')) {
    // Exactly one colon: IPv4 with a port (IPv6 has at least two colons).
    return PORT.test(item.slice(colon + 1)) ? parseBare(item.slice(0, colon)) : undefined;
  }
  return parseBare(item);
}

// ---------------------------------------------------------------------------------------------
// Text forms

function formatIpv6(bytes: Uint8Array): string {
  const words: number[] = [];
  for (let i = 0; i < 16; i += 2) words.push((bytes[i]! << 8) | bytes[i + 1]!);
  // RFC 5952 §4.2: compress the longest run of two or more zero words, the first one on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (words[i] !== 0) {
      i++;
      continue;
    }
    let end = i;
    while (end < 8 && words[end] === 0) end++;
    if (end - i > bestLength) {
      bestStart = i;
      bestLength = end - i;
    }
    i = end;
  }
  const hex = words.map((word) => word.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

function format(address: Address): string {
  return address.family === 4 ? address.bytes.join('.') : formatIpv6(address.bytes);
}

/**
 * The canonical text of an address (IPv4-mapped → IPv4, IPv6 per RFC 5952), or undefined when `text` is not
 * a bare IP address.
 */
export function normalizeAddress(text: string): string | undefined {
  const address = parseBare(text.trim());
  return address ? format(address) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Trust

function parseRange(entry: string): Range | undefined {
  const slash = entry.indexOf('/');
  const address = parseBare(slash === -1 ? entry : entry.slice(0, slash));
  if (!address || entry.includes('%')) return undefined;
  const written = entry.includes(':') ? 128 : 32;
  let prefix = written;
  if (slash !== -1) {
    const text = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(text) || Number(text) > written) return undefined;
    prefix = Number(text);
  }
  // A mapped range written in IPv6 (`::ffff:10.0.0.0/104`) is the IPv4 range it holds.
  if (address.family === 4 && written === 128) {
    if (prefix < 96) {
      // Wider than the mapped block: keep it as the IPv6 range it is (mapped addresses match it below).
      const bytes = new Uint8Array(16);
      bytes[10] = 0xff;
      bytes[11] = 0xff;
      bytes.set(address.bytes, 12);
      return { family: 6, bytes, prefix };
    }
    prefix -= 96;
  }
  return { ...address, prefix };
}

/**
 * Why a `trustProxy` entry cannot be used, or undefined when it can. Refuses what would trust every client:
 * a /0 in either family, and `::ffff:0:0/96` (every IPv4 address, mapped).
 */
export function trustEntryProblem(entry: string): string | undefined {
  const range = parseRange(entry);
  if (!range) return 'must be an IP address or a CIDR range';
  if (range.prefix === 0) return 'covers every address and would trust every forwarded address';
  return undefined;
}

function inRange(range: Range, family: 4 | 6, bytes: Uint8Array): boolean {
  if (range.family !== family) return false;
  const whole = range.prefix >> 3;
  for (let i = 0; i < whole; i++) if (range.bytes[i] !== bytes[i]) return false;
  const bits = range.prefix & 7;
  if (bits === 0) return true;
  const mask = (0xff << (8 - bits)) & 0xff;
  return (range.bytes[whole]! & mask) === (bytes[whole]! & mask);
}

function matches(ranges: readonly Range[], address: Address): boolean {
  if (ranges.some((range) => inRange(range, address.family, address.bytes))) return true;
  if (address.family !== 4) return false;
  // An IPv4 client is also the mapped IPv6 address, for ranges written wider than ::ffff:0:0/96.
  const mapped = new Uint8Array(16);
  mapped[10] = 0xff;
  mapped[11] = 0xff;
  mapped.set(address.bytes, 12);
  return ranges.some((range) => inRange(range, 6, mapped));
}

/** Walk hard limit: far beyond any real proxy chain, and a bound on the work per request. */
const MAX_FORWARDED_HOPS = 32;

/** Compiled `trustProxy` entries, and the client walk over them. */
export class ProxyTrust {
  readonly #ranges: readonly Range[];

  /**
   * Compiles validated `trustProxy` entries (config-trust-proxy.ts already refuses names, `true` and /0). Throws on an
   * entry `trustEntryProblem` refuses: a listener must not start trusting every forwarded address.
   */
  constructor(entries: readonly string[]) {
    this.#ranges = entries.map((entry) => {
      const problem = trustEntryProblem(entry);
      if (problem !== undefined) throw new Error(`trustProxy entry '${entry}' ${problem}`);
      return parseRange(entry)!;
    });
  }

  /** No proxy is trusted: the socket address is always the client. */
  get empty(): boolean {
    return this.#ranges.length === 0;
  }

  /** Whether `address` (any text form) is a trusted proxy; anything that is not an address is not. */
  trusts(address: string): boolean {
    const parsed = parseBare(address);
    return parsed !== undefined && matches(this.#ranges, parsed);
  }

  /**
   * The key a request is counted under: the socket peer's address or, when the peer is a trusted proxy, the
   * first untrusted `X-Forwarded-For` address from the right (decisions at the top of this file). A socket
   * address that is not an IP address (never seen from uWS) is used as given, and never trusted.
   */
  clientOf(socketAddress: string, forwardedFor: string | undefined): string {
    const socket = parseBare(socketAddress);
    if (!socket) return socketAddress;
    if (this.empty || forwardedFor === undefined || !matches(this.#ranges, socket)) return format(socket);
    const items = forwardedFor.split(',');
    let client = socket;
    for (let i = items.length - 1, hops = 0; i >= 0 && hops < MAX_FORWARDED_HOPS; i--, hops++) {
      const address = parseForwarded(items[i]!.trim());
      if (!address) break;
      client = address;
      if (!matches(this.#ranges, address)) break;
    }
    return format(client);
  }
}
