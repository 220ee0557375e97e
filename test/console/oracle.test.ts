// Our ADAMANT cryptography (src/console/crypto.ts, src/console/chat-crypto.ts; notes D) cross-checked against
// adamant-api 2.4.0, the original client library, on seeded random inputs: keys and addresses from random mnemonics
// and arbitrary unicode passphrases; the bytes, signatures and ids of random sends (type 0), delegate registrations
// (type 2), votes (type 3) and chat transactions (type 8); chat encryption in both directions, byte for byte; and
// newAccount's mnemonics. The vectors of notes D (crypto.test.ts) pin a handful of points; this file checks that the
// formats agree everywhere else too (large uint64 recipients, int64 amounts, unicode, every asset shape).
//
// adamant-api is GPL-3.0 and a devDependency: it is used here, as an oracle, and nowhere outside test/.
//
// The inputs come from a seeded PRNG (mulberry32); the seed is in every test's name. ORACLE_SEED=<uint32> reruns
// with another seed (the default is fixed, so CI is reproducible). The random passphrases and keys are throwaway
// test values, so failure messages print them to make a failure reproducible on its own.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import adamant from 'adamant-api';
import { decryptMessage, encryptMessage } from '../../src/console/chat-crypto.js';
import {
  addressFromPublicKey,
  keyPairFromPassphrase,
  newAccount,
  signTransaction,
  transactionBytes,
  transactionId,
  verifyTransaction,
  type KeyPair,
  type UnsignedTransaction,
} from '../../src/console/crypto.js';

// ---- The oracle ------------------------------------------------------------------------------------------------

/** adamant-api's transaction objects (its getBytes reads type, timestamp, senderPublicKey, recipientId, amount, asset, signature). */
type OracleTransaction = Parameters<typeof adamant.getBytes>[0];
type OracleKeyPair = ReturnType<typeof adamant.createKeypairFromPassphrase>;

/**
 * The BIP-39 library adamant-api itself depends on (bip39 3.x), resolved from adamant-api's location: the oracle for
 * mnemonic validity (adamant-api's own isPassphrase only checks `length > 30`) and for seeded mnemonics.
 */
interface Bip39 {
  validateMnemonic(mnemonic: string): boolean;
  entropyToMnemonic(entropy: Buffer | string): string;
}
const oracleRequire = createRequire(createRequire(import.meta.url).resolve('adamant-api'));
const bip39 = oracleRequire('bip39') as Bip39;

/** tweetnacl and ed2curve as adamant-api's decodeMessage calls them, to read the plaintext bytes (see oracleReads). */
const nacl = oracleRequire('tweetnacl') as { box: { open(box: Uint8Array, nonce: Uint8Array, publicKey: Uint8Array, secretKey: Uint8Array): Uint8Array | null } };
const ed2curve = oracleRequire('ed2curve') as { convertPublicKey(publicKey: Uint8Array): Uint8Array | null; convertSecretKey(secretKey: Uint8Array): Uint8Array };

function toOracle(tx: UnsignedTransaction, signature?: string): OracleTransaction {
  const senderId = addressFromPublicKey(Buffer.from(tx.senderPublicKey, 'hex'));
  return { ...tx, senderId, ...(signature === undefined ? {} : { signature }) } as unknown as OracleTransaction;
}

// ---- Seeded randomness -----------------------------------------------------------------------------------------

const SEED = process.env.ORACLE_SEED === undefined ? 0x0ada_2017 : Number(process.env.ORACLE_SEED) >>> 0;

/** mulberry32: a tiny, well-mixed 32-bit PRNG. Each test gets its own stream (seed ^ salt), so each reruns alone. */
function prng(salt: number) {
  let state = (SEED ^ salt) >>> 0;
  const u32 = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  /** An integer in [0, n). */
  const int = (n: number): number => Math.floor((u32() / 2 ** 32) * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => u32() & 0xff));
  /** A uint64 whose bit length is itself uniform, so small and huge values are both common. */
  const u64 = (): bigint => ((BigInt(u32()) << 32n) | BigInt(u32())) >> BigInt(int(64));
  return { u32, int, pick, bytes, u64 };
}
type Rng = ReturnType<typeof prng>;

/** Code point ranges for arbitrary text: ASCII, Latin-1, combining marks, Greek/Cyrillic, Hangul syllables and
 *  jamo, CJK, compatibility forms NFKD rewrites (ligatures, full-width, circled digits, ℌ…), whitespace, emoji. */
const RANGES: readonly (readonly [number, number])[] = [
  [0x20, 0x7e], [0x20, 0x7e], [0x20, 0x7e], [0x00, 0x1f], [0xa0, 0xff], [0x300, 0x36f], [0x370, 0x3ff], [0x400, 0x4ff],
  [0xac00, 0xd7a3], [0x1100, 0x11ff], [0x4e00, 0x9fff], [0xfb00, 0xfb06], [0xff01, 0xff5e], [0x2460, 0x2473],
  [0x2100, 0x214f], [0x2000, 0x200f], [0x3000, 0x3000], [0x1f300, 0x1f64f], [0x1f900, 0x1f9ff], [0x10000, 0x1007f],
];

/** A random string of `length` code points (no lone surrogates unless `loneSurrogates`). */
function randomText(rng: Rng, length: number, loneSurrogates = false): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    if (loneSurrogates && rng.int(20) === 0) out += String.fromCharCode(0xd800 + rng.int(0x800));
    else {
      const [lo, hi] = rng.pick(RANGES);
      out += String.fromCodePoint(lo + rng.int(hi - lo + 1));
    }
  }
  return out;
}

const hasAstral = (text: string): boolean => /[\u{10000}-\u{10ffff}]/u.test(text);

/** Random key pairs: ours and the oracle's from the same random passphrase (the keys are checked equal in test 1). */
function senders(rng: Rng, count: number): { keys: KeyPair; oracle: OracleKeyPair; passphrase: string }[] {
  return Array.from({ length: count }, () => {
    const passphrase = bip39.entropyToMnemonic(rng.bytes(16));
    return { keys: keyPairFromPassphrase(passphrase), oracle: adamant.createKeypairFromPassphrase(passphrase), passphrase };
  });
}

const randomAddress = (rng: Rng): `U${string}` => `U${rng.u64()}`;

/** Timestamps: mostly realistic (0 … 2^31−1), sometimes the int32 edges and negatives. */
function randomTimestamp(rng: Rng): number {
  if (rng.int(8) === 0) return rng.pick([0, 1, 2 ** 31 - 1, -1, -(2 ** 31), 100_000_000]);
  return rng.int(2 ** 31);
}

/** Amounts in sats: magnitudes spread from 0 to Number.MAX_SAFE_INTEGER (more than the ADM supply). */
function randomAmount(rng: Rng): number {
  if (rng.int(8) === 0) return rng.pick([0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, 100_000_000]);
  return Number(rng.u64() >> 11n); // < 2^53
}

const DELEGATE_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789!@$&_';

// ---- 1. Keys and addresses -------------------------------------------------------------------------------------

const MNEMONICS = 16;
const FRESH_MNEMONICS = 4;
const WORD_STRINGS = 8;
const UNICODE_PASSPHRASES = 24;

function assertSameKeys(passphrase: string): void {
  const ours = keyPairFromPassphrase(passphrase);
  const oracle = adamant.createKeypairFromPassphrase(passphrase);
  const shown = JSON.stringify(passphrase);
  assert.equal(ours.publicKey.toString('hex'), Buffer.from(oracle.publicKey).toString('hex'), `publicKey of ${shown}`);
  assert.equal(ours.privateKey.toString('hex'), Buffer.from(oracle.privateKey).toString('hex'), `privateKey of ${shown}`);
  const address = addressFromPublicKey(ours.publicKey);
  assert.equal(address, adamant.createAddressFromPublicKey(oracle.publicKey), `address of ${shown}`);
  assert.equal(address, adamant.createAddressFromPublicKey(ours.publicKey.toString('hex')), `address (hex input) of ${shown}`);
}

test(`1. keys and addresses equal the oracle's: ${MNEMONICS} seeded + ${FRESH_MNEMONICS} createNewPassphrase mnemonics, ${WORD_STRINGS} unchecked word strings, ${UNICODE_PASSPHRASES} unicode strings (seed ${SEED})`, () => {
  const rng = prng(1);
  const words = 'abandon ability able about above absent absorb abstract absurd abuse access accident zoo wrong legal winner'.split(' ');
  const passphrases: string[] = [
    ...Array.from({ length: MNEMONICS }, () => bip39.entropyToMnemonic(rng.bytes(16))),
    // Not seeded (the oracle draws from its own CSPRNG): the failure message prints the passphrase instead.
    ...Array.from({ length: FRESH_MNEMONICS }, () => adamant.createNewPassphrase()),
    // The mnemonic is not validated: any 12 words, checksum or not, and any spacing.
    ...Array.from({ length: WORD_STRINGS }, () => Array.from({ length: 12 }, () => rng.pick(words)).join(rng.pick([' ', '  ', '\u3000', ' \t']))),
    ...Array.from({ length: UNICODE_PASSPHRASES }, () => randomText(rng, rng.int(48), true)),
    // Edges: empty, one space, NFKD-sensitive forms (precomposed vs decomposed must give the same keys).
    '', ' ', 'ﬁ', 'Å', 'A\u030a', '가', '\u1100\u1161', '①②③', 'ＡＢＣ', '🚀'.repeat(10), '\ud800',
  ];
  for (const passphrase of passphrases) assertSameKeys(passphrase);
  // NFKD makes canonically equivalent passphrases the same account, in both implementations.
  assert.equal(keyPairFromPassphrase('Å').publicKey.toString('hex'), keyPairFromPassphrase('A\u030a').publicKey.toString('hex'));
});

// ---- 2. Transaction bytes, signatures and ids ------------------------------------------------------------------

const TX_PER_TYPE = 40;
const BUILT_PER_TYPE = 4;

/**
 * Our bytes (unsigned and signed), signature, id and verification against getBytes, signTransaction,
 * getTransactionId of the oracle; and a tampered signature is refused.
 */
function assertSameTransaction(tx: UnsignedTransaction, sender: { keys: KeyPair; oracle: OracleKeyPair; passphrase: string }): void {
  const shown = `${JSON.stringify(tx)} by ${JSON.stringify(sender.passphrase)}`;
  assert.equal(transactionBytes(tx).toString('hex'), adamant.getBytes(toOracle(tx)).toString('hex'), `bytes of ${shown}`);
  const signature = signTransaction(tx, sender.keys);
  const oracleSignature = adamant.signTransaction(toOracle(tx), sender.oracle);
  assert.equal(signature, oracleSignature, `signature of ${shown}`);
  assert.equal(
    transactionBytes(tx, Buffer.from(signature, 'hex')).toString('hex'),
    adamant.getBytes(toOracle(tx, oracleSignature), false).toString('hex'),
    `signed bytes of ${shown}`,
  );
  assert.equal(transactionId(tx, signature), adamant.getTransactionId(toOracle(tx, oracleSignature) as Parameters<typeof adamant.getTransactionId>[0]), `id of ${shown}`);
  assert.equal(verifyTransaction(tx, oracleSignature), true, `our verify accepts the oracle's signature of ${shown}`);
  const tampered = (parseInt(oracleSignature.slice(0, 2), 16) ^ 1).toString(16).padStart(2, '0') + oracleSignature.slice(2);
  assert.equal(verifyTransaction(tx, tampered), false, `a tampered signature is refused: ${shown}`);
}

/** A transaction the oracle built and signed itself (create*Transaction: its own timestamp, shapes and keys). */
function assertSameAsBuilt(built: OracleTransaction & { signature: string }, keys: KeyPair): void {
  const { signature, senderId, ...rest } = built as OracleTransaction & { signature: string; senderId: string };
  const tx = rest as unknown as UnsignedTransaction;
  const shown = JSON.stringify(built);
  assert.equal(senderId, addressFromPublicKey(keys.publicKey), `senderId of ${shown}`);
  assert.equal(signTransaction(tx, keys), signature, `signature of ${shown}`);
  assert.equal(transactionId(tx, signature), adamant.getTransactionId(built as Parameters<typeof adamant.getTransactionId>[0]), `id of ${shown}`);
  assert.equal(verifyTransaction(tx, signature), true, `verify ${shown}`);
}

test(`2a. type 0 sends: ${TX_PER_TYPE} random + ${BUILT_PER_TYPE} built by createSendTransaction (seed ${SEED})`, () => {
  const rng = prng(0x20);
  const pool = senders(rng, 4);
  const edges = ['U0', 'U1', `U${2n ** 64n - 1n}`, `U${2n ** 63n}`, `U${2n ** 53n + 1n}`, 'U1234567890123456', 'U00042'];
  for (let i = 0; i < TX_PER_TYPE; i++) {
    const sender = rng.pick(pool);
    const recipientId = i < edges.length ? edges[i]! : randomAddress(rng);
    assertSameTransaction({ type: 0, timestamp: randomTimestamp(rng), senderPublicKey: sender.keys.publicKey.toString('hex'), recipientId, amount: randomAmount(rng), asset: {} }, sender);
  }
  for (let i = 0; i < BUILT_PER_TYPE; i++) {
    const sender = rng.pick(pool);
    assertSameAsBuilt(adamant.createSendTransaction({ keyPair: sender.oracle, recipientId: randomAddress(rng), amount: randomAmount(rng) }), sender.keys);
  }
});

test(`2b. type 2 delegate registrations: ${TX_PER_TYPE} random usernames ^[a-z0-9!@$&_]{1,20}$ + ${BUILT_PER_TYPE} built (seed ${SEED})`, () => {
  const rng = prng(0x22);
  const pool = senders(rng, 4);
  for (let i = 0; i < TX_PER_TYPE + BUILT_PER_TYPE; i++) {
    const sender = rng.pick(pool);
    const username = Array.from({ length: 1 + rng.int(20) }, () => rng.pick([...DELEGATE_CHARS])).join('');
    assert.equal(adamant.isDelegateName(username), true, username);
    const publicKey = sender.keys.publicKey.toString('hex');
    if (i < TX_PER_TYPE) {
      assertSameTransaction({ type: 2, timestamp: randomTimestamp(rng), senderPublicKey: publicKey, recipientId: null, amount: 0, asset: { delegate: { username, publicKey } } }, sender);
    } else {
      assertSameAsBuilt(adamant.createDelegateTransaction({ keyPair: sender.oracle, username }), sender.keys);
    }
  }
});

test(`2c. type 3 votes: ${TX_PER_TYPE} random lists of 1..33 +/- public keys + ${BUILT_PER_TYPE} built (seed ${SEED})`, () => {
  const rng = prng(0x23);
  const pool = senders(rng, 4);
  for (let i = 0; i < TX_PER_TYPE + BUILT_PER_TYPE; i++) {
    const sender = rng.pick(pool);
    const length = i === 0 ? 33 : i === 1 ? 1 : 1 + rng.int(33);
    const votes = Array.from({ length }, () => `${rng.pick(['+', '-'])}${rng.bytes(32).toString('hex')}`);
    if (i < TX_PER_TYPE) {
      const senderId = addressFromPublicKey(sender.keys.publicKey);
      assertSameTransaction({ type: 3, timestamp: randomTimestamp(rng), senderPublicKey: sender.keys.publicKey.toString('hex'), recipientId: senderId, amount: 0, asset: { votes } }, sender);
    } else {
      assertSameAsBuilt(adamant.createVoteTransaction({ keyPair: sender.oracle, votes }), sender.keys);
    }
  }
});

test(`2d. type 8 chat transactions: ${TX_PER_TYPE} random assets, types 1/2/3, amount 0 or not + ${BUILT_PER_TYPE} built (seed ${SEED})`, () => {
  const rng = prng(0x28);
  const pool = senders(rng, 4);
  for (let i = 0; i < TX_PER_TYPE + BUILT_PER_TYPE; i++) {
    const sender = rng.pick(pool);
    // A box is at least the 16-byte tag; a few longer rich messages; the nonce is 24 bytes.
    const message = rng.bytes(16 + (rng.int(6) === 0 ? rng.int(4000) : rng.int(200))).toString('hex');
    const own_message = rng.bytes(24).toString('hex');
    const type = 1 + rng.int(3);
    const amount = rng.int(2) === 0 ? 0 : randomAmount(rng);
    const recipientId = randomAddress(rng);
    if (i < TX_PER_TYPE) {
      assertSameTransaction({ type: 8, timestamp: randomTimestamp(rng), senderPublicKey: sender.keys.publicKey.toString('hex'), recipientId, amount, asset: { chat: { message, own_message, type } } }, sender);
    } else {
      assertSameAsBuilt(adamant.createChatTransaction({ keyPair: sender.oracle, recipientId, message, own_message, message_type: type as 1 | 2 | 3, amount }), sender.keys);
    }
  }
});

// ---- 3. Chat encryption ----------------------------------------------------------------------------------------

const CHATS = 30;

/**
 * What the oracle's decodeMessage returns for `text`: its utf8ArrayToStr decodes 1- to 3-byte UTF-8 sequences only and
 * drops 4-byte ones (emoji and other astral characters), so for such texts the expected value is its decoding of the
 * UTF-8 bytes. Those texts are still checked exactly: 3a opens the box with the oracle's nacl.box.open and compares the
 * plaintext bytes, and 3b compares whole boxes.
 */
const oracleReads = (text: string): string => (hasAstral(text) ? adamant.utf8ArrayToStr(new TextEncoder().encode(text)) : text);

function chatTexts(rng: Rng): string[] {
  return [
    // Edges: empty (the box is the bare tag), one character, one emoji, NUL, a long rich-looking message.
    '', 'a', '🚀', '\u0000', 'Hello, ADAMANT: привет, 你好 🚀', JSON.stringify({ type: 'eth_transaction', amount: '0.1', hash: '0x' + 'ab'.repeat(32) }),
    randomText(rng, 3000),
    ...Array.from({ length: CHATS }, () => randomText(rng, rng.int(6) === 0 ? rng.int(2000) : rng.int(80))),
  ];
}

test(`3a. our encryptMessage → the oracle's decodeMessage, for the recipient and the sender (${CHATS} random texts + edges, seed ${SEED})`, () => {
  const rng = prng(0x3a);
  const [alice, bob] = senders(rng, 2) as [ReturnType<typeof senders>[number], ReturnType<typeof senders>[number]];
  for (const text of chatTexts(rng)) {
    const shown = JSON.stringify(text);
    const { message, own_message } = encryptMessage(text, bob.keys.publicKey, alice.keys.privateKey);
    assert.match(own_message, /^[0-9a-f]{48}$/);
    assert.equal(message.length, 2 * (16 + Buffer.byteLength(text, 'utf8')), `box length of ${shown}`);
    assert.equal(adamant.decodeMessage(message, alice.oracle.publicKey, bob.oracle, own_message), oracleReads(text), `bob reads ${shown}`);
    assert.equal(adamant.decodeMessage(message, bob.oracle.publicKey.toString('hex'), alice.oracle, own_message), oracleReads(text), `alice reads her own ${shown}`);
    // The plaintext bytes themselves, as decodeMessage opens them (exact for astral texts too).
    const opened = nacl.box.open(Buffer.from(message, 'hex'), Buffer.from(own_message, 'hex'), ed2curve.convertPublicKey(alice.oracle.publicKey)!, ed2curve.convertSecretKey(bob.oracle.privateKey));
    assert.ok(opened, `the oracle's nacl.box.open accepts ${shown}`);
    assert.equal(Buffer.from(opened).toString('hex'), Buffer.from(text, 'utf8').toString('hex'), `plaintext bytes of ${shown}`);
  }
});

test(`3b. the oracle's encodeMessage → our decryptMessage, and our box with its nonce is byte-identical (${CHATS} random texts + edges, seed ${SEED})`, () => {
  const rng = prng(0x3b);
  const [alice, bob] = senders(rng, 2) as [ReturnType<typeof senders>[number], ReturnType<typeof senders>[number]];
  for (const text of chatTexts(rng)) {
    // The oracle draws the nonce itself (it cannot be fixed, nor seeded); ours takes it as a parameter, so reuse the
    // oracle's. The failure message prints it.
    const oracle = adamant.encodeMessage(text, alice.oracle, bob.oracle.publicKey);
    const shown = `${JSON.stringify(text)} (nonce ${oracle.own_message})`;
    assert.deepEqual(encryptMessage(text, bob.keys.publicKey, alice.keys.privateKey, Buffer.from(oracle.own_message, 'hex')), oracle, `same box for ${shown}`);
    assert.equal(decryptMessage(oracle.message, oracle.own_message, alice.keys.publicKey, bob.keys.privateKey), text, `bob reads ${shown}`);
    assert.equal(decryptMessage(oracle.message, oracle.own_message, bob.keys.publicKey, alice.keys.privateKey), text, `alice reads her own ${shown}`);
  }
});

// ---- 4. newAccount ---------------------------------------------------------------------------------------------

const ACCOUNTS = 10;

test(`4. newAccount: a valid 12-word BIP-39 mnemonic from which the oracle derives the same account (${ACCOUNTS} accounts)`, () => {
  const seen = new Set<string>();
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = newAccount();
    const shown = JSON.stringify(account.passphrase);
    assert.equal(adamant.isPassphrase(account.passphrase), true, `isPassphrase(${shown})`);
    // adamant-api's isPassphrase only checks `length > 30`; the BIP-39 checksum is checked with its bip39.
    assert.equal(bip39.validateMnemonic(account.passphrase), true, `validateMnemonic(${shown})`);
    assert.equal(account.passphrase.split(' ').length, 12, shown);
    const oracle = adamant.createKeypairFromPassphrase(account.passphrase);
    assert.equal(account.publicKey, oracle.publicKey.toString('hex'), `publicKey of ${shown}`);
    assert.equal(account.privateKey, oracle.privateKey.toString('hex'), `privateKey of ${shown}`);
    assert.equal(account.address, adamant.createAddressFromPublicKey(oracle.publicKey), `address of ${shown}`);
    seen.add(account.passphrase);
  }
  assert.equal(seen.size, ACCOUNTS, 'every account is fresh');
});
