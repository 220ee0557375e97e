// The uWebSockets.js edge wrapper (docs/DESIGN.md, "The HTTP edge").

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { SimulatedClock } from 'xstate';
import { PayloadTooLargeError, RequestTimeoutError } from '../../http/body.js';
import { HttpServer, type HttpServerOptions } from '../../http/server.js';
import { captureLogger } from '../support/logger.js';
import { closedWithin, openSocket, readResponse, sleep } from '../support/raw-http.js';
import { waitFor } from '../support/wait.js';

function newServer(overrides: Partial<HttpServerOptions> = {}): HttpServer {
  return new HttpServer({
    name: 'test',
    host: '127.0.0.1',
    port: 0,
    logger: captureLogger().logger,
    mapError: (error) =>
      error instanceof PayloadTooLargeError ? { status: 413, body: 'too large' } : { status: 500, body: `mapped ${(error as Error).message}` },
    notFound: (request) => ({ status: 404, body: `no ${request.method} ${request.path}` }),
    defaultHeaders: { 'x-default': 'yes' },
    ...overrides,
  });
}

async function get(port: number, path: string, init: RequestInit = {}) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { connection: 'close', ...(init.headers ?? {}) } });
  return { status: response.status, headers: response.headers, body: Buffer.from(await response.arrayBuffer()) };
}

test('routes get the copied request (path, query, headers, params) and default headers are added', async () => {
  const server = newServer();
  server.route('get', '/items/:id', (request) => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ path: request.path, query: request.query, id: request.params[0], h: request.headers['x-test'], method: request.method }),
  }));
  const port = await server.listen();
  try {
    const response = await get(port, '/items/42?a=1&b=2', { headers: { 'x-test': 'hello' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-default'), 'yes');
    assert.deepEqual(JSON.parse(response.body.toString()), { path: '/items/42', query: 'a=1&b=2', id: '42', h: 'hello', method: 'GET' });
    const missing = await get(port, '/nothing');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.toString(), 'no GET /nothing');
    const wrongMethod = await get(port, '/items/1', { method: 'DELETE' });
    assert.equal(wrongMethod.status, 404);
    assert.equal(server.metrics.snapshot()['test /items/:id']?.requests, 1);
  } finally {
    await server.close();
  }
});

test('the request a handler gets is only the request: serialised or spread, it shows no edge state', async () => {
  const server = newServer();
  server.route('get', '/seen/:id', (request, context) => ({
    status: 200,
    body: JSON.stringify({ json: JSON.parse(JSON.stringify(request)), keys: Object.keys({ ...request }).sort(), same: request === (context as unknown), headers: request.headers['x-test'] }),
  }));
  const port = await server.listen();
  try {
    const response = await get(port, '/seen/7?x=1', { headers: { 'x-test': 'yes' } });
    assert.equal(response.status, 200);
    const seen = JSON.parse(response.body.toString()) as { json: unknown; keys: string[]; same: boolean; headers: string };
    assert.deepEqual(seen.json, { method: 'GET', path: '/seen/7', query: 'x=1', params: ['7'] });
    // `body` and `bodyStream` are there (undefined) for every route; everything else of the exchange is private.
    assert.deepEqual(seen.keys, ['body', 'bodyStream', 'method', 'params', 'path', 'query']);
    assert.equal(seen.headers, 'yes');
    assert.equal(server.inFlight, 0, 'a synchronous answer is never counted in flight');
    assert.equal(server.totals.snapshot().responses['2xx'], 1);
  } finally {
    await server.close();
  }
});

test('a handler error after an await is mapped by the service table, never crashing the process', async () => {
  const server = newServer();
  server.route('get', '/fail', async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    throw new Error('kaput');
  });
  const port = await server.listen();
  try {
    const response = await get(port, '/fail');
    assert.equal(response.status, 500);
    assert.equal(response.body.toString(), 'mapped kaput');
  } finally {
    await server.close();
  }
});

test('a handler error mapped to 500 logs its cause at error level; a mapped refusal is not logged as a failure', async () => {
  const captured = captureLogger();
  const server = newServer({ logger: captured.logger });
  server.route('get', '/fail', () => {
    throw new Error('kaput');
  });
  server.route('post', '/big', () => {
    throw new PayloadTooLargeError(10);
  });
  const port = await server.listen();
  try {
    assert.equal((await get(port, '/fail')).status, 500);
    assert.equal((await get(port, '/big', { method: 'POST' })).status, 413);
    const failed = captured.lines.filter((line) => line.msg === 'handler failed');
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.level, 'error');
    assert.equal(failed[0]!.route, '/fail');
    assert.match(String((failed[0]!.err as { message?: string }).message), /kaput/);
  } finally {
    await server.close();
  }
});

test('request bodies are bounded: 413 from Content-Length before reading, and from the streamed count', async () => {
  const server = newServer();
  let handled = 0;
  server.route(
    'post',
    '/upload',
    (request) => {
      handled++;
      return { status: 200, body: `got ${request.body?.length}` };
    },
    { body: { maxBytes: 1024 } },
  );
  const port = await server.listen();
  try {
    const ok = await get(port, '/upload', { method: 'POST', body: Buffer.alloc(1000, 1) });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.toString(), 'got 1000');
    const declared = await get(port, '/upload', { method: 'POST', body: Buffer.alloc(2000, 1) });
    assert.equal(declared.status, 413);
    // Chunked: no Content-Length, so only the streamed count can catch it.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/upload', method: 'POST', headers: { 'transfer-encoding': 'chunked', connection: 'close' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      for (let i = 0; i < 4; i++) req.write(Buffer.alloc(512, 2));
      req.end();
    });
    assert.equal(streamed, 413);
    assert.equal(handled, 1, 'the handler never ran for an oversized body');
  } finally {
    await server.close();
  }
});

test('a collected body arrives whole (empty, one chunk, many chunks); a client gone mid-body never reaches the handler', async () => {
  const server = newServer();
  const seen: string[] = [];
  server.route(
    'post',
    '/echo',
    (request) => {
      seen.push(createHash('sha256').update(request.body ?? Buffer.alloc(0)).digest('hex'));
      return { status: 200, body: String(request.body?.length) };
    },
    { body: { maxBytes: 4 * 1024 * 1024 } },
  );
  const port = await server.listen();
  try {
    const big = randomBytes(3 * 1024 * 1024 + 17);
    for (const body of [Buffer.alloc(0), Buffer.from('{"a":1}'), big]) {
      const answer = await get(port, '/echo', { method: 'POST', body });
      assert.equal(answer.body.toString(), String(body.length));
      assert.equal(seen.at(-1), createHash('sha256').update(body).digest('hex'));
    }
    const handled = seen.length;
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(400));
    await waitFor(() => server.inFlight === 1, { what: 'request waiting for its body' });
    socket.destroy();
    await waitFor(() => server.inFlight === 0, { what: 'request abandoned' });
    assert.equal(seen.length, handled, 'the handler never ran');
    assert.equal((await get(port, '/echo', { method: 'POST', body: Buffer.from('after') })).body.toString(), '5', 'the server carries on');
  } finally {
    await server.close();
  }
});

test('a client that disconnects aborts the handler signal, and nothing is written afterwards', async () => {
  const server = newServer();
  let aborted: Promise<boolean> | undefined;
  server.route('get', '/slow', async (_request, { signal }) => {
    aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(true), { once: true }));
    await aborted;
    return { status: 200, body: 'late' };
  });
  const port = await server.listen();
  try {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => aborted !== undefined, { what: 'handler running' });
    socket.destroy();
    assert.equal(await aborted, true);
    await waitFor(() => server.inFlight === 0, { what: 'request finished' });
  } finally {
    await server.close();
  }
});

test('graceful close stops accepting, drains in-flight requests, then closes', async () => {
  const server = newServer();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  server.route('get', '/wait', async () => {
    await gate;
    return { status: 200, body: 'done' };
  });
  const port = await server.listen();
  const inFlight = get(port, '/wait');
  await waitFor(() => server.inFlight === 1, { what: 'request in flight' });
  const closing = server.close(5_000);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/wait`), 'new connections are refused while draining');
  release();
  const response = await inFlight;
  assert.equal(response.status, 200);
  assert.equal(response.body.toString(), 'done');
  await closing;
});

test('graceful close gives up on requests that outlive the drain time', async () => {
  const server = newServer();
  let signalAborted = false;
  server.route('get', '/forever', (_request, { signal }) => {
    return new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => {
        signalAborted = true;
        reject(new Error('aborted'));
      });
    });
  });
  const port = await server.listen();
  const pending = get(port, '/forever').catch((error: unknown) => error);
  await waitFor(() => server.inFlight === 1, { what: 'request in flight' });
  await server.close(50);
  assert.equal(signalAborted, true);
  assert.ok((await pending) instanceof Error, 'the client sees the connection close');
});

test('a handler that reads its signal only after the server gave up on it sees it aborted (server closing)', async () => {
  const server = newServer();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let seen: { aborted: boolean; reason: string } | undefined;
  server.route('get', '/late', async (_request, context) => {
    await gate;
    const { signal } = context;
    seen = { aborted: signal.aborted, reason: (signal.reason as Error | undefined)?.message ?? '' };
    return { status: 200, body: 'late' };
  });
  const port = await server.listen();
  const pending = get(port, '/late').catch((error: unknown) => error);
  await waitFor(() => server.inFlight === 1, { what: 'request in flight' });
  await server.close(50);
  release();
  await waitFor(() => seen !== undefined, { what: 'the handler ran on' });
  assert.deepEqual(seen, { aborted: true, reason: 'server closing' });
  assert.ok((await pending) instanceof Error, 'the client sees the connection close');
  await waitFor(() => server.inFlight === 0, { what: 'the abandoned request settled' });
});

test('large bodies are streamed whole with backpressure', async () => {
  const server = newServer();
  const big = Buffer.alloc(8 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
  server.route('get', '/big', () => ({ status: 200, body: big }));
  const port = await server.listen();
  try {
    const response = await get(port, '/big');
    assert.equal(response.body.length, big.length);
    assert.ok(response.body.equals(big));
  } finally {
    await server.close();
  }
});

test('a client gone while a large body answered inside the callback is still going out: its signal aborts, the listener serves on', async () => {
  // The answer is counted done once its body is handed to uWS (http/server.ts, Phase); the client may still leave
  // while uWS sends it under backpressure, which needs the onAborted attached for it inside the callback.
  const server = newServer();
  const big = Buffer.alloc(64 * 1024 * 1024, 7);
  let signal: AbortSignal | undefined;
  server.route('get', '/big', (_request, context) => {
    signal = context.signal;
    return { status: 200, body: big };
  });
  server.route('get', '/small', () => ({ status: 200, body: 'ok' }));
  const port = await server.listen();
  try {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => signal !== undefined, { what: 'the large answer given' });
    assert.equal(signal!.aborted, false);
    socket.destroy();
    // node:http takes the whole body in one `end()` (http/engine.node.ts tryEnd), so there nothing is left to stop.
    if (server.engine === 'uws') {
      await waitFor(() => signal!.aborted, { what: 'the signal aborted by the disconnect' });
      assert.equal((signal!.reason as Error).message, 'client disconnected');
    }
    assert.equal(server.inFlight, 0);
    assert.equal((await get(port, '/small')).body.toString(), 'ok');
  } finally {
    await server.close();
  }
});

test('body deadlines run on the listener clock: a stalled body, a trickled one and a slow one are cut with 408 when the clock says so, never before', async () => {
  const clock = new SimulatedClock();
  const server = newServer({
    clock,
    mapError: (error) => (error instanceof RequestTimeoutError ? { status: 408, body: error.deadline } : { status: 500, body: 'other' }),
  });
  const deadlines = { idleMs: 5_000, totalMs: 60_000, floorBytes: 1024, floorWindowMs: 20_000 };
  server.route('post', '/idle', (request) => ({ status: 200, body: `got ${request.body?.length}` }), { body: { maxBytes: 1 << 20, deadlines } });
  server.route('post', '/floor', (request) => ({ status: 200, body: `got ${request.body?.length}` }), { body: { maxBytes: 1 << 20, deadlines: { ...deadlines, idleMs: 60_000 } } });
  server.route('post', '/total', (request) => ({ status: 200, body: `got ${request.body?.length}` }), {
    body: { maxBytes: 1 << 20, deadlines: { ...deadlines, idleMs: 60_000, totalMs: 8_000, floorBytes: 1 } },
  });
  const port = await server.listen();
  /** A POST declaring more than it sends (`first` now), its answer watched. */
  const started = async (path: string, first: number) => {
    const socket = await openSocket(port);
    const answer = readResponse(socket, 10_000);
    let settled = false;
    void answer.then(() => (settled = true), () => (settled = true));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n`);
    socket.write(Buffer.alloc(first, 97));
    await sleep(50); // the bytes reach the listener (real time; the clock stands still)
    return { socket, answer, get settled() { return settled; } };
  };
  /** Moves the clock by `seconds` ticks of 1 s (the deadlines' resolution), letting the listener run after each. */
  const ticks = async (seconds: number, each?: () => unknown) => {
    for (let i = 0; i < seconds; i++) {
      each?.();
      clock.increment(1_000);
      await sleep(5);
    }
  };
  // Each body: what it sends at once, the ticks (1 s each) it sends `each` bytes on before its deadline, the deadline.
  const cases = [
    // Idle: no byte for more than idleMs after the tick that saw the last ones (at 1 s): cut at 7 s, not at 6 s.
    { path: '/idle', first: 10, ticksBefore: 6, each: 0, deadline: 'idle' },
    // Floor: 50 bytes a second is under 1024 per 20 s window; the window closes at the tick of 20 s.
    { path: '/floor', first: 0, ticksBefore: 19, each: 50, deadline: 'floor' },
    // Total: bytes keep coming, the whole body may take 8 s from its start: cut at the tick past it (9 s).
    { path: '/total', first: 10, ticksBefore: 8, each: 10, deadline: 'total' },
  ] as const;
  try {
    for (const { path, first, ticksBefore, each, deadline } of cases) {
      const body = await started(path, first);
      await ticks(ticksBefore, () => each > 0 && body.socket.write(Buffer.alloc(each, 97)));
      await sleep(50);
      assert.equal(body.settled, false, `${path}: no answer before the ${deadline} deadline on the clock`);
      await ticks(1);
      const answer = await body.answer;
      assert.deepEqual([answer.status, answer.body], [408, deadline], path);
      assert.ok(await closedWithin(body.socket, 5_000), `${path}: the connection is closed`);
    }
  } finally {
    await server.close(0);
  }
});

test('an answer given while the body still arrives waits for the rest where the engine would end the connection at once: bounded by the deadlines, 30 s, and the server closing', async () => {
  // uWS ends a `Connection: close` request's connection once the answer is written, node:http every connection whose
  // answer says `Connection: close`: a client still sending would meet a reset before it read the answer.
  const clock = new SimulatedClock();
  const server = newServer({
    clock,
    mapError: (error) => (error instanceof RequestTimeoutError ? { status: 408, body: error.deadline } : { status: 507, body: 'refused' }),
  });
  const route = (path: string, deadlines: { idleMs: number; totalMs: number; floorBytes: number; floorWindowMs: number }) =>
    server.route(
      'post',
      path,
      () => {
        throw new Error('no room');
      },
      { stream: { maxBytes: 1 << 20, deadlines } },
    );
  route('/refuse', { idleMs: 5_000, totalMs: 60_000, floorBytes: 1, floorWindowMs: 20_000 });
  // Deadlines far away: only the 30 s linger ends the wait.
  route('/linger', { idleMs: 600_000, totalMs: 600_000, floorBytes: 1, floorWindowMs: 600_000 });
  const port = await server.listen();
  const started = async (connection: string, path = '/refuse') => {
    const socket = await openSocket(port);
    const answer = readResponse(socket, 10_000);
    let settled = false;
    void answer.then(() => (settled = true), () => (settled = true));
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: ${connection}\r\nContent-Length: 200000\r\n\r\n`);
    socket.write(Buffer.alloc(100_000, 97));
    await sleep(100);
    return { socket, answer, get settled() { return settled; } };
  };
  /** Moves the clock a second at a time, so that the body watch ticks at each. */
  const advance = async (seconds: number) => {
    for (let tick = 0; tick < seconds; tick++) {
      clock.increment(1_000);
      await sleep(5);
    }
    await sleep(50);
  };
  try {
    const keepAlive = await started('keep-alive');
    if (server.engine === 'uws') {
      // uWS keeps a keep-alive connection open and drops the rest of the body: the refusal is read at once.
      assert.equal(keepAlive.settled, true, 'a keep-alive client is answered before its body ended');
    } else {
      assert.equal(keepAlive.settled, false, 'node:http: no answer while the body is still arriving');
      keepAlive.socket.write(Buffer.alloc(100_000, 97));
    }
    assert.equal((await keepAlive.answer).status, 507);
    keepAlive.socket.destroy();
    // Connection: close: no answer while the body is still due, the refusal once it has arrived.
    const whole = await started('close');
    assert.equal(whole.settled, false, 'no answer while the body is still arriving');
    whole.socket.write(Buffer.alloc(100_000, 97));
    const answered = await whole.answer;
    assert.deepEqual([answered.status, answered.body], [507, 'refused']);
    whole.socket.destroy();
    // A body that stops: the idle deadline ends the wait (on the clock), the refusal is given and the connection cut.
    const stalled = await started('close');
    await advance(6);
    assert.equal(stalled.settled, false, 'still waiting before the idle deadline');
    clock.increment(1_000);
    const cut = await stalled.answer;
    assert.deepEqual([cut.status, cut.body], [507, 'refused']);
    assert.ok(await closedWithin(stalled.socket, 5_000), 'the connection is closed');
    // Within its deadlines the wait still ends after 30 s (a client may declare far more than it will be let send).
    const lingering = await started('close', '/linger');
    await advance(29);
    assert.equal(lingering.settled, false, 'still waiting before 30 s');
    await advance(2);
    const lingered = await lingering.answer;
    assert.deepEqual([lingered.status, lingered.body], [507, 'refused']);
    assert.ok(await closedWithin(lingering.socket, 5_000), 'the connection is closed after the linger');
    // The server closing ends the wait at once: the refusal is written, and the close does not wait for the body.
    const atClose = await started('close', '/linger');
    assert.equal(atClose.settled, false);
    const closing = server.close(5_000);
    assert.equal((await atClose.answer).status, 507);
    await closing;
  } finally {
    await server.close(0);
  }
});

test('a collected body slower than uWS re-arm rate still arrives (12 s at 128 B/s); one under its floor answers 408 and is cut', async () => {
  const server = newServer({
    mapError: (error) => ((error as Error).name === 'RequestTimeoutError' ? { status: 408, body: 'slow' } : { status: 500, body: 'other' }),
  });
  server.route('post', '/slow', (request) => ({ status: 200, body: `got ${request.body?.length}` }), {
    body: { maxBytes: 4096, deadlines: { idleMs: 5_000, totalMs: 60_000, floorBytes: 256, floorWindowMs: 3_000 } },
  });
  server.route('post', '/floor', (request) => ({ status: 200, body: `got ${request.body?.length}` }), {
    body: { maxBytes: 4096, deadlines: { idleMs: 5_000, totalMs: 60_000, floorBytes: 1024, floorWindowMs: 2_000 } },
  });
  const port = await server.listen();
  const paced = async (path: string, size: number, bytesPerStep: number) => {
    const socket = await openSocket(port);
    const answer = readResponse(socket, 30_000);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Length: ${size}\r\n\r\n`);
    let stop = false;
    void answer.finally(() => (stop = true));
    for (let sent = 0; sent < size && !stop; sent += bytesPerStep) {
      socket.write(Buffer.alloc(Math.min(bytesPerStep, size - sent), 97));
      await sleep(250);
    }
    return { socket, response: await answer };
  };
  try {
    const started = Date.now();
    const slow = await paced('/slow', 1536, 32);
    assert.equal(slow.response.status, 200);
    assert.equal(slow.response.body, 'got 1536');
    assert.ok(Date.now() - started > 10_000, 'longer than uWS idle timer');
    slow.socket.destroy();
    const cut = await paced('/floor', 4000, 32);
    assert.equal(cut.response.status, 408);
    assert.equal(cut.response.header('connection')?.toLowerCase(), 'close');
    assert.ok(await closedWithin(cut.socket, 5_000), 'the connection is closed');
  } finally {
    await server.close(0);
  }
});
