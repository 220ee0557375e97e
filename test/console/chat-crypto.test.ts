// ADAMANT chat encryption (src/console/chat-crypto.ts; notes D "Chat"): a fixed vector computed with tweetnacl's
// nacl.box over ed2curve-converted keys (the original's libraries), both parties decrypting, and refusals of
// tampered bytes and wrong keys. The random cross-check against adamant-api is in oracle.test.ts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decryptMessage, encryptMessage, MessageDecryptionError } from '../../src/console/chat-crypto.js';
import { keyPairFromPassphrase } from '../../src/console/crypto.js';

// Public BIP-39 test mnemonics: not secrets.
const alice = keyPairFromPassphrase(`${'abandon '.repeat(11)}about`);
const bob = keyPairFromPassphrase(`${'zoo '.repeat(11)}wrong`);
const carol = keyPairFromPassphrase(`${'legal '.repeat(11)}winner`);
const NONCE = Uint8Array.from({ length: 24 }, (_, i) => i);

test('the vector: "hi" from alice to bob with nonce 00..17 (tweetnacl + ed2curve give the same bytes)', () => {
  assert.deepEqual(encryptMessage('hi', bob.publicKey, alice.privateKey, NONCE), {
    message: '8e9fa72831118112c880c62b91cc5aef54e4',
    own_message: '000102030405060708090a0b0c0d0e0f1011121314151617',
  });
});

test('the recipient and the sender both decrypt; a fresh random 24-byte nonce each time', () => {
  const text = 'Hello, ADAMANT: привет, 你好 🚀';
  const first = encryptMessage(text, bob.publicKey, alice.privateKey);
  const second = encryptMessage(text, bob.publicKey, alice.privateKey);
  assert.match(first.own_message, /^[0-9a-f]{48}$/);
  assert.notEqual(first.own_message, second.own_message);
  assert.notEqual(first.message, second.message);
  assert.equal(decryptMessage(first.message, first.own_message, alice.publicKey, bob.privateKey), text, 'the recipient reads it');
  assert.equal(decryptMessage(first.message, first.own_message, bob.publicKey, alice.privateKey), text, 'the sender reads its own message');
});

test('tampered bytes, another nonce or a third party\'s keys are refused', () => {
  const { message, own_message } = encryptMessage('pay 10 ADM', bob.publicKey, alice.privateKey, NONCE);
  const flipped = (message.slice(0, -2) + (message.endsWith('00') ? '01' : '00'));
  assert.throws(() => decryptMessage(flipped, own_message, alice.publicKey, bob.privateKey), MessageDecryptionError);
  assert.throws(() => decryptMessage(message, '17'.repeat(24), alice.publicKey, bob.privateKey), MessageDecryptionError);
  assert.throws(() => decryptMessage(message, own_message, alice.publicKey, carol.privateKey), MessageDecryptionError);
  assert.throws(() => decryptMessage('zz', own_message, alice.publicKey, bob.privateKey), MessageDecryptionError);
});
