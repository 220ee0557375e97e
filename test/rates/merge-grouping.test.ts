// Grouping and dominant-group choice: docs/notes/rates.md B.4, B.5 and the later upstream worked examples.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  chooseDominantGroup,
  percentDifference,
  splitIntoGroups,
  type GroupMember,
} from '../../src/rates/grouping.js';
import { applySourceQuotes, evaluate, type RetainedQuotes } from '../../src/rates/merge.js';
import type { MergeSettings } from '../../src/rates/types.js';

const PRICES = [0.02, 0.025, 0.03, 0.031, 0.04, 0.044, 0.05];
/** Weights of the later upstream "weights worked through" table. */
const WEIGHTS = [10, 20, 50, 60, 10, 10, 20];

function members(weights: readonly number[] = WEIGHTS): GroupMember[] {
  return PRICES.map((price, i) => ({ source: `S${i}`, price, receivedAt: 0, weight: weights[i]! }));
}

test('percentDifference is symmetric, mean-based and capped at 200; two zeros are a tie', () => {
  // Floating point, evaluated exactly as the original: a threshold of exactly 50 splits these two.
  assert.equal(percentDifference(0.03, 0.05), 50.000000000000014);
  assert.equal(percentDifference(0.05, 0.03), percentDifference(0.03, 0.05));
  assert.equal(percentDifference(10, 10), 0);
  assert.equal(percentDifference(10, 0), 200);
  assert.equal(percentDifference(0, 0), 0);
  assert.ok(Math.abs(percentDifference(60000, 61000) - 1.652892561983471) < 1e-12);
});

test('B.4 worked example, threshold 25: groups [0.02, 0.025], [0.025, 0.03, 0.031], [0.04, 0.044, 0.05]', () => {
  const groups = splitIntoGroups(members(), 25);
  assert.deepEqual(
    groups.map((g) => g.members.map((m) => m.price)),
    [
      [0.02, 0.025],
      [0.025, 0.03, 0.031],
      [0.04, 0.044, 0.05],
    ],
  );
  // 0.025 sits in two groups, so its weight counts twice.
  assert.deepEqual(
    groups.map((g) => g.weight),
    [30, 130, 40],
  );
});

test('grouping: a group stops at the first price too far from its start, even if a later one is close', () => {
  // pd(0.031, 0.04) = 25.35 > 25: B and C never merge.
  assert.ok(percentDifference(0.031, 0.04) > 25);
  const groups = splitIntoGroups(members(), 25.4);
  assert.deepEqual(
    groups.map((g) => g.members.map((m) => m.price)),
    [
      [0.02, 0.025],
      [0.025, 0.03, 0.031],
      [0.031, 0.04],
      [0.04, 0.044, 0.05],
    ],
  );
});

test('grouping: threshold 200 puts every quote into one group; threshold 0 splits distinct prices', () => {
  assert.deepEqual(
    splitIntoGroups(members(), 200).map((g) => g.members.length),
    [7],
  );
  assert.deepEqual(
    splitIntoGroups(members(), 0).map((g) => g.members.length),
    [1, 1, 1, 1, 1, 1, 1],
  );
  assert.deepEqual(splitIntoGroups([], 25), []);
});

test('B.5 weights worked through: B (130) beats C (40) by 105.9% > 65, so B wins', () => {
  const dominant = chooseDominantGroup(splitIntoGroups(members(), 25), 65);
  assert.equal(dominant.ok, true);
  assert.deepEqual(
    dominant.ok && dominant.group.members.map((m) => m.price),
    [0.025, 0.03, 0.031],
  );
});

test('B.5: B (130) against C (100) is 26% ≤ 65, so the pair is ambiguous and the message names both groups', () => {
  const dominant = chooseDominantGroup(splitIntoGroups(members([10, 20, 50, 60, 30, 30, 40]), 25), 65);
  assert.deepEqual(dominant, {
    ok: false,
    message:
      'The difference between sources is too big: 0.025 (S1);0.03 (S2);0.031 (S3) against 0.04 (S4);0.044 (S5);0.05 (S6)',
  });
});

test('B.5: equal weights tie (pd 0) and are rejected unless groupPercentage < 0; ties keep ascending price order', () => {
  const groups = splitIntoGroups(
    [
      { source: 'CoinPaprika', price: 0.03, receivedAt: 0, weight: 10 },
      { source: 'CoinLore', price: 0.05, receivedAt: 0, weight: 10 },
    ],
    25,
  );
  assert.deepEqual(chooseDominantGroup(groups, 65), {
    ok: false,
    message: 'The difference between sources is too big: 0.03 (CoinPaprika) against 0.05 (CoinLore)',
  });
  assert.deepEqual(chooseDominantGroup(groups, 0), chooseDominantGroup(groups, 65));
  const forced = chooseDominantGroup(groups, -1);
  assert.equal(forced.ok && forced.group.members[0]?.price, 0.03);
});

test('B.5: groupPercentage 200 rejects every split; 0 accepts any strictly heavier group', () => {
  const groups = splitIntoGroups(members(), 25);
  assert.equal(chooseDominantGroup(groups, 200).ok, false);
  assert.equal(chooseDominantGroup(groups, 0).ok, true);
});

test('B.4/B.5 through evaluate: the seven-quote example with strategy avg resolves from group B only', () => {
  let retained: RetainedQuotes = {};
  PRICES.forEach((price, i) => {
    retained = applySourceQuotes(retained, `S${i}`, [{ pair: 'ADM/USD', price }], 0, {});
  });
  const weights = Object.fromEntries(WEIGHTS.map((w, i) => [`S${i}`, w]));
  const settings: MergeSettings = {
    decimals: 12,
    strategy: 'avg',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 2,
    priorities: [],
    weights,
    baseCoins: [],
    allCoins: [],
    coverage: {},
  };
  const { table, issues } = evaluate({ retained, previous: {}, settings, now: 0, lifetimeMs: 60_000 });
  // (0.025 + 0.03 + 0.031) / 3 = 0.028666…
  assert.deepEqual(table, { 'ADM/USD': 0.028666666667 });
  assert.deepEqual(issues, []);
});
