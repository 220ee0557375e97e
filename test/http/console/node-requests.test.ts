// What the console server sends to ADAMANT nodes (notes C.2): a JSON-RPC 2.0 client against the real listener and
// method table, in front of the fake ADAMANT node, asserting the exact request the node saw. Query items arrive
// rewritten as the original sent them; what the original passed through to the node passes (issue 28), except where
// it could be a passphrase; parameters of the wrong shape are refused before any node is asked and never repeated
// when they could be a passphrase; no passphrase reaches any node request; a batch of 50 calls prints no
// MaxListenersExceededWarning.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../../src/clock.js';
import { consoleApi } from '../../../actors/console/api.js';
import { consoleTree } from '../../../actors/console/tree.js';
import { createRuntime } from '../../../actors/runtime.js';
import { Supervisor } from '../../../actors/supervisor.js';
import { rpcServer } from '../../../http/console/rpc.routes.js';
import { listenerChild } from '../../../http/listener.js';
import { parseConsoleConfig } from '../../../src/console/config.js';
import { startFakeAdamantNode, type FakeAdamantNode } from '../../support/adamant-node.js';
import { freePort } from '../../support/cli.js';
import { JsonRpcCallError, JsonRpcClient } from '../../support/jsonrpc-client.js';
import { captureLogger } from '../../support/logger.js';

/** Public BIP-39 test mnemonics (notes D): the configured account, and a passphrase pasted into wrong fields. */
const CONFIGURED = `${'abandon '.repeat(11)}about`;
const PASTED = `${'legal '.repeat(11)}winner`;
/** Words that are not long enough for the passphrase rule, still never to be repeated or sent. */
const SHORT_WORDS = 'short but secret';
const SECRETS = [CONFIGURED, PASTED, SHORT_WORDS];

let node: FakeAdamantNode;
let root: Supervisor;
let rpc: JsonRpcClient;
let logs: ReturnType<typeof captureLogger>;

before(async () => {
  node = await startFakeAdamantNode({ height: 555 });
  const port = await freePort();
  const parsed = parseConsoleConfig({ passphrase: CONFIGURED, networks: { testnet: { nodes: [{ ip: '127.0.0.1', protocol: 'http', port: Number(new URL(node.url).port) }] } }, rpc: { port } }, 'test.jsonc');
  assert.ok(parsed.ok);
  const config = parsed.config;
  logs = captureLogger('debug');
  const runtime = createRuntime(systemClock, logs.logger);
  const edge = listenerChild('console.http', (rt) => rpcServer(rt, { host: '127.0.0.1', port, api: consoleApi(rt, config) }));
  root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 1, periodMs: 10_000, children: [consoleTree(config, { edge: [edge] })] }, runtime);
  await root.start();
  rpc = new JsonRpcClient(`http://127.0.0.1:${port}/`);
});
after(async () => {
  root?.shutdown();
  await root?.exited;
  await node?.close();
});

/** The requests the node received during `run` (the health check's node/status polls left out). */
async function nodeRequests(run: () => Promise<unknown>): Promise<string[]> {
  const from = node.requests.length;
  await run();
  return node.requests.slice(from).filter((request) => request.path !== 'node/status').map((request) => `${request.method} ${request.url}`);
}

/** The JSON-RPC error of a call that must fail. */
async function failure(method: string, params: unknown): Promise<JsonRpcCallError> {
  try {
    await rpc.call(method, params);
  } catch (error) {
    if (error instanceof JsonRpcCallError) return error;
    throw error;
  }
  assert.fail(`${method} succeeded`);
}

describe('query items reach the node as the original sent them', () => {
  const cases: Array<[string, unknown[], string]> = [
    ['getChatTransactions', ['withoutDirectTransfers=1'], '/api/chats/get?includeDirectTransfers=0'],
    ['getChatTransactions', ['senderId=U1', 'withoutDirectTransfers=0', 'and:limit=5'], '/api/chats/get?senderId=U1&limit=5&includeDirectTransfers=1'],
    ['getTransactions', ['senderId=U1', 'and:limit=5', 'or:orderBy=timestamp:asc', 'and:fromHeight=10'], '/api/transactions?senderId=U1&limit=5&orderBy=timestamp:asc&and:fromHeight=10'],
    ['getTransactions', ['inId=U7,and:minAmount=1,or:offset=20,and:returnAsset=1,withoutDirectTransfers=true'], '/api/transactions?inId=U7&and:minAmount=1&offset=20&returnAsset=1&includeDirectTransfers=0'],
    ['getBlocks', ['and:limit=10,or:orderBy=height:desc'], '/api/blocks?limit=10&orderBy=height:desc'],
    ['getChats', ['U1', 'withoutDirectTransfers=1', 'or:limit=5'], '/api/chatrooms/U1?limit=5&includeDirectTransfers=0'],
    ['getChatMessages', ['U1', 'U2', 'and:offset=5', 'withoutDirectTransfers=false'], '/api/chatrooms/U1/U2?offset=5&includeDirectTransfers=1'],
    ['getTransaction', ['123', 'and:returnUnconfirmed=1'], '/api/transactions/get?id=123&returnUnconfirmed=1'],
    ['getTransactionsInBlockById', ['7917597195203393333'], '/api/transactions?blockId=7917597195203393333&orderBy=timestamp:desc'],
    ['getTransactionsInBlockByHeight', ['10'], '/api/transactions?fromHeight=10&and:toHeight=10&orderBy=timestamp:desc'],
    ['getTransactionsReceivedByAddress', ['U1'], '/api/transactions?recipientId=U1&and:minAmount=1&orderBy=timestamp:desc'],
    ['getAddress', ['U42'], '/api/accounts?address=U42'],
    ['getBlock', ['9'], '/api/blocks/get?id=9'],
    ['getDelegate', ['lion'], '/api/delegates/get?username=lion'],
    ['getMessage', ['5', CONFIGURED], '/api/transactions/get?id=5&returnAsset=1'],
  ];
  for (const [method, params, url] of cases) {
    test(`${method} ${JSON.stringify(params).replace(CONFIGURED, '<passphrase>')} → GET ${url}`, async () => {
      assert.deepEqual(await nodeRequests(() => rpc.call(method, params).catch((error: Error) => error)), [`GET ${url}`]);
    });
  }

  test('& inside a delegate name (a name may hold one) is encoded: the node reads one parameter', async () => {
    const seen = await nodeRequests(() => rpc.call('getDelegate', ['a&b=c']));
    assert.deepEqual(seen, ['GET /api/delegates/get?username=a%26b%3Dc']);
    assert.deepEqual([...node.requests.at(-1)!.query], [['username', 'a&b=c']]);
  });
});

describe('lenient where the original console is lenient, through jayson (issue 28)', () => {
  test('getChatTransactions with a bare address reaches the node, as a key without a value, and answers its result', async () => {
    let result: unknown;
    const seen = await nodeRequests(async () => (result = await rpc.call('getChatTransactions', ['U5450667915320866213'])));
    assert.deepEqual(seen, ['GET /api/chats/get?U5450667915320866213=']);
    assert.deepEqual(result, [{ id: '5', type: 0 }]);
  });

  test('getDelegate with an explicit lookup key checks the key only: the value goes to the node as it is', async () => {
    let result: unknown;
    const seen = await nodeRequests(async () => (result = await rpc.call('getDelegate', ['acc_delegate_one', 'address'])));
    assert.deepEqual(seen, ['GET /api/delegates/get?address=acc_delegate_one']);
    assert.deepEqual(result, { username: 'found', address: 'acc_delegate_one', publicKey: 'b'.repeat(64) });
    assert.deepEqual(await nodeRequests(() => rpc.call('getDelegate', ['lion', 'publicKey'])), ['GET /api/delegates/get?publicKey=lion']);
  });

  test("a bad lookup key answers the original's text exactly, and asks no node", async () => {
    const seen = await nodeRequests(async () => {
      const error = await failure('getDelegate', ['lynx', 'name']);
      assert.deepEqual({ code: error.code, message: error.message }, { code: 501, message: "Error: Invalid delegate lookup key 'name'. Use username, publicKey, or address" });
    });
    assert.deepEqual(seen, []);
  });

  test('deprecated direct-transfer filters keep their values; of several in one call the node gets one includeDirectTransfers', async () => {
    assert.deepEqual(await nodeRequests(() => rpc.call('getTransactions', ['withoutDirectTransfers=1'])), ['GET /api/transactions?includeDirectTransfers=0']);
    assert.deepEqual(await nodeRequests(() => rpc.call('getTransactions', ['withoutDirectTransfers=yes'])), ['GET /api/transactions?includeDirectTransfers=yes']);
    const several = ['withoutDirectTransfers=1', 'and:withoutDirectTransfers=0', 'or:includeDirectTransfers=1', 'or:withoutDirectTransfers=1'];
    let result: unknown;
    assert.deepEqual(await nodeRequests(async () => (result = await rpc.call('getTransactions', several))), ['GET /api/transactions?includeDirectTransfers=1']);
    assert.deepEqual(result, [{ id: '5', type: 0 }]);
  });

  test('where leniency meets the passphrase rule, the rule wins: a bare passphrase or one as a delegate is refused, not repeated, not sent', async () => {
    const seen = await nodeRequests(async () => {
      for (const [method, params, name] of [
        ['getChatTransactions', [PASTED], 'query'],
        ['getChatTransactions', [SHORT_WORDS], 'query'],
        ['getTransactions', [`withoutDirectTransfers=${PASTED}`], 'withoutDirectTransfers'],
        ['getDelegate', [SHORT_WORDS, 'username'], 'username'],
      ] as const) {
        const error = await failure(method, params);
        assert.deepEqual({ code: error.code, message: error.message }, { code: 501, message: `Error: Wrong '${name}' parameter` }, `${method} ${name}`);
      }
    });
    assert.deepEqual(seen, []);
  });
});

describe('parameters of the wrong shape are refused before any node is asked', () => {
  test('& # ? = inside an id, a height or an address never reach a node', async () => {
    const cases: Array<[string, unknown[], string]> = [
      ['getBlock', ['1&limit=5'], "Error: Wrong 'id' parameter: 1&limit=5"],
      ['getTransaction', ['1#x'], "Error: Wrong 'id' parameter: 1#x"],
      ['getMessage', ['1?returnAsset=0'], "Error: Wrong 'id' parameter: 1?returnAsset=0"],
      ['getTransactionsInBlockById', ['1&senderId=U2'], "Error: Wrong 'blockId' parameter: 1&senderId=U2"],
      ['getTransactionsInBlockByHeight', ['10&and:toHeight=99'], "Error: Wrong 'height' parameter: 10&and:toHeight=99"],
      ['getAddress', ['U1&x=1'], "Error: Wrong 'address' parameter: U1&x=1"],
      ['getChats', ['U1/../../blocks'], "Error: Wrong 'address' parameter: U1/../../blocks"],
    ];
    const seen = await nodeRequests(async () => {
      for (const [method, params, message] of cases) {
        const error = await failure(method, params);
        assert.deepEqual({ code: error.code, message: error.message }, { code: 501, message }, method);
      }
    });
    assert.deepEqual(seen, []);
  });

  test('a passphrase in an address, id, height, key, name, query, amount or vote: 501, not repeated, not sent', async () => {
    for (const pasted of [PASTED, SHORT_WORDS]) {
      const cases: Array<[string, unknown, string]> = [
        ['getAddress', [pasted], 'address'],
        ['getBlock', [pasted], 'id'],
        ['getTransaction', [pasted], 'id'],
        ['getMessage', [pasted], 'id'],
        ['getChats', [pasted], 'address'],
        ['getChatMessages', ['U1', pasted], 'partnerAddress'],
        ['getDelegate', [pasted], 'username'],
        ['getDelegate', [pasted, 'address'], 'address'],
        ['getDelegate', [pasted, 'publicKey'], 'publicKey'],
        ['getTransactionsInBlockById', [pasted], 'blockId'],
        ['getTransactionsInBlockByHeight', [pasted], 'height'],
        ['getTransactionsReceivedByAddress', [pasted], 'address'],
        ['getTransactions', [pasted], 'query'],
        ['getTransactions', [`senderId=${pasted}`], 'senderId'],
        ['getChatTransactions', [`and:recipientId=${pasted}`], 'recipientId'],
        ['getBlocks', [`generatorPublicKey=${pasted}`], 'generatorPublicKey'],
        ['getBlocks', [`memo=${pasted}`], 'memo'],
        ['delegateNew', [pasted, CONFIGURED], 'username'],
        ['delegateNew', [pasted], 'username'],
        ['sendTokens', { address: pasted, amount: '1' }, 'address'],
        ['sendTokens', { address: 'U1', amount: pasted }, 'amount'],
        ['sendMessage', { address: pasted, message: 'hi' }, 'address'],
        ['sendMessage', { address: 'U1', message: 'hi', amount: pasted }, 'amount'],
        ['sendRich', { address: pasted, data: { type: 'x' } }, 'address'],
        ['voteFor', { votes: [`+${pasted}`] }, 'votes'],
        ['voteFor', { votes: ['lion', pasted] }, 'votes'],
      ];
      const seen = await nodeRequests(async () => {
        for (const [method, params, name] of cases) {
          const error = await failure(method, params);
          assert.deepEqual({ code: error.code, message: error.message }, { code: 501, message: `Error: Wrong '${name}' parameter` }, `${method} ${name}`);
        }
      });
      assert.deepEqual(seen, [], 'no node was asked');
    }
    const lookup = await failure('getDelegate', ['lion', PASTED]);
    assert.equal(lookup.message, 'Error: Invalid delegate lookup key. Use username, publicKey, or address');
  });

  test('a delegate registration under a pasted passphrase is refused, and its error repeats nothing', async () => {
    const error = await failure('delegateNew', [PASTED, CONFIGURED]);
    assert.equal(error.message, "Error: Wrong 'username' parameter");
    // The original repeated a wrong name; a short one that cannot be a passphrase still is.
    assert.equal((await failure('delegateNew', ['Bad_Name', CONFIGURED])).message, "Error: Wrong 'username' parameter: Bad_Name");
  });
});

describe('noise', () => {
  test('a batch of 50 calls is answered whole and prints no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const calls = Array.from({ length: 50 }, (_, i) => (i % 3 === 0 ? { method: 'nodeHeight', params: [] } : i % 3 === 1 ? { method: 'getBlock', params: [String(i)] } : { method: 'getTransactions', params: [`and:limit=${i}`] }));
      const outcomes = await rpc.batch(calls);
      assert.equal(outcomes.length, 50);
      assert.deepEqual(outcomes.filter((outcome) => 'error' in outcome), []);
      assert.deepEqual(outcomes[0], { result: 555 });
      assert.deepEqual(outcomes[1], { result: { id: '1', height: 10 } });
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(warnings.map((warning) => `${warning.name}: ${warning.message}`), []);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('passphrases', () => {
  test('no passphrase, plain or encoded, reached any node request or log line of this suite', () => {
    assert.ok(node.requests.length > 20, 'the suite made node requests to check');
    const forms = SECRETS.flatMap((secret) => [secret, encodeURIComponent(secret), secret.replace(/ /g, '+')]);
    const sent = node.requests.map((request) => `${request.url} ${JSON.stringify(request.body ?? null)}`).join('\n');
    for (const form of forms) assert.equal(sent.includes(form), false, `a node request carried ${form.slice(0, 5)}…`);
    const logged = JSON.stringify(logs.lines);
    for (const secret of SECRETS) assert.equal(logged.includes(secret), false);
  });
});
