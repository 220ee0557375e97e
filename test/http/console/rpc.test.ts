// The console's JSON-RPC server over HTTP (spec B §4.2, §7; notes C.1, C.2, F.11–F.13, H45–H55): the real
// listener and method table in front of a fake ADAMANT node on loopback; transport rules, envelope, read methods
// and node failover.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../../actors/clock.js';
import { consoleMethods } from '../../../actors/console/methods.js';
import { consoleNodeClient, consoleTree } from '../../../actors/console/tree.js';
import { createRuntime } from '../../../actors/runtime.js';
import { Supervisor } from '../../../actors/supervisor.js';
import { rpcServer } from '../../../http/console/rpc.routes.js';
import { listenerChild } from '../../../http/listener.js';
import { parseConsoleConfig, type ConsoleConfig } from '../../../src/console/config.js';
import { startFakeAdamantNode, type FakeAdamantNode } from '../../support/adamant-node.js';
import { freePort } from '../../support/cli.js';
import { captureLogger } from '../../support/logger.js';

let node: FakeAdamantNode;
let root: Supervisor;
let url: string;

async function post(body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}
const call = async (method: string, params?: unknown, id: string | number = 1) => (await post({ jsonrpc: '2.0', method, params, id })).json;

before(async () => {
  node = await startFakeAdamantNode({ height: 777 });
  const port = await freePort();
  const refused = `127.0.0.1:${await freePort()}`;
  const parsed = parseConsoleConfig({ networks: { testnet: { nodes: [{ ip: refused.split(':')[0], protocol: 'http', port: Number(refused.split(':')[1]) }, { ip: '127.0.0.1', protocol: 'http', port: Number(new URL(node.url).port) }] } }, rpc: { port } }, 'test.jsonc');
  assert.ok(parsed.ok);
  const config: ConsoleConfig = parsed.config;
  const runtime = createRuntime(systemClock, captureLogger('warn').logger);
  const edge = listenerChild('console.http', (rt) => rpcServer(rt, { host: '127.0.0.1', port, methods: consoleMethods({ node: consoleNodeClient(rt, config), config, accountAddress: undefined }) }));
  root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 1, periodMs: 10_000, children: [consoleTree(config, { edge: [edge] })] }, runtime);
  await root.start();
  url = `http://127.0.0.1:${port}/`;
});
after(async () => {
  root?.shutdown();
  await root?.exited;
  await node?.close();
});

describe('console JSON-RPC server', () => {
  test('transport: GET 405 with Allow: POST, text/plain 415, a notification 204 with no body, over 1 MB 413 (H52)', async () => {
    const get = await fetch(url);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
    assert.equal((await post({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 1 }, { 'content-type': 'text/plain' })).status, 415);
    const notification = await post({ jsonrpc: '2.0', method: 'nodeHeight', params: [] });
    assert.equal(notification.status, 204);
    assert.equal(notification.text, '');
    assert.equal((await post(`[${'1,'.repeat(600_000)}1]`)).status, 413);
    const broken = await post('{"jsonrpc":');
    assert.equal(broken.status, 400);
    assert.deepEqual(broken.json, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  });

  test('clientVersion: success, a semver, the network and no passphrase (H45)', async () => {
    const answer = await call('clientVersion');
    assert.equal(answer.result.success, true);
    assert.match(answer.result.version, /^\d+\.\d+\.\d+$/);
    assert.equal(answer.result.account, 'Not set');
    assert.equal(JSON.stringify(answer).includes('passphrase'), false);
  });

  test('nodeHeight answers the node height as a bare number, through a failover past a refused node (H49)', async () => {
    assert.deepEqual(await call('nodeHeight', [], 'str-id'), { jsonrpc: '2.0', id: 'str-id', result: 777 });
  });

  test('envelope errors: -32601, -32600, the params quirk as a result, 501 with the original wording (H51)', async () => {
    assert.deepEqual(await call('noSuchMethod', []), { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } });
    assert.deepEqual(await call('nodeHeight', 'x'), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } });
    assert.deepEqual((await call('nodeHeight')).result, { success: false, error: '"params" parameter should be an array' });
    assert.deepEqual((await call('getBlock', [])).error, { code: 501, message: "Error: Missing parameter 'id'" });
    assert.deepEqual((await call('getBlock', ['missing'])).error, { code: 501, message: 'Error: Block not found' });
  });

  test('read methods send the node calls of notes C.2 and return the extracted fields (H53, H55)', async () => {
    node.requests.length = 0;
    assert.deepEqual((await call('getTransaction', ['123', 'returnUnconfirmed=1'])).result, { id: '123', type: 0 });
    const get = node.requests.find((request) => request.path === 'transactions/get')!;
    assert.equal(get.url, '/api/transactions/get?id=123&returnUnconfirmed=1');
    await call('getTransactionsReceivedByAddress', ['U1']);
    const list = node.requests.find((request) => request.path === 'transactions')!;
    assert.equal(list.query.get('recipientId'), 'U1');
    assert.equal(list.query.get('and:minAmount'), '1');
    assert.equal(list.query.get('orderBy'), 'timestamp:desc');
    assert.equal((await call('getAddress', ['U42'])).result.address, 'U42');
    assert.equal((await call('getDelegate', ['U12345678'])).result.address, 'U12345678');
    assert.equal((await call('getDelegate', ['b'.repeat(64)])).result.publicKey, 'b'.repeat(64));
    assert.equal((await call('getDelegate', ['lion'])).result.username, 'lion');
    assert.deepEqual((await call('getChats', ['U1', 'limit=5'])).result, [{ participants: [] }]);
    assert.deepEqual((await call('getChatMessages', ['U1', 'U2'])).result, [{ id: '6' }]);
    assert.deepEqual((await call('getBlocks', ['limit=10,orderBy=height:desc'])).result, [{ id: '1', height: 777 }]);
    const blocks = node.requests.filter((request) => request.path === 'blocks').at(-1)!;
    assert.equal(blocks.query.get('limit'), '10');
    assert.equal(blocks.query.get('orderBy'), 'height:desc');
    const status = (await call('nodeStatus', [])).result;
    assert.equal(status.success, undefined);
    assert.equal(status.network.height, 777);
    assert.deepEqual((await call('nodeVersion', [])).result, { build: '', commit: 'c0ffee', version: '0.10.3' });
  });

  test('batches answer every request in order', async () => {
    const answer = await post([
      { jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 1 },
      { jsonrpc: '2.0', method: 'getBlock', params: ['9'], id: 2 },
    ]);
    assert.deepEqual(answer.json, [
      { jsonrpc: '2.0', id: 1, result: 777 },
      { jsonrpc: '2.0', id: 2, result: { id: '9', height: 10 } },
    ]);
  });
});
