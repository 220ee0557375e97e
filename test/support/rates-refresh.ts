// The refresh-cycle machine's test input, shared by its example tests and its model test: two equally weighted
// sources (A, B) quoting BTC/USD, a 60-minute rate lifetime and a 10-minute cycle.

import type { RefreshInput } from '../../machines/rates/refresh-cycle.machine.js';
import type { MergeSettings } from '../../src/rates/types.js';

export const MINUTE = 60_000;
export const START = 1_700_000_000_000;

export const REFRESH_MERGE: MergeSettings = {
  decimals: 8,
  strategy: 'avg',
  rateDifferencePercentThreshold: 25,
  groupPercentage: 65,
  minSources: 1,
  priorities: ['A', 'B'],
  weights: { A: 10, B: 10 },
  baseCoins: ['USD'],
  allCoins: ['BTC'],
  coverage: { 'BTC/USD': 2 },
};

export const REFRESH_INPUT: RefreshInput = { merge: REFRESH_MERGE, mappings: {}, lifetimeMs: 60 * MINUTE, intervalMs: 10 * MINUTE, startedAt: START };
