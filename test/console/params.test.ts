// The shapes the console checks before asking a node (src/console/params.ts, src/console/amount.ts; notes C.2):
// addresses, ids, heights, delegate names, lookup keys and vote targets, with the original's "Wrong '<name>'
// parameter" wording, and errors that never repeat a passphrase.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseAmount, parseVotes } from '../../src/console/amount.js';
import { addressParam, delegateLookup, heightParam, idParam, isPassphrase, plainParam, shown, usernameParam, wrongParameter } from '../../src/console/params.js';

/** A public BIP-39 test mnemonic (notes D): stands for a passphrase pasted into the wrong field. */
const PASSPHRASE = `${'abandon '.repeat(11)}about`;
const SHORT_WORDS = 'short but secret';
const KEY = 'ab'.repeat(32);

/** Asserts the call is refused with exactly this message, which repeats neither secret. */
function refused(call: () => unknown, message: string | RegExp) {
  assert.throws(call, (error: Error) => {
    if (typeof message === 'string') assert.equal(error.message, message);
    else assert.match(error.message, message);
    for (const secret of [PASSPHRASE, SHORT_WORDS]) assert.equal(error.message.includes(secret), false, error.message);
    return true;
  });
}

describe('what an error may repeat', () => {
  test('never a value the passphrase rule accepts, nor one with spaces or control characters', () => {
    assert.equal(isPassphrase(PASSPHRASE), true);
    assert.equal(shown(PASSPHRASE), undefined);
    assert.equal(shown('x'.repeat(31)), undefined, 'anything isPassphrase accepts');
    assert.equal(shown(SHORT_WORDS), undefined, 'words: a short passphrase');
    assert.equal(shown('a\nb'), undefined);
    assert.equal(shown({ toString: () => 'x' }), undefined);
    assert.equal(shown('U1x'), 'U1x');
    assert.equal(shown(12), '12');
    assert.equal(wrongParameter('address', PASSPHRASE).message, "Wrong 'address' parameter");
    assert.equal(wrongParameter('address', 'U1x').message, "Wrong 'address' parameter: U1x");
  });
});

describe('parameter shapes', () => {
  test('addresses: U and up to 20 digits', () => {
    assert.equal(addressParam('U1'), 'U1');
    assert.equal(addressParam('U18446744073709551615'), 'U18446744073709551615');
    refused(() => addressParam(PASSPHRASE), "Wrong 'address' parameter");
    refused(() => addressParam('u123'), "Wrong 'address' parameter: u123");
    refused(() => addressParam('U123&limit=1'), "Wrong 'address' parameter: U123&limit=1");
    refused(() => addressParam('', 'partnerAddress'), "Missing parameter 'partnerAddress'");
  });

  test('ids and heights: digits only, so & # ? = can never reach a node in one', () => {
    assert.equal(idParam('14185603163046885818'), '14185603163046885818');
    assert.equal(idParam(42), '42');
    assert.equal(heightParam('777'), '777');
    for (const bad of ['1&limit=5', '1#x', '1?x=1', 'id=1', 'missing', '-1', '1.5', '123456789012345678901']) refused(() => idParam(bad), /^Wrong 'id' parameter/);
    refused(() => idParam(SHORT_WORDS), "Wrong 'id' parameter");
    refused(() => idParam(PASSPHRASE, 'blockId'), "Wrong 'blockId' parameter");
    refused(() => heightParam('10&and:toHeight=99'), "Wrong 'height' parameter: 10&and:toHeight=99");
    refused(() => idParam(undefined), "Missing parameter 'id'");
  });

  test('delegate names: the registration rule; values the original never checked: plain text', () => {
    assert.equal(usernameParam('new_delegate'), 'new_delegate');
    refused(() => usernameParam(PASSPHRASE), "Wrong 'username' parameter");
    refused(() => usernameParam('Bad'), "Wrong 'username' parameter: Bad");
    assert.equal(plainParam('Any-Value_1&2', 'memo'), 'Any-Value_1&2');
    assert.equal(plainParam(KEY, 'memo'), KEY, 'long plain text (a public key) may be sent; a passphrase is words');
    refused(() => plainParam(PASSPHRASE, 'memo'), "Wrong 'memo' parameter");
    refused(() => plainParam(SHORT_WORDS, 'memo'), "Wrong 'memo' parameter");
    refused(() => plainParam('', 'memo'), "Missing parameter 'memo'");
  });

  test('the delegate lookup key is inferred from the shape, or given; only the key is checked, in the original\'s words', () => {
    assert.deepEqual(delegateLookup('U12345678'), { key: 'address', value: 'U12345678' });
    assert.deepEqual(delegateLookup(KEY), { key: 'publicKey', value: KEY });
    assert.deepEqual(delegateLookup('lion'), { key: 'username', value: 'lion' });
    assert.deepEqual(delegateLookup('lion', 'username'), { key: 'username', value: 'lion' });
    assert.deepEqual(delegateLookup('acc_delegate_one', 'address'), { key: 'address', value: 'acc_delegate_one' });
    assert.deepEqual(delegateLookup('U1', 'publicKey'), { key: 'publicKey', value: 'U1' });
    assert.deepEqual(delegateLookup('Not_a_Name'), { key: 'username', value: 'Not_a_Name' });
    refused(() => delegateLookup('lion', 'name'), "Invalid delegate lookup key 'name'. Use username, publicKey, or address");
    // The passphrase rule wins: a passphrase is never sent as the identifier, nor repeated as the key.
    refused(() => delegateLookup(PASSPHRASE), "Wrong 'username' parameter");
    refused(() => delegateLookup(SHORT_WORDS, 'address'), "Wrong 'address' parameter");
    refused(() => delegateLookup('lion', PASSPHRASE), 'Invalid delegate lookup key. Use username, publicKey, or address');
  });

  test('amounts and votes never repeat a passphrase; a vote names a public key, an address or a delegate', () => {
    refused(() => parseAmount(PASSPHRASE), "Wrong 'amount' parameter");
    refused(() => parseAmount(SHORT_WORDS), "Wrong 'amount' parameter");
    refused(() => parseAmount('1.5'), "Wrong 'amount' parameter: 1.5. Write a whole number of 1/10^8 ADM units, or a value ending in ADM (1.5ADM)");
    assert.deepEqual(parseVotes([`-${KEY}`, 'U1', '+lion']), [{ sign: '-', target: KEY }, { sign: '+', target: 'U1' }, { sign: '+', target: 'lion' }]);
    refused(() => parseVotes([`+${PASSPHRASE}`]), "Wrong 'votes' parameter");
    refused(() => parseVotes(['lion', SHORT_WORDS]), "Wrong 'votes' parameter");
    refused(() => parseVotes(['+Lion']), "Wrong 'votes' parameter: +Lion");
    refused(() => parseVotes(['+']), "Wrong 'votes' parameter: +");
  });
});
