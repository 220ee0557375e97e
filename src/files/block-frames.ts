// The block pull protocol's frames (BLOCKS_PROTOCOL, src/files/wire.ts), pure. A replica that copies a file from the
// peer that asked for the copy opens one stream, sends one request frame of the replication protocol's framing (4-byte
// big-endian length + JSON `{cid}`), and reads a sequence of frames until it has every block of the DAG:
//
//   kind (1 byte) | name length (2 bytes, big-endian) | body length (4 bytes, big-endian) | name | body
//
//   kind 1, a block: name = the block's CID in binary (1..MAX_CID_BYTES), body = the block's bytes (<= MAX_BLOCK_BYTES)
//   kind 2, a refusal: name empty, body = an ASCII refusal code (<= MAX_REFUSAL_BYTES); the sender closes after it
//
// Why not bitswap for this: bitswap opens a libp2p stream per message (want-lists, blocks, cancels; each one a
// multistream-select, a yamux SYN and a peer-store merge), copies each block into a protobuf message on the way out
// and gathers it again on the way in; one stream of plain frames does none of that (issue 29 item 4, profiled).
//
// Every length is checked in the header, before its bytes are buffered: a header above its bound is a protocol
// violation (ProtocolMessageError) and the reader stops there.

import { ProtocolMessageError } from './wire.js';

export const BLOCK_FRAME = 1;
export const REFUSAL_FRAME = 2;
export const BLOCK_FRAME_HEADER_BYTES = 7;

/** A CIDv1 with a sha2-256 multihash is 36 bytes; 128 leaves room for any CID of ours and rejects garbage. */
export const MAX_CID_BYTES = 128;
/**
 * Our leaves are 1 MiB (IMPORTER_SETTINGS) and a dag-pb node of 1024 links about 45 KiB; bitswap peers refuse blocks
 * above 2 MiB (its own bound), so 2 MiB and some slack bound what a peer may make us buffer per frame.
 */
export const MAX_BLOCK_BYTES = 2 * 1024 * 1024 + 64 * 1024;
export const MAX_REFUSAL_BYTES = 64;

/** Why a peer would not (or could no longer) serve a DAG. Only logged by kind; any of them sends B to bitswap. */
export type BlocksRefusalCode = 'unauthorized' | 'busy' | 'notFound' | 'invalid' | 'failed';

export type BlockFrame = { readonly kind: 'block'; readonly cid: Uint8Array; readonly bytes: Uint8Array } | { readonly kind: 'refusal'; readonly code: string };

/** The header and name of a block frame; the block's bytes are sent after it as they are (no copy). */
export function blockFrameHead(cid: Uint8Array, blockBytes: number): Uint8Array {
  if (cid.length === 0 || cid.length > MAX_CID_BYTES) throw new ProtocolMessageError(`a CID of ${cid.length} bytes`);
  if (blockBytes > MAX_BLOCK_BYTES) throw new ProtocolMessageError(`a block of ${blockBytes} bytes exceeds ${MAX_BLOCK_BYTES}`);
  const head = Buffer.allocUnsafe(BLOCK_FRAME_HEADER_BYTES + cid.length);
  head.writeUInt8(BLOCK_FRAME, 0);
  head.writeUInt16BE(cid.length, 1);
  head.writeUInt32BE(blockBytes, 3);
  head.set(cid, BLOCK_FRAME_HEADER_BYTES);
  return head;
}

export function refusalFrame(code: BlocksRefusalCode): Uint8Array {
  const body = Buffer.from(code, 'ascii');
  const frame = Buffer.alloc(BLOCK_FRAME_HEADER_BYTES + body.length);
  frame.writeUInt8(REFUSAL_FRAME, 0);
  frame.writeUInt32BE(body.length, 3);
  body.copy(frame, BLOCK_FRAME_HEADER_BYTES);
  return frame;
}

/** The importer's leaf (IMPORTER_SETTINGS' chunk, notes B.1): every leaf of a file but its last has this size. */
export const LEAF_BYTES = 1_048_576;

/**
 * Block bodies of exactly one leaf's size, reused by one pull once their block has been written. A fresh 1 MiB buffer
 * per block is fresh memory: the copy into it page-faulted every 4 KiB, and the pulling replica's profile had the
 * decoder's copies at ~5 ms per MiB, against ~0.03 ms for the same copies into a reused buffer (measured alone:
 * 192 fresh buffers filled in 98-290 ms, one reused in 4 ms). Other sizes (a file's last leaf, DAG nodes) are
 * allocated as they come.
 */
export class BlockBodyPool {
  readonly #free: Buffer[] = [];

  constructor(private readonly keep: number) {}

  take(bytes: number): Uint8Array {
    if (bytes !== LEAF_BYTES) return Buffer.allocUnsafeSlow(bytes);
    return this.#free.pop() ?? Buffer.allocUnsafeSlow(LEAF_BYTES);
  }

  /**
   * `body`, from `take`, is read by no one any more. Only a raw leaf may come back: the CIDs decoded from a DAG node
   * are views of its bytes. A body of another size is left to the collector.
   */
  give(body: Uint8Array): void {
    if (body.byteLength !== LEAF_BYTES || body.buffer.byteLength !== LEAF_BYTES || this.#free.length >= this.keep) return;
    if (this.#free.some((free) => free.buffer === body.buffer)) return;
    this.#free.push(Buffer.from(body.buffer, body.byteOffset, LEAF_BYTES));
  }
}

/**
 * Turns the stream's chunks into frames. `push` returns the frames completed by a chunk (often none: a 1 MiB block
 * arrives in ~16 pieces) and throws ProtocolMessageError at the first header out of bounds. Each frame's body is
 * gathered into one buffer of its size (from `allocateBody`), taken once its header arrived: one copy per block.
 */
export class BlockFrameDecoder {
  // Not from Buffer's pool by default: a block may be kept (written, then dropped) and must not pin a shared slab.
  constructor(private readonly allocateBody: (bytes: number) => Uint8Array = (bytes) => Buffer.allocUnsafeSlow(bytes)) {}

  readonly #header = Buffer.alloc(BLOCK_FRAME_HEADER_BYTES);
  #headerFilled = 0;
  #kind = 0;
  #name: Uint8Array | undefined;
  #body: Uint8Array | undefined;
  /** Bytes of name + body received so far. */
  #filled = 0;

  /** True between frames: a stream that ends here ended cleanly as far as framing goes. */
  get atBoundary(): boolean {
    return this.#headerFilled === 0 && this.#name === undefined;
  }

  push(chunk: Uint8Array): BlockFrame[] {
    const frames: BlockFrame[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.#name === undefined) {
        const take = Math.min(BLOCK_FRAME_HEADER_BYTES - this.#headerFilled, chunk.length - at);
        this.#header.set(chunk.subarray(at, at + take), this.#headerFilled);
        this.#headerFilled += take;
        at += take;
        if (this.#headerFilled < BLOCK_FRAME_HEADER_BYTES) break;
        this.#start();
      }
      const name = this.#name!;
      const body = this.#body!;
      const total = name.length + body.length;
      const take = Math.min(total - this.#filled, chunk.length - at);
      let copied = 0;
      if (this.#filled < name.length) {
        const part = Math.min(take, name.length - this.#filled);
        name.set(chunk.subarray(at, at + part), this.#filled);
        copied = part;
      }
      if (copied < take) body.set(chunk.subarray(at + copied, at + take), this.#filled + copied - name.length);
      this.#filled += take;
      at += take;
      // (a frame with an empty name and body, a refusal without a code, is complete with its header alone)
      if (this.#filled === total) frames.push(this.#finish());
    }
    return frames;
  }

  #start(): void {
    const kind = this.#header.readUInt8(0);
    const nameBytes = this.#header.readUInt16BE(1);
    const bodyBytes = this.#header.readUInt32BE(3);
    if (kind === BLOCK_FRAME) {
      if (nameBytes === 0 || nameBytes > MAX_CID_BYTES) throw new ProtocolMessageError(`a block frame names a CID of ${nameBytes} bytes`);
      if (bodyBytes > MAX_BLOCK_BYTES) throw new ProtocolMessageError(`a block frame of ${bodyBytes} bytes exceeds ${MAX_BLOCK_BYTES}`);
    } else if (kind === REFUSAL_FRAME) {
      if (nameBytes !== 0 || bodyBytes > MAX_REFUSAL_BYTES) throw new ProtocolMessageError('a refusal frame out of bounds');
    } else {
      throw new ProtocolMessageError(`unknown frame kind ${kind}`);
    }
    this.#kind = kind;
    this.#name = new Uint8Array(nameBytes);
    this.#body = kind === BLOCK_FRAME ? this.allocateBody(bodyBytes) : new Uint8Array(bodyBytes);
    this.#filled = 0;
  }

  #finish(): BlockFrame {
    const name = this.#name!;
    const body = this.#body!;
    this.#name = undefined;
    this.#body = undefined;
    this.#headerFilled = 0;
    this.#filled = 0;
    if (this.#kind === REFUSAL_FRAME) return { kind: 'refusal', code: Buffer.from(body).toString('latin1') };
    return { kind: 'block', cid: name, bytes: body };
  }
}
