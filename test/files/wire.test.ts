// The peer protocols' framing and messages (src/files/wire.ts; docs/notes/files-node.md C24, C25, A.6).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  encodeFrame,
  FrameDecoder,
  parseAttestation,
  parseReplicationRequest,
  parseReplicationResponse,
  ProtocolMessageError,
  REPLICATION_MAX_FRAME_BYTES,
} from '../../src/files/wire.js';

const CID = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

describe('frames: 4-byte big-endian length + UTF-8 JSON', () => {
  it('encodes the length prefix and decodes a frame split at every byte', () => {
    const frame = encodeFrame({ op: 'have', cid: CID }, REPLICATION_MAX_FRAME_BYTES);
    const body = JSON.stringify({ op: 'have', cid: CID });
    assert.equal(frame.length, 4 + body.length);
    assert.equal(Buffer.from(frame).readUInt32BE(0), body.length);
    const decoder = new FrameDecoder(REPLICATION_MAX_FRAME_BYTES);
    for (let i = 0; i < frame.length - 1; i++) assert.equal(decoder.push(frame.subarray(i, i + 1)), undefined);
    assert.deepEqual(decoder.push(frame.subarray(frame.length - 1)), { op: 'have', cid: CID });
  });

  it('refuses a declared length above the bound at the prefix, before any body arrives', () => {
    const prefix = Buffer.alloc(4);
    prefix.writeUInt32BE(REPLICATION_MAX_FRAME_BYTES + 1, 0);
    assert.throws(() => new FrameDecoder(REPLICATION_MAX_FRAME_BYTES).push(prefix), ProtocolMessageError);
    assert.throws(() => encodeFrame({ pad: 'x'.repeat(REPLICATION_MAX_FRAME_BYTES) }, REPLICATION_MAX_FRAME_BYTES), ProtocolMessageError);
  });

  it('refuses bytes after the frame and a body that is not JSON', () => {
    const frame = Buffer.from(encodeFrame({ a: 1 }, 100));
    assert.throws(() => new FrameDecoder(100).push(Buffer.concat([frame, Buffer.from([0])])), ProtocolMessageError);
    const bad = Buffer.alloc(5);
    bad.writeUInt32BE(1, 0);
    bad[4] = 0x7b; // "{"
    assert.throws(() => new FrameDecoder(100).push(bad), ProtocolMessageError);
  });
});

describe('replication messages', () => {
  it('parses every operation; session operations need a session id', () => {
    for (const op of ['store', 'have', 'accept', 'cache'] as const) assert.deepEqual(parseReplicationRequest({ op, cid: CID, extra: 1 }), { op, cid: CID });
    for (const op of ['stage', 'commit', 'abort'] as const) {
      assert.deepEqual(parseReplicationRequest({ op, cid: CID, session: 'a1-b2' }), { op, cid: CID, session: 'a1-b2' });
      assert.throws(() => parseReplicationRequest({ op, cid: CID }), ProtocolMessageError);
      assert.throws(() => parseReplicationRequest({ op, cid: CID, session: 'has space' }), ProtocolMessageError);
    }
    assert.throws(() => parseReplicationRequest({ op: 'delete', cid: CID }), ProtocolMessageError);
    assert.throws(() => parseReplicationRequest({ op: 'have', cid: '' }), ProtocolMessageError);
    assert.throws(() => parseReplicationRequest({ op: 'have', cid: 'x'.repeat(129) }), ProtocolMessageError);
    assert.throws(() => parseReplicationRequest(null), ProtocolMessageError);
  });

  it('accepts only the answer to the operation asked; a refusal keeps its code and bounds its text', () => {
    assert.deepEqual(parseReplicationResponse({ ok: true, op: 'store', storedBytes: 10 }, { op: 'store', cid: CID }), { ok: true, op: 'store', storedBytes: 10 });
    assert.deepEqual(parseReplicationResponse({ ok: true, op: 'have', has: false }, { op: 'have', cid: CID }), { ok: true, op: 'have', has: false });
    assert.throws(() => parseReplicationResponse({ ok: true, op: 'have', has: true }, { op: 'store', cid: CID }), ProtocolMessageError);
    assert.throws(() => parseReplicationResponse({ ok: true, op: 'store', storedBytes: -1 }, { op: 'store', cid: CID }), ProtocolMessageError);
    const refusal = parseReplicationResponse({ ok: false, code: 'unauthorized', error: 'x'.repeat(500) }, { op: 'store', cid: CID });
    assert.equal(refusal.ok, false);
    assert.equal(refusal.ok === false && refusal.code, 'unauthorized');
    assert.equal(refusal.ok === false && refusal.error.length, 200);
    const unknown = parseReplicationResponse({ ok: false, code: 'weird' }, { op: 'have', cid: CID });
    assert.equal(unknown.ok === false && unknown.code, 'failed');
  });
});

describe('attestation messages', () => {
  it('needs whole non-negative round and timestamp and a 64-hex membership version', () => {
    const version = 'a'.repeat(64);
    assert.deepEqual(parseAttestation({ round: 60_000, timestamp: 61_234, membershipVersion: version }), { round: 60_000, timestamp: 61_234, membershipVersion: version });
    assert.throws(() => parseAttestation({ round: -1, timestamp: 1, membershipVersion: version }), ProtocolMessageError);
    assert.throws(() => parseAttestation({ round: 1.5, timestamp: 1, membershipVersion: version }), ProtocolMessageError);
    assert.throws(() => parseAttestation({ round: 1, timestamp: 1, membershipVersion: 'A'.repeat(64) }), ProtocolMessageError);
  });
});
