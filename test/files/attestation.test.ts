// Peer attestation decisions (src/files/attestation.ts; docs/specs/files-node.md §2.3 rules 5-7; docs/notes/files-node.md
// A.6 "Attestation protocol"): every reason a responder refuses or an asker does not count, and the boundaries.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerAttestation, isValidAttestation, type ResponderView } from '../../src/files/attestation.js';
import { membershipVersion, roundStart } from '../../src/files/health.js';
import type { AttestationMessage } from '../../src/files/wire.js';

const INTERVAL = 60_000;
const SKEW = 10_000;
const MV = membershipVersion(['a', 'b']);
const OTHER_MV = membershipVersion(['a', 'b', 'c']);
/** Mid-round, so a few seconds either way stay in the same round. */
const NOW = 1_700_000_030_000;
const ROUND = roundStart(NOW, INTERVAL);

const local = (overrides: Partial<ResponderView> = {}): ResponderView => ({ now: NOW, intervalMs: INTERVAL, clockSkewToleranceMs: SKEW, membershipVersion: MV, ...overrides });
const request = (overrides: Partial<AttestationMessage> = {}): AttestationMessage => ({ round: ROUND, timestamp: NOW, membershipVersion: MV, ...overrides });

describe('answerAttestation (responder)', () => {
  it('vouches for the same round and membership: the round echoed, its own clock, its own membership', () => {
    const asked = request({ timestamp: NOW - 1_234 });
    assert.deepEqual(answerAttestation(asked, local()), { round: ROUND, timestamp: NOW, membershipVersion: MV });
  });

  it('refuses another membership version', () => {
    assert.equal(answerAttestation(request({ membershipVersion: OTHER_MV }), local()), undefined);
  });

  it('attests an adjacent round (exactly intervalMs apart, either way) and refuses anything further', () => {
    for (const round of [ROUND - INTERVAL, ROUND + INTERVAL]) {
      assert.deepEqual(answerAttestation(request({ round }), local())?.round, round, `round ${round - ROUND}`);
    }
    for (const round of [ROUND - INTERVAL - 1, ROUND + INTERVAL + 1, ROUND - 2 * INTERVAL, ROUND + 2 * INTERVAL]) {
      assert.equal(answerAttestation(request({ round }), local()), undefined, `round ${round - ROUND}`);
    }
  });

  it('compares the round with its own round start, not with its clock: across a boundary the asker is one round behind', () => {
    // The responder has just crossed into the next round; the asker is still at the end of the previous one.
    const boundary = ROUND + INTERVAL;
    const asked = request({ round: ROUND, timestamp: boundary - 1 });
    assert.deepEqual(answerAttestation(asked, local({ now: boundary + 1 })), { round: ROUND, timestamp: boundary + 1, membershipVersion: MV });
  });

  it('accepts the asker\'s timestamp exactly clockSkewToleranceMs away (either way) and refuses one millisecond more', () => {
    assert.notEqual(answerAttestation(request({ timestamp: NOW - SKEW }), local()), undefined);
    assert.notEqual(answerAttestation(request({ timestamp: NOW + SKEW }), local()), undefined);
    assert.equal(answerAttestation(request({ timestamp: NOW - SKEW - 1 }), local()), undefined);
    assert.equal(answerAttestation(request({ timestamp: NOW + SKEW + 1 }), local()), undefined);
  });

  it('a zero tolerance demands identical clocks', () => {
    assert.notEqual(answerAttestation(request(), local({ clockSkewToleranceMs: 0 })), undefined);
    assert.equal(answerAttestation(request({ timestamp: NOW + 1 }), local({ clockSkewToleranceMs: 0 })), undefined);
  });
});

describe('isValidAttestation (asker)', () => {
  const asked = request();
  const settings = { clockSkewToleranceMs: SKEW };
  const answer = (overrides: Record<string, unknown> = {}) => ({ round: ROUND, timestamp: NOW + 500, membershipVersion: MV, ...overrides });

  it('counts an answer echoing the round and membership, its timestamp near the asker\'s clock at receipt', () => {
    assert.equal(isValidAttestation(answer(), asked, NOW + 600, settings), true);
  });

  it('does not count another round, even an adjacent one', () => {
    assert.equal(isValidAttestation(answer({ round: ROUND + INTERVAL }), asked, NOW, settings), false);
    assert.equal(isValidAttestation(answer({ round: ROUND - INTERVAL }), asked, NOW, settings), false);
  });

  it('does not count another membership version', () => {
    assert.equal(isValidAttestation(answer({ membershipVersion: OTHER_MV }), asked, NOW, settings), false);
  });

  it('compares the timestamp with the receipt time: exactly the tolerance counts, one millisecond more does not', () => {
    const receivedAt = NOW + 3_000;
    assert.equal(isValidAttestation(answer({ timestamp: receivedAt - SKEW }), asked, receivedAt, settings), true);
    assert.equal(isValidAttestation(answer({ timestamp: receivedAt + SKEW }), asked, receivedAt, settings), true);
    assert.equal(isValidAttestation(answer({ timestamp: receivedAt - SKEW - 1 }), asked, receivedAt, settings), false);
    assert.equal(isValidAttestation(answer({ timestamp: receivedAt + SKEW + 1 }), asked, receivedAt, settings), false);
  });

  it('does not count a refusal or anything malformed', () => {
    for (const raw of [
      { ok: false, error: 'not attested' },
      null,
      'attested',
      42,
      [],
      answer({ round: -1 }),
      answer({ round: 1.5 }),
      answer({ timestamp: '1700000030000' }),
      answer({ membershipVersion: 'abc' }),
      answer({ membershipVersion: MV.toUpperCase() }),
      { round: ROUND, membershipVersion: MV },
    ]) {
      assert.equal(isValidAttestation(raw, asked, NOW, settings), false, JSON.stringify(raw));
    }
  });

  it('the responder\'s own answer to a valid request is counted by the asker (the two rules agree)', () => {
    const reply = answerAttestation(asked, local({ now: NOW + 2_000 }));
    assert.ok(reply);
    assert.equal(isValidAttestation(reply, asked, NOW + 2_050, settings), true);
  });
});
