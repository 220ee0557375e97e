// The /get query cache of the rates listener (http/rates/rates.routes.ts ParsedQueries): a string is parsed once,
// refusals are kept like answers, and the cache stays bounded whatever strings clients send.

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
