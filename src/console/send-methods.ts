// The console's signing methods (spec B §4.2; notes C.2, D): sendTokens (type 0), voteFor (type 3), delegateNew
// (type 2), sendMessage / sendRich / sendSignal (type 8, chat types 1 / 2 / 3, encrypted for the recipient) and
// getMessage's decryption. Each resolves the passphrase (per call, then the command line's -p,
// then the config), signs locally and posts once (the node client never repeats a POST a node may have received).
// The passphrase never leaves this file: errors name the parameter only. Every address, id, vote and username is
// checked before the node is asked, and an error repeats a wrong value only when `shown` allows it (never a
// passphrase pasted into the wrong field).

import { parseAmount, parseVotes, validatePassphrase } from './amount.js';
import { ADDRESS_PATTERN, addressFromPublicKey, adamantTime, deriveKeyPair, type KeyPair } from './crypto.js';
import type { RpcMethod } from './jsonrpc.js';
import { delegateLookup, field, idParam, MissingParameterError, PUBLIC_KEY, shown, usernameParam, WrongParameterError, wrongParameter } from './params.js';
import type { Clock } from '../clock.js';
import { readChatMessage, sendChatMessage, signedTransaction, type ChatType } from './chat-send.js';
import type { AdamantNodeClient } from './node-api.js';

export interface SendMethodsOptions {
  readonly node: AdamantNodeClient;
  readonly clock: Clock;
  /** The command line's -p, then the config's passphrase. */
  readonly defaultPassphrase: string | undefined;
}

export function sendMethods(options: SendMethodsOptions): Map<string, RpcMethod> {
  const { node, clock } = options;
  const derive = async (passphrase: string): Promise<{ keys: KeyPair; address: string }> => {
    const keys = await deriveKeyPair(passphrase);
    return { keys, address: addressFromPublicKey(keys.publicKey) };
  };
  // The configured account's keys are derived once (PBKDF2 costs ~1 ms a call); a passphrase given with a call
  // is derived for that call only and kept nowhere.
  let defaultAccount: Promise<{ keys: KeyPair; address: string }> | undefined;
  const keysFor = (given: unknown): Promise<{ keys: KeyPair; address: string }> => {
    const passphrase = validatePassphrase(given ?? options.defaultPassphrase);
    if (passphrase === options.defaultPassphrase) return (defaultAccount ??= derive(passphrase));
    return derive(passphrase);
  };
  const base = (keys: KeyPair) => ({ timestamp: adamantTime(clock.now()), senderPublicKey: keys.publicKey.toString('hex') });
  const recipient = (value: unknown): string => {
    if (value === undefined || value === null || value === '') throw new MissingParameterError('address');
    const text = String(value);
    if (ADDRESS_PATTERN.test(text)) return text;
    if (PUBLIC_KEY.test(text)) return addressFromPublicKey(Buffer.from(text, 'hex'));
    throw wrongParameter('address', text);
  };

  const sendTokens: RpcMethod = {
    style: 'object',
    call: async (params, signal) => {
      const { address, amount, passphrase } = params as Record<string, unknown>;
      const recipientId = recipient(address);
      if (amount === undefined || amount === null || amount === '') throw new MissingParameterError('amount');
      const sats = parseAmount(amount);
      const { keys } = await keysFor(passphrase);
      const transaction = signedTransaction({ ...base(keys), type: 0, recipientId, amount: sats, asset: {} }, keys);
      return field(await node.post('transactions/process', { transaction }, signal), 'transactionId');
    },
  };

  const voteFor: RpcMethod = {
    style: 'object',
    call: async (params, signal) => {
      const { votes, passphrase } = params as Record<string, unknown>;
      if (votes === undefined) throw new MissingParameterError('votes');
      const parsed = parseVotes(votes);
      const { keys, address: senderId } = await keysFor(passphrase);
      // Names and addresses become public keys through the node's delegate lookup (parseVotes checked their shapes).
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
        if (!delegate?.publicKey || !PUBLIC_KEY.test(delegate.publicKey)) throw new WrongParameterError('votes', `${vote.sign}${vote.target}. Error: no such delegate`);
        resolved.push(`${vote.sign}${delegate.publicKey}`);
      }
      const transaction = signedTransaction({ ...base(keys), type: 3, recipientId: senderId, amount: 0, asset: { votes: resolved } }, keys);
      return field(await node.post('accounts/delegates', transaction, signal), 'transaction');
    },
  };

  const delegateNew: RpcMethod = {
    style: 'array',
    call: async (params, signal) => {
      const [username, passphrase] = params as readonly unknown[];
      if (username === undefined || username === '') throw new MissingParameterError('username');
      if (typeof username !== 'string') throw new WrongParameterError('username');
      const name = usernameParam(username);
      const { keys } = await keysFor(passphrase);
      const asset = { delegate: { username: name, publicKey: keys.publicKey.toString('hex') } };
      const transaction = signedTransaction({ ...base(keys), type: 2, recipientId: null, amount: 0, asset }, keys);
      // notes C.2: the original extracted a field the answer lacks; the node's `transaction` is what it confirms.
      return field(await node.post('delegates', transaction, signal), 'transaction');
    },
  };

  const chat = (chatType: ChatType, read: (params: Record<string, unknown>) => string): RpcMethod => ({
    style: 'object',
    call: async (params, signal) => {
      const fields = params as Record<string, unknown>;
      const recipientId = recipient(fields.address);
      const text = read(fields);
      const amount = fields.amount === undefined || fields.amount === null || fields.amount === '' ? 0 : parseAmount(fields.amount);
      const { keys } = await keysFor(fields.passphrase);
      return sendChatMessage(node, keys, { recipientId, text, chatType, amount }, clock.now(), signal);
    },
  });

  const getMessage: RpcMethod = {
    style: 'array',
    call: async (params, signal) => {
      const [id, passphrase] = params as readonly unknown[];
      const checked = idParam(id);
      if (passphrase !== undefined && passphrase !== null) validatePassphrase(passphrase);
      const transaction = field<Record<string, unknown> | undefined>(await node.get('transactions/get', new URLSearchParams({ id: checked, returnAsset: '1' }), signal), 'transaction');
      if (!transaction || transaction.type !== 8) throw new Error('Not a message transaction');
      const given = passphrase ?? options.defaultPassphrase;
      if (given === undefined) return transaction;
      const decoded = await readChatMessage(node, (await keysFor(given)).keys, transaction, signal);
      return decoded === undefined ? transaction : { ...transaction, decoded };
    },
  };

  return new Map([
    ['sendMessage', chat(1, (fields) => messageText(fields.message))],
    ['sendRich', chat(2, (fields) => richText(fields.data))],
    ['sendSignal', chat(3, (fields) => richText(fields.data))],
    ['getMessage', getMessage],
    ['sendTokens', sendTokens],
    ['voteFor', voteFor],
    ['delegateNew', delegateNew],
  ]);
}

function messageText(value: unknown): string {
  if (value === undefined || value === null || value === '') throw new MissingParameterError('message');
  if (typeof value !== 'string') throw new WrongParameterError('message', 'must be a string');
  return value;
}

/**
 * Rich and signal payloads (notes C.2): an object is serialized; a string has ' turned into " (shell-friendly
 * quoting) and must then be JSON; `amount`, when present, is a string holding a number; a `type` naming a
 * `_transaction` must be lower case.
 */
function richText(value: unknown): string {
  if (value === undefined || value === null || value === '') throw new MissingParameterError('data');
  // A string from a shell (notes C.2): `'` stands for `"`, and `\line` for a line break. The break is
  // written as JSON's `\n` escape: inside a JSON string (the only place a line break means anything in a
  // rich message) a raw newline would make the text invalid JSON.
  const text = typeof value === 'string' ? value.replace(/'/g, '"').replace(/\\line/g, '\\n') : JSON.stringify(value);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WrongParameterError('data', 'must be JSON');
  }
  const fields = (parsed ?? {}) as Record<string, unknown>;
  if ('amount' in fields && (typeof fields.amount !== 'string' || !Number.isFinite(Number(fields.amount)))) throw new Error("Field 'amount' must be a string, representing a number");
  if (typeof fields.type === 'string' && fields.type.includes('_transaction') && fields.type !== fields.type.toLowerCase()) {
    const type = shown(fields.type);
    throw new Error(type === undefined ? "Field 'type' must be in lower case" : `Value '${type}' must be in lower case`);
  }
  return text;
}
