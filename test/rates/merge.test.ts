// The 4.2 merge pipeline end to end: docs/notes/rates.md B.10, the worked example B.11, acceptance H.8/H.9/H.11/H.26.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  applySourceQuotes,
  computeCoverage,
  evaluate,
  type ResolvedRates,
  type RetainedQuotes,
} from '../../src/rates/merge.js';
import type { MergeSettings, Quote } from '../../src/rates/types.js';

const MIN = 60_000;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

function settings(overrides: Partial<MergeSettings> = {}): MergeSettings {
  return {
    decimals: 12,
    strategy: 'priority',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 1,
    priorities: ['CoinPaprika', 'CoinLore', 'Binance', 'ExchangeRateApi', 'CurrencyApi'],
    weights: {},
    baseCoins: [],
    allCoins: [],
    coverage: {},
    ...overrides,
  };
}

/** Apply one cycle's successful sources in the given order at time `at`. */
function cycle(retained: RetainedQuotes, at: number, fetched: Array<[string, Quote[]]>): RetainedQuotes {
  let next = retained;
  for (const [source, quotes] of fetched) next = applySourceQuotes(next, source, quotes, at, {});
  return next;
}

function usd(coin: string, price: number): Quote {
  return { pair: `${coin}/USD`, price };
}

// ---------------------------------------------------------------------------------------------
// B.11 worked example

const B11_CONNECTORS = [
  { name: 'CurrencyApi', coins: ['USD', 'EUR'] },
  { name: 'ExchangeRateApi', coins: ['USD', 'EUR'] },
  { name: 'CoinPaprika', coins: ['BTC', 'ADM'] },
  { name: 'CoinLore', coins: ['BTC', 'ADM'] },
  { name: 'Binance', coins: ['BTC'] },
];

function b11Settings(weights: Record<string, number> = {}): MergeSettings {
  const { coverage, allCoins } = computeCoverage(B11_CONNECTORS, {}, 2);
  return settings({
    strategy: 'priority',
    minSources: 2,
    baseCoins: ['USD', 'EUR', 'BTC'],
    weights: { CurrencyApi: 10, ExchangeRateApi: 10, CoinPaprika: 10, CoinLore: 10, Binance: 10, ...weights },
    coverage,
    allCoins,
  });
}

/** CurrencyApi `usd: {usd: 1, eur: 0.8}` after the connector's inversion. */
const FIAT: Quote[] = [usd('USD', 1), usd('EUR', 1.25)];

function b11Cycle1(): RetainedQuotes {
  return cycle({}, 0, [
    ['CurrencyApi', FIAT],
    ['ExchangeRateApi', FIAT],
    ['CoinPaprika', [usd('BTC', 60000), usd('ADM', 0.03)]],
    ['CoinLore', [usd('BTC', 61000), usd('ADM', 0.05)]],
    ['Binance', [usd('BTC', 60500)]],
  ]);
}

/** Cycle 2 at t = 10 min: CoinLore times out (not applied); the fiat sources answer as before. */
function b11Cycle2(after1: RetainedQuotes): RetainedQuotes {
  return cycle(after1, 10 * MIN, [
    ['CurrencyApi', FIAT],
    ['ExchangeRateApi', FIAT],
    ['CoinPaprika', [usd('BTC', 60200), usd('ADM', 0.031)]],
    ['Binance', [usd('BTC', 60400)]],
  ]);
}

test('B.11 coverage: BTC 3, EUR 2, ADM 2; USD is excluded', () => {
  const { coverage, allCoins, belowMinimum } = computeCoverage(B11_CONNECTORS, {}, 2);
  assert.deepEqual(coverage, { 'EUR/USD': 2, 'BTC/USD': 3, 'ADM/USD': 2 });
  assert.deepEqual(allCoins, ['EUR', 'BTC', 'ADM']);
  assert.deepEqual(belowMinimum, []);
});

test('B.11 cycle 1: snapshot 1 holds exactly the 9 documented pairs; ADM/USD is rejected with no fallback', () => {
  const retained = deepFreeze(b11Cycle1());
  const { table, resolved, issues } = evaluate({
    retained,
    previous: {},
    settings: b11Settings(),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, {
    'USD/USD': 1,
    'EUR/USD': 1.25,
    'BTC/USD': 60000,
    'USD/EUR': 0.8,
    'EUR/EUR': 1,
    'BTC/EUR': 48000,
    'USD/BTC': 0.000016666667,
    'EUR/BTC': 0.000020833333,
    'BTC/BTC': 1,
  });
  // Key order: source pairs in connector order, then triangulated pairs (notes F.19).
  assert.deepEqual(Object.keys(table), [
    'USD/USD',
    'EUR/USD',
    'BTC/USD',
    'USD/EUR',
    'EUR/EUR',
    'BTC/EUR',
    'USD/BTC',
    'EUR/BTC',
    'BTC/BTC',
  ]);
  assert.equal('ADM/USD' in table, false);
  assert.deepEqual(issues, [
    {
      pair: 'ADM/USD',
      kind: 'conflict',
      message: 'The difference between sources is too big: 0.03 (CoinPaprika) against 0.05 (CoinLore)',
      fallback: 'none',
    },
  ]);
  assert.deepEqual(resolved, {
    'USD/USD': { value: 1, receivedAt: 0 },
    'EUR/USD': { value: 1.25, receivedAt: 0 },
    'BTC/USD': { value: 60000, receivedAt: 0 },
  });
});

test('B.11 cycle 1 with strategy avg: BTC/USD is 60500', () => {
  const { table } = evaluate({
    retained: b11Cycle1(),
    previous: {},
    settings: { ...b11Settings(), strategy: 'avg' },
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.equal(table['BTC/USD'], 60500);
});

test('B.11 cycle 1 with CoinLore weight 30: its group wins and ADM/USD = 0.05', () => {
  const { table, issues } = evaluate({
    retained: b11Cycle1(),
    previous: {},
    settings: b11Settings({ CoinLore: 30 }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.equal(table['ADM/USD'], 0.05);
  assert.deepEqual(issues, []);
});

test('B.11 cycle 2 (4.2 per-source retention): CoinLore keeps voting; BTC 60200, ADM rejected again', () => {
  const s = b11Settings();
  const first = evaluate({ retained: b11Cycle1(), previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  const retained = deepFreeze(b11Cycle2(b11Cycle1()));

  // CoinLore's cycle-1 quotes are still retained next to the new ones.
  assert.deepEqual(retained['BTC/USD'], {
    CoinPaprika: { price: 60200, receivedAt: 10 * MIN },
    CoinLore: { price: 61000, receivedAt: 0 },
    Binance: { price: 60400, receivedAt: 10 * MIN },
  });
  assert.deepEqual(retained['ADM/USD'], {
    CoinPaprika: { price: 0.031, receivedAt: 10 * MIN },
    CoinLore: { price: 0.05, receivedAt: 0 },
  });

  const second = evaluate({
    retained,
    previous: deepFreeze(first.resolved),
    settings: s,
    now: 10 * MIN,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(second.table, {
    'USD/USD': 1,
    'EUR/USD': 1.25,
    'BTC/USD': 60200,
    'USD/EUR': 0.8,
    'EUR/EUR': 1,
    'BTC/EUR': 48160,
    'USD/BTC': 0.000016611296, // 1 / 60200 = 0.0000166112956810…
    'EUR/BTC': 0.00002076412, // 1.25 / 60200 = 0.0000207641196013…
    'BTC/BTC': 1,
  });
  assert.deepEqual(second.issues, [
    {
      pair: 'ADM/USD',
      kind: 'conflict',
      message: 'The difference between sources is too big: 0.031 (CoinPaprika) against 0.05 (CoinLore)',
      fallback: 'none',
    },
  ]);
  // Never resolved before, so the caller reports "no previous rates to fall back on".
  assert.equal(first.resolved['ADM/USD'], undefined);
  assert.deepEqual(second.resolved['BTC/USD'], { value: 60200, receivedAt: 10 * MIN });
});

test('B.11 /get?rateLifetime=5 at t = 10.5 min: CoinLore no longer counts; the tightened gate drops ADM/USD', () => {
  const s = b11Settings();
  const after1 = b11Cycle1();
  const first = evaluate({ retained: after1, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  const after2 = b11Cycle2(after1);
  const second = evaluate({ retained: after2, previous: first.resolved, settings: s, now: 10 * MIN, lifetimeMs: 60 * MIN });

  const request = evaluate({
    retained: after2,
    previous: second.resolved,
    settings: s,
    now: 10.5 * MIN,
    lifetimeMs: 5 * MIN,
  });
  // BTC: 2 fresh quotes (CoinPaprika, Binance) ≥ min(2, 3).
  assert.deepEqual(request.table, {
    'USD/USD': 1,
    'EUR/USD': 1.25,
    'BTC/USD': 60200,
    'USD/EUR': 0.8,
    'EUR/EUR': 1,
    'BTC/EUR': 48160,
    'USD/BTC': 0.000016611296,
    'EUR/BTC': 0.00002076412,
    'BTC/BTC': 1,
  });
  // ADM: only CoinPaprika's quote is inside 5 min, but two enabled sources advertise it.
  assert.deepEqual(request.issues, [
    { pair: 'ADM/USD', kind: 'fewerSources', message: 'expected 2, but got 1', fallback: 'none' },
  ]);
});

// ---------------------------------------------------------------------------------------------
// The minSources gate (spec §1.4, §4.1; notes B.7, F.5)

test('gate: a pair served under the configured window is dropped when a shorter window leaves too few fresh quotes', () => {
  const s = settings({ minSources: 2, coverage: { 'ETH/USD': 2 } });
  let retained = cycle({}, 0, [['CoinLore', [usd('ETH', 3000)]]]);
  retained = cycle(retained, 10 * MIN, [['CoinPaprika', [usd('ETH', 3010)]]]);

  const configured = evaluate({ retained, previous: {}, settings: s, now: 10.5 * MIN, lifetimeMs: 60 * MIN });
  assert.deepEqual(configured.table, { 'ETH/USD': 3010 });
  assert.deepEqual(configured.issues, []);

  const shorter = evaluate({
    retained,
    previous: configured.resolved,
    settings: s,
    now: 10.5 * MIN,
    lifetimeMs: 5 * MIN,
  });
  assert.deepEqual(shorter.table, {});
  assert.deepEqual(shorter.issues, [
    { pair: 'ETH/USD', kind: 'fewerSources', message: 'expected 2, but got 1', fallback: 'none' },
  ]);
  // A dropped pair keeps its last resolved value for later conflicts.
  assert.deepEqual(shorter.resolved, configured.resolved);
});

test('gate: the effective threshold is min(minSources, coverage); pairs without a coverage record need 1', () => {
  const retained = cycle({}, 0, [
    ['CurrencyApi', [usd('USD', 1)]],
    ['MOEX', [{ pair: 'EUR/RUB', price: 90 }]],
    ['CoinPaprika', [usd('XYZ', 5), usd('ABC', 7)]],
  ]);
  const { table, issues } = evaluate({
    retained,
    previous: {},
    settings: settings({ minSources: 3, coverage: { 'XYZ/USD': 1, 'ABC/USD': 2 } }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'USD/USD': 1, 'EUR/RUB': 90, 'XYZ/USD': 5 });
  assert.deepEqual(issues, [
    { pair: 'ABC/USD', kind: 'fewerSources', message: 'expected 2, but got 1', fallback: 'none' },
  ]);
});

test('gate: quotes exactly lifetimeMs old are stale (strict <); stale-only pairs report noFreshQuotes', () => {
  const retained = cycle({}, 0, [['CoinPaprika', [usd('BTC', 60000)]]]);
  const atEdge = evaluate({ retained, previous: {}, settings: settings(), now: 60 * MIN, lifetimeMs: 60 * MIN });
  assert.deepEqual(atEdge.table, {});
  assert.deepEqual(atEdge.issues, [
    { pair: 'BTC/USD', kind: 'noFreshQuotes', message: 'No prices for the pair available', fallback: 'none' },
  ]);
  const justInside = evaluate({ retained, previous: {}, settings: settings(), now: 60 * MIN - 1, lifetimeMs: 60 * MIN });
  assert.deepEqual(justInside.table, { 'BTC/USD': 60000 });
});

test('gate: a weight-0 source counts as a source but has no vote', () => {
  const s = settings({
    minSources: 2,
    coverage: { 'ADM/USD': 2, 'XYZ/USD': 2 },
    weights: { CoinPaprika: 10, CoinLore: 0 },
  });
  const retained = cycle({}, 0, [
    ['CoinPaprika', [usd('ADM', 0.03), usd('XYZ', 100)]],
    ['CoinLore', [usd('ADM', 0.05), usd('XYZ', 101)]],
  ]);
  const { table, issues } = evaluate({ retained, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  // ADM: groups of weight 10 and 0 → pd 200 > 65, CoinPaprika's group wins; the gate saw 2 sources.
  // XYZ: one group; the weight-0 CoinLore quote satisfies minSources = 2.
  assert.deepEqual(table, { 'ADM/USD': 0.03, 'XYZ/USD': 100 });
  assert.deepEqual(issues, []);
});

test('two groups of weight-0 sources tie and conflict', () => {
  const retained = cycle({}, 0, [
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.05)]],
  ]);
  const { table, issues } = evaluate({
    retained,
    previous: {},
    settings: settings({ weights: { CoinPaprika: 0, CoinLore: 0 } }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, {});
  assert.equal(issues[0]?.kind, 'conflict');
});

// ---------------------------------------------------------------------------------------------
// Strategies (notes B.6, acceptance H.8)

function xyzRetained(): RetainedQuotes {
  return cycle({}, 0, [
    ['CoinPaprika', [usd('XYZ', 101)]],
    ['CoinLore', [usd('XYZ', 102)]],
    ['Binance', [usd('XYZ', 100)]],
  ]);
}

for (const [strategy, expected] of [
  ['avg', 101],
  ['min', 100],
  ['max', 102],
] as const) {
  test(`H.8 strategy ${strategy}: prices 100, 101, 102 → XYZ/USD ${expected}`, () => {
    const { table } = evaluate({
      retained: xyzRetained(),
      previous: {},
      settings: settings({ strategy }),
      now: 0,
      lifetimeMs: 60 * MIN,
    });
    assert.deepEqual(table, { 'XYZ/USD': expected });
  });
}

test('strategy avg output is rounded to decimals (notes F.18)', () => {
  const retained = cycle({}, 0, [
    ['CoinPaprika', [usd('XYZ', 1)]],
    ['CoinLore', [usd('XYZ', 1)]],
    ['Binance', [usd('XYZ', 1.1)]],
  ]);
  const { table, resolved } = evaluate({
    retained,
    previous: {},
    settings: settings({ strategy: 'avg', decimals: 4 }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'XYZ/USD': 1.0333 });
  assert.deepEqual(resolved, { 'XYZ/USD': { value: 1.0333, receivedAt: 0 } });
});

test('every served value is rounded to decimals, and a value that rounds to 0 is not served', () => {
  const retained = cycle({}, 0, [['CoinPaprika', [usd('XYZ', 1.23456789), usd('DUST', 0.00004)]]]);
  const { table } = evaluate({
    retained,
    previous: {},
    settings: settings({ decimals: 4 }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'XYZ/USD': 1.2346 });
});

test('strategy priority: the source listed first in priorities wins within the winning group', () => {
  const { table } = evaluate({
    retained: xyzRetained(),
    previous: {},
    settings: settings({ strategy: 'priority', priorities: ['Binance', 'CoinLore', 'CoinPaprika'] }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'XYZ/USD': 100 });
});

test('strategy priority: unlisted sources rank below every listed one (spec §8; not 4.1 behaviour)', () => {
  const { table } = evaluate({
    retained: xyzRetained(),
    previous: {},
    // CoinPaprika (101) and Binance (100) are unlisted; a disabled source's entry is inert.
    settings: settings({ strategy: 'priority', priorities: ['Coingecko', 'CoinLore'] }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'XYZ/USD': 102 });
});

test('strategy priority: among unlisted sources the earliest member in ascending price wins', () => {
  const { table } = evaluate({
    retained: xyzRetained(),
    previous: {},
    settings: settings({ strategy: 'priority', priorities: [] }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'XYZ/USD': 100 });
});

test('strategy priority only considers the winning group (H.11 without the threshold change: conflict)', () => {
  const retained = cycle({}, 0, [
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.05)]],
  ]);
  const s = settings({ strategy: 'priority', priorities: ['CoinLore', 'CoinPaprika'] });
  const rejected = evaluate({ retained, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(rejected.table, {});
  // H.11: threshold 200 puts both in one group; the highest-priority source's price is served.
  const merged = evaluate({
    retained,
    previous: {},
    settings: { ...s, rateDifferencePercentThreshold: 200 },
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(merged.table, { 'ADM/USD': 0.05 });
});

test('strategy weight: the member with the largest weight; ties go to the lowest price', () => {
  const heavy = evaluate({
    retained: xyzRetained(),
    previous: {},
    settings: settings({ strategy: 'weight', weights: { CoinPaprika: 10, CoinLore: 30, Binance: 20 } }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(heavy.table, { 'XYZ/USD': 102 });
  const tie = evaluate({
    retained: xyzRetained(),
    previous: {},
    settings: settings({ strategy: 'weight', weights: { CoinPaprika: 20, CoinLore: 20, Binance: 5 } }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(tie.table, { 'XYZ/USD': 101 });
});

test('strategies apply to the winning group only', () => {
  // 100, 101, 102 from three sources against 150 from one: the 150 group loses 30 to 10.
  const retained = cycle(xyzRetained(), 0, [['Coingecko', [usd('XYZ', 150)]]]);
  const { table } = evaluate({
    retained,
    previous: {},
    settings: settings({ strategy: 'max' }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, { 'XYZ/USD': 102 });
});

// ---------------------------------------------------------------------------------------------
// Conflicts and the previous resolved value (notes B.10.3, B.2.4d)

test('conflict with a previous value inside the window: the previous value is served, fallback previous', () => {
  const s = settings();
  let retained = cycle({}, 0, [
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.031)]],
  ]);
  const first = evaluate({ retained, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(first.table, { 'ADM/USD': 0.03 });

  retained = cycle(retained, 10 * MIN, [['CoinLore', [usd('ADM', 0.05)]]]);
  const second = evaluate({ retained, previous: first.resolved, settings: s, now: 10 * MIN, lifetimeMs: 60 * MIN });
  assert.deepEqual(second.table, { 'ADM/USD': 0.03 });
  assert.deepEqual(second.issues, [
    {
      pair: 'ADM/USD',
      kind: 'conflict',
      message: 'The difference between sources is too big: 0.03 (CoinPaprika) against 0.05 (CoinLore)',
      fallback: 'previous',
    },
  ]);
  // The fallback is not a new resolution: it keeps its original receivedAt.
  assert.deepEqual(second.resolved, { 'ADM/USD': { value: 0.03, receivedAt: 0 } });
});

test('conflict whose previous value has left the window: nothing is served, fallback none', () => {
  const retained = cycle({}, 50 * MIN, [
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.05)]],
  ]);
  const previous: ResolvedRates = { 'ADM/USD': { value: 0.04, receivedAt: 0 } };
  const { table, issues, resolved } = evaluate({
    retained,
    previous,
    settings: settings(),
    now: 60 * MIN,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(table, {});
  assert.deepEqual(issues.map((i) => [i.kind, i.fallback]), [['conflict', 'none']]);
  // The stale entry stays, so the caller can tell "persisted for more than N min" from "never had a rate".
  assert.deepEqual(resolved, previous);
});

test('a per-request window is applied to the fallback too', () => {
  const retained = cycle({}, 10 * MIN, [
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.05)]],
  ]);
  const previous: ResolvedRates = { 'ADM/USD': { value: 0.04, receivedAt: 0 } };
  const wide = evaluate({ retained, previous, settings: settings(), now: 11 * MIN, lifetimeMs: 60 * MIN });
  assert.deepEqual(wide.table, { 'ADM/USD': 0.04 });
  const narrow = evaluate({ retained, previous, settings: settings(), now: 11 * MIN, lifetimeMs: 5 * MIN });
  assert.deepEqual(narrow.table, {});
});

test('triangulation uses a fallback value like any other served pair', () => {
  const retained = cycle({}, 0, [
    ['CurrencyApi', [usd('USD', 1), usd('EUR', 1.25)]],
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.05)]],
  ]);
  const { table } = evaluate({
    retained,
    previous: { 'ADM/USD': { value: 0.04, receivedAt: 0 } },
    settings: settings({ baseCoins: ['USD', 'EUR'], allCoins: ['EUR', 'ADM'] }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.equal(table['ADM/USD'], 0.04);
  assert.equal(table['ADM/EUR'], 0.032);
});

// ---------------------------------------------------------------------------------------------
// Carry-over (acceptance H.26, notes F.6)

test('H.26: the only source of ADM fails in cycle 2; snapshot 2 still has ADM/USD with the cycle-1 value', () => {
  const s = settings({ minSources: 2, coverage: { 'ADM/USD': 1, 'BTC/USD': 2 } });
  let retained = cycle({}, 0, [
    ['CoinPaprika', [usd('BTC', 60000), usd('ADM', 0.03)]],
    ['Binance', [usd('BTC', 60100)]],
  ]);
  const first = evaluate({ retained, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(first.table, { 'BTC/USD': 60000, 'ADM/USD': 0.03 });

  // Cycle 2: CoinPaprika fails (not applied), Binance succeeds.
  retained = cycle(retained, 10 * MIN, [['Binance', [usd('BTC', 60200)]]]);
  const second = evaluate({ retained, previous: first.resolved, settings: s, now: 10 * MIN, lifetimeMs: 60 * MIN });
  assert.deepEqual(second.table, { 'BTC/USD': 60000, 'ADM/USD': 0.03 });
  assert.deepEqual(second.issues, []);

  // …until CoinPaprika's quotes age out: ADM has nothing fresh, BTC keeps only Binance's (1 < 2).
  const later = evaluate({ retained, previous: second.resolved, settings: s, now: 60 * MIN, lifetimeMs: 60 * MIN });
  assert.deepEqual(later.table, {});
  assert.deepEqual(
    later.issues.map((i) => [i.pair, i.kind, i.message]),
    [
      ['BTC/USD', 'fewerSources', 'expected 2, but got 1'],
      ['ADM/USD', 'noFreshQuotes', 'No prices for the pair available'],
    ],
  );
});

// ---------------------------------------------------------------------------------------------
// Key order, purity, empty input

test('table key order follows SOURCE_ORDER of the sources, whatever order the quotes were applied in', () => {
  const retained = cycle({}, 0, [
    ['Binance', [usd('DOGE', 0.1), usd('BTC', 60000)]],
    ['CoinPaprika', [usd('ADM', 0.03), usd('BTC', 60010)]],
    ['CurrencyApi', [usd('EUR', 1.25)]],
    ['SomeFutureSource', [usd('NEW', 2)]],
  ]);
  const { table } = evaluate({ retained, previous: {}, settings: settings(), now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(Object.keys(table), ['EUR/USD', 'BTC/USD', 'ADM/USD', 'DOGE/USD', 'NEW/USD']);
});

test('equal prices: ties keep connector order, so priority ties and the conflict message are deterministic', () => {
  const a = cycle({}, 0, [
    ['CoinLore', [usd('ADM', 0.05)]],
    ['Binance', [usd('ADM', 0.03)]],
    ['CoinPaprika', [usd('ADM', 0.03)]],
  ]);
  const b = cycle({}, 0, [
    ['CoinPaprika', [usd('ADM', 0.03)]],
    ['CoinLore', [usd('ADM', 0.05)]],
    ['Binance', [usd('ADM', 0.03)]],
  ]);
  const s = settings({ groupPercentage: 200 });
  const ra = evaluate({ retained: a, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  const rb = evaluate({ retained: b, previous: {}, settings: s, now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(ra.issues, rb.issues);
  assert.equal(
    ra.issues[0]?.message,
    'The difference between sources is too big: 0.03 (CoinPaprika);0.03 (Binance) against 0.05 (CoinLore)',
  );
});

test('evaluate never mutates its input and returns plain, serializable data', () => {
  const retained = deepFreeze(b11Cycle1());
  const previous = deepFreeze({ 'ADM/USD': { value: 0.04, receivedAt: 0 } });
  const s = deepFreeze(b11Settings());
  const result = evaluate({ retained, previous, settings: s, now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(JSON.parse(JSON.stringify(result)), result);
  assert.deepEqual(structuredClone(result), result);
  assert.equal(Object.getPrototypeOf(result.table), Object.prototype);
  assert.equal(Object.getPrototypeOf(result.resolved), Object.prototype);
});

test('empty input: empty table, no issues, previous carried unchanged', () => {
  const empty = evaluate({
    retained: {},
    previous: {},
    settings: settings({ baseCoins: ['USD', 'EUR'], allCoins: ['BTC'] }),
    now: 0,
    lifetimeMs: 60 * MIN,
  });
  assert.deepEqual(empty, { table: {}, resolved: {}, issues: [] });

  const previous: ResolvedRates = { 'BTC/USD': { value: 1, receivedAt: 0 } };
  const carried = evaluate({ retained: {}, previous, settings: settings(), now: 0, lifetimeMs: 60 * MIN });
  assert.deepEqual(carried, { table: {}, resolved: previous, issues: [] });
});
