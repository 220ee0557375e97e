// storage/http-client.ts against real servers on 127.0.0.1: raw node:net / node:tls servers that write exact bytes
// (so the framing, the splits and the timing are ours), node:http and node:https servers, and a child process for
// what keeps a process alive. Every failure must be an HttpExchangeError (or AbortedError) rejection whose `written`
// tells whether the request reached the socket; nothing may throw synchronously, crash or leave a promise unsettled.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';
import { SimulatedClock } from 'xstate';
import { HttpClient } from '../../storage/http-client.js';
import { HttpExchangeError, MAX_HEAD_BYTES, type HttpAnswer, type HttpClientOptions } from '../../storage/http-exchange.js';
import { CancellationSource, type Cancellation } from '../../src/cancellation.js';
import { AbortedError } from '../../src/errors.js';
import { freePort, POLYFILL } from '../support/cli.js';
import { prng } from '../support/random.js';
import { waitFor, watchPromise } from '../support/wait.js';

// This file runs as dist/test/storage/http-client.test.js; the certificate stays in the sources (test/support/tls/).
const TLS_DIR = new URL('../../../test/support/tls/', import.meta.url);
const CERT = readFileSync(new URL('localhost.cert.pem', TLS_DIR), 'utf8');
const KEY = readFileSync(new URL('localhost.key.pem', TLS_DIR), 'utf8');
/** The built client, for the child process. */
const CLIENT_MODULE = new URL('../../storage/http-client.js', import.meta.url).href;

/** A cancellation that never fires. */
const NEVER: Cancellation = new AbortController().signal;

// Whatever escapes the client: checked by the last test of the file.
const unhandled: unknown[] = [];
const warnings: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(reason));
process.on('warning', (warning) => warnings.push(`${warning.name}: ${warning.message}`));

// ---------------------------------------------------------------------------------------------
// Servers that write exact bytes.

interface RawRequest {
  /** 1-based number of the accepted connection the request came on. */
  readonly connection: number;
  /** 1-based number of the request on its connection. */
  readonly nth: number;
  readonly method: string;
  readonly target: string;
  readonly head: string;
  readonly body: Buffer;
  readonly socket: net.Socket;
}

interface RawServer {
  readonly origin: string;
  readonly requests: RawRequest[];
  /** Accepted connections, in order. */
  readonly sockets: net.Socket[];
  /** Every byte received on each connection (index = connection - 1). */
  readonly received: Buffer[][];
  readonly closed: Set<number>;
  /** The most connections open at once. */
  readonly maxOpen: number;
  /** Stops accepting connections (the open ones stay). */
  stopListening(): Promise<void>;
}

/** A net (or tls) server on 127.0.0.1 that reads requests (head, Content-Length body) and lets `handler` answer. */
async function rawServer(t: TestContext, handler: (request: RawRequest) => unknown, { secure = false } = {}): Promise<RawServer> {
  const sockets: net.Socket[] = [];
  const received: Buffer[][] = [];
  const requests: RawRequest[] = [];
  const closed = new Set<number>();
  const handlerErrors: unknown[] = [];
  let open = 0;
  const state = { maxOpen: 0 };
  const onSocket = (socket: net.Socket) => {
    const connection = sockets.push(socket);
    const bytes: Buffer[] = [];
    received.push(bytes);
    state.maxOpen = Math.max(state.maxOpen, ++open);
    socket.setNoDelay(true);
    socket.on('error', () => {});
    socket.on('close', () => (open--, closed.add(connection)));
    let buffered = Buffer.alloc(0);
    let nth = 0;
    let chain: Promise<unknown> = Promise.resolve();
    socket.on('data', (chunk: Buffer) => {
      bytes.push(chunk);
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.toString('latin1', 0, end + 4);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const body = buffered.subarray(end + 4, end + 4 + length);
        buffered = buffered.subarray(end + 4 + length);
        const [method = '', target = ''] = head.split(' ');
        const request: RawRequest = { connection, nth: ++nth, method, target, head, body, socket };
        requests.push(request);
        chain = chain.then(() => handler(request)).catch((error: unknown) => handlerErrors.push(error));
      }
    });
  };
  const server = secure ? tls.createServer({ key: KEY, cert: CERT }, onSocket) : net.createServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  // close() stops accepting at once; its callback waits for the open connections, which the after hook destroys.
  const serverClosed = new Promise<void>((resolve) => server.once('close', resolve));
  const stopListening = async () => void (server.listening && server.close());
  t.after(async () => {
    await stopListening();
    for (const socket of sockets) socket.destroy();
    await serverClosed;
    // A handler that threw answered nothing: the test would have passed or failed for the wrong reason.
    assert.deepEqual(handlerErrors, [], 'the server handler did not throw');
  });
  return {
    origin: `${secure ? 'https' : 'http'}://127.0.0.1:${port}`,
    requests,
    sockets,
    received,
    closed,
    get maxOpen() {
      return state.maxOpen;
    },
    stopListening,
  };
}

/** Writes `parts` one write each, `delayMs` apart; stops when the client has gone. */
async function writeParts(socket: net.Socket, parts: readonly Buffer[], delayMs = 1): Promise<void> {
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) await sleep(delayMs);
    if (socket.destroyed || socket.writableEnded) return;
    socket.write(parts[i]!);
  }
}

const bytewise = (bytes: Buffer): Buffer[] => Array.from(bytes, (byte) => Buffer.from([byte]));
const splitAt = (bytes: Buffer, at: number): Buffer[] => [bytes.subarray(0, at), bytes.subarray(at)];

function lengthAnswer(body: string | Buffer, { status = '200 OK', version = '1.1', headers = [] as string[] } = {}): Buffer {
  const content = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`HTTP/${version} ${status}`, ...headers, `Content-Length: ${content.length}`];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), content]);
}

type Chunk = string | readonly [data: string, extension: string];

function chunkedAnswer(chunks: readonly Chunk[], { trailers = [] as string[], status = '200 OK', headers = [] as string[], last = '0', upper = false } = {}): Buffer {
  const parts = [`HTTP/1.1 ${status}\r\n${[...headers, 'Transfer-Encoding: chunked'].join('\r\n')}\r\n\r\n`];
  for (const chunk of chunks) {
    const [data, extension] = typeof chunk === 'string' ? [chunk, ''] : chunk;
    const size = Buffer.byteLength(data).toString(16);
    parts.push(`${upper ? size.toUpperCase() : size}${extension}\r\n${data}\r\n`);
  }
  parts.push(`${last}\r\n${trailers.map((line) => `${line}\r\n`).join('')}\r\n`);
  return Buffer.from(parts.join(''));
}

// ---------------------------------------------------------------------------------------------
// The client side.

function newClient(t: TestContext, options: Partial<HttpClientOptions> = {}): HttpClient {
  const client = new HttpClient({ maxSockets: 4, idleTimeoutMs: 10_000, maxResponseBytes: 1 << 20, ...options });
  t.after(() => client.close());
  return client;
}

const get = (client: HttpClient, url: string, { timeoutMs = 5_000, signal = NEVER }: { timeoutMs?: number; signal?: Cancellation } = {}) =>
  client.request('GET', url, undefined, signal, timeoutMs);

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof Error, `rejects with an Error, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a rejection');
}

async function exchangeError(promise: Promise<unknown>, written: boolean, message?: RegExp): Promise<HttpExchangeError> {
  const error = await rejection(promise);
  assert.ok(error instanceof HttpExchangeError, `an HttpExchangeError, got ${error.name}: ${error.message}`);
  assert.equal(error.name, 'HttpExchangeError');
  assert.equal(error.written, written, `written for '${error.message}'`);
  if (message) assert.match(error.message, message);
  return error;
}

async function aborted(promise: Promise<unknown>): Promise<void> {
  const error = await rejection(promise);
  assert.ok(error instanceof AbortedError, `an AbortedError, got ${error.name}: ${error.message}`);
  assert.equal(error.name, 'AbortError');
}

const text = (answer: HttpAnswer) => answer.body.toString('utf8');

// ---------------------------------------------------------------------------------------------
// 1. Framing.

const JSON_BODY = '{"success":true,"nodeTimestamp":232456789,"message":"Grüße ✓ — 💎","list":[1,2,3]}';

interface Framing {
  readonly name: string;
  readonly answer: Buffer;
  readonly status: number;
  readonly body: string;
  /** The server closes its side after the answer (the answer is framed by the close). */
  readonly endAfter?: boolean;
  /** The client may send the next request on the same connection. */
  readonly reusable: boolean;
}

const FRAMINGS: readonly Framing[] = [
  { name: 'Content-Length', answer: lengthAnswer(JSON_BODY, { headers: ['Content-Type: application/json; charset=utf-8'] }), status: 200, body: JSON_BODY, reusable: true },
  { name: 'Content-Length: 0', answer: lengthAnswer(''), status: 200, body: '', reusable: true },
  {
    name: 'the same Content-Length twice, odd header case, no space after the colon',
    answer: Buffer.from('HTTP/1.1 200 OK\r\ncontent-length:2\r\nCONTENT-LENGTH:   2  \r\nX-Empty:\r\n\r\n{}'),
    status: 200,
    body: '{}',
    reusable: true,
  },
  { name: 'a 404 with a body (an answer, not a failure)', answer: lengthAnswer('{"success":false}', { status: '404 Not Found' }), status: 404, body: '{"success":false}', reusable: true },
  { name: 'a status line without a reason phrase', answer: Buffer.from('HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n{}'), status: 200, body: '{}', reusable: true },
  {
    name: 'chunked with extensions and trailers',
    answer: chunkedAnswer([[JSON_BODY.slice(0, 7), ';ext=1'], [JSON_BODY.slice(7, 40), ' ; name="quoted;value"'], JSON_BODY.slice(40)], {
      trailers: ['X-Checksum: abc', 'X-Other: 2'],
      last: '0;last=yes',
      upper: true,
    }),
    status: 200,
    body: JSON_BODY,
    reusable: true,
  },
  {
    name: 'chunked in one-byte chunks, Transfer-Encoding in capitals, leading zeros, no trailers',
    answer: Buffer.from(
      `HTTP/1.1 200 OK\r\ntransfer-encoding:  CHUNKED \r\n\r\n${[...'{"a":[1,2]}'].map((c) => `001\r\n${c}\r\n`).join('')}000\r\n\r\n`,
    ),
    status: 200,
    body: '{"a":[1,2]}',
    reusable: true,
  },
  { name: 'close-delimited (no length, then close)', answer: Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n${JSON_BODY}`), status: 200, body: JSON_BODY, endAfter: true, reusable: false },
  { name: 'HTTP/1.0 with Content-Length (closed: no keep-alive)', answer: lengthAnswer(JSON_BODY, { version: '1.0' }), status: 200, body: JSON_BODY, reusable: false },
  { name: 'HTTP/1.0 with Connection: Keep-Alive', answer: lengthAnswer(JSON_BODY, { version: '1.0', headers: ['Connection: Keep-Alive'] }), status: 200, body: JSON_BODY, reusable: true },
  { name: 'HTTP/1.0 close-delimited', answer: Buffer.from(`HTTP/1.0 200 OK\r\n\r\n${JSON_BODY}`), status: 200, body: JSON_BODY, endAfter: true, reusable: false },
  { name: 'HTTP/1.1 with Connection: close', answer: lengthAnswer(JSON_BODY, { headers: ['Connection: keep-alive, close'] }), status: 200, body: JSON_BODY, reusable: false },
  { name: '204 without a body', answer: Buffer.from('HTTP/1.1 204 No Content\r\nX-Request-Id: 7\r\n\r\n'), status: 204, body: '', reusable: true },
  { name: '304 with a Content-Length and no body', answer: Buffer.from('HTTP/1.1 304 Not Modified\r\nETag: "v1"\r\nContent-Length: 1234\r\n\r\n'), status: 304, body: '', reusable: true },
  { name: '100 Continue before the answer', answer: Buffer.concat([Buffer.from('HTTP/1.1 100 Continue\r\n\r\n'), lengthAnswer(JSON_BODY)]), status: 200, body: JSON_BODY, reusable: true },
  {
    name: '103 and 102 heads with headers before a chunked 201',
    answer: Buffer.concat([
      Buffer.from('HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 102 Processing\r\n\r\n'),
      chunkedAnswer([JSON_BODY.slice(0, 30), JSON_BODY.slice(30)], { status: '201 Created' }),
    ]),
    status: 201,
    body: JSON_BODY,
    reusable: true,
  },
];

/** A server answering every request with `framing`, delivered as the request's target says (/whole, /bytes, /split/N). */
function framingServer(t: TestContext, framing: Framing) {
  return rawServer(t, async ({ socket, target }) => {
    const [, mode, at] = target.split('/');
    const parts = mode === 'bytes' ? bytewise(framing.answer) : mode === 'split' ? splitAt(framing.answer, Number(at)) : [framing.answer];
    await writeParts(socket, parts, 1);
    if (framing.endAfter) socket.end();
  });
}

function assertAnswer(answer: HttpAnswer, framing: Framing): void {
  assert.equal(answer.status, framing.status);
  assert.ok(Buffer.isBuffer(answer.body));
  assert.equal(text(answer), framing.body);
}

describe('framing', { concurrency: true }, () => {
  for (const framing of FRAMINGS) {
    for (const mode of ['whole', 'bytes'] as const) {
      test(`${framing.name}, ${mode === 'whole' ? 'in one write' : 'one byte per write'}: answered twice, the connection ${framing.reusable ? 'reused' : 'not reused'}`, async (t) => {
        const server = await framingServer(t, framing);
        const client = newClient(t);
        assertAnswer(await get(client, `${server.origin}/${mode}`), framing);
        assertAnswer(await get(client, `${server.origin}/${mode}`), framing);
        assert.equal(server.sockets.length, framing.reusable ? 1 : 2, 'connections accepted');
        assert.equal(server.requests.length, 2);
        // A connection the client will not reuse is closed by the client, not left open.
        if (!framing.reusable) await waitFor(() => server.closed.has(1), { what: 'the first connection closed' });
        else assert.ok(!server.closed.has(1), 'the reused connection is open');
      });
    }

    test(`${framing.name}, split in two at every byte (inside CRLFs, chunk-size lines, heads)`, async (t) => {
      const server = await framingServer(t, framing);
      const client = newClient(t);
      const splits = framing.answer.length - 1;
      for (let at = 1; at <= splits; at++) assertAnswer(await get(client, `${server.origin}/split/${at}`), framing);
      assert.equal(server.requests.length, splits);
      assert.equal(server.sockets.length, framing.reusable ? 1 : splits, 'connections accepted');
    });
  }
});

// ---------------------------------------------------------------------------------------------
// 2. Keep-alive.

describe('keep-alive', () => {
  test('sequential requests to a node:http server use one connection, whatever the framing', async (t) => {
    let connections = 0;
    const server = http.createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        const answer = JSON.stringify({ method: request.method, url: request.url, body });
        // Even requests get a Content-Length, odd ones node's chunked coding in two writes.
        if (Number(request.url!.split('/').pop()) % 2 === 0) response.writeHead(200, { 'content-type': 'application/json' }).end(answer);
        else response.write(answer.slice(0, 5)), response.end(answer.slice(5));
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => (server.closeAllConnections(), server.close()));
    const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const client = newClient(t);
    for (let i = 0; i < 10; i++) {
      const body = i % 3 === 0 ? JSON.stringify({ i, note: 'ü' }) : undefined;
      const answer = await client.request(body === undefined ? 'GET' : 'POST', `${origin}/api/n/${i}`, body, NEVER, 5_000);
      assert.equal(answer.status, 200);
      assert.deepEqual(JSON.parse(text(answer)), { method: body === undefined ? 'GET' : 'POST', url: `/api/n/${i}`, body: body ?? '' });
    }
    assert.equal(connections, 1);
  });

  test('an answer with Connection: close from node:http makes the next request open a new connection', async (t) => {
    let connections = 0;
    const server = http.createServer((request, response) => {
      if (request.url === '/last') response.setHeader('connection', 'close');
      response.end(`"${request.url}"`);
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => (server.closeAllConnections(), server.close()));
    const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    const client = newClient(t);
    assert.equal(text(await get(client, `${origin}/a`)), '"/a"');
    assert.equal(text(await get(client, `${origin}/last`)), '"/last"');
    assert.equal(text(await get(client, `${origin}/b`)), '"/b"');
    assert.equal(text(await get(client, `${origin}/c`)), '"/c"');
    assert.equal(connections, 2);
  });

  test('extra bytes after the answer, in the same write: the answer is taken, the connection is not reused', async (t) => {
    const server = await rawServer(t, ({ socket, connection }) => socket.write(Buffer.concat([lengthAnswer(`{"c":${connection}}`), lengthAnswer('{"smuggled":true}')])));
    const client = newClient(t);
    assert.equal(text(await get(client, `${server.origin}/a`)), '{"c":1}');
    assert.equal(text(await get(client, `${server.origin}/b`)), '{"c":2}');
    assert.equal(server.sockets.length, 2);
    await waitFor(() => server.closed.has(1), { what: 'the client closed the first connection' });
  });

  test('extra bytes after the answer, later, while the connection is idle: the connection is not reused', async (t) => {
    const server = await rawServer(t, async ({ socket, connection }) => {
      socket.write(lengthAnswer(`{"c":${connection}}`));
      await sleep(20);
      socket.write('HTTP/1.1 200 OK\r\n');
    });
    const client = newClient(t);
    assert.equal(text(await get(client, `${server.origin}/a`)), '{"c":1}');
    await waitFor(() => server.closed.has(1), { what: 'the client closed the connection that spoke out of turn' });
    assert.equal(text(await get(client, `${server.origin}/b`)), '{"c":2}');
    assert.equal(server.sockets.length, 2);
  });

  test('one pool per origin: two servers, each one connection', async (t) => {
    const one = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('1')));
    const two = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('2')));
    const client = newClient(t);
    for (let i = 0; i < 3; i++) {
      assert.equal(text(await get(client, `${one.origin}/`)), '1');
      assert.equal(text(await get(client, `${two.origin}/`)), '2');
    }
    assert.deepEqual([one.sockets.length, two.sockets.length], [1, 1]);
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Broken answers.

const MAX_BODY = 1024;

interface Broken {
  readonly name: string;
  readonly answer: Buffer;
  readonly message: RegExp;
  /** The server closes its side after writing; otherwise it keeps the connection open (the client must give up). */
  readonly endAfter?: boolean;
  /** Also delivered one byte per write (not for the long ones). */
  readonly bytewise?: false;
}

const head = (lines: string) => Buffer.from(`${lines}\r\n\r\n`);
const NOT_HTTP = /not HTTP/;
const BAD_HEADER = /malformed header/;
const BAD_LENGTH = /invalid Content-Length/;
const BAD_CODING = /unsupported Transfer-Encoding/;
const BAD_CHUNKS = /malformed chunked/;
const TOO_LARGE = /too large/;
const CUT = /closed before the whole answer/;

const BROKEN: readonly Broken[] = [
  { name: 'status line without a status code', answer: head('HTTP/1.1 OK\r\nContent-Length: 0'), message: NOT_HTTP },
  { name: 'status code of four digits', answer: head('HTTP/1.1 2000 OK\r\nContent-Length: 0'), message: NOT_HTTP },
  { name: 'status code not followed by a space', answer: head('HTTP/1.1 200OK\r\nContent-Length: 0'), message: NOT_HTTP },
  { name: 'HTTP/2 status line', answer: head('HTTP/2 200'), message: NOT_HTTP },
  { name: 'HTTP/1.2 status line', answer: head('HTTP/1.2 200 OK'), message: NOT_HTTP },
  { name: 'lower-case protocol name', answer: head('http/1.1 200 OK\r\nContent-Length: 0'), message: NOT_HTTP },
  { name: 'not HTTP at all', answer: head('SSH-2.0-OpenSSH_9.6'), message: NOT_HTTP },
  { name: 'header line without a colon', answer: head('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nno colon here'), message: BAD_HEADER },
  { name: 'header line with an empty name', answer: head('HTTP/1.1 200 OK\r\n: value\r\nContent-Length: 2'), message: BAD_HEADER },
  { name: 'folded header line (obsolete line folding)', answer: head('HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\nContent-Length: 0'), message: BAD_HEADER },
  { name: 'Content-Length not a number', answer: head('HTTP/1.1 200 OK\r\nContent-Length: abc'), message: BAD_LENGTH },
  { name: 'Content-Length negative', answer: head('HTTP/1.1 200 OK\r\nContent-Length: -1'), message: BAD_LENGTH },
  { name: 'Content-Length with a sign', answer: head('HTTP/1.1 200 OK\r\nContent-Length: +2'), message: BAD_LENGTH },
  { name: 'Content-Length in hex', answer: head('HTTP/1.1 200 OK\r\nContent-Length: 0x10'), message: BAD_LENGTH },
  { name: 'Content-Length with a fraction', answer: head('HTTP/1.1 200 OK\r\nContent-Length: 1.5'), message: BAD_LENGTH },
  { name: 'Content-Length empty', answer: head('HTTP/1.1 200 OK\r\nContent-Length:'), message: BAD_LENGTH },
  { name: 'Content-Length of 16 digits', answer: head('HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456'), message: BAD_LENGTH },
  { name: 'two different Content-Lengths', answer: head('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3'), message: BAD_LENGTH },
  { name: 'Transfer-Encoding: gzip', answer: head('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip'), message: BAD_CODING },
  { name: 'Transfer-Encoding: chunked, gzip (chunked not last)', answer: head('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip'), message: BAD_CODING },
  { name: 'Transfer-Encoding: gzip, chunked (a coding nobody asked for)', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'), message: BAD_CODING },
  { name: 'Transfer-Encoding: identity', answer: head('HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2'), message: BAD_CODING },
  { name: 'chunk size not hex', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n'), message: BAD_CHUNKS },
  { name: 'negative chunk size', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n'), message: BAD_CHUNKS },
  { name: 'empty chunk-size line', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n{}\r\n'), message: BAD_CHUNKS },
  { name: 'chunk data longer than its size', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}}\r\n0\r\n\r\n'), message: BAD_CHUNKS },
  { name: 'chunk size of 13 hex digits', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0000000000002\r\n{}\r\n'), message: BAD_CHUNKS },
  {
    name: 'chunk-size line over 4 KiB without its end',
    answer: Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;${'x'.repeat(5000)}`),
    message: BAD_CHUNKS,
    bytewise: false,
  },
  { name: `head over MAX_HEAD_BYTES without its end`, answer: Buffer.from(`HTTP/1.1 200 OK\r\nX-Big: ${'a'.repeat(MAX_HEAD_BYTES)}`), message: /head is too large/, bytewise: false },
  {
    name: `head over MAX_HEAD_BYTES ending in the same read`,
    answer: lengthAnswer('{}', { headers: [`X-Big: ${'a'.repeat(MAX_HEAD_BYTES)}`] }),
    message: /head is too large/,
    bytewise: false,
  },
  { name: 'declared body over maxResponseBytes', answer: lengthAnswer('x'.repeat(MAX_BODY + 1)), message: TOO_LARGE },
  { name: 'chunked body growing over maxResponseBytes', answer: chunkedAnswer(['x'.repeat(600), 'y'.repeat(600)]), message: TOO_LARGE },
  { name: 'close-delimited body over maxResponseBytes', answer: Buffer.from(`HTTP/1.1 200 OK\r\n\r\n${'x'.repeat(MAX_BODY + 100)}`), message: TOO_LARGE, bytewise: false },
  { name: 'body cut short by the close (Content-Length)', answer: lengthAnswer(JSON_BODY).subarray(0, -5), message: CUT, endAfter: true },
  { name: 'chunked body cut inside a chunk', answer: chunkedAnswer([JSON_BODY]).subarray(0, 80), message: CUT, endAfter: true },
  { name: 'chunked body cut inside a chunk-size line', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n1'), message: CUT, endAfter: true },
  { name: 'chunked body cut before the last chunk', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n'), message: CUT, endAfter: true },
  { name: 'chunked body cut inside the trailers', answer: Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1\r\n'), message: CUT, endAfter: true },
  { name: 'head cut short by the close', answer: Buffer.from('HTTP/1.1 200 OK\r\nContent-Le'), message: CUT, endAfter: true },
  { name: '100 Continue, then the close', answer: head('HTTP/1.1 100 Continue'), message: CUT, endAfter: true },
  { name: 'closed without any answer', answer: Buffer.alloc(0), message: /closed without an answer/, endAfter: true },
];

describe('broken answers reject with HttpExchangeError, written=true', { concurrency: true }, () => {
  for (const broken of BROKEN) {
    for (const mode of broken.bytewise === false ? (['whole'] as const) : (['whole', 'bytes'] as const)) {
      test(`${broken.name}${mode === 'bytes' ? ', one byte per write' : ''}`, async (t) => {
        const server = await rawServer(t, async ({ socket }) => {
          await writeParts(socket, mode === 'bytes' ? bytewise(broken.answer) : [broken.answer], 1);
          if (broken.endAfter) socket.end();
        });
        const client = newClient(t, { maxResponseBytes: MAX_BODY });
        // A long timeout: the failure must come from the answer, not from the clock.
        const error = await exchangeError(get(client, `${server.origin}/`, { timeoutMs: 20_000 }), true, broken.message);
        assert.doesNotMatch(error.message, /timed out/);
        await waitFor(() => server.closed.has(1), { what: 'the connection closed' });
        // The next request works on a new connection.
        assert.equal(server.requests.length, 1);
      });
    }
  }

  test('a body of exactly maxResponseBytes is accepted (declared, chunked and close-delimited)', async (t) => {
    const body = 'z'.repeat(MAX_BODY);
    const answers = [lengthAnswer(body), chunkedAnswer([body.slice(0, 100), body.slice(100)]), Buffer.from(`HTTP/1.1 200 OK\r\n\r\n${body}`)];
    const server = await rawServer(t, ({ socket, target }) => {
      const i = Number(target.slice(1));
      socket.write(answers[i]!);
      if (i === 2) socket.end();
    });
    const client = newClient(t, { maxResponseBytes: MAX_BODY });
    for (let i = 0; i < answers.length; i++) assert.equal(text(await get(client, `${server.origin}/${i}`)), body);
  });

  test('a connection reset without an answer', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.resetAndDestroy());
    const client = newClient(t);
    await exchangeError(get(client, `${server.origin}/`), true);
  });
});

describe('failures before the request is written: written=false', () => {
  test('a refused connection (a closed port)', async (t) => {
    const client = newClient(t);
    const port = await freePort();
    await exchangeError(get(client, `http://127.0.0.1:${port}/api/peers`), false, /ECONNREFUSED/);
    await exchangeError(client.request('POST', `http://127.0.0.1:${port}/api/transactions`, '{}', NEVER, 5_000), false, /ECONNREFUSED/);
  });

  test('invalid URLs and unsupported protocols reject (never throw), without a connection', async (t) => {
    const client = newClient(t);
    const urls = ['', 'not a url', '127.0.0.1:80/x', '//127.0.0.1/x', 'http://', 'http://[::1/x', 'http://127.0.0.1:99999/', 'ftp://127.0.0.1/x', 'ws://127.0.0.1/', 'file:///etc/passwd', 'mailto:a@b.c'];
    for (const url of urls) {
      let promise: Promise<HttpAnswer> | undefined;
      assert.doesNotThrow(() => (promise = get(client, url)), `request('${url}') does not throw`);
      await exchangeError(promise!, false);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 4. Stale connections: the server closes a connection the client kept.

describe('stale kept connections', () => {
  test('the server closed an idle connection and the client noticed: the next GET opens a new one', async (t) => {
    const server = await rawServer(t, async ({ socket, connection }) => {
      socket.write(lengthAnswer(`{"c":${connection}}`));
      await sleep(20);
      socket.end();
    });
    const client = newClient(t);
    assert.equal(text(await get(client, `${server.origin}/a`)), '{"c":1}');
    await waitFor(() => server.closed.has(1), { what: 'the idle close' });
    await sleep(20);
    assert.equal(text(await get(client, `${server.origin}/b`)), '{"c":2}');
    assert.deepEqual(
      server.requests.map((r) => [r.connection, r.target]),
      [
        [1, '/a'],
        [2, '/b'],
      ],
    );
  });

  // The race the retry exists for: the server's idle close crosses the client's next request on the wire. Closing
  // when the second request arrives on a connection reproduces it exactly.
  for (const [how, close] of [
    ['closes (FIN)', (socket: net.Socket) => socket.destroy()],
    ['resets (RST)', (socket: net.Socket) => socket.resetAndDestroy()],
  ] as const) {
    // resetAndDestroy() needs a TCP handle: a TLS socket cannot send a reset, so the RST case runs over plain TCP only.
    for (const secure of how === 'resets (RST)' ? [false] : [false, true]) {
      for (const maxSockets of [1, 4]) {
        test(`a GET on a reused connection the server ${how} before answering is retried once on a new connection (${secure ? 'https' : 'http'}, maxSockets ${maxSockets})`, async (t) => {
          const server = await rawServer(t, ({ socket, connection, nth }) => (nth === 1 ? socket.write(lengthAnswer(`{"c":${connection}}`)) : close(socket)), { secure });
          const client = newClient(t, { maxSockets, ca: CERT });
          assert.equal(text(await get(client, `${server.origin}/a`)), '{"c":1}');
          assert.equal(text(await get(client, `${server.origin}/b`)), '{"c":2}');
          assert.deepEqual(
            server.requests.map((r) => [r.connection, r.target]),
            [
              [1, '/a'],
              [1, '/b'],
              [2, '/b'],
            ],
            'answered once, on the new connection',
          );
        });
      }
    }
  }

  test('a retried GET that fails again is not retried a second time', async (t) => {
    const server = await rawServer(t, ({ socket, connection, nth }) => (connection === 1 && nth === 1 ? socket.write(lengthAnswer('{}')) : socket.destroy()));
    const client = newClient(t);
    await get(client, `${server.origin}/a`);
    await exchangeError(get(client, `${server.origin}/b`), true);
    await sleep(30);
    assert.deepEqual(
      server.requests.map((r) => [r.connection, r.target]),
      [
        [1, '/a'],
        [1, '/b'],
        [2, '/b'],
      ],
    );
  });

  test('a retried GET whose new connection is refused still reports written=true (the first connection got it)', async (t) => {
    const server = await rawServer(t, ({ socket, nth }) => (nth === 1 ? socket.write(lengthAnswer('{}')) : socket.destroy()));
    const client = newClient(t);
    await get(client, `${server.origin}/a`);
    await server.stopListening();
    await exchangeError(get(client, `${server.origin}/b`), true);
    assert.deepEqual(
      server.requests.map((r) => [r.connection, r.target]),
      [
        [1, '/a'],
        [1, '/b'],
      ],
    );
  });

  test('a POST in the same situation rejects with written=true and is not sent again', async (t) => {
    const server = await rawServer(t, ({ socket, nth }) => (nth === 1 ? socket.write(lengthAnswer('{}')) : socket.destroy()));
    const client = newClient(t);
    await get(client, `${server.origin}/a`);
    await exchangeError(client.request('POST', `${server.origin}/api/transactions/process`, '{"tx":1}', NEVER, 5_000), true);
    // Whatever comes next goes on a new connection; the POST never shows up again.
    await get(client, `${server.origin}/c`);
    await sleep(30);
    assert.deepEqual(
      server.requests.map((r) => [r.connection, r.method, r.target]),
      [
        [1, 'GET', '/a'],
        [1, 'POST', '/api/transactions/process'],
        [2, 'GET', '/c'],
      ],
    );
  });

  test('a GET on a reused connection closed after part of the answer is not retried', async (t) => {
    const server = await rawServer(t, ({ socket, nth }) => (nth === 1 ? socket.write(lengthAnswer('{}')) : (socket.write('HTTP/1.1 200 OK\r\nContent-Len'), socket.destroy())));
    const client = newClient(t);
    await get(client, `${server.origin}/a`);
    await exchangeError(get(client, `${server.origin}/b`), true, CUT);
    await sleep(30);
    assert.equal(server.sockets.length, 1);
    assert.equal(server.requests.length, 2);
  });
});

// ---------------------------------------------------------------------------------------------
// 5. Idle connections.

describe('idle connections', () => {
  test('an idle connection is closed after idleTimeoutMs; the next request opens a new one', async (t) => {
    const server = await rawServer(t, ({ socket, connection }) => socket.write(lengthAnswer(`{"c":${connection}}`)));
    const client = newClient(t, { idleTimeoutMs: 100 });
    assert.equal(text(await get(client, `${server.origin}/a`)), '{"c":1}');
    const idleSince = Date.now();
    await waitFor(() => server.closed.has(1), { timeoutMs: 3_000, what: 'the client closed the idle connection' });
    assert.ok(Date.now() - idleSince >= 80, `closed after ${Date.now() - idleSince} ms, not before the idle timeout`);
    assert.equal(text(await get(client, `${server.origin}/b`)), '{"c":2}');
  });

  test('a connection used again before idleTimeoutMs stays open, and a slow answer is not cut by the idle timer', async (t) => {
    const server = await rawServer(t, async ({ socket, target }) => {
      if (target === '/slow') await sleep(400);
      socket.write(lengthAnswer(`"${target}"`));
    });
    const client = newClient(t, { idleTimeoutMs: 200 });
    for (let i = 0; i < 5; i++) {
      assert.equal(text(await get(client, `${server.origin}/${i}`)), `"/${i}"`);
      await sleep(40);
    }
    assert.equal(text(await get(client, `${server.origin}/slow`)), '"/slow"');
    assert.equal(server.sockets.length, 1);
  });

  test('idle connections (http and https) do not keep the process alive', async (t) => {
    // Servers that never close a connection: only the client's unref lets the child exit.
    const plain = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{"plain":1}')));
    const secure = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{"secure":1}')), { secure: true });
    const script = `
      const { HttpClient } = await import(${JSON.stringify(CLIENT_MODULE)});
      const client = new HttpClient({ maxSockets: 2, idleTimeoutMs: 60000, maxResponseBytes: 65536, ca: ${JSON.stringify(CERT)} });
      const signal = new AbortController().signal;
      const a = await client.request('GET', ${JSON.stringify(`${plain.origin}/`)}, undefined, signal, 5000);
      const b = await client.request('GET', ${JSON.stringify(`${secure.origin}/`)}, undefined, signal, 5000);
      console.log(JSON.stringify([a.status, a.body.toString(), b.status, b.body.toString()]));
    `;
    const child = spawn(process.execPath, ['--import', POLYFILL, '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    t.after(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exit = await new Promise<number | null | 'still running'>((resolve) => {
      const timer = setTimeout(() => resolve('still running'), 5_000);
      child.once('exit', (code) => (clearTimeout(timer), resolve(code)));
    });
    assert.notEqual(exit, 'still running', 'the child exits by itself with idle connections open');
    assert.equal(exit, 0, stderr);
    assert.deepEqual(JSON.parse(stdout), [200, '{"plain":1}', 200, '{"secure":1}']);
    assert.deepEqual([plain.sockets.length, secure.sockets.length], [1, 1]);
  });
});

// ---------------------------------------------------------------------------------------------
// 6. Timeouts. (A connect that hangs is not tested: on loopback a connect to a listening port completes at once and
// one to a closed port is refused at once; a hanging connect needs a blackholed address, i.e. a network beyond
// loopback.)

describe('timeouts', () => {
  test('a server that never answers: rejects after about timeoutMs, written=true, and the connection is closed', async (t) => {
    const server = await rawServer(t, () => {});
    const client = newClient(t);
    const started = Date.now();
    await exchangeError(get(client, `${server.origin}/`, { timeoutMs: 150 }), true, /timed out/);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 140 && elapsed < 2_000, `rejected after ${elapsed} ms`);
    await waitFor(() => server.closed.has(1), { what: 'the client closed the silent connection' });
  });

  test('an answer that stops half way: rejects with the timeout, written=true', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer(JSON_BODY).subarray(0, 50)));
    const client = newClient(t);
    await exchangeError(get(client, `${server.origin}/`, { timeoutMs: 150 }), true, /timed out/);
  });

  test('a silent server on a reused connection: the GET times out once (not retried on a new connection)', async (t) => {
    const server = await rawServer(t, ({ socket, nth }) => nth === 1 && socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    await get(client, `${server.origin}/a`);
    await exchangeError(get(client, `${server.origin}/b`, { timeoutMs: 200 }), true, /timed out/);
    await sleep(50);
    assert.equal(server.requests.filter((r) => r.target === '/b').length, 1, 'the server saw the GET once');
    assert.equal(server.sockets.length, 1, 'no second connection');
  });

  test('a slow answer within the timeout is taken', async (t) => {
    const server = await rawServer(t, async ({ socket }) => {
      await sleep(100);
      socket.write(lengthAnswer('{"slow":true}'));
    });
    const client = newClient(t);
    assert.equal(text(await get(client, `${server.origin}/`, { timeoutMs: 2_000 })), '{"slow":true}');
  });
});

// ---------------------------------------------------------------------------------------------
// 7. Cancellation.

describe('abort', () => {
  test('an already-aborted AbortSignal or CancellationSource rejects with AbortedError without connecting', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    const controller = new AbortController();
    controller.abort();
    const source = new CancellationSource();
    source.cancel('gone');
    await aborted(get(client, `${server.origin}/a`, { signal: controller.signal }));
    await aborted(get(client, `${server.origin}/b`, { signal: source }));
    await aborted(client.request('POST', `${server.origin}/c`, '{}', source, 5_000));
    await get(client, `${server.origin}/d`);
    assert.deepEqual(
      server.requests.map((r) => r.target),
      ['/d'],
    );
    assert.equal(server.sockets.length, 1);
  });

  for (const kind of ['AbortSignal', 'CancellationSource'] as const) {
    test(`aborting mid-exchange (${kind}) rejects with AbortedError and the connection is not reused`, async (t) => {
      const server = await rawServer(t, ({ socket, target, connection }) => target !== '/hang' && socket.write(lengthAnswer(`{"c":${connection}}`)));
      const client = newClient(t);
      assert.equal(text(await get(client, `${server.origin}/a`)), '{"c":1}');
      const controller = new AbortController();
      const source = new CancellationSource();
      const pending = get(client, `${server.origin}/hang`, { signal: kind === 'AbortSignal' ? controller.signal : source });
      await waitFor(() => server.requests.some((r) => r.target === '/hang'), { what: 'the request reached the server' });
      if (kind === 'AbortSignal') controller.abort();
      else source.cancel('client went away');
      await aborted(pending);
      await waitFor(() => server.closed.has(1), { what: 'the aborted connection closed' });
      assert.equal(text(await get(client, `${server.origin}/b`)), '{"c":2}');
      if (kind === 'AbortSignal') assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    });
  }

  test('aborting in the same tick as the request (while connecting) rejects with AbortedError, nothing is sent', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    const controller = new AbortController();
    const pending = get(client, `${server.origin}/a`, { signal: controller.signal });
    controller.abort();
    await aborted(pending);
    await sleep(30);
    assert.equal(server.requests.length, 0);
  });

  test('aborting after the answer changes nothing: the connection is reused and no listener is left', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    const controller = new AbortController();
    const source = new CancellationSource();
    await get(client, `${server.origin}/a`, { signal: controller.signal });
    await get(client, `${server.origin}/b`, { signal: source });
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    controller.abort();
    source.cancel('late');
    await get(client, `${server.origin}/c`);
    assert.equal(server.sockets.length, 1);
  });

  test('many exchanges under one AbortSignal share one listener, and all reject when it aborts', async (t) => {
    const server = await rawServer(t, () => {});
    const client = newClient(t, { maxSockets: 8 });
    const controller = new AbortController();
    const pending = Array.from({ length: 24 }, (_, i) => get(client, `${server.origin}/${i}`, { signal: controller.signal }));
    await waitFor(() => server.requests.length === 8, { what: 'eight requests in flight' });
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    controller.abort();
    for (const request of pending) await aborted(request);
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
    assert.equal(server.requests.length, 8, 'queued requests were never sent');
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      [],
    );
  });
});

// ---------------------------------------------------------------------------------------------
// 8. maxSockets and the queue.

describe('maxSockets', () => {
  test('six concurrent requests with maxSockets 2: at most two connections, all six answered', async (t) => {
    const server = await rawServer(t, async ({ socket, target }) => {
      await sleep(60);
      socket.write(lengthAnswer(`"${target}"`));
    });
    const client = newClient(t, { maxSockets: 2 });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => get(client, `${server.origin}/${i}`)));
    assert.deepEqual(
      answers.map(text),
      Array.from({ length: 6 }, (_, i) => `"/${i}"`),
    );
    assert.equal(server.maxOpen, 2);
    assert.equal(server.sockets.length, 2);
  });

  for (const kind of ['AbortSignal', 'CancellationSource'] as const) {
    test(`an aborted queued request (${kind}) is dropped from the queue at once`, async (t) => {
      const server = await rawServer(t, async ({ socket, target }) => {
        await sleep(150);
        socket.write(lengthAnswer(`"${target}"`));
      });
      const client = newClient(t, { maxSockets: 1 });
      const controller = new AbortController();
      const source = new CancellationSource();
      let firstDone = false;
      const first = get(client, `${server.origin}/1`).then((answer) => ((firstDone = true), answer));
      const second = get(client, `${server.origin}/2`, { signal: kind === 'AbortSignal' ? controller.signal : source });
      const third = get(client, `${server.origin}/3`);
      await sleep(10);
      if (kind === 'AbortSignal') controller.abort();
      else source.cancel('gone');
      await aborted(second);
      assert.equal(firstDone, false, 'rejected while the connection was still busy');
      assert.equal(text(await first), '"/1"');
      assert.equal(text(await third), '"/3"');
      assert.deepEqual(
        server.requests.map((r) => r.target),
        ['/1', '/3'],
      );
      assert.equal(server.sockets.length, 1);
    });
  }

  test('the timeout counts from the request: a queued request times out on time though no connection took it', async (t) => {
    const server = await rawServer(t, () => {}); // never answers
    const client = newClient(t, { maxSockets: 1 });
    const busy = get(client, `${server.origin}/busy`, { timeoutMs: 1_000 });
    const started = performance.now();
    const queued = get(client, `${server.origin}/queued`, { timeoutMs: 200 });
    await exchangeError(queued, false, /timed out after 200 ms \(waiting for a connection\)/);
    const waited = performance.now() - started;
    assert.ok(waited >= 190 && waited < 800, `rejected after ${Math.round(waited)} ms`);
    await exchangeError(busy, true, /timed out after 1000 ms/);
    assert.deepEqual(
      server.requests.map((r) => r.target),
      ['/busy'],
    );
  });

  test('deadlines run on the injected clock: a busy and a queued request time out when the clock says so', async (t) => {
    const server = await rawServer(t, () => {}); // never answers
    const clock = new SimulatedClock();
    const client = newClient(t, { maxSockets: 1, clock });
    const busy = watchPromise(get(client, `${server.origin}/busy`, { timeoutMs: 60_000 }), 'the busy request');
    const queued = watchPromise(get(client, `${server.origin}/queued`, { timeoutMs: 30_000 }), 'the queued request');
    await waitFor(() => server.requests.length === 1, { what: 'the first request at the server' });
    clock.increment(29_999);
    await sleep(20);
    assert.deepEqual([busy.settled, queued.settled], [false, false], 'nothing timed out before its time on the clock');
    clock.increment(1);
    await exchangeError(queued.settle(), false, /timed out after 30000 ms \(waiting for a connection\)/);
    assert.equal(busy.settled, false);
    clock.increment(30_000);
    await exchangeError(busy.settle(), true, /timed out after 60000 ms/);
  });

  test('a queued request goes on a new connection when the busy one fails', async (t) => {
    const server = await rawServer(t, ({ socket, target }) => (target === '/fail' ? socket.destroy() : socket.write(lengthAnswer(`"${target}"`))));
    const client = newClient(t, { maxSockets: 1 });
    const failing = get(client, `${server.origin}/fail`);
    const queued = get(client, `${server.origin}/ok`);
    await exchangeError(failing, true);
    assert.equal(text(await queued), '"/ok"');
    assert.equal(server.sockets.length, 2);
  });

  test('close() rejects in-flight and queued requests and opens no new connection', async (t) => {
    const server = await rawServer(t, ({ socket, target }) => target === '/a' && socket.write(lengthAnswer('{}')));
    const client = newClient(t, { maxSockets: 1 });
    await get(client, `${server.origin}/a`);
    const inFlight = get(client, `${server.origin}/hang`);
    const queued = get(client, `${server.origin}/queued`);
    await waitFor(() => server.requests.length === 2, { what: 'the request in flight' });
    client.close();
    const failures = [exchangeError(inFlight, true, /connection closed/), exchangeError(queued, false, /client was closed/)];
    await Promise.all(failures);
    await sleep(50);
    assert.equal(server.sockets.length, 1, 'no connection after close()');
    assert.deepEqual(
      server.requests.map((r) => r.target),
      ['/a', '/hang'],
    );
    // The client still works after close(): a new pool.
    await get(client, `${server.origin}/a`);
    assert.equal(server.sockets.length, 2);
  });
});

// ---------------------------------------------------------------------------------------------
// 9. HTTPS.

async function httpsServer(t: TestContext, handler: http.RequestListener) {
  const server = https.createServer({ key: KEY, cert: CERT, keepAliveTimeout: 60_000 }, handler);
  const secured: tls.TLSSocket[] = [];
  server.on('secureConnection', (socket: tls.TLSSocket) => secured.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => (server.closeAllConnections(), server.close()));
  return { port: (server.address() as net.AddressInfo).port, secured };
}

describe('https', () => {
  test('with the certificate as ca: answers (length and chunked) over one reused connection', async (t) => {
    const seen: string[] = [];
    const { port, secured } = await httpsServer(t, (request, response) => {
      seen.push(`${request.method} ${request.url}`);
      if (request.url === '/chunked') response.write('{"part":'), response.end('1}');
      else response.end(JSON.stringify({ url: request.url }));
    });
    const client = newClient(t, { ca: CERT });
    for (let i = 0; i < 4; i++) assert.deepEqual(JSON.parse(text(await get(client, `https://127.0.0.1:${port}/${i}`))), { url: `/${i}` });
    assert.equal(text(await get(client, `https://127.0.0.1:${port}/chunked`)), '{"part":1}');
    const posted = await client.request('POST', `https://127.0.0.1:${port}/post`, '{"x":"ü"}', NEVER, 5_000);
    assert.equal(posted.status, 200);
    assert.equal(secured.length, 1);
    assert.equal(seen.length, 6);
  });

  test('without the certificate: rejects with written=false (certificate not trusted), nothing sent', async (t) => {
    const seen: string[] = [];
    const { port } = await httpsServer(t, (request, response) => (seen.push(request.url!), response.end('{}')));
    const client = newClient(t);
    const error = await exchangeError(get(client, `https://127.0.0.1:${port}/`), false);
    assert.match(error.message, /CERT|certificate/i);
    assert.deepEqual(seen, []);
  });

  test('an IP origin sends no SNI name; a host name origin sends it', async (t) => {
    const { port, secured } = await httpsServer(t, (_request, response) => response.end('{}'));
    const client = newClient(t, { ca: CERT });
    await get(client, `https://127.0.0.1:${port}/`);
    assert.equal(secured.length, 1);
    assert.ok(!(secured[0] as tls.TLSSocket & { servername?: string | false }).servername, 'no SNI for an address (RFC 6066 §3)');
    await get(client, `https://localhost:${port}/`);
    assert.equal(secured.length, 2, 'another origin, another connection');
    assert.equal((secured[1] as tls.TLSSocket & { servername?: string | false }).servername, 'localhost');
  });

  test('exact bytes over TLS: chunked with trailers, one byte per record', async (t) => {
    const framing = FRAMINGS.find((f) => f.name === 'chunked with extensions and trailers')!;
    const server = await rawServer(
      t,
      async ({ socket }) => {
        await writeParts(socket, bytewise(framing.answer), 0);
      },
      { secure: true },
    );
    const client = newClient(t, { ca: CERT });
    assertAnswer(await get(client, `${server.origin}/1`), framing);
    assertAnswer(await get(client, `${server.origin}/2`), framing);
    assert.equal(server.sockets.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------
// 10. The request's bytes.

describe('request bytes', () => {
  const received = (server: RawServer, connection = 1) => Buffer.concat(server.received[connection - 1] ?? []);

  test('a GET sends its request line, Host with the port, Accept, and nothing else', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    const host = server.origin.slice('http://'.length);
    await get(client, `${server.origin}/api/blocks?limit=1&orderBy=height:desc`);
    await get(client, server.origin);
    await sleep(20);
    assert.equal(
      received(server).toString('latin1'),
      `GET /api/blocks?limit=1&orderBy=height:desc HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n\r\n` + `GET / HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n\r\n`,
    );
  });

  test('a POST sends Content-Type and the Content-Length in UTF-8 bytes, the body intact', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    const host = server.origin.slice('http://'.length);
    const body = JSON.stringify({ transaction: { message: 'Grüße ✓ 💎 ∑', amount: 1 } });
    const bytes = Buffer.from(body, 'utf8');
    assert.notEqual(bytes.length, body.length, 'the body is not ASCII');
    await client.request('POST', `${server.origin}/api/transactions/process`, body, NEVER, 5_000);
    await sleep(20);
    const expectedHead = `POST /api/transactions/process HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\nContent-Type: application/json\r\nContent-Length: ${bytes.length}\r\n\r\n`;
    assert.deepEqual(received(server), Buffer.concat([Buffer.from(expectedHead), bytes]));
    assert.deepEqual(server.requests[0]!.body, bytes);
  });

  test('a target with a space, a control or a non-ASCII character rejects with written=false, nothing sent', async (t) => {
    const server = await rawServer(t, ({ socket }) => socket.write(lengthAnswer('{}')));
    const client = newClient(t);
    for (const path of ['/a b', '/é', '/a\r\nX-Injected: 1', '/a\tb', '/a\x7f', '/a\0']) {
      let promise: Promise<HttpAnswer> | undefined;
      assert.doesNotThrow(() => (promise = get(client, `${server.origin}${path}`)));
      await exchangeError(promise!, false, /not a valid request target/);
      await exchangeError(client.request('POST', `${server.origin}${path}`, '{}', NEVER, 5_000), false, /not a valid request target/);
    }
    await sleep(20);
    assert.equal(server.sockets.length, 0);
  });
});

// ---------------------------------------------------------------------------------------------
// 11. Fuzz: mutated and random answers; every exchange settles in time, failures are HttpExchangeError.

interface FuzzCase {
  readonly description: string;
  readonly parts: readonly Buffer[];
  readonly delayMs: number;
  readonly after: 'end' | 'keep' | 'reset';
  /** For unmutated answers: what the client must return, or that it must refuse the body as too large. */
  readonly expected?: { readonly status: number; readonly body: Buffer } | 'too large';
}

const FUZZ_CASES = 300;
const FUZZ_MAX_BODY = 160;
/** Mutated answers may leave the client waiting: a short timeout. Valid ones must come through, even slowly. */
const FUZZ_TIMEOUT_MS = 250;
const FUZZ_VALID_TIMEOUT_MS = 5_000;

function fuzzCase(random: () => number): FuzzCase {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const interesting = Buffer.from('\r\n:; 0fF9-\t\0"HTTP/1.1 200');
  const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => (random() < 0.5 ? interesting[int(interesting.length)]! : int(256))));
  const body = Buffer.from(Array.from({ length: int(200) }, () => (random() < 0.8 ? 0x20 + int(95) : int(256))));
  const status = pick([200, 200, 201, 204, 304, 400, 404, 500, 503]);
  const framing = pick(['length', 'chunked', 'close', 'http10', 'http10-keep-alive'] as const);
  const noBody = status === 204 || status === 304;
  const content = noBody ? Buffer.alloc(0) : body;
  const informational = random() < 0.2 ? pick(['HTTP/1.1 100 Continue\r\n\r\n', 'HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n']) : '';
  const headers = Array.from({ length: int(4) }, (_, i) => `X-H${i}: ${'v'.repeat(int(20))}`);
  let answer: Buffer;
  switch (framing) {
    case 'length':
    case 'http10':
    case 'http10-keep-alive': {
      const version = framing === 'length' ? '1.1' : '1.0';
      const extra = framing === 'http10-keep-alive' ? ['Connection: keep-alive'] : [];
      answer = Buffer.concat([Buffer.from(informational), lengthAnswer(noBody ? body : content, { status: `${status} X`, version, headers: [...headers, ...extra] })]);
      if (noBody) answer = answer.subarray(0, answer.length - body.length);
      break;
    }
    case 'chunked': {
      const pieces: Buffer[] = [Buffer.from(`${informational}HTTP/1.1 ${status} X\r\n${[...headers, 'Transfer-Encoding: chunked'].join('\r\n')}\r\n\r\n`)];
      if (!noBody) {
        for (let at = 0; at < content.length; ) {
          const size = 1 + int(Math.min(64, content.length - at));
          const hex = size.toString(16);
          pieces.push(Buffer.from(`${random() < 0.5 ? hex : hex.toUpperCase()}${random() < 0.2 ? ';e=1' : ''}\r\n`), content.subarray(at, at + size), Buffer.from('\r\n'));
          at += size;
        }
        pieces.push(Buffer.from(`0\r\n${random() < 0.3 ? 'X-Trailer: t\r\n' : ''}\r\n`));
      }
      answer = Buffer.concat(pieces);
      break;
    }
    case 'close':
      answer = Buffer.concat([Buffer.from(`${informational}HTTP/1.1 ${status} X\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`), content]);
      break;
  }
  const mutation = pick(['none', 'none', 'none', 'truncate', 'flip', 'flip-many', 'insert', 'delete', 'duplicate', 'length-lie', 'garbage'] as const);
  const at = int(answer.length + 1);
  switch (mutation) {
    case 'none':
      break;
    case 'truncate':
      answer = answer.subarray(0, at);
      break;
    case 'flip':
      answer = Buffer.from(answer);
      if (answer.length > 0) answer[at % answer.length] ^= 1 << int(8);
      break;
    case 'flip-many':
      answer = Buffer.from(answer);
      for (let i = 0, n = 1 + int(8); i < n && answer.length > 0; i++) answer[int(answer.length)] = int(256);
      break;
    case 'insert':
      answer = Buffer.concat([answer.subarray(0, at), randomBytes(1 + int(10)), answer.subarray(at)]);
      break;
    case 'delete':
      answer = Buffer.concat([answer.subarray(0, at), answer.subarray(at + 1 + int(10))]);
      break;
    case 'duplicate':
      answer = Buffer.concat([answer.subarray(0, at), answer.subarray(int(at + 1), at), answer.subarray(at)]);
      break;
    case 'length-lie':
      answer = Buffer.from(
        answer
          .toString('latin1')
          .replace(/Content-Length: \d+/, `Content-Length: ${pick([0, 1, body.length - 1, body.length + 1, FUZZ_MAX_BODY, FUZZ_MAX_BODY + 1, 2 ** 53, 999999999999999])}`)
          .replace(/\r\n([0-9a-fA-F]+)\r\n/, () => `\r\n${int(0x1000).toString(16)}\r\n`),
        'latin1',
      );
      break;
    case 'garbage':
      answer = randomBytes(int(300));
      break;
  }
  const cuts = new Set<number>();
  const splits = answer.length < 80 && random() < 0.2 ? answer.length : pick([0, 0, 1, 2, 4]);
  while (cuts.size < Math.min(splits, Math.max(0, answer.length - 1))) cuts.add(1 + int(answer.length - 1));
  const points = [0, ...[...cuts].sort((a, b) => a - b), answer.length];
  const parts = points.slice(1).map((end, i) => answer.subarray(points[i], end));
  const after = mutation === 'none' ? (framing === 'close' || random() < 0.3 ? 'end' : 'keep') : pick(['end', 'keep', 'reset'] as const);
  return {
    description: `${framing} ${status} ${mutation}, ${parts.length} part(s), then ${after}`,
    parts,
    delayMs: int(3),
    after,
    expected: mutation !== 'none' ? undefined : content.length > FUZZ_MAX_BODY ? 'too large' : { status, body: content },
  };
}

/** The outcome of `promise`, or 'unsettled' after `ms`. */
async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | { error: unknown } | 'unsettled'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'unsettled'>((resolve) => (timer = setTimeout(() => resolve('unsettled'), ms)));
  try {
    return await Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

test(`fuzz: ${FUZZ_CASES} mutated and random answers; every exchange settles, failures are HttpExchangeError`, async (t) => {
  const random = prng(0x5eed_1234);
  const cases = Array.from({ length: FUZZ_CASES }, () => fuzzCase(random));
  const server = await rawServer(t, async ({ socket, target }) => {
    if (target === '/ok') return void socket.write(lengthAnswer('{"ok":true}'));
    const fuzz = cases[Number(target.slice('/fuzz/'.length))]!;
    await writeParts(socket, fuzz.parts, fuzz.delayMs);
    if (socket.destroyed) return;
    if (fuzz.after === 'end') socket.end();
    else if (fuzz.after === 'reset') socket.resetAndDestroy();
  });
  // A retried GET gets a second timeout; the bound leaves room for both and for a loaded machine.
  const boundFor = (timeoutMs: number) => 2 * timeoutMs + 1_500;
  const outcomes = { resolved: 0, rejected: 0, messages: new Set<string>() };
  const failures: string[] = [];
  const check = (label: string, outcome: Awaited<ReturnType<typeof settleWithin<HttpAnswer>>>, expected: FuzzCase['expected']) => {
    if (outcome === 'unsettled') return void failures.push(`${label}: not settled in time`);
    if ('error' in outcome) {
      outcomes.rejected++;
      const error = outcome.error as Error;
      if (!(error instanceof HttpExchangeError)) return void failures.push(`${label}: rejected with ${String(error)}`);
      outcomes.messages.add(error.message.replace(/\d+/g, 'N').replace(/'.*'/, "'…'"));
      if (expected === 'too large' ? !TOO_LARGE.test(error.message) : expected) failures.push(`${label}: a valid answer rejected (${error.message})`);
      return;
    }
    outcomes.resolved++;
    const { status, body } = outcome.value;
    if (!Number.isInteger(status) || status < 100 || status > 999) failures.push(`${label}: status ${status}`);
    if (!Buffer.isBuffer(body) || body.length > FUZZ_MAX_BODY) failures.push(`${label}: body of ${body.length} bytes`);
    if (expected === 'too large') failures.push(`${label}: a body over maxResponseBytes accepted`);
    else if (expected && (status !== expected.status || !body.equals(expected.body))) failures.push(`${label}: answer ${status} differs from the one sent`);
  };
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const fuzz = cases[i]!;
      const client = new HttpClient({ maxSockets: 2, idleTimeoutMs: 5_000, maxResponseBytes: FUZZ_MAX_BODY });
      try {
        const label = `case ${i} (${fuzz.description})`;
        const timeoutMs = fuzz.expected ? FUZZ_VALID_TIMEOUT_MS : FUZZ_TIMEOUT_MS;
        check(label, await settleWithin(get(client, `${server.origin}/fuzz/${i}`, { timeoutMs }), boundFor(timeoutMs)), fuzz.expected);
        // The client is still sound after whatever it was sent: a clean answer comes through (always, after a valid one).
        check(`${label}, then a clean answer`, await settleWithin(get(client, `${server.origin}/ok`, { timeoutMs }), boundFor(timeoutMs)), fuzz.expected && { status: 200, body: Buffer.from('{"ok":true}') });
      } finally {
        client.close();
      }
    }
  };
  await Promise.all(Array.from({ length: 50 }, worker));
  t.diagnostic(`${outcomes.resolved} resolved, ${outcomes.rejected} rejected; failures seen: ${[...outcomes.messages].sort().join(' | ')}`);
  assert.deepEqual(failures, []);
  assert.equal(outcomes.resolved + outcomes.rejected, 2 * FUZZ_CASES);
  assert.ok(outcomes.resolved > FUZZ_CASES / 2, `${outcomes.resolved} resolved`);
  assert.ok(outcomes.rejected > FUZZ_CASES / 10, `${outcomes.rejected} rejected`);
  assert.ok(outcomes.messages.size >= 6, `various failures: ${[...outcomes.messages].join(' | ')}`);
});

test('nothing escaped: no unhandled rejection, no listener warning', () => {
  assert.deepEqual(unhandled, []);
  assert.deepEqual(
    warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
    [],
  );
});
