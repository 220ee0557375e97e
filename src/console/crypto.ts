// ADAMANT keys, addresses, transaction bytes, signatures and ids (notes D), on node:crypto alone: PBKDF2-HMAC-SHA512
// and SHA-256 for the key derivation, Ed25519 for signatures; new passphrases are BIP-39 English mnemonics. Chat
// encryption is in chat-crypto.ts.
//
// Passphrases never leave this module in any message: errors name the parameter, never its value.

import { createHash, createPrivateKey, createPublicKey, pbkdf2, pbkdf2Sync, sign, verify, type KeyObject } from 'node:crypto';
import { generateMnemonic } from '@scure/bip39';
import { wordlist as englishWords } from '@scure/bip39/wordlists/english.js';

export interface KeyPair {
  /** 32 bytes. */
  readonly publicKey: Buffer;
  /** 64 bytes: seed ‖ publicKey, as tweetnacl's secretKey (the original's `privateKey`). */
  readonly privateKey: Buffer;
  /** The signing key, kept as a KeyObject. */
  readonly signingKey: KeyObject;
}

/** PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
/** SPKI DER prefix of an Ed25519 public key; the 32-byte key follows. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

const sha256 = (data: Uint8Array): Buffer => createHash('sha256').update(data).digest();

/**
 * notes D: seed64 = PBKDF2-HMAC-SHA512(NFKD(passphrase), "mnemonic", 2048, 64) (bip39's mnemonicToSeed, the mnemonic
 * not validated); seed32 = SHA-256(seed64); the Ed25519 keypair from seed32.
 */
export function keyPairFromPassphrase(passphrase: string): KeyPair {
  return keyPairFromSeed64(pbkdf2Sync(passphraseBytes(passphrase), BIP39_SALT, BIP39_ROUNDS, 64, 'sha512'));
}

/**
 * The same, with PBKDF2 (nearly all of the cost, ~1 ms) on libuv's thread pool: the console server derives the keys
 * of every call that brings its own passphrase, and its other calls go on meanwhile.
 */
export function deriveKeyPair(passphrase: string): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    pbkdf2(passphraseBytes(passphrase), BIP39_SALT, BIP39_ROUNDS, 64, 'sha512', (error, seed64) => {
      if (error) reject(error);
      else resolve(keyPairFromSeed64(seed64));
    });
  });
}

const BIP39_SALT = Buffer.from('mnemonic', 'utf8');
const BIP39_ROUNDS = 2048;
const passphraseBytes = (passphrase: string) => Buffer.from(passphrase.normalize('NFKD'), 'utf8');

/**
 * A stand-in `x` for the JWK import below: Node builds an Ed25519 private key from `d` alone and derives the public
 * key itself, but its JWK reader insists on an `x`. Should a Node ever take `x` as given, the key would export this
 * value back and keyPairFromSeed64 falls back to the PKCS#8 import.
 */
const PLACEHOLDER_X = Buffer.alloc(32).toString('base64url');

function keyPairFromSeed64(seed64: Buffer): KeyPair {
  const seed = sha256(seed64);
  // A JWK import costs ~40 µs; the PKCS#8 DER import ~350 µs (OpenSSL 3's decoder), a third of a whole derivation.
  let signingKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: PLACEHOLDER_X }, format: 'jwk' });
  let x = signingKey.export({ format: 'jwk' }).x;
  if (x === undefined || x === PLACEHOLDER_X) {
    signingKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    x = signingKey.export({ format: 'jwk' }).x!;
  }
  const publicKey = Buffer.from(x, 'base64url');
  return { publicKey, privateKey: Buffer.concat([seed, publicKey]), signingKey };
}

/** accountNew's account (notes C.2): a fresh 12-word mnemonic (128 bits of entropy from the system's CSPRNG). */
export function newAccount(): { passphrase: string; address: string; publicKey: string; privateKey: string } {
  const passphrase = generateMnemonic(englishWords, 128);
  const keys = keyPairFromPassphrase(passphrase);
  return { passphrase, address: addressFromPublicKey(keys.publicKey), publicKey: keys.publicKey.toString('hex'), privateKey: keys.privateKey.toString('hex') };
}

/** `U` + the decimal uint64 of the first 8 bytes of SHA-256(publicKey), reversed (notes D "Address"). */
export function addressFromPublicKey(publicKey: Uint8Array): string {
  const head = Buffer.from(sha256(publicKey).subarray(0, 8)).reverse();
  return `U${head.readBigUInt64BE(0)}`;
}

export const ADDRESS_PATTERN = /^U\d{1,20}$/;

/** notes D "Time": seconds since the ADAMANT epoch, 2017-09-02T17:00:00Z. */
export const ADAMANT_EPOCH_MS = Date.UTC(2017, 8, 2, 17, 0, 0);
export function adamantTime(nowMs: number): number {
  return Math.floor((nowMs - ADAMANT_EPOCH_MS) / 1000);
}

export type TransactionType = 0 | 2 | 3 | 8;

export interface UnsignedTransaction {
  readonly type: TransactionType;
  readonly timestamp: number;
  readonly senderPublicKey: string;
  /** `U…` or null (delegate registration). */
  readonly recipientId: string | null;
  /** Integer sats. */
  readonly amount: number;
  readonly asset: TransactionAsset;
}

export type TransactionAsset =
  | Record<string, never>
  | { readonly delegate: { readonly username: string; readonly publicKey: string } }
  | { readonly votes: readonly string[] }
  | { readonly chat: { readonly message: string; readonly own_message: string; readonly type: number } };

/** A value that cannot be put into a transaction (names the field, never a secret). */
export class TransactionFieldError extends Error {
  override readonly name = 'TransactionFieldError';
}

/** The asset's bytes by type (notes D "Asset bytes by type"). */
function assetBytes(tx: UnsignedTransaction): Buffer {
  switch (tx.type) {
    case 0:
      return Buffer.alloc(0);
    case 2:
      return Buffer.from((tx.asset as { delegate: { username: string } }).delegate.username, 'utf8');
    case 3:
      return Buffer.from((tx.asset as { votes: readonly string[] }).votes.join(''), 'utf8');
    case 8: {
      const { chat } = tx.asset as { chat: { message: string; own_message: string; type: number } };
      const type = Buffer.alloc(4);
      type.writeInt32LE(chat.type);
      return Buffer.concat([Buffer.from(chat.message, 'hex'), Buffer.from(chat.own_message, 'hex'), type]);
    }
  }
}

/**
 * The bytes that are signed (notes D "Bytes to sign"), little-endian except the recipient: type u8, timestamp
 * int32, sender public key, recipient as a big-endian uint64 (8 zero bytes without one), amount int64, asset bytes;
 * with `signature`, the signature follows (the bytes of the id). The fee is not part of them.
 */
export function transactionBytes(tx: UnsignedTransaction, signature?: Uint8Array): Buffer {
  const head = Buffer.alloc(1 + 4 + 32 + 8 + 8);
  head.writeUInt8(tx.type, 0);
  head.writeInt32LE(tx.timestamp, 1);
  const sender = Buffer.from(tx.senderPublicKey, 'hex');
  if (sender.length !== 32) throw new TransactionFieldError('senderPublicKey must be 32 bytes of hex');
  sender.copy(head, 5);
  if (tx.recipientId !== null) {
    if (!ADDRESS_PATTERN.test(tx.recipientId)) throw new TransactionFieldError('recipientId must be an ADAMANT address');
    const number = BigInt(tx.recipientId.slice(1));
    if (number >= 1n << 64n) throw new TransactionFieldError('recipientId is out of range');
    head.writeBigUInt64BE(number, 37);
  }
  if (!Number.isSafeInteger(tx.amount) || tx.amount < 0) throw new TransactionFieldError('amount must be a non-negative safe integer of sats');
  head.writeBigInt64LE(BigInt(tx.amount), 45);
  const parts = [head, assetBytes(tx)];
  if (signature) parts.push(Buffer.from(signature));
  return Buffer.concat(parts);
}

/** Ed25519 over SHA-256 of the bytes (notes D "Signature"), hex. */
export function signTransaction(tx: UnsignedTransaction, keyPair: KeyPair): string {
  return sign(null, sha256(transactionBytes(tx)), keyPair.signingKey).toString('hex');
}

export function verifyTransaction(tx: UnsignedTransaction, signatureHex: string): boolean {
  const publicKey = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(tx.senderPublicKey, 'hex')]), format: 'der', type: 'spki' });
  const signature = Buffer.from(signatureHex, 'hex');
  return signature.length === 64 && verify(null, sha256(transactionBytes(tx)), publicKey, signature);
}

/** SHA-256 of the bytes with the signature, first 8 bytes reversed, as a decimal uint64 (notes D "Transaction id"). */
export function transactionId(tx: UnsignedTransaction, signatureHex: string): string {
  const head = Buffer.from(sha256(transactionBytes(tx, Buffer.from(signatureHex, 'hex'))).subarray(0, 8)).reverse();
  return head.readBigUInt64BE(0).toString();
}
