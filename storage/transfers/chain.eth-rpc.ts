// The indexer's Ethereum JSON-RPC client over HTTP(S) (docs/notes/transfers-console.md A.2, A.4 "Recommended design"):
// global fetch, JSON-RPC batches, every call bounded by the caller's AbortSignal (pass a `fromPromise` actor's signal
// straight in, docs/DESIGN.md rule 6) and a per-request timeout on the injected clock (rule 2), response bodies bounded
// before they are parsed, and failures thrown as one class per kind (callers match on `name`).
//
// Receipts: `eth_getBlockReceipts` (anvil, geth, erigon, nethermind, reth) gives a block's receipts in one call; a
// node without it gets per-transaction `eth_getTransactionReceipt` calls sent as JSON-RPC batches, and the client
// remembers the fallback so later blocks go straight there. The original sent one receipt request per tx, the cause
// of its slow syncs (notes A.3, issue #12).
//
// Requests carry no credentials in error messages: a node URL often embeds an API key, so errors name only the host.

import { isAscii } from 'node:buffer';
import pLimit from 'p-limit';
import { AbortedError } from '../../src/errors.js';
import { linkSignals } from '../../src/cancellation.js';
import { deadline, type Clock, type Deadline } from '../../src/clock.js';
import { isRecord } from '../../src/is-record.js';
import { MissingReceiptError, isTransfer, type RpcBlock, type RpcBlockHeader, type RpcReceipt } from '../../src/transfers/rows.js';

/** A node that has not answered one HTTP request in this long is treated as unavailable (the machine retries). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Largest response body read. geth caps a batch's response at 25 MB by default (`--rpc.batch-response-max-size`);
 * a block's receipts on mainnet are a few MB, so 32 MiB fits every answer this client asks for.
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;
/**
 * Blocks (or blocks' receipts) per batch request: ten mainnet blocks with full txs or receipts stay well under geth's
 * 25 MB batch response cap, and a range of 50 blocks is still 5 requests, sent `concurrency` at a time.
 */
export const DEFAULT_BLOCKS_PER_REQUEST = 10;
/** `eth_getTransactionReceipt` calls per batch in per-transaction mode (geth's default batch limit is 1000 items). */
export const DEFAULT_MAX_BATCH_ITEMS = 100;
/** Batch requests in flight at once for one range. */
export const DEFAULT_CONCURRENCY = 4;

/** JSON-RPC "method not found" (JSON-RPC 2.0) and "method not supported" (EIP-1474). */
const METHOD_NOT_FOUND = -32601;
const METHOD_NOT_SUPPORTED = -32004;
/** Invalid params: for eth_getBlockReceipts (one parameter, a block hash) a node that only takes numbers says so. */
const INVALID_PARAMS = -32602;
/** Nodes and proxies that answer an unknown method with a generic code but a telling message. */
const METHOD_UNSUPPORTED_TEXT = /method.*(not found|not supported|unsupported|not available|does not exist|not exist)|unsupported method|not implemented/i;

/** `block`: eth_getBlockReceipts per block; `transaction`: batched eth_getTransactionReceipt per tx. */
export type ReceiptsMode = 'block' | 'transaction';

export interface EthRpcClientInit {
  /** http:// or https:// node URL; user:password in it becomes a Basic Authorization header. */
  readonly url: string;
  /** The runtime's clock: `timeoutMs` runs on it, so a SimulatedClock drives it in tests. */
  readonly clock: Clock;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  /** `auto` (default): block mode until the node says it lacks eth_getBlockReceipts. `transaction`: forced (benchmark). */
  readonly receiptsMode?: ReceiptsMode | 'auto';
  readonly blocksPerRequest?: number;
  readonly maxBatchItems?: number;
  readonly concurrency?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Called once when the client falls back to per-transaction receipts, with the node's answer (for a log line). */
  readonly onReceiptsFallback?: (reason: EthRpcError) => void;
}

/** A block and its receipts: every receipt `transferRows` needs (in block mode, all of the block's receipts). */
export interface BlockWithReceipts {
  readonly block: RpcBlock;
  readonly receipts: readonly RpcReceipt[];
}

/** The node answered with a JSON-RPC error object. */
export class EthRpcError extends Error {
  override readonly name = 'EthRpcError';
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`${method}: node error ${code}: ${rpcMessage}`);
  }
}

/** The node could not be asked: connection refused or reset, timeout, or an HTTP status other than 200. */
export class EthNodeUnavailableError extends Error {
  override readonly name = 'EthNodeUnavailableError';
  constructor(
    message: string,
    /** The HTTP status when the node answered with one other than 200. */
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The answer exceeded `maxResponseBytes`; lower `blocksPerRequest` / `maxBatchItems` or raise the limit. */
export class EthResponseTooLargeError extends Error {
  override readonly name = 'EthResponseTooLargeError';
  constructor(readonly limitBytes: number, what: string) {
    super(`${what}: the node's answer exceeds ${limitBytes} bytes`);
  }
}

/** The answer is not the JSON-RPC the request asked for (not JSON, ids missing, a block of the wrong number…). */
export class EthInvalidResponseError extends Error {
  override readonly name = 'EthInvalidResponseError';
  constructor(message: string) {
    super(message);
  }
}

/** A block of the requested range is not (or no longer) on the node: the chain is shorter, or moved. */
export class EthBlockNotFoundError extends Error {
  override readonly name = 'EthBlockNotFoundError';
  constructor(readonly number: number, readonly hash?: string) {
    super(hash === undefined ? `block ${number} is not on the node` : `block ${number} (${hash}) is no longer on the node`);
  }
}

interface RpcCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** One batch item's outcome: batches are settled per item so a caller can react to one item's error. */
type Outcome = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: EthRpcError };

interface WireResponse {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code?: unknown; readonly message?: unknown; readonly data?: unknown };
}

export function toHexQuantity(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`not a block number: ${value}`);
  return `0x${value.toString(16)}`;
}

function isMethodUnsupported(error: EthRpcError): boolean {
  if (error.code === METHOD_NOT_FOUND || error.code === METHOD_NOT_SUPPORTED) return true;
  if (error.method === 'eth_getBlockReceipts' && error.code === INVALID_PARAMS) return true;
  return METHOD_UNSUPPORTED_TEXT.test(error.rpcMessage);
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

function positiveInteger(value: number | undefined, fallback: number, what: string): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < 1) throw new RangeError(`${what} must be a positive integer, got ${value}`);
  return resolved;
}

/** Big block numbers fit a JS number (the `block` column is a 32-bit integer anyway). */
function blockNumberOf(value: unknown, what: string): number {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]+$/.test(value)) throw new EthInvalidResponseError(`${what}: not a hex quantity: ${JSON.stringify(value)}`);
  const number = BigInt(value);
  if (number > BigInt(Number.MAX_SAFE_INTEGER)) throw new EthInvalidResponseError(`${what}: out of range: ${value}`);
  return Number(number);
}

function asHeader(raw: unknown, number: number): RpcBlockHeader {
  if (!isRecord(raw)) throw new EthInvalidResponseError(`eth_getBlockByNumber(${number}): not a block object`);
  if (blockNumberOf(raw.number, `block ${number} number`) !== number) {
    throw new EthInvalidResponseError(`eth_getBlockByNumber(${number}): the node returned block ${String(raw.number)}`);
  }
  if (typeof raw.hash !== 'string' || typeof raw.parentHash !== 'string') throw new EthInvalidResponseError(`block ${number}: no hash or parentHash`);
  return raw as unknown as RpcBlockHeader;
}

function asBlock(raw: unknown, number: number): RpcBlock {
  asHeader(raw, number);
  if (!isRecord(raw) || !Array.isArray(raw.transactions) || !raw.transactions.every(isRecord)) {
    throw new EthInvalidResponseError(`block ${number}: transactions are not full objects`);
  }
  return raw as unknown as RpcBlock;
}

function asReceipts(raw: unknown, block: RpcBlock, number: number): RpcReceipt[] {
  if (!Array.isArray(raw) || !raw.every((receipt) => isRecord(receipt) && typeof receipt.transactionHash === 'string')) {
    throw new EthInvalidResponseError(`eth_getBlockReceipts(${number}): not a list of receipts`);
  }
  if (raw.length !== block.transactions.length) {
    throw new EthInvalidResponseError(`eth_getBlockReceipts(${number}): ${raw.length} receipts for ${block.transactions.length} transactions`);
  }
  return raw as RpcReceipt[];
}

/** Whether a tx will produce a row, so its receipt is needed; a malformed value counts as yes (rows reports it). */
function needsReceipt(tx: RpcBlock['transactions'][number]): boolean {
  try {
    return isTransfer(BigInt(tx.value), typeof tx.input === 'string' ? tx.input : '');
  } catch {
    return true;
  }
}

export class EthRpcClient {
  private readonly endpoint: string;
  /** For error messages: the host only (the path or user info may hold an API key). */
  private readonly host: string;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly blocksPerRequest: number;
  private readonly maxBatchItems: number;
  private readonly concurrency: number;
  private readonly onReceiptsFallback: ((reason: EthRpcError) => void) | undefined;
  private mode: ReceiptsMode;
  private readonly forced: boolean;
  private nextId = 1;

  constructor(init: EthRpcClientInit) {
    const url = new URL(init.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RangeError(`only http(s) node URLs are supported, got ${url.protocol}`);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...init.headers };
    // fetch refuses URLs with credentials; send them as Basic auth the way curl and web3 do.
    if (url.username !== '' || url.password !== '') {
      const user = decodeURIComponent(url.username);
      const password = decodeURIComponent(url.password);
      headers.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      url.username = '';
      url.password = '';
    }
    this.endpoint = url.href;
    this.host = url.host;
    this.headers = headers;
    this.clock = init.clock;
    this.timeoutMs = positiveInteger(init.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs');
    this.maxResponseBytes = positiveInteger(init.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
    this.blocksPerRequest = positiveInteger(init.blocksPerRequest, DEFAULT_BLOCKS_PER_REQUEST, 'blocksPerRequest');
    this.maxBatchItems = positiveInteger(init.maxBatchItems, DEFAULT_MAX_BATCH_ITEMS, 'maxBatchItems');
    this.concurrency = positiveInteger(init.concurrency, DEFAULT_CONCURRENCY, 'concurrency');
    this.onReceiptsFallback = init.onReceiptsFallback;
    this.forced = init.receiptsMode === 'transaction' || init.receiptsMode === 'block';
    this.mode = init.receiptsMode === 'transaction' ? 'transaction' : 'block';
  }

  /** How receipts are fetched now: `block` until the node turns out to lack eth_getBlockReceipts (or forced). */
  get receiptsMode(): ReceiptsMode {
    return this.mode;
  }

  /** eth_blockNumber: the node's head. */
  async blockNumber(signal: AbortSignal): Promise<number> {
    return blockNumberOf(await this.call('eth_blockNumber', [], signal), 'eth_blockNumber');
  }

  /** eth_getBlockByNumber(n, true); null when the node has no such block yet. */
  async blockWithTransactions(number: number, signal: AbortSignal): Promise<RpcBlock | null> {
    const raw = await this.call('eth_getBlockByNumber', [toHexQuantity(number), true], signal);
    return raw === null ? null : asBlock(raw, number);
  }

  /** eth_getBlockByNumber(n, false): number, hash, parentHash, timestamp without the txs; null when not mined yet. */
  async blockHeader(number: number, signal: AbortSignal): Promise<RpcBlockHeader | null> {
    const [header] = await this.blockHeaders([number], signal);
    return header!;
  }

  /**
   * Headers of many blocks in batches of `maxBatchItems` (one round trip for a reorg walk over the remembered hashes,
   * instead of a request per block); null for a block the node does not have.
   */
  async blockHeaders(numbers: readonly number[], signal: AbortSignal): Promise<(RpcBlockHeader | null)[]> {
    const outcomes = await this.batches(
      numbers.map((number) => ({ method: 'eth_getBlockByNumber', params: [toHexQuantity(number), false] })),
      this.maxBatchItems,
      signal,
    );
    return outcomes.map((outcome, i) => {
      if (!outcome.ok) throw outcome.error;
      return outcome.result === null ? null : asHeader(outcome.result, numbers[i]!);
    });
  }

  /** Every receipt of the block, in transaction order. */
  async receipts(block: RpcBlock, signal: AbortSignal): Promise<RpcReceipt[]> {
    const [receipts] = await this.receiptsOf([block], signal, () => true);
    return receipts!;
  }

  /**
   * Blocks `from`…`to` (inclusive) with full transactions and the receipts their rows need: the blocks in batches of
   * `blocksPerRequest`, then the receipts (eth_getBlockReceipts batched the same way, or, in per-transaction mode,
   * only the receipts of txs that produce a row, batched `maxBatchItems` at a time). A block missing from the node
   * throws EthBlockNotFoundError: the range was computed from a head the chain no longer has.
   */
  async blocksWithReceipts(from: number, to: number, signal: AbortSignal): Promise<BlockWithReceipts[]> {
    toHexQuantity(from);
    toHexQuantity(to);
    if (from > to) throw new RangeError(`empty block range ${from}…${to}`);
    const numbers = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const outcomes = await this.batches(
      numbers.map((number) => ({ method: 'eth_getBlockByNumber', params: [toHexQuantity(number), true] })),
      this.blocksPerRequest,
      signal,
    );
    const blocks = outcomes.map((outcome, i) => {
      const number = numbers[i]!;
      if (!outcome.ok) throw outcome.error;
      if (outcome.result === null) throw new EthBlockNotFoundError(number);
      return asBlock(outcome.result, number);
    });
    const receipts = await this.receiptsOf(blocks, signal, needsReceipt);
    return blocks.map((block, i) => ({ block, receipts: receipts[i]! }));
  }

  /** Receipts per block; in per-transaction mode only of the txs `wanted` selects (block mode always gets all). */
  private async receiptsOf(blocks: readonly RpcBlock[], signal: AbortSignal, wanted: (tx: RpcBlock['transactions'][number]) => boolean): Promise<RpcReceipt[][]> {
    if (this.mode === 'block') {
      // By hash, so the receipts are those of the very blocks fetched even if the chain moves in between.
      const outcomes = await this.batches(
        blocks.map((block) => ({ method: 'eth_getBlockReceipts', params: [block.hash] })),
        this.blocksPerRequest,
        signal,
      );
      const unsupported = outcomes.find((outcome): outcome is Extract<Outcome, { ok: false }> => !outcome.ok && isMethodUnsupported(outcome.error));
      if (unsupported === undefined || this.forced) {
        return outcomes.map((outcome, i) => {
          const block = blocks[i]!;
          const number = Number(BigInt(block.number));
          if (!outcome.ok) throw outcome.error;
          if (outcome.result === null) throw new EthBlockNotFoundError(number, block.hash);
          return asReceipts(outcome.result, block, number);
        });
      }
      // Concurrent ranges may both find out; report the switch once.
      if (this.mode === 'block') {
        this.mode = 'transaction';
        this.onReceiptsFallback?.(unsupported.error);
      }
    }
    return this.transactionReceipts(blocks, signal, wanted);
  }

  /** Per-transaction mode: eth_getTransactionReceipt for the wanted txs of all blocks, batched across blocks. */
  private async transactionReceipts(blocks: readonly RpcBlock[], signal: AbortSignal, wanted: (tx: RpcBlock['transactions'][number]) => boolean): Promise<RpcReceipt[][]> {
    const asks: { blockIndex: number; number: number; hash: string }[] = [];
    blocks.forEach((block, blockIndex) => {
      const number = Number(BigInt(block.number));
      for (const tx of block.transactions) if (wanted(tx)) asks.push({ blockIndex, number, hash: tx.hash });
    });
    const outcomes = await this.batches(
      asks.map((ask) => ({ method: 'eth_getTransactionReceipt', params: [ask.hash] })),
      this.maxBatchItems,
      signal,
    );
    const receipts: RpcReceipt[][] = blocks.map(() => []);
    outcomes.forEach((outcome, i) => {
      const ask = asks[i]!;
      if (!outcome.ok) throw outcome.error;
      // null: the node does not know the tx (a pruned tx index, or a reorg): an error, never a row without gas.
      if (outcome.result === null) throw new MissingReceiptError(ask.number, ask.hash);
      if (!isRecord(outcome.result) || typeof outcome.result.transactionHash !== 'string') {
        throw new EthInvalidResponseError(`eth_getTransactionReceipt(${ask.hash}): not a receipt`);
      }
      receipts[ask.blockIndex]!.push(outcome.result as unknown as RpcReceipt);
    });
    return receipts;
  }

  /** One call; a JSON-RPC error object is thrown as EthRpcError. */
  private async call(method: string, params: readonly unknown[], signal: AbortSignal): Promise<unknown> {
    const [outcome] = await this.send([{ method, params }], signal);
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.result;
  }

  /** Calls split into batches of `size`, at most `concurrency` in flight; outcomes in call order. */
  private async batches(calls: readonly RpcCall[], size: number, signal: AbortSignal): Promise<Outcome[]> {
    const groups = chunk(calls, size);
    if (groups.length <= 1) return groups.length === 0 ? [] : this.send(groups[0]!, signal);
    // The first failure cancels the batches still in flight.
    const sibling = new AbortController();
    // Not AbortSignal.any: under a long-lived `signal` (the indexer's), each call's combined signal would stay (linkSignals).
    const combined = linkSignals([signal, sibling.signal]);
    const limit = pLimit(this.concurrency);
    try {
      return (await limit.map(groups, (group) => this.send(group, combined.signal))).flat();
    } catch (error) {
      // The map rejects with the first failure: the batches not started are dropped, and those in flight are
      // cancelled (they settle as AbortedError, observed by the map).
      limit.clearQueue();
      sibling.abort();
      throw error;
    } finally {
      combined.release();
    }
  }

  /** One HTTP request: a single call as a plain JSON-RPC object, several as a batch array. */
  private async send(calls: readonly RpcCall[], signal: AbortSignal): Promise<Outcome[]> {
    const ids = calls.map(() => this.nextId++);
    const requests = calls.map((call, i) => ({ jsonrpc: '2.0', id: ids[i], method: call.method, params: call.params }));
    const what = calls.length === 1 ? calls[0]!.method : `a batch of ${calls.length} (${calls[0]!.method}…)`;
    const body = await this.post(calls.length === 1 ? requests[0] : requests, signal, what);

    const responses: unknown[] = Array.isArray(body) ? body : [body];
    if (!Array.isArray(body) && calls.length > 1) {
      // A node that rejects the batch as a whole (too large, batches disabled) answers one error object.
      const error = isRecord(body) && isRecord(body.error) ? body.error : undefined;
      if (error) throw new EthRpcError(what, typeof error.code === 'number' ? error.code : 0, String(error.message ?? 'batch rejected'), error.data);
      throw new EthInvalidResponseError(`${what}: a batch answered with a non-array`);
    }
    const byId = new Map<unknown, WireResponse>();
    for (const response of responses) {
      if (isRecord(response)) byId.set(response.id, response as WireResponse);
    }
    return calls.map((call, i) => {
      const response = byId.get(ids[i]) ?? (calls.length === 1 && responses.length === 1 && isRecord(responses[0]) ? (responses[0] as WireResponse) : undefined);
      if (response === undefined) throw new EthInvalidResponseError(`${what}: no answer for ${call.method} (id ${ids[i]})`);
      if (response.error !== undefined && response.error !== null) {
        const { code, message, data } = response.error;
        return { ok: false, error: new EthRpcError(call.method, typeof code === 'number' ? code : 0, typeof message === 'string' ? message : 'unknown error', data) };
      }
      if (!('result' in response)) throw new EthInvalidResponseError(`${what}: an answer with neither result nor error`);
      return { ok: true, result: response.result };
    });
  }

  private async post(payload: unknown, signal: AbortSignal, what: string): Promise<unknown> {
    if (signal.aborted) throw new AbortedError();
    // One deadline for the whole exchange: a node that sends headers and then stalls the body is a timeout too.
    const bound = deadline(this.clock, this.timeoutMs, signal);
    try {
      return await this.exchange(payload, signal, bound, what);
    } finally {
      bound.clear();
    }
  }

  /** The request and its bounded answer, under `bound` (the caller's signal and the per-request deadline). */
  private async exchange(payload: unknown, signal: AbortSignal, bound: Deadline, what: string): Promise<unknown> {
    const failure = (error: unknown): Error => {
      if (signal.aborted) return new AbortedError();
      if (bound.expired) return new EthNodeUnavailableError(`${what}: no answer from ${this.host} within ${this.timeoutMs} ms`);
      if (error instanceof EthResponseTooLargeError) return error;
      const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
      return new EthNodeUnavailableError(`${what}: cannot reach ${this.host}: ${reason}`, undefined, { cause: error });
    };

    let response: Response;
    try {
      response = await fetch(this.endpoint, { method: 'POST', headers: this.headers, body: JSON.stringify(payload), signal: bound.signal });
    } catch (error) {
      throw failure(error);
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new EthNodeUnavailableError(`${what}: ${this.host} answered HTTP ${response.status}`, response.status);
    }
    const declared = Number(response.headers.get('content-length') ?? NaN);
    if (declared > this.maxResponseBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw new EthResponseTooLargeError(this.maxResponseBytes, what);
    }

    const chunks: Uint8Array[] = [];
    let size = 0;
    try {
      if (response.body) {
        const reader = response.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > this.maxResponseBytes) {
            await reader.cancel().catch(() => undefined);
            throw new EthResponseTooLargeError(this.maxResponseBytes, what);
          }
          chunks.push(value);
        }
      }
    } catch (error) {
      throw failure(error);
    }
    try {
      const body = Buffer.concat(chunks, size);
      // A node's answers are ASCII (hex and field names): read as latin1 they are copied, not decoded, which was a
      // tenth of the indexer's CPU on blocks with their transactions. Anything else is decoded as UTF-8.
      return JSON.parse(body.toString(isAscii(body) ? 'latin1' : 'utf8'));
    } catch {
      throw new EthInvalidResponseError(`${what}: ${this.host} answered with something that is not JSON`);
    }
  }
}
