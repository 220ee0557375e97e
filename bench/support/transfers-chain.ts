// The indexer half of the transfers benchmark: a chain prepared on anvil (blocks of native transfers and ERC-20
// `transfer` calls, automine off, explicit gas and nonces, one JSON-RPC batch of sends and one anvil_mine per block),
// and one harness that drives the real indexer machine (actors/transfers/indexer.actor.ts) over that chain into a
// fresh database, so both receipt modes of the JSON-RPC client are measured the same way.

import pg from 'pg';
import { createActor } from 'xstate';
import { systemClock } from '../../src/clock.js';
import { DatabaseHolder } from '../../actors/transfers/database.actor.js';
import { EthRpcClient, type ReceiptsMode } from '../../storage/transfers/chain.eth-rpc.js';
import { indexerInput, indexerLogic } from '../../actors/transfers/indexer.actor.js';
import { INDEXER_VERSION, type IndexerSettings } from '../../src/transfers/config.js';
import { migrate } from '../../storage/transfers/schema.js';
import { openPgClient } from '../../storage/transfers/sql-client.pg.js';
import type { Anvil } from '../../test/support/anvil.js';
import { captureLogger } from '../../test/support/logger.js';
import { prng } from '../../test/support/random.js';

/** `count` hex digits from the PRNG. */
export function randomHex(random: () => number, count: number): string {
  let out = '';
  while (out.length < count) out += Math.floor(random() * 0x1_0000_0000).toString(16).padStart(8, '0');
  return out.slice(0, count);
}

const ERC20_TRANSFER = '0xa9059cbb';
/** A plain value transfer to an account without code. */
const NATIVE_GAS = 21_000;
/** The fixture token's transfer to a fresh recipient costs ~52k (a new storage slot); room for it. */
const TOKEN_GAS = 90_000;
/** Distinct recipients of the generated transfers. */
const RECIPIENTS = 2_000;
/** Token units each dev account gets before the measured blocks (the deployer holds 10^24). */
const TOKEN_ALLOWANCE = 10n ** 22n;
const RPC_TIMEOUT_MS = 60_000;

export interface ChainPlan {
  readonly blocks: number;
  readonly transfersPerBlock: number;
  /** Share of ERC-20 transfer calls among the transfers. */
  readonly tokenShare: number;
  /** Preparation stops (with fewer blocks) once it is projected to take longer than this. */
  readonly budgetMs: number;
  readonly seed: number;
}

export interface PreparedChain {
  readonly token: string;
  /** Blocks of the setup (deployment, token allowances): before `firstBlock`, not part of the measured range. */
  readonly setupBlocks: number;
  readonly firstBlock: number;
  readonly lastBlock: number;
  readonly blocks: number;
  readonly nativeTransfers: number;
  readonly tokenTransfers: number;
  readonly ms: number;
  /** Set when the plan's block count was reduced to stay within the budget. */
  readonly reducedFrom: number | undefined;
  /** Transaction counts of sampled blocks (first, middle, last) as the node reports them. */
  readonly sampledCounts: readonly number[];
}

interface BatchAnswer {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: { code: number; message: string };
}

async function rpcBatch(url: string, calls: ReadonlyArray<{ method: string; params: readonly unknown[] }>): Promise<BatchAnswer[]> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((call, id) => ({ jsonrpc: '2.0', id, method: call.method, params: call.params }))),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`anvil answered HTTP ${response.status} to a batch of ${calls.length}`);
  const answers = (await response.json()) as BatchAnswer[];
  if (!Array.isArray(answers) || answers.length !== calls.length) throw new Error(`anvil answered a batch of ${calls.length} with ${Array.isArray(answers) ? answers.length : 'no'} answers`);
  return answers;
}

const word = (hex: string) => hex.padStart(64, '0');
const quantity = (value: bigint | number) => `0x${BigInt(value).toString(16)}`;

/**
 * Deploys the token (automine on), gives every dev account some of it, switches automine off and prepares
 * `plan.blocks` blocks of `plan.transfersPerBlock` transfers each: senders round-robin over the dev accounts with
 * locally counted nonces, recipients from a fixed pool of fresh addresses. Blocks are mined one at a time, so each
 * holds exactly its transfers. Bounded: after 50 blocks the total is projected, and reduced (to whole hundreds)
 * when it would exceed the budget; a hard stop at the budget as well.
 */
export async function prepareChain(anvil: Anvil, plan: ChainPlan, progress: (text: string) => void): Promise<PreparedChain> {
  const started = Date.now();
  const random = prng(plan.seed);
  const accounts = anvil.accounts;
  const deployer = accounts[0]!;
  const token = (await anvil.deployToken(deployer)).address;
  for (const account of accounts.slice(1)) {
    await anvil.send({ from: deployer, to: token, data: `${ERC20_TRANSFER}${word(account.slice(2).toLowerCase())}${word(TOKEN_ALLOWANCE.toString(16))}`, gas: TOKEN_GAS });
  }
  await anvil.setAutomine(false);
  const setupBlocks = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
  const nonces = await Promise.all(accounts.map(async (account) => Number(BigInt(await anvil.rpc<string>('eth_getTransactionCount', [account, 'pending'])))));
  const recipients = Array.from({ length: RECIPIENTS }, () => `0x${randomHex(random, 40)}`);

  let target = plan.blocks;
  let reducedFrom: number | undefined;
  let nativeTransfers = 0;
  let tokenTransfers = 0;
  let sender = 0;
  let prepared = 0;
  const loopStarted = Date.now();
  let lastReport = loopStarted;
  for (; prepared < target; prepared++) {
    const calls = [];
    for (let i = 0; i < plan.transfersPerBlock; i++) {
      const from = accounts[sender]!;
      const nonce = nonces[sender]!++;
      sender = (sender + 1) % accounts.length;
      const to = recipients[Math.floor(random() * recipients.length)]!;
      if (random() < plan.tokenShare) {
        const amount = BigInt(1 + Math.floor(random() * 1_000_000)) * 10n ** 12n;
        calls.push({ method: 'eth_sendTransaction', params: [{ from, to: token, data: `${ERC20_TRANSFER}${word(to.slice(2))}${word(amount.toString(16))}`, gas: quantity(TOKEN_GAS), nonce: quantity(nonce) }] });
        tokenTransfers++;
      } else {
        const value = BigInt(1 + Math.floor(random() * 1_000_000)) * 10n ** 9n;
        calls.push({ method: 'eth_sendTransaction', params: [{ from, to, value: quantity(value), gas: quantity(NATIVE_GAS), nonce: quantity(nonce) }] });
        nativeTransfers++;
      }
    }
    const answers = await rpcBatch(anvil.url, calls);
    const failed = answers.find((answer) => answer.error !== undefined);
    if (failed) throw new Error(`anvil refused a transaction of block ${prepared + 1}: ${failed.error!.message} (${failed.error!.code})`);
    await anvil.mine(1);

    const elapsed = Date.now() - loopStarted;
    if (prepared + 1 === 50 && reducedFrom === undefined) {
      const projected = ((Date.now() - started) / 50) * target;
      if (projected > plan.budgetMs) {
        const fits = Math.max(100, Math.floor(((plan.budgetMs - (loopStarted - started)) / elapsed) * 50 / 100) * 100);
        if (fits < target) {
          reducedFrom = target;
          target = fits;
        }
      }
    }
    if (Date.now() - started > plan.budgetMs && prepared + 1 < target) {
      reducedFrom ??= target;
      target = prepared + 1;
    }
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      progress(`  … ${prepared + 1} of ${target} blocks prepared (${Math.round(((prepared + 1) / elapsed) * 1000)} blocks/s)`);
    }
  }
  const lastBlock = Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
  const firstBlock = setupBlocks + 1;
  if (lastBlock - firstBlock + 1 !== prepared) throw new Error(`the chain's head is ${lastBlock}: expected ${prepared} blocks after the ${setupBlocks} setup blocks`);
  const samples = [firstBlock, firstBlock + Math.floor(prepared / 2), lastBlock];
  const sampledCounts = await Promise.all(samples.map(async (number) => Number(BigInt(await anvil.rpc<string>('eth_getBlockTransactionCountByNumber', [quantity(number)])))));
  return { token, setupBlocks, firstBlock, lastBlock, blocks: prepared, nativeTransfers, tokenTransfers, ms: Date.now() - started, reducedFrom, sampledCounts };
}

export interface IndexRun {
  readonly label: string;
  readonly ms: number;
  readonly blocks: number;
  readonly rows: number;
  /** Batches that failed and were retried by the machine (0 in a clean run). */
  readonly failures: number;
  readonly warnings: readonly string[];
}

/** How often the database is asked whether `max_block` reached the head. */
const MAX_BLOCK_POLL_MS = 20;

/**
 * What a run watches for progress: `max_block`, the gateway's /max_block (the greater of the highest block with rows
 * and the cursor), or `cursor`, the indexer's own `indexer.state.last_block` — for a table that already holds rows
 * above the chain being indexed (the scale benchmark's generated rows sit at blocks 15,000,000 and up, so its
 * max_block is past the chain before the first batch).
 */
export type ProgressWatch = 'max_block' | 'cursor';

const PROGRESS_SQL: Readonly<Record<ProgressWatch, string>> = {
  max_block: 'SELECT max FROM public.max_block',
  cursor: 'SELECT last_block AS max FROM indexer.state',
};

/**
 * Polls `SELECT max FROM public.max_block` (the gateway's /max_block; or the indexer's cursor, `watch`) until it
 * reaches `head`; returns the time from `since` to the first answer that does. Bounded by `timeoutMs`; `stalled` may
 * end it early with an error.
 */
export async function waitForMaxBlock(url: string, head: number, since: number, timeoutMs: number, stalled: () => string | undefined, watch: ProgressWatch = 'max_block'): Promise<number> {
  const client = new pg.Client({ connectionString: url, application_name: 'adm-infra bench monitor' });
  await client.connect();
  try {
    const deadline = since + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ max: number | null }>(PROGRESS_SQL[watch]);
      const max = rows[0]?.max ?? null;
      if (max !== null && max >= head) return Date.now() - since;
      const problem = stalled();
      if (problem) throw new Error(problem);
      if (Date.now() > deadline) throw new Error(`max_block was ${max}, not ${head}, after ${timeoutMs / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, MAX_BLOCK_POLL_MS));
    }
  } finally {
    await client.end();
  }
}

export async function countRows(url: string, fromBlock: number, toBlock: number): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM public.ethtxs WHERE block BETWEEN $1 AND $2', [fromBlock, toBlock]);
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

/** Consecutive failed steps after which a run is given up (the machine would back off for ever). */
const MAX_FAILURES = 3;

/**
 * The indexer machine as the service wires it (indexerLogic over a DatabaseHolder whose writer is a 2-connection
 * pg pool, systemClock, the real EthRpcClient with the given receipts mode) over `dbUrl` (migrated here), from
 * wherever its cursor is (else `startBlock`) until `max_block` reaches `until`. The chain may go further:
 * CONFIRMATIONS_BLOCK is set to `chainHead − until`, so the machine's own target is `until` and a segment of a
 * longer chain can be indexed, then the next one by a later call on the same database. The clock starts just
 * before the actor does; the actor is stopped at the end.
 */
export async function runIndexerHarness(options: {
  readonly label: string;
  readonly dbUrl: string;
  readonly ethUrl: string;
  readonly startBlock: number;
  readonly chainHead: number;
  readonly until: number;
  readonly receiptsMode: ReceiptsMode;
  /** eth_getTransactionReceipt calls per HTTP request in per-transaction mode (the client's default: 100). */
  readonly maxBatchItems?: number;
  readonly timeoutMs: number;
  /** Where progress (and the block the run starts from) is read; default `max_block`. */
  readonly watch?: ProgressWatch;
}): Promise<IndexRun> {
  const writer = openPgClient({ connection: { connectionString: options.dbUrl }, maxConnections: 2, applicationName: 'adm-infra bench indexer' });
  const captured = captureLogger('warn');
  try {
    await migrate(writer, INDEXER_VERSION);
    const watch = options.watch ?? 'max_block';
    const [cursor] = await writer.query(PROGRESS_SQL[watch]);
    const from = cursor?.max === null || cursor?.max === undefined ? options.startBlock : Number(cursor.max) + 1;
    if (from > options.until) throw new Error(`${options.label}: the database is already at block ${from - 1}, past ${options.until}`);
    const holder = new DatabaseHolder();
    holder.set({ writer, catalog: undefined, read: undefined });
    const settings: IndexerSettings = { enabled: true, ethUrl: options.ethUrl, startBlock: options.startBlock, confirmations: options.chainHead - options.until, periodMs: 50 };
    const eth = new EthRpcClient({ url: options.ethUrl, clock: systemClock, receiptsMode: options.receiptsMode, ...(options.maxBatchItems !== undefined ? { maxBatchItems: options.maxBatchItems } : {}) });
    const logic = indexerLogic({ settings, holder, eth, clock: systemClock, logger: captured.logger });
    const since = Date.now();
    const actor = createActor(logic, { input: indexerInput(settings) }).start();
    try {
      const stalled = () => {
        const snapshot = actor.getSnapshot();
        if (snapshot.status !== 'active') return `the indexer machine stopped (${snapshot.status})`;
        if (snapshot.context.failures >= MAX_FAILURES) return `the indexer failed ${snapshot.context.failures} times in a row: ${snapshot.context.lastError}`;
        return undefined;
      };
      const ms = await waitForMaxBlock(options.dbUrl, options.until, since, options.timeoutMs, stalled, watch);
      if (eth.receiptsMode !== options.receiptsMode) throw new Error(`the client ran in ${eth.receiptsMode} mode, not ${options.receiptsMode}`);
      return {
        label: options.label,
        ms,
        blocks: options.until - from + 1,
        rows: await countRows(options.dbUrl, from, options.until),
        failures: captured.lines.filter((line) => line.msg === 'indexer step failed; retrying').length,
        warnings: captured.lines.map((line) => `${String(line.msg)}${line.reason ? `: ${String(line.reason)}` : ''}`),
      };
    } finally {
      actor.send({ type: 'system.shutdown' });
      actor.stop();
    }
  } finally {
    await writer.close();
  }
}

/** Runs of one kind added up (segments of one range). */
export function addRuns(label: string, runs: readonly IndexRun[]): IndexRun {
  return {
    label,
    ms: runs.reduce((sum, run) => sum + run.ms, 0),
    blocks: runs.reduce((sum, run) => sum + run.blocks, 0),
    rows: runs.reduce((sum, run) => sum + run.rows, 0),
    failures: runs.reduce((sum, run) => sum + run.failures, 0),
    warnings: runs.flatMap((run) => run.warnings),
  };
}

/**
 * What anvil itself takes to serve the calls the indexer makes in block-receipts mode for `count` blocks from `from`:
 * eth_getBlockByNumber(n, true) then eth_getBlockReceipts, each batched `perRequest` (the client's
 * blocksPerRequest) per HTTP request, every request sequential and the answers parsed. The blocks' transactions
 * are counted from the answers.
 */
export async function anvilServeCost(url: string, from: number, count: number, perRequest = 10): Promise<{ ms: number; blocks: number; txs: number }> {
  const numbers = Array.from({ length: count }, (_, i) => from + i);
  const t0 = performance.now();
  let txs = 0;
  for (let i = 0; i < numbers.length; i += perRequest) {
    const group = numbers.slice(i, i + perRequest);
    const blocks = await rpcBatch(url, group.map((n) => ({ method: 'eth_getBlockByNumber', params: [quantity(n), true] })));
    const failed = blocks.find((answer) => answer.error !== undefined || answer.result === null);
    if (failed) throw new Error(`anvil: eth_getBlockByNumber: ${failed.error?.message ?? 'no such block'}`);
    const hashes = blocks.map((answer) => (answer.result as { hash: string; transactions: unknown[] }).hash);
    txs += blocks.reduce((sum, answer) => sum + (answer.result as { transactions: unknown[] }).transactions.length, 0);
    const receipts = await rpcBatch(url, hashes.map((hash) => ({ method: 'eth_getBlockReceipts', params: [hash] })));
    const bad = receipts.find((answer) => answer.error !== undefined || answer.result === null);
    if (bad) throw new Error(`anvil: eth_getBlockReceipts: ${bad.error?.message ?? 'no receipts'}`);
  }
  return { ms: performance.now() - t0, blocks: count, txs };
}

export interface RpcCost {
  readonly blocks: number;
  /** eth_getBlockByNumber(n, true), 10 per batch request (the client's blocksPerRequest). */
  readonly fullBlocksMs: number;
  /** eth_getBlockReceipts, 10 per batch request. */
  readonly blockReceiptsMs: number;
  readonly receipts: number;
  /** eth_getTransactionReceipt for every tx, 100 per batch request (the client's maxBatchItems). */
  readonly txReceiptsBatchedMs: number;
  /** eth_getTransactionReceipt one HTTP request each, for the txs of the first block only. */
  readonly singleReceiptMs: number;
}

/**
 * What anvil itself spends on each kind of call the indexer makes, for `count` blocks from `from`, every request
 * sequential (no concurrency): where the time of an indexing run goes on the node's side.
 */
export async function anvilRpcCost(url: string, from: number, count: number): Promise<RpcCost> {
  const numbers = Array.from({ length: count }, (_, i) => from + i);
  const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now();
    const result = await work();
    return [result, performance.now() - t0];
  };
  const inBatches = async (calls: Array<{ method: string; params: readonly unknown[] }>, size: number): Promise<BatchAnswer[]> => {
    const answers: BatchAnswer[] = [];
    for (let i = 0; i < calls.length; i += size) answers.push(...(await rpcBatch(url, calls.slice(i, i + size))));
    const failed = answers.find((answer) => answer.error !== undefined);
    if (failed) throw new Error(`anvil: ${calls[0]!.method}: ${failed.error!.message}`);
    return answers;
  };
  const [blocks, fullBlocksMs] = await timed(() => inBatches(numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [quantity(n), true] })), 10));
  const hashes = blocks.flatMap((answer) => (answer.result as { transactions: Array<{ hash: string }> }).transactions.map((tx) => tx.hash));
  const [, blockReceiptsMs] = await timed(() => inBatches(numbers.map((n) => ({ method: 'eth_getBlockReceipts', params: [quantity(n)] })), 10));
  const [, txReceiptsBatchedMs] = await timed(() => inBatches(hashes.map((hash) => ({ method: 'eth_getTransactionReceipt', params: [hash] })), 100));
  const firstBlock = (blocks[0]!.result as { transactions: Array<{ hash: string }> }).transactions.map((tx) => tx.hash);
  const [, singleMs] = await timed(async () => {
    for (const hash of firstBlock) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionReceipt', params: [hash] }),
        signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
      });
      const answer = (await response.json()) as BatchAnswer;
      if (answer.error !== undefined || answer.result === null) throw new Error(`anvil: eth_getTransactionReceipt(${hash}) failed`);
    }
  });
  return { blocks: count, fullBlocksMs, blockReceiptsMs, receipts: hashes.length, txReceiptsBatchedMs, singleReceiptMs: singleMs / Math.max(1, firstBlock.length) };
}
