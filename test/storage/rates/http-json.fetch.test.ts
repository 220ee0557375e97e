// The production HttpJsonClient (storage/rates/http-json.fetch.ts) against real sockets: each transport failure
// rejects with the contract's class (src/rates/sources/source.ts), never with a message quoting the URL, and a
// connector driven by it reports a timeout as a timeout.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimulatedClock } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { fetchJsonClient, MAX_UPSTREAM_BODY_BYTES } from '../../../storage/rates/http-json.fetch.js';
import { createCoinLoreConnector } from '../../../src/rates/sources/coinlore.source.js';
import {
  SourceFetchError,
  UpstreamRequestError,
  UpstreamTimeoutError,
  type HttpJsonClient,
  type SourceContext,
} from '../../../src/rates/sources/source.js';
import { watchPromise, waitFor } from '../../support/wait.js';
import { startFakeUpstreams } from '../../rates/fakes/upstreams.js';

const KEY = 'very-secret-api-key-000';

/** No part of the request may reach a message: the query carries the key (notes E.3). */
function assertNoRequestIn(message: string, url: string): void {
  const { host, hostname, pathname } = new URL(url);
  for (const part of [url, host, hostname, pathname, KEY, 'access_key']) {
    assert.ok(!message.includes(part), `'${part}' leaks into: ${message}`);
  }
}

const noAbort = (): AbortSignal => new AbortController().signal;

/** The client as the rates tree builds it outside tests: its timeouts on the wall clock. */
const systemJsonClient = fetchJsonClient(systemClock);

/** A one-route server for the body-level failures the fake upstreams cannot stage. */
async function startRawServer(t: { after: (fn: () => Promise<void>) => void }, handler: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => handler(res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/quotes?access_key=${KEY}`;
}

test('an answer slower than timeoutMs rejects with UpstreamTimeoutError carrying timeoutMs', async (t) => {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.delaySource('CoinLore', 5_000);
  const url = `${fake.baseUrlFor('CoinLore')}/api/ticker/?id=90&access_key=${KEY}`;
  const started = Date.now();
  await assert.rejects(systemJsonClient.getJson(url, { timeoutMs: 50, signal: noAbort() }), (error: unknown) => {
    assert.ok(error instanceof UpstreamTimeoutError, `expected UpstreamTimeoutError, got ${String(error)}`);
    assert.equal(error.name, 'UpstreamTimeoutError');
    assert.equal(error.timeoutMs, 50);
    assertNoRequestIn(error.message, url);
    return true;
  });
  assert.ok(Date.now() - started < 2_000, 'the timeout must not wait for the delayed answer');
});

test('timeoutMs runs on the injected clock: a server that never answers is a timeout once that clock passes it', async (t) => {
  let arrived = 0;
  const url = await startRawServer(t, () => void arrived++);
  const clock = new SimulatedClock();
  // A minute on the wall clock: only the simulated clock can end the request within the test's cap.
  const timeoutMs = 60_000;
  const request = watchPromise(fetchJsonClient(clock).getJson(url, { timeoutMs, signal: noAbort() }), 'the request');
  await waitFor(() => arrived === 1, { what: 'the request to reach the server' });
  clock.increment(timeoutMs - 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(request.settled, false, 'still waiting short of the timeout');
  clock.increment(1);
  await assert.rejects(request.settle(), (error: unknown) => {
    assert.ok(error instanceof UpstreamTimeoutError, `expected UpstreamTimeoutError, got ${String(error)}`);
    assert.equal(error.timeoutMs, timeoutMs);
    return true;
  });
});

test('headers in time but a stalled body is a timeout too', async (t) => {
  const url = await startRawServer(t, (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"price":');
  });
  await assert.rejects(
    systemJsonClient.getJson(url, { timeoutMs: 100, signal: noAbort() }),
    (error: unknown) => error instanceof UpstreamTimeoutError && error.timeoutMs === 100,
  );
});

test('a refused port rejects with UpstreamRequestError (connection, ECONNREFUSED) and no URL in the message', async () => {
  const fake = await startFakeUpstreams();
  const url = `${fake.baseUrlFor('CoinLore')}/api/ticker/?id=90&access_key=${KEY}`;
  await fake.close();
  await assert.rejects(systemJsonClient.getJson(url, { timeoutMs: 5_000, signal: noAbort() }), (error: unknown) => {
    assert.ok(error instanceof UpstreamRequestError, `expected UpstreamRequestError, got ${String(error)}`);
    assert.equal(error.name, 'UpstreamRequestError');
    assert.equal(error.reason, 'connection');
    assert.equal(error.code, 'ECONNREFUSED');
    assertNoRequestIn(error.message, url);
    return true;
  });
});

test('a connection dropped mid-body rejects with UpstreamRequestError (connection)', async (t) => {
  const url = await startRawServer(t, (res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
    res.write('{"price":', () => res.socket?.destroy());
  });
  await assert.rejects(systemJsonClient.getJson(url, { timeoutMs: 5_000, signal: noAbort() }), (error: unknown) => {
    assert.ok(error instanceof UpstreamRequestError && error.reason === 'connection', `got ${String(error)}`);
    assertNoRequestIn(error.message, url);
    return true;
  });
});

test("the caller's abort rejects with UpstreamRequestError (aborted), without waiting for the answer", async (t) => {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.delaySource('CoinLore', 5_000);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  const started = Date.now();
  await assert.rejects(
    systemJsonClient.getJson(`${fake.baseUrlFor('CoinLore')}/api/ticker/?id=90`, { timeoutMs: 5_000, signal: controller.signal }),
    (error: unknown) => error instanceof UpstreamRequestError && error.reason === 'aborted',
  );
  assert.ok(Date.now() - started < 2_000);
});

test('a body over MAX_UPSTREAM_BODY_BYTES rejects with UpstreamRequestError (body-too-large)', async (t) => {
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  const url = await startRawServer(t, (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    // Just past the bound; the client cancels the read, so the rest may never be sent.
    for (let sent = 0; sent <= MAX_UPSTREAM_BODY_BYTES; sent += chunk.length) res.write(chunk);
    res.end('[]');
  });
  await assert.rejects(systemJsonClient.getJson(url, { timeoutMs: 10_000, signal: noAbort() }), (error: unknown) => {
    assert.ok(error instanceof UpstreamRequestError && error.reason === 'body-too-large', `got ${String(error)}`);
    assert.equal(error.limitBytes, MAX_UPSTREAM_BODY_BYTES);
    assertNoRequestIn(error.message, url);
    return true;
  });
});

test('UpstreamRequestError keeps only an identifier-shaped code, so its message cannot carry free text', () => {
  const error = new UpstreamRequestError('connection', { code: `http://127.0.0.1/?access_key=${KEY}` });
  assert.equal(error.code, undefined);
  assert.equal(error.message, 'request failed (connection error)');
  assert.equal(new UpstreamRequestError('connection', { code: 'ECONNRESET' }).message, 'request failed (ECONNRESET)');
});

test('CoinLore over the real client: a delayed upstream is reported as a timeout, a refused one as a request failure', async (t) => {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.addCoin('CoinLore', { id: '90', symbol: 'BTC', rank: 1, price: 60000 });
  const connector = createCoinLoreConnector({ enabled: true, weight: 10, url: fake.baseUrlFor('CoinLore'), coins: [], ids: { BTC: 90 } }, { decimals: 12 });
  // The connector's 10 s timeout is a constant (notes F.21); only the client's is shortened here.
  const asked: number[] = [];
  // Shortened only for the delayed answer: a first answer on a loaded machine may take more than 50 ms.
  let clientTimeoutMs = 10_000;
  const http: HttpJsonClient = {
    getJson(url, options) {
      asked.push(options.timeoutMs);
      return systemJsonClient.getJson(url, { ...options, timeoutMs: clientTimeoutMs });
    },
  };
  const ctx: SourceContext = { http, signal: noAbort(), warn: () => {} };
  assert.deepEqual(await connector.fetch(ctx), [{ pair: 'BTC/USD', price: 60000 }]);
  assert.deepEqual(asked, [10_000]);

  fake.delaySource('CoinLore', 2_000);
  clientTimeoutMs = 50;
  await assert.rejects(connector.fetch(ctx), (error: unknown) => {
    assert.ok(error instanceof SourceFetchError, `expected SourceFetchError, got ${String(error)}`);
    assert.equal(error.source, 'CoinLore');
    assert.equal(error.message, 'no answer within 50 ms');
    return true;
  });

  await fake.close();
  await assert.rejects(connector.fetch(ctx), (error: unknown) => {
    assert.ok(error instanceof SourceFetchError, `expected SourceFetchError, got ${String(error)}`);
    // ECONNREFUSED, or UND_ERR_SOCKET when the pooled keep-alive socket is the one found closed.
    assert.match(error.message, /^request failed \([A-Z_]+\)$/);
    return true;
  });
});
