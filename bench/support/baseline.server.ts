// The baseline servers of a throughput benchmark, in their own process (started by bench/support/baseline.ts):
//
// - `http`: a plain node:http server answering each known path with the exact status, headers and body
//   captured from the service under test (Node adds its own framing: Content-Length, Connection,
//   Keep-Alive and, when the service sent one, Date);
// - `replay`: a bare uWebSockets.js app answering each known path with the same status, headers and
//   body from memory, with no application code at all. It is the ceiling of this machine + load generator
//   + uWS build: the service cannot be faster, and a service near it was limited by the generator.
//   uWS is the edge's own load of its native binary (http/engine.ts), never the package's entry, which on a
//   Node without a binary (22, 24) returns a JavaScript imitation on node:http: there the replay is not
//   started and `replayUnavailable` says why.
//
// Protocol over the IPC channel: the parent sends one `BaselineSetup`, this process answers `BaselinePorts`.
// It exits on SIGTERM/SIGINT or when the parent goes away.

import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uwsAvailable, uwsOrThrow } from '../../http/engine.js';
import { exitWithParent } from './processes.js';

export interface CapturedResponse {
  readonly path: string;
  readonly status: number;
  /** Header name/value pairs as the service sent them, framing headers removed. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly sendDate: boolean;
  /** Base64 of the body. */
  readonly body: string;
}

export interface BaselineSetup {
  readonly responses: readonly CapturedResponse[];
}

export interface BaselinePorts {
  readonly httpPort: number;
  /** The bare-uWS replay's port; absent where uWS's native binary cannot load (`replayUnavailable`). */
  readonly replayPort?: number;
  /** Why there is no replay (uWebSockets.js is not available on this Node). */
  readonly replayUnavailable?: string;
}

const HOST = '127.0.0.1';
/** Headers uWS writes itself. */
const UWS_OWN = new Set(['uwebsockets', 'date']);

function listen(server: ReturnType<typeof createHttpServer>): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}

async function start(setup: BaselineSetup): Promise<BaselinePorts> {
  const routes = new Map(
    setup.responses.map((r) => [r.path, { status: r.status, headers: r.headers.flatMap(([k, v]) => [k, v]), body: Buffer.from(r.body, 'base64'), sendDate: r.sendDate }]),
  );
  const http = createHttpServer((req, res) => {
    const route = routes.get(req.url ?? '');
    if (route === undefined) {
      res.writeHead(404, { 'content-length': 0 });
      res.end();
      return;
    }
    res.sendDate = route.sendDate;
    res.writeHead(route.status, [...route.headers, 'content-length', String(route.body.length)]);
    res.end(route.body);
  });
  // The closed-loop client keeps every connection busy, but never let a default timeout close one.
  http.keepAliveTimeout = 60_000;
  http.headersTimeout = 61_000;
  const httpPort = await listen(http);

  if (!uwsAvailable()) {
    let reason = 'uWebSockets.js is not available';
    try {
      uwsOrThrow();
    } catch (error) {
      reason = (error as Error).message;
    }
    return { httpPort, replayUnavailable: reason };
  }
  const uWS = uwsOrThrow();
  const replay = uWS.App();
  replay.any('/*', (res, req) => {
    const query = req.getQuery();
    const route = routes.get(query ? `${req.getUrl()}?${query}` : req.getUrl());
    if (route === undefined) {
      res.writeStatus('404 Not Found').end();
      return;
    }
    res.writeStatus(String(route.status));
    for (let i = 0; i < route.headers.length; i += 2) if (!UWS_OWN.has(route.headers[i]!.toLowerCase())) res.writeHeader(route.headers[i]!, route.headers[i + 1]!);
    res.end(route.body);
  });
  const replayPort = await new Promise<number>((resolve, reject) =>
    replay.listen(HOST, 0, (socket) => (socket ? resolve(uWS.us_socket_local_port(socket)) : reject(new Error('uWS replay: cannot listen')))),
  );
  return { httpPort, replayPort };
}

exitWithParent('baseline.server.js');
process.once('message', (message: BaselineSetup) => {
  start(message).then(
    (ports) => process.send!({ ok: true, ports }),
    (error: unknown) => {
      process.send!({ ok: false, error: error instanceof Error ? error.message : String(error) });
      process.exit(1);
    },
  );
});
