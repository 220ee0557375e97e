// A root pin's datastore name to the CID text the registry is keyed by, without building a CID (issue 30).
//
// helia names each pin record after its CID in base36 (`/pin/k2cw…`), and the registry keys files by `cid.toString()`,
// the base32 text (`bafy…`) of the same CIDv1. The startup walk turns every pin name into that text: through
// multiformats (`CID.parse(name, base36).toString()`) it cost ~10 µs a pin on this machine, ~9 s of a start at a
// million pins, most of it in the generic base-x decoder and the base32 encoder. The two conversions below are the
// same arithmetic for the one shape the walk meets (a CIDv1 in base36), and answer undefined for anything else, which
// the caller then converts through multiformats.

const BASE36_PREFIX = 'k';
const BASE32_PREFIX = 'b';
const CID_V1 = 0x01;
const BASE32_ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';

const BASE36_VALUE = new Int8Array(128).fill(-1);
for (const [value, char] of [...'0123456789abcdefghijklmnopqrstuvwxyz'].entries()) BASE36_VALUE[char.charCodeAt(0)] = value;

/** Base36 digits folded into one multiply-add: 36^5 < 2^26, so limb × 36^5 + carry stays exact below 2^53. */
const DIGITS_PER_STEP = 5;
const LIMB = 2 ** 24;
const LIMB_BYTES = 3;
/** The longest text converted here: a CID with a 128-byte identity digest (the node's largest) is ~213 digits. */
const MAX_DIGITS = 256;
const limbs = new Float64Array(Math.ceil((MAX_DIGITS * Math.log2(36)) / 24) + 1);

/** The bytes of a base36 number text (no multibase prefix, lower case), or undefined for a character outside base36. */
function base36Bytes(text: string, from: number): Uint8Array | undefined {
  if (text.length - from > MAX_DIGITS) return undefined;
  // Little-endian limbs of 24 bits.
  let used = 1;
  limbs[0] = 0;
  for (let i = from; i < text.length; ) {
    let chunk = 0;
    let scale = 1;
    for (let k = 0; k < DIGITS_PER_STEP && i < text.length; k++, i++) {
      const code = text.charCodeAt(i);
      const digit = code < 128 ? BASE36_VALUE[code]! : -1;
      if (digit < 0) return undefined;
      chunk = chunk * 36 + digit;
      scale *= 36;
    }
    let carry = chunk;
    for (let j = 0; j < used; j++) {
      const value = limbs[j]! * scale + carry;
      carry = Math.floor(value / LIMB);
      limbs[j] = value - carry * LIMB;
    }
    while (carry > 0) {
      const next = Math.floor(carry / LIMB);
      limbs[used++] = carry - next * LIMB;
      carry = next;
    }
  }
  const byteAt = (index: number) => (limbs[Math.floor(index / LIMB_BYTES)]! / 2 ** ((index % LIMB_BYTES) * 8)) & 0xff;
  let length = used * LIMB_BYTES;
  while (length > 0 && byteAt(length - 1) === 0) length--;
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index++) bytes[length - 1 - index] = byteAt(index);
  return bytes;
}

/** RFC 4648 base32, lower case, no padding, behind the multibase prefix `b`. */
function base32Text(bytes: Uint8Array): string {
  let text = BASE32_PREFIX;
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      text += BASE32_ALPHABET[(value >>> bits) & 31];
    }
  }
  if (bits > 0) text += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return text;
}

/**
 * `CID.parse(name, base36).toString()` for a CIDv1 written in base36 (multibase `k`); undefined when `name` is not
 * that shape (another base, a leading zero byte, not version 1), for the caller to convert the slow way. The rest of
 * the CID (codec, multihash) is carried over unchecked: a name that is no valid CID gives a text no record has.
 */
export function base36CidV1ToText(name: string): string | undefined {
  if (!name.startsWith(BASE36_PREFIX)) return undefined;
  // base-x writes each leading zero byte as one '0'; a CIDv1 starts with 0x01, so a leading '0' is another shape.
  if (name.length < 2 || name[1] === '0') return undefined;
  const bytes = base36Bytes(name, BASE36_PREFIX.length);
  if (bytes === undefined || bytes[0] !== CID_V1) return undefined;
  return base32Text(bytes);
}
