// Rounding and triangulation: docs/notes/rates.md B.8, F.17, F.18; acceptance H.12, H.13.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { applySourceQuotes, evaluate, roundTo, type RetainedQuotes } from '../../src/rates/merge.js';
import { triangulate } from '../../src/rates/triangulate.js';
import type { MergeSettings, Quote } from '../../src/rates/types.js';

function settings(overrides: Partial<MergeSettings>): MergeSettings {
  return {
    decimals: 12,
    strategy: 'priority',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 1,
    priorities: [],
    weights: {},
    baseCoins: [],
    allCoins: [],
    coverage: {},
    ...overrides,
  };
}

test('roundTo rounds like the original (+value.toFixed(decimals)) and keeps non-finite values non-finite', () => {
  assert.equal(roundTo(1 / 60000, 12), 0.000016666667);
  assert.equal(roundTo(1.25 / 60000, 12), 0.000020833333);
  assert.equal(roundTo(0.1 + 0.2, 12), 0.3);
  assert.equal(roundTo(2.5, 0), 3);
  assert.equal(roundTo(123.456, 2), 123.46);
  assert.equal(roundTo(0.00004, 4), 0);
  assert.ok(Number.isNaN(roundTo(NaN, 12)));
  assert.equal(roundTo(Infinity, 12), Infinity);
});

function fiatAndBtc(codes: readonly string[]): RetainedQuotes {
  // Fiat fakes give 0.8 EUR per USD (the connector inverts to EUR/USD 1.25); USD in `codes` yields USD/USD.
  const fiat: Quote[] = [];
  if (codes.includes('USD')) fiat.push({ pair: 'USD/USD', price: 1 });
  fiat.push({ pair: 'EUR/USD', price: 1 / 0.8 });
  let retained = applySourceQuotes({}, 'CurrencyApi', fiat, 0, {});
  retained = applySourceQuotes(retained, 'CoinPaprika', [{ pair: 'BTC/USD', price: 60000 }], 0, {});
  return retained;
}

test('H.12: EUR 0.8 per USD and BTC 60000 → BTC/EUR 48000, EUR/USD 1.25', () => {
  const { table } = evaluate({
    retained: fiatAndBtc(['EUR']),
    previous: {},
    settings: settings({ baseCoins: ['USD', 'EUR'], allCoins: ['EUR', 'BTC'] }),
    now: 0,
    lifetimeMs: 60_000,
  });
  assert.equal(table['EUR/USD'], 1.25);
  assert.equal(table['BTC/EUR'], 48000);
  assert.equal(table['EUR/EUR'], 1);
  // Without USD/USD no source states USD in EUR, so USD/EUR is not derived (B.8).
  assert.equal('USD/EUR' in table, false);
});

test('H.13: with USD in codes and BTC a base coin, EUR/BTC = 1.25/60000 and USD/BTC = 1/60000 at 12 decimals', () => {
  const { table } = evaluate({
    retained: fiatAndBtc(['USD', 'EUR']),
    previous: {},
    settings: settings({ baseCoins: ['USD', 'EUR', 'BTC'], allCoins: ['EUR', 'BTC'] }),
    now: 0,
    lifetimeMs: 60_000,
  });
  assert.equal(table['EUR/BTC'], 0.000020833333);
  assert.equal(table['USD/BTC'], 0.000016666667);
  assert.equal(table['USD/EUR'], 0.8);
  assert.equal(table['BTC/BTC'], 1);
});

test('triangulation: direct quotes win over derived ones (MOEX EUR/RUB), and USD/BASE may itself be direct', () => {
  const out = triangulate(
    { 'USD/RUB': 90, 'EUR/USD': 1.25, 'EUR/RUB': 99, 'BTC/USD': 60000 },
    ['RUB'],
    ['EUR', 'BTC'],
    12,
  );
  assert.deepEqual(out, {
    'USD/RUB': 90,
    'EUR/USD': 1.25,
    'EUR/RUB': 99,
    'BTC/USD': 60000,
    'BTC/RUB': 5400000,
  });
});

test('triangulation: a base nobody quotes is skipped; derived pairs exist only for coins whose COIN/USD survived', () => {
  const out = triangulate({ 'BTC/USD': 60000, 'EUR/USD': 1.25 }, ['JPY', 'EUR'], ['BTC', 'ADM'], 12);
  assert.deepEqual(out, { 'BTC/USD': 60000, 'EUR/USD': 1.25, 'EUR/EUR': 1, 'BTC/EUR': 48000 });
});

test('triangulation: derived values that round to 0 are dropped', () => {
  const out = triangulate({ 'BTC/USD': 60000, 'SHIB/USD': 0.00001 }, ['BTC'], ['SHIB'], 8);
  // SHIB/BTC = 0.00001 / 60000 ≈ 1.7e-10 → 0 at 8 decimals.
  assert.deepEqual(out, { 'BTC/USD': 60000, 'SHIB/USD': 0.00001, 'BTC/BTC': 1 });
});

test('triangulation returns a new table and leaves its input alone', () => {
  const input = Object.freeze({ 'BTC/USD': 60000, 'EUR/USD': 1.25 });
  const out = triangulate(input, ['EUR'], ['BTC'], 12);
  assert.notEqual(out, input);
  assert.deepEqual(input, { 'BTC/USD': 60000, 'EUR/USD': 1.25 });
});
