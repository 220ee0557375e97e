// The console's signing methods that need no message encryption (spec B §4.2; notes C.2, D): sendTokens (type 0),
// voteFor (type 3) and delegateNew (type 2). Each resolves the passphrase (per call, then the command line's -p,
// then the config), signs locally and posts once (the node client never repeats a POST a node may have received).
// The passphrase never leaves this file: errors name the parameter only.

import { parseAmount, parseVotes, validatePassphrase, DELEGATE_USERNAME } from '../../src/console/amount.js';
import { ADDRESS_PATTERN, addressFromPublicKey, adamantTime, keyPairFromPassphrase, signTransaction, type KeyPair, type UnsignedTransaction } from '../../src/console/crypto.js';
import type { RpcMethod } from '../../src/console/jsonrpc.js';
import { delegateLookup, field, MissingParameterError, PUBLIC_KEY, WrongParameterError } from '../../src/console/params.js';
import type { Clock } from '../clock.js';
import type { AdamantNodeClient } from './node-client.js';

export interface SendMethodsOptions {
  readonly node: AdamantNodeClient;
  readonly clock: Clock;
  /** The command line's -p, then the config's passphrase. */
  readonly defaultPassphrase: string | undefined;
}

/** A signed transaction as posted: no fee and no id, the node computes both (notes D). */
type PostedTransaction = UnsignedTransaction & { readonly senderId: string; readonly signature: string };

export function sendMethods(options: SendMethodsOptions): Map<string, RpcMethod> {
  const { node, clock } = options;
  const keysFor = (given: unknown): { keys: KeyPair; address: string } => {
    const passphrase = validatePassphrase(given ?? options.defaultPassphrase);
    const keys = keyPairFromPassphrase(passphrase);
    return { keys, address: addressFromPublicKey(keys.publicKey) };
  };
  const signed = (tx: UnsignedTransaction, keys: KeyPair, senderId: string): PostedTransaction => ({ ...tx, senderId, signature: signTransaction(tx, keys) });
  const base = (keys: KeyPair) => ({ timestamp: adamantTime(clock.now()), senderPublicKey: keys.publicKey.toString('hex') });
  const recipient = (value: unknown): string => {
    if (value === undefined || value === null || value === '') throw new MissingParameterError('address');
    const text = String(value);
    if (ADDRESS_PATTERN.test(text)) return text;
    if (PUBLIC_KEY.test(text)) return addressFromPublicKey(Buffer.from(text, 'hex'));
    throw new WrongParameterError('address', text);
  };

  const sendTokens: RpcMethod = {
    style: 'object',
    call: async (params, signal) => {
      const { address, amount, passphrase } = params as Record<string, unknown>;
      const recipientId = recipient(address);
      if (amount === undefined || amount === null || amount === '') throw new MissingParameterError('amount');
      const sats = parseAmount(amount);
      const { keys, address: senderId } = keysFor(passphrase);
      const transaction = signed({ ...base(keys), type: 0, recipientId, amount: sats, asset: {} }, keys, senderId);
      return field(await node.post('transactions/process', { transaction }, signal), 'transactionId');
    },
  };

  const voteFor: RpcMethod = {
    style: 'object',
    call: async (params, signal) => {
      const { votes, passphrase } = params as Record<string, unknown>;
      if (votes === undefined) throw new MissingParameterError('votes');
      const parsed = parseVotes(votes);
      const { keys, address: senderId } = keysFor(passphrase);
      // Names and addresses become public keys through the node's delegate lookup.
      const resolved: string[] = [];
      for (const vote of parsed) {
        if (PUBLIC_KEY.test(vote.target)) {
          resolved.push(`${vote.sign}${vote.target.toLowerCase()}`);
          continue;
        }
        const lookup = delegateLookup(vote.target);
        let delegate: { publicKey?: string } | undefined;
        try {
          delegate = field<{ publicKey?: string }>(await node.get('delegates/get', new URLSearchParams({ [lookup.key]: lookup.value }), signal), 'delegate');
        } catch (error) {
          throw new WrongParameterError('votes', `${vote.sign}${vote.target}. Error: ${(error as Error).message}`);
        }
        if (!delegate?.publicKey) throw new WrongParameterError('votes', `${vote.sign}${vote.target}. Error: no such delegate`);
        resolved.push(`${vote.sign}${delegate.publicKey}`);
      }
      const transaction = signed({ ...base(keys), type: 3, recipientId: senderId, amount: 0, asset: { votes: resolved } }, keys, senderId);
      return field(await node.post('accounts/delegates', transaction, signal), 'transaction');
    },
  };

  const delegateNew: RpcMethod = {
    style: 'array',
    call: async (params, signal) => {
      const [username, passphrase] = params as readonly unknown[];
      if (username === undefined || username === '') throw new MissingParameterError('username');
      if (typeof username !== 'string' || !DELEGATE_USERNAME.test(username)) throw new WrongParameterError('username', String(username));
      const { keys, address: senderId } = keysFor(passphrase);
      const asset = { delegate: { username, publicKey: keys.publicKey.toString('hex') } };
      const transaction = signed({ ...base(keys), type: 2, recipientId: null, amount: 0, asset }, keys, senderId);
      // notes C.2: the original extracted a field the answer lacks; the node's `transaction` is what it confirms.
      return field(await node.post('delegates', transaction, signal), 'transaction');
    },
  };

  return new Map([
    ['sendTokens', sendTokens],
    ['voteFor', voteFor],
    ['delegateNew', delegateNew],
  ]);
}
