// Streaming through the uWS edge: replies from async iterables (download) and request bodies as a
// backpressured Readable (upload).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { test } from 'node:test';
import { PayloadTooLargeError } from '../../http/body.js';
import { HttpServer } from '../../http/server.js';
import { captureLogger } from '../support/logger.js';
import { waitFor } from '../support/wait.js';

function newServer(): HttpServer {
  return new HttpServer({
    name: 'stream',
    host: '127.0.0.1',
    port: 0,
    logger: captureLogger().logger,
    mapError: (error) => ({ status: error instanceof PayloadTooLargeError ? 413 : 500, body: JSON.stringify({ error: (error as Error).message }) }),
    notFound: () => ({ status: 404 }),
  });
}

const pattern = (size: number) => {
  const buffer = Buffer.alloc(size);
  for (let i = 0; i < size; i++) buffer[i] = (i * 31 + 7) % 251;
  return buffer;
};

async function* chunksOf(buffer: Buffer, size: number, onEnd?: () => void) {
  try {
    for (let offset = 0; offset < buffer.length; offset += size) {
      await new Promise((resolve) => setImmediate(resolve));
      yield buffer.subarray(offset, offset + size);
    }
  } finally {
    onEnd?.();
  }
}

test('a streamed reply arrives whole, with Content-Length, under backpressure', async () => {
  const server = newServer();
  const body = pattern(8 * 1024 * 1024 + 13);
  server.route('get', '/file', () => ({ status: 200, headers: { 'content-type': 'application/octet-stream' }, stream: { length: body.length, chunks: chunksOf(body, 256 * 1024) } }));
  server.route('get', '/empty', () => ({ status: 200, stream: { length: 0, chunks: chunksOf(Buffer.alloc(0), 1) } }));
  const port = await server.listen();
  try {
    const response = await fetch(`http://127.0.0.1:${port}/file`, { headers: { connection: 'close' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-length'), String(body.length));
    const received = Buffer.from(await response.arrayBuffer());
    assert.ok(received.equals(body));
    const empty = await fetch(`http://127.0.0.1:${port}/empty`, { headers: { connection: 'close' } });
    assert.equal(empty.status, 200);
    assert.equal((await empty.arrayBuffer()).byteLength, 0);
  } finally {
    await server.close();
  }
});

test('a failure after the first byte cuts the connection; a failure before it is mapped to an error reply', async () => {
  const server = newServer();
  async function* failing(after: number) {
    if (after > 0) {
      yield Buffer.alloc(after, 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('source broke');
  }
  server.route('get', '/late', () => ({ status: 200, stream: { length: 1_000_000, chunks: failing(1000) } }));
  server.route('get', '/early', () => ({ status: 200, stream: { length: 1_000_000, chunks: failing(0) } }));
  const port = await server.listen();
  try {
    const late = await fetch(`http://127.0.0.1:${port}/late`, { headers: { connection: 'close' } });
    assert.equal(late.status, 200);
    await assert.rejects(late.arrayBuffer(), 'the client sees an incomplete body, not a short 200');
    const early = await fetch(`http://127.0.0.1:${port}/early`, { headers: { connection: 'close' } });
    assert.equal(early.status, 500);
    assert.deepEqual(await early.json(), { error: 'source broke' });
  } finally {
    await server.close();
  }
});

test('a client that leaves mid-download ends the source', async () => {
  const server = newServer();
  let ended = false;
  const body = pattern(64 * 1024 * 1024);
  server.route('get', '/big', () => ({ status: 200, stream: { length: body.length, chunks: chunksOf(body, 64 * 1024, () => (ended = true)) } }));
  const port = await server.listen();
  try {
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/big' }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', () => {});
      req.end();
      setTimeout(() => reject(new Error('no data')), 5_000).unref();
    });
    await waitFor(() => ended, { what: 'source ended after disconnect' });
    await waitFor(() => server.inFlight === 0, { what: 'request finished' });
  } finally {
    await server.close();
  }
});

test('a streamed request body reaches the handler whole, even with a slow reader', async () => {
  const server = newServer();
  server.route(
    'post',
    '/upload',
    async (request) => {
      const hash = createHash('sha256');
      let size = 0;
      for await (const chunk of request.bodyStream!) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size % (1024 * 1024) < 70_000) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      return { status: 200, body: JSON.stringify({ size, sha: hash.digest('hex') }) };
    },
    { stream: { maxBytes: 10 * 1024 * 1024 } },
  );
  const port = await server.listen();
  try {
    const body = pattern(6 * 1024 * 1024 + 5);
    const response = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', body, headers: { connection: 'close' } });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { size: body.length, sha: createHash('sha256').update(body).digest('hex') });
    const tooBig = await fetch(`http://127.0.0.1:${port}/upload`, { method: 'POST', body: pattern(11 * 1024 * 1024), headers: { connection: 'close' } }).catch((error: unknown) => error);
    if (tooBig instanceof Response) assert.equal(tooBig.status, 413, 'the stream fails past maxBytes and the error table answers');
  } finally {
    await server.close();
  }
});

test('a keep-alive connection keeps serving after a streamed body that filled the buffer', async () => {
  const server = newServer();
  server.route(
    'post',
    '/slow',
    async (request) => {
      // Read one chunk, then stall long enough for the buffer to fill and the socket to pause, then drain.
      const iterator = request.bodyStream![Symbol.asyncIterator]();
      await iterator.next();
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        // drain
      }
      return { status: 200, body: 'read' };
    },
    { stream: { maxBytes: 64 * 1024 * 1024 } },
  );
  server.route('get', '/after', () => ({ status: 200, body: 'still here' }));
  const port = await server.listen();
  const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
  const call = (method: string, path: string, body?: Buffer) =>
    new Promise<string>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path, method, agent }, (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.setTimeout(5_000, () => req.destroy(new Error('no answer on the reused connection')));
      req.end(body);
    });
  try {
    for (let i = 0; i < 3; i++) {
      assert.equal(await call('POST', '/slow', pattern(8 * 1024 * 1024)), 'read');
      assert.equal(await call('GET', '/after'), 'still here');
    }
  } finally {
    agent.destroy();
    await server.close();
  }
});

test('a body stream destroyed before the handler reads it (client gone during an await) is not an uncaught error', async () => {
  const server = newServer();
  let sawDestroyed: boolean | undefined;
  let handlerDone!: () => void;
  const done = new Promise<void>((resolve) => (handlerDone = resolve));
  server.route(
    'post',
    '/late',
    async (request) => {
      // Like the upload route awaiting its disk claim before parsing.
      await new Promise((resolve) => setTimeout(resolve, 300));
      sawDestroyed = request.bodyStream!.destroyed;
      handlerDone();
      return { status: 200 };
    },
    { stream: { maxBytes: 1024 * 1024 } },
  );
  const port = await server.listen();
  try {
    const { connect } = await import('node:net');
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('POST /late HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\npartial');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    await done;
    assert.equal(sawDestroyed, true, 'the handler sees the destroyed body');
    // The process is still here and the server still answers.
    const next = await fetch(`http://127.0.0.1:${port}/nowhere`);
    assert.equal(next.status, 404);
  } finally {
    await server.close();
  }
});

test('a large streamed reply (many MiB under backpressure) never stalls', async () => {
  const server = newServer();
  const chunk = pattern(1024 * 1024);
  const count = 64;
  server.route('get', '/big', () => ({
    status: 200,
    stream: {
      length: chunk.length * count,
      chunks: (async function* () {
        for (let i = 0; i < count; i++) yield chunk;
      })(),
    },
  }));
  const port = await server.listen();
  try {
    for (let round = 0; round < 2; round++) {
      const response = await fetch(`http://127.0.0.1:${port}/big`, { signal: AbortSignal.timeout(30_000) });
      let received = 0;
      for await (const part of response.body!) received += (part as Uint8Array).byteLength;
      assert.equal(received, chunk.length * count, `round ${round}: every byte`);
    }
  } finally {
    await server.close();
  }
});
