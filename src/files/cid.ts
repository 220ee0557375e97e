// Which CIDs this node can ever serve (docs/specs/files-node.md §4: "an invalid CID answers 400"; issue 14).
//
// A CID can parse and still be one this node could never retrieve or read: blocks are verified against their
// multihash, so a hash function the node has no hasher for (blake2b-256, sha3-256, ...) can never be fetched, and
// files are read as UnixFS, which lives only in dag-pb and raw blocks. Such a request is the client's mistake (400),
// not a server failure (500) and not content still to be found (408).

import type { CID } from 'multiformats/cid';

/** Multicodec codes (https://github.com/multiformats/multicodec table). */
const CODEC_RAW = 0x55;
const CODEC_DAG_PB = 0x70;
const HASH_IDENTITY = 0x00;
const HASH_SHA2_256 = 0x12;
const HASH_SHA2_512 = 0x13;

/** The hashers helia verifies blocks with, and the digest length each produces. */
const DIGEST_BYTES: ReadonlyMap<number, number> = new Map([
  [HASH_SHA2_256, 32],
  [HASH_SHA2_512, 64],
]);

/** Inline (identity) content is bounded like a block: helia refuses larger identity digests. */
export const MAX_IDENTITY_DIGEST_BYTES = 128;

/** Why this node can never serve `cid`, or undefined when it may. */
export function unservableCidReason(cid: CID): string | undefined {
  if (cid.code !== CODEC_RAW && cid.code !== CODEC_DAG_PB) return 'codec';
  const { code, digest } = cid.multihash;
  if (code === HASH_IDENTITY) return digest.length <= MAX_IDENTITY_DIGEST_BYTES ? undefined : 'digest';
  const expected = DIGEST_BYTES.get(code);
  if (expected === undefined) return 'hash';
  return digest.length === expected ? undefined : 'digest';
}
