// One block of the Ethereum node's JSON-RPC answers → the `public.ethtxs` rows the original indexer would have
// written for it (docs/notes/transfers-console.md A.1–A.2, with the encodings of A.4 "Recommended design" and F.9).
// Pure: the JSON-RPC client (storage/transfers/chain.eth-rpc.ts) fetches, the indexer machine writes.

import { keccak_256 } from '@noble/hashes/sha3.js';

/** A row of `public.ethtxs`, in table order (notes A.1). Big quantities are exact decimal strings (numeric/bigint). */
export interface TransferRow {
  time: number;
  txfrom: string;
  txto: string | null;
  gas: string;
  gasprice: string;
  block: number;
  txhash: string;
  value: string;
  contract_to: string;
  contract_value: string;
}

/** A 0x-prefixed hex quantity as JSON-RPC encodes numbers (`"0x1b4"`). */
export type HexQuantity = string;

/** A transaction object inside `eth_getBlockByNumber(n, true)`: only the fields the rows need. */
export interface RpcTransaction {
  readonly hash: string;
  readonly from: string;
  /** null for a contract creation. */
  readonly to: string | null;
  readonly value: HexQuantity;
  readonly input: string;
  /** Legacy and access-list txs: the price; type-2 txs in a mined block: the effective price the sender paid. */
  readonly gasPrice?: HexQuantity;
  readonly type?: HexQuantity;
}

/** `eth_getBlockByNumber(n, false)`: what reorg detection compares (notes A.4 "Reorgs"). */
export interface RpcBlockHeader {
  readonly number: HexQuantity;
  readonly hash: string;
  readonly parentHash: string;
  readonly timestamp: HexQuantity;
}

/** `eth_getBlockByNumber(n, true)`: a block with full transaction objects. */
export interface RpcBlock extends RpcBlockHeader {
  readonly transactions: readonly RpcTransaction[];
}

/** `eth_getTransactionReceipt` / an element of `eth_getBlockReceipts`: only the fields the rows need. */
export interface RpcReceipt {
  readonly transactionHash: string;
  readonly blockHash?: string;
  readonly gasUsed: HexQuantity;
  readonly effectiveGasPrice?: HexQuantity;
  /** "0x1" success, "0x0" failure; failures are indexed all the same (notes A.2 item 6, F.9). */
  readonly status?: HexQuantity;
}

/** A tx that produces a row has no receipt in what the node returned: a row without `gas` would be wrong. */
export class MissingReceiptError extends Error {
  override readonly name = 'MissingReceiptError';
  constructor(readonly block: number, readonly txhash: string) {
    super(`block ${block}: no receipt for transaction ${txhash}`);
  }
}

/** A receipt belongs to another block than the one being decoded (the chain moved between the two requests). */
export class ReceiptBlockMismatchError extends Error {
  override readonly name = 'ReceiptBlockMismatchError';
  constructor(readonly block: number, readonly txhash: string, readonly expectedHash: string, readonly receiptBlockHash: string) {
    super(`block ${block}: the receipt of ${txhash} is from block ${receiptBlockHash}, not ${expectedHash}`);
  }
}

/** The node's answer does not have the shape JSON-RPC promises (a missing or non-hex field, tx hashes only…). */
export class RpcShapeError extends Error {
  override readonly name = 'RpcShapeError';
  constructor(message: string) {
    super(message);
  }
}

/** `transfer(address,uint256)`: the one selector the original decodes (notes A.2 item 3). */
export const ERC20_TRANSFER_SELECTOR = '0xa9059cbb';

/**
 * The original's sanity limit on `contract_to` (notes A.2 item 4): longer than two words and both contract columns
 * are reset to '' while the row is still written (its log says "Skipping", but it inserts).
 */
const CONTRACT_TO_MAX_CHARS = 128;

/** One 32-byte ABI word in hex characters; the original slices `contract_to` up to the last word. */
const WORD_CHARS = 64;

/** Where `contract_to` starts in the 0x-prefixed calldata string: after '0x' and the 8-hex selector. */
const CONTRACT_TO_START = 2 + 8;

/** Where `contract_value` starts: after '0x', the selector and one word. */
const CONTRACT_VALUE_START = CONTRACT_TO_START + WORD_CHARS;

const HEX_QUANTITY = /^0x[0-9a-fA-F]+$/;
const HEX_DATA = /^0x(?:[0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function quantity(value: unknown, what: string): bigint {
  if (typeof value !== 'string' || !HEX_QUANTITY.test(value)) throw new RpcShapeError(`${what} is not a hex quantity: ${JSON.stringify(value)}`);
  return BigInt(value);
}

/** Block numbers and timestamps fit the `integer` columns and JS numbers; anything else is a broken node. */
function smallQuantity(value: unknown, what: string): number {
  const big = quantity(value, what);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new RpcShapeError(`${what} is out of range: ${String(value)}`);
  return Number(big);
}

/**
 * EIP-55 mixed-case checksum encoding (https://eips.ethereum.org/EIPS/eip-55): web3.py returns addresses this way,
 * so the original's rows hold them in this case (notes A.2 item 4, A.4). Accepts any case on input.
 */
export function toChecksumAddress(address: string): string {
  if (!ADDRESS.test(address)) throw new RpcShapeError(`not a 20-byte hex address: ${JSON.stringify(address)}`);
  const lower = address.slice(2).toLowerCase();
  const hash = keccak_256(new TextEncoder().encode(lower));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const char = lower[i]!;
    // The i-th hex digit of the hash: high nibble for even i, low nibble for odd i; ≥ 8 means upper case.
    const byte = hash[i >> 1]!;
    const nibble = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
    out += nibble >= 8 ? char.toUpperCase() : char;
  }
  return out;
}

/**
 * `toChecksumAddress` remembered for the addresses seen last: a keccak per address was a fifth of the indexer's CPU
 * per row (profiled on the transfers bench), and a chain's busy addresses (token contracts, exchange wallets) recur
 * in every block. Holds at most `limit` addresses, forgetting all of them when full (~150 bytes each).
 */
export class ChecksumAddresses {
  readonly #known = new Map<string, string>();
  constructor(private readonly limit = 50_000) {}

  of(address: string): string {
    const known = this.#known.get(address);
    if (known !== undefined) return known;
    const checksummed = toChecksumAddress(address);
    if (this.#known.size >= this.limit) this.#known.clear();
    this.#known.set(address, checksummed);
    return checksummed;
  }
}

/**
 * The contract columns, sliced exactly as the original slices the 0x-prefixed calldata string (notes A.2 items 4–5):
 * `contract_to = input[10:-64]`, `contract_value = input[74:]`, computed only when the selector matches.
 * Kept quirks, on purpose, because consumers of the original's data rely on the same strings:
 * - 36-byte calldata (selector + one word): both columns are '' (the one word is "the last 64 characters"), so a
 *   value-0 token tx of that shape looks like a native transfer.
 * - One extra word (100 bytes): `contract_to` is 128 characters (recipient + amount words) and `contract_value` is
 *   128 characters (amount + extra word).
 * - Two or more extra words: `contract_to` exceeds 128 characters and both columns are reset to ''.
 * - Fewer than 36 bytes: Python's negative slice end clamps, giving '' for both, or short fragments in between.
 */
export function contractColumns(input: string): { contract_to: string; contract_value: string } {
  const calldata = input.toLowerCase();
  if (!calldata.startsWith(ERC20_TRANSFER_SELECTOR)) return { contract_to: '', contract_value: '' };
  const contractTo = calldata.slice(CONTRACT_TO_START, Math.max(calldata.length - WORD_CHARS, 0));
  const contractValue = calldata.slice(CONTRACT_VALUE_START);
  if (contractTo.length > CONTRACT_TO_MAX_CHARS) return { contract_to: '', contract_value: '' };
  return { contract_to: contractTo, contract_value: contractValue };
}

/** The original's skip rule (notes A.2 item 3): a row iff value > 0 or the calldata starts with the transfer selector. */
export function isTransfer(value: bigint, input: string): boolean {
  return value > 0n || input.toLowerCase().startsWith(ERC20_TRANSFER_SELECTOR);
}

function receiptIndex(receipts: ReadonlyMap<string, RpcReceipt> | readonly RpcReceipt[]): ReadonlyMap<string, RpcReceipt> {
  if (!Array.isArray(receipts)) {
    const given = receipts as ReadonlyMap<string, RpcReceipt>;
    // Callers may key by any case; look-ups below use lowercase hashes.
    if ([...given.keys()].every((key) => key === key.toLowerCase())) return given;
    return new Map([...given].map(([hash, receipt]) => [hash.toLowerCase(), receipt]));
  }
  const index = new Map<string, RpcReceipt>();
  for (const receipt of receipts as readonly RpcReceipt[]) {
    if (receipt === null || typeof receipt !== 'object' || typeof receipt.transactionHash !== 'string') {
      throw new RpcShapeError('a receipt without transactionHash');
    }
    index.set(receipt.transactionHash.toLowerCase(), receipt);
  }
  return index;
}

/**
 * The rows of one block, in transaction order. Receipts are looked up by tx hash; only txs that produce a row need
 * one (the original fetched a receipt for every tx and then skipped most of them, notes A.2 item 2).
 * Throws `MissingReceiptError` / `ReceiptBlockMismatchError` / `RpcShapeError` rather than write a wrong row.
 */
export function transferRows(
  block: RpcBlock,
  receipts: ReadonlyMap<string, RpcReceipt> | readonly RpcReceipt[],
  checksums: ChecksumAddresses = new ChecksumAddresses(),
): TransferRow[] {
  const number = smallQuantity(block.number, 'block.number');
  const time = smallQuantity(block.timestamp, `block ${number} timestamp`);
  if (!Array.isArray(block.transactions)) throw new RpcShapeError(`block ${number} has no transactions array`);
  const blockHash = typeof block.hash === 'string' ? block.hash.toLowerCase() : undefined;
  const byHash = receiptIndex(receipts);
  const rows: TransferRow[] = [];
  for (const tx of block.transactions) {
    if (tx === null || typeof tx !== 'object') {
      throw new RpcShapeError(`block ${number}: transactions are not full objects (eth_getBlockByNumber needs true as its second parameter)`);
    }
    if (typeof tx.hash !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(tx.hash)) throw new RpcShapeError(`block ${number}: a transaction without a valid hash`);
    const txhash = tx.hash.toLowerCase();
    const value = quantity(tx.value, `tx ${txhash} value`);
    const input = tx.input;
    if (typeof input !== 'string' || !HEX_DATA.test(input)) throw new RpcShapeError(`tx ${txhash} input is not hex data`);
    if (!isTransfer(value, input)) continue;

    const receipt = byHash.get(txhash);
    if (!receipt) throw new MissingReceiptError(number, txhash);
    if (blockHash !== undefined && typeof receipt.blockHash === 'string' && receipt.blockHash.toLowerCase() !== blockHash) {
      throw new ReceiptBlockMismatchError(number, txhash, blockHash, receipt.blockHash.toLowerCase());
    }
    // Mined type-2 txs carry the effective price in gasPrice (notes A.2 item 4); a node that omits it still reports
    // the same number as the receipt's effectiveGasPrice.
    const price = tx.gasPrice ?? receipt.effectiveGasPrice;
    if (price === undefined) throw new RpcShapeError(`tx ${txhash} has neither gasPrice nor a receipt effectiveGasPrice`);

    rows.push({
      time,
      txfrom: checksums.of(tx.from),
      // Contract creation: `to` is null and so is the column (notes A.2 item 7).
      txto: tx.to === null || tx.to === undefined ? null : checksums.of(tx.to),
      gas: quantity(receipt.gasUsed, `receipt ${txhash} gasUsed`).toString(),
      gasprice: quantity(price, `tx ${txhash} gasPrice`).toString(),
      block: number,
      // Always 0x-prefixed lowercase (notes A.2 item 10: web3 v7's .hex() dropped the prefix).
      txhash,
      value: value.toString(),
      ...contractColumns(input),
    });
  }
  return rows;
}
