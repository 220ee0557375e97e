// The operator listener's inspection socket (`GET /inspect/ws`, issue 31) on both engines, with real clients: Stately's
// own `createWebSocketReceiver` (@statelyai/inspect) follows the actors (the present, then a state change); a missing
// or wrong key is refused before the upgrade; a reader that never reads is dropped past its backlog bound while the
// listener goes on serving HTTP; a peer that answers no ping is cut; inbound messages are ignored and bounded; a
// burst of events past the log's bound closes the socket; closing the listener closes the sockets; malformed
// handshakes get a 4xx.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { createWebSocketReceiver } from '@statelyai/inspect';
import WebSocket from 'ws';
import { CLOSE_EVENTS_LOST } from '../../http/admin/inspect.js';
import { ENGINE_NAMES, uwsAvailable } from '../../http/engine.js';
import { CLOSE_GOING_AWAY } from '../../http/websocket.js';
import { ADMIN_TEST_KEY as KEY, withAdmin } from '../support/admin-listener.js';
import { closedWithin, openSocket, readResponse, sleep, type RawResponse } from '../support/raw-http.js';
import { waitFor } from '../support/wait.js';

interface InspectionMessage {
  readonly type: string;
  readonly sessionId: string;
  readonly name?: string;
  readonly event?: { readonly type: string };
  readonly snapshot?: { readonly status?: string; readonly value?: unknown };
}

/** An opening handshake sent by hand; `headers` replace or (with undefined) remove the valid defaults. */
async function handshake(port: number, path: string, headers: Record<string, string | undefined> = {}, method = 'GET'): Promise<{ socket: Socket; response: RawResponse }> {
  const all: Record<string, string | undefined> = {
    host: `127.0.0.1:${port}`,
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-version': '13',
    'sec-websocket-key': randomBytes(16).toString('base64'),
    ...headers,
  };
  const socket = await openSocket(port);
  const lines = Object.entries(all).filter(([, value]) => value !== undefined);
  socket.write(`${method} ${path} HTTP/1.1\r\n${lines.map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n`);
  return { socket, response: await readResponse(socket) };
}

/** RFC 6455 §4.2.2: the accept value a server must answer `key` with. */
const acceptOf = (key: string) => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

const socketUrl = (port: number, key = KEY) => `ws://127.0.0.1:${port}/inspect/ws?key=${encodeURIComponent(key)}`;

for (const engine of ENGINE_NAMES) {
  // The fallback run (ADM_HTTP_UWS=missing, .ci/run) has no uWS engine.
  const skip = engine === 'uws' && !uwsAvailable() ? 'uWebSockets.js cannot load in this process' : false;
  describe(`GET /inspect/ws on the ${engine} engine`, { skip, timeout: 120_000 }, () => {
    it("Stately's createWebSocketReceiver gets every live actor, then the worker's state change", async () => {
      await withAdmin(
        KEY,
        async (port, _get, runtime, server) => {
          assert.equal(server.engine, engine);
          const received: InspectionMessage[] = [];
          createWebSocketReceiver({ server: socketUrl(port) }).subscribe((event) => void received.push(event as unknown as InspectionMessage));
          const session = runtime.inspector.get('svc.worker')!.sessionId!;
          await waitFor(() => received.some((e) => e.type === '@xstate.snapshot' && e.sessionId === session), { timeoutMs: 10_000, what: 'the present' });
          const actors = received.filter((e) => e.type === '@xstate.actor').map((e) => e.name);
          assert.deepEqual(actors, ['root', 'svc', 'svc.worker'], 'supervisors first, each followed by its children');
          const worker = received.find((e) => e.type === '@xstate.actor' && e.name === 'svc.worker')!;
          assert.equal(worker.sessionId, session);
          assert.deepEqual(received.find((e) => e.type === '@xstate.snapshot' && e.sessionId === session)!.snapshot, { status: 'active', value: 'pinged' });

          // Nobody polls GET /inspect: the open socket alone keeps the recording on.
          const before = received.length;
          runtime.registry.lookup('svc.worker')!.send({ type: 'reset' });
          await waitFor(() => received.some((e) => e.type === '@xstate.snapshot' && e.event?.type === 'reset'), { timeoutMs: 10_000, what: 'the state change' });
          const change = received.slice(before);
          assert.deepEqual(
            change.map((e) => [e.type, e.sessionId, e.event?.type]),
            [
              ['@xstate.event', session, 'reset'],
              ['@xstate.snapshot', session, 'reset'],
            ],
          );
          assert.equal(change[1]!.snapshot!.value, 'waiting');
        },
        { engine },
      );
    });

    it('a missing or wrong key is 401 and opens no socket; without a configured key 503; the right key in a header or the query upgrades', async () => {
      await withAdmin(
        KEY,
        async (port) => {
          for (const path of ['/inspect/ws', `/inspect/ws?key=${KEY}x`, `/inspect/ws?key=${KEY.slice(1)}`]) {
            const { socket, response } = await handshake(port, path);
            assert.equal(response.status, 401, path);
            assert.deepEqual(JSON.parse(response.body), { error: 'Unauthorized' });
            assert.equal(response.header('sec-websocket-accept'), undefined);
            socket.destroy();
          }
          const wrongHeader = await handshake(port, '/inspect/ws', { 'x-api-key': 'nope' });
          assert.equal(wrongHeader.response.status, 401);
          wrongHeader.socket.destroy();
          // A real client sees the refusal as the handshake's answer.
          const refused = new WebSocket(socketUrl(port, 'wrong'));
          refused.on('error', () => undefined);
          const status = await new Promise<number>((resolve) => refused.on('unexpected-response', (_request, response) => resolve(response.statusCode!)));
          refused.terminate();
          assert.equal(status, 401);

          for (const [path, headers] of [
            [`/inspect/ws?key=${KEY}`, {}],
            ['/inspect/ws', { 'x-api-key': KEY }],
          ] as const) {
            const key = randomBytes(16).toString('base64');
            const { socket, response } = await handshake(port, path, { 'sec-websocket-key': key, ...headers });
            assert.equal(response.status, 101, path);
            assert.equal(response.header('sec-websocket-accept'), acceptOf(key));
            socket.destroy();
          }
        },
        { engine },
      );
      await withAdmin(
        undefined,
        async (port) => {
          const { socket, response } = await handshake(port, `/inspect/ws?key=${KEY}`);
          assert.equal(response.status, 503);
          socket.destroy();
        },
        { engine },
      );
    });

    it('malformed handshakes get a 4xx, an Upgrade elsewhere is answered as HTTP, and the listener keeps serving', async () => {
      await withAdmin(
        KEY,
        async (port, get) => {
          const path = `/inspect/ws?key=${KEY}`;
          const cases: ReadonlyArray<{ name: string; headers: Record<string, string | undefined>; status: number; header?: [string, string] }> = [
            { name: 'short key', headers: { 'sec-websocket-key': 'short' }, status: 400 },
            // 24 characters, so uWS hands it to the upgrade handler, which checks it.
            { name: '24 characters, not base64', headers: { 'sec-websocket-key': '!'.repeat(24) }, status: 400 },
            { name: 'no key', headers: { 'sec-websocket-key': undefined }, status: 400 },
            { name: 'version 8', headers: { 'sec-websocket-version': '8' }, status: 426, header: ['sec-websocket-version', '13'] },
            { name: 'no version', headers: { 'sec-websocket-version': undefined }, status: 426 },
            { name: 'no Upgrade header', headers: { upgrade: undefined, connection: 'keep-alive' }, status: 426, header: ['upgrade', 'websocket'] },
            { name: 'Upgrade: h2c', headers: { upgrade: 'h2c' }, status: 426 },
          ];
          for (const { name, headers, status, header } of cases) {
            const { socket, response } = await handshake(port, path, headers);
            assert.equal(response.status, status, `${name}: ${response.head}`);
            assert.equal(response.header('sec-websocket-accept'), undefined, name);
            if (header) assert.equal(response.header(header[0]), header[1], name);
            socket.destroy();
          }
          // POST with a handshake: not an upgrade on either engine, and no route.
          const post = await handshake(port, '/inspect/ws', { 'x-api-key': KEY }, 'POST');
          assert.deepEqual([post.response.status, JSON.parse(post.response.body)], [404, { error: 'Not found' }], post.response.head);
          post.socket.destroy();
          // A handshake to a path that is no WebSocket route is an ordinary request there.
          const elsewhere = await handshake(port, '/actors', { 'x-api-key': KEY });
          assert.equal(elsewhere.response.status, 200, elsewhere.response.head);
          assert.equal(JSON.parse(elsewhere.response.body).roots[0].systemId, 'root');
          elsewhere.socket.destroy();
          assert.equal((await get('/actors', KEY)).status, 200);
        },
        { engine },
      );
    });

    it('a reader that never reads is dropped once its backlog passes the bound; one that reads keeps up; HTTP is served meanwhile', async () => {
      await withAdmin(
        KEY,
        async (port, get, runtime) => {
          // A reader that reads, through the whole flood.
          const reader = new WebSocket(socketUrl(port));
          let notes = 0;
          reader.on('message', (data) => {
            const event = JSON.parse(String(data)) as InspectionMessage;
            if (event.type === '@xstate.event' && event.event?.type === 'note') notes++;
          });
          await new Promise((resolve, reject) => reader.once('open', resolve).once('error', reject));
          const stuck = await handshake(port, `/inspect/ws?key=${KEY}`);
          assert.equal(stuck.response.status, 101);
          // Never read again: the kernel's buffers fill, then the listener's backlog for this socket.
          stuck.socket.pause();
          const worker = runtime.registry.lookup('svc.worker')!;
          const text = 'x'.repeat(16 * 1024);
          let dropped = false;
          let sent = 0;
          // Bounded: at most 4 000 notes of 16 KiB (64 MiB of messages, far past any kernel buffer plus the 256 KiB
          // bound), and 30 s; a dropped reader may take CLOSE_GRACE_MS to be cut.
          const deadline = Date.now() + 30_000;
          while (!dropped && Date.now() < deadline) {
            if (sent < 4_000) for (let i = 0; i < 50; i++) worker.send({ type: 'note', text: `${sent++}${text}` });
            await sleep(50);
            // Room for two sockets: a third is let in once the stuck one is gone.
            const next = await handshake(port, `/inspect/ws?key=${KEY}`);
            next.socket.destroy();
            if (next.response.status === 101) dropped = true;
            else assert.equal(next.response.status, 503, next.response.head);
            assert.equal((await get('/actors', KEY)).status, 200, 'HTTP goes on while the reader is stuck');
          }
          assert.ok(dropped, `the stuck reader still held its slot after ${sent} messages of 16 KiB`);
          assert.ok(await closedWithin(stuck.socket.resume(), 10_000), 'the stuck socket was closed');
          await waitFor(() => notes === sent, { timeoutMs: 10_000, what: `the reading client to get all ${sent} notes (has ${notes})` });
          assert.equal(reader.readyState, WebSocket.OPEN, 'the reader that reads is still open');
          reader.terminate();
        },
        { engine, inspectSocket: { maxSockets: 2, maxBacklogBytes: 256 * 1024 } },
      );
    });

    it('a peer that answers no ping is cut after the idle timeout; one that answers stays', async () => {
      await withAdmin(
        KEY,
        async (port) => {
          const live = new WebSocket(socketUrl(port));
          await new Promise((resolve, reject) => live.once('open', resolve).once('error', reject));
          let liveClosed = false;
          live.on('close', () => (liveClosed = true));
          // The raw socket reads what it is sent, pings included, and never answers.
          const { socket, response } = await handshake(port, `/inspect/ws?key=${KEY}`);
          assert.equal(response.status, 101);
          socket.on('data', () => undefined);
          const started = Date.now();
          assert.ok(await closedWithin(socket, 30_000), 'the silent peer was cut');
          const elapsed = Date.now() - started;
          assert.ok(elapsed >= 6_000, `cut after ${elapsed} ms (idle timeout 8 s)`);
          assert.equal(liveClosed, false, 'the peer that answers pings is still open');
          live.terminate();
        },
        { engine, inspectSocket: { idleTimeoutSeconds: 8 } },
      );
    });

    it('what a client sends is ignored, a message over 1 KiB closes it; a burst past the log closes it with 1013', async () => {
      await withAdmin(
        KEY,
        async (port, get, runtime) => {
          const open = async () => {
            const client = new WebSocket(socketUrl(port));
            const closed = new Promise<number>((resolve) => client.once('close', (code) => resolve(code)));
            await new Promise((resolve, reject) => client.once('open', resolve).once('error', reject));
            return { client, closed };
          };
          const talker = await open();
          talker.client.send('x'.repeat(1024));
          await sleep(100);
          assert.equal(talker.client.readyState, WebSocket.OPEN, 'a message within the limit is dropped, the socket stays');
          talker.client.send('x'.repeat(1025));
          // `ws` closes with 1009 (message too big); uWS cuts the connection without a close frame (1006 at the client).
          assert.equal(await talker.closed, engine === 'node' ? 1009 : 1006);

          const follower = await open();
          // More events in one turn than the log keeps (each note is an event and a snapshot).
          const worker = runtime.registry.lookup('svc.worker')!;
          for (let i = 0; i < 1_100; i++) worker.send({ type: 'note', text: String(i) });
          assert.equal(await follower.closed, CLOSE_EVENTS_LOST);
          assert.equal((await get('/actors', KEY)).status, 200);
        },
        { engine },
      );
    });

    it('closing the listener closes the sockets with 1001', async () => {
      await withAdmin(
        KEY,
        async (port, get, _runtime, server) => {
          const client = new WebSocket(socketUrl(port));
          await new Promise((resolve, reject) => client.once('open', resolve).once('error', reject));
          const closed = new Promise<{ code: number; reason: string }>((resolve) => client.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
          assert.equal((await get('/actors', KEY)).status, 200);
          const started = Date.now();
          await server.close();
          const { code, reason } = await closed;
          assert.deepEqual([code, reason], [CLOSE_GOING_AWAY, 'server closing']);
          assert.ok(Date.now() - started < 4_000, 'the close did not wait out the drain time');
        },
        { engine },
      );
    });
  });
}
