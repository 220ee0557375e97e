// ObjectId-format identifiers for registry entries (docs/notes/rates.md C.3; spec §2.3 `_id` is 24 hex).
// Layout of the BSON ObjectId: 4-byte big-endian seconds, 5 random bytes chosen once per process,
// 3-byte big-endian counter starting at a random value. Lowercase hex.

import { randomBytes } from 'node:crypto';

const MAX_UINT32 = 0xffff_ffff;
const COUNTER_MASK = 0xff_ffff;

/** The per-process random part, as in the MongoDB drivers. */
const PROCESS_UNIQUE = randomBytes(5);
let counter = randomBytes(3).readUIntBE(0, 3);

/** A fresh 24-hex id whose time part is `timeMs` (floored to seconds, clamped to 0..2^32-1). */
export function newObjectIdHex(timeMs: number): string {
  const seconds = Number.isFinite(timeMs) ? Math.min(MAX_UINT32, Math.max(0, Math.floor(timeMs / 1000))) : 0;
  counter = (counter + 1) & COUNTER_MASK;
  const bytes = Buffer.allocUnsafe(12);
  bytes.writeUInt32BE(seconds, 0);
  PROCESS_UNIQUE.copy(bytes, 4);
  bytes.writeUIntBE(counter, 9, 3);
  return bytes.toString('hex');
}

