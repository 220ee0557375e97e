// Rate limits and admission limits of the files node over HTTP, on an in-process node (supervisor + real
// helia + content actor + uWS on 127.0.0.1): docs/specs/files-node.md §4.2, §5 last paragraph, §7 429 row, §8;
// notes A.3 (upload evaluation order), A.9, C23, E28.
//
// The main node trusts 127.0.0.1 as its proxy, so each test speaks as its own client through
// `X-Forwarded-For` and starts with fresh buckets; a second node trusts nothing and shows the shared bucket.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { openSocket, readResponse } from '../../support/raw-http.js';
import { waitFor } from '../../support/wait.js';
import { startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';

const KEY = '8c1e4a7f2b9d3e6a0c5f8b1d4e7a2c9f6b3e0d5a8c1f4b7e2d9a6c3f0b5e8d1a';
const MiB = 1024 * 1024;
const RATE_TEXT = 'Too many requests. Please try again later.';

type Node = TestFilesNode;

async function startNode(storeDirectory: string, overrides: Record<string, unknown>): Promise<Node> {
  const node = await startTestFilesNode(storeDirectory, [
    { adminApiKey: KEY, maxFileCount: 3, uploadLimitSizeBytes: 32 * MiB, replication: { placement: [{ minAgeMs: 0, copies: 4 }], ackQuorum: 1 } },
    overrides,
  ]);
  await node.startupDone;
  return node;
}

const url = (node: Node, path: string) => `http://127.0.0.1:${node.port}${path}`;
const concurrency = (node: Node) => node.context().admission.snapshot();

async function upload(node: Node, client: string | undefined, bytes: Buffer = randomBytes(64)) {
  const body = new FormData();
  body.append('files', new Blob([new Uint8Array(bytes)]), 'f.bin');
  const headers: Record<string, string> = client ? { 'x-forwarded-for': client } : {};
  const response = await fetch(url(node, '/api/file/upload'), { method: 'POST', body, headers });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

function get(node: Node, path: string, client: string, headers: Record<string, string> = {}) {
  return fetch(url(node, path), { headers: { 'x-forwarded-for': client, ...headers } });
}

/** An upload whose body is sent only in part: it holds its admission slot until `finish()` or `cut()`. */
async function heldUpload(node: Node, client: string, bytes: Buffer, sentFirst: number) {
  const boundary = 'limitsTestBoundary';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="held.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const socket = await openSocket(node.port);
  const response = readResponse(socket);
  socket.write(
    `POST /api/file/upload HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${client}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${head.length + bytes.length + tail.length}\r\n\r\n`,
  );
  socket.write(head);
  socket.write(bytes.subarray(0, sentFirst));
  return {
    socket,
    finish() {
      socket.write(bytes.subarray(sentFirst));
      socket.write(tail);
      return response;
    },
    cut: () => socket.destroy(),
  };
}

/** A download whose reader stops reading at once: backpressure holds the body (and its slot) open. */
async function stalledDownload(node: Node, client: string, cid: string): Promise<Socket> {
  const socket = await openSocket(node.port);
  socket.pause();
  socket.write(`GET /api/file/${cid} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${client}\r\n\r\n`);
  return socket;
}

function assertRateRefusal(response: { status: number; headers: Headers }, body: unknown, name: string) {
  assert.equal(response.status, 429);
  assert.deepEqual(body, { error: RATE_TEXT });
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After is whole seconds: ${response.headers.get('retry-after')}`);
  assert.match(response.headers.get('ratelimit') ?? '', new RegExp(`^"${name}"; r=0; t=${retryAfter}$`), 'Retry-After is the time left in the window');
  assert.match(response.headers.get('ratelimit-policy') ?? '', new RegExp(`^"${name}"; q=\\d+; w=\\d+$`));
  assert.equal(response.headers.get('x-ratelimit-limit'), null, 'no legacy X-RateLimit-* fields');
}

describe('files node limits over HTTP (trusting 127.0.0.1 as its proxy)', () => {
  let node: Node;
  let home: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-limits-'));
    node = await startNode(join(home, '.adm-ipfs'), {
      trustProxy: ['127.0.0.1'],
      rateLimits: { upload: { windowMs: 600_000, limit: 3 }, read: { windowMs: 600_000, limit: 5 }, pin: { windowMs: 600_000, limit: 1 } },
      storage: { maxRequestSizeBytes: 64 * MiB, maxConcurrentUploads: 1, maxConcurrentDownloads: 4, maxConcurrentDownloadsPerClient: 1 },
    });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('E28: limit + 1 uploads of one client in a window: the last is 429 {error} with Retry-After; other clients are not affected', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const result = await upload(node, '203.0.113.10');
      assert.equal(result.status, 200, JSON.stringify(result.body));
      remaining.push(/r=(\d+)/.exec(result.headers.get('ratelimit') ?? '')?.[1] ?? '?');
    }
    assert.deepEqual(remaining, ['2', '1', '0'], 'allowed answers carry the RateLimit fields too');
    const refused = await upload(node, '203.0.113.10');
    assertRateRefusal(refused, refused.body, 'upload');
    assert.ok(Number(refused.headers.get('retry-after')) <= 600);
    // trustProxy: another forwarded client has its own bucket behind the same proxy.
    assert.equal((await upload(node, '203.0.113.11')).status, 200);
    // A port and another spelling of the same address are the same client.
    assert.equal((await upload(node, '[::ffff:203.0.113.10]:4242')).status, 429);
    assert.deepEqual(concurrency(node).uploads, { active: 0, limit: 1 });
  });

  it('read rate limit: downloads and status reads share one bucket; the next is 429 with Retry-After', async () => {
    const { body } = await upload(node, '203.0.113.20', Buffer.from('read me'));
    const cid = body.cids[0] as string;
    const client = '198.51.100.20';
    for (const path of [`/api/file/${cid}`, `/api/file/${cid}/status`, `/api/file/${cid}`, `/api/file/${cid}/status`, `/api/file/${cid}`]) {
      const response = await get(node, path, client);
      assert.equal(response.status, 200, path);
      await response.arrayBuffer();
    }
    const refused = await get(node, `/api/file/${cid}`, client);
    assertRateRefusal(refused, await refused.json(), 'read');
    const status = await get(node, `/api/file/${cid}/status`, client);
    assertRateRefusal(status, await status.json(), 'read');
    assert.equal((await get(node, `/api/file/${cid}`, '198.51.100.21')).status, 200, 'another client reads on');
    assert.equal(concurrency(node).downloads.active, 0);
  });

  it('read rate limit also covers info, metrics and policy (notes A.9), never health', async () => {
    const client = '198.51.100.40';
    for (const path of ['/api/node/info', '/api/storage/metrics', '/api/storage/policy', '/api/node/info', '/api/storage/metrics']) {
      const response = await get(node, path, client);
      assert.equal(response.status, 200, path);
      await response.arrayBuffer();
    }
    for (const path of ['/api/node/info', '/api/storage/metrics', '/api/storage/policy']) {
      const refused = await get(node, path, client);
      assertRateRefusal(refused, await refused.json(), 'read');
    }
    const health = await get(node, '/api/node/health', client);
    assert.equal(health.status, 200, 'health is never rate limited');
    await health.arrayBuffer();
  });

  it('pin rate limit on POST /api/runtime/pin/:cid (and the /api/helia alias), counted after the key check', async () => {
    const { body } = await upload(node, '203.0.113.30', Buffer.from('pin me'));
    const cid = body.cids[0] as string;
    const client = { 'x-forwarded-for': '198.51.100.30' };
    const noKey = await fetch(url(node, `/api/runtime/pin/${cid}`), { method: 'POST', headers: client });
    assert.equal(noKey.status, 401, 'a caller without the key does not use up the budget');
    const first = await fetch(url(node, `/api/runtime/pin/${cid}`), { method: 'POST', headers: { ...client, 'x-api-key': KEY } });
    assert.equal(first.status, 200);
    assert.match(first.headers.get('ratelimit') ?? '', /^"pin"; r=0; t=\d+$/);
    const second = await fetch(url(node, `/api/helia/pin/${cid}`), { method: 'POST', headers: { ...client, 'x-api-key': KEY } });
    assertRateRefusal(second, await second.json(), 'pin');
  });

  it('upload admission: a second upload while one streams is 429 "Too many concurrent uploads" with Retry-After: 5; the slot comes back', async () => {
    const bytes = randomBytes(3 * MiB);
    const held = await heldUpload(node, '203.0.113.40', bytes, MiB);
    try {
      await waitFor(() => concurrency(node).uploads.active === 1, { what: 'the held upload to take the slot' });
      const refused = await upload(node, '203.0.113.41');
      assert.equal(refused.status, 429);
      assert.deepEqual(refused.body, { error: 'Too many concurrent uploads' });
      assert.equal(refused.headers.get('retry-after'), '5');
      const done = await held.finish();
      assert.equal(done.status, 200, done.body);
      assert.equal(JSON.parse(done.body).filesNames[0], 'held.bin');
      await waitFor(() => concurrency(node).uploads.active === 0, { what: 'the slot to be given back' });
      assert.equal((await upload(node, '203.0.113.41')).status, 200, 'uploads are admitted again');
    } finally {
      held.socket.destroy();
    }
  });

  it('upload admission: a client that disconnects mid-body gives its slot back', async () => {
    const held = await heldUpload(node, '203.0.113.50', randomBytes(2 * MiB), MiB);
    try {
      await waitFor(() => concurrency(node).uploads.active === 1, { what: 'the held upload to take the slot' });
      held.cut();
      await waitFor(() => concurrency(node).uploads.active === 0, { what: 'the aborted upload to give its slot back' });
      assert.equal((await upload(node, '203.0.113.50')).status, 200);
    } finally {
      held.socket.destroy();
    }
  });

  it('download admission: per client, a second download while one streams is 429 with Retry-After: 5; the slot comes back on disconnect', async () => {
    const big = await upload(node, '203.0.113.60', randomBytes(24 * MiB));
    assert.equal(big.status, 200, JSON.stringify(big.body));
    const small = await upload(node, '203.0.113.60', Buffer.from('small file'));
    const [bigCid, smallCid] = [big.body.cids[0] as string, small.body.cids[0] as string];
    const stalled = await stalledDownload(node, '198.51.100.60', bigCid);
    try {
      await waitFor(() => concurrency(node).downloads.active === 1, { what: 'the stalled download to take a slot' });
      const refused = await get(node, `/api/file/${smallCid}`, '198.51.100.60');
      assert.equal(refused.status, 429);
      assert.deepEqual(await refused.json(), { error: 'Too many concurrent downloads' });
      assert.equal(refused.headers.get('retry-after'), '5');
      const other = await get(node, `/api/file/${smallCid}`, '198.51.100.61');
      assert.equal(other.status, 200, 'another client is under its own limit and the global one');
      assert.equal(await other.text(), 'small file');
      assert.equal(concurrency(node).downloads.active, 1, 'the stalled body still holds its slot');
      stalled.destroy();
      await waitFor(() => concurrency(node).downloads.active === 0, { what: 'the disconnected download to give its slot back' });
      const again = await get(node, `/api/file/${smallCid}`, '198.51.100.60');
      assert.equal(again.status, 200);
      await again.arrayBuffer();
    } finally {
      stalled.destroy();
    }
  });

  it('download slots come back after a full body, a 304 and a 408', async () => {
    const client = '198.51.100.70';
    const { body } = await upload(node, '203.0.113.70', randomBytes(2 * MiB + 5));
    const cid = body.cids[0] as string;
    const full = await get(node, `/api/file/${cid}`, client);
    assert.equal((await full.arrayBuffer()).byteLength, 2 * MiB + 5);
    await waitFor(() => concurrency(node).downloads.active === 0, { what: 'the completed download to give its slot back' });
    const cached = await get(node, `/api/file/${cid}`, client, { 'if-none-match': `"${cid}"` });
    assert.equal(cached.status, 304);
    assert.match(cached.headers.get('ratelimit') ?? '', /^"read"; r=3; t=\d+$/);
    assert.equal(concurrency(node).downloads.active, 0);
    const unknown = CID.createV1(raw.code, await sha256.digest(randomBytes(32))).toString();
    const timedOut = await get(node, `/api/file/${unknown}`, client);
    assert.equal(timedOut.status, 408);
    await timedOut.arrayBuffer();
    assert.equal(concurrency(node).downloads.active, 0);
    // Per-client limit 1: had any of them kept its slot, this would be 429.
    assert.equal((await get(node, `/api/file/${cid}`, client, { 'if-none-match': `"${cid}"` })).status, 304);
  });
});

describe('files node limits with no proxy trusted', () => {
  let node: Node;
  let home: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-limits-untrusted-'));
    node = await startNode(join(home, '.adm-ipfs'), { rateLimits: { upload: { windowMs: 600_000, limit: 2 } } });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('spec §5: X-Forwarded-For is ignored, so every client behind the proxy shares its bucket', async () => {
    assert.equal((await upload(node, '203.0.113.1')).status, 200);
    assert.equal((await upload(node, '203.0.113.2')).status, 200);
    const refused = await upload(node, '203.0.113.3');
    assertRateRefusal(refused, refused.body, 'upload');
    assert.equal((await upload(node, undefined)).status, 429, 'the socket address is the key');
  });
});
