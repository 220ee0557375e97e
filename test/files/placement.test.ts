// Placement and the replication report (src/files/placement.ts; docs/specs/files-node.md §2.1; notes A.3, C1, C14, C26).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { copyTargets, desiredCopies, localOnlyReport, placementOf, rankHolders, replicationReport } from '../../src/files/placement.js';

const PEERS = ['12D3KooWAlpha', '12D3KooWBeta', '12D3KooWGamma', '12D3KooWDelta'];
const TIERS = [
  { minAgeMs: 0, copies: 4 },
  { minAgeMs: 1_000, copies: 3 },
  { minAgeMs: 5_000, copies: 2 },
];

describe('rendezvous ranking', () => {
  it('orders by sha256(peerId ‖ cid) descending, whatever the order of the list', () => {
    const cid = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';
    const expected = [...PEERS].sort((a, b) => {
      const score = (peer: string) => createHash('sha256').update(peer + cid, 'utf8').digest('hex');
      return score(b).localeCompare(score(a));
    });
    assert.deepEqual(rankHolders(PEERS, cid), expected);
    assert.deepEqual(rankHolders([...PEERS].reverse(), cid), expected);
  });

  it('removing a member keeps the relative order of the others (only its own files move)', () => {
    for (let i = 0; i < 50; i++) {
      const cid = `cid-${i}`;
      const full = rankHolders(PEERS, cid);
      assert.deepEqual(rankHolders(PEERS.slice(1), cid), full.filter((peer) => peer !== PEERS[0]));
    }
  });
});

describe('copies by age tier and the designated set', () => {
  it('takes the last tier a file has reached', () => {
    assert.equal(desiredCopies(TIERS, 0), 4);
    assert.equal(desiredCopies(TIERS, 999), 4);
    assert.equal(desiredCopies(TIERS, 1_000), 3);
    assert.equal(desiredCopies(TIERS, 10_000), 2);
  });

  it('designates the best-ranked copies, counts this node even when it is not listed, flags a small network', () => {
    const placement = placementOf('cid-x', PEERS, PEERS[0]!, TIERS, 10_000);
    assert.equal(placement.copies, 2);
    assert.deepEqual(placement.designated, placement.ranking.slice(0, 2));
    assert.equal(placement.networkTooSmall, false, 'four nodes are more than two copies');
    const lone = placementOf('cid-x', [], 'self', TIERS, 0);
    assert.deepEqual(lone.designated, ['self']);
    assert.equal(lone.copies, 1);
    assert.equal(lone.networkTooSmall, true);
    const four = placementOf('cid-x', PEERS, PEERS[1]!, TIERS, 0);
    assert.equal(four.networkTooSmall, true, 'exactly as large as the desired copies is too small (spec §2.1)');
    assert.deepEqual(copyTargets(four, PEERS[1]!), four.designated.filter((peer) => peer !== PEERS[1]));
  });
});

describe('the replication report', () => {
  it('acknowledges the local copy and stored peers; a cache never counts; attempts carry only outcomes', () => {
    const report = replicationReport({ desiredCopies: 4, copies: 4, networkTooSmall: true }, 2, ['stored', 'cached', 'failed']);
    assert.deepEqual(report, {
      mode: 'quorum',
      desiredCopies: 4,
      copies: 4,
      required: 2,
      acknowledged: 2,
      replicaCount: 1,
      cachedCount: 1,
      satisfied: true,
      networkTooSmall: true,
      failedAttemptCount: 1,
      attempts: [
        { ok: true, outcome: 'stored' },
        { ok: true, outcome: 'cached' },
        { ok: false, outcome: 'failed' },
      ],
    });
    assert.equal(replicationReport({ desiredCopies: 3, copies: 3, networkTooSmall: true }, 3, ['failed', 'stored']).satisfied, false);
  });

  it('a node that places nothing reports its one copy (notes C14)', () => {
    const report = localOnlyReport(1, 1);
    assert.equal(report.acknowledged, 1);
    assert.equal(report.required, 1);
    assert.equal(report.satisfied, true);
    assert.deepEqual(report.attempts, []);
  });
});
