// `npm run bench -- rates`: the rates service's timing goals, each against a reference measured in the same run.
//
// 1. get:     /get and /get?coin=BTC under 50 concurrent keep-alive connections, the built CLI as its own
//             process (upstreams faked on 127.0.0.1), against a plain node:http server in its own process
//             replaying the service's exact answer. Goal: service >= 2x the baseline's requests/s and
//             a p99 no worse than the baseline's. A bare uWS app replaying the same answer (no application
//             code) shows the ceiling of this machine + load generator + uWS build; goal (issue "Rates: fast as
//             the edge allows"): the service at >= 90% of that ceiling. Where uWS's native binary cannot load
//             (Node 22, 24: http/engine.ts) there is no ceiling, the service runs on node:http, and the figures
//             that need the ceiling are skipped with a line saying so. Each server's CPU time per request is
//             printed beside its requests/s: on 2 cores the generator shares the machine, so throughput is
//             partly the generator's limit while CPU per request is the server's own cost.
// 2. history: /getHistory over 100,000 generated snapshots x 30 pairs in the SQLite backend, sequential
//             requests on one connection: point in time with a pair, and a range with limit=100.
//             Goal: p50 < 2 ms (point) and < 20 ms (range). Also the service's peak RSS.
// 3. merge:   applySourceQuotes() x 10 sources + evaluate() over 2,000 pairs, in-process. Goal: < 50 ms a cycle.

import { join } from 'node:path';
import { startFakeUpstreams, type FakeUpstreams } from '../test/rates/fakes/upstreams.js';
import { applySourceQuotes, evaluate, type ResolvedRates, type RetainedQuotes } from '../src/rates/merge.js';
import { SOURCE_ORDER, type MergeSettings, type Quote } from '../src/rates/types.js';
import type { BenchOptions } from './run.js';
import { captureResponse, startBaseline } from './support/baseline.js';
import { getJson } from './support/http-json.js';
import { runLoad, terminateLoadWorkers } from './support/load.js';
import { measuredCells, measuredHeader, measuredLoad, type MeasuredLoad } from './support/measured-load.js';
import { cpuSecondsOf, memoryOf, stopAllTracked } from './support/processes.js';
import { BASE_COINS, generateHistory, historyPairs, HISTORY_BATCH, HISTORY_SNAPSHOTS, JSON_TIMEOUT_MS, memoryLine, seedUpstreams, startService } from './support/rates-service.js';
import { prng } from '../test/support/random.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, machineHeader, summarizeMs, table } from './support/stats.js';

export const RATES_SECTIONS = ['get', 'history', 'merge'] as const;

// Goals (README "Tests and benchmarks"; the brief of this benchmark).
const GOAL_THROUGHPUT_RATIO = 2;
/** The service's /get requests/s as a share of the bare-uWS replay's (issue "Rates: fast as the edge allows"). */
const GOAL_CEILING_SHARE = 0.9;
const GOAL_HISTORY_POINT_P50_MS = 2;
const GOAL_HISTORY_RANGE_P50_MS = 20;
const GOAL_MERGE_CYCLE_MS = 50;

const WARMUP_MS = 1_000;
const HISTORY_REQUESTS = 2_000;
const HISTORY_WARMUP_REQUESTS = 100;
const MERGE_SOURCES = 10;
const MERGE_PAIRS = 2_000;
const MERGE_WARMUP = 5;
const MERGE_ITERATIONS = 30;
/** Busy time outside the server and the generator above this (% of a core) marks a run as disturbed. */
const NOISY_OTHER_CPU = 25;

// ---------------------------------------------------------------------------------------------
// Results and goals.

interface Goal {
  readonly name: string;
  readonly measured: string;
  readonly target: string;
  readonly met: boolean | undefined | 'skipped'; // undefined: not measurable (e.g. errors); skipped: cannot be measured here
}

const goals: Goal[] = [];
const notes: string[] = [];

const say = (text = ''): void => void process.stdout.write(`${text}\n`);

/** A load run (after its own warm-up run) with the server process as its party, and the server's CPU per request. */
interface MeasuredRun extends MeasuredLoad<'server'> {
  /** Server CPU (user + system, /proc/<pid>/stat) during the measured run / the requests it completed, in µs. */
  readonly cpuMicrosPerRequest: number;
}

function loadRow(target: string, path: string, s: MeasuredRun): string[] {
  return [target, path, ...measuredCells(s), fmt(s.cpuMicrosPerRequest, 1)];
}
const LOAD_HEADER = ['target', 'path', ...measuredHeader(['srv CPU%']), 'srv CPU us/req'];

// ---------------------------------------------------------------------------------------------
// 1. /get throughput.

async function benchGet(options: BenchOptions, dir: string, fakes: FakeUpstreams): Promise<void> {
  say(`== 1. /get: ${options.connections} keep-alive connections, ${options.durationSeconds} s each after a ${WARMUP_MS / 1000} s warm-up run each; server CPU per request from /proc/<pid>/stat over the measured run`);
  const service = await startService('rates-get', dir, fakes, join(dir, 'get.sqlite'));
  say(`service pid ${service.process.pid} on 127.0.0.1:${service.port}, ready after ${service.startupMs} ms`);
  const paths = ['/get', '/get?coin=BTC'];
  for (const path of paths) {
    const { status, body, bytes } = await getJson(service.port, path, JSON_TIMEOUT_MS);
    const pairs = Object.keys(body?.result ?? {}).length;
    if (status !== 200 || pairs === 0) throw new Error(`${path} answered ${status} with ${pairs} pairs`);
    say(`${path}: ${pairs} pairs, ${fmtInt(bytes)} bytes`);
  }
  const captured = [];
  for (const path of paths) captured.push(await captureResponse(service.port, path));
  say(`service headers: ${captured[0]!.headers.map(([k, v]) => `${k}: ${v}`).join('; ')}${captured[0]!.sendDate ? '; Date' : ''}`);
  const baseline = await startBaseline(captured);
  const { replayPort, replayUnavailable } = baseline.ports;
  say(
    `baseline pid ${baseline.process.pid}: node:http on 127.0.0.1:${baseline.ports.httpPort}, ` +
      (replayPort === undefined ? `bare uWS replay SKIPPED on Node ${process.version}: ${replayUnavailable}` : `bare uWS replay on 127.0.0.1:${replayPort}`),
  );
  // The service runs with the same Node and environment as the baseline process, so it is on uWS exactly when the
  // replay could load uWS (its config names no engine), and on node:http otherwise.
  const serviceLabel = replayPort === undefined ? 'service (node:http)' : 'service (uWS)';
  if (replayPort === undefined) {
    say(`no bare-uWS ceiling on Node ${process.version}: the service runs on node:http; the service / ceiling goal and the ceiling figures are skipped`);
    notes.push(`no bare-uWS ceiling on Node ${process.version} (${replayUnavailable}): the service runs on node:http, and the figures that need the ceiling are skipped.`);
  }

  const durationMs = options.durationSeconds * 1000;
  // The warm-up is a run of its own, so the server's CPU over the measured run belongs to the requests it counted
  // (requests in flight when the run ends are finished but not counted: at most one per connection).
  const load = async (pid: number, port: number, path: string): Promise<MeasuredRun> => {
    await runLoad({ port, paths: [path], connections: options.connections, durationMs: WARMUP_MS });
    const cpu = () => cpuSecondsOf(pid);
    const before = cpu();
    const measured = await measuredLoad({ server: cpu }, () => runLoad({ port, paths: [path], connections: options.connections, durationMs }));
    const after = cpu();
    const seconds = before === undefined || after === undefined ? NaN : after - before;
    return { ...measured, cpuMicrosPerRequest: measured.completed > 0 ? (seconds / measured.completed) * 1e6 : NaN };
  };
  const rows: string[][] = [];
  try {
    for (const path of paths) {
      const base = await load(baseline.process.pid, baseline.ports.httpPort, path);
      rows.push(loadRow('baseline node:http', path, base));
      const svc = await load(service.process.pid, service.port, path);
      rows.push(loadRow(serviceLabel, path, svc));
      const ceiling = replayPort === undefined ? undefined : await load(baseline.process.pid, replayPort, path);
      if (ceiling) rows.push(loadRow('ceiling: bare uWS', path, ceiling));

      const measured: ReadonlyArray<readonly [string, MeasuredRun]> = [['baseline', base], ['service', svc], ...(ceiling ? [['ceiling', ceiling] as const] : [])];
      for (const [label, m] of measured) {
        if (m.cpu.other > NOISY_OTHER_CPU) notes.push(`${path} ${label}: ${fmt(m.cpu.other, 0)}% of a core went to other work during the run; its numbers are disturbed.`);
      }
      const clean = base.errors === 0 && svc.errors === 0;
      const ratio = svc.requestsPerSecond / base.requestsPerSecond;
      goals.push({
        name: `${path} throughput, service / baseline`,
        measured: `${fmt(ratio)}x (${fmtInt(svc.requestsPerSecond)} / ${fmtInt(base.requestsPerSecond)} req/s; CPU ${fmt(svc.cpuMicrosPerRequest, 1)} / ${fmt(base.cpuMicrosPerRequest, 1)} us/req)`,
        target: `>= ${GOAL_THROUGHPUT_RATIO}x`,
        met: clean ? ratio >= GOAL_THROUGHPUT_RATIO : undefined,
      });
      const headroom = ceiling ? svc.requestsPerSecond / ceiling.requestsPerSecond : NaN;
      goals.push({
        name: `${path} throughput, service / bare-uWS ceiling`,
        measured: ceiling
          ? `${fmt(headroom * 100, 0)}% (${fmtInt(svc.requestsPerSecond)} / ${fmtInt(ceiling.requestsPerSecond)} req/s; CPU ${fmt(svc.cpuMicrosPerRequest, 1)} / ${fmt(ceiling.cpuMicrosPerRequest, 1)} us/req)`
          : `no uWS on Node ${process.version}`,
        target: `>= ${fmt(GOAL_CEILING_SHARE * 100, 0)}%`,
        met: !ceiling ? 'skipped' : clean && ceiling.errors === 0 ? headroom >= GOAL_CEILING_SHARE : undefined,
      });
      goals.push({
        name: `${path} p99, service vs baseline`,
        measured: `${fmt(svc.p99, 3)} vs ${fmt(base.p99, 3)} ms (${fmt(svc.p99 / base.p99)}x)`,
        target: '<= baseline',
        met: clean ? svc.p99 <= base.p99 : undefined,
      });
      if (!clean) notes.push(`${path}: errors during the load runs, the goals above are not judged (see the table).`);
      if (!ceiling) {
        notes.push(
          `${path}: server CPU per request: service ${fmt(svc.cpuMicrosPerRequest, 1)} us, baseline node:http ${fmt(base.cpuMicrosPerRequest, 1)} us ` +
            `(service/baseline ${fmt(svc.cpuMicrosPerRequest / base.cpuMicrosPerRequest)}x).`,
        );
        continue;
      }
      // The bare uWS replay runs no application code: what this machine, generator and uWS build allow at most.
      const needed = GOAL_THROUGHPUT_RATIO * base.requestsPerSecond;
      notes.push(
        `${path}: the service reached ${fmt(headroom * 100, 0)}% and the baseline ${fmt((base.requestsPerSecond / ceiling.requestsPerSecond) * 100, 0)}% ` +
          `of the ceiling (bare uWS replay of the same answer, ${fmtInt(ceiling.requestsPerSecond)} req/s, generator at ${fmt(ceiling.cpu.generator, 0)}% of a core)` +
          (headroom >= 0.8 ? '; the generator (or this machine) is part of the limit, so the ratio is a lower bound' : '') +
          (needed > ceiling.requestsPerSecond
            ? `; ${GOAL_THROUGHPUT_RATIO}x the baseline (${fmtInt(needed)} req/s) is above that ceiling, so on this machine the throughput goal cannot be shown for this path.`
            : '.'),
      );
      notes.push(
        `${path}: server CPU per request: service ${fmt(svc.cpuMicrosPerRequest, 1)} us, baseline node:http ${fmt(base.cpuMicrosPerRequest, 1)} us, ` +
          `bare uWS ${fmt(ceiling.cpuMicrosPerRequest, 1)} us (service/baseline ${fmt(svc.cpuMicrosPerRequest / base.cpuMicrosPerRequest)}x, ` +
          `service - bare uWS = ${fmt(svc.cpuMicrosPerRequest - ceiling.cpuMicrosPerRequest, 1)} us of edge and route code).`,
      );
    }
  } finally {
    say();
    say(table(LOAD_HEADER, rows));
    say();
    say(`service after the /get runs: ${memoryLine(service)}`);
    say();
    await service.process.stop();
    await baseline.process.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. /getHistory over a generated history.


async function benchHistory(dir: string, fakes: FakeUpstreams): Promise<void> {
  const pairs = historyPairs();
  say(`== 2. /getHistory: ${fmtInt(HISTORY_SNAPSHOTS)} snapshots x ${pairs.length} pairs, ${fmtInt(HISTORY_REQUESTS)} sequential requests each on one connection (after ${HISTORY_WARMUP_REQUESTS} warm-up)`);
  const path = join(dir, 'history.sqlite');
  // The generated history ends a day ago, so the service's own startup snapshot (now) never collides with it.
  const endMs = Math.floor((Date.now() - 86_400_000) / 60_000) * 60_000;
  say(`generating ${path} (appendMany, batches of ${fmtInt(HISTORY_BATCH)}):`);
  const generated = await generateHistory(path, endMs, HISTORY_SNAPSHOTS, say);
  say(`generated in ${fmt(generated.seconds, 1)} s, ${fmt(generated.bytes / 2 ** 20, 1)} MiB on disk`);

  const service = await startService('rates-history', dir, fakes, path);
  say(`service pid ${service.process.pid} on 127.0.0.1:${service.port}, ready after ${service.startupMs} ms`);

  // Distinct, deterministic query points spread over the whole history (seconds, as the API takes them).
  const random = prng(99);
  const count = HISTORY_REQUESTS + HISTORY_WARMUP_REQUESTS;
  const spanMs = generated.lastMs - generated.firstMs;
  const points = Array.from({ length: count }, () => Math.floor((generated.firstMs + 86_400_000 + random() * (spanMs - 86_400_000)) / 1000));
  const cases = [
    { name: 'point in time, coin=BTC/USD', goal: GOAL_HISTORY_POINT_P50_MS, paths: points.map((t) => `/getHistory?timestamp=${t}&coin=BTC/USD`), snapshots: 1, pairs: 1 },
    { name: 'range of a day, limit=100', goal: GOAL_HISTORY_RANGE_P50_MS, paths: points.map((t) => `/getHistory?from=${t - 86_400}&to=${t}&limit=100`), snapshots: 100, pairs: pairs.length },
  ];
  const rows: string[][] = [];
  try {
    for (const c of cases) {
      const sample = await getJson(service.port, c.paths[0]!, JSON_TIMEOUT_MS);
      const result = sample.body?.result as Array<{ tickers: Record<string, number> }> | undefined;
      const shape = `${result?.length ?? 0} snapshot(s) x ${Object.keys(result?.[0]?.tickers ?? {}).length} pair(s)`;
      if (sample.status !== 200 || result?.length !== c.snapshots || Object.keys(result[0]!.tickers).length !== c.pairs) {
        throw new Error(`${c.paths[0]} answered ${sample.status} with ${shape}, expected ${c.snapshots} x ${c.pairs}`);
      }
      say(`${c.name}: e.g. ${c.paths[0]} -> ${shape}, ${fmtInt(sample.bytes)} bytes`);
      const s = await runLoad({ port: service.port, paths: c.paths, connections: 1, warmupRequests: HISTORY_WARMUP_REQUESTS, maxRequests: HISTORY_REQUESTS });
      rows.push([c.name, fmtInt(s.requestsPerSecond), fmt(s.p50, 3), fmt(s.p90, 3), fmt(s.p99, 3), fmt(s.max, 1), fmtInt(s.completed), s.errors ? `${s.errors} (${s.errorDetail})` : '0']);
      goals.push({
        name: `/getHistory ${c.name}, p50`,
        measured: `${fmt(s.p50, 3)} ms (p99 ${fmt(s.p99, 3)} ms)`,
        target: `< ${c.goal} ms`,
        met: s.errors === 0 ? s.p50 < c.goal : undefined,
      });
    }
  } finally {
    say();
    say(table(['query', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'requests', 'errors'], rows));
    say();
    say(`service after the history runs: ${memoryLine(service)}`);
    const memory = memoryOf(service.process.pid);
    if (memory) notes.push(`service peak RSS (VmHWM) after the history phase: ${fmt(memory.peakMiB, 1)} MiB.`);
    say();
    await service.process.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 3. The merge pipeline, in-process.

function benchMerge(): void {
  say(`== 3. merge pipeline: ${MERGE_SOURCES} sources x ${fmtInt(MERGE_PAIRS)} pairs, applySourceQuotes x ${MERGE_SOURCES} + evaluate, ${MERGE_ITERATIONS} cycles after ${MERGE_WARMUP} warm-up`);
  const random = prng(2024);
  const sources = SOURCE_ORDER.slice(0, MERGE_SOURCES);
  const coins = ['EUR', 'RUB', 'BTC', 'ETH', ...Array.from({ length: MERGE_PAIRS - 4 }, (_, i) => `C${String(i).padStart(4, '0')}`)];
  const usd = coins.map((coin) => (coin === 'EUR' ? 1.09 : coin === 'RUB' ? 0.0108 : coin === 'BTC' ? 64_000 : coin === 'ETH' ? 3_100 : 10 ** (random() * 9 - 4)));
  // Per source and variant: every pair within ±1%; 2% of the pairs have one outlier source (+40%),
  // and 0.5% split 5/5 (a conflict: the previous value is served).
  const quoteSet = (variant: number): Quote[][] =>
    sources.map((_, s) =>
      coins.map((coin, c) => {
        let factor = 1 + (random() - 0.5) / 50;
        if (c % 50 === 7 && s === (c + variant) % MERGE_SOURCES) factor *= 1.4;
        if (c % 200 === 13 && s % 2 === 1) factor *= 1.6;
        return { pair: `${coin}/USD`, price: usd[c]! * factor };
      }),
    );
  const variants = [quoteSet(0), quoteSet(1)];
  const settings: MergeSettings = {
    decimals: 12,
    strategy: 'priority',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 3,
    priorities: [...sources].reverse(),
    weights: Object.fromEntries(sources.map((s) => [s, 10])),
    baseCoins: BASE_COINS,
    allCoins: coins,
    coverage: Object.fromEntries(coins.map((coin) => [`${coin}/USD`, MERGE_SOURCES])),
  };
  const lifetimeMs = 30 * 60_000;

  let retained: RetainedQuotes = {};
  let resolved: ResolvedRates = {};
  const apply: number[] = [];
  const evals: number[] = [];
  const totals: number[] = [];
  let tableSize = 0;
  let issues = 0;
  const t0 = Date.UTC(2024, 0, 1);
  for (let i = 0; i < MERGE_WARMUP + MERGE_ITERATIONS; i++) {
    const now = t0 + i * 600_000;
    const quotes = variants[i % 2]!;
    const a = process.hrtime.bigint();
    for (let s = 0; s < sources.length; s++) retained = applySourceQuotes(retained, sources[s]!, quotes[s]!, now, {});
    const b = process.hrtime.bigint();
    const result = evaluate({ retained, previous: resolved, settings, now, lifetimeMs });
    const c = process.hrtime.bigint();
    resolved = result.resolved;
    tableSize = Object.keys(result.table).length;
    issues = result.issues.length;
    if (i >= MERGE_WARMUP) {
      apply.push(Number(b - a) / 1e6);
      evals.push(Number(c - b) / 1e6);
      totals.push(Number(c - a) / 1e6);
    }
  }
  if (tableSize < MERGE_PAIRS) throw new Error(`the merge produced only ${tableSize} pairs`);
  const [sa, se, st] = [summarizeMs(apply), summarizeMs(evals), summarizeMs(totals)];
  say(`table: ${fmtInt(tableSize)} pairs (direct + triangulated over ${BASE_COINS.join(', ')}), ${issues} issue(s) in the last cycle`);
  say();
  say(
    table(
      ['step', 'median ms', 'p90 ms', 'max ms'],
      [
        [`applySourceQuotes x ${MERGE_SOURCES}`, fmt(sa.p50), fmt(sa.p90), fmt(sa.max)],
        ['evaluate', fmt(se.p50), fmt(se.p90), fmt(se.max)],
        ['cycle (both)', fmt(st.p50), fmt(st.p90), fmt(st.max)],
      ],
    ),
  );
  say();
  goals.push({
    name: 'merge cycle, median (p90)',
    measured: `${fmt(st.p50)} ms (${fmt(st.p90)} ms)`,
    target: `< ${GOAL_MERGE_CYCLE_MS} ms`,
    met: st.p50 < GOAL_MERGE_CYCLE_MS,
  });
}

// ---------------------------------------------------------------------------------------------

export async function runRatesBench(options: BenchOptions): Promise<void> {
  const run = (section: (typeof RATES_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  goals.length = 0;
  notes.length = 0;
  say('rates benchmark');
  say(machineHeader());
  say(`started ${new Date().toISOString()}`);
  say();
  let fakes: FakeUpstreams | undefined;
  const dir = makeScratchDir('adm-bench-rates');
  try {
    if (run('get') || run('history')) {
      fakes = await startFakeUpstreams();
      seedUpstreams(fakes);
    }
    if (run('get')) await benchGet(options, dir, fakes!);
    if (run('history')) await benchHistory(dir, fakes!);
    if (run('merge')) benchMerge();

    say('== goals');
    say(table(['goal', 'measured', 'target', 'met'], goals.map((g) => [g.name, g.measured, g.target, g.met === 'skipped' ? 'skipped' : g.met === undefined ? 'n/a (errors)' : g.met ? 'yes' : 'NO'])));
    for (const note of notes) say(`note: ${note}`);
    const missed = goals.filter((g) => g.met === false).length;
    say();
    say(missed === 0 ? 'all goals met' : `${missed} goal(s) missed`);
  } finally {
    terminateLoadWorkers();
    await stopAllTracked();
    await fakes?.close();
    removeScratchDirs();
  }
}
