// Uploads on slow uplinks (issue 14 item 2): a body slower than uWS's ~16 KB/s re-arm rate still completes, because
// the edge keeps its own deadlines (idle, whole request, a floor against trickles) and re-arms uWS's 10 s idle timer
// meanwhile. A body that misses a deadline answers 408, its connection is closed and its session rolled back.
// Raw sockets pace the bytes; every wait is bounded.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { blockCount, startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';
import { closedWithin, filePart, openSocket, readResponse, sleep } from '../../support/raw-http.js';
import { waitFor } from '../../support/wait.js';

const KiB = 1024;
const BOUNDARY = 'slowBoundary';
const TIMED_OUT = JSON.stringify({ error: 'Request timed out' });

/**
 * Sends one file of `size` bytes as an upload, `bytesPerSecond` at a time in quarter-second steps after the first
 * `stallAfter` bytes stop (if given). Resolves with the answer, or rejects when the connection closes without one.
 */
async function pacedUpload(port: number, size: number, bytesPerSecond: number, stallAfter = Infinity) {
  const head = Buffer.from(`--${BOUNDARY}\r\n${filePart('slow.bin')}\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const content = randomBytes(size);
  const socket = await openSocket(port);
  const answer = readResponse(socket, 120_000);
  let stop = false;
  void answer.finally(() => (stop = true));
  socket.write(
    `POST /api/file/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${head.length + size + tail.length}\r\n\r\n`,
  );
  socket.write(head);
  const step = Math.max(1, Math.floor(bytesPerSecond / 4));
  const started = Date.now();
  void (async () => {
    for (let sent = 0; sent < size && !stop && !socket.destroyed; sent += step) {
      if (sent >= stallAfter) return;
      socket.write(content.subarray(sent, Math.min(size, sent + step)));
      await sleep(250);
    }
    if (!stop && !socket.destroyed) socket.write(tail);
  })();
  return { socket, answer, started };
}

describe('upload deadlines on slow uplinks', () => {
  let home: string;
  const nodes: TestFilesNode[] = [];

  before(() => {
    home = mkdtempSync(join(tmpdir(), 'files-slow-'));
  });

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(home, { recursive: true, force: true });
  });

  async function startNode(name: string, overrides: Record<string, unknown>) {
    const node = await startTestFilesNode(join(home, name), [{ uploadLimitSizeBytes: 1024 * KiB, rateLimits: { upload: { windowMs: 60_000, limit: 1000 } } }, overrides]);
    nodes.push(node);
    await node.startupDone;
    return node;
  }

  it('24 KiB at 2 KiB/s (12 s, past uWS idle timer of 10 s) is stored, and the connection stays usable', async () => {
    const node = await startNode('defaults', {});
    const { socket, answer, started } = await pacedUpload(node.port, 24 * KiB, 2 * KiB);
    try {
      const response = await answer;
      assert.equal(response.status, 200, response.body);
      assert.ok(Date.now() - started >= 10_000, 'the body really took longer than uWS idle timer');
      assert.equal(JSON.parse(response.body).files.length, 1);
      // Keep-alive: the same connection answers the next request.
      const next = readResponse(socket);
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal((await next).body, 'IPFS node');
    } finally {
      socket.destroy();
    }
  });

  it('a body under the floor (1 KiB/s against 4 KiB per 2 s) answers 408, closes the connection and keeps no block', async () => {
    const node = await startNode('floor', { uploadMinBytes: 4 * KiB, uploadMinBytesWindowMs: 2_000 });
    const before = blockCount(node.storeDirectory);
    const { socket, answer } = await pacedUpload(node.port, 64 * KiB, 1 * KiB);
    const response = await answer;
    assert.equal(response.status, 408);
    assert.equal(response.body, TIMED_OUT);
    assert.ok(await closedWithin(socket, 5_000), 'the server closed the connection');
    await waitFor(() => blockCount(node.storeDirectory) === before, { what: 'no block kept' });
    assert.equal((await fetch(`http://127.0.0.1:${node.port}/`)).status, 200);
  });

  it('a body that stalls answers 408 after the idle deadline', async () => {
    const node = await startNode('idle', { uploadIdleTimeout: 2_000, uploadMinBytes: 0 });
    const { socket, answer, started } = await pacedUpload(node.port, 1000 * KiB, 400 * KiB, 300 * KiB);
    const response = await answer;
    assert.equal(response.status, 408);
    assert.equal(response.body, TIMED_OUT);
    assert.ok(Date.now() - started >= 2_000);
    assert.ok(await closedWithin(socket, 5_000), 'the server closed the connection');
  });

  it('a body that keeps coming past the whole-request deadline answers 408', async () => {
    const node = await startNode('total', { uploadMaxDurationMs: 3_000 });
    const { socket, answer, started } = await pacedUpload(node.port, 64 * KiB, 8 * KiB);
    const response = await answer;
    assert.equal(response.status, 408);
    assert.ok(Date.now() - started >= 3_000 && Date.now() - started < 8_000, `answered after ${Date.now() - started} ms`);
    assert.ok(await closedWithin(socket, 5_000), 'the server closed the connection');
  });
});
