// The Ethereum JSON-RPC client (storage/transfers/chain.eth-rpc.ts) against a real anvil
// (docs/notes/transfers-console.md E.1): what it fetches, decoded by transferRows, gives exactly the rows the original's rules produce (notes A.2) for native
// transfers, an ERC-20 deployment and transfer, a reverted transfer, a contract creation with value and empty blocks;
// eth_getBlockReceipts and per-transaction receipts agree; and the failure kinds surface as their classes. A small
// loopback proxy in front of anvil counts requests and plays a node without eth_getBlockReceipts or a broken one.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SimulatedClock } from 'xstate';
import {
  EthBlockNotFoundError,
  EthInvalidResponseError,
  EthNodeUnavailableError,
  EthResponseTooLargeError,
  EthRpcClient,
  EthRpcError,
} from '../../../storage/transfers/chain.eth-rpc.js';
import { systemClock } from '../../../src/clock.js';
import { transferRows, type TransferRow } from '../../../src/transfers/rows.js';
import { startAnvil, type Anvil } from '../../support/anvil.js';
import { watchPromise, waitFor } from '../../support/wait.js';

// anvil's first three dev accounts (the well-known test mnemonic), EIP-55 checksummed.
const ALICE = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const BOB = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const CAROL = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
/** The first contract ALICE deploys (nonce 0). */
const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
/** PUSH1 0 PUSH1 0 RETURN: a creation that deploys empty code, so it can carry value. */
const EMPTY_CREATION = '0x60006000f3';

const word = (hex: string | bigint) => (typeof hex === 'bigint' ? hex.toString(16) : hex.replace(/^0x/, '')).toLowerCase().padStart(64, '0');
const transferData = (to: string, amount: bigint) => `0xa9059cbb${word(to)}${word(amount)}`;

interface Mined {
  readonly block: number;
  readonly index: number;
  readonly gasUsed: string;
  readonly gasPrice: string;
  readonly status: string;
  readonly time: number;
}

/** A proxy in front of anvil: counts HTTP requests and JSON-RPC methods, and can be told to misbehave. */
interface Proxy {
  readonly url: string;
  requests: number;
  methods: string[];
  behaviour: 'forward' | 'noBlockReceipts' | 'http503' | 'stall' | 'notJson' | 'nodeError';
  close(): Promise<void>;
}

async function startProxy(target: string): Promise<Proxy> {
  const stalled: ServerResponse[] = [];
  const proxy: Proxy = { url: '', requests: 0, methods: [], behaviour: 'forward', close: async () => undefined };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        proxy.requests++;
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        const calls = (Array.isArray(body) ? body : [body]) as { id: number; method: string }[];
        proxy.methods.push(...calls.map((call) => call.method));
        const reply = (status: number, payload: string) => response.writeHead(status, { 'content-type': 'application/json' }).end(payload);
        switch (proxy.behaviour) {
          case 'http503':
            return reply(503, '{"message":"overloaded"}');
          case 'stall':
            stalled.push(response);
            return;
          case 'notJson':
            return reply(200, '<html>bad gateway</html>');
          case 'nodeError':
            // Not ASCII: the client reads ASCII answers as latin1, anything else as UTF-8.
            return reply(200, JSON.stringify({ jsonrpc: '2.0', id: calls[0]!.id, error: { code: -32000, message: 'header not found — en-tête introuvable ✗' } }));
          default:
            break;
        }
        // noBlockReceipts: answer those calls as geth without the method does; forward the rest.
        const refused = proxy.behaviour === 'noBlockReceipts' ? calls.filter((call) => call.method === 'eth_getBlockReceipts') : [];
        const forwarded = calls.filter((call) => !refused.includes(call));
        const answers: unknown[] = refused.map((call) => ({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: `the method ${call.method} does not exist/is not available` } }));
        if (forwarded.length > 0) {
          const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Array.isArray(body) ? forwarded : body) });
          const answer = (await upstream.json()) as unknown;
          answers.push(...(Array.isArray(answer) ? answer : [answer]));
        }
        reply(200, JSON.stringify(Array.isArray(body) ? answers : answers[0]));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const response of stalled) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
}

describe('EthRpcClient against anvil', () => {
  let anvil: Anvil;
  let proxy: Proxy;
  let head: number;
  let expected: TransferRow[];
  const hashes: Record<string, string> = {};

  const signal = () => AbortSignal.timeout(30_000);

  /** What anvil itself says about a mined tx, read without the client under test. */
  async function mined(hash: string): Promise<Mined> {
    const receipt = await anvil.rpc<{ blockNumber: string; transactionIndex: string; gasUsed: string; status: string }>('eth_getTransactionReceipt', [hash]);
    const tx = await anvil.rpc<{ gasPrice: string }>('eth_getTransactionByHash', [hash]);
    const block = await anvil.rpc<{ timestamp: string }>('eth_getBlockByNumber', [receipt.blockNumber, false]);
    return {
      block: Number(receipt.blockNumber),
      index: Number(receipt.transactionIndex),
      gasUsed: BigInt(receipt.gasUsed).toString(),
      gasPrice: BigInt(tx.gasPrice).toString(),
      status: receipt.status,
      time: Number(block.timestamp),
    };
  }

  before(async () => {
    anvil = await startAnvil();
    proxy = await startProxy(anvil.url);
    const [alice, bob, carol] = anvil.accounts as [string, string, string];
    assert.deepEqual([alice, bob, carol], [ALICE.toLowerCase(), BOB.toLowerCase(), CAROL.toLowerCase()]);

    // Block 1: the token, 10^6 × 10^18 units to ALICE. Block 2: 1000 units to BOB.
    const deployed = await anvil.deployToken(alice);
    assert.equal(deployed.address, TOKEN.toLowerCase());
    hashes.deploy = deployed.hash;
    hashes.tokenTransfer = await anvil.send({ from: alice, to: TOKEN, data: transferData(bob, 1000n) });
    // Block 3: BOB sends more than he has: reverts. The explicit gas limit makes any node mine it rather than refuse
    // it at estimation (anvil 1.7.1 mines it even without one, at the block gas limit).
    hashes.reverted = await anvil.send({ from: bob, to: TOKEN, data: transferData(carol, 0xffffffn), gas: 100_000 });
    // Block 4: a contract creation carrying value.
    hashes.creation = await anvil.send({ from: carol, data: EMPTY_CREATION, value: 12_345n, gas: 100_000 });
    // Block 5: two native transfers and a value-0 plain tx (no row) mined together.
    await anvil.setAutomine(false);
    hashes.native1 = await anvil.send({ from: alice, to: bob, value: 10n ** 18n });
    hashes.native2 = await anvil.send({ from: bob, to: carol, value: 2n });
    hashes.zero = await anvil.send({ from: carol, to: alice, value: 0n });
    await anvil.mine();
    await anvil.setAutomine(true);
    // Blocks 6–8: empty.
    await anvil.mine(3);
    head = Number(await anvil.rpc<string>('eth_blockNumber'));

    const facts = Object.fromEntries(await Promise.all(Object.entries(hashes).map(async ([name, hash]) => [name, await mined(hash)] as const))) as Record<string, Mined>;
    assert.deepEqual(
      Object.values(facts).map((fact) => fact.block),
      [1, 2, 3, 4, 5, 5, 5],
    );
    assert.equal(facts.reverted!.status, '0x0');
    assert.equal(facts.deploy!.status, '0x1');
    const row = (name: string, fields: Pick<TransferRow, 'txfrom' | 'txto' | 'value' | 'contract_to' | 'contract_value'>): TransferRow & { index: number } => {
      const fact = facts[name]!;
      return { time: fact.time, gas: fact.gasUsed, gasprice: fact.gasPrice, block: fact.block, txhash: hashes[name]!, index: fact.index, ...fields };
    };
    expected = [
      // The deployment has no value and no selector: no row.
      row('tokenTransfer', { txfrom: ALICE, txto: TOKEN, value: '0', contract_to: word(bob), contract_value: word(1000n) }),
      row('reverted', { txfrom: BOB, txto: TOKEN, value: '0', contract_to: word(carol), contract_value: word(0xffffffn) }),
      row('creation', { txfrom: CAROL, txto: null, value: '12345', contract_to: '', contract_value: '' }),
      row('native1', { txfrom: ALICE, txto: BOB, value: '1000000000000000000', contract_to: '', contract_value: '' }),
      row('native2', { txfrom: BOB, txto: CAROL, value: '2', contract_to: '', contract_value: '' }),
    ]
      .sort((a, b) => a.block - b.block || a.index - b.index)
      .map(({ index: _index, ...rest }) => rest);
    // Native transfers to an account cost exactly 21000; the reverted transfer used gas, below its limit.
    assert.equal(expected.find((r) => r.txhash === hashes.native1)!.gas, '21000');
    assert.ok(Number(expected.find((r) => r.txhash === hashes.reverted)!.gas) < 100_000);
  });

  after(async () => {
    await proxy?.close();
    await anvil?.stop();
  });

  test('the rows of everything fetched, with eth_getBlockReceipts, are exactly the expected ones', async () => {
    const client = new EthRpcClient({ url: anvil.url, clock: systemClock });
    assert.equal(await client.blockNumber(signal()), head);
    const fetched = await client.blocksWithReceipts(0, head, signal());
    assert.deepEqual(
      fetched.map(({ block }) => Number(block.number)),
      Array.from({ length: head + 1 }, (_, i) => i),
    );
    // Every receipt of every block in block mode; empty blocks have none.
    for (const { block, receipts } of fetched) assert.equal(receipts.length, block.transactions.length);
    assert.deepEqual(fetched.slice(6).map(({ block }) => block.transactions.length), [0, 0, 0]);
    assert.deepEqual(fetched.flatMap(({ block, receipts }) => transferRows(block, receipts)), expected);
    assert.equal(client.receiptsMode, 'block');
  });

  test('forced per-transaction receipts give identical rows', async () => {
    const block = new EthRpcClient({ url: anvil.url, clock: systemClock });
    const perTransaction = new EthRpcClient({ url: anvil.url, clock: systemClock, receiptsMode: 'transaction' });
    assert.equal(perTransaction.receiptsMode, 'transaction');
    const rowsOf = async (client: EthRpcClient) => (await client.blocksWithReceipts(1, head, signal())).flatMap(({ block: b, receipts }) => transferRows(b, receipts));
    assert.deepEqual(await rowsOf(perTransaction), expected);
    assert.deepEqual(await rowsOf(block), await rowsOf(perTransaction));
    // receipts(block) is every receipt of the block in either mode, the value-0 tx included.
    const five = (await block.blockWithTransactions(5, signal()))!;
    assert.equal(five.transactions.length, 3);
    assert.deepEqual(await perTransaction.receipts(five, signal()), await block.receipts(five, signal()));
  });

  test('small batches and single requests give the same blocks and rows', async () => {
    const chunked = new EthRpcClient({ url: anvil.url, clock: systemClock, blocksPerRequest: 3, maxBatchItems: 1, concurrency: 2 });
    const whole = new EthRpcClient({ url: anvil.url, clock: systemClock });
    assert.deepEqual(await chunked.blocksWithReceipts(0, head, signal()), await whole.blocksWithReceipts(0, head, signal()));
    const perTransaction = new EthRpcClient({ url: anvil.url, clock: systemClock, receiptsMode: 'transaction', maxBatchItems: 1, blocksPerRequest: 1 });
    const rows = (await perTransaction.blocksWithReceipts(1, head, signal())).flatMap(({ block, receipts }) => transferRows(block, receipts));
    assert.deepEqual(rows, expected);
  });

  test('a range costs two HTTP requests: one batch of blocks, one of their receipts', async () => {
    proxy.behaviour = 'forward';
    proxy.requests = 0;
    proxy.methods = [];
    const client = new EthRpcClient({ url: proxy.url, clock: systemClock });
    await client.blocksWithReceipts(1, head, signal());
    assert.equal(proxy.requests, 2);
    assert.deepEqual(new Set(proxy.methods), new Set(['eth_getBlockByNumber', 'eth_getBlockReceipts']));
  });

  test('a node without eth_getBlockReceipts: one batch of per-tx receipts, the fallback remembered', async () => {
    proxy.behaviour = 'noBlockReceipts';
    const reasons: EthRpcError[] = [];
    const client = new EthRpcClient({ url: proxy.url, clock: systemClock, onReceiptsFallback: (reason) => reasons.push(reason) });
    try {
      proxy.requests = 0;
      proxy.methods = [];
      const first = await client.blocksWithReceipts(1, head, signal());
      assert.equal(client.receiptsMode, 'transaction');
      assert.equal(reasons.length, 1);
      assert.equal(reasons[0]!.code, -32601);
      // Blocks, the refused block receipts, then one batch with a receipt per row-producing tx.
      assert.equal(proxy.requests, 3);
      assert.equal(proxy.methods.filter((method) => method === 'eth_getTransactionReceipt').length, expected.length);
      assert.deepEqual(first.flatMap(({ block, receipts }) => transferRows(block, receipts)), expected);

      proxy.methods = [];
      await client.blocksWithReceipts(1, head, signal());
      assert.equal(proxy.methods.includes('eth_getBlockReceipts'), false);
      assert.equal(reasons.length, 1);
    } finally {
      proxy.behaviour = 'forward';
    }
  });

  test('blockWithTransactions: the block, or null for a block not mined yet', async () => {
    const client = new EthRpcClient({ url: anvil.url, clock: systemClock });
    const block = await client.blockWithTransactions(head, signal());
    assert.equal(Number(block!.number), head);
    assert.equal(await client.blockWithTransactions(head + 1, signal()), null);
    assert.equal(await client.blockWithTransactions(head + 1000, signal()), null);
    await assert.rejects(client.blocksWithReceipts(head, head + 1, signal()), (error: unknown) => error instanceof EthBlockNotFoundError && error.number === head + 1);
  });

  test('blockHeaders: hashes and parents of many blocks in one request, null past the head', async () => {
    const client = new EthRpcClient({ url: proxy.url, clock: systemClock });
    const full = await client.blocksWithReceipts(1, head, signal());
    proxy.requests = 0;
    const headers = await client.blockHeaders([head + 1, ...full.map(({ block }) => Number(block.number))], signal());
    assert.equal(proxy.requests, 1);
    assert.equal(headers[0], null);
    assert.deepEqual(
      headers.slice(1).map((header) => [header!.number, header!.hash, header!.parentHash, header!.timestamp]),
      full.map(({ block }) => [block.number, block.hash, block.parentHash, block.timestamp]),
    );
    assert.equal((await client.blockHeader(2, signal()))!.parentHash, full[0]!.block.hash);
    assert.equal(await client.blockHeader(head + 1, signal()), null);
  });

  test('failures surface as their classes: HTTP status, timeout, not JSON, node error, size, refused, aborted', async () => {
    const client = new EthRpcClient({ url: proxy.url, clock: systemClock, timeoutMs: 300 });
    try {
      proxy.behaviour = 'http503';
      await assert.rejects(client.blockNumber(signal()), (error: unknown) => error instanceof EthNodeUnavailableError && error.status === 503);
      proxy.behaviour = 'stall';
      await assert.rejects(client.blockNumber(signal()), (error: unknown) => error instanceof EthNodeUnavailableError && /within 300 ms/.test(error.message));
      proxy.behaviour = 'notJson';
      await assert.rejects(client.blockNumber(signal()), EthInvalidResponseError);
      proxy.behaviour = 'nodeError';
      await assert.rejects(
        client.blockNumber(signal()),
        (error: unknown) => error instanceof EthRpcError && error.code === -32000 && error.method === 'eth_blockNumber' && error.rpcMessage === 'header not found — en-tête introuvable ✗',
      );
      proxy.behaviour = 'forward';
      const tiny = new EthRpcClient({ url: proxy.url, clock: systemClock, maxResponseBytes: 256 });
      await assert.rejects(tiny.blockWithTransactions(1, signal()), EthResponseTooLargeError);
      // The caller's signal wins over everything: an abort is an abort, not an unavailable node.
      proxy.behaviour = 'stall';
      const controller = new AbortController();
      const pending = new EthRpcClient({ url: proxy.url, clock: systemClock }).blockNumber(controller.signal);
      setTimeout(() => controller.abort(), 50);
      await assert.rejects(pending, (error: unknown) => (error as Error).name === 'AbortError');
    } finally {
      proxy.behaviour = 'forward';
    }
    // Nothing listens on the proxy's port once it is closed: connection refused.
    const closed = await startProxy(anvil.url);
    await closed.close();
    await assert.rejects(new EthRpcClient({ url: closed.url, clock: systemClock }).blockNumber(signal()), (error: unknown) => error instanceof EthNodeUnavailableError && error.status === undefined);
  });

  test('snapshot/revert replaces blocks (a reorg for the indexer): same height, another hash', async () => {
    const client = new EthRpcClient({ url: anvil.url, clock: systemClock });
    const [alice, bob, carol] = anvil.accounts as [string, string, string];
    const original = await anvil.snapshot();
    await anvil.send({ from: alice, to: bob, value: 1n });
    const first = (await client.blockWithTransactions(head + 1, signal()))!;
    assert.equal(await anvil.revert(original), true);
    assert.equal(await client.blockNumber(signal()), head);
    assert.equal(await client.blockWithTransactions(head + 1, signal()), null);

    const beforeReplacement = await anvil.snapshot();
    await anvil.send({ from: alice, to: carol, value: 1n });
    const replaced = (await client.blockWithTransactions(head + 1, signal()))!;
    assert.equal(replaced.parentHash, first.parentHash);
    assert.notEqual(replaced.hash, first.hash);
    // A snapshot is consumed by its revert; this one leaves the chain as the other tests expect it.
    assert.equal(await anvil.revert(beforeReplacement), true);
    assert.equal(await anvil.revert(original), false);
    assert.equal(await client.blockNumber(signal()), head);
  });

  test('URL credentials become Basic auth and stay out of error messages', async () => {
    const seen: (string | undefined)[] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers.authorization);
      response.writeHead(401).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new EthRpcClient({ url: `http://user:s3cret@127.0.0.1:${port}/v3/apikey123`, clock: systemClock });
      await assert.rejects(client.blockNumber(signal()), (error: unknown) => {
        assert.ok(error instanceof EthNodeUnavailableError);
        assert.equal(error.status, 401);
        assert.doesNotMatch(error.message, /s3cret|apikey123|user/);
        return true;
      });
      assert.deepEqual(seen, [`Basic ${Buffer.from('user:s3cret').toString('base64')}`]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

test('startAnvil with blockTime mines on an interval without transactions', async () => {
  const anvil = await startAnvil({ blockTime: 1 });
  try {
    const client = new EthRpcClient({ url: anvil.url, clock: systemClock });
    const deadline = Date.now() + 10_000;
    while ((await client.blockNumber(AbortSignal.timeout(5_000))) < 1) {
      assert.ok(Date.now() < deadline, 'no block within 10 s at --block-time 1');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await anvil.stop();
  }
  // stop() waited for the process to exit.
  assert.throws(() => process.kill(anvil.pid, 0), { code: 'ESRCH' });
});

test('the per-request timeout runs on the injected clock: a node that never answers is unavailable once that clock passes it', async (t) => {
  let arrived = 0;
  const silent = createServer((request) => {
    arrived++;
    request.resume();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  });
  const host = `127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const clock = new SimulatedClock();
  // A minute on the wall clock: only the simulated clock can end the call within the test's cap.
  const timeoutMs = 60_000;
  const call = watchPromise(new EthRpcClient({ url: `http://${host}`, clock, timeoutMs }).blockNumber(new AbortController().signal), 'eth_blockNumber');
  await waitFor(() => arrived === 1, { what: 'the request to reach the node' });
  clock.increment(timeoutMs - 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(call.settled, false, 'still waiting short of the timeout');
  clock.increment(1);
  await assert.rejects(call.settle(), (error: unknown) => {
    assert.ok(error instanceof EthNodeUnavailableError, `expected EthNodeUnavailableError, got ${String(error)}`);
    assert.equal(error.message, `eth_blockNumber: no answer from ${host} within ${timeoutMs} ms`);
    assert.equal(error.status, undefined);
    return true;
  });
});
