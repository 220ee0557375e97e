// The files node as a browser app on another origin uses it (issue 14 item 1; docs/specs/files-node.md §5, notes B.6):
// the built CLI runs `adm-infra files` as a real process, two small page servers on other loopback ports play the
// ADAMANT web messenger's origin (listed in `cors.allowedOrigins`) and a stranger's (not listed), and Debian's
// Chromium, driven by playwright-core, runs `fetch` in each page. The browser itself enforces CORS: what the page
// can and cannot read is the contract, not our reading of the headers.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort, startCli, type CliProcess } from '../support/cli.js';
import { filesCliConfig } from '../support/files-config.js';
import { CHROMIUM_EXECUTABLE, chromiumPackage, skipWithout } from '../support/system-packages.js';

const CHROMIUM = CHROMIUM_EXECUTABLE;
const KEY = 'browser-test-admin-key-0123456789abcdef0123';

/** A page server: one empty HTML page, so scripts run with this server's origin. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const port = await freePort();
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>app</title><p>app</p>');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${port}` };
}

const skip = skipWithout(chromiumPackage(CHROMIUM), 'the files browser test (test/acceptance/files-browser.test.ts)');

describe('files node from a browser page on another origin (headless Chromium)', { timeout: 120_000, skip }, () => {
  let home: string;
  let node: CliProcess | undefined;
  let browser: Browser | undefined;
  let nodeBase: string;
  const pages: Server[] = [];
  let app: { origin: string; page: Page };
  let stranger: { origin: string; page: Page };

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is not installed at ${CHROMIUM}: run 'apt-get install -y --no-install-recommends chromium' (.ci/run does this on CI)`);
    home = mkdtempSync(join(tmpdir(), 'files-browser-'));
    const appPages = await pageServer();
    const strangerPages = await pageServer();
    pages.push(appPages.server, strangerPages.server);
    const port = await freePort();
    nodeBase = `http://127.0.0.1:${port}`;
    const config = filesCliConfig(port, { adminApiKey: KEY, cors: { allowedOrigins: [appPages.origin, 'https://*.adamant.test'] } });
    writeFileSync(join(home, 'config.json5'), JSON.stringify(config));
    node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home });
    await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--disable-dev-shm-usage'] });
    app = { origin: appPages.origin, page: await browser.newPage() };
    stranger = { origin: strangerPages.origin, page: await browser.newPage() };
    await app.page.goto(`${app.origin}/`);
    await stranger.page.goto(`${stranger.origin}/`);
  });

  after(async () => {
    await browser?.close();
    if (node) assert.equal(await node.stop(), 0);
    for (const server of pages) server.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('the listed origin uploads with fetch + FormData, reads the report, downloads the file with its headers, reads its status', async () => {
    const seen = await app.page.evaluate(async (base) => {
      const form = new FormData();
      form.append('files', new File(['hello from the browser\n'], 'hello.txt', { type: 'text/plain' }));
      const upload = await fetch(`${base}/api/file/upload`, { method: 'POST', body: form });
      const report = await upload.json();
      const cid = report.cids[0];
      const download = await fetch(`${base}/api/file/${cid}`);
      const status = await fetch(`${base}/api/file/${cid}/status`);
      return {
        uploadStatus: upload.status,
        names: report.filesNames,
        state: report.files[0].state,
        satisfied: report.files[0].replication.satisfied,
        cid,
        downloadStatus: download.status,
        text: await download.text(),
        disposition: download.headers.get('content-disposition'),
        etag: download.headers.get('etag'),
        fileStatus: status.status,
        statusBody: await status.json(),
      };
    }, nodeBase);
    assert.equal(seen.uploadStatus, 200);
    assert.deepEqual(seen.names, ['hello.txt']);
    assert.equal(seen.state, 'confirmed');
    assert.equal(seen.satisfied, true);
    assert.equal(seen.downloadStatus, 200);
    assert.equal(seen.text, 'hello from the browser\n');
    assert.equal(seen.disposition, `attachment; filename="${seen.cid}"`, 'the page can read the exposed Content-Disposition');
    assert.equal(seen.etag, `"${seen.cid}"`, 'the page can read the exposed ETag');
    assert.equal(seen.fileStatus, 200);
    assert.equal(seen.statusBody.cid, seen.cid);
    assert.equal(seen.statusBody.pinned, true);
  });

  it('the listed origin sends x-api-key (a preflighted request) and reads a refusal as well as an answer', async () => {
    const seen = await app.page.evaluate(
      async ({ base, key }) => {
        const withKey = await fetch(`${base}/api/node/details`, { headers: { 'x-api-key': key } });
        const wrongKey = await fetch(`${base}/api/node/details`, { headers: { 'x-api-key': 'not-the-key' } });
        return { withKey: withKey.status, hasPeerId: typeof (await withKey.json()).peerId, wrongKey: wrongKey.status, wrongBody: await wrongKey.json() };
      },
      { base: nodeBase, key: KEY },
    );
    assert.equal(seen.withKey, 200);
    assert.equal(seen.hasPeerId, 'string');
    assert.equal(seen.wrongKey, 401);
    assert.equal(typeof seen.wrongBody.error, 'string');
  });

  it('a page from an origin that is not listed is blocked by the browser: reads, uploads and preflighted requests fail', async () => {
    const seen = await stranger.page.evaluate(async (base) => {
      const outcome = async (request: () => Promise<Response>) => {
        try {
          const response = await request();
          return `read ${response.status}`;
        } catch (error) {
          return `blocked: ${(error as Error).name}`;
        }
      };
      const form = new FormData();
      form.append('files', new File(['not allowed\n'], 'no.txt'));
      return {
        info: await outcome(() => fetch(`${base}/api/node/info`)),
        upload: await outcome(() => fetch(`${base}/api/file/upload`, { method: 'POST', body: form })),
        admin: await outcome(() => fetch(`${base}/api/node/details`, { headers: { 'x-api-key': 'x' } })),
      };
    }, nodeBase);
    assert.deepEqual(seen, { info: 'blocked: TypeError', upload: 'blocked: TypeError', admin: 'blocked: TypeError' });
  });
});
