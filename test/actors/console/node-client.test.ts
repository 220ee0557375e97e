// The console's node client (actors/console/node-client.ts) against real HTTP servers on loopback: GETs fail over,
// a POST is repeated on another node only when the first certainly never received it.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { nodeClient, NodeOutcomeUnknownError, NodeUnavailableError } from '../../../actors/console/node-client.js';
import { freePort } from '../../support/cli.js';

interface FakeNode {
  readonly url: string;
  readonly seen: string[];
  server: Server;
}

async function fakeNode(answer: (method: string, path: string) => { status: number; body: string } | 'hang'): Promise<FakeNode> {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(`${request.method} ${request.url}`);
    const reply = answer(request.method!, request.url!);
    if (reply === 'hang') return;
    response.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, server };
}

let sick: FakeNode;
let healthy: FakeNode;
let silent: FakeNode;
let refused: string;
const signal = new AbortController().signal;

before(async () => {
  sick = await fakeNode(() => ({ status: 503, body: 'overloaded' }));
  healthy = await fakeNode((method, path) => ({ status: 200, body: JSON.stringify({ success: true, method, path }) }));
  silent = await fakeNode(() => 'hang');
  refused = `http://127.0.0.1:${await freePort()}`;
});
after(() => {
  for (const node of [sick, healthy, silent]) node.server.closeAllConnections(), node.server.close();
});

describe('ADAMANT node client', () => {
  test('a GET goes to the next node after a refused connection or a 5xx, and reports each failure', async () => {
    const failed: string[] = [];
    const client = nodeClient({ order: () => [refused, sick.url, healthy.url], onNodeFailure: (url) => failed.push(url) });
    const body = await client.get<{ path: string }>('blocks/getHeight', new URLSearchParams({ a: '1' }), signal);
    assert.equal(body.path, '/api/blocks/getHeight?a=1');
    assert.deepEqual(failed, [refused, sick.url]);
  });

  test('a GET tries at most three nodes', async () => {
    const client = nodeClient({ order: () => [sick.url, sick.url, sick.url, healthy.url] });
    await assert.rejects(client.get('node/status', undefined, signal), NodeUnavailableError);
  });

  test('a POST whose connection was refused moves on; a POST a node received but did not answer is not repeated', async () => {
    const client = nodeClient({ order: () => [refused, healthy.url] });
    const body = await client.post<{ method: string }>('transactions/process', { transaction: {} }, signal);
    assert.equal(body.method, 'POST');
    const before = healthy.seen.length;
    const waiting = nodeClient({ order: () => [silent.url, healthy.url], timeoutMs: 300 });
    await assert.rejects(waiting.post('transactions/process', { transaction: {} }, signal), (error: Error) => error instanceof NodeOutcomeUnknownError && /may or may not/.test(error.message));
    assert.equal(healthy.seen.length, before, 'the second node never saw the POST');
    const erroring = nodeClient({ order: () => [sick.url, healthy.url] });
    await assert.rejects(erroring.post('transactions/process', {}, signal), NodeOutcomeUnknownError);
  });

  test('4xx answers are the node speaking: returned as they are', async () => {
    const refusing = await fakeNode(() => ({ status: 400, body: JSON.stringify({ success: false, error: 'Invalid transaction' }) }));
    try {
      const client = nodeClient({ order: () => [refusing.url, healthy.url] });
      assert.deepEqual(await client.post('transactions/process', {}, signal), { success: false, error: 'Invalid transaction' });
    } finally {
      refusing.server.close();
    }
  });
});
