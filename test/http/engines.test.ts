// Both HTTP engines (http/engine.ts) as raw clients and proxies drive them (issue 15): HTTP/1.0 with and without Host,
// three pipelined requests with asynchronous answers, malformed request lines and headers, HTTP/1.1 without Host,
// huge headers, a client gone mid-answer, a slowloris on headers. node:http answers all of these as HTTP says; the
// uWebSockets.js build's behaviour is pinned as the README documents it, so a build that changes it fails here.

import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ENGINE_NAMES, uwsAvailable, type EngineName } from '../../http/engine.js';
import { HttpServer } from '../../http/server.js';
import { captureLogger } from '../support/logger.js';
import { closedWithin, openSocket, readResponse, sleep } from '../support/raw-http.js';
import { waitFor } from '../support/wait.js';

/** Everything the socket received until it closed or `ms` passed. */
async function received(socket: Socket, ms: number): Promise<{ text: string; closed: boolean }> {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  const closed = await closedWithin(socket, ms);
  return { text, closed };
}

const statusLines = (text: string) => text.match(/HTTP\/1\.[01] \d{3} [A-Za-z ]+(?=\r\n)/g) ?? [];

for (const engine of ENGINE_NAMES) {
  // The fallback run (ADM_HTTP_UWS=missing, .ci/run) has no uWS engine to pin.
  const skip = engine === 'uws' && !uwsAvailable() ? 'uWebSockets.js cannot load in this process' : false;
  describe(`the ${engine} engine on a raw socket`, { skip }, () => {
    let server: HttpServer;
    let port: number;
    const big = Buffer.alloc(4 * 1024 * 1024, 7);

    before(async () => {
      server = new HttpServer({
        name: `engine-${engine}`,
        host: '127.0.0.1',
        port: 0,
        engine,
        nodeEngine: { headersTimeoutMs: 1_500 },
        logger: captureLogger().logger,
        mapError: () => ({ status: 500, body: 'error' }),
        notFound: () => ({ status: 404, body: 'none' }),
      });
      server.route('get', '/fast', () => ({ status: 200, body: 'fast' }));
      // Asynchronous answers, each slower than the next: pipelined answers must still come back in request order.
      server.route('get', '/slow/:n', async (request) => {
        await sleep(60 - Number(request.params[0]) * 20);
        return { status: 200, headers: { 'content-type': 'text/plain' }, body: `slow ${request.params[0]}` };
      });
      server.route('get', '/big', () => ({
        status: 200,
        stream: {
          length: big.length,
          chunks: (async function* () {
            for (let offset = 0; offset < big.length; offset += 64 * 1024) yield big.subarray(offset, offset + 64 * 1024);
          })(),
        },
      }));
      port = await server.listen();
      assert.equal(server.engine, engine as EngineName);
    });

    after(async () => {
      await server.close(0);
    });

    it('HTTP/1.0 with and without Host', async () => {
      for (const request of ['GET /fast HTTP/1.0\r\nHost: x\r\n\r\n', 'GET /fast HTTP/1.0\r\n\r\n']) {
        const socket = await openSocket(port);
        socket.write(request);
        const { text, closed } = await received(socket, 2_000);
        socket.destroy();
        if (engine === 'node') {
          assert.match(text, /^HTTP\/1\.[01] 200 OK\r\n/, JSON.stringify(request));
          assert.ok(text.endsWith('\r\n\r\nfast'));
          assert.ok(closed, 'an HTTP/1.0 connection without keep-alive is closed after the answer');
        } else {
          // README "The HTTP edge": this uWS build never answers HTTP/1.0.
          assert.equal(text, '', JSON.stringify(request));
        }
      }
    });

    it('three pipelined requests with asynchronous answers', async () => {
      const socket = await openSocket(port);
      socket.write('GET /slow/0 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/2 HTTP/1.1\r\nHost: x\r\n\r\n');
      const { text } = await received(socket, 1_500);
      socket.destroy();
      if (engine === 'node') {
        assert.deepEqual(statusLines(text), ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
        assert.deepEqual(text.match(/slow \d/g), ['slow 0', 'slow 1', 'slow 2'], 'answers in request order');
      } else {
        // README: uWS answers pipelined requests only when each answer is ready at once; here answers are lost.
        assert.ok(statusLines(text).length < 3, text);
      }
    });

    it('malformed request lines and headers, HTTP/1.1 without Host, huge headers: 400/431 (node), never a crash', async () => {
      // [case, request, node's status, what this uWS build does (README: silent = no answer, held until its idle timer)]
      const cases: Array<[string, string, number, 'silent' | 'served']> = [
        ['garbage request line', 'GARBAGE\r\n\r\n', 400, 'silent'],
        ['a header without a colon', 'GET /fast HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n', 400, 'silent'],
        ['a control character in a header', 'GET /fast HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n', 400, 'silent'],
        ['HTTP/1.1 without Host', 'GET /fast HTTP/1.1\r\n\r\n', 400, 'silent'],
        ['an unknown version', 'GET /fast HTTP/7.3\r\nHost: x\r\n\r\n', 400, 'silent'],
        ['64 KiB of headers', `GET /fast HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`, 431, 'served'],
      ];
      for (const [name, request, status, uws] of cases) {
        const socket = await openSocket(port);
        socket.write(request);
        const { text } = await received(socket, 1_500);
        socket.destroy();
        if (engine === 'node') assert.match(text, new RegExp(`^HTTP/1\\.1 ${status} `), name);
        else if (uws === 'silent') assert.equal(text, '', name);
        else assert.match(text, /^HTTP\/1\.1 200 /, name);
      }
      // Still serving.
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/fast`)).text(), 'fast');
    });

    it('a client gone mid-answer: the stream ends, nothing stays in flight, the next client is served', async () => {
      const socket = await openSocket(port);
      socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise((resolve) => socket.once('data', resolve));
      socket.pause();
      socket.destroy();
      await waitFor(() => server.inFlight === 0, { what: 'the abandoned answer to end' });
      const response = await fetch(`http://127.0.0.1:${port}/big`);
      assert.equal((await response.arrayBuffer()).byteLength, big.length);
    });

    it('a slowloris on headers is cut (node: its headers deadline; uWS: its 10 s idle timer)', { timeout: 30_000 }, async () => {
      const socket = await openSocket(port);
      socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n');
      const started = Date.now();
      const trickle = setInterval(() => socket.writable && socket.write('X-A: b\r\n'), 500);
      try {
        assert.ok(await closedWithin(socket, 20_000), 'the connection was closed');
        const elapsed = Date.now() - started;
        if (engine === 'node') assert.ok(elapsed < 6_000, `cut after ${elapsed} ms (deadline 1.5 s, checked each second)`);
      } finally {
        clearInterval(trickle);
        socket.destroy();
      }
    });

    it('keep-alive: two sequential requests on one connection', async () => {
      const socket = await openSocket(port);
      for (let i = 0; i < 2; i++) {
        const answer = readResponse(socket);
        socket.write('GET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
        assert.equal((await answer).body, 'fast');
      }
      socket.destroy();
    });
  });
}
