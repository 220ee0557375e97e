// ADAMANT cryptography (src/console/crypto.ts) against the test vectors of notes D (computed with adamant-api 2.4.0):
// the public BIP-39 test mnemonic, its keys and address, the bytes, signature and id of a send, the ids of a vote,
// a delegate registration and a chat transaction.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressFromPublicKey, adamantTime, keyPairFromPassphrase, signTransaction, transactionBytes, transactionId, verifyTransaction, type UnsignedTransaction } from '../../src/console/crypto.js';

// The public BIP-39 test mnemonic (notes D): not a secret.
const MNEMONIC = `${'abandon '.repeat(11)}about`;
const PUBLIC_KEY = '58032e75cd5ee0bbcacbed1e38c3da4bf0f162aba2d7513d2d2fba2184327bd3';
const keys = keyPairFromPassphrase(MNEMONIC);
const base = { timestamp: 100_000_000, senderPublicKey: PUBLIC_KEY };

test('passphrase → Ed25519 keys → address', () => {
  assert.equal(keys.publicKey.toString('hex'), PUBLIC_KEY);
  assert.equal(keys.privateKey.length, 64);
  assert.equal(keys.privateKey.subarray(32).toString('hex'), PUBLIC_KEY, 'privateKey = seed ‖ publicKey');
  assert.equal(addressFromPublicKey(keys.publicKey), 'U5450667915320866213');
});

test('a send: the unsigned bytes, the signature and the id of the vector', () => {
  const tx: UnsignedTransaction = { ...base, type: 0, recipientId: 'U1234567890123456', amount: 100_000_000, asset: {} };
  assert.equal(transactionBytes(tx).toString('hex'), '0000e1f50558032e75cd5ee0bbcacbed1e38c3da4bf0f162aba2d7513d2d2fba2184327bd3000462d53c8abac000e1f50500000000');
  const signature = signTransaction(tx, keys);
  assert.match(signature, /^99b211ff[0-9a-f]{113}45ca105$/);
  assert.equal(transactionId(tx, signature), '14185603163046885818');
  assert.equal(verifyTransaction(tx, signature), true);
  assert.equal(verifyTransaction({ ...tx, amount: 100_000_001 }, signature), false, 'a changed amount breaks the signature');
});

test('the ids of a vote, a delegate registration and a chat message', () => {
  const vote: UnsignedTransaction = { ...base, type: 3, recipientId: 'U5450667915320866213', amount: 0, asset: { votes: [`+${PUBLIC_KEY}`] } };
  assert.equal(transactionId(vote, signTransaction(vote, keys)), '734486963219641515');
  const delegate: UnsignedTransaction = { ...base, type: 2, recipientId: null, amount: 0, asset: { delegate: { username: 'test_delegate', publicKey: PUBLIC_KEY } } };
  assert.equal(transactionId(delegate, signTransaction(delegate, keys)), '3258137515373468594');
  const chat: UnsignedTransaction = { ...base, type: 8, recipientId: 'U1234567890123456', amount: 0, asset: { chat: { message: 'deadbeef', own_message: '00112233', type: 1 } } };
  assert.equal(transactionBytes(chat).subarray(53).toString('hex'), 'deadbeef0011223301000000');
  assert.equal(transactionId(chat, signTransaction(chat, keys)), '2499774842053528537');
});

test('the ADAMANT epoch', () => {
  assert.equal(adamantTime(Date.UTC(2017, 8, 2, 17, 0, 0)), 0);
  assert.equal(adamantTime(Date.UTC(2017, 8, 2, 17, 0, 5, 999)), 5);
});
