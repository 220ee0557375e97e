// Retained quotes and the coverage map: docs/notes/rates.md B.1.4, B.2.2, B.10.1, F.5, F.6; acceptance H.23, H.25.

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { applySourceQuotes, computeCoverage, evaluate, type RetainedQuotes } from '../../src/rates/merge.js';

test('a source replaces only its own entries for the pairs it returned', () => {
  let retained: RetainedQuotes = {};
  retained = applySourceQuotes(retained, 'CoinPaprika', [{ pair: 'BTC/USD', price: 60000 }, { pair: 'ADM/USD', price: 0.03 }], 0, {});
  retained = applySourceQuotes(retained, 'CoinLore', [{ pair: 'BTC/USD', price: 61000 }], 0, {});
  retained = applySourceQuotes(retained, 'CoinPaprika', [{ pair: 'BTC/USD', price: 60200 }], 600_000, {});
  assert.deepEqual(retained, {
    'BTC/USD': {
      CoinPaprika: { price: 60200, receivedAt: 600_000 },
      CoinLore: { price: 61000, receivedAt: 0 },
    },
    // Not returned this time: CoinPaprika's older ADM quote stays until it ages out.
    'ADM/USD': { CoinPaprika: { price: 0.03, receivedAt: 0 } },
  });
});

test('applySourceQuotes never mutates its input and shares untouched pairs', () => {
  const before = Object.freeze({
    'BTC/USD': Object.freeze({ CoinLore: Object.freeze({ price: 61000, receivedAt: 0 }) }),
    'ETH/USD': Object.freeze({ CoinLore: Object.freeze({ price: 3000, receivedAt: 0 }) }),
  });
  const after = applySourceQuotes(before, 'Binance', [{ pair: 'BTC/USD', price: 60500 }], 5, {});
  assert.deepEqual(before['BTC/USD'], { CoinLore: { price: 61000, receivedAt: 0 } });
  assert.equal(after['ETH/USD'], before['ETH/USD']);
  assert.deepEqual(after['BTC/USD'], {
    CoinLore: { price: 61000, receivedAt: 0 },
    Binance: { price: 60500, receivedAt: 5 },
  });
  assert.deepEqual(structuredClone(after), after);
});

test('non-finite, non-positive and malformed quotes are dropped; a source with nothing valid changes nothing', () => {
  const quotes = [
    { pair: 'A/USD', price: NaN },
    { pair: 'B/USD', price: Infinity },
    { pair: 'C/USD', price: 0 },
    { pair: 'D/USD', price: -1 },
    { pair: 'E/USD', price: '5' as unknown as number },
    { pair: 'NOSLASH', price: 1 },
    { pair: '/USD', price: 1 },
    { pair: 'A/B/C', price: 1 },
  ];
  const retained: RetainedQuotes = { 'BTC/USD': { CoinLore: { price: 1, receivedAt: 0 } } };
  assert.equal(applySourceQuotes(retained, 'CoinPaprika', quotes, 0, {}), retained);
  assert.equal(applySourceQuotes(retained, 'CoinPaprika', [], 0, {}), retained);
});

test('an invalid price does not erase the source\'s previous good quote for that pair', () => {
  let retained = applySourceQuotes({}, 'CoinLore', [{ pair: 'BTC/USD', price: 61000 }], 0, {});
  retained = applySourceQuotes(retained, 'CoinLore', [{ pair: 'BTC/USD', price: NaN }], 10, {});
  assert.deepEqual(retained, { 'BTC/USD': { CoinLore: { price: 61000, receivedAt: 0 } } });
});

test('within one call a later quote for the same pair replaces an earlier one', () => {
  const retained = applySourceQuotes(
    {},
    'MOEX',
    [
      { pair: 'USD/RUB', price: 90 },
      { pair: 'usd/rub', price: 91 },
    ],
    0,
    {},
  );
  assert.deepEqual(retained, { 'USD/RUB': { MOEX: { price: 91, receivedAt: 0 } } });
});

test('H.23 mappings: CWIF → $CWIF on either side, keys matched case-insensitively, symbols uppercased', () => {
  const quotes = [
    { pair: 'CWIF/USD', price: 0.000001 },
    { pair: 'btc/usd', price: 60000 },
    { pair: 'USD/cwif', price: 1_000_000 },
  ];
  const variants: Array<Record<string, string>> = [{ CWIF: '$CWIF' }, { cwif: '$CWIF' }, { Cwif: '$cwif' }];
  for (const mappings of variants) {
    const retained = applySourceQuotes({}, 'CoinPaprika', quotes, 0, mappings);
    assert.deepEqual(Object.keys(retained), ['$CWIF/USD', 'BTC/USD', 'USD/$CWIF']);
  }
  const retained = applySourceQuotes({}, 'CoinPaprika', quotes, 0, { CWIF: '$CWIF' });
  const { table } = evaluate({
    retained,
    previous: {},
    settings: {
      decimals: 12,
      strategy: 'priority',
      rateDifferencePercentThreshold: 25,
      groupPercentage: 65,
      minSources: 2,
      priorities: [],
      weights: {},
      baseCoins: [],
      allCoins: [],
      coverage: computeCoverage([{ name: 'CoinPaprika', coins: ['CWIF', 'BTC'] }], { CWIF: '$CWIF' }, 2).coverage,
    },
    now: 0,
    lifetimeMs: 60_000,
  });
  assert.equal(table['$CWIF/USD'], 0.000001);
});

test('computeCoverage: COIN/USD once per enabled source, after mappings, USD excluded; belowMinimum for the startup warning', () => {
  const result = computeCoverage(
    [
      { name: 'CurrencyApi', coins: ['USD', 'EUR', 'RUB'] },
      { name: 'ExchangeRateApi', coins: ['usd', 'eur'] },
      { name: 'CoinPaprika', coins: ['BTC', 'ADM', 'CWIF', 'BTC'] },
      { name: 'CoinLore', coins: ['BTC', 'ADM', '$CWIF'] },
      { name: 'Binance', coins: ['BTC'] },
    ],
    { cwif: '$CWIF' },
    2,
  );
  assert.deepEqual(result.coverage, {
    'EUR/USD': 2,
    'RUB/USD': 1,
    'BTC/USD': 3,
    'ADM/USD': 2,
    '$CWIF/USD': 2,
  });
  assert.deepEqual(result.allCoins, ['EUR', 'RUB', 'BTC', 'ADM', '$CWIF']);
  assert.deepEqual(result.belowMinimum, [{ pair: 'RUB/USD', sources: 1 }]);
});

test('computeCoverage with no connectors is empty', () => {
  assert.deepEqual(computeCoverage([], {}, 2), { coverage: {}, allCoins: [], belowMinimum: [] });
});
