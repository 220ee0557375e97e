// Statecharts drawn as graphs on the operator page (issue 31), measured in headless Chromium against the built CLI:
// `adm-infra files` as a real process with its operator listener, Debian's Chromium driven by playwright-core. For
// every machine the page draws, one box per state and one arrow per transition of its definition (counted through
// @xstate/graph, test/support/drawing-checks.ts), no two sibling boxes overlapping and every arrow starting and ending
// on its boxes, measured in the page; the supervision tree drawn the same way; a GC run forced through the files
// node's admin route lights the run's states on the page as the actor moves, marks the last transition, and reaches an
// inspector through GET /inspect as @xstate.snapshot. Screenshots of two machines are kept in test-output/statecharts/
// (gitignored), with one of the whole page. Without Chromium the suite skips loudly, unless CI is set (test/support/system-packages.ts).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { MACHINES } from '../../actors/statechart.js';
import { freePort, startCli, type CliProcess } from '../support/cli.js';
import { drawingProblems, expectedChart, type DrawnArrow, type DrawnBox } from '../support/drawing-checks.js';
import { filesCliConfig } from '../support/files-config.js';
import { OperatorPageWatch } from '../support/operator-page.js';
import { repositoryRoot } from '../support/fixtures.js';
import { CHROMIUM_EXECUTABLE, chromiumPackage, skipWithout } from '../support/system-packages.js';

const CHROMIUM = CHROMIUM_EXECUTABLE;
const OPERATOR_KEY = 'statecharts-page-operator-key-0123456789abcdef';
const FILES_KEY = 'statecharts-page-files-admin-key-0123456789abcdef';
const OUTPUT = join(repositoryRoot(), 'test-output', 'statecharts');

interface Measured {
  readonly boxes: DrawnBox[];
  readonly arrows: Array<DrawnArrow & { readonly classes: string }>;
}

/** The drawing in `selector` as the browser laid it out, in the drawing's own coordinates. */
function measure(page: Page, selector: string): Promise<Measured> {
  return page.locator(selector).evaluate((svg) => {
    const boxes = [...svg.querySelectorAll<SVGGElement>('g.box')].map((g) => {
      const box = (g.querySelector('rect') as SVGRectElement).getBBox();
      return { id: g.dataset.id!, parent: g.dataset.parent, x: box.x, y: box.y, width: box.width, height: box.height };
    });
    const arrows = [...svg.querySelectorAll<SVGGElement>('g.arrow:not(.initial-arrow)')].map((g) => {
      const path = g.querySelector('path') as SVGPathElement;
      const start = path.getPointAtLength(0);
      const end = path.getPointAtLength(path.getTotalLength());
      return { source: g.dataset.source!, target: g.dataset.target!, start: { x: start.x, y: start.y }, end: { x: end.x, y: end.y }, classes: g.getAttribute('class')! };
    });
    return { boxes, arrows };
  });
}

const skip = skipWithout(chromiumPackage(CHROMIUM), 'the statecharts page test (test/acceptance/statecharts-page.test.ts)');

describe('statecharts drawn on the operator page (headless Chromium, `adm-infra files`)', { timeout: 180_000, skip }, () => {
  let home: string;
  let node: CliProcess | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let adminBase: string;
  let filesBase: string;
  const cspViolations: string[] = [];
  const operator = (path: string) => fetch(`${adminBase}${path}`, { headers: { 'x-api-key': OPERATOR_KEY, connection: 'close' } });

  before(async () => {
    assert.ok(existsSync(CHROMIUM), `Chromium is not installed at ${CHROMIUM}: run 'apt-get install -y --no-install-recommends chromium' (.ci/run does this on CI)`);
    home = mkdtempSync(join(tmpdir(), 'statecharts-page-'));
    const [port, adminPort] = [await freePort(), await freePort()];
    filesBase = `http://127.0.0.1:${port}`;
    adminBase = `http://127.0.0.1:${adminPort}`;
    writeFileSync(join(home, 'config.json5'), JSON.stringify(filesCliConfig(port, { adminApiKey: FILES_KEY, storage: { diskReserveBytes: 0, gc: { enabled: false } } })));
    node = startCli(['files', '--config', join(home, 'config.json5'), '--host', '127.0.0.1'], { HOME: home, ADMIN_PORT: String(adminPort), ADMIN_API_KEY: OPERATOR_KEY });
    await node.waitForLine((line) => line.msg === 'adm-infra started', 60_000);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--disable-dev-shm-usage'] });
    page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    const watch = new OperatorPageWatch(page);
    await page.goto(`${adminBase}/`);
    await watch.submitKey(OPERATOR_KEY, '#tree-drawing svg g.box[data-id="files.gc"]', 20_000);
  });

  after(async () => {
    await browser?.close().catch(() => {});
    if (node) assert.equal(await node.stop(), 0);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('every machine: one box per state, one arrow per transition, no overlapping siblings, arrows on their boxes', async () => {
    assert.equal(MACHINES.size, (await page.locator('#machine option').count()) - 1, 'the select offers every machine');
    for (const [id, machine] of MACHINES) {
      await page.selectOption('#machine', id);
      await page.waitForSelector(`#chart svg[data-diagram="${id}"]`);
      const drawn = await measure(page, '#chart svg');
      const expected = expectedChart(machine);
      assert.deepEqual(drawn.boxes.map((b) => b.id).sort(), [...expected.states].sort(), `${id}: one box per state`);
      assert.equal(drawn.arrows.filter((a) => a.classes.includes('transition')).length, expected.transitions, `${id}: one arrow per transition`);
      assert.deepEqual(drawingProblems(drawn.boxes, drawn.arrows), [], id);
    }
  });

  it('the supervision tree is drawn the same way: every actor a box with strategy, state, status and restart count', async () => {
    const tree = (await (await operator('/actors')).json()) as { roots: Array<{ systemId: string; children?: unknown[] }> };
    const ids: string[] = [];
    const walk = (n: { systemId: string; children?: unknown[] }) => (ids.push(n.systemId), (n.children ?? []).forEach((c) => walk(c as typeof n)));
    tree.roots.forEach(walk);
    const drawn = await measure(page, '#tree-drawing svg');
    assert.deepEqual(drawn.boxes.filter((b) => b.id !== 'supervision').map((b) => b.id).sort(), [...ids].sort());
    assert.equal(drawn.arrows.length, ids.length - tree.roots.length, 'one arrow from each supervisor to each child');
    assert.deepEqual(drawingProblems(drawn.boxes, drawn.arrows), []);
    const files = page.locator('#tree-drawing g.box[data-id="files"]');
    assert.equal(await files.locator('text').nth(1).textContent(), 'supervisor rest_for_one');
    assert.equal(await files.locator('.field-status').textContent(), 'running · restarts 0');
  });

  it('a GC run forced through the files admin route moves the lit state; the last transition is marked; /inspect sees it', async () => {
    // The stream from now on (its first answer is the present).
    const start = (await (await operator('/inspect')).json()) as { next: number };
    await page.click('#tree-drawing g.box[data-id="files.gc"]');
    await page.waitForSelector('#chart svg[data-diagram="filesGcRun"]');
    assert.equal(await page.inputValue('#actor'), 'files.gc');
    assert.equal(await page.locator('#chart g.box.active').count(), 0, 'no run yet: nothing lit');

    const gc = async (query: string) => {
      const response = await fetch(`${filesBase}/api/storage/gc${query}`, { method: 'POST', headers: { 'x-api-key': FILES_KEY, connection: 'close' } });
      assert.equal(response.status, 200, await response.clone().text());
      await response.arrayBuffer();
    };
    await gc('?dryRun=true');
    await page.waitForSelector('#chart g.box.active[data-id="filesGcRun.previewed"]', { timeout: 10_000 });
    assert.equal(await page.locator('#chart g.arrow.last[data-source="filesGcRun.routing"][data-target="filesGcRun.previewed"]').count(), 1, 'routing → previewed marked');
    mkdirSync(OUTPUT, { recursive: true });
    await page.locator('#chart').screenshot({ path: join(OUTPUT, 'filesGcRun.png') });

    await gc('?force=true');
    // The run has ended when its answer came: the operator routes report its final state, and the page lights it.
    const state = ((await (await operator('/actors/files.gc')).json()) as { state: string }).state;
    assert.notEqual(state, 'previewed');
    await page.waitForSelector(`#chart g.box.active[data-id="filesGcRun.${state}"]`, { timeout: 10_000 });
    const lit = await page.locator('#chart g.box.active').evaluateAll((gs) => gs.map((g) => (g as SVGGElement).dataset.id));
    assert.deepEqual(lit, [`filesGcRun.${state}`], 'only the state the operator routes report is lit');
    assert.ok((await page.locator('#chart g.arrow.last').count()) >= 1, 'the last transition is marked');

    const stream = (await (await operator(`/inspect?after=${start.next}&wait=0`)).json()) as { events: Array<Record<string, any>> };
    const actors = stream.events.filter((e) => e.type === '@xstate.actor' && e.name === 'files.gc' && JSON.parse(e.definition ?? '{}').id === 'filesGcRun');
    assert.equal(actors.length, 2, 'each run is an actor, with the machine definition');
    const previewed = stream.events.find((e) => e.type === '@xstate.snapshot' && e.sessionId === actors[0]!.sessionId && e.snapshot.value === 'previewed');
    assert.ok(previewed, 'the dry run reaching `previewed` as an @xstate.snapshot');
    assert.equal(previewed.snapshot.status, 'done');
    assert.ok(stream.events.some((e) => e.type === '@xstate.snapshot' && e.sessionId === actors[1]!.sessionId && e.snapshot.value === state));
  });

  it('pan and zoom change the view and `fit` restores it; a second machine is kept as a screenshot; no CSP violation', async () => {
    await page.selectOption('#machine', 'filesHealthCheckpoint');
    await page.waitForSelector('#chart svg[data-diagram="filesHealthCheckpoint"]');
    await page.waitForSelector('#chart g.box.active', { timeout: 10_000 });
    const view = () => page.locator('#chart svg').getAttribute('viewBox');
    const full = await view();
    await page.click('#chart-controls .zoom-in');
    const zoomed = await view();
    assert.notEqual(zoomed, full);
    const box = (await page.locator('#chart').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 80, box.y + box.height / 2 + 30, { steps: 4 });
    await page.mouse.up();
    assert.notEqual(await view(), zoomed, 'dragging pans');
    await page.mouse.wheel(0, 300);
    await page.click('#chart-controls .zoom-fit');
    assert.equal(await view(), full);
    const screenshot = join(OUTPUT, 'filesHealthCheckpoint.png');
    await page.locator('#chart').screenshot({ path: screenshot });
    await page.screenshot({ path: join(OUTPUT, 'operator-page.png'), fullPage: true });
    assert.ok(statSync(screenshot).size > 0 && statSync(join(OUTPUT, 'filesGcRun.png')).size > 0);
    assert.deepEqual(cspViolations, []);
  });
});
