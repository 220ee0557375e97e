// Amounts, passphrases and votes (src/console/amount.ts; notes C.2, H57, H59).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseAmount, parseVotes, validatePassphrase } from '../../src/console/amount.js';

test('integer sats, or ADM with up to 8 decimals converted exactly', () => {
  assert.equal(parseAmount('100'), 100);
  assert.equal(parseAmount('1.5ADM'), 150_000_000);
  assert.equal(parseAmount('0.00000001 ADM'), 1);
  assert.equal(parseAmount('0.1ADM'), 10_000_000);
  for (const bad of ['1.5', '-1', '1e3', 'ten', '1.123456789ADM', '']) assert.throws(() => parseAmount(bad), /^WrongParameterError: Wrong 'amount' parameter/, bad);
  assert.throws(() => parseAmount('99999999999ADM'), /more than can be sent/);
});

test('a plain decimal is the original\'s error, then how to write it (issue 28: the original\'s users asked)', () => {
  const hint = (value: string, example: string) => `Wrong 'amount' parameter: ${value}. Write a whole number of 1/10^8 ADM units, or a value ending in ADM (${example})`;
  assert.throws(() => parseAmount('0.001'), (error: Error) => error.message === hint('0.001', '0.001ADM'));
  assert.throws(() => parseAmount('ten'), (error: Error) => error.message === hint('ten', '1.5ADM'));
  assert.throws(() => parseAmount('0.000000001'), (error: Error) => error.message === hint('0.000000001', '1.5ADM'), 'an example the ADM form takes');
  assert.throws(() => parseAmount('1.123456789ADM'), (error: Error) => error.message === "Wrong 'amount' parameter: 1.123456789ADM");
});

test('passphrases longer than 30 characters; the value never appears in the error', () => {
  const short = 'too short to be real';
  assert.throws(() => validatePassphrase(short), (error: Error) => error.message === "Wrong 'passphrase' parameter" && !error.message.includes(short));
  assert.equal(validatePassphrase('x'.repeat(31)), 'x'.repeat(31));
});

test('votes: + by default, at most 33', () => {
  assert.deepEqual(parseVotes(['lion', '-U123', `+${'a'.repeat(64)}`]), [
    { sign: '+', target: 'lion' },
    { sign: '-', target: 'U123' },
    { sign: '+', target: 'a'.repeat(64) },
  ]);
  assert.throws(() => parseVotes(Array.from({ length: 34 }, () => 'x')), /at most 33/);
  assert.throws(() => parseVotes([]), /Wrong 'votes' parameter/);
});
