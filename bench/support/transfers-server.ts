// One side of the transfers query benchmark, in its own process (started by bench/transfers.bench.ts with an IPC
// channel, like bench/support/baseline.server.ts), so each side's CPU is its own and the load generator's process
// does nothing else:
//
// - `gateway`:  the real transfers service, gateway only (INDEXER=false), in this process through
//               test/support/transfers-node.ts, on a free loopback port, over the given PostgreSQL database;
// - `baseline`: a plain node:http server running the same reads as plain SQL (bench/support/transfers-queries.ts)
//               through a pg.Pool of the same size, rows parsed by pg and serialized with JSON.stringify.
//
// Protocol: the parent sends one `TransfersServerSetup`, this process answers `{ ok: true, port }` once it serves
// (the gateway: once /aval answers 200), or `{ ok: false, error }`. It exits on SIGTERM/SIGINT or when the parent
// goes away.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { exitWithParent } from './processes.js';
import { baselineStatement } from './transfers-queries.js';

export interface TransfersServerSetup {
  readonly kind: 'gateway' | 'baseline';
  readonly dbUrl: string;
  /** Connections to PostgreSQL (the gateway's PGRST_DB_POOL). */
  readonly pool: number;
}

export type TransfersServerAnswer = { readonly ok: true; readonly port: number } | { readonly ok: false; readonly error: string };

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 30_000;

async function startBaseline(setup: TransfersServerSetup): Promise<number> {
  const pool = new pg.Pool({ connectionString: setup.dbUrl, max: setup.pool, application_name: 'adm-infra bench baseline' });
  pool.on('error', () => undefined);
  const server = createServer((req, res) => {
    const statement = baselineStatement(req.url ?? '');
    if (statement === undefined) {
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
      res.end('{"message":"unknown path"}');
      return;
    }
    pool.query({ text: statement.text, values: statement.values as unknown[] }).then(
      (result) => {
        const body = JSON.stringify(result.rows);
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
      (error: Error) => {
        const body = JSON.stringify({ message: error.message });
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      },
    );
  });
  // The closed-loop client keeps every connection busy, but never let a default timeout close one.
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  // Connect the pool's connections before the first measured request (the gateway's pool is warm too by then).
  await Promise.all(Array.from({ length: setup.pool }, () => pool.query('SELECT 1')));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port));
  });
}

async function startGateway(setup: TransfersServerSetup): Promise<number> {
  // Imported here: the baseline process must not load the service.
  const { startTransfersNode } = await import('../../test/support/transfers-node.js');
  const node = await startTransfersNode({ PGRST_DB_URI: setup.dbUrl, INDEXER: 'false', PGRST_DB_POOL: String(setup.pool) });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  for (;;) {
    try {
      const response = await fetch(`${node.url}/aval`, { signal: AbortSignal.timeout(5_000) });
      const text = await response.text();
      if (response.status === 200) return node.port;
      last = `${response.status} ${text.slice(0, 200)}`;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`the gateway did not answer /aval with 200 within ${READY_TIMEOUT_MS} ms (last: ${last})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

exitWithParent('transfers-server.js');
process.once('message', (setup: TransfersServerSetup) => {
  (setup.kind === 'gateway' ? startGateway(setup) : startBaseline(setup)).then(
    (port) => process.send!({ ok: true, port } satisfies TransfersServerAnswer),
    (error: unknown) => {
      process.send!({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies TransfersServerAnswer);
      process.exit(1);
    },
  );
});
