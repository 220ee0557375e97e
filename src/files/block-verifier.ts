// What a replica accepts from a block stream (src/files/block-frames.ts), pure: only blocks of the DAG it asked for,
// each proven by its hash before anyone writes it.
//
// A block is expected when it is the root or a link of a block already accepted (decoded with its codec, as the DAG
// walk does: storage/files/dag-walk.ts); it must arrive once, and its bytes must hash to its CID's multihash. The
// pull is complete when every expected block has arrived. The sender walks the DAG breadth first and sends a block
// only after its parent, so a well-behaved peer never sends a block before it is expected.

import { createHash } from 'node:crypto';
import { CID } from 'multiformats/cid';

/** sha2-256, the hash of every CID our importer (and the original's) makes. */
const SHA2_256 = 0x12;
const SHA2_256_BYTES = 32;
/** An identity CID carries its block in itself: nothing to fetch (helia's blockstore answers it from the CID). */
const IDENTITY = 0x00;

/** A block that is not one the replica asked for, or whose bytes are not the CID's. */
export class UnverifiedBlockError extends Error {
  static readonly NAME = 'UnverifiedBlockError';
  override readonly name = UnverifiedBlockError.NAME;
}

/** A DAG with a link whose hash this replica does not check itself (bitswap's hashers do: the caller falls back). */
export class UnsupportedHashError extends Error {
  static readonly NAME = 'UnsupportedHashError';
  override readonly name = UnsupportedHashError.NAME;
}

/** The links of a verified block (its codec decides; a raw block has none). */
export type LinksOf = (cid: CID, bytes: Uint8Array) => Iterable<CID> | Promise<Iterable<CID>>;

const keyOf = (cidBytes: Uint8Array): string => Buffer.from(cidBytes.buffer, cidBytes.byteOffset, cidBytes.byteLength).toString('latin1');

export class BlockVerifier {
  /** Expected and not arrived yet. */
  readonly #pending = new Set<string>();
  /** Arrived (and verified). */
  readonly #arrived = new Set<string>();
  #blocks = 0;
  #bytes = 0;

  constructor(
    root: CID,
    private readonly linksOf: LinksOf,
  ) {
    this.#expect(root);
  }

  /** Every expected block has arrived. */
  get complete(): boolean {
    return this.#pending.size === 0;
  }

  get blocks(): number {
    return this.#blocks;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Checks one block and learns its links; answers its CID. Throws UnverifiedBlockError for a CID that does not
   * parse, is not expected (never named, or already arrived) or whose bytes do not hash to it, and
   * UnsupportedHashError for a link hashed with anything but sha2-256. Calls must not overlap (the caller awaits each).
   */
  async accept(cidBytes: Uint8Array, bytes: Uint8Array): Promise<CID> {
    const key = keyOf(cidBytes);
    if (!this.#pending.has(key)) throw new UnverifiedBlockError(this.#arrived.has(key) ? 'a block sent twice' : 'a block that was not asked for');
    let cid: CID;
    try {
      cid = CID.decode(cidBytes);
    } catch {
      throw new UnverifiedBlockError('a block frame names no valid CID');
    }
    const { code, digest } = cid.multihash;
    if (code !== SHA2_256 || digest.length !== SHA2_256_BYTES) throw new UnsupportedHashError(`hash 0x${code.toString(16)}`);
    const actual = createHash('sha256').update(bytes).digest();
    if (!actual.equals(digest)) throw new UnverifiedBlockError('a block whose bytes do not match its CID');
    this.#pending.delete(key);
    this.#arrived.add(key);
    this.#blocks++;
    this.#bytes += bytes.length;
    try {
      for (const link of await this.linksOf(cid, bytes)) this.#expect(link);
    } catch (error) {
      if ((error as Error).name === UnsupportedHashError.NAME) throw error;
      throw new UnverifiedBlockError('a block that does not decode with its codec');
    }
    return cid;
  }

  #expect(cid: CID): void {
    const { code } = cid.multihash;
    if (code === IDENTITY) return;
    if (code !== SHA2_256) throw new UnsupportedHashError(`hash 0x${code.toString(16)}`);
    const key = keyOf(cid.bytes);
    if (this.#arrived.has(key)) return;
    this.#pending.add(key);
  }
}
