// The /get query cache of the rates listener (http/rates/rates.routes.ts ParsedQueries): a string is parsed once,
// refusals are kept like answers, and the cache stays bounded whatever strings clients send; and the prepared answers
// (PreparedAnswers) /get hands out on uWS.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ParsedQueries } from '../../../http/rates/rates.routes.js';
import { parseGetQuery } from '../../../src/rates/query.js';

test('each query string is parsed once; refusals are kept too; the result is what the parser says', () => {
  let parses = 0;
  const queries = new ParsedQueries((raw: string) => {
    parses++;
    return parseGetQuery(raw);
  });
  for (let i = 0; i < 3; i++) {
    assert.deepEqual(queries.get('coin=BTC'), parseGetQuery('coin=BTC'));
    assert.deepEqual(queries.get('nope=1'), parseGetQuery('nope=1'));
  }
  assert.equal(queries.get('nope=1').ok, false);
  assert.equal(parses, 2);
});

test('bounded: past MAX_ENTRIES distinct strings it starts over, and still answers right', () => {
  let parses = 0;
  const queries = new ParsedQueries((raw: string) => {
    parses++;
    return raw.length;
  });
  for (let i = 0; i <= ParsedQueries.MAX_ENTRIES; i++) assert.equal(queries.get(`q${i}`), `q${i}`.length);
  assert.equal(parses, ParsedQueries.MAX_ENTRIES + 1);
  // The first string was dropped when the cache started over: parsed again, same answer.
  assert.equal(queries.get('q0'), 2);
  assert.equal(parses, ParsedQueries.MAX_ENTRIES + 2);
});

test('prepared /get answers: the date is written into one encoded answer per result and last_updated', async () => {
  const { PreparedAnswers } = await import('../../../http/rates/rates.routes.js');
  const prepared = new PreparedAnswers();
  const result = '{"BTC/USD":60000}';
  const first = prepared.answer(result, 1_700_000_000_000, 1_764_000_000_001)!;
  assert.deepEqual(JSON.parse(first.toString()), { success: true, date: 1_764_000_000_001, result: { 'BTC/USD': 60000 }, last_updated: 1_700_000_000_000, version: '4.2.0' });
  // The same memory, the next date: the key order of the original envelope is kept.
  const second = prepared.answer(result, 1_700_000_000_000, 1_764_000_000_999)!;
  assert.equal(second, first);
  assert.equal(second.toString(), '{"success":true,"date":1764000000999,"result":{"BTC/USD":60000},"last_updated":1700000000000,"version":"4.2.0"}');
  // A new last_updated prepares anew; a date of another width (a test clock) is not prepared at all.
  assert.notEqual(prepared.answer(result, 1_700_000_600_000, 1_764_000_001_000), first);
  assert.equal(prepared.answer(result, null, 5), undefined);
  // Too large for one write: not prepared.
  assert.equal(prepared.answer(`"${'x'.repeat(70 * 1024)}"`, null, 1_764_000_000_000), undefined);
  // Dates that are not 13-digit integers (test clocks, fractions) take the ordinary path.
  for (const date of [999_999_999_999, 10_000_000_000_000, 1_764_000_000_000.5, -1_764_000_000_000, Number.NaN]) {
    assert.equal(prepared.answer(result, null, date), undefined, String(date));
  }
});

test('prepared /get replies: one reply object per prepared answer, handed out again with its body re-dated', async () => {
  const { PreparedAnswers } = await import('../../../http/rates/rates.routes.js');
  const prepared = new PreparedAnswers();
  const result = '{"ETH/USD":3000}';
  const first = prepared.reply(result, 1_700_000_000_000, 1_764_000_000_000)!;
  assert.equal(first.status, 200);
  assert.equal(first.headers?.['content-type'], 'application/json; charset=utf-8');
  assert.equal(JSON.parse(String(first.body)).date, 1_764_000_000_000);
  const second = prepared.reply(result, 1_700_000_000_000, 1_799_999_999_999)!;
  assert.equal(second, first, 'no reply object per request');
  assert.equal(second.body, prepared.answer(result, 1_700_000_000_000, 1_799_999_999_999));
  assert.equal(
    String(second.body),
    '{"success":true,"date":1799999999999,"result":{"ETH/USD":3000},"last_updated":1700000000000,"version":"4.2.0"}',
  );
  // Every date of the 13-digit range, digit by digit.
  for (const date of [1_000_000_000_000, 1_234_567_890_123, 9_999_999_999_999]) {
    assert.equal(JSON.parse(String(prepared.reply(result, 1_700_000_000_000, date)!.body)).date, date);
  }
});
