// The console's node client (actors/console/ordered-node-client.ts over storage/console/adamant-node.http.ts)
// against real HTTP servers on loopback: GETs fail over, a POST is repeated on another node only when the first
// certainly never received it.

import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { nodeClient, NodeOutcomeUnknownError, NodeUnavailableError } from '../../../actors/console/ordered-node-client.js';
import { MAX_NODE_RESPONSE_BYTES } from '../../../storage/console/adamant-node.http.js';
import { onAbort } from '../../../src/cancellation.js';
import { AbortedError } from '../../../src/errors.js';
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

  test('the POST body arrives whole as JSON; a body that is not JSON or a 5xx counts as a sick node', async () => {
    let received: unknown;
    const echoing = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received = { type: request.headers['content-type'], length: Number(request.headers['content-length']), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}');
      });
    });
    const garbled = await fakeNode(() => ({ status: 200, body: '<html>proxy error</html>' }));
    await new Promise<void>((resolve) => echoing.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(echoing.address() as { port: number }).port}`;
      const transaction = { message: 'é€😀', amount: 1 };
      await nodeClient({ order: () => [url] }).post('transactions/process', { transaction }, signal);
      assert.deepEqual(received, { type: 'application/json', length: Buffer.byteLength(JSON.stringify({ transaction })), body: { transaction } });
      const failed: string[] = [];
      const body = await nodeClient({ order: () => [garbled.url, healthy.url], onNodeFailure: (u) => failed.push(u) }).get<{ success: boolean }>('node/status', undefined, signal);
      assert.equal(body.success, true);
      assert.deepEqual(failed, [garbled.url]);
    } finally {
      echoing.close();
      garbled.server.close();
    }
  });

  test('an answer over the size limit is refused, declared or streamed', async () => {
    const big = 'x'.repeat(MAX_NODE_RESPONSE_BYTES + 1);
    const declared = await fakeNode(() => ({ status: 200, body: big }));
    const streamed = createServer((_request, response) => {
      // chunked: no content-length, so only the running count can stop it
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(big.slice(0, MAX_NODE_RESPONSE_BYTES));
      response.end('xx');
    });
    await new Promise<void>((resolve) => streamed.listen(0, '127.0.0.1', resolve));
    try {
      const streamedUrl = `http://127.0.0.1:${(streamed.address() as { port: number }).port}`;
      for (const url of [declared.url, streamedUrl]) {
        await assert.rejects(nodeClient({ order: () => [url] }).get('blocks', undefined, signal), (error: Error) => error instanceof NodeUnavailableError && /too large/.test(error.message), url);
      }
    } finally {
      declared.server.closeAllConnections();
      declared.server.close();
      streamed.closeAllConnections();
      streamed.close();
    }
  });

  test('a caller that goes away aborts the request at once, with no failover and no node blamed', async () => {
    const controller = new AbortController();
    const failed: string[] = [];
    const before = healthy.seen.length;
    const pending = nodeClient({ order: () => [silent.url, healthy.url], onNodeFailure: (u) => failed.push(u) }).get('node/status', undefined, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    controller.abort();
    await assert.rejects(pending, AbortedError);
    assert.ok(Date.now() - started < 1_000, 'rejected promptly');
    assert.deepEqual(failed, []);
    assert.equal(healthy.seen.length, before, 'no other node was asked');
  });

  test('many requests under one signal hold one abort listener on it; an abort still ends every one (a JSON-RPC batch)', async () => {
    const controller = new AbortController();
    const client = nodeClient({ order: () => [silent.url] });
    const pending = Array.from({ length: 40 }, (_, i) => client.get('blocks/get', new URLSearchParams({ id: String(i) }), controller.signal));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    controller.abort();
    const outcomes = await Promise.allSettled(pending);
    assert.ok(outcomes.every((outcome) => outcome.status === 'rejected' && outcome.reason instanceof AbortedError));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  });

  test('the shared listener goes when the last request under the signal ends, and comes back with the next one', async () => {
    const { signal: shared } = new AbortController();
    const client = nodeClient({ order: () => [healthy.url] });
    await Promise.all(Array.from({ length: 20 }, () => client.get('node/status', undefined, shared)));
    assert.equal(getEventListeners(shared, 'abort').length, 0);
    const fired: number[] = [];
    const controller = new AbortController();
    const first = onAbort(controller.signal, () => fired.push(1));
    onAbort(controller.signal, () => fired.push(2));
    first();
    first();
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    controller.abort();
    assert.deepEqual(fired, [2]);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    // On a signal already aborted, the callback runs once by itself, unless cancelled first.
    onAbort(controller.signal, () => fired.push(3));
    onAbort(controller.signal, () => fired.push(4))();
    await Promise.resolve();
    assert.deepEqual(fired, [2, 3]);
  });
});
