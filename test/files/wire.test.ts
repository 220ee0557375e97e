// The peer protocols' framing and messages (src/files/wire.ts; docs/notes/files-node.md C24, C25, A.6).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  encodeFrame,
  FrameDecoder,
  HOLDINGS_MAX_CIDS,
  HOLDINGS_MAX_FRAME_BYTES,
  parseAttestation,
  parseHoldingsRequest,
  parseHoldingsResponse,
  parseReplicationRequest,
  parseReplicationResponse,
  ProtocolMessageError,
  REPLICATION_MAX_FRAME_BYTES,
} from '../../src/files/wire.js';
import { prng } from '../support/random.js';

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

describe('holdings messages', () => {
  it('a request is 1 to HOLDINGS_MAX_CIDS CID strings; the largest fits the frame bound', () => {
    assert.deepEqual(parseHoldingsRequest({ cids: [CID, CID], extra: 1 }), { cids: [CID, CID] });
    const largest = { cids: Array.from({ length: HOLDINGS_MAX_CIDS }, () => 'b'.repeat(128)) };
    assert.deepEqual(parseHoldingsRequest(largest), largest);
    assert.ok(encodeFrame(largest, HOLDINGS_MAX_FRAME_BYTES).length <= HOLDINGS_MAX_FRAME_BYTES + 4);
    for (const bad of [null, [], {}, { cids: [] }, { cids: CID }, { cids: [CID, ''] }, { cids: [CID, 7] }, { cids: ['x'.repeat(129)] }, { cids: Array(HOLDINGS_MAX_CIDS + 1).fill(CID) }]) {
      assert.throws(() => parseHoldingsRequest(bad), ProtocolMessageError, JSON.stringify(bad)?.slice(0, 80));
    }
  });

  it('an answer says yes or no for each CID asked, in order; a refusal keeps its code', () => {
    const request = { cids: [CID, CID, CID] };
    assert.deepEqual(parseHoldingsResponse({ ok: true, has: [true, false, true] }, request), { ok: true, has: [true, false, true] });
    for (const bad of [null, { ok: true }, { ok: true, has: [true, false] }, { ok: true, has: [true, false, true, true] }, { ok: true, has: [true, 'no', true] }, { has: [true, true, true] }]) {
      assert.throws(() => parseHoldingsResponse(bad, request), ProtocolMessageError, JSON.stringify(bad));
    }
    assert.deepEqual(parseHoldingsResponse({ ok: false, code: 'unauthorized', error: 'Not authorized' }, request), { ok: false, code: 'unauthorized', error: 'Not authorized' });
    const unknown = parseHoldingsResponse({ ok: false, code: 'weird', error: 'x'.repeat(500) }, request);
    assert.deepEqual(unknown.ok === false && [unknown.code, unknown.error.length], ['failed', 200]);
  });

  it('fuzz: random JSON values parse or throw ProtocolMessageError, nothing else', () => {
    const random = prng(30);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const value = (depth: number): unknown => {
      const kind = Math.floor(random() * (depth > 2 ? 5 : 7));
      if (kind === 0) return null;
      if (kind === 1) return random() < 0.5;
      if (kind === 2) return pick([0, -1, 1.5, 2 ** 53, NaN]);
      if (kind === 3) return pick(['', CID, 'x'.repeat(129), 'ok', 'has']);
      if (kind === 4) return undefined;
      if (kind === 5) return Array.from({ length: pick([0, 1, 3, HOLDINGS_MAX_CIDS + 1]) }, () => (random() < 0.7 ? pick([CID, true, false]) : value(depth + 1)));
      return Object.fromEntries(['cids', 'ok', 'has', 'code', 'error'].filter(() => random() < 0.6).map((key) => [key, value(depth + 1)]));
    };
    let parsedRequests = 0;
    let parsedResponses = 0;
    for (let i = 0; i < 5_000; i++) {
      const candidate = value(0);
      try {
        const request = parseHoldingsRequest(candidate);
        assert.ok(request.cids.length >= 1 && request.cids.length <= HOLDINGS_MAX_CIDS);
        parsedRequests++;
      } catch (error) {
        assert.ok(error instanceof ProtocolMessageError, String(error));
      }
      try {
        const response = parseHoldingsResponse(candidate, { cids: [CID, CID, CID] });
        if (response.ok) assert.equal(response.has.length, 3);
        parsedResponses++;
      } catch (error) {
        assert.ok(error instanceof ProtocolMessageError, String(error));
      }
    }
    assert.ok(parsedRequests > 0 && parsedResponses > 0, `the generator reaches valid messages too (${parsedRequests}, ${parsedResponses})`);
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
