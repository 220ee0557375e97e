// The block pull protocol's frames and what a replica accepts from them (src/files/block-frames.ts,
// src/files/block-verifier.ts): round trips in any chunking, every header bound, random bytes never crash the decoder
// or make it buffer beyond its bounds, and the verifier takes only expected blocks whose bytes hash to their CID.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import * as dagPb from '@ipld/dag-pb';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { create as createDigest } from 'multiformats/hashes/digest';
import {
  BLOCK_FRAME_HEADER_BYTES,
  BlockBodyPool,
  BlockFrameDecoder,
  blockFrameHead,
  MAX_BLOCK_BYTES,
  LEAF_BYTES,
  MAX_CID_BYTES,
  refusalFrame,
  type BlockFrame,
} from '../../src/files/block-frames.js';
import { BlockVerifier, UnsupportedHashError, UnverifiedBlockError } from '../../src/files/block-verifier.js';
import { ProtocolMessageError } from '../../src/files/wire.js';
import { prng } from '../support/random.js';

const rawCid = (bytes: Uint8Array) => CID.createV1(raw.code, createDigest(0x12, createHash('sha256').update(bytes).digest()));
const pbCid = (bytes: Uint8Array) => CID.createV1(dagPb.code, createDigest(0x12, createHash('sha256').update(bytes).digest()));
const frameOf = (cid: CID, bytes: Uint8Array) => Buffer.concat([blockFrameHead(cid.bytes, bytes.length), bytes]);

/** Feeds `bytes` to a decoder in pieces cut at random places. */
function decodeInPieces(bytes: Uint8Array, next: () => number): BlockFrame[] {
  const decoder = new BlockFrameDecoder();
  const frames: BlockFrame[] = [];
  let at = 0;
  while (at < bytes.length) {
    const size = 1 + Math.floor(next() * 70_000);
    frames.push(...decoder.push(bytes.subarray(at, at + size)));
    at += size;
  }
  assert.equal(decoder.atBoundary, true);
  return frames;
}

/** The links of a dag-pb or raw block (the replica decodes with helia's codecs; these two are all a file has). */
const linksOf = (cid: CID, bytes: Uint8Array): CID[] => (cid.code === dagPb.code ? dagPb.decode(bytes).Links.map((link) => link.Hash) : []);

describe('block frames', () => {
  it('round trip: blocks and a refusal, whatever the chunking', () => {
    const random = prng(7);
    const blocks = [randomBytes(0), randomBytes(1), randomBytes(1_048_576), randomBytes(MAX_BLOCK_BYTES), randomBytes(33)];
    const stream = Buffer.concat([...blocks.map((bytes) => frameOf(rawCid(bytes), bytes)), refusalFrame('notFound')]);
    for (let round = 0; round < 5; round++) {
      const frames = decodeInPieces(stream, random);
      assert.equal(frames.length, blocks.length + 1);
      blocks.forEach((bytes, i) => {
        const frame = frames[i]!;
        assert.equal(frame.kind, 'block');
        if (frame.kind !== 'block') return;
        assert.equal(CID.decode(frame.cid).toString(), rawCid(bytes).toString());
        assert.ok(Buffer.from(frame.bytes).equals(bytes));
      });
      assert.deepEqual(frames.at(-1), { kind: 'refusal', code: 'notFound' });
    }
  });

  it('headers out of bounds are protocol violations, caught in the header', () => {
    const header = (kind: number, name: number, body: number) => {
      const bytes = Buffer.alloc(BLOCK_FRAME_HEADER_BYTES);
      bytes.writeUInt8(kind, 0);
      bytes.writeUInt16BE(name, 1);
      bytes.writeUInt32BE(body, 3);
      return bytes;
    };
    const violation = (bytes: Uint8Array) => assert.throws(() => new BlockFrameDecoder().push(bytes), ProtocolMessageError);
    violation(header(1, MAX_CID_BYTES + 1, 10));
    violation(header(1, 0, 10));
    violation(header(1, 36, MAX_BLOCK_BYTES + 1));
    violation(header(1, 36, 0xffffffff));
    violation(header(2, 1, 0));
    violation(header(2, 0, 65));
    violation(header(0, 36, 10));
    violation(header(9, 36, 10));
    assert.throws(() => blockFrameHead(new Uint8Array(MAX_CID_BYTES + 1), 1), ProtocolMessageError);
    assert.throws(() => blockFrameHead(new Uint8Array(36), MAX_BLOCK_BYTES + 1), ProtocolMessageError);
  });

  it('fuzz: random bytes give frames within bounds or a ProtocolMessageError, nothing else', () => {
    const random = prng(29);
    const byte = () => Math.floor(random() * 256);
    for (let round = 0; round < 3_000; round++) {
      const decoder = new BlockFrameDecoder();
      // Mostly short garbage, sometimes a valid frame's header with garbage after, sometimes small kinds and lengths.
      const length = Math.floor(random() * 300);
      const bytes = Buffer.alloc(length);
      for (let i = 0; i < length; i++) bytes[i] = byte();
      if (length >= BLOCK_FRAME_HEADER_BYTES && random() < 0.5) {
        bytes[0] = 1 + Math.floor(random() * 2);
        bytes.writeUInt16BE(Math.floor(random() * 140), 1);
        bytes.writeUInt32BE(Math.floor(random() * 200), 3);
      }
      let at = 0;
      try {
        while (at < length) {
          const size = 1 + Math.floor(random() * 40);
          for (const frame of decoder.push(bytes.subarray(at, at + size))) {
            if (frame.kind === 'block') {
              assert.ok(frame.cid.length >= 1 && frame.cid.length <= MAX_CID_BYTES);
              assert.ok(frame.bytes.length <= MAX_BLOCK_BYTES);
            } else {
              assert.ok(frame.code.length <= 64);
            }
          }
          at += size;
        }
      } catch (error) {
        assert.ok(error instanceof ProtocolMessageError, `round ${round}: ${String(error)}`);
      }
    }
  });
});

describe('the block verifier', () => {
  const leaves = [randomBytes(1000), randomBytes(2000)];
  const leafCids = leaves.map(rawCid);
  const rootBytes = dagPb.encode(dagPb.prepare({ Links: [...leafCids, leafCids[0]!].map((Hash) => ({ Hash, Tsize: 1 })) }));
  const root = pbCid(rootBytes);

  it('takes the root, then its links, each once even when linked twice; complete when all arrived', async () => {
    const verifier = new BlockVerifier(root, linksOf);
    assert.equal(verifier.complete, false);
    assert.equal((await verifier.accept(root.bytes, rootBytes)).toString(), root.toString());
    assert.equal(verifier.complete, false);
    await verifier.accept(leafCids[1]!.bytes, leaves[1]!);
    await verifier.accept(leafCids[0]!.bytes, leaves[0]!);
    assert.equal(verifier.complete, true);
    assert.deepEqual({ blocks: verifier.blocks, bytes: verifier.bytes }, { blocks: 3, bytes: rootBytes.length + 3000 });
  });

  it('refuses a block not asked for, a block before its parent, a block sent twice, and bytes that do not match', async () => {
    const refused = async (verifier: BlockVerifier, cid: CID, bytes: Uint8Array) =>
      assert.rejects(verifier.accept(cid.bytes, bytes), (error: unknown) => (error as Error).name === UnverifiedBlockError.NAME);
    const stranger = randomBytes(10);
    await refused(new BlockVerifier(root, linksOf), rawCid(stranger), stranger);
    await refused(new BlockVerifier(root, linksOf), leafCids[0]!, leaves[0]!);
    const verifier = new BlockVerifier(root, linksOf);
    await refused(verifier, root, Buffer.concat([rootBytes, Buffer.from([0])]));
    await verifier.accept(root.bytes, rootBytes);
    await verifier.accept(leafCids[0]!.bytes, leaves[0]!);
    await refused(verifier, leafCids[0]!, leaves[0]!);
    await refused(verifier, leafCids[1]!, leaves[0]!);
    assert.equal(verifier.complete, false);
    await assert.rejects(new BlockVerifier(root, linksOf).accept(new Uint8Array([1, 2, 3]), rootBytes), UnverifiedBlockError);
  });

  it('a DAG hashed with anything but sha2-256 is left to bitswap', async () => {
    const blake = CID.createV1(raw.code, createDigest(0xb220, new Uint8Array(32)));
    assert.throws(() => new BlockVerifier(blake, linksOf), UnsupportedHashError);
    const links = dagPb.encode(dagPb.prepare({ Links: [{ Hash: blake, Tsize: 1 }] }));
    await assert.rejects(new BlockVerifier(pbCid(links), linksOf).accept(pbCid(links).bytes, links), UnsupportedHashError);
  });
});

describe('BlockBodyPool: a pull reuses the bodies of written leaves', () => {
  it('hands a leaf-sized body back out once given, and allocates every other size', () => {
    const pool = new BlockBodyPool(2);
    const first = pool.take(LEAF_BYTES);
    assert.equal(first.byteLength, LEAF_BYTES);
    assert.notEqual(pool.take(LEAF_BYTES).buffer, first.buffer, 'nothing given back yet: a fresh body');
    pool.give(first);
    pool.give(first);
    assert.equal(pool.take(LEAF_BYTES).buffer, first.buffer, 'the given body is reused');
    assert.notEqual(pool.take(LEAF_BYTES).buffer, first.buffer, 'given twice, handed out once');
    // A file's last leaf and a DAG node: their own buffers, never kept.
    const last = pool.take(1000);
    assert.equal(last.buffer.byteLength, 1000);
    pool.give(last);
    assert.notEqual(pool.take(1000).buffer, last.buffer);
  });

  it('keeps at most its bound', () => {
    const pool = new BlockBodyPool(2);
    const bodies = [pool.take(LEAF_BYTES), pool.take(LEAF_BYTES), pool.take(LEAF_BYTES)];
    for (const body of bodies) pool.give(body);
    const reused = new Set([pool.take(LEAF_BYTES).buffer, pool.take(LEAF_BYTES).buffer, pool.take(LEAF_BYTES).buffer]);
    assert.equal(bodies.filter((body) => reused.has(body.buffer)).length, 2);
  });

  it('the decoder gathers block bodies into what it is given, refusals into their own', () => {
    const sizes: number[] = [];
    const decoder = new BlockFrameDecoder((bytes) => {
      sizes.push(bytes);
      return Buffer.allocUnsafeSlow(bytes);
    });
    const leaf = randomBytes(3000);
    const [block] = decoder.push(frameOf(rawCid(leaf), leaf));
    assert.ok(block?.kind === 'block' && Buffer.from(block.bytes).equals(leaf));
    assert.deepEqual(decoder.push(refusalFrame('busy')), [{ kind: 'refusal', code: 'busy' }]);
    assert.deepEqual(sizes, [3000]);
  });
});
