// `npm run bench -- scale [--only files,rates,transfers] [--size small|full]` (issue 30): what each operation costs as
// a service's data grows. Each store is filled at several sizes through the project's own storage layer (fast, not
// over HTTP; generated from a seed at run time, never committed), the built CLI is started on it as its own process,
// and one growth table per service prints every measured figure per size with the ratio largest / smallest, so a
// cost that grows with the data shows at a glance. No figure here is judged against a baseline: the "baseline" of a
// growth table is the same operation on the smallest store.
//
// files (sizes: small 1k / 10k / 30k, full 10k / 100k / 1M stored files; support/scale-files.ts builds the store:
// blocks, pins and registry rows as the node writes them, with a mix of lifecycle states and expiries):
//   - first start on the filled store (no repair evidence yet: `ready` waits for a whole repair cycle) and, after the
//     measurements, a restart (the node has run there: recent repair evidence and checkpoint): time until GET /
//     answers and until GET /api/node/health says `ready` (health.checkpointIntervalMs 1 s, so `ready` is known
//     within a second of being earned), the node's CPU until then, its RSS when ready;
//   - p50 at 1 connection (sequential requests, after a warm-up) with the node's CPU per request:
//     GET /api/node/details (admin), GET /api/storage/metrics (the node has no /api/node/metrics: spec §2.6's metrics
//     route is this one), GET /api/file/{cid}/status and GET /api/file/{cid} of stored 1-4 KiB files, and
//     POST /api/file/upload of distinct 4 KiB files;
//   - GC dry run (POST /api/storage/gc?dryRun=true: the plan over every record, nothing deleted), wall and node CPU;
//   - the node's RSS after the requests and its peak (VmHWM), and the registry's size on disk (with its -wal);
//   - the startup walk on an original store: the same blocks and pins with no registry (the original service keeps
//     none), so every pin is registered by the walk (backfill): time until `ready`.
//   Not measured yet: a repair cycle with a peer (README "Scale" says so).
// rates (sizes: small 1 / 6 months, full 1 / 5 years of snapshots every 10 minutes, 30 pairs): the history
//   generated through the SQLite history store (appendMany), then the service restarted on it: time until /status
//   says ready (its first refresh from the fake upstreams included), /getHistory point (coin=BTC/USD) and range
//   (a day, limit=100) p50 at 1 connection, the SQLite file size and the service's RSS.
// transfers: not built yet (issue 30 names 1M and 10M rows); the section says so and measures nothing.

import { rmSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeUpstreams, type FakeUpstreams } from '../test/rates/fakes/upstreams.js';
import { prng } from '../test/support/random.js';
import type { BenchOptions } from './run.js';
import { freePort, LOOPBACK, nowMs, sleep, startFilesNodeProcess, type FilesNodeProcess } from './support/files-node.js';
import { getJson } from './support/http-json.js';
import { runLoad, terminateLoadWorkers, type LoadSummary } from './support/load.js';
import { cpuSecondsOf, memoryOf, stopAllTracked } from './support/processes.js';
import { generateHistory, historyPairs, HISTORY_STEP_MS, JSON_TIMEOUT_MS, seedUpstreams, startService } from './support/rates-service.js';
import { fillFilesStore, type FilledStore } from './support/scale-files.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, machineHeader, table } from './support/stats.js';

export const SCALE_SECTIONS = ['files', 'rates', 'transfers'] as const;
export const SCALE_SIZES = ['small', 'full'] as const;
export type ScaleSize = (typeof SCALE_SIZES)[number];

const FILES_SIZES: Readonly<Record<ScaleSize, readonly number[]>> = { small: [1_000, 10_000, 30_000], full: [10_000, 100_000, 1_000_000] };
const SNAPSHOTS_PER_DAY = 86_400_000 / HISTORY_STEP_MS;
const RATES_SIZES: Readonly<Record<ScaleSize, readonly number[]>> = {
  small: [30 * SNAPSHOTS_PER_DAY, 182 * SNAPSHOTS_PER_DAY],
  // Five years at the default refresh period: 262,800 snapshots (issue 30: "about 263,000").
  full: [365 * SNAPSHOTS_PER_DAY, 5 * 365 * SNAPSHOTS_PER_DAY],
};

/** Sequential requests per measured route, after the warm-up ones. */
const REQUESTS = 200;
const WARMUP_REQUESTS = 20;
const UPLOAD_SIZE = 4096;
const GC_RUNS = 3;
/** How long a restarted node may take to say `ready` (bounded: 1M files is allowed 20 minutes). */
const READY_TIMEOUT_MS = 20 * 60_000;
const HEALTH_POLL_MS = 100;
const ADMIN_KEY = 'scale-bench-admin-key-0123456789';
const FILL_SEED = 30;
const RATES_REQUESTS = 500;
const RATES_WARMUP_REQUESTS = 50;

const say = (text = ''): void => void process.stdout.write(`${text}\n`);
const ms = (value: number, digits = 2) => `${fmt(value, digits)} ms`;
const s = (valueMs: number) => `${fmt(valueMs / 1000, 2)} s`;
const mib = (bytes: number) => `${fmt(bytes / 2 ** 20, 1)} MiB`;

/** Bytes of a file and its SQLite side files (-wal, -shm). */
function sqliteBytes(path: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      bytes += statSync(path + suffix).size;
    } catch {
      // No such side file.
    }
  }
  return bytes;
}

/** One growth table: a row per measure, a column per size, and largest / smallest where both are numbers. */
class GrowthTable {
  private readonly rows = new Map<string, { cells: string[]; values: number[] }>();
  constructor(private readonly sizes: readonly string[]) {}

  set(measure: string, sizeIndex: number, value: number, text: string): void {
    let row = this.rows.get(measure);
    if (row === undefined) this.rows.set(measure, (row = { cells: this.sizes.map(() => '-'), values: this.sizes.map(() => NaN) }));
    row.cells[sizeIndex] = text;
    row.values[sizeIndex] = value;
  }

  print(): void {
    const last = this.sizes.length - 1;
    const lines = [...this.rows].map(([measure, row]) => {
      const ratio = row.values[last]! / row.values[0]!;
      return [measure, ...row.cells, Number.isFinite(ratio) ? `${fmt(ratio, 2)}x` : '-'];
    });
    say(table(['measure', ...this.sizes, `${this.sizes[last]} / ${this.sizes[0]}`], lines));
  }
}

const sizeLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n));

// ---------------------------------------------------------------------------------------------
// files

function filesConfig(port: number): Record<string, unknown> & { serverPort: number } {
  return {
    nodes: [],
    storeFolder: '.adm-ipfs',
    logLevel: 'warn',
    serverPort: port,
    adminApiKey: ADMIN_KEY,
    maxFileCount: 10,
    uploadLimitSizeBytes: 256 * 2 ** 20,
    findFileTimeout: 20_000,
    peerDiscovery: { listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [] },
    cors: { allowedOrigins: ['*'] },
    // Limits high enough that no measured request is refused: the bench measures work, not policy.
    rateLimits: { upload: { windowMs: 900_000, limit: 100_000 }, read: { windowMs: 60_000, limit: 100_000 }, pin: { windowMs: 60_000, limit: 100_000 } },
    storage: { maxConcurrentUploads: 32, diskReserveBytes: 0 },
    // `ready` is earned at a checkpoint attempt: one a second, so the figure is within a second of when it could be.
    health: { checkpointIntervalMs: 1_000 },
  };
}

interface Restart {
  readonly node: FilesNodeProcess;
  readonly httpMs: number;
  readonly readyMs: number;
  readonly cpuSeconds: number;
}

/** Starts the node on `home`'s store and waits for health `ready` (bounded by READY_TIMEOUT_MS). */
async function restartNode(home: string, label: string): Promise<Restart> {
  const started = nowMs();
  const node = await startFilesNodeProcess(home, filesConfig(await freePort()), { label, readyTimeoutMs: READY_TIMEOUT_MS });
  const httpMs = nowMs() - started;
  const deadline = started + READY_TIMEOUT_MS;
  let last = '';
  for (;;) {
    try {
      const { body } = await getJson(node.port, '/api/node/health', JSON_TIMEOUT_MS);
      last = String(body?.state);
      if (body?.state === 'ready') break;
    } catch (error) {
      last = (error as Error).message;
    }
    if (nowMs() > deadline) throw new Error(`${label}: not ready within ${READY_TIMEOUT_MS / 1000} s (last health state: ${last}):\n${node.process.tail()}`);
    await sleep(HEALTH_POLL_MS);
  }
  return { node, httpMs, readyMs: nowMs() - started, cpuSeconds: cpuSecondsOf(node.process.pid) ?? NaN };
}

/** ASCII content (so the load generator's string bodies are the bytes sent) of 4 KiB, distinct per seed and index. */
function uploadBody(seed: number, index: number): { path: string; contentType: string; body: string } {
  const random = prng(seed * 1_000_003 + index);
  let content = `${seed}:${index}:`;
  while (content.length < UPLOAD_SIZE) content += Math.floor(random() * 36 ** 6).toString(36).padStart(6, '0');
  content = content.slice(0, UPLOAD_SIZE);
  const boundary = '----adm-infra-scale-bench';
  return {
    path: '/api/file/upload',
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="scale-${index}.txt"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  };
}

/** `requests` sequential requests on one connection after a warm-up, and the node's CPU per request over them. */
async function measureRoute(pid: number, load: Parameters<typeof runLoad>[0]): Promise<{ summary: LoadSummary; cpuMsPerRequest: number }> {
  const before = cpuSecondsOf(pid);
  const summary = await runLoad(load);
  const after = cpuSecondsOf(pid);
  const total = summary.completed + (load.warmupRequests ?? 0);
  if (summary.errors > 0) throw new Error(`${load.paths?.[0] ?? load.posts?.[0]?.path}: ${summary.errors} errors (${summary.errorDetail})`);
  return { summary, cpuMsPerRequest: before === undefined || after === undefined ? NaN : ((after - before) * 1000) / total };
}

async function gcDryRun(port: number): Promise<{ wallMs: number; report: any }> {
  const started = nowMs();
  const response = await fetch(`http://${LOOPBACK}:${port}/api/storage/gc?dryRun=true`, {
    method: 'POST',
    headers: { 'x-api-key': ADMIN_KEY },
    signal: AbortSignal.timeout(READY_TIMEOUT_MS),
  });
  const text = await response.text();
  const wallMs = nowMs() - started;
  if (response.status !== 200) throw new Error(`GC dry run answered ${response.status}: ${text.slice(0, 300)}`);
  return { wallMs, report: JSON.parse(text) };
}

function removeRegistry(home: string): void {
  const store = join(home, '.adm-ipfs');
  for (const name of readdirSync(store)) if (name.startsWith('registry.sqlite')) rmSync(join(store, name));
}

async function benchFilesAt(n: number, column: number, growth: GrowthTable): Promise<void> {
  const home = makeScratchDir(`adm-bench-scale-files-${sizeLabel(n)}`);
  say(`-- ${fmtInt(n)} files (store in ${home})`);
  const fillStarted = Date.now();
  let reported = 0;
  const filled: FilledStore = await fillFilesStore(join(home, '.adm-ipfs'), n, {
    seed: FILL_SEED,
    now: Date.now(),
    progress: (written) => {
      if (written - reported >= Math.max(10_000, n / 10) || written === n) {
        reported = written;
        say(`   filled ${fmtInt(written)} / ${fmtInt(n)}, ${fmt((Date.now() - fillStarted) / 1000, 1)} s`);
      }
    },
  });
  say(
    `   fill: ${fmtInt(n)} files in ${s(filled.ms)} (${fmtInt((n / filled.ms) * 1000)} files/s); ${fmtInt(filled.pinned)} pinned; ` +
      `confirmed ${fmtInt(filled.counts.confirmed)}, temporary ${fmtInt(filled.counts.temporary)}, expired ${fmtInt(filled.counts.expired)}; ${mib(filled.blockBytes)} of blocks`,
  );
  const registryPath = join(home, '.adm-ipfs', 'registry.sqlite');

  let restart: Restart | undefined;
  try {
    // The first start on the filled store: no repair evidence yet, so `ready` waits for a whole repair cycle.
    restart = await restartNode(home, `files-${sizeLabel(n)}`);
    const { node } = restart;
    const pid = node.process.pid;
    growth.set('first start: GET / answers', column, restart.httpMs, s(restart.httpMs));
    growth.set('first start: health ready', column, restart.readyMs, s(restart.readyMs));
    growth.set('first start: node CPU until ready', column, restart.cpuSeconds, `${fmt(restart.cpuSeconds, 2)} s`);
    say(`   first start: HTTP after ${s(restart.httpMs)}, ready after ${s(restart.readyMs)}, node CPU ${fmt(restart.cpuSeconds, 2)} s`);

    const admin = { 'x-api-key': ADMIN_KEY };
    const held = filled.sampleHeld;
    const routes: Array<[string, Parameters<typeof runLoad>[0]]> = [
      ['GET /api/node/details', { port: node.port, paths: ['/api/node/details'], headers: admin, connections: 1, warmupRequests: WARMUP_REQUESTS, maxRequests: REQUESTS }],
      ['GET /api/storage/metrics', { port: node.port, paths: ['/api/storage/metrics'], connections: 1, warmupRequests: WARMUP_REQUESTS, maxRequests: REQUESTS }],
      ['GET /api/file/{cid}/status', { port: node.port, paths: held.map((cid) => `/api/file/${cid}/status`), connections: 1, warmupRequests: WARMUP_REQUESTS, maxRequests: REQUESTS }],
      ['GET /api/file/{cid} (1-4 KiB)', { port: node.port, paths: held.map((cid) => `/api/file/${cid}`), connections: 1, warmupRequests: WARMUP_REQUESTS, maxRequests: REQUESTS }],
      [
        'POST /api/file/upload (4 KiB)',
        { port: node.port, posts: Array.from({ length: REQUESTS + WARMUP_REQUESTS }, (_, i) => uploadBody(n, i)), connections: 1, warmupRequests: WARMUP_REQUESTS, maxRequests: REQUESTS },
      ],
    ];
    for (const [name, load] of routes) {
      const { summary, cpuMsPerRequest } = await measureRoute(pid, load);
      growth.set(`${name} p50`, column, summary.p50, ms(summary.p50, 3));
      growth.set(`${name} node CPU/req`, column, cpuMsPerRequest, ms(cpuMsPerRequest, 3));
      say(`   ${name}: p50 ${ms(summary.p50, 3)}, p99 ${ms(summary.p99, 3)}, node CPU ${ms(cpuMsPerRequest, 3)}/req, ${fmtInt(summary.bodyBytes)} bytes`);
    }

    const gc: number[] = [];
    let gcCpu = NaN;
    let records = '';
    for (let i = 0; i < GC_RUNS; i++) {
      const before = cpuSecondsOf(pid);
      const { wallMs, report } = await gcDryRun(node.port);
      gc.push(wallMs);
      gcCpu = (cpuSecondsOf(pid) ?? NaN) - (before ?? NaN);
      records = JSON.stringify(report).slice(0, 200);
    }
    gc.sort((a, b) => a - b);
    const gcMedian = gc[Math.floor(gc.length / 2)]!;
    growth.set('GC dry run (median of 3)', column, gcMedian, s(gcMedian));
    growth.set('GC dry run node CPU (last)', column, gcCpu, `${fmt(gcCpu, 2)} s`);
    say(`   GC dry run: ${gc.map((v) => s(v)).join(', ')}; report ${records}…`);

    const memory = memoryOf(pid);
    growth.set('RSS after the requests', column, memory?.rssMiB ?? NaN, `${fmt(memory?.rssMiB ?? NaN, 1)} MiB`);
    growth.set('RSS peak (VmHWM)', column, memory?.peakMiB ?? NaN, `${fmt(memory?.peakMiB ?? NaN, 1)} MiB`);
    await node.process.stop(60_000);
    restart = undefined;
    growth.set('registry on disk', column, sqliteBytes(registryPath), mib(sqliteBytes(registryPath)));

    // A restart: the node has run on this store before (its repair evidence and health checkpoint are recent).
    restart = await restartNode(home, `files-restart-${sizeLabel(n)}`);
    growth.set('restart: GET / answers', column, restart.httpMs, s(restart.httpMs));
    growth.set('restart: health ready', column, restart.readyMs, s(restart.readyMs));
    growth.set('restart: node CPU until ready', column, restart.cpuSeconds, `${fmt(restart.cpuSeconds, 2)} s`);
    const readyRss = memoryOf(restart.node.process.pid)?.rssMiB ?? NaN;
    growth.set('restart: RSS when ready', column, readyRss, `${fmt(readyRss, 1)} MiB`);
    say(`   restart: HTTP after ${s(restart.httpMs)}, ready after ${s(restart.readyMs)}, node CPU ${fmt(restart.cpuSeconds, 2)} s, RSS ${fmt(readyRss, 1)} MiB`);
    await restart.node.process.stop(60_000);
    restart = undefined;

    // The original service's store: the same blocks and pins, no registry. The walk registers every pin.
    removeRegistry(home);
    restart = await restartNode(home, `files-original-${sizeLabel(n)}`);
    growth.set('original store: health ready (walk)', column, restart.readyMs, s(restart.readyMs));
    growth.set('original store: node CPU until ready', column, restart.cpuSeconds, `${fmt(restart.cpuSeconds, 2)} s`);
    say(`   original store (no registry): HTTP after ${s(restart.httpMs)}, ready after ${s(restart.readyMs)}, node CPU ${fmt(restart.cpuSeconds, 2)} s`);
    await restart.node.process.stop(60_000);
    restart = undefined;
  } finally {
    await restart?.node.process.stop(60_000);
    rmSync(home, { recursive: true, force: true });
  }
}

async function benchFiles(size: ScaleSize): Promise<void> {
  const sizes = FILES_SIZES[size];
  say(`== files: stores of ${sizes.map(fmtInt).join(', ')} files; per size: fill, restart, ${REQUESTS} sequential requests per route (1 connection, after ${WARMUP_REQUESTS}), GC dry run x${GC_RUNS}, original-store walk`);
  const growth = new GrowthTable(sizes.map(sizeLabel));
  try {
    for (const [column, n] of sizes.entries()) await benchFilesAt(n, column, growth);
  } finally {
    say();
    say('files growth table (p50 at 1 connection; CPU is the node process\'s, from /proc/<pid>/stat):');
    growth.print();
    say();
  }
}

// ---------------------------------------------------------------------------------------------
// rates

async function benchRatesAt(snapshots: number, column: number, growth: GrowthTable, fakes: FakeUpstreams): Promise<void> {
  const dir = makeScratchDir(`adm-bench-scale-rates-${snapshots}`);
  try {
    const path = join(dir, 'history.sqlite');
    const endMs = Math.floor((Date.now() - 86_400_000) / 60_000) * 60_000;
    say(`-- ${fmtInt(snapshots)} snapshots (${fmt(snapshots / SNAPSHOTS_PER_DAY, 0)} days)`);
    const generated = await generateHistory(path, endMs, snapshots, (line) => say(`  ${line}`));
    say(`   generated in ${fmt(generated.seconds, 1)} s, ${mib(generated.bytes)}`);
    growth.set('SQLite file', column, generated.bytes, mib(generated.bytes));
    const service = await startService(`rates-scale-${snapshots}`, dir, fakes, path);
    try {
      const pid = service.process.pid;
      growth.set('restart: ready (first refresh included)', column, service.startupMs, s(service.startupMs));
      const random = prng(99);
      const spanMs = generated.lastMs - generated.firstMs;
      const points = Array.from({ length: RATES_REQUESTS + RATES_WARMUP_REQUESTS }, () => Math.floor((generated.firstMs + 86_400_000 + random() * (spanMs - 86_400_000)) / 1000));
      const cases: Array<[string, string[]]> = [
        ['/getHistory point, coin=BTC/USD', points.map((t) => `/getHistory?timestamp=${t}&coin=BTC/USD`)],
        ['/getHistory range of a day, limit=100', points.map((t) => `/getHistory?from=${t - 86_400}&to=${t}&limit=100`)],
      ];
      for (const [name, paths] of cases) {
        const sample = await getJson(service.port, paths[0]!, JSON_TIMEOUT_MS);
        if (sample.status !== 200 || !Array.isArray(sample.body?.result) || sample.body.result.length === 0) throw new Error(`${paths[0]} answered ${sample.status}: ${JSON.stringify(sample.body).slice(0, 200)}`);
        const { summary, cpuMsPerRequest } = await measureRoute(pid, { port: service.port, paths, connections: 1, warmupRequests: RATES_WARMUP_REQUESTS, maxRequests: RATES_REQUESTS });
        growth.set(`${name} p50`, column, summary.p50, ms(summary.p50, 3));
        growth.set(`${name} service CPU/req`, column, cpuMsPerRequest, ms(cpuMsPerRequest, 3));
        say(`   ${name}: p50 ${ms(summary.p50, 3)}, p99 ${ms(summary.p99, 3)}, service CPU ${ms(cpuMsPerRequest, 3)}/req, ${fmtInt(summary.bodyBytes)} bytes`);
      }
      const memory = memoryOf(pid);
      growth.set('RSS at the end', column, memory?.rssMiB ?? NaN, `${fmt(memory?.rssMiB ?? NaN, 1)} MiB`);
    } finally {
      await service.process.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchRates(size: ScaleSize): Promise<void> {
  const sizes = RATES_SIZES[size];
  say(`== rates: histories of ${sizes.map(fmtInt).join(', ')} snapshots x ${historyPairs().length} pairs; ${RATES_REQUESTS} sequential requests per query (1 connection, after ${RATES_WARMUP_REQUESTS})`);
  const growth = new GrowthTable(sizes.map((n) => `${fmt(n / SNAPSHOTS_PER_DAY, 0)} d`));
  const fakes = await startFakeUpstreams();
  try {
    seedUpstreams(fakes);
    for (const [column, n] of sizes.entries()) await benchRatesAt(n, column, growth, fakes);
  } finally {
    await fakes.close();
    say();
    say('rates growth table (p50 at 1 connection; CPU is the service process\'s):');
    growth.print();
    say();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runScaleBench(options: BenchOptions): Promise<void> {
  const size: ScaleSize = (options.size as ScaleSize | undefined) ?? 'small';
  const run = (section: (typeof SCALE_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  say(`scale benchmark, size ${size}`);
  say(machineHeader());
  say(`started ${new Date().toISOString()}`);
  say();
  const failures: string[] = [];
  const section = async (name: string, body: () => Promise<void>) => {
    const started = Date.now();
    try {
      await body();
    } catch (error) {
      failures.push(name);
      say(`!! ${name} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
    say(`(${name}: ${fmt((Date.now() - started) / 1000, 0)} s)`);
    say();
  };
  try {
    if (run('files')) await section('files', () => benchFiles(size));
    if (run('rates')) await section('rates', () => benchRates(size));
    if (run('transfers')) say('== transfers: NOT BUILT YET (issue 30: 1M and 10M rows); nothing measured\n');
  } finally {
    terminateLoadWorkers();
    await stopAllTracked();
    removeScratchDirs();
  }
  if (failures.length > 0) throw new Error(`failed section(s): ${failures.join(', ')}`);
}

