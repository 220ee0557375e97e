// The operator page (docs/DESIGN.md, "Operators see the running system") driven in headless Chromium: the built
// CLI runs `adm-infra all` as a real process with its own HOME and working folder, the operator listener on
// a free port with a test key, and Debian's /usr/bin/chromium (installed by .ci/run) is driven by
// playwright-core. The page is served without the key; it asks for it, then shows the supervision tree of
// every service, an actor's recent events, and a statechart with the current state highlighted. Without
// Chromium the suite skips loudly, unless CI is set, where it fails (test/support/system-packages.ts).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { FILES_DEFAULTS } from '../../src/files/config-defaults.js';
import { freePort, startCli, type CliProcess } from '../support/cli.js';
import { OperatorPageWatch } from '../support/operator-page.js';
import { openSocket, readResponse } from '../support/raw-http.js';
import { CHROMIUM_EXECUTABLE, chromiumPackage, skipWithout } from '../support/system-packages.js';
import { waitFor } from '../support/wait.js';

const CHROMIUM = CHROMIUM_EXECUTABLE;
const ADMIN_KEY = 'operator-page-test-key-0123456789abcdef';
/** `adm-infra all` takes no port settings: the files node listens on its default port. */
const FILES_DEFAULT_PORT = FILES_DEFAULTS.serverPort;

/**
 * `adm-infra all` runs every service on its embedded defaults (the rates sources and the console's nodes
 * are public internet hosts, and `all` takes no configuration file). This preload, given to the CLI through
 * NODE_OPTIONS, refuses every TCP connection that is not to loopback before any DNS lookup, so the test
 * never reaches the internet: the sources fail fast (EACCES) and the services carry on, as they would offline.
 */
const LOOPBACK_ONLY = `
import net from 'node:net';
const LOOPBACK = /^(localhost|127(\\.\\d{1,3}){3}|::1|::ffff:127(\\.\\d{1,3}){3})$/i;
const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  const options = first !== null && typeof first === 'object' ? first : { port: first, host: typeof args[1] === 'string' ? args[1] : undefined };
  const host = options.host ?? 'localhost';
  if (options.path === undefined && !LOOPBACK.test(host)) {
    const error = Object.assign(new Error('connect EACCES ' + host + ' (test: loopback only)'), { code: 'EACCES' });
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return connect.apply(this, args);
};
`;

interface ActorNode {
  systemId: string;
  machineId?: string;
  state?: unknown;
  status: string;
  restarts: number;
  children?: ActorNode[];
}

function findActor(nodes: readonly ActorNode[], systemId: string): ActorNode | undefined {
  for (const node of nodes) {
    if (node.systemId === systemId) return node;
    const found = findActor(node.children ?? [], systemId);
    if (found) return found;
  }
  return undefined;
}

const skip = skipWithout(chromiumPackage(CHROMIUM), 'the operator page test (test/acceptance/operator-page.test.ts)');

describe('operator page in headless Chromium against `adm-infra all`', { timeout: 180_000, skip }, () => {
  let dir: string;
  let adminPort: number;
  let service: CliProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let watch: OperatorPageWatch;
  let failed = false;
  const cspViolations: string[] = [];
  const base = () => `http://127.0.0.1:${adminPort}`;

  before(async () => {
    failed = true; // until the setup completes: a failed setup keeps its folder too
    // CI installs Chromium (.ci/run); there (CI set) a missing one must fail this suite, never pass silently.
    assert.ok(
      existsSync(CHROMIUM),
      `Chromium is not installed at ${CHROMIUM}: run 'apt-get install -y --no-install-recommends chromium' (.ci/run does this on CI)`,
    );
    dir = mkdtempSync(join(tmpdir(), 'operator-page-'));
    const home = join(dir, 'home');
    mkdirSync(home);
    writeFileSync(join(dir, 'loopback-only.mjs'), LOOPBACK_ONLY);
    adminPort = await freePort();
    // The working folder is the temp folder too: rates' SQLite file and transfers' PGlite data default
    // to data/ under it. `all` takes no port settings, so the public listeners use their default ports,
    // bound to 127.0.0.1; only the operator listener gets a free port.
    service = startCli(
      ['all', '--host', '127.0.0.1'],
      {
        HOME: home,
        ADMIN_PORT: String(adminPort),
        ADMIN_API_KEY: ADMIN_KEY,
        NODE_OPTIONS: `--import=${pathToFileURL(join(dir, 'loopback-only.mjs')).href}`,
      },
      dir,
    );
    try {
      await service.waitForLine((line) => line.msg === 'adm-infra started', 90_000);
    } catch (error) {
      // e.g. a default port (36661, 4000, 3000, 5080) taken by another process on this machine
      throw new Error(`adm-infra all did not start: ${(error as Error).message}\nlast log lines:\n${service.stdout().slice(-3000)}`);
    }
    // Small /dev/shm in CI containers crashes Chromium's renderer; /tmp is used instead.
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--disable-dev-shm-usage'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    watch = new OperatorPageWatch(page);
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    failed = false;
  });

  after(async () => {
    // Both always end, also when `before` or a test failed.
    await browser?.close().catch(() => {});
    if (service) {
      const code = await service.stop(20_000).catch((error: Error) => error.message);
      if (!failed) assert.equal(code, 0, `adm-infra all stops cleanly on SIGTERM; stderr: ${service.stderr().slice(0, 2000)}`);
    }
    // Keep the folder (screenshot, the services' data) for a look when something failed.
    if (dir && !failed) rmSync(dir, { recursive: true, force: true });
    else if (dir) console.error(`operator page test: kept ${dir} for inspection`);
  });

  const check = (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      try {
        await fn();
      } catch (error) {
        failed = true;
        throw error;
      }
    });

  check('the page is served without the key, with a strict CSP and no caching; the JSON routes still need the key', async () => {
    const response = await fetch(`${base()}/`, { headers: { connection: 'close' } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /connect-src 'self'/);
    assert.match(await response.text(), /<script type="module" src="\/operator\.js">/);
    for (const asset of ['/operator.js', '/operator.css']) {
      const file = await fetch(`${base()}${asset}`, { headers: { connection: 'close' } });
      assert.equal(file.status, 200, asset);
      assert.equal(file.headers.get('cache-control'), 'no-store', asset);
      await file.arrayBuffer();
    }
    for (const path of ['/actors', '/machines', '/actors/rates.refresh', '/machines/ratesRefreshCycle.json']) {
      const refused = await fetch(`${base()}${path}`, { headers: { connection: 'close' } });
      assert.equal(refused.status, 401, `${path} without the key`);
      await refused.arrayBuffer();
    }
  });

  check('a wrong key shows the 401 message and keeps the key form', async () => {
    await page.goto(`${base()}/`);
    await watch.submitKey('not-the-operator-key-000000000000000000', '#message.error');
    assert.match((await page.textContent('#message')) ?? '', /401/);
    assert.ok(await page.isVisible('#key-form'), 'the form asks again');
    assert.equal(await page.locator('#tree li.actor').count(), 0, 'no data shown');
  });

  check('with the key the tree lists every service with states, statuses and restart counts', async () => {
    await watch.submitKey(ADMIN_KEY, 'li.actor[data-system-id="root"]');
    const actors = [
      'root',
      'rates',
      'rates.refresh',
      'rates.history',
      'files',
      'files.runtime',
      'files.health',
      'transfers',
      'transfers.db',
      'console',
      'console.nodes',
      'admin.http',
    ];
    for (const systemId of actors) await page.waitForSelector(`li.actor[data-system-id="${systemId}"]`, { timeout: 15_000 });
    for (const service of ['rates', 'files', 'transfers', 'console']) {
      const row = page.locator(`li.actor[data-system-id="${service}"] > .row`);
      assert.equal(await row.locator('.status').textContent(), 'running', service);
      assert.equal(await row.locator('.restarts').textContent(), 'restarts 0', service);
      assert.equal(await row.locator('.machine').textContent(), 'supervisor', service);
      // Children are nested under their supervisor.
      assert.ok((await page.locator(`li.actor[data-system-id="${service}"] li.actor[data-system-id^="${service}."]`).count()) >= 2, `${service} children`);
    }
    const db = page.locator('li.actor[data-system-id="transfers.db"] > .row');
    assert.equal(await db.locator('.state').textContent(), 'open');
    assert.equal(await db.locator('.machine').textContent(), 'transfersDatabase');
    assert.equal(await page.textContent('#message'), '', 'no error shown');
  });

  check('an upload in flight shows as an ask waiting on files.content, with its age, until it ends', async () => {
    // An upload is one ask to files.content that lasts as long as its body: send the head and half the declared body.
    const socket = await openSocket(FILES_DEFAULT_PORT);
    const boundary = 'operator-page-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    const body = Buffer.concat([Buffer.from(head), Buffer.alloc(2048, 7), Buffer.from(`\r\n--${boundary}--\r\n`)]);
    socket.write(`POST /api/file/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket.write(body.subarray(0, 1024));
    try {
      const asks = page.locator('li.actor[data-system-id="files.content"] > .row .asks');
      await asks.waitFor({ timeout: 15_000 });
      assert.match((await asks.textContent()) ?? '', /^asks 1, oldest \d+ ms$/);
      assert.match((await asks.getAttribute('title')) ?? '', /asks waiting on this actor/);
    } finally {
      socket.write(body.subarray(1024));
    }
    const answer = await readResponse(socket);
    assert.equal(answer.status, 200, answer.body);
    socket.destroy();
    await page.locator('li.actor[data-system-id="files.content"] > .row .asks').waitFor({ state: 'detached', timeout: 15_000 });
  });

  check('expanding an actor shows its recent events', async () => {
    await page.click('li.actor[data-system-id="transfers.db"] > .row .toggle');
    const events = page.locator('li.actor[data-system-id="transfers.db"] > .details .events li');
    await events.first().waitFor({ timeout: 10_000 });
    assert.ok((await events.count()) >= 1);
    assert.match((await events.first().textContent()) ?? '', /^\d\d:\d\d:\d\d\.\d{3} \S+/);
    assert.equal(await page.getAttribute('li.actor[data-system-id="transfers.db"] > .row .toggle', 'aria-expanded'), 'true');
  });

  check('a statechart is drawn as a graph with the current state lit', async () => {
    await page.click('li.actor[data-system-id="transfers.db"] > .row .open-chart');
    await page.waitForSelector('#chart g.box.machine[data-id="transfersDatabase"]');
    // The state the API reports for the actor is the one the page highlights.
    const tree = (await (await fetch(`${base()}/actors`, { headers: { 'x-api-key': ADMIN_KEY, connection: 'close' } })).json()) as { roots: ActorNode[] };
    const state = findActor(tree.roots, 'transfers.db')?.state;
    assert.equal(state, 'open');
    await page.waitForSelector('#chart g.box.active[data-id="transfersDatabase.open"]', { timeout: 10_000 });
    const active = await page.locator('#chart g.box.active').evaluateAll((nodes) => nodes.map((n) => (n as SVGGElement).dataset.id));
    assert.deepEqual(active, ['transfersDatabase.open'], 'only the current state is lit');
    // Counted against the definition in test/acceptance/statecharts-page.test.ts; here: it is the drawing of that machine.
    const states = await page.locator('#chart g.box:not(.machine)').count();
    assert.ok(states >= 3, `every state of the machine is drawn (${states})`);
    assert.ok((await page.locator('#chart g.arrow.transition').count()) >= 2, 'transitions are drawn');
    assert.equal(await page.inputValue('#machine'), 'transfersDatabase');
    assert.equal(await page.inputValue('#actor'), 'transfers.db');
    // Another machine through the select: the rates refresh cycle, its running actor chosen for it.
    await page.selectOption('#machine', 'ratesRefreshCycle');
    await page.waitForSelector('#chart g.box.machine[data-id="ratesRefreshCycle"]');
    await page.waitForSelector('#chart g.box.active', { timeout: 10_000 });
    assert.equal(await page.inputValue('#actor'), 'rates.refresh');
    await page.click('li.actor[data-system-id="transfers.db"] > .row .open-chart');
    await page.waitForSelector('#chart g.box.active[data-id="transfersDatabase.open"]', { timeout: 10_000 });
  });

  check('a listener without a configured key: the page still loads and shows the 503 message', async () => {
    // A second, small process: the console alone, its node on a closed loopback port, the operator listener
    // on but without ADMIN_API_KEY (fail closed).
    const port = await freePort();
    const keyless = await freePort();
    const config = join(dir, 'console.jsonc');
    writeFileSync(config, JSON.stringify({ network: 'testnet', rpc: { port }, networks: { testnet: { nodes: [{ ip: '127.0.0.1', protocol: 'http', port: 9 }] } } }));
    const consoleCli = startCli(['console', '--config', config, '--host', '127.0.0.1'], { HOME: join(dir, 'home'), ADMIN_PORT: String(keyless) }, dir);
    const other = await browser!.newPage();
    const otherWatch = new OperatorPageWatch(other);
    try {
      await consoleCli.waitForLine((line) => line.msg === 'adm-infra started', 30_000);
      await other.goto(`http://127.0.0.1:${keyless}/`);
      await otherWatch.submitKey(ADMIN_KEY, '#message.error');
      assert.match((await other.textContent('#message')) ?? '', /503.*ADMIN_API_KEY/);
      assert.ok(await other.isVisible('#key-form'));
    } finally {
      await other.close();
      assert.equal(await consoleCli.stop(), 0);
    }
  });

  check('the page polls live, keeps nothing in storage, breaks no CSP rule, and a screenshot is saved', async () => {
    const first = await page.textContent('#updated');
    await waitFor(async () => (await page.textContent('#updated')) !== first, { timeoutMs: 10_000, intervalMs: 200, what: 'the page to refresh by itself' });
    const stored = await page.evaluate(() => ({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie, key: (document.getElementById('key') as HTMLInputElement).value }));
    assert.deepEqual(stored, { local: 0, session: 0, cookie: '', key: '' }, 'the key lives in a JS variable only');
    assert.deepEqual(cspViolations, []);
    const screenshot = join(dir, 'operator-page.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    assert.ok(existsSync(screenshot) && statSync(screenshot).size > 0, `screenshot at ${screenshot}`);
  });
});
