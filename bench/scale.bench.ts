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
//   - the time until the first disk-usage scan has finished (storage metrics' `measuredAt`; `ready` no longer waits for
//     it), then p50 at 1 connection (sequential requests, after a warm-up) with the node's CPU per request, in rounds
//     interleaved with the same requests to a reference node of REFERENCE_FILES files started beside it (the p50 over
//     the reference's takes out the machine's drift over the run):
//     GET /api/node/details (admin), GET /api/storage/metrics (the node has no /api/node/metrics: spec §2.6's metrics
//     route is this one), GET /api/file/{cid}/status and GET /api/file/{cid} of stored 1-4 KiB files, and
//     POST /api/file/upload of distinct 4 KiB files;
//   - GC dry run (POST /api/storage/gc?dryRun=true: the plan over every record, nothing deleted), wall and node CPU;
//   - the node's RSS after the requests and its peak (VmHWM), and the registry's size on disk (with its -wal);
//   - then a real GC run (POST /api/storage/gc: the expired temporaries released, no block deleted without pressure)
//     and a forced one (?force=true: the deletion pass over every block file), each's wall, node CPU and RSS peak;
//     the measurements after them see the collected store;
//   - repair with a peer, both nodes listing each other with 2 copies of every file: up to REPAIR_PEER_MAX_FILES, a
//     second store filled from the same seed (the peer holds every copy) and the node's start with nothing
//     acknowledged, whose startup cycle asks the peer about every confirmed file (a holdings request per 100
//     files, unpaced; `ready` waits for it); above, the peer's acknowledgements written into the registry as a
//     cluster that has run has them. At every size: a start with every copy acknowledged and no repair evidence (`ready` waits for a whole walk), a plain
//     restart, and one whole cycle by POST /api/storage/repair after it (benchRepairWithPeer);
//   - the startup walk on an original store: the same blocks and pins with no registry (the original service keeps
//     none), so every pin is registered by the walk (backfill): time until `ready`.
// rates (sizes: small 1 / 6 months, full 1 / 5 years of snapshots every 10 minutes, 30 pairs): the history
//   generated through the SQLite history store (appendMany), then the service restarted on it: time until /status
//   says ready (its first refresh from the fake upstreams included), /getHistory point (coin=BTC/USD) and range
//   (a day, limit=100) p50 at 1 connection, the SQLite file size and the service's RSS.
// transfers (sizes: small 100k / 1M, full 1M / 10M rows of `public.ethtxs`; bench/support/transfers-data.ts generates
//   them from a seed, the distribution of the transfers bench, in batches of 10,000 with the indexes dropped during the
//   load: memory stays one batch at any size): one throwaway PostgreSQL cluster (transfers-postgres.ts), a database
//   per size at schema version 1, loaded, then migration 2 on the loaded table (its 4 indexes CONCURRENTLY, timed);
//   then, through the gateway (the real service, INDEXER=false, its own process) and direct pg (node:http + pg.Pool,
//   its own process; bench/support/transfers-sides.ts), answers checked equal first:
//   - the three spec reads (native history, token history, keyset next page; transfers-queries.ts) for 40
//     medium-popularity addresses, p50 at 1 connection, interleaved rounds after each side served every read for
//     2 s unmeasured (a gateway in service is warm), PostgreSQL's CPU per request;
//   - the busiest address's native history with `Prefer: count=exact` and `count=estimated` (PostgREST semantics:
//     exact up to PGRST_DB_MAX_ROWS + 1, then the planner's guess) and without a count, gateway only;
//   - `/max_block`, gateway only;
//   - a backfill: 2,000 blocks x 50 transfers prepared once on anvil (transfers-chain.ts), indexed into each size's
//     loaded table by the indexer machine (block receipts), timed until the indexer's cursor reaches the head (the
//     generated rows sit at blocks 15,000,000 and up, so max_block is past the chain from the start), beside what
//     anvil itself takes to serve the same calls (blocks with transactions, then their receipts, 10 per request,
//     one request at a time): rows/s of both and their ratio, and the CPU per row of anvil (alone, then during the
//     backfill), PostgreSQL and the indexer (this process), which share the machine's cores.
//   Goals (issue 30), judged at the largest size: each read's gateway p50 < 1 ms; backfill >= 0.8x anvil's rate.

import { execFileSync } from 'node:child_process';
import { copyFileSync, renameSync, rmSync, readdirSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { INDEXER_VERSION } from '../src/transfers/config.js';
import { migrate } from '../storage/transfers/schema.js';
import { openPgClient } from '../storage/transfers/sql-client.pg.js';
import { startAnvil, type Anvil } from '../test/support/anvil.js';
import { startFakeUpstreams, type FakeUpstreams } from '../test/rates/fakes/upstreams.js';
import { prng } from '../test/support/random.js';
import type { BenchOptions } from './run.js';
import { freePort, LOOPBACK, nowMs, sleep, startFilesNodeProcess, type FilesNodeProcess } from './support/files-node.js';
import { getJson } from './support/http-json.js';
import { runLoad, terminateLoadWorkers, type LoadSummary } from './support/load.js';
import { cpuSecondsOf, memoryOf, resetPeakRss, stopAllTracked } from './support/processes.js';
import { generateHistory, historyPairs, HISTORY_STEP_MS, JSON_TIMEOUT_MS, seedUpstreams, startService } from './support/rates-service.js';
import { GoalReport } from './support/goals.js';
import { combineRounds, interleave, measuredLoad, type MeasuredLoad } from './support/measured-load.js';
import { REPAIR_STATE_KEY } from '../actors/files/repair.actor.js';
import { openSqliteRegistry } from '../storage/files/registry.sqlite.js';
import { fillFilesStore, type FilledStore } from './support/scale-files.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, machineHeader, median, table } from './support/stats.js';
import { anvilServeCost, prepareChain, runIndexerHarness, type PreparedChain } from './support/transfers-chain.js';
import { INDEX_BUILDERS, loadTransfers } from './support/transfers-data.js';
import { serverCpuSeconds, startBenchPostgres, type BenchPostgres } from './support/transfers-postgres.js';
import { baselinePath, gatewayPath, matchingStatement, QUERY_NAMES, type QueryName, type QuerySubject } from './support/transfers-queries.js';
import { chooseSubjects, getSideJson, prepareVersionOneSchema, startSide, type SideServer } from './support/transfers-sides.js';

export const SCALE_SECTIONS = ['files', 'rates', 'transfers'] as const;
export const SCALE_SIZES = ['small', 'full'] as const;
export type ScaleSize = (typeof SCALE_SIZES)[number];

const FILES_SIZES: Readonly<Record<ScaleSize, readonly number[]>> = { small: [1_000, 10_000, 30_000], full: [10_000, 100_000, 1_000_000] };
/**
 * For investigation after a run: a folder (absent, on the scratch folder's file system) where the largest files store
 * is moved instead of removed, with the registry as filled kept beside it (`filled-registry.sqlite`) before the
 * original-store walk replaces it.
 */
const KEEP_FILES_STORE = process.env['ADM_SCALE_KEEP_FILES_STORE'];
const SNAPSHOTS_PER_DAY = 86_400_000 / HISTORY_STEP_MS;
const RATES_SIZES: Readonly<Record<ScaleSize, readonly number[]>> = {
  small: [30 * SNAPSHOTS_PER_DAY, 182 * SNAPSHOTS_PER_DAY],
  // Five years at the default refresh period: 262,800 snapshots (issue 30: "about 263,000").
  full: [365 * SNAPSHOTS_PER_DAY, 5 * 365 * SNAPSHOTS_PER_DAY],
};

/** Sequential requests per measured route and round, after the warm-up ones. */
const REQUESTS = 200;
/** Interleaved rounds per route of the store measured and of the reference node. */
const ROUTE_ROUNDS = 3;
/**
 * Files of the reference node measured beside each size (its own store, filled from another seed). The machine's
 * speed drifts over a run of an hour (the same route's p50 at 10k differed by 2.6x between two runs on this VM); the
 * reference, measured in rounds interleaved with the size's node, shows the drift, and the p50 over the reference's
 * is what the per-request goal is judged on.
 */
const REFERENCE_FILES = 1_000;
const WARMUP_REQUESTS = 20;
const UPLOAD_SIZE = 4096;
const GC_RUNS = 3;
/** How long a restarted node may take to say `ready` (bounded: 1M files is allowed 20 minutes). */
const READY_TIMEOUT_MS = 20 * 60_000;
const HEALTH_POLL_MS = 100;
const ADMIN_KEY = 'scale-bench-admin-key-0123456789';
const FILL_SEED = 30;
/**
 * The largest store whose first cycle with a peer (nothing acknowledged yet) is measured: it asks the peer about every
 * confirmed file (~0.3 ms each on this machine with the holdings protocol, ~4.5 ms before), and the peer's store is
 * filled too (~850 files/s); at 1M the two would add ~25 min to the run.
 */
const REPAIR_PEER_MAX_FILES = 100_000;
/** A cron schedule that never fires during a run (1 January, midnight). */
const FAR_AWAY = '0 0 0 1 1 *';
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
    // The storage measurement may be as old as with the default interval (2 × 60 s): at 2 × 1 s a measurement taken
    // before the repair cycle ended was already stale when it did, and `ready` waited for the next scan on the 30 s
    // cron (a first start at 100k files: 16-38 s instead of 7.6 s, the same build).
    health: { checkpointIntervalMs: 1_000, storageMaxAgeMs: 120_000 },
  };
}

interface Restart {
  readonly node: FilesNodeProcess;
  /** When the process was started (nowMs). */
  readonly startedMs: number;
  readonly httpMs: number;
  readonly readyMs: number;
  readonly cpuSeconds: number;
}

/** Starts the node on `home`'s store and waits for health `ready` (bounded by READY_TIMEOUT_MS). */
async function restartNode(home: string, label: string, config?: Record<string, unknown> & { serverPort: number }): Promise<Restart> {
  const started = nowMs();
  const node = await startFilesNodeProcess(home, config ?? filesConfig(await freePort()), { label, readyTimeoutMs: READY_TIMEOUT_MS });
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
    if (nowMs() > deadline) {
      // Stopped here: the caller never gets this node, and a node left running would outlive its deleted store.
      const tail = node.process.tail();
      await node.process.stop(60_000);
      throw new Error(`${label}: not ready within ${READY_TIMEOUT_MS / 1000} s (last health state: ${last}):\n${tail}`);
    }
    await sleep(HEALTH_POLL_MS);
  }
  return { node, startedMs: started, httpMs, readyMs: nowMs() - started, cpuSeconds: cpuSecondsOf(node.process.pid) ?? NaN };
}

/**
 * Waits until the node's first disk-usage scan has finished (storage metrics' `measuredAt` set): `ready` no longer
 * waits for it, and at 1M its walk (~35 s, one core) would otherwise share the machine with the requests measured
 * next. Answers the seconds since `startedMs`.
 */
async function firstScanDone(port: number, startedMs: number): Promise<number> {
  const deadline = nowMs() + READY_TIMEOUT_MS;
  for (;;) {
    const { body } = await getJson(port, '/api/storage/metrics', JSON_TIMEOUT_MS);
    if (typeof body?.measuredAt === 'number') return nowMs() - startedMs;
    if (nowMs() > deadline) throw new Error(`the first disk-usage scan did not finish within ${READY_TIMEOUT_MS / 1000} s`);
    await sleep(HEALTH_POLL_MS);
  }
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

/**
 * The per-request routes on the node of `n` files and on a reference node of REFERENCE_FILES started beside it, in
 * ROUTE_ROUNDS interleaved rounds (the side going first alternating): p50 the median of the rounds', the node's CPU per
 * request over them, and the p50 over the reference's.
 */
async function measureRoutes(n: number, column: number, growth: GrowthTable, port: number, pid: number, held: readonly string[]): Promise<void> {
  const referenceHome = makeScratchDir(`adm-bench-scale-files-reference-${sizeLabel(n)}`);
  let reference: Restart | undefined;
  try {
    const referenceFill = await fillFilesStore(join(referenceHome, '.adm-ipfs'), REFERENCE_FILES, { seed: FILL_SEED + 1, now: Date.now() });
    reference = await restartNode(referenceHome, `files-reference-${sizeLabel(n)}`);
    await firstScanDone(reference.node.port, reference.startedMs);
    type Side = { port: number; pid: number; held: readonly string[]; uploadSeed: number };
    const sized: Side = { port, pid, held, uploadSeed: n };
    const referenceNode: Side = { port: reference.node.port, pid: reference.node.process.pid, held: referenceFill.sampleHeld, uploadSeed: n + 1 };
    const admin = { 'x-api-key': ADMIN_KEY };
    const routes: Array<[string, (side: Side, round: number) => Omit<Parameters<typeof runLoad>[0], 'connections'>]> = [
      ['GET /api/node/details', ({ port }) => ({ port, paths: ['/api/node/details'], headers: admin })],
      ['GET /api/storage/metrics', ({ port }) => ({ port, paths: ['/api/storage/metrics'] })],
      ['GET /api/file/{cid}/status', ({ port, held }) => ({ port, paths: held.map((cid) => `/api/file/${cid}/status`) })],
      ['GET /api/file/{cid} (1-4 KiB)', ({ port, held }) => ({ port, paths: held.map((cid) => `/api/file/${cid}`) })],
      [
        'POST /api/file/upload (4 KiB)',
        ({ port, uploadSeed }, round) => ({ port, posts: Array.from({ length: REQUESTS + WARMUP_REQUESTS }, (_, i) => uploadBody(uploadSeed, round * (REQUESTS + WARMUP_REQUESTS) + i)) }),
      ],
    ];
    for (const [name, load] of routes) {
      const measure = (side: Side, round: number) => measureRoute(side.pid, { ...load(side, round), connections: 1, warmupRequests: WARMUP_REQUESTS, maxRequests: REQUESTS });
      let sizedRounds = 0;
      let referenceRounds = 0;
      const [own, ref] = await interleave(ROUTE_ROUNDS, () => measure(sized, sizedRounds++), () => measure(referenceNode, referenceRounds++));
      const p50 = median(own.map((r) => r.summary.p50));
      const referenceP50 = median(ref.map((r) => r.summary.p50));
      const cpu = median(own.map((r) => r.cpuMsPerRequest));
      growth.set(`${name} p50`, column, p50, ms(p50, 3));
      growth.set(`${name} node CPU/req`, column, cpu, ms(cpu, 3));
      growth.set(`${name} p50 / reference's`, column, p50 / referenceP50, `${fmt(p50 / referenceP50, 2)}x`);
      say(
        `   ${name}: p50 ${own.map((r) => ms(r.summary.p50, 3)).join(' / ')} (rounds), p99 ${ms(median(own.map((r) => r.summary.p99)), 3)}, node CPU ${ms(cpu, 3)}/req; ` +
          `reference (${fmtInt(REFERENCE_FILES)} files) p50 ${ref.map((r) => ms(r.summary.p50, 3)).join(' / ')}: ${fmt(p50 / referenceP50, 2)}x`,
      );
    }
  } finally {
    await reference?.node.process.stop(60_000);
    rmSync(referenceHome, { recursive: true, force: true });
  }
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

/** undici's fetch gives up on an answer whose headers take over 300 s; a real run at 1M releasing a day's expiries can. */
const LONG_ANSWERS = new Agent({ headersTimeout: READY_TIMEOUT_MS, bodyTimeout: READY_TIMEOUT_MS });

/** POST /api/storage/gc: a dry run, a real one or a forced one, and its report. */
async function gcRun(port: number, mode: 'dry' | 'real' | 'force'): Promise<{ wallMs: number; report: any }> {
  const started = nowMs();
  const query = mode === 'dry' ? '?dryRun=true' : mode === 'force' ? '?force=true' : '';
  const response = await undiciFetch(`http://${LOOPBACK}:${port}/api/storage/gc${query}`, {
    dispatcher: LONG_ANSWERS,
    method: 'POST',
    headers: { 'x-api-key': ADMIN_KEY },
    signal: AbortSignal.timeout(READY_TIMEOUT_MS),
  });
  const text = await response.text();
  const wallMs = nowMs() - started;
  if (response.status !== 200) throw new Error(`GC ${mode} run answered ${response.status}: ${text.slice(0, 300)}`);
  return { wallMs, report: JSON.parse(text) };
}

function removeRegistry(home: string): void {
  const store = join(home, '.adm-ipfs');
  for (const name of readdirSync(store)) if (name.startsWith('registry.sqlite')) rmSync(join(store, name));
}

async function benchFilesAt(n: number, column: number, growth: GrowthTable, keepTo: string | undefined): Promise<void> {
  const home = makeScratchDir(`adm-bench-scale-files-${sizeLabel(n)}`);
  say(`-- ${fmtInt(n)} files (store in ${home})`);
  const fillStarted = Date.now();
  const fillNow = Date.now();
  let reported = 0;
  const filled: FilledStore = await fillFilesStore(join(home, '.adm-ipfs'), n, {
    seed: FILL_SEED,
    now: fillNow,
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
    const scannedMs = await firstScanDone(node.port, restart.startedMs);
    growth.set('first start: first disk-usage scan done', column, scannedMs, s(scannedMs));
    say(`   first disk-usage scan done after ${s(scannedMs)} (the requests below start then)`);

    await measureRoutes(n, column, growth, node.port, pid, filled.sampleHeld);

    const gc: number[] = [];
    let gcCpu = NaN;
    let records = '';
    for (let i = 0; i < GC_RUNS; i++) {
      const before = cpuSecondsOf(pid);
      const { wallMs, report } = await gcRun(node.port, 'dry');
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

    // Then the runs that change the store: a real one, as the schedule makes them (the temporaries past their expiry
    // released; without pressure no block is deleted), then a forced one, whose deletion pass walks every block file
    // and deletes each one no pin covers, as a run under pressure does until it has freed enough. The measurements
    // after them see the collected store (~3% fewer pins and ~11% fewer blocks than the fill made).
    for (const [name, mode] of [['GC real run', 'real'], ['GC forced run', 'force']] as const) {
      resetPeakRss(pid);
      const cpuBefore = cpuSecondsOf(pid);
      const { wallMs, report } = await gcRun(node.port, mode);
      const cpu = (cpuSecondsOf(pid) ?? NaN) - (cpuBefore ?? NaN);
      const peak = memoryOf(pid)?.peakMiB ?? NaN;
      growth.set(name, column, wallMs, s(wallMs));
      growth.set(`${name} node CPU`, column, cpu, `${fmt(cpu, 2)} s`);
      growth.set(`${name}: RSS peak`, column, peak, `${fmt(peak, 1)} MiB`);
      say(
        `   ${name}: ${s(wallMs)}, node CPU ${fmt(cpu, 2)} s, released ${fmtInt(report.releasedCids.length)}, removed ${fmtInt(report.removedBlocks)} blocks, ` +
          `${report.errors.length} errors, RSS peak ${fmt(peak, 1)} MiB`,
      );
    }
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

    await benchRepairWithPeer(n, column, growth, home, fillNow, filled);

    // The original service's store: the same blocks and pins, no registry. The walk registers every pin.
    if (keepTo !== undefined) copyFileSync(registryPath, join(home, 'filled-registry.sqlite'));
    removeRegistry(home);
    restart = await restartNode(home, `files-original-${sizeLabel(n)}`);
    growth.set('original store: health ready (walk)', column, restart.readyMs, s(restart.readyMs));
    growth.set('original store: node CPU until ready', column, restart.cpuSeconds, `${fmt(restart.cpuSeconds, 2)} s`);
    say(`   original store (no registry): HTTP after ${s(restart.httpMs)}, ready after ${s(restart.readyMs)}, node CPU ${fmt(restart.cpuSeconds, 2)} s`);
    await restart.node.process.stop(60_000);
    restart = undefined;
  } finally {
    await restart?.node.process.stop(60_000);
    if (keepTo === undefined) rmSync(home, { recursive: true, force: true });
    else {
      renameSync(home, keepTo);
      say(`   store kept in ${keepTo} (ADM_SCALE_KEEP_FILES_STORE)`);
    }
  }
}

/**
 * Runs POST /api/storage/repair (one batch each) until a cycle ends, then times one whole cycle from its first batch
 * to the batch that completes it: wall time, batches, files checked, and the CPU seconds of each of `pids` over it.
 * A 409 (a batch or a scheduled cycle in progress) is asked again a moment later.
 */
async function wholeRepairCycle(port: number, pids: readonly number[]): Promise<{ ms: number; batches: number; checked: number; cpuSeconds: number[] }> {
  const deadline = nowMs() + READY_TIMEOUT_MS;
  const batch = async (): Promise<any> => {
    for (;;) {
      if (nowMs() > deadline) throw new Error(`no whole repair cycle within ${READY_TIMEOUT_MS / 1000} s`);
      const response = await fetch(`http://${LOOPBACK}:${port}/api/storage/repair`, { method: 'POST', headers: { 'x-api-key': ADMIN_KEY }, signal: AbortSignal.timeout(READY_TIMEOUT_MS) });
      const text = await response.text();
      if (response.status === 409) {
        await sleep(200);
        continue;
      }
      if (response.status !== 200) throw new Error(`POST /api/storage/repair answered ${response.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text);
    }
  };
  while ((await batch()).cycleCompleted !== true);
  const cpuBefore = pids.map((pid) => cpuSecondsOf(pid) ?? NaN);
  const started = nowMs();
  let batches = 0;
  let checked = 0;
  for (;;) {
    const report = await batch();
    batches++;
    checked += Number(report.checked ?? 0);
    if (report.cycleCompleted === true) break;
  }
  return { ms: nowMs() - started, batches, checked, cpuSeconds: pids.map((pid, index) => (cpuSecondsOf(pid) ?? NaN) - cpuBefore[index]!) };
}

/** The replication settings of the two members of the repair measurement: both designated for every file. */
function pairReplication(repairEnabled: boolean): Record<string, unknown> {
  return { enabled: true, repairEnabled, placement: [{ minAgeMs: 0, copies: 2 }], ackQuorum: 1, repairSchedule: FAR_AWAY, repairBatchDelayMs: 0 };
}

/**
 * Prepares the registry at `path` (the node must not be running) for a start with copies already acknowledged: with
 * `peerId`, that peer's acknowledgement of a stored copy of every confirmed file, dated `now`, through the registry's
 * own write, 10,000 files a transaction (a member of a cluster that has run has them); and the repair evidence
 * removed, as a change of the node list or the placement does. Returns how many acknowledgements were written.
 */
function prepareAcknowledgedStart(path: string, peerId: string | undefined, now: number): number {
  const registry = openSqliteRegistry(path);
  let noted = 0;
  try {
    registry.deleteState(REPAIR_STATE_KEY);
    let after: string | undefined;
    while (peerId !== undefined) {
      const cids = registry.listCids({ state: 'confirmed', limit: 10_000, ...(after === undefined ? {} : { afterCid: after }) });
      if (cids.length === 0) break;
      noted += registry.noteHolders(cids.map((cid) => ({ cid, held: [peerId] })), now);
      after = cids.at(-1);
    }
  } finally {
    registry.close();
  }
  return noted;
}

/**
 * Repair with a peer (issue 30): node P on the store of `home` and a peer Q, both listed in `nodes` with 2 copies of
 * every file, so Q is designated for every file P holds; Q's own repair is off, so P's cycles are alone.
 * 1. Up to REPAIR_PEER_MAX_FILES files, Q's store is filled from the same seed (it holds every copy) and P starts with
 *    nothing acknowledged: its startup cycle asks Q about every confirmed file (a holdings request per batch of 100),
 *    and health is `ready` once that cycle has completed. Unpaced here (`repairBatchDelayMs: 0`). Above, Q's fill and
 *    that cycle would add ~25 min to the run, so Q is an empty store and P's registry gets Q's acknowledgement of
 *    every confirmed file, dated now, through the registry's own write: a cluster that has run.
 * 2. P starts with every copy acknowledged and no repair evidence (removed, as a change of `nodes` does): `ready`
 *    waits for a whole cycle, which asks nobody (every copy within the recheck window): the walk over the registry.
 * 3. P restarts with its evidence and copies current (a plain restart of a cluster member), until `ready`.
 * 4. A whole cycle after it, one POST /api/storage/repair per batch.
 */
async function benchRepairWithPeer(n: number, column: number, growth: GrowthTable, home: string, fillNow: number, filled: FilledStore): Promise<void> {
  const peerHome = makeScratchDir(`adm-bench-scale-files-peer-${sizeLabel(n)}`);
  const registryPath = join(home, '.adm-ipfs', 'registry.sqlite');
  const firstCycle = n <= REPAIR_PEER_MAX_FILES;
  let primary: Restart | undefined;
  let peer: FilesNodeProcess | undefined;
  try {
    const peerFill = await fillFilesStore(join(peerHome, '.adm-ipfs'), firstCycle ? n : 0, { seed: FILL_SEED, now: fillNow });
    say(firstCycle ? `   repair with a peer: the peer's store (the same files) filled in ${s(peerFill.ms)}` : '   repair with a peer: the peer is an empty store; its copies are taken as acknowledged');
    const [primaryP2p, peerP2p] = [await freePort(), await freePort()];
    const nodes = [
      { name: 'P', multiAddr: `/ip4/${LOOPBACK}/tcp/${primaryP2p}/p2p/${filled.peerId}` },
      { name: 'Q', multiAddr: `/ip4/${LOOPBACK}/tcp/${peerP2p}/p2p/${peerFill.peerId}` },
    ];
    const memberConfig = (port: number, p2pPort: number, repairEnabled: boolean) => {
      const base = filesConfig(port);
      return {
        ...base,
        nodes,
        peerDiscovery: { listen: [`/ip4/${LOOPBACK}/tcp/${p2pPort}`], bootstrap: [] },
        replication: pairReplication(repairEnabled),
        health: { ...(base.health as Record<string, unknown>), requiredPeerCount: 0 },
      };
    };
    peer = await startFilesNodeProcess(peerHome, memberConfig(await freePort(), peerP2p, false), { label: `files-peer-${sizeLabel(n)}`, readyTimeoutMs: READY_TIMEOUT_MS });
    const startPrimary = async (label: string) => {
      const peerCpuBefore = cpuSecondsOf(peer!.process.pid) ?? NaN;
      const started = await restartNode(home, `${label}-${sizeLabel(n)}`, memberConfig(await freePort(), primaryP2p, true));
      return { started, peerCpu: (cpuSecondsOf(peer!.process.pid) ?? NaN) - peerCpuBefore };
    };

    if (firstCycle) {
      const { started, peerCpu } = await startPrimary('files-repair-first');
      primary = started;
      const { body: metrics } = await getJson(primary.node.port, '/api/storage/metrics', JSON_TIMEOUT_MS);
      growth.set('start with a peer, nothing acknowledged: health ready (asks about every file)', column, primary.readyMs, s(primary.readyMs));
      growth.set('the same start: node CPU until ready (peer CPU)', column, primary.cpuSeconds, `${fmt(primary.cpuSeconds, 2)} s (${fmt(peerCpu, 2)} s)`);
      say(
        `   start with a peer holding every copy, nothing acknowledged: HTTP after ${s(primary.httpMs)}, ready after ${s(primary.readyMs)} (its startup cycle asked the peer about ` +
          `${fmtInt(filled.counts.confirmed)} confirmed files, ${ms(primary.readyMs / Math.max(1, filled.counts.confirmed), 2)} a file), node CPU ${fmt(primary.cpuSeconds, 2)} s, ` +
          `peer CPU ${fmt(peerCpu, 2)} s; cycle ${JSON.stringify(metrics?.replication?.cycle ?? null).slice(0, 300)}`,
      );
      await primary.node.process.stop(60_000);
      primary = undefined;
    }
    const noted = prepareAcknowledgedStart(registryPath, firstCycle ? undefined : peerFill.peerId, Date.now());
    if (!firstCycle) say(`   the peer's acknowledgement of ${fmtInt(noted)} confirmed files written into the registry`);

    // Every copy acknowledged, no repair evidence: `ready` waits for a whole cycle, which asks nobody.
    const fresh = await startPrimary('files-repair-evidence');
    primary = fresh.started;
    growth.set('start with a peer, copies acknowledged, no evidence: health ready (a whole walk)', column, fresh.started.readyMs, s(fresh.started.readyMs));
    growth.set('the same start: node CPU until ready', column, fresh.started.cpuSeconds, `${fmt(fresh.started.cpuSeconds, 2)} s`);
    say(
      `   start with a peer, every copy acknowledged, no repair evidence: HTTP after ${s(fresh.started.httpMs)}, ready after ${s(fresh.started.readyMs)}, ` +
        `node CPU ${fmt(fresh.started.cpuSeconds, 2)} s, peer CPU ${fmt(fresh.peerCpu, 2)} s`,
    );
    await primary.node.process.stop(60_000);
    primary = undefined;

    // A plain restart of a cluster member: evidence and acknowledgements current.
    const { started, peerCpu } = await startPrimary('files-repair-restart');
    primary = started;
    growth.set('restart with a peer, evidence and copies current: health ready', column, primary.readyMs, s(primary.readyMs));
    growth.set('the same restart: node CPU until ready (peer CPU)', column, primary.cpuSeconds, `${fmt(primary.cpuSeconds, 2)} s (${fmt(peerCpu, 2)} s)`);
    say(`   restart with a peer, evidence and copies current: HTTP after ${s(primary.httpMs)}, ready after ${s(primary.readyMs)}, node CPU ${fmt(primary.cpuSeconds, 2)} s, peer CPU ${fmt(peerCpu, 2)} s`);
    const cycle = await wholeRepairCycle(primary.node.port, [primary.node.process.pid, peer.process.pid]);
    growth.set('a repair cycle with a peer, copies acknowledged: wall', column, cycle.ms, s(cycle.ms));
    growth.set('the same cycle: node CPU (peer CPU)', column, cycle.cpuSeconds[0]!, `${fmt(cycle.cpuSeconds[0]!, 2)} s (${fmt(cycle.cpuSeconds[1]!, 2)} s)`);
    say(
      `   a whole repair cycle, every copy acknowledged within the recheck window: ${s(cycle.ms)} for ${fmtInt(cycle.batches)} batches (one POST each), ` +
        `${fmtInt(cycle.checked)} files asked about, node CPU ${fmt(cycle.cpuSeconds[0]!, 2)} s, peer CPU ${fmt(cycle.cpuSeconds[1]!, 2)} s`,
    );
  } finally {
    await primary?.node.process.stop(60_000);
    await peer?.process.stop(60_000);
    rmSync(peerHome, { recursive: true, force: true });
  }
}

async function benchFiles(size: ScaleSize): Promise<void> {
  const sizes = FILES_SIZES[size];
  say(`== files: stores of ${sizes.map(fmtInt).join(', ')} files; per size: fill, restart, ${ROUTE_ROUNDS} rounds of ${REQUESTS} sequential requests per route (1 connection, after ${WARMUP_REQUESTS}) interleaved with a reference node of ${fmtInt(REFERENCE_FILES)} files, GC dry run x${GC_RUNS}, restart, repair with a peer (a first cycle up to ${fmtInt(REPAIR_PEER_MAX_FILES)} files), original-store walk`);
  const growth = new GrowthTable(sizes.map(sizeLabel));
  try {
    for (const [column, n] of sizes.entries()) await benchFilesAt(n, column, growth, column === sizes.length - 1 ? KEEP_FILES_STORE : undefined);
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
// transfers

/** Medium-popularity addresses read per query (bench/support/transfers-sides.ts chooseSubjects). */
const TRANSFERS_SUBJECTS = 40;
/** Answers compared between the gateway and direct pg before anything is measured (per query). */
const TRANSFERS_CHECKED_SUBJECTS = 3;
/** Latency at 1 connection: rounds of every read on both sides (the order below), p50 = median of the rounds'. */
const TRANSFERS_ROUNDS = 3;
const TRANSFERS_ROUND_MS = 1_000;
const TRANSFERS_WARMUP_MS = 250;
/**
 * Before the measured rounds, each side serves every read for this long, unmeasured: a gateway in service has its
 * code compiled and its statements prepared and planned (the first read measured after a start carried that: native,
 * measured first, cost each side twice the CPU per request of the reads after it). After 2 s the first read measured
 * at 10M still cost the gateway 2.2× the CPU per request of the last (fourth full run): a warm-up not yet over, or
 * the VM's speed drifting (the interleaved rounds below take that part).
 */
const TRANSFERS_SIDE_WARMUP_MS = 10_000;
/** Sequential counted requests of the busiest address (an exact count reads every row of it), after one. */
const COUNT_REQUESTS = 5;
const MAX_BLOCK_REQUESTS = 200;
const TRANSFERS_SEED = 20_240_601;
const TRANSFERS_BATCH_ROWS = 10_000;
const TRANSFERS_ANON_ROLE = 'web_anon';
/** The backfill's chain (issue 30: 2,000 blocks), prepared once on anvil and indexed into each size's table. */
const BACKFILL_BLOCKS = 2_000;
const BACKFILL_TRANSFERS_PER_BLOCK = 50;
const BACKFILL_TOKEN_SHARE = 0.3;
const BACKFILL_SEED = 7;
const BACKFILL_PREPARE_BUDGET_MS = 240_000;
const BACKFILL_TIMEOUT_MS = 600_000;
/** Goals of issue 30, judged at the largest size. */
const GOAL_READ_P50_MS = 1;
const GOAL_BACKFILL_RATIO = 0.8;
const TRANSFERS_SIZES: Readonly<Record<ScaleSize, readonly number[]>> = { small: [100_000, 1_000_000], full: [1_000_000, 10_000_000] };

interface TransfersRun {
  readonly pgc: BenchPostgres;
  readonly anvil: Anvil;
  readonly chain: PreparedChain;
  readonly growth: GrowthTable;
  readonly goals: GoalReport;
  readonly largest: boolean;
}

async function benchTransfersAt(n: number, column: number, run: TransfersRun): Promise<void> {
  const { pgc, growth } = run;
  const label = sizeLabel(n);
  const dbName = `scale_${n}`;
  say(`-- ${fmtInt(n)} rows (database ${dbName}; load average ${loadavg().map((l) => fmt(l, 2)).join(' ')})`);
  const dbUrl = await pgc.createDatabase(dbName);
  const admin = openPgClient({ connection: { connectionString: dbUrl }, maxConnections: INDEX_BUILDERS, applicationName: 'adm-infra scale loader' });
  let gateway: SideServer | undefined;
  let baseline: SideServer | undefined;
  try {
    await prepareVersionOneSchema(admin, TRANSFERS_ANON_ROLE);
    const loadStarted = Date.now();
    const { world, report } = await loadTransfers(admin, { rows: n, seed: TRANSFERS_SEED, batchRows: TRANSFERS_BATCH_ROWS }, (line) => say(`  ${line} (${s(Date.now() - loadStarted)})`));
    const loadMs = Date.now() - loadStarted;
    say(
      `   loaded ${fmtInt(report.rows)} rows in ${fmtInt(report.blocks)} blocks in ${s(loadMs)} (${fmtInt((report.rows / loadMs) * 1000)} rows/s): generating ${s(report.generateMs)}, ` +
        `INSERT ${s(report.insertMs)}, ${report.indexes.length} indexes ${s(report.indexMs)}, VACUUM ANALYZE ${s(report.vacuumMs)}`,
    );
    const upgradeStarted = Date.now();
    let lastProgress = 0;
    const upgrade = await migrate(admin, INDEXER_VERSION, {
      onProgress: (p) => {
        if (p.event === 'building' && Date.now() - lastProgress >= 15_000) {
          lastProgress = Date.now();
          say(`   migration 2: ${p.index} ${p.phase} (${fmtInt(p.blocksDone ?? 0)}/${fmtInt(p.blocksTotal ?? 0)} blocks) after ${s(p.elapsedMs)}`);
        }
      },
    });
    const migrationMs = Date.now() - upgradeStarted;
    say(`   migration 2 (${upgrade.builtIndexes.length} indexes ${upgrade.builtIndexes.every((b) => b.concurrently) ? 'CONCURRENTLY' : 'not concurrently'}): ${s(migrationMs)} (${upgrade.builtIndexes.map((b) => `${b.name} ${s(b.ms)}`).join(', ')})`);
    const [sizes] = await admin.query(`SELECT pg_table_size('public.ethtxs')::text AS t, pg_indexes_size('public.ethtxs')::text AS i`);
    const tableBytes = Number(sizes?.t);
    const indexBytes = Number(sizes?.i);
    growth.set('load: rows/s (generate + INSERT + 8 indexes + VACUUM)', column, (report.rows / loadMs) * 1000, fmtInt((report.rows / loadMs) * 1000));
    growth.set('migration 2 on the loaded table (4 indexes CONCURRENTLY)', column, migrationMs, s(migrationMs));
    growth.set('table on disk', column, tableBytes, mib(tableBytes));
    growth.set('indexes on disk (12)', column, indexBytes, mib(indexBytes));
    // A table in service has no bulk load behind it: the load's and the index builds' writes (the throwaway cluster
    // runs with fsync off, so they sit in the kernel's dirty pages) are flushed first, or the reads measure writeback.
    const settleStarted = Date.now();
    await admin.query('CHECKPOINT');
    execFileSync('sync');
    say(`   checkpoint and writeback before the reads: ${s(Date.now() - settleStarted)}`);

    const subjects = await chooseSubjects(admin, world, TRANSFERS_SUBJECTS);
    if (subjects.length < TRANSFERS_SUBJECTS / 2) throw new Error(`only ${subjects.length} of ${TRANSFERS_SUBJECTS} medium addresses have a full first page`);
    const subjectRows: number[] = [];
    for (const subject of subjects) {
      const statement = matchingStatement('keyset', { ...subject, cursorTime: 2 ** 31 - 1, cursorHash: '' });
      subjectRows.push(Number((await admin.query(statement.text, statement.values as unknown[]))[0]?.n));
    }
    const busiest: QuerySubject = { address: world.hot[0]!.toLowerCase(), token: subjects[0]!.token, cursorTime: 0, cursorHash: '' };
    const busiestStatement = matchingStatement('native', busiest);
    const busiestRows = Number((await admin.query(busiestStatement.text, busiestStatement.values as unknown[]))[0]?.n);
    say(`   ${subjects.length} query subjects with ${fmtInt(median(subjectRows))} rows each (median; ${fmtInt(Math.min(...subjectRows))}–${fmtInt(Math.max(...subjectRows))}); the busiest address has ${fmtInt(busiestRows)} native rows`);
    growth.set('rows of a query subject (median)', column, median(subjectRows), fmtInt(median(subjectRows)));
    growth.set('native rows of the busiest address', column, busiestRows, fmtInt(busiestRows));

    gateway = await startSide('gateway', dbUrl, `gateway-${label}`);
    baseline = await startSide('baseline', dbUrl, `direct-pg-${label}`);
    // Both sides must answer the same rows in the same order before their speed means anything.
    for (const name of QUERY_NAMES) {
      for (const subject of subjects.slice(0, TRANSFERS_CHECKED_SUBJECTS)) {
        const g = await getSideJson(gateway.port, gatewayPath(name, subject));
        const b = await getSideJson(baseline.port, baselinePath(name, subject));
        const hashes = (list: unknown) => (Array.isArray(list) ? list.map((row: { txhash?: unknown }) => String(row.txhash).toLowerCase()).join(',') : `(${typeof list})`);
        if (g.status !== 200 || b.status !== 200 || !Array.isArray(g.body) || g.body.length === 0 || hashes(g.body) !== hashes(b.body)) {
          throw new Error(`${name}: the gateway (${g.status}, ${g.text.slice(0, 120)}) and direct pg (${b.status}) answer different pages for ${gatewayPath(name, subject)}`);
        }
      }
    }

    // What each read returns: a subject's token history at 100k is shorter than a page (a medium address has ~8 rows
    // of its busiest token there, 25 at 1M), so a read's cost per request is only comparable across sizes beside it.
    for (const name of QUERY_NAMES) {
      const rowsOnPage: number[] = [];
      for (const subject of subjects) {
        const answer = await getSideJson(gateway.port, gatewayPath(name, subject));
        if (answer.status !== 200 || !Array.isArray(answer.body)) throw new Error(`${name}: the gateway answered ${answer.status} for ${gatewayPath(name, subject)}`);
        rowsOnPage.push(answer.body.length);
      }
      const mean = rowsOnPage.reduce((sum, rows) => sum + rows, 0) / rowsOnPage.length;
      growth.set(`${name}: rows on the page (mean)`, column, mean, fmt(mean, 1));
    }

    const pathsOf = (side: SideServer, name: QueryName) => subjects.map((subject) => (side.kind === 'gateway' ? gatewayPath(name, subject) : baselinePath(name, subject)));
    const parties = (side: SideServer) => ({ server: () => cpuSecondsOf(side.process.pid), pg: () => serverCpuSeconds(pgc.postmasterPid) });
    const latency = (name: QueryName, side: SideServer) =>
      measuredLoad(parties(side), () =>
        runLoad({
          port: side.port,
          paths: pathsOf(side, name),
          connections: 1,
          warmupMs: TRANSFERS_WARMUP_MS,
          durationMs: TRANSFERS_ROUND_MS,
        }),
      );
    const perRequestMs = (m: MeasuredLoad<'server' | 'pg'>, cpu: number) => (m.requestsPerSecond > 0 ? (cpu / 100 / m.requestsPerSecond) * 1000 : NaN);
    for (const side of [gateway, baseline]) {
      const warm = await runLoad({ port: side.port, paths: QUERY_NAMES.flatMap((name) => pathsOf(side, name)), connections: 1, durationMs: TRANSFERS_SIDE_WARMUP_MS });
      if (warm.errors > 0) throw new Error(`${side.kind}: errors while warming up: ${warm.errorDetail}`);
    }
    // Every round measures each read on both sides: the reads in an order rotating by one a round (each read first,
    // second and third once in three rounds), a read's two sides back to back, the side going first alternating. A
    // change in the VM's speed during these seconds then falls on the three reads alike. Measured one read after the
    // other, the first carried it alone (the fourth full run at 10M: the gateway's own CPU per request 0.64, 0.43,
    // 0.29 ms for native, token, keyset in the order measured, for the same work per request).
    const rounds = QUERY_NAMES.map(() => ({ direct: [] as MeasuredLoad<'server' | 'pg'>[], gateway: [] as MeasuredLoad<'server' | 'pg'>[] }));
    for (let round = 0; round < TRANSFERS_ROUNDS; round++) {
      for (let step = 0; step < QUERY_NAMES.length; step++) {
        const index = (round + step) % QUERY_NAMES.length;
        const name = QUERY_NAMES[index]!;
        const direct = () => latency(name, baseline!).then((m) => void rounds[index]!.direct.push(m));
        const throughGateway = () => latency(name, gateway!).then((m) => void rounds[index]!.gateway.push(m));
        for (const measure of round % 2 === 0 ? [direct, throughGateway] : [throughGateway, direct]) await measure();
      }
    }
    for (const [index, name] of QUERY_NAMES.entries()) {
      const bl = combineRounds(rounds[index]!.direct);
      const gl = combineRounds(rounds[index]!.gateway);
      if (gl.errors > 0 || bl.errors > 0) throw new Error(`${name}: errors during the latency runs (gateway ${gl.errors}: ${gl.errorDetail}; direct ${bl.errors}: ${bl.errorDetail})`);
      growth.set(`${name}: gateway p50`, column, gl.p50, ms(gl.p50, 3));
      growth.set(`${name}: direct pg p50`, column, bl.p50, ms(bl.p50, 3));
      growth.set(`${name}: PostgreSQL CPU/req (gateway)`, column, perRequestMs(gl, gl.cpu.pg), ms(perRequestMs(gl, gl.cpu.pg), 3));
      say(
        `   ${name}: p50 gateway ${ms(gl.p50, 3)} / direct ${ms(bl.p50, 3)}, p99 ${ms(gl.p99, 3)} / ${ms(bl.p99, 3)}; CPU/req gateway ${ms(perRequestMs(gl, gl.cpu.server), 3)} + pg ${ms(perRequestMs(gl, gl.cpu.pg), 3)}, ` +
          `direct ${ms(perRequestMs(bl, bl.cpu.server), 3)} + pg ${ms(perRequestMs(bl, bl.cpu.pg), 3)}; other work ${fmt(gl.cpu.other, 0)}% / ${fmt(bl.cpu.other, 0)}% of a core`,
      );
      if (run.largest) {
        run.goals.judge(`${name}: gateway p50 at 1 conn, ${label} rows`, ms(gl.p50, 3), ms(bl.p50, 3), `${fmt(gl.p50 / bl.p50, 2)}x`, `< ${GOAL_READ_P50_MS} ms`, gl.p50 < GOAL_READ_P50_MS);
      }
    }

    // The busiest address's native history with a count (Prefer, PostgREST semantics; PGRST_DB_MAX_ROWS is 10,000,
    // so `estimated` counts up to 10,001 rows exactly and asks the planner beyond), and its page without one.
    const busiestPath = gatewayPath('native', busiest);
    for (const [what, prefer] of [
      ['busiest address: native page, no count', undefined],
      ['busiest address: count=exact', 'count=exact'],
      ['busiest address: count=estimated', 'count=estimated'],
    ] as const) {
      const headers: Record<string, string> = prefer === undefined ? {} : { Prefer: prefer };
      const answer = await getSideJson(gateway.port, busiestPath, headers, 600_000);
      if ((answer.status !== 200 && answer.status !== 206) || !Array.isArray(answer.body)) throw new Error(`${what}: the gateway answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      const before = serverCpuSeconds(pgc.postmasterPid);
      const load = await runLoad({ port: gateway.port, paths: [busiestPath], headers, connections: 1, warmupRequests: 1, maxRequests: COUNT_REQUESTS });
      const pgCpuMs = (((serverCpuSeconds(pgc.postmasterPid) ?? NaN) - (before ?? NaN)) * 1000) / (COUNT_REQUESTS + 1);
      if (load.errors > 0) throw new Error(`${what}: ${load.errors} errors (${load.errorDetail})`);
      growth.set(`${what} p50`, column, load.p50, ms(load.p50, 2));
      growth.set(`${what}: PostgreSQL CPU/req`, column, pgCpuMs, ms(pgCpuMs, 2));
      say(`   ${what}: p50 ${ms(load.p50, 2)} (${COUNT_REQUESTS} sequential requests), PostgreSQL CPU ${ms(pgCpuMs, 2)}/req; Content-Range ${answer.headers.get('content-range')}`);
      if (run.largest) run.goals.info(`${what} p50, ${label} rows`, ms(load.p50, 2));
    }

    const maxBlock = await getSideJson(gateway.port, '/max_block');
    if (maxBlock.status !== 200 || !Array.isArray(maxBlock.body) || maxBlock.body.length !== 1) throw new Error(`/max_block answered ${maxBlock.status}: ${maxBlock.text.slice(0, 200)}`);
    const mb = await measuredLoad(parties(gateway), () => runLoad({ port: gateway!.port, paths: ['/max_block'], connections: 1, warmupRequests: 20, maxRequests: MAX_BLOCK_REQUESTS }));
    if (mb.errors > 0) throw new Error(`/max_block: ${mb.errors} errors (${mb.errorDetail})`);
    growth.set('/max_block p50', column, mb.p50, ms(mb.p50, 3));
    growth.set('/max_block: PostgreSQL CPU/req', column, perRequestMs(mb, mb.cpu.pg), ms(perRequestMs(mb, mb.cpu.pg), 3));
    say(`   /max_block ${maxBlock.text}: p50 ${ms(mb.p50, 3)}, PostgreSQL CPU ${ms(perRequestMs(mb, mb.cpu.pg), 3)}/req`);
    if (run.largest) run.goals.info(`/max_block p50, ${label} rows`, ms(mb.p50, 3));
    await gateway.process.stop();
    gateway = undefined;
    await baseline.process.stop();
    baseline = undefined;

    // The backfill: the prepared chain's blocks indexed into this table by the indexer machine (block receipts, as
    // the service picks on anvil), next to what anvil itself takes to serve the same calls. The generated rows sit
    // at blocks 15,000,000 and up, so the run watches the indexer's cursor, not max_block.
    const { anvil, chain } = run;
    // CPU of each party, so the table shows where a row's time goes: anvil serving alone, then anvil, PostgreSQL and
    // the indexer (this process) during the backfill, all on the same cores.
    const cpuNow = () => ({ anvil: cpuSecondsOf(anvil.pid) ?? NaN, pg: serverCpuSeconds(pgc.postmasterPid) ?? NaN, indexer: process.cpuUsage() });
    const serveCpu = cpuNow();
    const serve = await anvilServeCost(anvil.url, chain.firstBlock, chain.blocks);
    const backfillCpu = cpuNow();
    const backfill = await runIndexerHarness({
      label: `backfill into ${label} rows`,
      dbUrl,
      ethUrl: anvil.url,
      startBlock: chain.firstBlock,
      chainHead: chain.lastBlock,
      until: chain.lastBlock,
      receiptsMode: 'block',
      timeoutMs: BACKFILL_TIMEOUT_MS,
      watch: 'cursor',
    });
    const expected = chain.blocks * BACKFILL_TRANSFERS_PER_BLOCK;
    if (backfill.rows !== expected) throw new Error(`backfill: ${fmtInt(backfill.rows)} rows written for ${fmtInt(backfill.blocks)} blocks, expected ${fmtInt(expected)}`);
    const afterCpu = cpuNow();
    const indexerRate = (backfill.rows / backfill.ms) * 1000;
    const anvilRate = (serve.txs / serve.ms) * 1000;
    const ratio = indexerRate / anvilRate;
    const perRow = (seconds: number, rows: number) => (seconds * 1e6) / rows;
    const cpuPerRow = {
      anvilAlone: perRow(backfillCpu.anvil - serveCpu.anvil, serve.txs),
      anvil: perRow(afterCpu.anvil - backfillCpu.anvil, backfill.rows),
      pg: perRow(afterCpu.pg - backfillCpu.pg, backfill.rows),
      indexer: perRow((afterCpu.indexer.user - backfillCpu.indexer.user + afterCpu.indexer.system - backfillCpu.indexer.system) / 1e6, backfill.rows),
    };
    const us = (value: number) => `${fmtInt(value)} µs`;
    growth.set(`backfill of ${fmtInt(chain.blocks)} blocks: indexer rows/s`, column, indexerRate, fmtInt(indexerRate));
    growth.set('backfill: anvil serving the same calls, rows/s', column, anvilRate, fmtInt(anvilRate));
    growth.set('backfill: indexer / anvil', column, ratio, `${fmt(ratio, 2)}x`);
    growth.set('backfill CPU per row: anvil serving alone', column, cpuPerRow.anvilAlone, us(cpuPerRow.anvilAlone));
    growth.set('backfill CPU per row: anvil', column, cpuPerRow.anvil, us(cpuPerRow.anvil));
    growth.set('backfill CPU per row: PostgreSQL', column, cpuPerRow.pg, us(cpuPerRow.pg));
    growth.set('backfill CPU per row: indexer', column, cpuPerRow.indexer, us(cpuPerRow.indexer));
    say(
      `   backfill: ${fmtInt(backfill.rows)} rows of ${fmtInt(backfill.blocks)} blocks in ${s(backfill.ms)} (${fmtInt(indexerRate)} rows/s, ${backfill.failures} retried steps); ` +
        `anvil serves the same calls (blocks with transactions and their receipts, 10 per request, sequential) in ${s(serve.ms)} (${fmtInt(anvilRate)} rows/s): ${fmt(ratio, 2)}x; ` +
        `CPU per row: anvil alone ${us(cpuPerRow.anvilAlone)}; during the backfill anvil ${us(cpuPerRow.anvil)}, PostgreSQL ${us(cpuPerRow.pg)}, indexer ${us(cpuPerRow.indexer)}`,
    );
    if (run.largest) {
      run.goals.judge(`backfill into ${label} rows: indexer rows/s vs anvil serving the same calls`, fmtInt(indexerRate), fmtInt(anvilRate), `${fmt(ratio, 2)}x`, `>= ${GOAL_BACKFILL_RATIO}x`, ratio >= GOAL_BACKFILL_RATIO);
    }
  } finally {
    await gateway?.process.stop();
    await baseline?.process.stop();
    await admin.close();
    const owner = new pg.Client({ connectionString: pgc.url });
    await owner.connect();
    try {
      await owner.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    } finally {
      await owner.end();
    }
  }
}

async function benchTransfers(size: ScaleSize): Promise<void> {
  const sizes = TRANSFERS_SIZES[size];
  say(
    `== transfers: tables of ${sizes.map(fmtInt).join(', ')} rows (bench/support/transfers-data.ts, schema version 1 then migration 2); per size: the three spec reads ` +
      `(${TRANSFERS_SUBJECTS} medium addresses) at 1 connection through the gateway and direct pg (${TRANSFERS_ROUNDS} rounds of ${fmt(TRANSFERS_ROUND_MS / 1000, 1)} s per read and side, every read in each round, the reads' order rotating and the side going first alternating, after ${fmt(TRANSFERS_SIDE_WARMUP_MS / 1000, 1)} s of every read unmeasured), ` +
      `the busiest address with Prefer count=exact / count=estimated, /max_block, and a backfill of ${fmtInt(BACKFILL_BLOCKS)} anvil blocks into the table`,
  );
  const growth = new GrowthTable(sizes.map(sizeLabel));
  const goals = new GoalReport();
  let pgc: BenchPostgres | undefined;
  let anvil: Anvil | undefined;
  try {
    pgc = await startBenchPostgres();
    say(`PostgreSQL: throwaway cluster on 127.0.0.1:${pgc.port} (postmaster pid ${pgc.postmasterPid}; fsync, synchronous_commit and full_page_writes off)`);
    anvil = await startAnvil();
    const chain = await prepareChain(
      anvil,
      { blocks: BACKFILL_BLOCKS, transfersPerBlock: BACKFILL_TRANSFERS_PER_BLOCK, tokenShare: BACKFILL_TOKEN_SHARE, budgetMs: BACKFILL_PREPARE_BUDGET_MS, seed: BACKFILL_SEED },
      (line) => say(`  ${line}`),
    );
    say(
      `anvil: ${fmtInt(chain.blocks)} blocks x ${BACKFILL_TRANSFERS_PER_BLOCK} transfers prepared in ${s(chain.ms)} (blocks ${chain.firstBlock}…${chain.lastBlock})` +
        (chain.reducedFrom === undefined ? '' : `; REDUCED from ${fmtInt(chain.reducedFrom)} blocks to fit ${s(BACKFILL_PREPARE_BUDGET_MS)}`),
    );
    if (chain.reducedFrom !== undefined) goals.notes.push(`the backfill's chain was reduced from ${fmtInt(chain.reducedFrom)} to ${fmtInt(chain.blocks)} blocks to keep its preparation within ${s(BACKFILL_PREPARE_BUDGET_MS)}.`);
    for (const [column, n] of sizes.entries()) {
      await benchTransfersAt(n, column, { pgc, anvil, chain, growth, goals, largest: column === sizes.length - 1 });
    }
    goals.notes.push(
      "anvil's rate is its own time to answer the indexer's calls for the same blocks (eth_getBlockByNumber with transactions, then eth_getBlockReceipts, 10 per request), " +
        'sent one request at a time; the indexer sends its requests with some concurrency, writes each batch of 50 blocks in one transaction, and shares the 2 cores with anvil and PostgreSQL.',
    );
  } finally {
    await anvil?.stop();
    await pgc?.stop();
    say();
    say("transfers growth table (p50 at 1 connection; CPU is PostgreSQL's, postmaster and backends, per request):");
    growth.print();
    say();
    goals.print();
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
    if (run('transfers')) await section('transfers', () => benchTransfers(size));
  } finally {
    terminateLoadWorkers();
    await stopAllTracked();
    removeScratchDirs();
  }
  if (failures.length > 0) throw new Error(`failed section(s): ${failures.join(', ')}`);
}

