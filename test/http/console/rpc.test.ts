// The console's JSON-RPC server over HTTP (spec B §4.2, §7; notes C.1, C.2, F.11–F.13, H45–H55): the real
// listener and method table in front of a fake ADAMANT node on loopback; transport rules, envelope, read methods
// and node failover.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../../src/clock.js';
import { consoleApi } from '../../../actors/console/api.js';
import { consoleTree } from '../../../actors/console/tree.js';
import { createRuntime } from '../../../actors/runtime.js';
import { Supervisor } from '../../../actors/supervisor.js';
import { rpcServer } from '../../../http/console/rpc.routes.js';
import { listenerChild } from '../../../http/listener.js';
import { parseConsoleConfig, type ConsoleConfig } from '../../../src/console/config.js';
import { startFakeAdamantNode, type FakeAdamantNode } from '../../support/adamant-node.js';
import { freePort } from '../../support/cli.js';
import { captureLogger } from '../../support/logger.js';
import { rawRequest } from '../../support/raw-http.js';
import { addressFromPublicKey, keyPairFromPassphrase } from '../../../src/console/crypto.js';

/** The public BIP-39 test mnemonic (notes D): a passphrase that is no secret. */
const MNEMONIC = `${'abandon '.repeat(11)}about`;
/** A test account the fake node knows and reads messages for (another public test mnemonic). */
const RECIPIENT = `${'zoo '.repeat(11)}wrong`;
const RECIPIENT_ADDRESS = addressFromPublicKey(keyPairFromPassphrase(RECIPIENT).publicKey);
/** Every passphrase this suite sends: none may appear in a log line. */
const PASSPHRASES = [MNEMONIC, RECIPIENT, 'short but secret', `${'legal '.repeat(11)}winner`];
let logs: ReturnType<typeof captureLogger>;
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
  node = await startFakeAdamantNode({ height: 777, accounts: [RECIPIENT] });
  const port = await freePort();
  const refused = `127.0.0.1:${await freePort()}`;
  const parsed = parseConsoleConfig({ networks: { testnet: { nodes: [{ ip: refused.split(':')[0], protocol: 'http', port: Number(refused.split(':')[1]) }, { ip: '127.0.0.1', protocol: 'http', port: Number(new URL(node.url).port) }] } }, rpc: { port } }, 'test.jsonc');
  assert.ok(parsed.ok);
  const config: ConsoleConfig = parsed.config;
  logs = captureLogger('debug');
  const runtime = createRuntime(systemClock, logs.logger);
  const edge = listenerChild('console.http', (rt) => rpcServer(rt, { host: '127.0.0.1', port, api: consoleApi(rt, config) }));
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

  test('bad percent-encoding in the path or the query is never a 500: the server reads neither (issue 15)', async () => {
    // Like the original (jayson on any path), the path and query are ignored: a POST is a call, anything else 405.
    const port = Number(new URL(url).port);
    const json = { 'Content-Type': 'application/json' };
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 7 });
    for (const target of ['/%zz', '/%FF%FE', '/%E0%A4%A?x=%zz', '/?%FF=%E0%A4%A', '/a/%/b?%']) {
      const called = await rawRequest(port, 'POST', target, json, body);
      assert.equal(called.status, 200, `POST ${target}: ${called.body}`);
      assert.deepEqual(JSON.parse(called.body), { jsonrpc: '2.0', id: 7, result: 777 }, target);
      const broken = await rawRequest(port, 'POST', target, json, '{"jsonrpc":');
      assert.equal(broken.status, 400, `POST ${target} (unparsable): ${broken.body}`);
      assert.deepEqual(JSON.parse(broken.body), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      const read = await rawRequest(port, 'GET', target);
      assert.equal(read.status, 405, `GET ${target}: ${read.body}`);
      assert.equal(read.header('allow'), 'POST');
    }
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
    // An id that is not one is refused before any node is asked; a node's refusal is the error's message.
    assert.deepEqual((await call('getBlock', ['missing'])).error, { code: 501, message: "Error: Wrong 'id' parameter: missing" });
    node.routes.set('blocks/get', () => [200, { success: false, errorMessage: 'Block not found' }]);
    try {
      assert.deepEqual((await call('getBlock', ['404'])).error, { code: 501, message: 'Error: Block not found' });
    } finally {
      node.routes.delete('blocks/get');
    }
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

  test('sendTokens signs a type-0 transfer the node verifies; amounts in sats or ADM; errors never echo the passphrase (H57, H59)', async () => {
    const passphrase = MNEMONIC;
    const sent = await call('sendTokens', { address: 'U1234567890123456', amount: '100', passphrase });
    const accepted = node.accepted.at(-1)!;
    assert.deepEqual(sent, { jsonrpc: '2.0', id: 1, result: accepted.id });
    assert.equal(accepted.transaction.type, 0);
    assert.equal(accepted.transaction.amount, 100);
    assert.equal(accepted.transaction.recipientId, 'U1234567890123456');
    assert.equal(accepted.transaction.senderId, 'U5450667915320866213');
    assert.equal('fee' in accepted.transaction || 'id' in accepted.transaction, false, 'the node computes fee and id');
    await call('sendTokens', { address: 'U1234567890123456', amount: '1.5ADM', passphrase });
    assert.equal(node.accepted.at(-1)!.transaction.amount, 150_000_000);
    const fractional = await call('sendTokens', { address: 'U1', amount: '1.5', passphrase });
    assert.match(fractional.error.message, /^Error: Wrong 'amount' parameter/);
    assert.deepEqual((await call('sendTokens', ['U1', '5'])).error, { code: 501, message: "Error: Missing parameter 'address'" });
    const short = await call('sendTokens', { address: 'U1', amount: '5', passphrase: 'short but secret' });
    assert.deepEqual(short.error, { code: 501, message: "Error: Wrong 'passphrase' parameter" });
    const answers = JSON.stringify([sent, fractional, short]);
    assert.equal(answers.includes('short but secret') || answers.includes(passphrase), false);
  });

  test('voteFor posts a type-3 vote for itself with +/- public keys, names resolved through the node (H60)', async () => {
    const key = 'c'.repeat(64);
    const answer = await call('voteFor', { votes: [key, '-lion'], passphrase: MNEMONIC });
    const accepted = node.accepted.at(-1)!;
    assert.equal(accepted.path, 'accounts/delegates');
    assert.equal(accepted.transaction.type, 3);
    assert.equal(accepted.transaction.recipientId, accepted.transaction.senderId);
    assert.deepEqual((accepted.transaction.asset as { votes: string[] }).votes, [`+${key}`, `-${'b'.repeat(64)}`]);
    assert.equal(answer.result.id, accepted.id);
    assert.match((await call('voteFor', { votes: Array.from({ length: 34 }, () => key), passphrase: MNEMONIC })).error.message, /at most 33/);
  });

  test('delegateNew posts a type-2 registration; a bad username is refused', async () => {
    const answer = await call('delegateNew', ['new_delegate', MNEMONIC]);
    const accepted = node.accepted.at(-1)!;
    assert.equal(accepted.path, 'delegates');
    assert.equal(accepted.transaction.type, 2);
    assert.equal(accepted.transaction.recipientId, null);
    assert.equal(answer.result.id, accepted.id);
    assert.match((await call('delegateNew', ['Bad Name', MNEMONIC])).error.message, /^Error: Wrong 'username' parameter/);
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

  test('sendMessage encrypts for the recipient: the node verifies the type-8 transaction and decrypts the text', async () => {
    const answer = await call('sendMessage', { address: RECIPIENT_ADDRESS, message: 'hi', passphrase: MNEMONIC });
    const accepted = node.accepted.at(-1)!;
    assert.equal(answer.result, accepted.id);
    assert.equal(accepted.transaction.type, 8);
    assert.equal(accepted.transaction.amount, 0);
    const received = node.received.at(-1)!;
    assert.deepEqual({ id: received.id, senderId: received.senderId, recipientId: received.recipientId, chatType: received.chatType, text: received.text }, { id: accepted.id, senderId: 'U5450667915320866213', recipientId: RECIPIENT_ADDRESS, chatType: 1, text: 'hi' });
    assert.match(received.nonceHex, /^[0-9a-f]{48}$/, 'a 24-byte nonce');
    const getKey = node.requests.filter((request) => request.path === 'accounts/getPublicKey').at(-1)!;
    assert.equal(getKey.query.get('address'), RECIPIENT_ADDRESS);
    // A transfer with a comment, and the recipient given as its public key.
    await call('sendMessage', { address: keyPairFromPassphrase(RECIPIENT).publicKey.toString('hex'), message: 'rent', amount: '2ADM', passphrase: MNEMONIC });
    assert.equal(node.accepted.at(-1)!.transaction.amount, 200_000_000);
    assert.equal(node.received.at(-1)!.text, 'rent');
  });

  test('sendRich and sendSignal send JSON (objects serialized, single quotes turned into double); bad payloads are refused', async () => {
    await call('sendRich', { address: RECIPIENT_ADDRESS, data: { type: 'eth_transaction', amount: '0.1', hash: '0xabc' }, passphrase: MNEMONIC });
    assert.deepEqual({ chatType: node.received.at(-1)!.chatType, data: JSON.parse(node.received.at(-1)!.text) }, { chatType: 2, data: { type: 'eth_transaction', amount: '0.1', hash: '0xabc' } });
    await call('sendSignal', { address: RECIPIENT_ADDRESS, data: "{'action':'ping'}", passphrase: MNEMONIC });
    assert.deepEqual({ chatType: node.received.at(-1)!.chatType, text: node.received.at(-1)!.text }, { chatType: 3, text: '{"action":"ping"}' });
    // `\line` in a string stands for a line break inside the JSON text.
    await call('sendRich', { address: RECIPIENT_ADDRESS, data: "{'type':'eth_transaction','amount':'1','comments':'first\\linesecond'}", passphrase: MNEMONIC });
    assert.equal(JSON.parse(node.received.at(-1)!.text).comments, 'first\nsecond');
    const sent = node.accepted.length;
    assert.equal((await call('sendRich', { address: RECIPIENT_ADDRESS, data: '{not json', passphrase: MNEMONIC })).error.message, "Error: Wrong 'data' parameter: must be JSON");
    assert.equal((await call('sendRich', { address: RECIPIENT_ADDRESS, data: { amount: 5 }, passphrase: MNEMONIC })).error.message, "Error: Field 'amount' must be a string, representing a number");
    assert.equal((await call('sendRich', { address: RECIPIENT_ADDRESS, data: { type: 'ETH_transaction' }, passphrase: MNEMONIC })).error.message, "Error: Value 'ETH_transaction' must be in lower case");
    assert.equal(node.accepted.length, sent, 'nothing was posted for a refused payload');
  });

  test('a recipient without a public key on chain: the original error, nothing posted', async () => {
    const sent = node.accepted.length;
    const answer = await call('sendMessage', { address: 'U1234567890123456', message: 'hello?', passphrase: MNEMONIC });
    assert.equal(answer.error.code, 501);
    assert.match(answer.error.message, /^Error: Unable to get public key for U1234567890123456\. Account may be uninitialized/);
    assert.equal(node.accepted.length, sent);
  });

  test('getMessage decrypts for the sender and the recipient, not for a third party; other types are refused', async () => {
    const id = (await call('sendMessage', { address: RECIPIENT_ADDRESS, message: 'see you at 5', passphrase: MNEMONIC })).result as string;
    const asRecipient = (await call('getMessage', [id, RECIPIENT])).result;
    assert.equal(asRecipient.decoded, 'see you at 5');
    assert.equal(asRecipient.id, id);
    assert.equal((await call('getMessage', [id, MNEMONIC])).result.decoded, 'see you at 5', 'the sender reads its own message');
    const thirdParty = (await call('getMessage', [id, `${'legal '.repeat(11)}winner`])).result;
    assert.equal(thirdParty.decoded, undefined);
    assert.equal(thirdParty.id, id);
    assert.deepEqual((await call('getMessage', ['42'])).error, { code: 501, message: 'Error: Not a message transaction' });
    assert.deepEqual((await call('getMessage', [])).error, { code: 501, message: "Error: Missing parameter 'id'" });
  });

  test('accountNew: a fresh 12-word passphrase and the keys and address it derives, different every call', async () => {
    const asked = node.requests.length;
    const first = (await call('accountNew', [])).result;
    const second = (await call('accountNew', [])).result;
    assert.equal(first.passphrase.split(' ').length, 12);
    assert.notEqual(first.passphrase, second.passphrase);
    const keys = keyPairFromPassphrase(first.passphrase);
    assert.deepEqual(first, { passphrase: first.passphrase, address: addressFromPublicKey(keys.publicKey), publicKey: keys.publicKey.toString('hex'), privateKey: keys.privateKey.toString('hex') });
    assert.equal(node.requests.length, asked, 'made locally: no node was asked');
    const passphrases = JSON.stringify(logs.lines);
    assert.equal(passphrases.includes(first.passphrase) || passphrases.includes(second.passphrase), false, 'new passphrases are not logged');
  });

  test('no passphrase ever reaches a log line (the whole suite\'s logs at debug level)', () => {
    assert.ok(logs.lines.length > 0, 'the suite logged something to check');
    const text = JSON.stringify(logs.lines);
    for (const passphrase of PASSPHRASES) assert.equal(text.includes(passphrase), false);
  });
});
