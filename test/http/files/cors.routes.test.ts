// CORS on the files node over HTTP (spec §5, notes B.6 `cors.allowedOrigins`): every route, preflights included,
// with what a browser app reads exposed. The browser's own view is test/acceptance/files-browser.test.ts.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestFilesNode, type TestFilesNode } from '../../support/files-node.js';

const APP = 'https://msg.adamant.test';
const KEY = '7d1e4a7f2b9d3e6a0c5f8b1d4e7a2c9f6b3e0d5a8c1f4b7e2d9a6c3f0b5e8d1a';

describe('files CORS over HTTP', () => {
  let node: TestFilesNode;
  let home: string;
  const url = (path: string) => `http://127.0.0.1:${node.port}${path}`;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-cors-'));
    node = await startTestFilesNode(join(home, '.adm-ipfs'), [{ adminApiKey: KEY, cors: { allowedOrigins: [APP, 'https://*.wallet.test'] } }]);
    await node.startupDone;
  });

  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('a preflight of an upload from an allowed origin answers 204 with the allowed methods, headers and max age', async () => {
    for (const path of ['/api/file/upload', '/api/file/bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm', '/api/node/details', '/no/such/path']) {
      const response = await fetch(url(path), { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get('access-control-allow-origin'), APP, path);
      assert.equal(response.headers.get('access-control-allow-methods'), 'GET, POST');
      assert.equal(response.headers.get('access-control-allow-headers'), 'content-type, x-api-key');
      assert.equal(response.headers.get('access-control-max-age'), '600');
      assert.equal(response.headers.get('access-control-allow-credentials'), null, 'no credentials');
      assert.match(response.headers.get('vary') ?? '', /Origin/);
    }
  });

  it('a preflight from an origin not listed gets no CORS header, so the browser refuses', async () => {
    const response = await fetch(url('/api/file/upload'), { method: 'OPTIONS', headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST' } });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), null);
    assert.equal(response.headers.get('access-control-allow-methods'), null);
  });

  it('answers, errors included, carry the origin, Vary and the exposed download headers; wildcards match subdomains', async () => {
    const form = new FormData();
    form.append('files', new Blob([new TextEncoder().encode('cors body')]), 'c.txt');
    const uploaded = await fetch(url('/api/file/upload'), { method: 'POST', body: form, headers: { origin: APP } });
    assert.equal(uploaded.status, 200);
    assert.equal(uploaded.headers.get('access-control-allow-origin'), APP);
    const cid = ((await uploaded.json()) as { cids: string[] }).cids[0]!;

    const download = await fetch(url(`/api/file/${cid}`), { headers: { origin: 'https://a.b.wallet.test' } });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('access-control-allow-origin'), 'https://a.b.wallet.test');
    assert.equal(download.headers.get('vary'), 'Origin');
    const exposed = (download.headers.get('access-control-expose-headers') ?? '').split(', ');
    for (const header of ['content-disposition', 'etag', 'retry-after', 'ratelimit', 'ratelimit-policy']) assert.ok(exposed.includes(header), header);
    assert.equal(await download.text(), 'cors body');

    for (const [path, status] of [
      ['/api/file/not-a-cid', 400],
      ['/no/such/path', 404],
      ['/api/node/details', 401],
    ] as const) {
      const response = await fetch(url(path), { headers: { origin: APP } });
      assert.equal(response.status, status, path);
      assert.equal(response.headers.get('access-control-allow-origin'), APP, `${path}: an error a browser app must be able to read`);
    }
  });

  it('no Origin header, or one not listed: no CORS header at all', async () => {
    assert.equal((await fetch(url('/'))).headers.get('access-control-allow-origin'), null);
    assert.equal((await fetch(url('/'), { headers: { origin: 'https://wallet.test' } })).headers.get('access-control-allow-origin'), null, 'the bare domain of a wildcard');
  });
});
