// POST /api/storage/gc against a real in-process node (supervisor + helia + files actors + uWS on 127.0.0.1):
// docs/specs/files-node.md §2.8, §4.3, §9.6; docs/notes/files-node.md A.4, C3, E46-E48, E50. Three nodes, one after the
// other: A (scheduled collection off, no pressure), B (small watermarks), C (a collector scheduled every second).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import { waitFor } from '../../support/wait.js';
import { startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';

const KEY = '3f9a1c7e5b2d8064a9e1f3c5b7d9e0a2c4f6b8d0e2a4c6e8f0b2d4f6a8c0e2b4';
const ADMIN = { 'x-api-key': KEY };
const MIB = 1024 * 1024;

type Node = TestFilesNode;

async function startNode(home: string, overrides: Record<string, unknown>): Promise<Node> {
  const node = await startTestFilesNode(join(home, '.adm-ipfs'), [
    {
      adminApiKey: KEY,
      maxFileCount: 3,
      uploadLimitSizeBytes: 4 * MIB,
      // Generous limits: these tests upload and download more than the default per-client budgets allow.
      rateLimits: { upload: { windowMs: 900_000, limit: 1_000 }, read: { windowMs: 60_000, limit: 1_000 }, pin: { windowMs: 900_000, limit: 1_000 } },
      storage: { maxRequestSizeBytes: 8 * MIB, confirmationRequired: true },
    },
    overrides,
  ]);
  await node.startupDone;
  return node;
}

const url = (node: Node, path: string) => `http://127.0.0.1:${node.port}${path}`;

async function upload(node: Node, name: string, bytes: Buffer): Promise<{ cid: string; expiresAt: number | null; state: string }> {
  const body = new FormData();
  body.append('files', new Blob([new Uint8Array(bytes)]), name);
  const response = await fetch(url(node, '/api/file/upload'), { method: 'POST', body });
  const json = (await response.json()) as any;
  assert.equal(response.status, 200, JSON.stringify(json));
  return json.files[0];
}

async function gc(node: Node, query = '', headers: Record<string, string> = ADMIN): Promise<{ status: number; body: any }> {
  const response = await fetch(url(node, `/api/storage/gc${query}`), { method: 'POST', headers });
  return { status: response.status, body: await response.json() };
}

async function status(node: Node, cid: string): Promise<any> {
  return (await fetch(url(node, `/api/file/${cid}/status`))).json();
}

async function download(node: Node, cid: string): Promise<{ status: number; bytes: Buffer }> {
  const response = await fetch(url(node, `/api/file/${cid}`));
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

function blockFiles(node: Node): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.data')) files.push(path);
    }
  };
  walk(join(node.storeDirectory, 'blockstore'));
  return files.sort();
}

const blockstoreBytes = (node: Node) => blockFiles(node).reduce((sum, path) => sum + statSync(path).size, 0);

/** The blockstore lists blocks by multihash (CIDv0 for sha2-256): compare on the multihash. */
const sameBlock = (a: string, b: string) => Buffer.from(CID.parse(a).multihash.bytes).equals(Buffer.from(CID.parse(b).multihash.bytes));

const REPORT_KEYS = [
  'startedAt',
  'durationMs',
  'dryRun',
  'collected',
  'trigger',
  'blockstoreBytesBefore',
  'estimatedBytesAfter',
  'releasedCids',
  'retainedCids',
  'demoted',
  'removedBlocks',
  'removedCids',
  'repairedPins',
  'unprotected',
  'errors',
];

describe('POST /api/storage/gc (scheduled collection disabled, no pressure)', () => {
  let home: string;
  let node: Node;
  let expiredTemp: { cid: string; bytes: Buffer };

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'gc-http-'));
    node = await startNode(home, { storage: { temporaryTtlMs: 1_000, gc: { enabled: false } } });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('E47: needs the key, answers 200 with every report field while scheduled collection is off; only `true` is true', async () => {
    assert.equal((await gc(node, '?dryRun=true', {})).status, 401);
    assert.equal((await gc(node, '?dryRun=true', { 'x-api-key': 'x'.repeat(64) })).status, 401);
    const response = await fetch(url(node, '/api/storage/gc?dryRun=true'), { method: 'POST', headers: ADMIN });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const report = (await response.json()) as any;
    assert.deepEqual(Object.keys(report), REPORT_KEYS);
    assert.equal(report.dryRun, true);
    assert.equal(report.collected, false);
    assert.equal(report.trigger, 'none');
    assert.ok(Number.isInteger(report.blockstoreBytesBefore) && Number.isInteger(report.estimatedBytesAfter) && Number.isInteger(report.removedBlocks));
    for (const list of ['releasedCids', 'retainedCids', 'demoted', 'removedCids', 'repairedPins', 'unprotected', 'errors']) assert.ok(Array.isArray(report[list]), list);
    // `TRUE` and `yes` are not the literal `true`: a real run, not forced (nothing stored yet, so harmless).
    const literal = await gc(node, '?dryRun=TRUE&force=yes');
    assert.equal(literal.status, 200);
    assert.equal(literal.body.dryRun, false);
    assert.equal(literal.body.trigger, 'none');
  });

  it('TTL expiry: a dry run lists the expired temporary and touches no block; a real run expires and unpins it', async () => {
    const bytes = randomBytes(MIB + 4_321);
    const file = await upload(node, 'temp.bin', bytes);
    assert.equal(file.state, 'temporary');
    expiredTemp = { cid: file.cid, bytes };
    await waitFor(() => Date.now() > file.expiresAt! + 20, { what: 'the TTL to run out' });
    const blocksBefore = blockFiles(node);

    const preview = await gc(node, '?dryRun=true&force=true');
    assert.equal(preview.status, 200);
    assert.deepEqual(preview.body.releasedCids, [file.cid]);
    assert.ok(!preview.body.retainedCids.includes(file.cid));
    assert.equal(preview.body.removedBlocks, 0);
    assert.deepEqual(blockFiles(node), blocksBefore, 'a dry run touches no block, even forced');
    const still = await status(node, file.cid);
    assert.equal(still.state, 'temporary', 'a dry run changes no record');
    assert.equal(still.pinned, true);

    const run = await gc(node);
    assert.equal(run.status, 200);
    assert.equal(run.body.dryRun, false);
    assert.deepEqual(run.body.releasedCids, [file.cid]);
    assert.equal(run.body.trigger, 'none');
    assert.equal(run.body.collected, false);
    assert.deepEqual(blockFiles(node), blocksBefore, 'releasing is not deleting');
    const expired = await status(node, file.cid);
    assert.equal(expired.state, 'expired');
    assert.equal(expired.pinned, false);
    assert.equal(expired.replication.heldLocally, false);
    const again = await download(node, file.cid);
    assert.equal(again.status, 200, 'blocks stay until collected');
    assert.ok(again.bytes.equals(bytes));
  });

  it('E46: a forced run never removes confirmed files; unpinned blocks go and their files then answer 408', async () => {
    const keptBytes = randomBytes(2 * MIB + 99);
    const kept = await upload(node, 'kept.bin', keptBytes);
    const confirm = await fetch(url(node, `/api/file/${kept.cid}/confirm`), { method: 'POST', headers: ADMIN });
    assert.equal(confirm.status, 200);
    const goneBytes = randomBytes(5_000);
    const gone = await upload(node, 'gone.bin', goneBytes);
    const unpinned = await fetch(url(node, `/api/file/${gone.cid}/unpin`), { method: 'POST', headers: ADMIN });
    assert.equal(unpinned.status, 200);
    const beforeBytes = blockstoreBytes(node);

    const run = await gc(node, '?force=true');
    assert.equal(run.status, 200);
    assert.equal(run.body.trigger, 'force');
    assert.equal(run.body.collected, true);
    assert.deepEqual(run.body.errors, []);
    assert.deepEqual(run.body.demoted, []);
    assert.ok(run.body.retainedCids.includes(kept.cid), 'the confirmed file is retained');
    assert.ok(!run.body.releasedCids.includes(kept.cid));
    // The small file is one raw block; the expired temporary of the previous test has three (two leaves + root).
    assert.equal(run.body.removedBlocks, 4);
    assert.equal(run.body.removedCids.length, 4);
    assert.ok(run.body.removedCids.some((cid: string) => sameBlock(cid, gone.cid)));
    assert.ok(run.body.removedCids.some((cid: string) => sameBlock(cid, expiredTemp.cid)));
    assert.ok(run.body.removedCids.every((cid: string) => cid.startsWith('Qm')), 'blocks are listed by multihash (CIDv0)');
    assert.equal(run.body.blockstoreBytesBefore, beforeBytes);
    assert.equal(run.body.estimatedBytesAfter, blockstoreBytes(node), 'before minus the bytes deleted');

    const keptDownload = await download(node, kept.cid);
    assert.equal(keptDownload.status, 200);
    assert.ok(keptDownload.bytes.equals(keptBytes));
    const keptStatus = await status(node, kept.cid);
    assert.equal(keptStatus.state, 'confirmed');
    assert.equal(keptStatus.pinned, true);
    for (const cid of [gone.cid, expiredTemp.cid]) {
      const response = await fetch(url(node, `/api/file/${cid}`));
      assert.equal(response.status, 408, 'collected content is not retrievable (never 404)');
      assert.deepEqual(await response.json(), { error: 'File request timed out' });
    }
  });

  it('E48 + lease: a forced run waits for an upload in flight, an overlapping one answers 409, and the upload is intact', async () => {
    const bytes = randomBytes(3 * MIB + 123);
    const boundary = '----gc-lease-test';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const blocksBefore = blockFiles(node).length;
    let uploadDoneAt = 0;
    let finishUpload!: () => void;
    const uploaded = new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: node.port, path: '/api/file/upload', method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            uploadDoneAt = Date.now();
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) });
          });
        },
      );
      req.on('error', reject);
      req.write(Buffer.concat([head, bytes.subarray(0, 2 * MIB + 10)]));
      finishUpload = () => req.end(Buffer.concat([bytes.subarray(2 * MIB + 10), tail]));
    });
    // Two 1 MiB leaves on disk, not pinned yet: the upload holds the shared lease.
    await waitFor(() => blockFiles(node).length >= blocksBefore + 2, { what: 'the upload to write its first blocks', timeoutMs: 10_000 });

    let firstDoneAt = 0;
    const first = gc(node, '?force=true').then((result) => ((firstDoneAt = Date.now()), result));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await gc(node, '?force=true');
    assert.equal(second.status, 409);
    assert.deepEqual(second.body, { error: 'Garbage collection is already running' });
    assert.equal(firstDoneAt, 0, 'the first run is still waiting for the upload');

    finishUpload();
    const result = await uploaded;
    assert.equal(result.status, 200, JSON.stringify(result.body));
    const firstResult = await first;
    assert.equal(firstResult.status, 200);
    assert.equal(firstResult.body.collected, true);
    assert.ok(firstDoneAt >= uploadDoneAt, 'the collector ran after the upload committed');

    const cid = result.body.cids[0];
    const fetched = await download(node, cid);
    assert.equal(fetched.status, 200);
    assert.ok(fetched.bytes.equals(bytes), 'no block of the upload was collected');
    assert.equal((await status(node, cid)).pinned, true);
  });
});

describe('POST /api/storage/gc above the high watermark', () => {
  let home: string;
  let node: Node;
  const LOW = 2 * MIB;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'gc-watermark-'));
    node = await startNode(home, { storage: { temporaryTtlMs: 3_600_000, gc: { enabled: false, highWatermarkBytes: 4 * MIB, lowWatermarkBytes: LOW } } });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('releases the oldest temporaries until the estimate is below the low watermark, never the confirmed one, and deletes that much', async () => {
    const confirmedBytes = randomBytes(MIB / 2);
    const durable = await upload(node, 'durable.bin', confirmedBytes);
    assert.equal((await fetch(url(node, `/api/file/${durable.cid}/confirm`), { method: 'POST', headers: ADMIN })).status, 200);
    const temps: Array<{ cid: string; bytes: Buffer }> = [];
    for (let i = 0; i < 3; i++) {
      const bytes = randomBytes(Math.round(1.2 * MIB));
      temps.push({ cid: (await upload(node, `t${i}.bin`, bytes)).cid, bytes });
      await new Promise((resolve) => setTimeout(resolve, 5)); // distinct createdAt: oldest first is well defined
    }
    const before = blockstoreBytes(node);
    assert.ok(before > 4 * MIB, `above the high watermark (${before})`);

    const preview = await gc(node, '?dryRun=true');
    assert.equal(preview.body.trigger, 'highWatermark');
    assert.deepEqual(preview.body.releasedCids, [temps[0]!.cid, temps[1]!.cid], 'the two oldest temporaries cover the need');
    assert.ok(preview.body.estimatedBytesAfter < LOW);
    assert.equal(blockstoreBytes(node), before);

    const run = await gc(node);
    assert.equal(run.status, 200);
    assert.equal(run.body.trigger, 'highWatermark');
    assert.equal(run.body.collected, true);
    assert.deepEqual(run.body.releasedCids, [temps[0]!.cid, temps[1]!.cid]);
    assert.deepEqual(run.body.retainedCids, [durable.cid, temps[2]!.cid].sort());
    assert.ok(run.body.removedBlocks >= 1);
    const after = blockstoreBytes(node);
    assert.ok(after < LOW, `evicted below the low watermark (${after})`);
    assert.equal(run.body.estimatedBytesAfter, after);
    for (const kept of [{ cid: durable.cid, bytes: confirmedBytes }, temps[2]!]) {
      const fetched = await download(node, kept.cid);
      assert.equal(fetched.status, 200);
      assert.ok(fetched.bytes.equals(kept.bytes));
    }
    assert.equal((await status(node, temps[0]!.cid)).state, 'expired');
  });
});

describe('the scheduled collector', () => {
  let home: string;
  let node: Node;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'gc-scheduled-'));
    node = await startNode(home, { storage: { temporaryTtlMs: 300, gc: { enabled: true, schedule: '* * * * * *' } } });
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('expires temporaries on its schedule and publishes its last run in the storage metrics (E50)', async () => {
    const file = await upload(node, 'short.bin', randomBytes(2_000));
    await waitFor(async () => (await status(node, file.cid)).state === 'expired', { what: 'a scheduled run to expire the file', timeoutMs: 8_000, intervalMs: 100 });
    const metrics = (await (await fetch(url(node, '/api/storage/metrics'))).json()) as any;
    assert.equal(metrics.gc.enabled, true);
    assert.equal(metrics.gc.schedule, '* * * * * *');
    assert.ok(metrics.gc.lastRun, 'a run is shown');
    assert.equal(metrics.gc.lastRun.dryRun, false);
    assert.ok(Array.isArray(metrics.gc.lastRun.errors));
    assert.ok(!JSON.stringify(metrics).includes(file.cid), 'no CID in public metrics');
  });
});
