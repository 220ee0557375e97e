// The list methods' query items as the node receives them (src/console/query.ts; notes C.2): the original's
// rewrites (prefixes of paging and ordering options dropped, withoutDirectTransfers inverted into
// includeDirectTransfers, a repeated key's first place and last value) and the checks made before any node is asked.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeQuery, queryString } from '../../src/console/query.js';

/** The query string the node would receive for these items. */
const sent = (...items: unknown[]) => queryString(nodeQuery(items));
/** A public BIP-39 test mnemonic (notes D): stands for a passphrase pasted into the wrong field. */
const PASSPHRASE = `${'abandon '.repeat(11)}about`;
/** A short passphrase-like value: words, under the 31 characters the passphrase rule asks for. */
const SHORT_WORDS = 'short but secret';

/** Asserts the items are refused with the message, which never repeats the secret values. */
function refused(items: unknown[], message: string) {
  assert.throws(
    () => nodeQuery(items),
    (error: Error) => {
      assert.equal(error.name, 'WrongParameterError');
      assert.equal(error.message, message);
      for (const secret of [PASSPHRASE, SHORT_WORDS, 'abandon']) assert.equal(error.message.includes(secret), false, error.message);
      return true;
    },
    JSON.stringify(items),
  );
}

describe('query items: the original rewrites', () => {
  test('withoutDirectTransfers is sent inverted as includeDirectTransfers, never as itself', () => {
    assert.equal(sent('withoutDirectTransfers=1'), 'includeDirectTransfers=0');
    assert.equal(sent('withoutDirectTransfers=0'), 'includeDirectTransfers=1');
    assert.equal(sent('withoutDirectTransfers=true'), 'includeDirectTransfers=0');
    assert.equal(sent('withoutDirectTransfers=FALSE'), 'includeDirectTransfers=1');
    assert.equal(sent('senderId=U1', 'withoutDirectTransfers=1', 'limit=5'), 'senderId=U1&limit=5&includeDirectTransfers=0');
    // An explicit includeDirectTransfers is the one that counts; the old filter is dropped.
    assert.equal(sent('withoutDirectTransfers=1', 'includeDirectTransfers=1'), 'includeDirectTransfers=1');
    assert.equal(sent('includeDirectTransfers=0,withoutDirectTransfers=0'), 'includeDirectTransfers=0');
    // A prefixed one is an option like the others: its prefix goes, then it is inverted.
    assert.equal(sent('and:withoutDirectTransfers=1'), 'includeDirectTransfers=0');
    assert.equal(sent('or:withoutDirectTransfers=0'), 'includeDirectTransfers=1');
  });

  test('a direct-transfer flag it cannot invert is kept as it is; of several, the node gets one (issue 28, the original\'s tests)', () => {
    assert.equal(sent('withoutDirectTransfers=yes'), 'includeDirectTransfers=yes');
    assert.equal(sent('includeDirectTransfers=maybe'), 'includeDirectTransfers=maybe');
    assert.equal(sent('withoutDirectTransfers=1', 'and:withoutDirectTransfers=0', 'or:includeDirectTransfers=1', 'or:withoutDirectTransfers=1'), 'includeDirectTransfers=1');
  });

  test('and:/or: on paging, ordering and output options are dropped; on filters they are kept', () => {
    assert.equal(sent('and:limit=5'), 'limit=5');
    assert.equal(sent('or:orderBy=timestamp:asc'), 'orderBy=timestamp:asc');
    assert.equal(sent('and:offset=20', 'or:returnAsset=1', 'and:returnUnconfirmed=1', 'or:includeDirectTransfers=1', 'and:userId=U42'), 'offset=20&returnAsset=1&returnUnconfirmed=1&includeDirectTransfers=1&userId=U42');
    assert.equal(sent('senderId=U1', 'and:fromHeight=10', 'or:recipientId=U2', 'and:limit=5'), 'senderId=U1&and:fromHeight=10&or:recipientId=U2&limit=5');
  });

  test('commas and & separate items; a repeated key keeps its first place and its last value', () => {
    assert.equal(sent('limit=10,orderBy=height:desc'), 'limit=10&orderBy=height:desc');
    assert.equal(sent('types=8&orderBy=timestamp:desc&returnUnconfirmed=1'), 'types=8&orderBy=timestamp:desc&returnUnconfirmed=1');
    assert.equal(sent('limit=5', 'orderBy=timestamp:desc', 'and:limit=7'), 'limit=7&orderBy=timestamp:desc');
    assert.equal(sent('', 'limit=1,'), 'limit=1');
    assert.equal(sent(), '');
  });
});

describe('query items: checked before any node is asked', () => {
  test('known keys must have their shape; the value is repeated only when it is safe to', () => {
    refused(['senderId=U1x'], "Wrong 'senderId' parameter: U1x");
    refused(['and:blockId=12a'], "Wrong 'blockId' parameter: 12a");
    refused(['fromHeight=-1'], "Wrong 'fromHeight' parameter: -1");
    refused(['limit=ten'], "Wrong 'limit' parameter: ten");
    refused(['orderBy=timestamp:sideways'], "Wrong 'orderBy' parameter: timestamp:sideways");
    refused([`senderPublicKey=${'a'.repeat(63)}`], "Wrong 'senderPublicKey' parameter");
    // A passphrase where an address belongs: refused, not repeated, not sent.
    refused([`senderId=${PASSPHRASE}`], "Wrong 'senderId' parameter");
    refused([`recipientId=${SHORT_WORDS}`], "Wrong 'recipientId' parameter");
    // Percent escapes are decoded first, so an escaped & cannot smuggle a parameter into an address.
    refused(['senderId=U1%26limit%3D1'], "Wrong 'senderId' parameter: U1&limit=1");
  });

  test('an item without = is a key with an empty value, as the original sent it (issue 28)', () => {
    assert.equal(sent('U5450667915320866213'), 'U5450667915320866213=');
    assert.equal(sent('senderId=U1,note', 'isIn'), 'senderId=U1&note=&isIn=');
    // A known key keeps its shape: an empty limit is no limit.
    refused(['limit'], "Wrong 'limit' parameter");
  });

  test('an item whose key is not a name is refused (a pasted passphrase is never a key)', () => {
    refused([PASSPHRASE], "Wrong 'query' parameter");
    refused([SHORT_WORDS], "Wrong 'query' parameter");
    refused([PASSPHRASE.replace(/ /g, '+')], "Wrong 'query' parameter");
    refused([5], "Wrong 'query' parameter: 5");
    refused(['types=0,8'], "Wrong 'query' parameter: 8");
    refused(['=5'], "Wrong 'query' parameter");
    refused(['sender id=U1'], "Wrong 'query' parameter");
    refused(['xor:limit=5'], "Wrong 'query' parameter: xor:limit");
    refused([{ limit: 5 }], 'Wrong \'query\' parameter: items are "key=value" strings');
    refused([null], 'Wrong \'query\' parameter: items are "key=value" strings');
  });

  test('keys it does not know pass with printable values; spaces and control characters are refused', () => {
    assert.equal(sent('isIn=1', 'senderIds=U1', 'or:fromTimestamp=5', 'note='), 'isIn=1&senderIds=U1&or:fromTimestamp=5&note=');
    refused([`memo=${PASSPHRASE}`], "Wrong 'memo' parameter");
    refused(['memo=a\tb'], "Wrong 'memo' parameter");
    refused(['memo=é'], "Wrong 'memo' parameter");
  });
});

describe('query string', () => {
  test('every key and value is percent-encoded except ":"; & = # ? inside a value never start another parameter', () => {
    const query = new URLSearchParams([['username', 'a&b=c#d?e'], ['and:minAmount', '1'], ['orderBy', 'timestamp:desc'], ['x', 'a b+c/%']]);
    assert.equal(queryString(query), 'username=a%26b%3Dc%23d%3Fe&and:minAmount=1&orderBy=timestamp:desc&x=a%20b%2Bc%2F%25');
    assert.deepEqual([...new URLSearchParams(queryString(query))], [...query], 'a node reads back exactly what was meant');
  });
});
