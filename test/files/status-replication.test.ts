// The replication figures of the file status (src/files/placement.ts `statusReplication`; docs/specs/files-node.md §2.1,
// §2.2; docs/notes/files-node.md A.3 derivations, C14, C15): the same `acknowledged` and `required` as the upload report,
// from the peers this node knows acknowledged a stored copy and are still designated.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyTargets, placementOf, replicationReport, statusReplication, type CopyOutcome, type PlacementTier, type StatusPolicy, type StatusSubject } from '../../src/files/placement.js';

const SELF = '12D3KooWAlpha';
const BETA = '12D3KooWBeta';
const GAMMA = '12D3KooWGamma';
const DELTA = '12D3KooWDelta';
const T0 = 1_700_000_000_000;
const THREE: PlacementTier[] = [{ minAgeMs: 0, copies: 3 }];

const confirmed = (cid: string, overrides: Partial<StatusSubject> = {}): StatusSubject => ({ cid, state: 'confirmed', pinned: true, createdAt: T0, ...overrides });

function policy(overrides: Partial<StatusPolicy> = {}): StatusPolicy {
  return { replicated: true, members: [SELF, BETA, GAMMA], self: SELF, tiers: THREE, ackQuorum: 2, now: T0, ...overrides };
}

/** The upload report's figures for the same file, cluster and peer outcomes (in the targets' order). */
function reportFigures(subject: StatusSubject, p: StatusPolicy, outcomeOf: (peerId: string) => CopyOutcome) {
  const placement = placementOf(subject.cid, p.members, p.self, p.tiers, p.now - subject.createdAt);
  const report = replicationReport(placement, p.ackQuorum, copyTargets(placement, p.self).map(outcomeOf));
  return { acknowledged: report.acknowledged, required: report.required };
}

describe('file status: replication figures', () => {
  it('three nodes, both peers stored: the upload report figures (3 of 2)', () => {
    const file = confirmed('cid-all-stored');
    const figures = statusReplication(file, policy(), [BETA, GAMMA]);
    assert.deepEqual(figures, { acknowledged: 3, required: 2 });
    assert.deepEqual(figures, reportFigures(file, policy(), () => 'stored'));
  });

  it('a peer that failed during upload is not counted until it acknowledges (repair), then the count rises', () => {
    const file = confirmed('cid-one-down');
    const before = statusReplication(file, policy(), [BETA]);
    assert.deepEqual(before, reportFigures(file, policy(), (peer) => (peer === BETA ? 'stored' : 'failed')));
    assert.deepEqual(before, { acknowledged: 2, required: 2 });
    assert.deepEqual(statusReplication(file, policy(), [BETA, GAMMA]), { acknowledged: 3, required: 2 });
  });

  it('the quorum is capped by the network and never below one', () => {
    const file = confirmed('cid-quorum');
    assert.deepEqual(statusReplication(file, policy({ ackQuorum: 5 }), []), { acknowledged: 1, required: 3 }, 'three copies at most');
    assert.deepEqual(statusReplication(file, policy({ ackQuorum: 0 }), []), { acknowledged: 1, required: 1 });
    // A lone node (`nodes: []`): one copy is the whole network.
    assert.deepEqual(statusReplication(file, policy({ members: [] }), []), { acknowledged: 1, required: 1 });
  });

  it('a peer dropped from the config no longer counts, and the quorum follows the smaller network', () => {
    const file = confirmed('cid-membership');
    const shrunk = policy({ members: [SELF, BETA] });
    assert.deepEqual(statusReplication(file, shrunk, [BETA, GAMMA]), { acknowledged: 2, required: 2 });
    assert.deepEqual(statusReplication(file, policy({ members: [SELF, BETA], ackQuorum: 3 }), [BETA, GAMMA]), { acknowledged: 2, required: 2 });
  });

  it('only designated holders count: a peer ranked out of the copies (by membership or age tier) does not', () => {
    const members = [SELF, BETA, GAMMA, DELTA];
    const tiers: PlacementTier[] = [
      { minAgeMs: 0, copies: 3 },
      { minAgeMs: 10_000, copies: 2 },
    ];
    // A CID this node is designated for, so one peer of the four is ranked out.
    let index = 0;
    while (!placementOf(`cid-ranked-${index}`, members, SELF, tiers, 0).designated.includes(SELF)) index++;
    const file = confirmed(`cid-ranked-${index}`);
    const fresh = policy({ members, tiers });
    const placement = placementOf(file.cid, members, SELF, tiers, 0);
    const outsider = placement.ranking.find((peer) => peer !== SELF && !placement.designated.includes(peer))!;
    const everyone = [BETA, GAMMA, DELTA];
    const designatedPeers = copyTargets(placement, SELF).length;
    assert.deepEqual(statusReplication(file, fresh, everyone), { acknowledged: 1 + designatedPeers, required: 2 });
    assert.deepEqual(statusReplication(file, fresh, [outsider]), { acknowledged: 1, required: 2 }, 'the outsider is not a holder');

    // Older: two copies wanted; the holders are the best two of the ranking, whoever acknowledged before.
    const old = policy({ members, tiers, now: T0 + 60_000 });
    const oldHolders = copyTargets(placementOf(file.cid, members, SELF, tiers, 60_000), SELF);
    assert.deepEqual(statusReplication(file, old, everyone), { acknowledged: 1 + oldHolders.length, required: 2 });
  });

  it('this node and repeated peers are counted once', () => {
    const file = confirmed('cid-dupes');
    assert.deepEqual(statusReplication(file, policy(), [BETA, BETA, SELF]), { acknowledged: 2, required: 2 });
  });

  it('replication disabled (notes C14): the local pinned copy of one required, whatever peers said', () => {
    const off = policy({ replicated: false });
    assert.deepEqual(statusReplication(confirmed('cid-off'), off, [BETA, GAMMA]), { acknowledged: 1, required: 1 });
    assert.deepEqual(statusReplication(confirmed('cid-off', { pinned: false }), off, []), { acknowledged: 0, required: 1 });
  });

  it('a temporary file (notes C15): the figures of its upload report, the local copy only', () => {
    const file = confirmed('cid-temporary', { state: 'temporary' });
    const placement = placementOf(file.cid, policy().members, SELF, THREE, 0);
    const report = replicationReport(placement, 2, []);
    assert.deepEqual(statusReplication(file, policy(), []), { acknowledged: report.acknowledged, required: report.required });
    assert.deepEqual(statusReplication(file, policy(), []), { acknowledged: 1, required: 2 });
  });

  it('an expired or unpinned file: the local copy no longer counts; peers that stored theirs still do', () => {
    assert.deepEqual(statusReplication(confirmed('cid-expired', { state: 'expired', pinned: false }), policy(), [BETA]), { acknowledged: 1, required: 2 });
    // A record claiming a pin in the expired state is still not a local copy.
    assert.deepEqual(statusReplication(confirmed('cid-expired', { state: 'expired' }), policy(), []), { acknowledged: 0, required: 2 });
    // Handed over (confirmed, pin dropped): the designated holders carry it.
    assert.deepEqual(statusReplication(confirmed('cid-demoted', { pinned: false }), policy(), [BETA, GAMMA]), { acknowledged: 2, required: 2 });
  });
});
