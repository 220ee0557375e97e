// ADAMANT chat message encryption (notes D "Chat"): nacl.box with the Ed25519 keys converted to X25519 (ed2curve's
// conversion), written on @noble/curves and @noble/ciphers:
//
//   shared = X25519(toMontgomerySecret(sender seed), toMontgomery(recipient Ed25519 public key))
//   key    = HSalsa20(shared, 16 zero bytes)                      (nacl.box.before)
//   box    = XSalsa20-Poly1305(key, nonce24)(utf8 text)           (nacl.secretbox: tag ‖ ciphertext)
//
// `message` is the box in hex, `own_message` the random nonce in hex.

import { randomBytes } from 'node:crypto';
import { xsalsa20poly1305, hsalsa } from '@noble/ciphers/salsa.js';
import { ed25519, x25519 } from '@noble/curves/ed25519.js';

/** "expand 32-byte k" as four little-endian words: Salsa20's constant. */
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

const words = (bytes: Uint8Array): Uint32Array => {
  const out = new Uint32Array(bytes.length / 4);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getUint32(i * 4, true);
  return out;
};

const bytesOf = (values: Uint32Array): Uint8Array => {
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach((value, i) => view.setUint32(i * 4, value, true));
  return out;
};

/** nacl.box.before: the symmetric key two accounts share. `ownSeed` is the 32-byte Ed25519 seed. */
function sharedKey(ownSeed: Uint8Array, counterpartyPublicKey: Uint8Array): Uint8Array {
  const shared = x25519.getSharedSecret(ed25519.utils.toMontgomerySecret(ownSeed), ed25519.utils.toMontgomery(counterpartyPublicKey));
  const out = new Uint32Array(8);
  hsalsa(SIGMA, words(shared), new Uint32Array(4), out);
  return bytesOf(out);
}

/** A message that cannot be decrypted (wrong keys or tampered bytes). */
export class MessageDecryptionError extends Error {
  override readonly name = 'MessageDecryptionError';
  constructor() {
    super('the message cannot be decrypted with these keys');
  }
}

/** Encrypts `text` for `recipientPublicKey` (32 bytes) with the sender's 64-byte private key (seed ‖ public key). */
export function encryptMessage(text: string, recipientPublicKey: Uint8Array, senderPrivateKey: Uint8Array, nonce: Uint8Array = randomBytes(24)): { message: string; own_message: string } {
  const key = sharedKey(senderPrivateKey.subarray(0, 32), recipientPublicKey);
  const box = xsalsa20poly1305(key, nonce).encrypt(new TextEncoder().encode(text));
  return { message: Buffer.from(box).toString('hex'), own_message: Buffer.from(nonce).toString('hex') };
}

/** Decrypts a message exchanged with `counterpartyPublicKey`, as its sender or its recipient. */
export function decryptMessage(messageHex: string, nonceHex: string, counterpartyPublicKey: Uint8Array, ownPrivateKey: Uint8Array): string {
  try {
    const key = sharedKey(ownPrivateKey.subarray(0, 32), counterpartyPublicKey);
    const plain = xsalsa20poly1305(key, Buffer.from(nonceHex, 'hex')).decrypt(Buffer.from(messageHex, 'hex'));
    return new TextDecoder('utf-8', { fatal: true }).decode(plain);
  } catch {
    throw new MessageDecryptionError();
  }
}
