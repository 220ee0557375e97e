// Sending an encrypted ADAMANT chat message (notes D "Chat (type 8)"): look up the recipient's public key, encrypt
// for it, sign a type-8 transaction and post it once. Shared by the console's send methods and the rates service's
// ADAMANT notification channel. The key pair never leaves this module except inside the signature.

import { decryptMessage, encryptMessage } from './chat-crypto.js';
import { addressFromPublicKey, adamantTime, signTransaction, type KeyPair, type UnsignedTransaction } from './crypto.js';
import { field, PUBLIC_KEY } from './params.js';
import type { AdamantNodeClient } from './node-api.js';
import type { Cancellation } from '../cancellation.js';

/** Chat types of asset.chat.type: a basic message, a rich message (JSON) and a signal. */
export type ChatType = 1 | 2 | 3;

export interface ChatMessage {
  readonly recipientId: string;
  readonly text: string;
  readonly chatType: ChatType;
  /** Sats transferred with the message (0: a plain message). */
  readonly amount: number;
}

/** A signed transaction as posted: no fee and no id, the node computes both (notes D). */
export type PostedTransaction = UnsignedTransaction & { readonly senderId: string; readonly signature: string };

export function signedTransaction(tx: UnsignedTransaction, keys: KeyPair): PostedTransaction {
  return { ...tx, senderId: addressFromPublicKey(keys.publicKey), signature: signTransaction(tx, keys) };
}

/** The account's public key, which encryption needs: only accounts that sent a transaction have one. */
export async function publicKeyOf(node: AdamantNodeClient, address: string, signal: Cancellation): Promise<Buffer> {
  const answer = (await node.get<{ success?: boolean; publicKey?: string }>('accounts/getPublicKey', new URLSearchParams({ address }), signal)) ?? {};
  if (answer.success === false || typeof answer.publicKey !== 'string' || !PUBLIC_KEY.test(answer.publicKey)) {
    throw new Error(`Unable to get public key for ${address}. Account may be uninitialized (https://medium.com/adamant-im/chats-and-uninitialized-accounts-in-adamant-5035438e2fcd), or network error`);
  }
  return Buffer.from(answer.publicKey, 'hex');
}

/** Encrypts, signs and posts one chat message; resolves with the node's transaction id. */
export async function sendChatMessage(node: AdamantNodeClient, keys: KeyPair, message: ChatMessage, nowMs: number, signal: Cancellation): Promise<string> {
  const { recipientId, text, chatType, amount } = message;
  const asset = { chat: { ...encryptMessage(text, await publicKeyOf(node, recipientId, signal), keys.privateKey), type: chatType } };
  const transaction = signedTransaction({ type: 8, timestamp: adamantTime(nowMs), senderPublicKey: keys.publicKey.toString('hex'), recipientId, amount, asset }, keys);
  return field<string>(await node.post('transactions/process', { transaction }, signal), 'transactionId');
}

/** The plaintext of a chat transaction this key pair sent or received, or undefined when it is neither party's. */
export async function readChatMessage(node: AdamantNodeClient, keys: KeyPair, transaction: Record<string, unknown>, signal: Cancellation): Promise<string | undefined> {
  const chat = (transaction.asset as { chat?: { message?: string; own_message?: string } } | undefined)?.chat;
  if (!chat?.message || !chat.own_message) return undefined;
  const own = addressFromPublicKey(keys.publicKey);
  if (own !== transaction.senderId && own !== transaction.recipientId) return undefined;
  const counterparty = String(own === transaction.senderId ? transaction.recipientId : transaction.senderId);
  return decryptMessage(chat.message, chat.own_message, await publicKeyOf(node, counterparty, signal), keys.privateKey);
}
