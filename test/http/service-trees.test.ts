// The supervision trees protect the edge (docs/DESIGN.md rule 4; issue "trees that protect the edge"): in the files and
// transfers services every worker sits in a one_for_one group between the service's resource and its listener; rates
// and the console are one_for_one over independent workers and the listener. So a worker that ends unexpectedly is
// restarted alone. For each worker of each service, while requests are in flight:
// - the listener is never restarted (its inspector record keeps 0 restarts, and a request whose head was half sent
//   before the crash is answered on the same connection after it);
// - an unrelated request in flight finishes (files: a chunked upload sent across the crash answers 200; console: a
//   JSON-RPC call whose body is half sent across the crash is answered from the node);
// - the worker is back (running, its restart counted where the operator tree reads it).
//
// A worker is ended from outside with its actor's stop(): XState gives no way to make a running actor throw, and the
// supervisor's reaction (restart per strategy) is the same for an unexpected exit and a crash, except that a
// transient child (files.reconcile) is restarted only after a crash, so it is left out.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { FILES_CONTENT_ID, FILES_STORE_ID, FILES_DISK_ID, FILES_GC_ID, FILES_HEALTH_ID, FILES_P2P_ID, FILES_REPAIR_ID, FILES_REPLICATION_ID } from '../../actors/files/tree.js';
import type { Runtime } from '../../actors/runtime.js';
import { TRANSFERS_INDEXER_ID, TRANSFERS_SCHEMA_ID } from '../../actors/transfers/api.js';
import { consoleApi, CONSOLE_NODES_ID } from '../../actors/console/api.js';
import { consoleTree } from '../../actors/console/tree.js';
import { RATES_HISTORY_ID, RATES_HTTP_ID, RATES_NOTIFIER_ID, RATES_REFRESH_ID } from '../../actors/rates/ids.js';
import { createRuntime } from '../../actors/runtime.js';
import { Supervisor } from '../../actors/supervisor.js';
import { rpcServer } from '../../http/console/rpc.routes.js';
import { listenerChild } from '../../http/listener.js';
import { systemClock } from '../../src/clock.js';
import { serviceChildren } from '../../src/compose.js';
import { parseConsoleConfig } from '../../src/console/config.js';
import { loadRatesConfig } from '../../src/rates/config-file.js';
import type { HttpJsonClient } from '../../src/rates/sources/source.js';
import { openSqliteHistory } from '../../storage/rates/history.sqlite.js';
import { startFakeAdamantNode, type FakeAdamantNode } from '../support/adamant-node.js';
import { captureLogger } from '../support/logger.js';
import { freePort } from '../support/cli.js';
import { blockCount, startTestFilesNode, type TestFilesNode } from '../support/files-node.js';
import { startTransfersNode, type TestTransfersNode } from '../support/transfers-node.js';
import { waitFor } from '../support/wait.js';

const MIB = 1024 * 1024;

/**
 * A connection holding a half-sent request (`first` written now, `rest` only by finish()): the answer comes only if the
 * same listener reads the rest. By default a GET whose head lacks its final empty line.
 */
async function halfSentRequest(port: number, path: string, parts?: { first: string; rest: string }): Promise<{ socket: Socket; finish(): Promise<string> }> {
  const { first, rest } = parts ?? { first: `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`, rest: '\r\n' };
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(first);
  return {
    socket,
    finish: () =>
      new Promise<string>((resolve, reject) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          const headEnd = text.indexOf('\r\n\r\n');
          if (!/^HTTP\/1\.1 \d{3}/.test(text) || headEnd === -1) return;
          const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd))?.[1];
          if (length === undefined || Buffer.byteLength(text.slice(headEnd + 4), 'latin1') >= Number(length)) resolve(text);
        });
        socket.once('close', () => reject(new Error(`the connection closed before an answer (got ${JSON.stringify(text.slice(0, 80))})`)));
        socket.write(rest);
      }),
  };
}

/** Ends a worker as a crash would, and waits until its supervisor has it running again. */
async function endAndAwaitRestart(runtime: Runtime, systemId: string): Promise<void> {
  const record = runtime.inspector.record(systemId);
  const restarts = record.restarts;
  const actor = runtime.registry.lookup(systemId);
  assert.ok(actor, `${systemId} is registered`);
  actor.stop();
  await waitFor(() => record.restarts === restarts + 1 && record.status === 'running' && runtime.registry.lookup(systemId) !== undefined, {
    what: `${systemId} restarted`,
    timeoutMs: 15_000,
  });
}

describe('files: a worker that ends is restarted alone; the listener and an upload in flight go on', () => {
  let home: string;
  before(() => void (home = mkdtempSync(join(tmpdir(), 'files-tree-'))));
  after(() => rmSync(home, { recursive: true, force: true }));

  // A node per worker: eight restarts in one group within a minute would pass its intensity (5 in 60 s) and take the
  // group down with the listener, as it should for a worker that keeps crashing.
  for (const worker of [FILES_STORE_ID, FILES_CONTENT_ID, FILES_GC_ID, FILES_REPAIR_ID, FILES_DISK_ID, FILES_REPLICATION_ID, FILES_HEALTH_ID, FILES_P2P_ID]) {
    test(worker, { timeout: 60_000 }, async () => {
      const node = await startTestFilesNode(join(home, worker), []);
      try {
        await node.startupDone;
        const pending = await halfSentRequest(node.port, '/api/storage/policy');
        // An upload in flight across the end of the worker, past its disk claim and its first blocks (not for the
        // content actor: the upload is its business).
        const upload = worker === FILES_CONTENT_ID ? undefined : await uploadInFlight(node);
        await endAndAwaitRestart(node.runtime, worker);
        upload?.finish();
        const answer = await pending.finish();
        assert.match(answer, /^HTTP\/1\.1 200 /, 'the half-sent request is answered on the same connection');
        pending.socket.destroy();
        if (upload) {
          const result = await upload.answer;
          assert.equal(result.status, 200, result.text);
          assert.match(result.text, /"cid"/);
        }
        assert.equal(node.runtime.inspector.record('files.http').restarts, 0, 'the listener was never restarted');
        assert.equal(node.runtime.inspector.record('files.runtime').restarts, 0, 'the node was never restarted');
      } finally {
        await node.stop();
      }
    });
  }
});

/** A chunked upload of 2 MiB + 17 bytes, sent up to 1.5 MiB: resolves once its first leaf block is on disk. */
async function uploadInFlight(node: TestFilesNode): Promise<{ finish(): void; answer: Promise<{ status: number; text: string }> }> {
  const bytes = randomBytes(2 * MIB + 17);
  const boundary = '----tree-test';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const blocksBefore = blockCount(node.storeDirectory);
  let finish = () => {};
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: node.port, path: '/api/file/upload', method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.write(Buffer.concat([head, bytes.subarray(0, 1.5 * MIB)]));
    finish = () => req.end(Buffer.concat([bytes.subarray(1.5 * MIB), tail]));
  });
  await waitFor(() => blockCount(node.storeDirectory) > blocksBefore, { what: 'the upload to write its first block', timeoutMs: 10_000 });
  return { finish: () => finish(), answer };
}

describe('transfers: the indexer or the schema cache ends and is restarted alone; the gateway goes on', () => {
  let home: string;
  let node: TestTransfersNode;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'transfers-tree-'));
    // The indexer's node refuses connections: it retries and never ends on its own.
    node = await startTransfersNode({ DATA_DIR: join(home, 'data'), ETH_URL: `http://127.0.0.1:${await freePort()}` });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  for (const worker of [TRANSFERS_INDEXER_ID, TRANSFERS_SCHEMA_ID]) {
    test(worker, { timeout: 60_000 }, async () => {
      const pending = await halfSentRequest(node.port, '/ethtxs?limit=1');
      await endAndAwaitRestart(node.runtime, worker);
      const answer = await pending.finish();
      assert.match(answer, /^HTTP\/1\.1 200 /, 'the half-sent request is answered on the same connection');
      pending.socket.destroy();
      assert.equal(node.runtime.inspector.record('transfers.http').restarts, 0, 'the listener was never restarted');
      assert.equal(node.runtime.inspector.record('transfers.db').restarts, 0, 'the database was never reopened');
    });
  }
});

describe('rates: a worker that ends is restarted alone; the listener goes on', () => {
  let home: string;
  let root: Supervisor;
  let runtime: Runtime;
  let port: number;
  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'rates-tree-'));
    port = await freePort();
    const { config } = loadRatesConfig(undefined, {}, { useDefaults: true });
    runtime = createRuntime(systemClock, captureLogger('warn').logger);
    // No network: every source's request fails at once (the refresh cycle reports it and waits for the next one),
    // and notices are only logged.
    const http: HttpJsonClient = { getJson: () => Promise.reject(new Error('no upstream in this test')) };
    const children = await serviceChildren({ service: 'rates', configPath: undefined, checkConfig: false, migrate: false, host: '127.0.0.1' }, { rates: { ...config, server: { ...config.server, port } } }, undefined, {
      rates: { http, openHistory: async () => openSqliteHistory(join(home, 'history.sqlite')), post: async () => {} },
    });
    root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 1, periodMs: 10_000, children }, runtime);
    await root.start();
  });
  after(async () => {
    root?.shutdown();
    await root?.exited;
    rmSync(home, { recursive: true, force: true });
  });

  for (const worker of [RATES_HISTORY_ID, RATES_NOTIFIER_ID, RATES_REFRESH_ID]) {
    test(worker, { timeout: 60_000 }, async () => {
      const pending = await halfSentRequest(port, '/status');
      await endAndAwaitRestart(runtime, worker);
      const answer = await pending.finish();
      assert.match(answer, /^HTTP\/1\.1 200 /, 'the half-sent request is answered on the same connection');
      assert.match(answer, /"success":true/);
      pending.socket.destroy();
      assert.equal(runtime.inspector.record(RATES_HTTP_ID).restarts, 0, 'the listener was never restarted');
    });
  }
});

describe('console: the node pool ends and is restarted alone; the listener and a call in flight go on', () => {
  let node: FakeAdamantNode;
  let root: Supervisor;
  let runtime: Runtime;
  let port: number;
  before(async () => {
    node = await startFakeAdamantNode({ height: 4242 });
    port = await freePort();
    const parsed = parseConsoleConfig({ networks: { testnet: { nodes: [{ ip: '127.0.0.1', protocol: 'http', port: Number(new URL(node.url).port) }] } }, rpc: { port } }, 'test.jsonc');
    assert.ok(parsed.ok);
    runtime = createRuntime(systemClock, captureLogger('warn').logger);
    const edge = listenerChild('console.http', (rt) => rpcServer(rt, { host: '127.0.0.1', port, api: consoleApi(rt, parsed.config) }));
    root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 1, periodMs: 10_000, children: [consoleTree(parsed.config, { edge: [edge] })] }, runtime);
    await root.start();
  });
  after(async () => {
    root?.shutdown();
    await root?.exited;
    await node?.close();
  });

  test(CONSOLE_NODES_ID, { timeout: 60_000 }, async () => {
    // A JSON-RPC call whose body is half sent across the end of the node pool: answered from the node once it is back.
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 7 });
    const head = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const pending = await halfSentRequest(port, '/', { first: head + body.slice(0, 10), rest: body.slice(10) });
    await endAndAwaitRestart(runtime, CONSOLE_NODES_ID);
    const answer = await pending.finish();
    assert.match(answer, /^HTTP\/1\.1 200 /, 'the half-sent call is answered on the same connection');
    assert.match(answer, /"result":4242/, answer);
    pending.socket.destroy();
    assert.equal(runtime.inspector.record('console.http').restarts, 0, 'the listener was never restarted');
  });
});
