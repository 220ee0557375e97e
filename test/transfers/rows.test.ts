// Row decoding (src/transfers/rows.ts): the original indexer's row rules (notes A.2) with the project's encodings
// (notes A.4 "Recommended design", F.9), on hand-made JSON-RPC answers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ChecksumAddresses,
  MissingReceiptError,
  ReceiptBlockMismatchError,
  RpcShapeError,
  toChecksumAddress,
  transferRows,
  type RpcBlock,
  type RpcReceipt,
  type RpcTransaction,
} from '../../src/transfers/rows.js';
import { prng } from '../support/random.js';

const SENDER = '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed';
const SENDER_CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const RECIPIENT = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';
const RECIPIENT_CHECKSUMMED = '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359';
const TOKEN = '0xdbf03b407c01e7cd3cbea99509d93f8dddc8c6fb';
const TOKEN_CHECKSUMMED = '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB';
const BLOCK_HASH = `0x${'ab'.repeat(32)}`;

const word = (hex: string) => hex.padStart(64, '0');
const RECIPIENT_WORD = word(RECIPIENT.slice(2));
const AMOUNT_WORD = word((10n ** 18n * 5n).toString(16));
const EXTRA_WORD = word('beef');

let nextHash = 1;
function hash(): string {
  return `0x${(nextHash++).toString(16).padStart(64, '0')}`;
}

function tx(fields: Partial<RpcTransaction>): RpcTransaction {
  return { hash: hash(), from: SENDER, to: RECIPIENT, value: '0x0', input: '0x', gasPrice: '0x3b9aca00', type: '0x0', ...fields };
}

function receipt(of: RpcTransaction, fields: Partial<RpcReceipt> = {}): RpcReceipt {
  return { transactionHash: of.hash, blockHash: BLOCK_HASH, gasUsed: '0x5208', effectiveGasPrice: of.gasPrice ?? '0x1', status: '0x1', ...fields };
}

function block(transactions: RpcTransaction[]): RpcBlock {
  return { number: '0x2a', hash: BLOCK_HASH, parentHash: `0x${'cd'.repeat(32)}`, timestamp: '0x65a0b2c0', transactions };
}

function rowsOf(transactions: RpcTransaction[], receipts: RpcReceipt[] = transactions.map((t) => receipt(t))) {
  return transferRows(block(transactions), receipts);
}

test('EIP-55 checksums: the EIP test vectors (all caps, all lower, mixed), from any input case', () => {
  const vectors = [
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    '0xde709f2102306220921060314715629080e2fb77',
    '0x27b1fdb04752bbc536007a920d24acb045561c26',
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
  ];
  for (const vector of vectors) {
    assert.equal(toChecksumAddress(vector.toLowerCase()), vector);
    assert.equal(toChecksumAddress(`0x${vector.slice(2).toUpperCase()}`), vector);
    assert.equal(toChecksumAddress(vector), vector);
  }
  assert.throws(() => toChecksumAddress('0x1234'), RpcShapeError);
});

test('ChecksumAddresses: the same answers as toChecksumAddress, remembered up to its limit, a bad address refused every time', () => {
  const checksums = new ChecksumAddresses(3);
  const random = prng(55);
  const addresses = Array.from({ length: 40 }, () => `0x${Array.from({ length: 40 }, () => '0123456789abcdefABCDEF'[Math.floor(random() * 22)]).join('')}`);
  // Each address three times, interleaved, so some are met again after the memo was cleared.
  for (let round = 0; round < 3; round++) for (const address of addresses) assert.equal(checksums.of(address), toChecksumAddress(address));
  assert.throws(() => checksums.of('0x1234'), RpcShapeError);
  assert.throws(() => checksums.of('0x1234'), RpcShapeError, 'not remembered as an answer');
});

test('a native transfer: every column, empty contract columns, hash lowercase 0x', () => {
  const transfer = tx({ value: '0xde0b6b3a7640000', hash: `0x${'AB'.repeat(32)}` });
  assert.deepEqual(rowsOf([transfer]), [
    {
      time: 0x65a0b2c0,
      txfrom: SENDER_CHECKSUMMED,
      txto: RECIPIENT_CHECKSUMMED,
      gas: '21000',
      gasprice: '1000000000',
      block: 42,
      txhash: `0x${'ab'.repeat(32)}`,
      value: '1000000000000000000',
      contract_to: '',
      contract_value: '',
    },
  ]);
});

test('an ERC-20 transfer: txto is the token, contract_to/contract_value are the raw words', () => {
  const transfer = tx({ to: TOKEN, input: `0xa9059cbb${RECIPIENT_WORD}${AMOUNT_WORD}` });
  const [row] = rowsOf([transfer], [receipt(transfer, { gasUsed: '0xcb9c' })]);
  assert.deepEqual(row, {
    time: 0x65a0b2c0,
    txfrom: SENDER_CHECKSUMMED,
    txto: TOKEN_CHECKSUMMED,
    gas: String(0xcb9c),
    gasprice: '1000000000',
    block: 42,
    txhash: transfer.hash,
    value: '0',
    contract_to: RECIPIENT_WORD,
    contract_value: AMOUNT_WORD,
  });
  // Upper-case calldata from a node still matches the selector and is stored lower case.
  const upper = tx({ to: TOKEN, input: `0xA9059CBB${RECIPIENT_WORD.toUpperCase()}${AMOUNT_WORD}` });
  assert.equal(rowsOf([upper])[0]!.contract_to, RECIPIENT_WORD);
});

test('a value-0 tx without the transfer selector is skipped, and needs no receipt', () => {
  const approve = tx({ to: TOKEN, input: `0x095ea7b3${RECIPIENT_WORD}${AMOUNT_WORD}` });
  const plain = tx({});
  assert.deepEqual(transferRows(block([approve, plain]), []), []);
});

test('value and selector together: one row with both', () => {
  const both = tx({ to: TOKEN, value: '0x7', input: `0xa9059cbb${RECIPIENT_WORD}${AMOUNT_WORD}` });
  const rows = rowsOf([both]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.value, '7');
  assert.equal(rows[0]!.contract_to, RECIPIENT_WORD);
  assert.equal(rows[0]!.contract_value, AMOUNT_WORD);
});

test('value with other calldata (a payable call) is a native row with empty contract columns', () => {
  const deposit = tx({ to: TOKEN, value: '0x1', input: `0xd0e30db0${EXTRA_WORD}` });
  const [row] = rowsOf([deposit]);
  assert.equal(row!.contract_to, '');
  assert.equal(row!.contract_value, '');
});

test('quirk kept: 36-byte calldata (selector + one word) gives empty contract columns', () => {
  const short = tx({ to: TOKEN, input: `0xa9059cbb${RECIPIENT_WORD}` });
  const [row] = rowsOf([short]);
  assert.equal(row!.value, '0');
  assert.equal(row!.contract_to, '');
  assert.equal(row!.contract_value, '');
});

test('quirk kept: one extra word makes both contract columns 128 characters', () => {
  const extra = tx({ to: TOKEN, input: `0xa9059cbb${RECIPIENT_WORD}${AMOUNT_WORD}${EXTRA_WORD}` });
  const [row] = rowsOf([extra]);
  assert.equal(row!.contract_to, RECIPIENT_WORD + AMOUNT_WORD);
  assert.equal(row!.contract_value, AMOUNT_WORD + EXTRA_WORD);
  assert.equal(row!.contract_to.length, 128);
});

test('contract_to over 128 characters resets both columns, and the row is still written', () => {
  const long = tx({ to: TOKEN, input: `0xa9059cbb${RECIPIENT_WORD}${AMOUNT_WORD}${EXTRA_WORD}${EXTRA_WORD}` });
  const rows = rowsOf([long]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.contract_to, '');
  assert.equal(rows[0]!.contract_value, '');
});

test('a contract creation with value: txto null; without value: no row', () => {
  const creation = tx({ to: null, value: '0x64', input: '0x600a600c600039600a6000f3' });
  const plainCreation = tx({ to: null, input: '0x600a600c600039600a6000f3' });
  const rows = rowsOf([creation, plainCreation]);
  assert.equal(rows.length, 1);
  assert.equal(rows[0]!.txto, null);
  assert.equal(rows[0]!.value, '100');
  assert.equal(rows[0]!.txhash, creation.hash);
});

test('a failed tx (receipt status 0) is kept, with the gas it used', () => {
  const failed = tx({ to: TOKEN, input: `0xa9059cbb${RECIPIENT_WORD}${AMOUNT_WORD}` });
  const [row] = rowsOf([failed], [receipt(failed, { status: '0x0', gasUsed: '0x5d1c' })]);
  assert.equal(row!.gas, String(0x5d1c));
  assert.equal(row!.contract_value, AMOUNT_WORD);
});

test('10^24 wei and 2^64+ prices stay exact decimal strings', () => {
  const whale = tx({ value: `0x${(10n ** 24n).toString(16)}`, gasPrice: `0x${(2n ** 70n).toString(16)}` });
  const [row] = rowsOf([whale]);
  assert.equal(row!.value, '1000000000000000000000000');
  assert.equal(row!.gasprice, (2n ** 70n).toString());
});

test('gasprice: the mined tx gasPrice; the receipt effectiveGasPrice when the tx lacks it', () => {
  const dynamic = tx({ type: '0x2', value: '0x1', gasPrice: '0x4a817c800' });
  const noPrice = { ...tx({ type: '0x2', value: '0x1' }), gasPrice: undefined };
  const rows = rowsOf([dynamic, noPrice], [receipt(dynamic, { effectiveGasPrice: '0x1' }), receipt(noPrice, { effectiveGasPrice: '0x77359400' })]);
  assert.deepEqual(rows.map((row) => row.gasprice), ['20000000000', '2000000000']);
});

test('receipts as a Map keyed by hash in any case, or as an array, give the same rows', () => {
  const a = tx({ value: '0x1' });
  const b = tx({ to: TOKEN, input: `0xa9059cbb${RECIPIENT_WORD}${AMOUNT_WORD}` });
  const receipts = [receipt(a), receipt(b, { gasUsed: '0x9999' })];
  const byHash = new Map(receipts.map((r) => [r.transactionHash.toUpperCase().replace('0X', '0x'), r]));
  assert.deepEqual(transferRows(block([a, b]), byHash), transferRows(block([a, b]), receipts));
});

test('a missing receipt for a row is an error, never a row without gas', () => {
  const transfer = tx({ value: '0x1' });
  assert.throws(() => rowsOf([transfer], []), (error: unknown) => error instanceof MissingReceiptError && error.name === 'MissingReceiptError' && error.txhash === transfer.hash);
});

test('a receipt from another block (the chain moved between requests) is an error', () => {
  const transfer = tx({ value: '0x1' });
  assert.throws(() => rowsOf([transfer], [receipt(transfer, { blockHash: `0x${'ee'.repeat(32)}` })]), ReceiptBlockMismatchError);
});

test('a block with tx hashes only, or a non-hex value, is a shape error', () => {
  const hashesOnly = { ...block([]), transactions: [hash()] } as unknown as RpcBlock;
  assert.throws(() => transferRows(hashesOnly, []), RpcShapeError);
  assert.throws(() => rowsOf([tx({ value: '12' })]), RpcShapeError);
  assert.throws(() => rowsOf([tx({ value: '0x1', from: '0xnot' })]), RpcShapeError);
});
