// A throwaway anvil (Ethereum dev node) for the indexer's tests and benchmarks (docs/notes/transfers-console.md E.1):
// the binary ships inside the npm package @foundry-rs/anvil-linux-amd64 (a devDependency; not the @foundry-rs/anvil
// wrapper, whose postinstall needs script approval). It listens on 127.0.0.1 and a free port, in memory, quiet, with
// the 10 funded dev accounts unlocked so tests send with eth_sendTransaction. Automine unless `blockTime` is given.
// Importing this module does nothing (node --test runs every file under dist/test/).

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { repositoryRoot } from './fixtures.js';
import { freePort } from './cli.js';

/** How long anvil may take to answer its first eth_blockNumber (it starts in well under a second here). */
const START_TIMEOUT_MS = 20_000;
const START_POLL_MS = 50;
/** A stopped anvil exits at once on SIGTERM; SIGKILL after this. */
const STOP_TIMEOUT_MS = 5_000;
/** How long send() waits for an automined tx's receipt, polling this often. */
const MINE_TIMEOUT_MS = 10_000;
const MINE_POLL_MS = 5;
/** Per-call bound of the harness's own JSON-RPC calls. */
const RPC_TIMEOUT_MS = 30_000;
/** anvil's stderr kept for error reports (the tail only). */
const STDERR_KEEP_CHARS = 4_000;

export class AnvilRpcError extends Error {
  override readonly name = 'AnvilRpcError';
  constructor(readonly method: string, readonly code: number, message: string, readonly data?: unknown) {
    super(`${method}: ${message} (${code})`);
  }
}

/** A transaction for eth_sendTransaction; quantities as bigint or number, encoded to hex here. */
export interface AnvilTransaction {
  readonly from: string;
  /** Omitted for a contract creation. */
  readonly to?: string;
  readonly value?: bigint | number;
  readonly data?: string;
  /**
   * An explicit gas limit skips estimation, where geth and hardhat refuse a tx that reverts (anvil 1.7.1 mines it
   * anyway, with the block gas limit as its limit); with one, every node mines the failed tx.
   */
  readonly gas?: bigint | number;
  readonly gasPrice?: bigint | number;
  readonly nonce?: bigint | number;
}

export interface Anvil {
  readonly url: string;
  readonly pid: number;
  /** The dev accounts (eth_accounts), funded and unlocked. */
  readonly accounts: readonly string[];
  rpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /**
   * eth_sendTransaction; returns the tx hash. With automine on (the default; switch with setAutomine, not a raw rpc)
   * it resolves once the tx is mined, each tx in its own block; otherwise once the tx is pending.
   */
  send(tx: AnvilTransaction): Promise<string>;
  /** Mines `blocks` blocks (default 1) at once, with whatever is pending in the first. */
  mine(blocks?: number): Promise<void>;
  setAutomine(enabled: boolean): Promise<void>;
  /** Deploys the ERC-20 fixture (test/fixtures/transfers/token.sol; 10^24 units to `from`); needs automine. */
  deployToken(from: string): Promise<{ readonly address: string; readonly hash: string }>;
  /** evm_snapshot: an id to revert to. */
  snapshot(): Promise<string>;
  /** evm_revert: back to the snapshot (which is consumed); false when the id is unknown. */
  revert(id: string): Promise<boolean>;
  stop(): Promise<void>;
}

export function anvilBinary(): string {
  const packageJson = createRequire(import.meta.url).resolve('@foundry-rs/anvil-linux-amd64/package.json');
  return join(dirname(packageJson), 'bin', 'anvil');
}

/** The committed creation bytecode of the ERC-20 fixture (compiled once, see token.sol). */
export function tokenBytecode(): string {
  const fixture = JSON.parse(readFileSync(join(repositoryRoot(), 'test', 'fixtures', 'transfers', 'token.bytecode.json'), 'utf8')) as { bytecode: string };
  return fixture.bytecode;
}

export function toQuantity(value: bigint | number): string {
  return `0x${BigInt(value).toString(16)}`;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function call<T>(url: string, method: string, params: readonly unknown[], id: number, timeoutMs = RPC_TIMEOUT_MS): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!response.ok) throw new Error(`${method}: HTTP ${response.status} from anvil`);
  const body = (await response.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } };
  if (body.error) throw new AnvilRpcError(method, body.error.code, body.error.message, body.error.data);
  return body.result as T;
}

/** Another process can take the free port before anvil binds it; anvil then exits at once and is started again. */
class AnvilExitedError extends Error {
  override readonly name = 'AnvilExitedError';
}
const START_ATTEMPTS = 3;

export async function startAnvil(options: { blockTime?: number } = {}): Promise<Anvil> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(await freePort(), options);
    } catch (error) {
      if (!(error instanceof AnvilExitedError) || attempt >= START_ATTEMPTS) throw error;
    }
  }
}

async function startOnce(port: number, options: { blockTime?: number }): Promise<Anvil> {
  const args = ['--host', '127.0.0.1', '--port', String(port), '--quiet'];
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));
  const child = spawn(anvilBinary(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_KEEP_CHARS);
  });
  const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
  spawnError.catch(() => undefined);
  // A test run that dies without calling stop() must not leave anvil behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const url = `http://127.0.0.1:${port}`;
  let nextId = 1;
  const rpc = <T = unknown>(method: string, params: readonly unknown[] = []) => call<T>(url, method, params, nextId++);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killOnExit);
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited(child);
    clearTimeout(timer);
  };

  try {
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new AnvilExitedError(`anvil exited during start (${child.exitCode ?? child.signalCode}): ${stderr.trim()}`);
      }
      const answered = await Promise.race([
        call<string>(url, 'eth_blockNumber', [], 0, 1_000).then(
          () => true,
          () => false,
        ),
        spawnError,
      ]);
      if (answered) break;
      if (Date.now() > deadline) throw new Error(`anvil did not answer on ${url} within ${START_TIMEOUT_MS} ms: ${stderr.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
    }
    const accounts = await rpc<string[]>('eth_accounts');
    if (child.pid === undefined) throw new Error('anvil has no pid');
    // anvil 1.7.1 answers eth_sendTransaction before its automine block is written (a receipt read right after is
    // sometimes null), so send() waits for the receipt: one send is then one block, in order.
    let automine = options.blockTime === undefined;
    const receiptOf = async (hash: string) => {
      const deadline = Date.now() + MINE_TIMEOUT_MS;
      for (;;) {
        const receipt = await rpc<Record<string, unknown> | null>('eth_getTransactionReceipt', [hash]);
        if (receipt) return receipt;
        if (Date.now() > deadline) throw new Error(`transaction ${hash} was not mined within ${MINE_TIMEOUT_MS} ms`);
        await new Promise((resolve) => setTimeout(resolve, MINE_POLL_MS));
      }
    };
    const send = async (tx: AnvilTransaction) => {
      const request: Record<string, string> = { from: tx.from };
      if (tx.to !== undefined) request.to = tx.to;
      if (tx.value !== undefined) request.value = toQuantity(tx.value);
      if (tx.data !== undefined) request.data = tx.data;
      if (tx.gas !== undefined) request.gas = toQuantity(tx.gas);
      if (tx.gasPrice !== undefined) request.gasPrice = toQuantity(tx.gasPrice);
      if (tx.nonce !== undefined) request.nonce = toQuantity(tx.nonce);
      const hash = await rpc<string>('eth_sendTransaction', [request]);
      if (automine) await receiptOf(hash);
      return hash;
    };
    return {
      url,
      pid: child.pid,
      accounts,
      rpc,
      send,
      deployToken: async (from) => {
        const hash = await send({ from, data: tokenBytecode() });
        const receipt = await receiptOf(hash);
        if (typeof receipt.contractAddress !== 'string' || receipt.status !== '0x1') throw new Error(`the token deployment ${hash} failed: ${JSON.stringify(receipt)}`);
        return { address: receipt.contractAddress, hash };
      },
      mine: async (blocks = 1) => {
        // Waits until the head has moved, for the same reason as send() (reads right after must see the blocks).
        const target = BigInt(await rpc<string>('eth_blockNumber')) + BigInt(blocks);
        await rpc('anvil_mine', [toQuantity(blocks)]);
        const deadline = Date.now() + MINE_TIMEOUT_MS;
        while (BigInt(await rpc<string>('eth_blockNumber')) < target) {
          if (Date.now() > deadline) throw new Error(`anvil did not mine ${blocks} block(s) within ${MINE_TIMEOUT_MS} ms`);
          await new Promise((resolve) => setTimeout(resolve, MINE_POLL_MS));
        }
      },
      setAutomine: async (enabled) => {
        await rpc('evm_setAutomine', [enabled]);
        automine = enabled;
      },
      snapshot: () => rpc<string>('evm_snapshot'),
      revert: (id) => rpc<boolean>('evm_revert', [id]),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
