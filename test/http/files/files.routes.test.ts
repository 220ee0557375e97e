// The files node in-process: supervisor + runtime (real helia) + content actor + the uWS listener on
// 127.0.0.1, exercised over HTTP (docs/specs/files-node.md §4.1, §4.2, §5, §7; notes E).

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { homeWithOriginalStore, originalStoreManifest } from '../../support/fixtures.js';
import { rawRequest } from '../../support/raw-http.js';
import { waitFor } from '../../support/wait.js';
import { blockCount, startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';

const KEY = '3f9a1c7e5b2d8064a9e1f3c5b7d9e0a2c4f6b8d0e2a4c6e8f0b2d4f6a8c0e2b4';
const README = Buffer.from('Hello ipfs-node!\n');
const README_CID = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

type Node = TestFilesNode;

const startNode = (storeDirectory: string, overrides: Record<string, unknown> = {}) =>
  startTestFilesNode(storeDirectory, [
    {
      adminApiKey: KEY,
      maxFileCount: 3,
      uploadLimitSizeBytes: 4 * 1024 * 1024,
      storage: { maxRequestSizeBytes: 8 * 1024 * 1024 },
      replication: { placement: [{ minAgeMs: 0, copies: 4 }], ackQuorum: 1 },
    },
    overrides,
  ]);

const url = (node: Node, path: string) => `http://127.0.0.1:${node.port}${path}`;

function form(files: Array<{ field?: string; name: string; bytes: Buffer }>, fields: Record<string, string> = {}): FormData {
  const body = new FormData();
  for (const [key, value] of Object.entries(fields)) body.append(key, value);
  for (const file of files) body.append(file.field ?? "files", new Blob([new Uint8Array(file.bytes)]), file.name);
  return body;
}

async function upload(node: Node, body: FormData) {
  const response = await fetch(url(node, '/api/file/upload'), { method: 'POST', body });
  return { status: response.status, body: (await response.json()) as any };
}

describe('files node over HTTP', () => {
  let node: Node;
  let home: string;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-http-'));
    node = await startNode(join(home, '.adm-ipfs'));
    await node.startupDone;
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('E1/E3: GET / answers IPFS node; unknown paths answer 404 {error}', async () => {
    const root = await fetch(url(node, '/'));
    assert.equal(await root.text(), 'IPFS node');
    const missing = await fetch(url(node, '/no/such/route'));
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: 'Not found' });
    assert.equal(missing.headers.get('x-powered-by'), null);
  });

  it('E19/E21/E22: an upload gives the original CID and the full result shape', async () => {
    const { status, body } = await upload(node, form([{ name: 'file.txt', bytes: README }]));
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(body.filesNames, ['file.txt']);
    assert.deepEqual(body.cids, [README_CID]);
    const file = body.files[0];
    assert.deepEqual(Object.keys(file), ['cid', 'name', 'state', 'expiresAt', 'replication']);
    assert.equal(file.state, 'confirmed');
    assert.equal(file.expiresAt, null);
    assert.deepEqual(Object.keys(file.replication).sort(), [
      'acknowledged', 'attempts', 'cachedCount', 'copies', 'desiredCopies', 'failedAttemptCount', 'mode', 'networkTooSmall', 'replicaCount', 'required', 'satisfied',
    ]);
    assert.deepEqual(body.replication, file.replication);
    assert.equal(file.replication.networkTooSmall, true);
    assert.equal(file.replication.acknowledged, 1);
    const status2 = await fetch(url(node, `/api/file/${README_CID}/status`));
    const statusBody = (await status2.json()) as any;
    assert.equal(statusBody.pinned, true);
    assert.equal(statusBody.replication.heldLocally, true);
    assert.ok(!JSON.stringify(statusBody).includes('file.txt'), 'no filename in the status');
  });

  it('E33/E35: a download has the exact headers and bytes; If-None-Match answers 304 with no body', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 77);
    const { body } = await upload(node, form([{ name: 'big.bin', bytes }]));
    const cid = body.cids[0];
    const response = await fetch(url(node, `/api/file/${cid}`), { headers: { range: 'bytes=0-10' } });
    assert.equal(response.status, 200, 'Range is ignored');
    assert.equal(response.headers.get('content-type'), 'application/octet-stream');
    assert.equal(response.headers.get('content-disposition'), `attachment; filename="${cid}"`);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(response.headers.get('etag'), `"${cid}"`);
    assert.equal(response.headers.get('cache-control'), 'private, max-age=3600, must-revalidate');
    assert.equal(response.headers.get('accept-ranges'), 'none');
    assert.equal(response.headers.get('content-length'), String(bytes.length));
    assert.ok(Buffer.from(await response.arrayBuffer()).equals(bytes));
    const cached = await fetch(url(node, `/api/file/${cid}`), { headers: { 'if-none-match': `W/"${cid}"` } });
    assert.equal(cached.status, 304);
    assert.equal((await cached.arrayBuffer()).byteLength, 0);
    assert.equal(cached.headers.get('etag'), `"${cid}"`);
  });

  it('E37/E38: an invalid CID is 400; an unretrievable one is 408 after the discovery deadline, never 404', async () => {
    for (const path of ['/api/file/not-a-cid', '/api/file/not-a-cid/status']) {
      const response = await fetch(url(node, path));
      assert.equal(response.status, 400, path);
      assert.deepEqual(await response.json(), { error: 'Invalid CID' });
    }
    const confirm = await fetch(url(node, '/api/file/not-a-cid/confirm'), { method: 'POST', headers: { 'x-api-key': KEY } });
    assert.equal(confirm.status, 400);
    const unknown = CID.createV1(raw.code, await sha256.digest(randomBytes(64))).toString();
    const started = Date.now();
    const response = await fetch(url(node, `/api/file/${unknown}`));
    assert.equal(response.status, 408);
    assert.deepEqual(await response.json(), { error: 'File request timed out' });
    assert.ok(Date.now() - started >= 650, 'answered after the discovery deadline');
    assert.equal((await fetch(url(node, `/api/file/${unknown}/status`))).status, 404);
  });

  it('E41/E44: confirm and unpin need the key; unpin expires the file but it still downloads', async () => {
    assert.equal((await fetch(url(node, `/api/file/${README_CID}/unpin`), { method: 'POST' })).status, 401);
    assert.equal((await fetch(url(node, `/api/file/${README_CID}/unpin`), { method: 'POST', headers: { 'x-api-key': 'x'.repeat(64) } })).status, 401);
    const unknown = CID.createV1(raw.code, await sha256.digest(randomBytes(8))).toString();
    assert.equal((await fetch(url(node, `/api/file/${unknown}/confirm`), { method: 'POST', headers: { 'x-api-key': KEY } })).status, 404);
    const unpinned = await fetch(url(node, `/api/file/${README_CID}/unpin`), { method: 'POST', headers: { 'x-api-key': KEY } });
    assert.equal(unpinned.status, 200);
    const status = (await unpinned.json()) as any;
    assert.equal(status.state, 'expired');
    assert.equal(status.pinned, false);
    const download = await fetch(url(node, `/api/file/${README_CID}`));
    assert.equal(download.status, 200, 'blocks stay until collected');
    assert.equal(await download.text(), README.toString());
    // E60: the operator pin route registers it as confirmed again.
    const repin = await fetch(url(node, `/api/runtime/pin/${README_CID}`), { method: 'POST', headers: { 'x-api-key': KEY } });
    assert.equal(repin.status, 200);
    const after = (await (await fetch(url(node, `/api/file/${README_CID}/status`))).json()) as any;
    assert.equal(after.state, 'confirmed');
    assert.equal(after.pinned, true);
    const pins = (await (await fetch(url(node, '/api/runtime/pins'), { headers: { 'x-api-key': KEY } })).json()) as any;
    assert.ok(pins.pins.some((p: any) => p.cid === README_CID));
    assert.equal((await fetch(url(node, `/api/runtime/routing/findProviders/${README_CID}`), { headers: { 'x-api-key': KEY } })).status, 404);
  });

  it('E23–E26 and 413: every upload refusal, and none leaves a block behind', async () => {
    const before = blockCount(node.storeDirectory);
    const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, string]> = [
      ['no file', () => upload(node, form([], { note: 'x' })), 400, 'Unexpected field'],
      ['empty form', () => upload(node, form([])), 400, 'No file uploaded'],
      ['text field next to a file', () => upload(node, form([{ name: 'a.bin', bytes: randomBytes(1000) }], { comment: 'hi' })), 400, 'Unexpected field'],
      ['wrong part name', () => upload(node, form([{ field: 'other', name: 'a.bin', bytes: randomBytes(1000) }])), 400, 'Unexpected field'],
      ['too many files', () => upload(node, form([1, 2, 3, 4].map((i) => ({ name: `${i}.bin`, bytes: randomBytes(500 + i) })))), 400, 'File limit exceeded. Max 3 allowed.'],
      ['file above the limit', () => upload(node, form([{ name: 'big.bin', bytes: randomBytes(4 * 1024 * 1024 + 1) }])), 400, 'File too large'],
      ['request above the limit', () => upload(node, form([{ name: 'a.bin', bytes: randomBytes(3 * 1024 * 1024) }, { name: 'b.bin', bytes: randomBytes(3 * 1024 * 1024) }, { name: 'c.bin', bytes: randomBytes(3 * 1024 * 1024) }])), 413, 'Request too large'],
    ];
    for (const [name, run, status, error] of cases) {
      const result = await run();
      assert.equal(result.status, status, name);
      assert.deepEqual(result.body, { error }, name);
    }
    assert.equal(blockCount(node.storeDirectory), before, 'refused uploads removed every block they wrote');
  });

  it('bad percent-encoding in a path or query is a 4xx {error}, never a 500 (issue 15)', async () => {
    // A CID path parameter is parsed as sent (never percent-decoded), so an escape of any kind is an invalid CID;
    // query strings decode like the original's (URLSearchParams: a malformed escape stays literal, bad UTF-8 is
    // U+FFFD). Sent on a raw socket: fetch would re-encode some targets.
    const admin = { 'x-api-key': KEY };
    const cases: Array<{ method: string; target: string; headers?: Record<string, string>; status: number; error?: string }> = [
      { method: 'GET', target: '/api/file/%zz', status: 400, error: 'Invalid CID' },
      { method: 'GET', target: '/api/file/%FF%FE', status: 400, error: 'Invalid CID' },
      { method: 'GET', target: '/api/file/%E0%A4%A', status: 400, error: 'Invalid CID' },
      { method: 'GET', target: `/api/file/${README_CID}%zz`, status: 400, error: 'Invalid CID' },
      { method: 'GET', target: '/api/file/%zz/status', status: 400, error: 'Invalid CID' },
      { method: 'GET', target: '/api/file/%FF%FE/status?x=%zz', status: 400, error: 'Invalid CID' },
      { method: 'POST', target: '/api/file/%zz/confirm', headers: admin, status: 400, error: 'Invalid CID' },
      { method: 'POST', target: '/api/file/%FF/unpin', headers: admin, status: 400, error: 'Invalid CID' },
      { method: 'POST', target: '/api/runtime/pin/%E0%A4%A', headers: admin, status: 400, error: 'Invalid CID' },
      { method: 'GET', target: '/api/runtime/pins/isPinned/%zz', headers: admin, status: 400, error: 'Invalid CID' },
      { method: 'GET', target: '/api/p2p/connections?peerId=%zz', headers: admin, status: 400, error: 'Invalid peerId' },
      { method: 'GET', target: '/api/p2p/connections?peerId=%FF%FE', headers: admin, status: 400, error: 'Invalid peerId' },
      { method: 'GET', target: '/%zz', status: 404, error: 'Not found' },
      { method: 'GET', target: '/api/%FF%FE/file', status: 404, error: 'Not found' },
      // Query junk beside a valid flag: the run stays a dry run (the flag is the literal `true`, decoded or not).
      { method: 'POST', target: '/api/storage/gc?dryRun=true&force=%zz&%FF=%E0%A4%A', headers: admin, status: 200 },
      { method: 'POST', target: '/api/storage/gc?dryRun=tru%65', headers: admin, status: 200 },
      { method: 'GET', target: '/api/node/info?%zz=%FF', status: 200 },
      { method: 'GET', target: '/api/storage/policy?%E0%A4%A', status: 200 },
    ];
    for (const { method, target, headers, status, error } of cases) {
      const answer = await rawRequest(node.port, method, target, headers);
      const label = `${method} ${target}: ${answer.status} ${answer.body}`;
      assert.equal(answer.status, status, label);
      if (error !== undefined) assert.deepEqual(JSON.parse(answer.body), { error }, label);
      else if (status >= 400) assert.deepEqual(Object.keys(JSON.parse(answer.body) as object), ['error'], label);
      if (target.startsWith('/api/storage/gc')) assert.equal((JSON.parse(answer.body) as { dryRun?: unknown }).dryRun, true, label);
    }
    assert.equal((await fetch(url(node, `/api/file/${README_CID}/status`))).status, 200, 'still serving');
  });

  it('an upload aborted by the client leaves no blocks', async () => {
    const before = blockCount(node.storeDirectory);
    const boundary = 'xyzBOUNDARY';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="cut.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const socket = connect(node.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /api/file/upload HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${6 * 1024 * 1024}\r\n\r\n${head}`);
    socket.write(randomBytes(2 * 1024 * 1024 + 5));
    await waitFor(() => blockCount(node.storeDirectory) > before, { what: 'blocks written by the partial upload' });
    socket.destroy();
    await waitFor(() => blockCount(node.storeDirectory) === before, { what: 'the session rolled its blocks back' });
  });
});

test('drop-in: an original ipfs-node store is registered by the startup walk and serves every file', async () => {
  const manifest = originalStoreManifest();
  const home = homeWithOriginalStore();
  const node = await startNode(join(home, manifest.storeFolder));
  try {
    await node.startupDone;
    for (const file of manifest.files) {
      const status = await fetch(url(node, `/api/file/${file.cid}/status`));
      assert.equal(status.status, 200, file.name);
      const body = (await status.json()) as any;
      assert.equal(body.state, 'confirmed');
      assert.equal(body.pinned, true);
      const download = await fetch(url(node, `/api/file/${file.cid}`));
      const bytes = Buffer.from(await download.arrayBuffer());
      assert.equal(bytes.length, file.size, file.name);
      assert.equal(createHash('sha256').update(bytes).digest('hex'), file.sha256, file.name);
    }
  } finally {
    await node.stop();
    rmSync(home, { recursive: true, force: true });
  }
});

test('lifecycle changes racing over HTTP (confirm, unpin, operator pin, forced collector runs) leave each record and its pin in agreement', async () => {
  // The one writer of file records (actors/files/file-records.ts) through the routes a client uses: whatever order
  // the requests land in, every one is answered, and at the end the status a client reads (`pinned`) is what the
  // node's pin set says (isPinned asks for the root pin).
  const home = mkdtempSync(join(tmpdir(), 'files-race-'));
  const node = await startNode(join(home, '.adm-ipfs'), { storage: { confirmationRequired: true } });
  const admin = { 'x-api-key': KEY };
  try {
    await node.startupDone;
    const files = Array.from({ length: 3 }, (_, index) => ({ name: `race-${index}.bin`, bytes: randomBytes(64 * 1024 + index) }));
    const { status, body } = await upload(node, form(files));
    assert.equal(status, 200, JSON.stringify(body));
    const cids: string[] = body.cids;
    const requests: Array<Promise<{ what: string; status: number }>> = [];
    const post = (what: string, path: string) => requests.push(fetch(url(node, path), { method: 'POST', headers: admin }).then(async (response) => (await response.arrayBuffer(), { what, status: response.status })));
    // A fixed interleaving, three rounds over every file, with two forced collector runs among them.
    for (let round = 0; round < 3; round++) {
      for (const cid of cids) {
        post(`confirm ${cid}`, `/api/file/${cid}/confirm`);
        post(`unpin ${cid}`, `/api/file/${cid}/unpin`);
        post(`pin ${cid}`, `/api/runtime/pin/${cid}`);
      }
      if (round < 2) post('gc', '/api/storage/gc?force=true');
    }
    for (const { what, status: answered } of await Promise.all(requests)) {
      // A collector run that finds another one running is refused (409). An unpin always succeeds. A confirm or pin
      // that lands after a forced run collected the unpinned file's blocks must fetch them, and no peer has them:
      // it times out (408, spec §4.2) and changes nothing.
      if (what === 'gc') assert.ok(answered === 200 || answered === 409, `${what}: ${answered}`);
      else if (what.startsWith('unpin')) assert.equal(answered, 200, what);
      else assert.ok(answered === 200 || answered === 408, `${what}: ${answered}`);
    }
    for (const cid of cids) {
      const fileStatus = (await (await fetch(url(node, `/api/file/${cid}/status`))).json()) as any;
      const pinned = (await (await fetch(url(node, `/api/runtime/pins/isPinned/${cid}`), { headers: admin })).json()) as any;
      assert.equal(fileStatus.pinned, pinned.isPinned, `${cid}: the record says pinned=${fileStatus.pinned}, the pin set ${pinned.isPinned}`);
      assert.ok(['confirmed', 'expired'].includes(fileStatus.state), fileStatus.state);
    }
  } finally {
    await node.stop();
    rmSync(home, { recursive: true, force: true });
  }
});
