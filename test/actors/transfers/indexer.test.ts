// The indexer end to end (spec A; notes A.2, A.4, F.9, F.10): anvil on loopback as the Ethereum node, a throwaway
// PostgreSQL 15 as the database, the transfers service in-process with its real wiring, observed through the
// gateway. Native transfers, an ERC-20 deployed from the committed bytecode and its transfers, a reverted transfer,
// a contract creation, empty blocks advancing max_block, a reorg, a restart.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { toChecksumAddress } from '../../../src/transfers/rows.js';
import { startAnvil, type Anvil } from '../../support/anvil.js';
import { repositoryRoot } from '../../support/fixtures.js';
import { startPostgres, type PostgresCluster } from '../../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../../support/system-packages.js';
import { startTransfersNode, type TestTransfersNode } from '../../support/transfers-node.js';
import { waitFor } from '../../support/wait.js';

const TOKEN_BYTECODE = (JSON.parse(readFileSync(join(repositoryRoot(), 'test', 'fixtures', 'transfers', 'token.bytecode.json'), 'utf8')) as { bytecode: string }).bytecode;
const word = (value: string | bigint) => (typeof value === 'bigint' ? value.toString(16) : value.slice(2).toLowerCase()).padStart(64, '0');
const transferCall = (to: string, amount: bigint) => `0xa9059cbb${word(to)}${word(amount)}`;

type Row = Record<string, unknown>;

let anvil: Anvil;
let cluster: PostgresCluster;
let node: TestTransfersNode | undefined;
let databaseUrl: string;

const env = () => ({ ETH_URL: anvil.url, DB_NAME: databaseUrl, START_BLOCK: '1', CONFIRMATIONS_BLOCK: '0', PERIOD: '0.05' });
async function gateway(path: string): Promise<Row[]> {
  const response = await fetch(`${node!.url}${path}`);
  assert.equal(response.status, 200, path);
  return (await response.json()) as Row[];
}
const head = async () => Number(BigInt(await anvil.rpc<string>('eth_blockNumber')));
/** Waits until the indexer has processed the chain's current head. */
async function indexedToHead(): Promise<number> {
  const target = await head();
  await waitFor(async () => (await gateway('/max_block'))[0]?.max === target, { timeoutMs: 20_000, intervalMs: 50, what: `max_block ${target}` });
  return target;
}
async function receipt(hash: string): Promise<{ blockNumber: string; gasUsed: string; status: string; contractAddress: string | null }> {
  return anvil.rpc('eth_getTransactionReceipt', [hash]);
}

// Without the PostgreSQL server the suite skips (loudly; fails with CI set). Its hooks sit inside it, so a skipped
// suite starts neither anvil nor PostgreSQL.
const skip = skipWithout(postgresServerPackage(), 'the indexer tests (test/actors/transfers/indexer.test.ts)');

describe('transfers indexer against anvil and PostgreSQL', { skip }, () => {
  before(async () => {
    // Both settle before `before` ends, so `after` stops anvil also when PostgreSQL fails to start (else anvil, still
    // starting when the hook failed, would keep this file's process alive and the run would hang).
    const [startedAnvil, startedCluster] = await Promise.allSettled([startAnvil(), startPostgres()]);
    if (startedAnvil.status === 'fulfilled') anvil = startedAnvil.value;
    if (startedCluster.status === 'fulfilled') cluster = startedCluster.value;
    for (const started of [startedCluster, startedAnvil]) if (started.status === 'rejected') throw started.reason;
    databaseUrl = cluster.url;
  });
  after(async () => {
    await node?.stop();
    await anvil?.stop();
    await cluster?.stop();
  });

  const [alice, bob, carol] = [0, 1, 2];
  let token: string;
  const sent: Record<string, string> = {};

  test('native, token, reverted and creation transactions become the rows of notes A.2; empty blocks advance max_block', async () => {
    const account = (i: number) => anvil.accounts[i]!;
    sent.native = await anvil.send({ from: account(alice), to: account(bob), value: 10n ** 18n });
    // A value-0 call without the selector is not a transfer (notes A.2 item 3).
    sent.zero = await anvil.send({ from: account(alice), to: account(bob), value: 0, data: '0x1234' });
    const deploy = await anvil.send({ from: account(alice), data: TOKEN_BYTECODE, gas: 3_000_000 });
    token = (await receipt(deploy)).contractAddress!;
    sent.token = await anvil.send({ from: account(alice), to: token, data: transferCall(account(carol), 5n), gas: 100_000 });
    // Carol holds 5: sending 6 reverts, and the mined failure is indexed all the same (notes A.2 item 6).
    sent.reverted = await anvil.send({ from: account(carol), to: token, data: transferCall(account(bob), 6n), gas: 100_000 });
    assert.equal((await receipt(sent.reverted)).status, '0x0');
    // A contract creation with value: stored with txto null (item 7). Init code 0x00 deploys an empty contract.
    sent.creation = await anvil.send({ from: account(bob), data: '0x00', value: 7, gas: 100_000 });
    await anvil.mine(3);

    node = await startTransfersNode(env());
    const top = await indexedToHead();
    const rows = await gateway('/ethtxs?order=block.asc');
    const byHash = new Map(rows.map((row) => [row.txhash, row]));
    assert.deepEqual([...byHash.keys()].sort(), [sent.native, sent.token, sent.reverted, sent.creation].sort());

    const native = byHash.get(sent.native)!;
    assert.equal(native.txfrom, toChecksumAddress(account(alice)));
    assert.equal(native.txto, toChecksumAddress(account(bob)));
    assert.equal(native.value, 1e18);
    assert.equal(native.gas, 21000);
    assert.equal(native.contract_to, '');
    assert.equal(native.contract_value, '');
    assert.equal(native.block, Number(BigInt((await receipt(sent.native)).blockNumber)));
    const block = await anvil.rpc<{ timestamp: string }>('eth_getBlockByNumber', [(await receipt(sent.native)).blockNumber, false]);
    assert.equal(native.time, Number(BigInt(block.timestamp)));

    const transfer = byHash.get(sent.token)!;
    assert.equal(transfer.txto, toChecksumAddress(token));
    assert.equal(transfer.value, 0);
    assert.equal(transfer.contract_to, word(account(carol)));
    assert.equal(transfer.contract_value, word(5n));
    assert.equal(transfer.gas, Number(BigInt((await receipt(sent.token)).gasUsed)));

    const reverted = byHash.get(sent.reverted)!;
    assert.equal(reverted.txfrom, toChecksumAddress(account(carol)));
    assert.equal(reverted.contract_value, word(6n));
    assert.equal(reverted.gas, Number(BigInt((await receipt(sent.reverted)).gasUsed)));

    const creation = byHash.get(sent.creation)!;
    assert.equal(creation.txto, null);
    assert.equal(creation.value, 7);

    // Lowercase queries find checksummed rows; the three empty blocks count in max_block.
    assert.equal((await gateway(`/ethtxs?txfrom=eq.${account(carol).toLowerCase()}`)).length, 1);
    assert.equal((await gateway('/max_block'))[0]!.max, top);
    assert.ok(top > Number(reverted.block));
  });

  test('a reorg: the orphaned rows are deleted and the new branch is indexed', async () => {
    const account = (i: number) => anvil.accounts[i]!;
    const snapshot = await anvil.snapshot();
    const orphan = await anvil.send({ from: account(bob), to: account(carol), value: 11 });
    await indexedToHead();
    assert.equal((await gateway(`/ethtxs?txhash=eq.${orphan}`)).length, 1);

    assert.equal(await anvil.revert(snapshot), true);
    const replacement = await anvil.send({ from: account(carol), to: account(alice), value: 12 });
    await anvil.mine(2);
    await indexedToHead();
    assert.deepEqual(await gateway(`/ethtxs?txhash=eq.${orphan}`), []);
    assert.equal((await gateway(`/ethtxs?txhash=eq.${replacement}`)).length, 1);
    assert.ok(node!.lines.some((line) => line.msg === 'chain reorganization: rewound to the common ancestor'));
  });

  test('a restart resumes after the cursor: new blocks are indexed, nothing is stored twice', async () => {
    const before = await gateway('/ethtxs?select=txhash');
    await node!.stop();
    node = undefined;
    const later = await anvil.send({ from: anvil.accounts[0]!, to: anvil.accounts[3]!, value: 13 });
    node = await startTransfersNode(env());
    await indexedToHead();
    const after = await gateway('/ethtxs?select=txhash');
    assert.equal(after.length, before.length + 1);
    assert.equal(new Set(after.map((row) => row.txhash)).size, after.length);
    assert.ok(after.some((row) => row.txhash === later));
  });

  test('several batches in a row (two writes in flight on PostgreSQL, one after the other on the embedded PGlite): every row once, the same rows on both', async () => {
    // Transfers spread over ~190 blocks: four batches of 50 from the start, so the next batch is written while the
    // one before it commits.
    const account = (i: number) => anvil.accounts[i]!;
    const spread: string[] = [];
    for (let i = 0; i < 3; i++) {
      spread.push(await anvil.send({ from: account(alice), to: account(carol), value: 100 + i }));
      await anvil.mine(60);
    }
    node ??= await startTransfersNode(env());
    const target = await indexedToHead();
    const dir = mkdtempSync(join(tmpdir(), 'adm-indexer-pglite-'));
    const embedded = await startTransfersNode({ ETH_URL: anvil.url, DATA_DIR: join(dir, 'pglite'), START_BLOCK: '1', CONFIRMATIONS_BLOCK: '0', PERIOD: '0.05' });
    try {
      const read = async (url: string, path: string) => (await (await fetch(`${url}${path}`)).json()) as Row[];
      await waitFor(async () => (await read(embedded.url, '/max_block'))[0]?.max === target, { timeoutMs: 60_000, intervalMs: 100, what: `the embedded indexer at ${target}` });
      const rowsOf = (url: string) => read(url, '/ethtxs?select=txhash,block,txfrom,txto,value&order=block.asc,txhash.asc');
      const [onPostgres, onPglite] = await Promise.all([rowsOf(node.url), rowsOf(embedded.url)]);
      assert.equal(new Set(onPostgres.map((row) => row.txhash)).size, onPostgres.length, 'no row twice on PostgreSQL');
      assert.deepEqual(onPglite, onPostgres);
      for (const hash of spread) assert.ok(onPglite.some((row) => row.txhash === hash), hash);
    } finally {
      await embedded.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
