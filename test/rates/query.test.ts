// Query validation of the rates read API: exact messages of spec §7 and notes A.1/A.2/F, first-issue
// precedence, normalisation (uppercasing, seconds → ms, limit cap).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HistoryQuery as PortHistoryQuery } from '../../storage/rates/history.js';
import {
  MAX_HISTORY_LIMIT,
  parseGetQuery,
  parseHistoryQuery,
  parseStatusQuery,
  type HistoryQuery,
} from '../../src/rates/query.js';

const NAN = 'Invalid input: expected number, received NaN';
const NOT_FINITE = 'Invalid input: expected number, received number';
const NOT_INT = 'Invalid input: expected int, received number';
const GT0 = 'Too small: expected number to be >0';
const GE0 = 'Too small: expected number to be >=0';
const TOO_LARGE = 'Timestamp is too large';
const COIN_LIST = 'Invalid coin name list';
const COIN = 'Invalid input';
const ARRAY = 'Invalid input: expected string, received array';
const AT_LEAST_ONE = 'At least one parameter is required';
const INTERVAL = "Invalid time interval: 'to' timestamp must be greater than or equal to 'from'";

function getMsg(raw: string): string {
  const r = parseGetQuery(raw);
  assert.equal(r.ok, false, `expected /get?${raw} to be rejected`);
  return r.ok ? '' : r.msg;
}

function historyMsg(raw: string): string {
  const r = parseHistoryQuery(raw);
  assert.equal(r.ok, false, `expected /getHistory?${raw} to be rejected`);
  return r.ok ? '' : r.msg;
}

function history(raw: string): HistoryQuery {
  const r = parseHistoryQuery(raw);
  if (!r.ok) assert.fail(`expected /getHistory?${raw} to pass, got ${r.msg}`);
  return r.query;
}

// ---------------------------------------------------------------- /get

test('/get: no parameters is the whole table', () => {
  assert.deepEqual(parseGetQuery(''), { ok: true });
  assert.deepEqual(parseGetQuery('?'), { ok: true });
});

test('/get: coin list is uppercased and split; URL-encoded comma and $ decode', () => {
  assert.deepEqual(parseGetQuery('coin=btc'), { ok: true, coins: ['BTC'] });
  assert.deepEqual(parseGetQuery('coin=btc,Eth,USD'), { ok: true, coins: ['BTC', 'ETH', 'USD'] });
  assert.deepEqual(parseGetQuery('coin=btc%2Ceth&rateLifetime=5'), { ok: true, coins: ['BTC', 'ETH'], rateLifetime: 5 });
  assert.deepEqual(parseGetQuery('coin=%24cwif'), { ok: true, coins: ['$CWIF'] });
  assert.deepEqual(parseGetQuery('coin=$CWIF,adm'), { ok: true, coins: ['$CWIF', 'ADM'] });
  assert.deepEqual(parseGetQuery('?coin=adm'), { ok: true, coins: ['ADM'] });
});

test('/get: wider symbol charset (spec §2.2, notes F.15)', () => {
  assert.deepEqual(parseGetQuery('coin=usdt.e,wrapped_btc,$cwif'), { ok: true, coins: ['USDT.E', 'WRAPPED_BTC', '$CWIF'] });
  // `-` is refused so that a pair written with the wrong separator is an error (notes H.34).
  assert.deepEqual(parseGetQuery('coin=a-b'), { ok: false, msg: 'Invalid coin name list' });
});

test('/get: invalid coin lists', () => {
  for (const raw of ['coin=', 'coin', 'coin=ADM/USD', 'coin=A,,B', 'coin=,A', 'coin=A,', 'coin=btc!eth', 'coin=btc+eth', 'coin=btc%20', 'coin=%2F']) {
    assert.equal(getMsg(raw), COIN_LIST, raw);
  }
});

test('/get: repeated coin is an array', () => {
  assert.equal(getMsg('coin=A&coin=B'), ARRAY);
});

test('/get: rateLifetime coerces like Number()', () => {
  assert.deepEqual(parseGetQuery('rateLifetime=30'), { ok: true, rateLifetime: 30 });
  assert.deepEqual(parseGetQuery('rateLifetime=0.5'), { ok: true, rateLifetime: 0.5 });
  assert.deepEqual(parseGetQuery('rateLifetime=60.0'), { ok: true, rateLifetime: 60 });
  assert.deepEqual(parseGetQuery('rateLifetime=1e1'), { ok: true, rateLifetime: 10 });
  assert.deepEqual(parseGetQuery('rateLifetime=%205%20'), { ok: true, rateLifetime: 5 });
  assert.deepEqual(parseGetQuery('rateLifetime=+5'), { ok: true, rateLifetime: 5 }); // '+' is a space
  assert.deepEqual(parseGetQuery('rateLifetime=0x10'), { ok: true, rateLifetime: 16 });
});

test('/get: rateLifetime errors', () => {
  assert.equal(getMsg('rateLifetime=abc'), NAN);
  assert.equal(getMsg('rateLifetime=5min'), NAN);
  assert.equal(getMsg('rateLifetime=1&rateLifetime=2'), NAN);
  assert.equal(getMsg('rateLifetime=0'), GT0);
  assert.equal(getMsg('rateLifetime=-5'), GT0);
  assert.equal(getMsg('rateLifetime=-0'), GT0);
  assert.equal(getMsg('rateLifetime='), GT0); // '' coerces to 0
  assert.equal(getMsg('rateLifetime=Infinity'), NOT_FINITE);
  assert.equal(getMsg('rateLifetime=-Infinity'), NOT_FINITE);
  assert.equal(getMsg('rateLifetime=1e999'), NOT_FINITE);
});

test('/get: unknown keys', () => {
  assert.equal(getMsg('foo=1'), 'Unrecognized key: "foo"');
  assert.equal(getMsg('coin=BTC&unknown=value'), 'Unrecognized key: "unknown"');
  assert.equal(getMsg('a=1&b=2'), 'Unrecognized keys: "a", "b"');
  assert.equal(getMsg('foo=1&foo=2'), 'Unrecognized key: "foo"');
  assert.equal(getMsg('Coin=btc'), 'Unrecognized key: "Coin"'); // keys are case-sensitive
  assert.equal(getMsg('limit=5'), 'Unrecognized key: "limit"');
  // JS property order, as zod's for…in sees the parsed object: integer-like keys first.
  assert.equal(getMsg('z=1&10=1&a=1&2=1'), 'Unrecognized keys: "2", "10", "z", "a"');
  assert.equal(getMsg('__proto__=1'), 'Unrecognized key: "__proto__"');
});

test('/get: field issues come first, in schema key order (coin, rateLifetime)', () => {
  assert.equal(getMsg('foo=1&rateLifetime=0'), GT0);
  assert.equal(getMsg('rateLifetime=0&coin=a/b'), COIN_LIST);
  assert.equal(getMsg('rateLifetime=x&coin=btc'), NAN);
});

// ---------------------------------------------------------------- /getHistory

test('/getHistory: at least one parameter', () => {
  assert.equal(historyMsg(''), AT_LEAST_ONE);
  assert.equal(historyMsg('?'), AT_LEAST_ONE);
  assert.equal(historyMsg('&&'), AT_LEAST_ONE);
});

test('/getHistory: limit alone is enough and defaults to 100', () => {
  assert.deepEqual(history('limit=5'), { limit: 5 });
  assert.deepEqual(history('coin=btc'), { coin: { kind: 'either', symbol: 'BTC' }, limit: 100 });
  assert.equal(MAX_HISTORY_LIMIT, 100);
});

test('/getHistory: coin forms map to filter kinds, uppercased', () => {
  assert.deepEqual(history('coin=btc').coin, { kind: 'either', symbol: 'BTC' });
  assert.deepEqual(history('coin=btc/').coin, { kind: 'base', symbol: 'BTC' });
  assert.deepEqual(history('coin=%2Fusd').coin, { kind: 'quote', symbol: 'USD' });
  assert.deepEqual(history('coin=adm%2Fusd').coin, { kind: 'pair', base: 'ADM', quote: 'USD' });
  assert.deepEqual(history('coin=adm/usd').coin, { kind: 'pair', base: 'ADM', quote: 'USD' });
  assert.deepEqual(history('coin=%24cwif/usd').coin, { kind: 'pair', base: '$CWIF', quote: 'USD' });
  assert.deepEqual(history('coin=$CWIF').coin, { kind: 'either', symbol: '$CWIF' });
  assert.deepEqual(history('coin=usdt.e/').coin, { kind: 'base', symbol: 'USDT.E' });
});

test('/getHistory: invalid coin is the union message', () => {
  for (const raw of ['coin=', 'coin=/', 'coin=ADM-USD', 'coin=//', 'coin=BTC//USD', 'coin=BTC/USD/EUR', 'coin=btc,eth', 'coin=btc!', 'coin=a+b']) {
    assert.equal(historyMsg(raw), COIN, raw);
  }
  // A repeated coin fails both union branches' string check → the union's message.
  assert.equal(historyMsg('coin=BTC&coin=ETH'), COIN);
});

test('/getHistory: seconds in, milliseconds out', () => {
  assert.deepEqual(history('from=1720471800&to=1720471900'), { fromMs: 1720471800000, toMs: 1720471900000, limit: 100 });
  assert.deepEqual(history('timestamp=1720471800'), { timestampMs: 1720471800000, limit: 100 });
  assert.deepEqual(history('from=1.5'), { fromMs: 1500, limit: 100 }); // fractional bounds allowed
  assert.deepEqual(history('coin=adm/usd&from=0&limit=10'), {
    coin: { kind: 'pair', base: 'ADM', quote: 'USD' },
    fromMs: 0,
    limit: 10,
  });
});

test('/getHistory: one-sided ranges and equal bounds are valid', () => {
  assert.deepEqual(history('from=100'), { fromMs: 100000, limit: 100 });
  assert.deepEqual(history('to=200'), { toMs: 200000, limit: 100 });
  assert.deepEqual(history('from=5&to=5'), { fromMs: 5000, toMs: 5000, limit: 100 });
  assert.deepEqual(history('timestamp=50&from=10&to=100'), { fromMs: 10000, toMs: 100000, timestampMs: 50000, limit: 100 });
});

test('/getHistory: zero is a real value, empty numeric coerces to 0', () => {
  assert.deepEqual(history('timestamp=0'), { timestampMs: 0, limit: 100 });
  assert.deepEqual(history('from=0&to=0'), { fromMs: 0, toMs: 0, limit: 100 });
  assert.deepEqual(history('from='), { fromMs: 0, limit: 100 });
  assert.deepEqual(history('timestamp='), { timestampMs: 0, limit: 100 });
  assert.ok(Object.is(history('from=-0').fromMs, 0), '-0 normalised');
  assert.equal(historyMsg('limit='), GT0);
});

test('/getHistory: limit', () => {
  assert.equal(history('limit=1').limit, 1);
  assert.equal(history('limit=100').limit, 100);
  assert.equal(history('limit=101').limit, 100); // capped, not rejected
  assert.equal(history('limit=1e6').limit, 100);
  assert.equal(history('limit=1e20').limit, 100);
  assert.equal(history('limit=2.0').limit, 2);
  assert.equal(historyMsg('limit=0'), GT0);
  assert.equal(historyMsg('limit=-3'), GT0);
  assert.equal(historyMsg('limit=-1e20'), GT0);
  assert.equal(historyMsg('limit=2.5'), NOT_INT);
  assert.equal(historyMsg('limit=abc'), NAN);
  assert.equal(historyMsg('limit=1&limit=2'), NAN);
  assert.equal(historyMsg('limit=Infinity'), NOT_FINITE);
});

test('/getHistory: timestamp', () => {
  assert.equal(historyMsg('timestamp=1.5'), NOT_INT);
  assert.equal(historyMsg('timestamp=-1'), GE0);
  assert.equal(historyMsg('timestamp=abc'), NAN);
  assert.equal(historyMsg('timestamp=1&timestamp=2'), NAN);
  assert.equal(historyMsg('timestamp=Infinity'), NOT_FINITE);
  assert.equal(historyMsg(`timestamp=${Number.MAX_SAFE_INTEGER}`), TOO_LARGE);
  assert.equal(historyMsg('timestamp=1e20'), TOO_LARGE);
  assert.equal(historyMsg('timestamp=9007199254741'), TOO_LARGE);
  assert.deepEqual(history('timestamp=9007199254740'), { timestampMs: 9007199254740000, limit: 100 });
  // Milliseconds sent by mistake are not detected (notes F.11): a far-future point in time.
  assert.deepEqual(history('timestamp=1700000000000'), { timestampMs: 1700000000000000, limit: 100 });
});

test('/getHistory: from / to', () => {
  for (const key of ['from', 'to']) {
    assert.equal(historyMsg(`${key}=-1`), GE0, key);
    assert.equal(historyMsg(`${key}=-0.5`), GE0, key);
    assert.equal(historyMsg(`${key}=x`), NAN, key);
    assert.equal(historyMsg(`${key}=1&${key}=2`), NAN, key);
    assert.equal(historyMsg(`${key}=Infinity`), NOT_FINITE, key);
    assert.equal(historyMsg(`${key}=9007199254741`), TOO_LARGE, key);
    assert.equal(historyMsg(`${key}=1e300`), TOO_LARGE, key);
  }
});

test('/getHistory: precedence on the same field (type, int, sign, size)', () => {
  assert.equal(historyMsg('limit=-2.5'), NOT_INT); // .int() is declared first and aborts later checks
  assert.equal(historyMsg('limit=0.5'), NOT_INT);
  assert.equal(historyMsg('timestamp=-1.5'), NOT_INT);
  assert.equal(historyMsg('timestamp=-1e20'), GE0);
  assert.equal(historyMsg('from=-1e300'), GE0);
});

test('/getHistory: from > to', () => {
  assert.equal(historyMsg('from=200&to=100'), INTERVAL);
  assert.equal(historyMsg('from=1.5&to=1'), INTERVAL);
  assert.equal(historyMsg('to=100&from=200&coin=btc'), INTERVAL);
});

test('/getHistory: unknown keys', () => {
  assert.equal(historyMsg('foo=1'), 'Unrecognized key: "foo"'); // not "At least one parameter…"
  assert.equal(historyMsg('coin=ADM&unknown=value'), 'Unrecognized key: "unknown"');
  assert.equal(historyMsg('foo=1&bar=2'), 'Unrecognized keys: "foo", "bar"');
  assert.equal(historyMsg('rateLifetime=5'), 'Unrecognized key: "rateLifetime"');
  assert.equal(historyMsg('Limit=5'), 'Unrecognized key: "Limit"');
  assert.equal(historyMsg('coin%5B%5D=btc'), 'Unrecognized key: "coin[]"'); // no qs-style brackets
});

test('/getHistory: first issue wins (fields in key order, then unknown keys, then refinements)', () => {
  assert.equal(historyMsg('foo=1&limit=0'), GT0);
  assert.equal(historyMsg('limit=0&foo=1'), GT0);
  assert.equal(historyMsg('limit=0&coin=/'), COIN); // coin is declared before limit
  assert.equal(historyMsg('limit=0&timestamp=1.5'), NOT_INT); // timestamp before limit
  assert.equal(historyMsg('timestamp=-1&to=-1'), GE0);
  assert.equal(historyMsg('to=abc&from=-1'), GE0); // from before to
  assert.equal(historyMsg('from=-1&to=abc'), GE0);
  assert.equal(historyMsg('to=abc&from=1'), NAN);
  assert.equal(historyMsg('from=200&to=100&foo=1'), 'Unrecognized key: "foo"'); // before the interval
  assert.equal(historyMsg('from=200&to=100&limit=0'), GT0);
});

test('/getHistory: the result is assignable to the history port query', () => {
  const q: PortHistoryQuery = history('coin=btc/usd&from=1&to=2&timestamp=2&limit=7');
  assert.deepEqual(q, { coin: { kind: 'pair', base: 'BTC', quote: 'USD' }, fromMs: 1000, toMs: 2000, timestampMs: 2000, limit: 7 });
});

// ---------------------------------------------------------------- /status

test('/status: no parameters accepted; any parameter is rejected (notes F.16)', () => {
  assert.deepEqual(parseStatusQuery(''), { ok: true });
  assert.deepEqual(parseStatusQuery('?'), { ok: true });
  assert.deepEqual(parseStatusQuery('x=1'), { ok: false, msg: 'Unrecognized key: "x"' });
  assert.deepEqual(parseStatusQuery('x=1&y'), { ok: false, msg: 'Unrecognized keys: "x", "y"' });
  assert.deepEqual(parseStatusQuery('coin=btc'), { ok: false, msg: 'Unrecognized key: "coin"' });
});
