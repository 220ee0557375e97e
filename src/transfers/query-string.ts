// The raw query string → (key, value) pairs exactly as PostgREST reads it (http-types' parseQueryReplacePlus, notes
// B.1): pairs split on `&` and `;`, `+` is a space, `%XX` is a byte (a malformed escape stays literal), bytes are
// UTF-8. A key without `=` has no value (PostgREST then drops it); `key=` has the empty value. The canonical form
// (sorted keys, repeated keys joined by commas, PostgREST's urlEncodeVars) is what Content-Location carries (B.2).

export interface QueryPair {
  readonly key: string;
  /** undefined when the pair had no `=`. */
  readonly value: string | undefined;
}

const PAIR_SEPARATORS = /[&;]/;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x41 && code <= 0x46) return code - 0x41 + 10;
  if (code >= 0x61 && code <= 0x66) return code - 0x61 + 10;
  return -1;
}

/**
 * Percent-decoding on bytes (http-types' urlDecode), `+` → space unless `replacePlus` is false; invalid UTF-8 becomes
 * U+FFFD rather than failing the request.
 */
export function urlDecode(text: string, replacePlus = true): string {
  const source = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(source.length);
  let length = 0;
  for (let i = 0; i < source.length; i++) {
    const byte = source[i]!;
    if (byte === 0x2b && replacePlus) {
      out[length++] = 0x20;
    } else if (byte === 0x25 && i + 2 < source.length && hexValue(source[i + 1]!) >= 0 && hexValue(source[i + 2]!) >= 0) {
      out[length++] = hexValue(source[i + 1]!) * 16 + hexValue(source[i + 2]!);
      i += 2;
    } else {
      out[length++] = byte;
    }
  }
  return new TextDecoder('utf-8').decode(out.subarray(0, length));
}

/**
 * One path segment as PostgREST sees it (WAI's pathInfo, http-types' decodePathSegment): percent-decoded without
 * `+` → space, a malformed escape (`%zz`, a cut `%A`) kept literally, invalid UTF-8 (`%FF%FE`) as U+FFFD. It never
 * fails, so an undecodable path is not a client error of its own: `/%zz` is the relation `%zz`, and (being unknown)
 * a 404 PGRST205 naming it, exactly PostgREST's answer. JavaScript's decodeURIComponent throws on the same input.
 */
export function decodePathSegment(segment: string): string {
  return urlDecode(segment, false);
}

export function parseQueryString(raw: string): QueryPair[] {
  const text = raw.startsWith('?') ? raw.slice(1) : raw;
  if (text === '') return [];
  const pieces = text.split(PAIR_SEPARATORS);
  // http-types' breakDiscard loop: a trailing separator ends the list, an inner empty piece is a key-only pair.
  if (pieces[pieces.length - 1] === '') pieces.pop();
  return pieces.map((piece) => {
    const equals = piece.indexOf('=');
    return equals < 0
      ? { key: urlDecode(piece), value: undefined }
      : { key: urlDecode(piece.slice(0, equals)), value: urlDecode(piece.slice(equals + 1)) };
  });
}

/** Network.HTTP.Base.urlEncode over UTF-8 bytes: letters, digits and `-_.~` stay, the rest is `%XX` (upper case). */
function urlEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-_.~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The canonical query PostgREST puts in Content-Location: keys sorted (stably, by bytes), repeats comma-joined. */
export function canonicalQuery(pairs: readonly QueryPair[]): string {
  const sorted = pairs
    .map((pair, index) => ({ key: pair.key, bytes: Buffer.from(pair.key, 'utf8'), value: pair.value ?? '', index }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes) || a.index - b.index);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    const key = sorted[i]!.key;
    const values: string[] = [];
    // Sorted, so a key's repeats are adjacent.
    for (; i < sorted.length && sorted[i]!.key === key; i++) values.push(urlEncode(sorted[i]!.value));
    parts.push(`${urlEncode(key)}=${values.join(',')}`);
  }
  return parts.join('&');
}
