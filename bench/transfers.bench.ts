// `npm run bench -- transfers`: the transfers service on real PostgreSQL 15 and anvil, each goal against a baseline
// measured in the same run (docs/DESIGN.md "Testing").
//
// 1. queries: 1,000,000 generated `public.ethtxs` rows (bench/support/transfers-data.ts: a dozen hot exchange
//             addresses, a few hundred of medium popularity, a long tail; ~30% token transfers over 20 contracts;
//             blocks of 2–100 txs sharing a time; EIP-55 addresses) in a throwaway cluster at schema version 1 (the
//             original's 8 indexes), then migration 2 as an upgrading operator runs it (the 4 composite indexes
//             built CONCURRENTLY on the loaded table; its time is printed), VACUUM ANALYZE. The three reads of spec
//             A §4.1 (native history of an address, token history, keyset next page, each ordered time.desc,
//             txhash.desc; bench/support/transfers-queries.ts) for 40 medium addresses of ~1,000 rows each (the token
//             read on each address's busiest token), through the gateway (the real service, INDEXER=false, in its
//             own process, pool 10, reading as web_anon) against the same statement shape run directly through a
//             pg.Pool of 10 and serialized with JSON.stringify behind a plain node:http server (its own process
//             too). Both sides must answer the same rows (checked first). Latency at 1 connection: 5 interleaved
//             rounds of 1.5 s per side, percentiles = median of the rounds'. Goals: gateway p50 < 1 ms for each read,
//             and gateway p50 <= 1.3x the direct p50. Throughput: requests/s at 32 keep-alive connections, 2
//             interleaved rounds per side (printed, no goal).
//             The plans PostgreSQL chose for both sides' statements are captured once with auto_explain and printed,
//             and the busiest address's first page is timed for scale.
// 2. indexer: anvil with automine off, 2,000 blocks of 50 transfers (~30% ERC-20 `transfer` calls to the fixture
//             token, the rest native transfers; explicit gas, sequential nonces, one anvil_mine per block; cut
//             to what fits in 3 minutes, and said so). Indexed from the first of these blocks into fresh databases
//             until `SELECT max FROM public.max_block` reaches the head: once by the service (an indexer-only node,
//             GATEWAY=false, PERIOD=0.05), then by one harness driving the indexer machine (indexerLogic +
//             DatabaseHolder + createActor, as actors/transfers/tree.ts wires it) with the JSON-RPC client in each
//             receipts mode — `block` (eth_getBlockReceipts, batched) and `transaction` (eth_getTransactionReceipt
//             per tx, batched 100 per request) — taking turns on 4 segments of the range; and, on the first 300
//             blocks, `transaction` with one HTTP request per receipt (the original indexer's pattern). Reported:
//             blocks/s, rows/s and the speedup of batched receipts over per-transaction receipts (no goal), next to
//             what anvil itself spends per kind of call.
//
// Everything started here is stopped at the end (and on SIGINT: the servers are tracked processes, anvil and the
// PostgreSQL cluster are stopped by 'exit' hooks).

import { cpus } from 'node:os';
import { INDEXER_VERSION } from '../src/transfers/config.js';
import { ensureAnonRole, migrate } from '../storage/transfers/schema.js';
import { openPgClient } from '../storage/transfers/sql-client.pg.js';
import type { SqlClient } from '../storage/transfers/sql-client.js';
import { startAnvil } from '../test/support/anvil.js';
import type { BenchOptions } from './run.js';
import { GoalReport, InvalidRunError } from './support/goals.js';
import { runLoad, terminateLoadWorkers } from './support/load.js';
import { combineRounds, interleave, measuredCells, measuredHeader, measuredLoad, type MeasuredLoad } from './support/measured-load.js';
import { cpuSecondsOf, memoryOf, stopAllTracked } from './support/processes.js';
import { removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, median, summarizeMs, table } from './support/stats.js';
import { addRuns, anvilRpcCost, countRows, prepareChain, runIndexerHarness, waitForMaxBlock, type IndexRun, type PreparedChain } from './support/transfers-chain.js';
import { INDEX_BUILDERS, loadTransfers } from './support/transfers-data.js';
import { processAlive, serverCpuSeconds, startBenchPostgres, type BenchPostgres } from './support/transfers-postgres.js';
import {
  BASELINE_SQL,
  baselinePath,
  baselineStatement,
  contractWord,
  gatewayPath,
  matchingStatement,
  PAGE_ROWS,
  PLAIN_OR_SQL,
  QUERY_NAMES,
  QUERY_TITLES,
  type QueryName,
  type QuerySubject,
} from './support/transfers-queries.js';
import { chooseSubjects, getSideJson, prepareVersionOneSchema, SIDE_POOL, startSide, type SideServer } from './support/transfers-sides.js';

export const TRANSFERS_SECTIONS = ['queries', 'indexer'] as const;

// Goals (the issue of this benchmark).
const GOAL_P50_RATIO = 1.3;
/** Each spec read's p50 through the gateway at one connection, in ms. */
const GOAL_P50_MS = 1;

// 1. queries
const DATA_ROWS = 1_000_000;
const DATA_SEED = 20_240_601;
const INSERT_BATCH_ROWS = 10_000;
const SUBJECTS = 40;
/** Requests whose answers are compared between the two sides before anything is measured (per query). */
const CHECKED_SUBJECTS = 5;
const LATENCY_CONNECTIONS = 1;
/**
 * The latency runs are interleaved: rounds of LATENCY_ROUND_MS per side, the side going first alternating, and each
 * side's p50 (p90, p99) is the median of its rounds' — a burst of other work on this small shared machine then
 * spoils one round of both sides rather than all of one side. Rounds are timed, not counted, so a cheap read gets
 * as much wall time (and more samples) as an expensive one.
 */
const LATENCY_ROUNDS = 5;
const LATENCY_ROUND_MS = 1_500;
const LATENCY_WARMUP_MS = 250;
const THROUGHPUT_CONNECTIONS = 32;
/** The throughput runs: this many rounds per side, interleaved the same way, of --duration / rounds each. */
const THROUGHPUT_ROUNDS = 2;
const THROUGHPUT_WARMUP_MS = 1_000;
/** Sequential requests for the busiest address's first page (each reads its ~125,000 rows). */
const HOT_REQUESTS = 5;
/** PGRST_DB_POOL's default; the baseline's pool has the same size. */
const POOL = SIDE_POOL;
const ANON_ROLE = 'web_anon';
/** Busy time outside the server, PostgreSQL and the generator above this (% of a core) marks a run as disturbed. */
const NOISY_OTHER_CPU = 25;

// 2. indexer
const CHAIN_BLOCKS = 2_000;
const TRANSFERS_PER_BLOCK = 50;
const TOKEN_SHARE = 0.3;
const CHAIN_SEED = 7;
/** The chain's preparation is cut to what fits in this (and says so). */
const PREPARE_BUDGET_MS = 180_000;
const INDEX_TIMEOUT_MS = 240_000;
/** Segments the two receipt modes take turns on (see benchIndexer). */
const HARNESS_SEGMENTS = 4;
/** Blocks indexed with one HTTP request per receipt (slow: a subrange is enough for a rate). */
const UNBATCHED_BLOCKS = 300;
/** Blocks of the separate per-call cost measurement on anvil (one indexer batch). */
const COST_BLOCKS = 50;
const MAX_FAILURES = 3;

const say = (text = ''): void => void process.stdout.write(`${text}\n`);
const seconds = (ms: number) => `${fmt(ms / 1000, 1)} s`;
const mib = (bytes: number) => `${fmt(bytes / 2 ** 20, 0)} MiB`;

// ---------------------------------------------------------------------------------------------
// Results.

const goals = new GoalReport({ stacks: true, timed: true });

/** The parties of a load run: the side's process (its main thread and pg client), PostgreSQL (postmaster and backends). */
type Party = 'server' | 'pg';
type MeasuredRun = MeasuredLoad<Party>;

const LOAD_HEADER = ['query', 'side', 'conns', ...measuredHeader(['side CPU%', 'pg CPU%'])];

function loadRow(name: QueryName, side: string, connections: number, s: MeasuredRun): string[] {
  return [name, side, String(connections), ...measuredCells(s)];
}

// ---------------------------------------------------------------------------------------------
// Plans: auto_explain on both sides' statements, once, outside the measurements.

interface CapturedPlan {
  readonly durationMs: number;
  readonly query: string;
  readonly plan: readonly string[];
}

/** auto_explain entries (`LOG:  duration: … ms  plan:` plus tab-indented continuation lines) in a log excerpt. */
function parsePlans(log: string): CapturedPlan[] {
  const entries: CapturedPlan[] = [];
  let current: { durationMs: number; lines: string[] } | undefined;
  const flush = () => {
    if (!current) return;
    const planStart = current.lines.findIndex((line) => /\(cost=|\(actual time=|\(never executed\)/.test(line) && !/^Query Text:/.test(line));
    const queryLines = planStart < 0 ? current.lines : current.lines.slice(0, planStart);
    const query = queryLines.join(' ').replace(/^Query Text:\s*/, '').replace(/\s+/g, ' ').trim();
    entries.push({ durationMs: current.durationMs, query, plan: planStart < 0 ? [] : current.lines.slice(planStart) });
    current = undefined;
  };
  for (const line of log.split('\n')) {
    const head = /LOG:\s+duration: ([0-9.]+) ms\s+plan:/.exec(line);
    if (head) {
      flush();
      current = { durationMs: Number(head[1]), lines: [] };
    } else if (current && line.startsWith('\t')) {
      current.lines.push(line.slice(1));
    } else {
      flush();
    }
  }
  flush();
  return entries;
}

/** The parts of an EXPLAIN (FORMAT JSON) node this benchmark reads. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Scan Direction'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** How a plan reaches the table: `bitmap(txfrom_index|txto_index)`, `Index Scan Backward time_index`, `Seq Scan`. */
function planShape(node: PlanNode): string {
  const type = node['Node Type'];
  if (type === 'Bitmap Heap Scan') {
    const indexes: string[] = [];
    const walk = (child: PlanNode) => {
      if (child['Index Name']) indexes.push(child['Index Name']);
      for (const next of child.Plans ?? []) walk(next);
    };
    for (const child of node.Plans ?? []) walk(child);
    return `Bitmap Heap Scan (${indexes.join(' | ')})`;
  }
  if (type === 'Index Scan' || type === 'Index Only Scan') return `${type}${node['Scan Direction'] === 'Backward' ? ' Backward' : ''} on ${node['Index Name']}`;
  if (type === 'Seq Scan') return 'Seq Scan';
  const inner = (node.Plans ?? []).map(planShape).filter((shape) => shape !== '');
  return inner.join(' + ');
}

/** A plan line without the planner's cost estimate (the actual rows and times stay). */
const planLine = (line: string) => line.replace(/\s*\(cost=[^)]*\)/, '');

/**
 * The plan without its repetitions: every node, the conditions and heap figures, and the buffer and I/O lines of the
 * top node only (each node repeats its children's sums).
 */
function compactPlan(lines: readonly string[]): string[] {
  const kept: string[] = [];
  let topDetails = true;
  for (const [i, line] of lines.entries()) {
    const node = i === 0 || line.includes('->');
    if (node && i > 0) topDetails = false;
    if (node || /^\s*(Index Cond|Filter|Rows Removed by Filter|Heap Blocks|Sort Key):/.test(line) || (topDetails && /^\s*(Buffers|I\/O Timings):/.test(line))) kept.push(planLine(line));
  }
  return kept;
}

async function capturePlans(pgc: BenchPostgres, admin: SqlClient, subject: QuerySubject): Promise<void> {
  const database = new URL(pgc.url).pathname.slice(1);
  // session_preload_libraries applies to connections opened after this: the capture servers' pools.
  await admin.query(`ALTER DATABASE "${database}" SET session_preload_libraries = 'auto_explain'`);
  await admin.query(`ALTER DATABASE "${database}" SET auto_explain.log_min_duration = 0`);
  await admin.query(`ALTER DATABASE "${database}" SET auto_explain.log_analyze = on`);
  await admin.query(`ALTER DATABASE "${database}" SET auto_explain.log_buffers = on`);
  await admin.query(`ALTER DATABASE "${database}" SET track_io_timing = on`);
  let gateway: SideServer | undefined;
  let baseline: SideServer | undefined;
  const seqScans: string[] = [];
  try {
    gateway = await startSide('gateway', pgc.url, 'gateway (plan capture)');
    baseline = await startSide('baseline', pgc.url, 'baseline (plan capture)');
    say('plans (auto_explain with ANALYZE and BUFFERS, track_io_timing on; first subject; costs and repeated buffer lines left out; `read` = not in shared_buffers):');
    for (const name of QUERY_NAMES) {
      for (const [side, server, path] of [
        ['gateway', gateway, gatewayPath(name, subject)],
        ['direct pg', baseline, baselinePath(name, subject)],
      ] as const) {
        const offset = pgc.logSize();
        const answer = await getSideJson(server.port, path);
        if (answer.status !== 200) throw new Error(`${side} answered ${answer.status} to ${path}: ${answer.text.slice(0, 300)}`);
        // The backend writes its auto_explain entry before it completes the statement, so it is in the log now.
        const plans = parsePlans(pgc.readLog(offset)).filter((entry) => /ethtxs/.test(entry.query));
        if (plans.length === 0) {
          say(`  ${name} / ${side}: no plan in the server log (auto_explain did not load?)`);
          continue;
        }
        for (const entry of plans) {
          say(`  ${name} / ${side} (${fmt(entry.durationMs, 3)} ms in the executor):`);
          if (side === 'gateway') say(`    SQL: ${entry.query.length > 600 ? `${entry.query.slice(0, 600)}…` : entry.query}`);
          for (const line of compactPlan(entry.plan)) say(`    ${line}`);
          if (entry.plan.some((line) => /Seq Scan on ethtxs/.test(line))) seqScans.push(`${name} / ${side}`);
        }
      }
    }
    say();
    if (seqScans.length > 0) goals.notes.push(`a sequential scan of ethtxs in the plan of: ${seqScans.join(', ')} (see the plans above).`);
  } finally {
    await gateway?.process.stop();
    await baseline?.process.stop();
    await admin.query(`ALTER DATABASE "${database}" RESET ALL`);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. queries

async function benchQueries(options: BenchOptions, pgc: BenchPostgres): Promise<void> {
  say(
    `== 1. queries: ${fmtInt(DATA_ROWS)} rows on PostgreSQL; the three reads of spec A §4.1 through the gateway vs the same SQL direct through pg ` +
      `(both pools ${POOL}); latency at ${LATENCY_CONNECTIONS} connection (${fmt((LATENCY_ROUNDS * LATENCY_ROUND_MS) / 1000, 1)} s per side), ` +
      `requests/s at ${THROUGHPUT_CONNECTIONS} connections (${options.durationSeconds} s per side)`,
  );
  const admin = openPgClient({ connection: { connectionString: pgc.url }, maxConnections: INDEX_BUILDERS, applicationName: 'adm-infra bench loader' });
  let gateway: SideServer | undefined;
  let baseline: SideServer | undefined;
  try {
    await prepareVersionOneSchema(admin, ANON_ROLE);

    const loadStarted = Date.now();
    const { world, report } = await loadTransfers(admin, { rows: DATA_ROWS, seed: DATA_SEED, batchRows: INSERT_BATCH_ROWS }, say);
    const upgradeStarted = Date.now();
    const upgrade = await migrate(admin, INDEXER_VERSION, {
      onProgress: (p) => {
        if (p.event === 'building') say(`  ${p.index}: ${p.phase} (${fmtInt(p.blocksDone ?? 0)}/${fmtInt(p.blocksTotal ?? 0)} blocks) after ${seconds(p.elapsedMs)}`);
      },
    });
    const [sizes] = await admin.query(
      `SELECT string_agg(c.relname || ' ' || pg_size_pretty(pg_relation_size(c.oid)), ', ' ORDER BY c.relname) AS sizes
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = ANY ($1)`,
      [upgrade.builtIndexes.map((b) => b.name)],
    );
    say(
      `migration 2 on the loaded table (${upgrade.applied.join('; ')}): ${upgrade.builtIndexes.length} indexes built ` +
        `${upgrade.builtIndexes.every((b) => b.concurrently) ? 'CONCURRENTLY' : 'NOT concurrently'} in ${seconds(Date.now() - upgradeStarted)} ` +
        `(${upgrade.builtIndexes.map((b) => `${b.name} ${seconds(b.ms)}`).join(', ')}), sizes: ${String(sizes?.sizes)}`,
    );
    say(
      `loaded ${fmtInt(report.rows)} rows in ${fmtInt(report.blocks)} blocks (${fmtInt(report.tokenRows)} token transfers) in ${seconds(Date.now() - loadStarted)}: ` +
        `generating ${seconds(report.generateMs)}, INSERT … unnest in batches of ${fmtInt(INSERT_BATCH_ROWS)} ${seconds(report.insertMs)}, ` +
        `${report.indexes.length} indexes built after the load ${seconds(report.indexMs)}, VACUUM ANALYZE ${seconds(report.vacuumMs)}; ` +
        `table ${mib(report.tableBytes)}, indexes ${mib(report.indexBytes)}`,
    );
    say(`indexes: ${report.indexes.join(', ')}`);

    // The subjects: medium-popularity addresses, their token, and the cursor their first page ends with.
    const subjects = await chooseSubjects(admin, world, SUBJECTS);
    if (subjects.length < SUBJECTS / 2) throw new InvalidRunError(`only ${subjects.length} of ${SUBJECTS} medium addresses have a full first page`);
    const total = async (address: string) =>
      Number((await admin.query('SELECT count(*)::int AS n FROM public.ethtxs WHERE txfrom = $1 OR txto = $1 OR contract_to = $2', [address, contractWord(address)]))[0]?.n);
    const busiest = await total(world.hot[0]!.toLowerCase());
    const perSubject = await Promise.all(subjects.map((s) => total(s.address)));
    const spread = (values: number[]) => {
      const s = summarizeMs(values);
      return `${fmtInt(Math.min(...values))} / ${fmtInt(s.p50)} / ${fmtInt(s.max)}`;
    };
    say(`addresses: the busiest exchange address is in ${fmtInt(busiest)} rows; the ${subjects.length} query subjects in ${spread(perSubject)} rows each (min / median / max)`);
    const matching: string[][] = [];
    for (const name of QUERY_NAMES) {
      const counts: number[] = [];
      for (const subject of subjects) {
        const statement = matchingStatement(name, subject);
        counts.push(Number((await admin.query(statement.text, statement.values as unknown[]))[0]?.n));
      }
      matching.push([name, QUERY_TITLES[name], spread(counts), gatewayPath(name, subjects[0]!)]);
    }
    say();
    say(table(['query', 'what', 'rows matching before LIMIT (min / median / max)', 'gateway path (first subject)'], matching));
    say();

    // The plan of every subject's read (direct SQL, the gateway's statement shape; the gateway's statement adds its
    // json_agg wrapper), and of the same read written with the OR itself: the planner does not choose the same path
    // for every address.
    const shapes: string[][] = [];
    for (const name of QUERY_NAMES) {
      for (const [form, sql] of [
        ['branches', BASELINE_SQL[name]],
        ['plain OR', PLAIN_OR_SQL[name]],
      ] as const) {
        const byShape = new Map<string, number[]>();
        for (const subject of subjects) {
          const statement = baselineStatement(baselinePath(name, subject))!;
          const [row] = await admin.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, statement.values as unknown[]);
          const document = row?.['QUERY PLAN'] as Array<{ Plan: PlanNode; 'Execution Time': number }>;
          const shape = planShape(document[0]!.Plan);
          byShape.set(shape, [...(byShape.get(shape) ?? []), document[0]!['Execution Time']]);
        }
        for (const [shape, times] of [...byShape].sort((x, y) => y[1].length - x[1].length)) {
          shapes.push([name, form, shape, String(times.length), fmt(median(times), 2), fmt(Math.max(...times), 2)]);
        }
        if (form === 'branches' && byShape.size > 1) {
          const minority = [...byShape].sort((x, y) => x[1].length - y[1].length)[0]!;
          goals.notes.push(
            `${name}: the planner reads ${minority[1].length} of ${subjects.length} subjects with "${minority[0]}" (median ${fmt(median(minority[1]), 2)} ms in the executor) ` +
              'and the others differently (see the plan-shape table); which addresses get which plan changes with the ANALYZE sample from run to run.',
          );
        }
      }
    }
    say(`plan shapes over the ${subjects.length} subjects (EXPLAIN ANALYZE of the direct SQL, after the load's VACUUM ANALYZE):`);
    say(table(['query', 'SQL', 'plan', 'subjects', 'median ms', 'max ms'], shapes));
    say();

    await capturePlans(pgc, admin, subjects[0]!);

    gateway = await startSide('gateway', pgc.url, 'gateway');
    baseline = await startSide('baseline', pgc.url, 'baseline');
    say(`gateway: the transfers service (INDEXER=false, PGRST_DB_POOL=${POOL}, role ${ANON_ROLE}) pid ${gateway.process.pid} on 127.0.0.1:${gateway.port}`);
    say(`direct pg: node:http + pg.Pool(${POOL}) + JSON.stringify, pid ${baseline.process.pid} on 127.0.0.1:${baseline.port}; PostgreSQL postmaster pid ${pgc.postmasterPid}`);

    // Both sides must answer the same rows in the same order before their speed means anything.
    let compared = 0;
    for (const name of QUERY_NAMES) {
      for (const subject of subjects.slice(0, CHECKED_SUBJECTS)) {
        const g = await getSideJson(gateway.port, gatewayPath(name, subject));
        const b = await getSideJson(baseline.port, baselinePath(name, subject));
        if (g.status !== 200 || !Array.isArray(g.body)) throw new InvalidRunError(`gateway answered ${g.status} to ${gatewayPath(name, subject)}: ${g.text.slice(0, 300)}`);
        if (b.status !== 200 || !Array.isArray(b.body)) throw new InvalidRunError(`direct pg answered ${b.status} to ${baselinePath(name, subject)}: ${b.text.slice(0, 300)}`);
        const hashes = (list: Array<{ txhash?: unknown }>) => list.map((row) => String(row.txhash).toLowerCase()).join(',');
        // A token history may have fewer rows than a page; the other two always fill one (subjects have a full first page and more).
        const expected = name === 'token' ? Math.min(PAGE_ROWS, b.body.length) : PAGE_ROWS;
        if (g.body.length === 0 || g.body.length !== expected || hashes(g.body) !== hashes(b.body)) {
          throw new InvalidRunError(`${name}: the gateway answered ${g.body.length} rows and direct pg ${b.body.length}, not the same page (${gatewayPath(name, subject)})`);
        }
        const keys = Object.keys(g.body[0] ?? {}).join(',');
        if (keys !== Object.keys(b.body[0] ?? {}).join(',')) throw new InvalidRunError(`${name}: the gateway's row keys (${keys}) differ from direct pg's`);
        compared++;
      }
    }
    const sample = await getSideJson(gateway.port, gatewayPath('native', subjects[0]!));
    const direct = await getSideJson(baseline.port, baselinePath('native', subjects[0]!));
    say(`both sides answer the same rows (full pages of ${PAGE_ROWS}) in the same order for ${compared} requests (${CHECKED_SUBJECTS} subjects x 3 queries); a native page is ${fmtInt(sample.bytes)} bytes from the gateway, ${fmtInt(direct.bytes)} from direct pg`);
    say();

    const paths = (name: QueryName, side: SideServer) => subjects.map((s) => (side.kind === 'gateway' ? gatewayPath(name, s) : baselinePath(name, s)));
    const parties = (side: SideServer) => ({ server: () => cpuSecondsOf(side.process.pid), pg: () => serverCpuSeconds(pgc.postmasterPid) });
    const latency = (name: QueryName, side: SideServer) =>
      measuredLoad<Party>(parties(side), () =>
        runLoad({ port: side.port, paths: paths(name, side), connections: LATENCY_CONNECTIONS, warmupMs: LATENCY_WARMUP_MS, durationMs: LATENCY_ROUND_MS }),
      );
    const roundMs = (options.durationSeconds * 1000) / THROUGHPUT_ROUNDS;
    const throughput = (name: QueryName, side: SideServer) =>
      measuredLoad<Party>(parties(side), () =>
        runLoad({ port: side.port, paths: paths(name, side), connections: THROUGHPUT_CONNECTIONS, warmupMs: THROUGHPUT_WARMUP_MS, durationMs: roundMs }),
      );
    /** Rounds of both sides, the side going first alternating (direct pg first in round 0); each side's rounds combined. */
    const interleaved = async (name: QueryName, rounds: number, run: (name: QueryName, side: SideServer) => Promise<MeasuredRun>) => {
      const [b, g] = await interleave(rounds, () => run(name, baseline!), () => run(name, gateway!));
      return { gateway: combineRounds(g), baseline: combineRounds(b), ratios: g.map((m, i) => m.p50 / b[i]!.p50) };
    };
    const lines: string[][] = [];
    const results = new Map<QueryName, { gl: MeasuredRun; bl: MeasuredRun; gt: MeasuredRun; bt: MeasuredRun; ratios: number[] }>();
    try {
      for (const name of QUERY_NAMES) {
        const l = await interleaved(name, LATENCY_ROUNDS, latency);
        lines.push(loadRow(name, 'gateway', LATENCY_CONNECTIONS, l.gateway), loadRow(name, 'direct pg', LATENCY_CONNECTIONS, l.baseline));
        const t = await interleaved(name, THROUGHPUT_ROUNDS, throughput);
        lines.push(loadRow(name, 'gateway', THROUGHPUT_CONNECTIONS, t.gateway), loadRow(name, 'direct pg', THROUGHPUT_CONNECTIONS, t.baseline));
        results.set(name, { gl: l.gateway, bl: l.baseline, gt: t.gateway, bt: t.baseline, ratios: l.ratios });
      }
    } finally {
      say(
        `latency (${LATENCY_CONNECTIONS} conn): ${LATENCY_ROUNDS} interleaved rounds of ${fmt(LATENCY_ROUND_MS / 1000, 1)} s per side (after ${LATENCY_WARMUP_MS} ms warm-up each), ` +
          `percentiles = median of the rounds'; throughput (${THROUGHPUT_CONNECTIONS} conns): ${THROUGHPUT_ROUNDS} interleaved rounds of ${fmt(roundMs / 1000, 1)} s per side ` +
          `(after ${THROUGHPUT_WARMUP_MS / 1000} s warm-up each), req/s over both; CPU in % of one core (2 cores = 200%)`,
      );
      say(table(LOAD_HEADER, lines));
      say();
    }
    // The busiest address, for scale (with its share of the rows the planner may choose another path for it).
    const hot: QuerySubject = { address: world.hot[0]!.toLowerCase(), token: subjects[0]!.token, cursorTime: 0, cursorHash: '' };
    const hotMatching = matchingStatement('native', hot);
    const hotRows = Number((await admin.query(hotMatching.text, hotMatching.values as unknown[]))[0]?.n);
    const hotGateway = await runLoad({ port: gateway.port, paths: [gatewayPath('native', hot)], connections: 1, warmupRequests: 1, maxRequests: HOT_REQUESTS });
    const hotDirect = await runLoad({ port: baseline.port, paths: [baselinePath('native', hot)], connections: 1, warmupRequests: 1, maxRequests: HOT_REQUESTS });
    const hotPlan = await admin.query(`EXPLAIN (ANALYZE, BUFFERS) ${BASELINE_SQL.native}`, ['', hot.address]);
    say(
      `the busiest address (${fmtInt(hotRows)} native rows): its native first page takes ${fmt(hotGateway.p50, 1)} ms through the gateway, ${fmt(hotDirect.p50, 1)} ms direct ` +
        `(p50 of ${HOT_REQUESTS} sequential requests); direct plan:`,
    );
    for (const line of compactPlan(hotPlan.map((row) => String(row['QUERY PLAN'])))) say(`    ${line}`);
    say();
    const hotRow = (): void =>
      goals.info(`native, busiest address (${fmtInt(hotRows)} rows): p50, ${HOT_REQUESTS} requests`, `${fmt(hotGateway.p50, 2)} ms`, `${fmt(hotDirect.p50, 2)} ms`, `${fmt(hotGateway.p50 / hotDirect.p50)}x`);
    goals.notes.push(
      'with only the original\'s single-column indexes PostgreSQL answers an address\'s OR with a bitmap over txfrom_index and txto_index: every row of the ' +
        'address fetched (one heap page each) and sorted for the top 25. The composite indexes of migration 2 serve each side of the OR in time order, but ' +
        'PostgreSQL does not split an OR itself (the "plain OR" rows of the plan table); the gateway sends one ordered, limited branch per side ' +
        '(src/transfers/read-sql-branches.ts), which stops after 25 rows per side whatever the address\'s size.',
    );

    const memory = memoryOf(gateway.process.pid);
    if (memory) say(`gateway process after the runs: peak RSS ${fmt(memory.peakMiB, 1)} MiB, RSS ${fmt(memory.rssMiB, 1)} MiB`);
    say();

    for (const name of QUERY_NAMES) {
      const { gl, bl, gt, bt, ratios } = results.get(name)!;
      const clean = gl.errors === 0 && bl.errors === 0;
      const ratio = gl.p50 / bl.p50;
      const perRequest = (m: MeasuredRun, cpu: number) => (m.requestsPerSecond > 0 ? (cpu / 100 / m.requestsPerSecond) * 1000 : NaN);
      goals.notes.push(
        `${name}: gateway/direct p50 ratio per latency round: ${ratios.map((r) => fmt(r)).join(', ')}; CPU per request at ${LATENCY_CONNECTIONS} conn ` +
          `(side process + PostgreSQL): gateway ${fmt(perRequest(gl, gl.cpu.server), 2)} + ${fmt(perRequest(gl, gl.cpu.pg), 2)} ms, ` +
          `direct ${fmt(perRequest(bl, bl.cpu.server), 2)} + ${fmt(perRequest(bl, bl.cpu.pg), 2)} ms.`,
      );
      goals.judge(`${name}: gateway p50 at ${LATENCY_CONNECTIONS} conn`, `${fmt(gl.p50, 3)} ms`, '-', '-', `< ${GOAL_P50_MS} ms`, clean ? gl.p50 < GOAL_P50_MS : undefined);
      goals.judge(`${name}: p50 at ${LATENCY_CONNECTIONS} conn, gateway vs direct pg`, `${fmt(gl.p50, 3)} ms`, `${fmt(bl.p50, 3)} ms`, `${fmt(ratio, 3)}x`, `<= ${GOAL_P50_RATIO}x`, clean ? ratio <= GOAL_P50_RATIO : undefined);
      goals.info(`${name}: p99 at ${LATENCY_CONNECTIONS} conn`, `${fmt(gl.p99, 3)} ms`, `${fmt(bl.p99, 3)} ms`, `${fmt(gl.p99 / bl.p99)}x`);
      goals.info(`${name}: req/s at ${THROUGHPUT_CONNECTIONS} conns`, `${fmtInt(gt.requestsPerSecond)}`, `${fmtInt(bt.requestsPerSecond)}`, `${fmt(gt.requestsPerSecond / bt.requestsPerSecond)}x`);
      if (!clean || gt.errors > 0 || bt.errors > 0) goals.notes.push(`${name}: errors during the load runs (see the table); its p50 goal is not judged.`);
      for (const [label, m] of [['gateway latency', gl], ['direct latency', bl], ['gateway throughput', gt], ['direct throughput', bt]] as const) {
        if (m.cpu.other > NOISY_OTHER_CPU) goals.notes.push(`${name} ${label}: ${fmt(m.cpu.other, 0)}% of a core went to other work during the run; its numbers are disturbed.`);
      }
    }
    hotRow();
    goals.notes.push(
      'direct pg serializes what pg parsed: bigint and numeric columns (gas, gasprice, value) as JSON strings; the gateway writes them as bare JSON numbers with every digit ' +
        '(notes B.2), so its pages differ in those quotes (byte sizes above).',
    );
    goals.notes.push(
      `at ${THROUGHPUT_CONNECTIONS} connections both sides queue on their ${POOL} pg connections and share ${cpus().length} cores with PostgreSQL and the generator: ` +
        'the CPU columns show which party was the limit.',
    );
  } finally {
    await gateway?.process.stop();
    await baseline?.process.stop();
    await admin.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. indexer

const RUN_HEADER = ['run', 'receipts', 'blocks', 'rows', 'time', 'blocks/s', 'rows/s', 'retried steps'];

function runRow(run: IndexRun, receipts: string): string[] {
  return [run.label, receipts, fmtInt(run.blocks), fmtInt(run.rows), seconds(run.ms), fmt((run.blocks / run.ms) * 1000, 1), fmtInt((run.rows / run.ms) * 1000), String(run.failures)];
}

function checkRows(run: IndexRun): void {
  const expected = run.blocks * TRANSFERS_PER_BLOCK;
  if (run.rows !== expected) throw new InvalidRunError(`${run.label}: ${fmtInt(run.rows)} rows written for ${fmtInt(run.blocks)} blocks, expected ${fmtInt(expected)}`);
}

/** The service itself: an indexer-only node in this process, from a migrated database, until max_block is the head. */
async function serviceNodeRun(pgc: BenchPostgres, ethUrl: string, chain: PreparedChain): Promise<IndexRun> {
  const { startTransfersNode } = await import('../test/support/transfers-node.js');
  const dbUrl = await pgc.createDatabase('indexer_node');
  const setup = openPgClient({ connection: { connectionString: dbUrl }, maxConnections: 1, applicationName: 'adm-infra bench setup' });
  try {
    await migrate(setup, INDEXER_VERSION);
    await ensureAnonRole(setup, ANON_ROLE);
  } finally {
    await setup.close();
  }
  const since = Date.now();
  const node = await startTransfersNode({
    DB_NAME: dbUrl,
    ETH_URL: ethUrl,
    START_BLOCK: String(chain.firstBlock),
    CONFIRMATIONS_BLOCK: '0',
    PERIOD: '0.05',
    GATEWAY: 'false',
  });
  try {
    const failed = () => node.lines.filter((line) => line.msg === 'indexer step failed; retrying');
    const ms = await waitForMaxBlock(dbUrl, chain.lastBlock, since, INDEX_TIMEOUT_MS, () => {
      const failures = failed();
      return failures.length >= MAX_FAILURES ? `the service's indexer failed ${failures.length} times: ${String(failures.at(-1)?.reason)}` : undefined;
    });
    return {
      label: 'service node (INDEXER only)',
      ms,
      blocks: chain.blocks,
      rows: await countRows(dbUrl, chain.firstBlock, chain.lastBlock),
      failures: failed().length,
      warnings: node.lines.filter((line) => line.level === 'warn' || line.level === 'error').map((line) => String(line.msg)),
    };
  } finally {
    await node.stop();
  }
}

async function benchIndexer(pgc: BenchPostgres): Promise<void> {
  say(
    `== 2. indexer: anvil, ${fmtInt(CHAIN_BLOCKS)} blocks x ${TRANSFERS_PER_BLOCK} transfers (${fmt(TOKEN_SHARE * 100, 0)}% ERC-20 transfer calls), indexed into a fresh database ` +
      'until max_block reaches the head; receipts per block (batched) vs per transaction',
  );
  const anvil = await startAnvil();
  try {
    const chain = await prepareChain(anvil, { blocks: CHAIN_BLOCKS, transfersPerBlock: TRANSFERS_PER_BLOCK, tokenShare: TOKEN_SHARE, budgetMs: PREPARE_BUDGET_MS, seed: CHAIN_SEED }, say);
    const transfers = chain.nativeTransfers + chain.tokenTransfers;
    say(
      `prepared blocks ${chain.firstBlock}…${chain.lastBlock} (${fmtInt(chain.blocks)} blocks, ${fmtInt(transfers)} transfers: ${fmtInt(chain.nativeTransfers)} native, ` +
        `${fmtInt(chain.tokenTransfers)} token) after ${chain.setupBlocks} setup blocks, in ${seconds(chain.ms)} ` +
        `(${fmt((chain.blocks / chain.ms) * 1000, 1)} blocks/s); sampled blocks hold ${chain.sampledCounts.join(', ')} txs`,
    );
    if (chain.reducedFrom !== undefined) {
      say(`NOTE: preparing ${fmtInt(chain.reducedFrom)} blocks would have taken more than ${seconds(PREPARE_BUDGET_MS)}: REDUCED to ${fmtInt(chain.blocks)} blocks; everything below measures ${fmtInt(chain.blocks)} blocks`);
      goals.notes.push(`the chain was reduced from ${fmtInt(chain.reducedFrom)} to ${fmtInt(chain.blocks)} blocks to keep its preparation within ${seconds(PREPARE_BUDGET_MS)}.`);
    }
    if (chain.sampledCounts.some((count) => count !== TRANSFERS_PER_BLOCK)) throw new InvalidRunError(`sampled blocks hold ${chain.sampledCounts.join(', ')} txs, not ${TRANSFERS_PER_BLOCK} each`);

    const cost = await anvilRpcCost(anvil.url, chain.firstBlock, Math.min(COST_BLOCKS, chain.blocks));
    say(
      `anvil's own cost for ${cost.blocks} blocks (${fmtInt(cost.receipts)} txs), sequential requests: eth_getBlockByNumber(n, true) ${fmtInt(cost.fullBlocksMs)} ms (10 per request); ` +
        `eth_getBlockReceipts ${fmtInt(cost.blockReceiptsMs)} ms (10 per request); eth_getTransactionReceipt ${fmtInt(cost.txReceiptsBatchedMs)} ms (100 per request), ` +
        `${fmt(cost.singleReceiptMs, 2)} ms each as single requests (≈ ${fmtInt(cost.singleReceiptMs * cost.receipts)} ms for all ${fmtInt(cost.receipts)})`,
    );
    say();

    const runs: string[][] = [];
    let service: IndexRun | undefined;
    try {
      try {
        service = await serviceNodeRun(pgc, anvil.url, chain);
      } catch (error) {
        if (error instanceof InvalidRunError) throw error;
        const message = error instanceof Error ? error.message : String(error);
        say(`service node run FAILED: ${message.split('\n')[0]}`);
        goals.notes.push(`the service node run failed (${message.split('\n')[0]}); the harness runs below drive the same indexer machine.`);
      }
      if (service) {
        runs.push(runRow(service, 'block (auto)'));
        checkRows(service);
      }
      // The two receipt modes index the same range into their own databases, segment by segment, the mode going
      // first alternating (a drift of this shared machine then lands on both), and their segments are added up.
      const blockDb = await pgc.createDatabase('indexer_block');
      const txDb = await pgc.createDatabase('indexer_tx');
      const segmentBlocks = Math.ceil(chain.blocks / HARNESS_SEGMENTS);
      const blockSegments: IndexRun[] = [];
      const txSegments: IndexRun[] = [];
      const segment = (label: string, dbUrl: string, mode: 'block' | 'transaction', until: number, maxBatchItems?: number) =>
        runIndexerHarness({
          label,
          dbUrl,
          ethUrl: anvil.url,
          startBlock: chain.firstBlock,
          chainHead: chain.lastBlock,
          until,
          receiptsMode: mode,
          ...(maxBatchItems !== undefined ? { maxBatchItems } : {}),
          timeoutMs: INDEX_TIMEOUT_MS,
        });
      for (let k = 0; k * segmentBlocks < chain.blocks; k++) {
        const until = Math.min(chain.lastBlock, chain.firstBlock + (k + 1) * segmentBlocks - 1);
        const runBlock = async () => blockSegments.push(await segment(`batched, segment ${k + 1}`, blockDb, 'block', until));
        const runTx = async () => txSegments.push(await segment(`per-tx, segment ${k + 1}`, txDb, 'transaction', until));
        if (k % 2 === 0) {
          await runBlock();
          await runTx();
        } else {
          await runTx();
          await runBlock();
        }
      }
      const segmentRates = (list: readonly IndexRun[]) => list.map((run) => fmt((run.blocks / run.ms) * 1000, 1)).join(', ');
      const batched = addRuns('harness, batched receipts', blockSegments);
      runs.push(runRow(batched, 'eth_getBlockReceipts, 10 blocks/request'));
      checkRows(batched);
      const perTx = addRuns('harness, per-tx receipts', txSegments);
      runs.push(runRow(perTx, 'eth_getTransactionReceipt, 100/request'));
      checkRows(perTx);
      const unbatchedHead = Math.min(chain.lastBlock, chain.firstBlock + UNBATCHED_BLOCKS - 1);
      const single = await segment(`harness, per-tx receipts, first ${fmtInt(unbatchedHead - chain.firstBlock + 1)} blocks`, await pgc.createDatabase('indexer_tx_single'), 'transaction', unbatchedHead, 1);
      runs.push(runRow(single, 'eth_getTransactionReceipt, 1/request'));
      checkRows(single);
      goals.notes.push(
        `indexer harness: ${blockSegments.length} segments of ${fmtInt(segmentBlocks)} blocks per mode, alternating which mode goes first; blocks/s per segment: ` +
          `batched ${segmentRates(blockSegments)}; per-tx ${segmentRates(txSegments)}.`,
      );

      const rate = (run: IndexRun) => (run.blocks / run.ms) * 1000;
      const rowRate = (run: IndexRun) => (run.rows / run.ms) * 1000;
      if (service) goals.info(`indexer, service node: blocks/s (rows/s) over ${fmtInt(service.blocks)} blocks`, `${fmt(rate(service), 1)} (${fmtInt(rowRate(service))})`);
      goals.info(
        'indexer: batched receipts vs per-tx receipts (100/request), blocks/s',
        `${fmt(rate(batched), 1)} (${fmtInt(rowRate(batched))} rows/s)`,
        `${fmt(rate(perTx), 1)} (${fmtInt(rowRate(perTx))} rows/s)`,
        `${fmt(rate(batched) / rate(perTx))}x`,
      );
      goals.info(
        `indexer: batched receipts vs one request per receipt (first ${fmtInt(single.blocks)} blocks), blocks/s`,
        `${fmt(rate(batched), 1)}`,
        `${fmt(rate(single), 1)}`,
        `${fmt(rate(batched) / rate(single))}x`,
      );
      const receiptShare = cost.blockReceiptsMs / (cost.fullBlocksMs + cost.blockReceiptsMs);
      goals.notes.push(
        `indexer: on anvil, fetching the blocks with their transactions costs ${fmt(cost.fullBlocksMs / cost.blocks, 1)} ms a block and their receipts ` +
          `${fmt(cost.blockReceiptsMs / cost.blocks, 1)} ms (per block) or ${fmt(cost.txReceiptsBatchedMs / cost.blocks, 1)} ms (per tx, batched): receipts are ` +
          `${fmt(receiptShare * 100, 0)}% of the node's work in batched mode, so the mode can change little here; the original's one request per receipt ` +
          `(${fmt(cost.singleReceiptMs, 2)} ms each) is what batching removes.`,
      );
      for (const run of [service, batched, perTx, single]) {
        if (run && run.warnings.length > 0) goals.notes.push(`${run.label}: ${run.warnings.length} warning(s) logged, e.g. ${run.warnings[0]}`);
      }
    } finally {
      say(table(RUN_HEADER, runs));
      say();
    }
  } finally {
    await anvil.stop();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runTransfersBench(options: BenchOptions): Promise<void> {
  const run = (section: (typeof TRANSFERS_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  goals.begin('transfers benchmark');
  let pgc: BenchPostgres | undefined;
  try {
    pgc = await startBenchPostgres();
    say(`PostgreSQL: throwaway cluster on 127.0.0.1:${pgc.port} (postmaster pid ${pgc.postmasterPid}; fsync, synchronous_commit and full_page_writes off)`);
    say();
    if (run('queries')) await goals.section('queries', () => benchQueries(options, pgc!));
    if (run('indexer')) await goals.section('indexer', () => benchIndexer(pgc!));
    goals.print();
    goals.throwIfFailed();
  } finally {
    terminateLoadWorkers();
    await stopAllTracked();
    const postmaster = pgc?.postmasterPid;
    await pgc?.stop();
    removeScratchDirs();
    if (postmaster !== undefined && processAlive(postmaster)) say(`WARNING: the PostgreSQL postmaster ${postmaster} is still running after its stop`);
  }
}
