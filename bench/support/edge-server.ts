// One side of the edge benchmark (bench/edge.bench.ts), in its own process (started with an IPC channel, like
// bench/support/transfers-server.ts), so that its CPU time is its own: the load generator runs in a worker thread
// of the bench's process and nothing else runs here.
//
// - `uws`, `node`: the HTTP edge (http/server.ts, HttpServer) on that engine, two routes written once:
//   `GET /small` answers the small JSON body with a JSON content type from a handler (the synchronous fast path),
//   `GET /stream` answers STREAM_BYTES through the `stream` reply, in STREAM_CHUNK_BYTES chunks (tryEnd/onWritable
//   backpressure).
// - `bare`: a plain node:http server answering the same bytes with no edge code: `/small` with `res.end(body)`,
//   `/stream` written in the same chunks with `res.write` and its `drain` backpressure. It is the baseline.
//
// The stream's bytes are one preallocated buffer, so no side allocates or fills a body per request.
//
// Protocol: the parent sends one `EdgeServerSetup`; this process answers `{ ok: true, port, engine, node }` once it
// listens (`engine`: what `server.engine` says, `bare` for the baseline; `node`: this process's Node version), or
// `{ ok: false, unavailable }` when the side is `uws` and uWS's native binary cannot load here (http/engine.ts
// uwsAvailable(): no binary for this Node's ABI, e.g. Node 22 and 24; the parent then stops it), or
// `{ ok: false, error }`. It exits on SIGTERM/SIGINT or when the parent goes away.

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMALL_BODY, SMALL_CONTENT_TYPE, SMALL_PATH, STREAM_CHUNK_BYTES, STREAM_CONTENT_TYPE, STREAM_PATH, streamBody } from './edge-answers.js';
import { exitWithParent } from './processes.js';

export type EdgeSide = 'uws' | 'node' | 'bare';

export interface EdgeServerSetup {
  readonly side: EdgeSide;
}

export type EdgeServerAnswer =
  | { readonly ok: true; readonly port: number; readonly engine: string; readonly node: string }
  /** The side cannot run in this process: why (uWS's binary is missing for this Node). */
  | { readonly ok: false; readonly unavailable: string }
  | { readonly ok: false; readonly error: string };

const HOST = '127.0.0.1';

/** Why uWS cannot run in this process, or undefined when its native binary loaded. */
async function uwsUnavailable(): Promise<string | undefined> {
  const { uwsAvailable, uwsOrThrow } = await import('../../http/engine.js');
  if (uwsAvailable()) return undefined;
  try {
    uwsOrThrow();
    return 'uWebSockets.js is not available';
  } catch (error) {
    return (error as Error).message;
  }
}

async function startEdge(engine: 'uws' | 'node', stream: Buffer): Promise<{ port: number; engine: string }> {
  const { HttpServer } = await import('../../http/server.js');
  const { createLogger } = await import('../../src/logger.js');
  const server = new HttpServer({
    name: `bench-edge-${engine}`,
    host: HOST,
    port: 0,
    engine,
    logger: createLogger({ level: 'warn' }),
    mapError: () => ({ status: 500, headers: { 'content-type': SMALL_CONTENT_TYPE }, body: '{"ok":false}' }),
    notFound: () => ({ status: 404, headers: { 'content-type': SMALL_CONTENT_TYPE }, body: '{"ok":false}' }),
  });
  const smallHeaders = { 'content-type': SMALL_CONTENT_TYPE };
  server.route('get', SMALL_PATH, () => ({ status: 200, headers: smallHeaders, body: SMALL_BODY }));
  const streamHeaders = { 'content-type': STREAM_CONTENT_TYPE };
  server.route('get', STREAM_PATH, () => ({
    status: 200,
    headers: streamHeaders,
    stream: {
      length: stream.length,
      chunks: (async function* () {
        for (let offset = 0; offset < stream.length; offset += STREAM_CHUNK_BYTES) yield stream.subarray(offset, offset + STREAM_CHUNK_BYTES);
      })(),
    },
  }));
  const port = await server.listen();
  return { port, engine: server.engine };
}

/** Writes `body` in STREAM_CHUNK_BYTES chunks, waiting for `drain` whenever node:http's buffer is full. */
function writeChunks(res: ServerResponse, body: Buffer): void {
  let offset = 0;
  const next = (): void => {
    while (offset < body.length) {
      const chunk = body.subarray(offset, offset + STREAM_CHUNK_BYTES);
      offset += chunk.length;
      if (offset >= body.length) {
        res.end(chunk);
        return;
      }
      if (!res.write(chunk)) {
        res.once('drain', next);
        return;
      }
    }
  };
  next();
}

async function startBare(stream: Buffer): Promise<{ port: number; engine: string }> {
  const small = Buffer.from(SMALL_BODY);
  const smallLength = String(small.length);
  const streamLength = String(stream.length);
  const server = createServer((req, res) => {
    if (req.url === SMALL_PATH) {
      res.writeHead(200, ['content-type', SMALL_CONTENT_TYPE, 'content-length', smallLength]);
      res.end(small);
    } else if (req.url === STREAM_PATH) {
      res.writeHead(200, ['content-type', STREAM_CONTENT_TYPE, 'content-length', streamLength]);
      writeChunks(res, stream);
    } else {
      res.writeHead(404, ['content-length', '0']);
      res.end();
    }
  });
  // The closed-loop client keeps every connection busy, but never let a default timeout close one.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
  return { port, engine: 'bare' };
}

async function start(side: EdgeSide): Promise<EdgeServerAnswer> {
  if (side === 'uws') {
    const unavailable = await uwsUnavailable();
    if (unavailable !== undefined) return { ok: false, unavailable };
  }
  const stream = streamBody();
  const { port, engine } = side === 'bare' ? await startBare(stream) : await startEdge(side, stream);
  return { ok: true, port, engine, node: process.version };
}

exitWithParent('edge-server.js');
process.once('message', (message: EdgeServerSetup) => {
  start(message.side).then(
    (answer) => process.send!(answer),
    (error: unknown) => {
      process.send!({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies EdgeServerAnswer);
      process.exit(1);
    },
  );
});
