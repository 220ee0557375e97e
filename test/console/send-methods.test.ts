// The signing methods' passphrase resolution with a stub node client: the configured account signs when a call
// gives no passphrase (its keys derived once and reused), a passphrase given with a call signs that call only.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from '../../src/clock.js';
import type { AdamantNodeClient } from '../../src/console/node-api.js';
import { sendMethods } from '../../src/console/send-methods.js';
import { keyPairFromPassphrase, verifyTransaction, type UnsignedTransaction } from '../../src/console/crypto.js';

/** Public BIP-39 test mnemonics (notes D): no secrets. */
const CONFIGURED = `${'abandon '.repeat(11)}about`;
const PER_CALL = `${'zoo '.repeat(11)}wrong`;

test('sendTokens signs with the configured account unless the call brings its own passphrase', async () => {
  const posted: Array<UnsignedTransaction & { signature: string }> = [];
  const node: AdamantNodeClient = {
    get: async () => {
      throw new Error('no GET expected');
    },
    post: async <T>(_path: string, body: unknown) => {
      const { transaction } = body as { transaction: UnsignedTransaction & { signature: string; id: string } };
      posted.push(transaction);
      return { success: true, transactionId: transaction.id } as T;
    },
  };
  const sendTokens = sendMethods({ node, clock: systemClock, defaultPassphrase: CONFIGURED }).get('sendTokens')!;
  const signal = new AbortController().signal;
  const send = (passphrase?: string) => sendTokens.call({ address: 'U1234567890123456', amount: '7', ...(passphrase ? { passphrase } : {}) }, signal);
  await send();
  await send(PER_CALL);
  await send();
  await send(CONFIGURED);
  const configured = keyPairFromPassphrase(CONFIGURED).publicKey.toString('hex');
  const perCall = keyPairFromPassphrase(PER_CALL).publicKey.toString('hex');
  assert.deepEqual(
    posted.map((tx) => tx.senderPublicKey),
    [configured, perCall, configured, configured],
  );
  for (const tx of posted) assert.ok(verifyTransaction(tx, tx.signature), 'every posted transaction carries a valid signature');
});
