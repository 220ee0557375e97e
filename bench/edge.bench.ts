// `npm run bench -- edge`: the HTTP edge's two engines (http/engine.ts, issue 15) against each other and against a bare
// node:http server answering the same bytes, measured in the same run (docs/DESIGN.md "Testing").
//
// Three servers, each in its own process (bench/support/edge-server.ts), so that each one's CPU time is read from
// /proc/<pid>/stat apart from the load generator (a worker thread of this process, bench/support/load.ts):
//   - uws:  HttpServer (http/server.ts) on the uWebSockets.js engine;
//   - node: HttpServer on the node:http engine, the same two routes;
//   - bare: a plain node:http server with no edge code (the baseline).
// uWS's native binary exists only for Node 20 (http/engine.ts): where the uws server reports that it cannot load
// (Node 22, 24), that side is skipped with a printed line and the node engine is still measured against bare node:http.
// Two answers (sections):
//   - small:  GET /small -> `{"ok":true,"n":1}`, content-type JSON (a handler's synchronous reply);
//   - stream: GET /stream -> 1 MiB through the `stream` reply in 64 KiB chunks (the bare server writes the same chunks
//             with res.write/drain).
// Each answer at 1 and 50 (--connections) closed-loop keep-alive connections: per server an unmeasured warm-up run,
// then ROUNDS rounds of --duration / ROUNDS seconds each, the order of the three servers rotating per round, so each
// server runs once in each position. requests/s over all rounds, p50/p99 = the median of the rounds', server CPU per
// request = the server process's user+system CPU seconds during its rounds / the requests they completed.
// Answers (status, body bytes, content type) and the engine each server really runs are checked before anything is
// measured. Goals (judged), small JSON at --connections (50): uWS CPU per request <= 0.7x the node engine's (where uWS
// runs), and the node engine's CPU per request <= 1.3x bare node:http's (on every Node). The rest is printed with the
// uWS/node ratio, or node/bare where uWS does not run.
//
// Everything started here is stopped at the end (and on SIGINT: every server process is tracked).

import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions } from './run.js';
import { captureResponse } from './support/baseline.js';
import { SMALL_BODY, SMALL_CONTENT_TYPE, SMALL_PATH, STREAM_BYTES, STREAM_CHUNK_BYTES, STREAM_CONTENT_TYPE, STREAM_PATH, streamBody } from './support/edge-answers.js';
import type { EdgeServerAnswer, EdgeServerSetup, EdgeSide } from './support/edge-server.js';
import { GoalReport, InvalidRunError } from './support/goals.js';
import { runLoad, terminateLoadWorkers } from './support/load.js';
import { combineRounds, measuredCells, measuredHeader, measuredLoad, type MeasuredLoad } from './support/measured-load.js';
import { cpuSecondsOf, memoryOf, spawnTracked, stopAllTracked, type ManagedProcess } from './support/processes.js';
import { fmt, fmtInt, table } from './support/stats.js';

export const EDGE_SECTIONS = ['small', 'stream'] as const;
type Section = (typeof EDGE_SECTIONS)[number];

/** Default --duration of this bench: seconds of measurement per server and cell (section x connections). */
export const EDGE_DEFAULT_DURATION_SECONDS = 3;

// Goals (the issue of this benchmark): uWS/node and node/bare server CPU per request, small answer at --connections.
const GOAL_CPU_RATIO = 0.7;
const GOAL_NODE_OVER_BARE_CPU_RATIO = 1.3;
const GOAL_SECTION: Section = 'small';

/** Rounds per server and cell: 3, so that with the rotation each server runs once first, once second, once last. */
const ROUNDS = 3;
const WARMUP_MS = 1_000;
const START_TIMEOUT_MS = 30_000;
/** Busy time outside the server and the generator above this (% of a core) marks a run as disturbed. */
const NOISY_OTHER_CPU = 25;

const DIST = fileURLToPath(new URL('..', import.meta.url));
const POLYFILL = join(DIST, 'src', 'polyfill.js');

const SIDES: readonly EdgeSide[] = ['uws', 'node', 'bare'];
const SIDE_LABEL: Readonly<Record<EdgeSide, string>> = { uws: 'HttpServer uWS', node: 'HttpServer node:http', bare: 'bare node:http' };
const COLUMN_LABEL: Readonly<Record<EdgeSide, string>> = { uws: 'uWS', node: 'node', bare: 'bare node:http' };
const SHORT_LABEL: Readonly<Record<EdgeSide, string>> = { uws: 'uWS', node: 'node', bare: 'bare' };

const say = (text = ''): void => void process.stdout.write(`${text}\n`);

const goals = new GoalReport({ stacks: true, timed: true });

// ---------------------------------------------------------------------------------------------
// The three servers, each in its own process.

interface EdgeServer {
  readonly side: EdgeSide;
  readonly process: ManagedProcess;
  readonly port: number;
}

/** A side that cannot run on this Node (uws without its native binary): why. */
interface SkippedSide {
  readonly side: EdgeSide;
  readonly unavailable: string;
}

async function startServer(side: EdgeSide): Promise<EdgeServer | SkippedSide> {
  const label = `edge server (${side})`;
  const script = fileURLToPath(new URL('./support/edge-server.js', import.meta.url));
  // A minimal environment: no ADM_HTTP_ENGINE or ADM_HTTP_UWS from the caller's shell decides the engine.
  const managed = spawnTracked(label, process.execPath, ['--import', POLYFILL, script], { ipc: true, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const answer = await new Promise<{ port: number; engine: string; node: string } | { unavailable: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within ${START_TIMEOUT_MS} ms: ${managed.tail()}`)), START_TIMEOUT_MS);
    managed.child.once('message', (message: EdgeServerAnswer) => {
      clearTimeout(timer);
      if (message.ok || 'unavailable' in message) resolve(message);
      else reject(new Error(`${label} failed to start: ${message.error}`));
    });
    managed.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before serving: ${managed.tail()}`));
    });
    managed.child.send({ side } satisfies EdgeServerSetup);
  }).catch(async (error: unknown) => {
    await managed.stop();
    throw error;
  });
  if ('unavailable' in answer) {
    await managed.stop();
    return { side, unavailable: answer.unavailable };
  }
  if (answer.node !== process.version) {
    await managed.stop();
    throw new InvalidRunError(`${label} runs on Node ${answer.node}, the bench on ${process.version}`);
  }
  if (answer.engine !== side) {
    await managed.stop();
    // The uWS binary could not load there and the edge fell back to node:http: comparing the engines means nothing.
    throw new InvalidRunError(`${label} runs on '${answer.engine}', not '${side}': ${managed.tail().trim().slice(-500)}`);
  }
  return { side, process: managed, port: answer.port };
}

// ---------------------------------------------------------------------------------------------
// The answers, checked equal on every server before anything is measured.

interface Answer {
  readonly section: Section;
  readonly path: string;
  readonly body: Buffer;
  readonly contentType: string;
}

function answers(): Readonly<Record<Section, Answer>> {
  return {
    small: { section: 'small', path: SMALL_PATH, body: Buffer.from(SMALL_BODY), contentType: SMALL_CONTENT_TYPE },
    stream: { section: 'stream', path: STREAM_PATH, body: streamBody(), contentType: STREAM_CONTENT_TYPE },
  };
}

/** One raw exchange per server: status 200, the exact body bytes, the content type. Returns each server's other headers. */
async function checkAnswer(answer: Answer, servers: readonly EdgeServer[]): Promise<string[]> {
  const lines: string[] = [];
  for (const server of servers) {
    const captured = await captureResponse(server.port, answer.path);
    const body = Buffer.from(captured.body, 'base64');
    const contentType = captured.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1];
    if (captured.status !== 200 || !body.equals(answer.body) || contentType !== answer.contentType) {
      throw new InvalidRunError(
        `${SIDE_LABEL[server.side]} ${answer.path}: status ${captured.status}, ${body.length} body bytes (${body.equals(answer.body) ? 'equal' : 'NOT equal'} to the expected ${answer.body.length}), content-type ${contentType}`,
      );
    }
    const others = captured.headers.filter(([name]) => name.toLowerCase() !== 'content-type').map(([name]) => name.toLowerCase());
    lines.push(`${SIDE_LABEL[server.side]}: content-type + content-length${captured.sendDate ? ' + date' : ''}${others.length ? ` + ${others.join(', ')}` : ''}`);
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Load runs: the generator's own measures, the CPU shares of measuredLoad, and the server's CPU seconds per request.

interface EdgeRound {
  readonly load: MeasuredLoad<'server'>;
  /** CPU seconds the server process used from just before the run to just after it. */
  readonly serverCpuSeconds: number;
}

interface EdgeResult {
  readonly load: MeasuredLoad<'server'>;
  /** Server CPU microseconds per completed request over all rounds. */
  readonly cpuMicrosPerRequest: number;
}

async function round(server: EdgeServer, path: string, connections: number, durationMs: number): Promise<EdgeRound> {
  const cpu = () => cpuSecondsOf(server.process.pid);
  const before = cpu();
  const load = await measuredLoad({ server: cpu }, () => runLoad({ port: server.port, paths: [path], connections, durationMs }));
  const after = cpu();
  return { load, serverCpuSeconds: before === undefined || after === undefined ? NaN : after - before };
}

function combine(rounds: readonly EdgeRound[]): EdgeResult {
  const load = combineRounds(rounds.map((r) => r.load));
  const seconds = rounds.reduce((sum, r) => sum + r.serverCpuSeconds, 0);
  return { load, cpuMicrosPerRequest: load.completed > 0 ? (seconds / load.completed) * 1e6 : NaN };
}

/** Each server's results for one cell: a warm-up run each, then ROUNDS rounds with the order rotating. */
async function measureCell(servers: readonly EdgeServer[], path: string, connections: number, durationMs: number): Promise<Map<EdgeSide, EdgeResult>> {
  for (const server of servers) await runLoad({ port: server.port, paths: [path], connections, durationMs: WARMUP_MS });
  const rounds = new Map<EdgeSide, EdgeRound[]>(servers.map((s) => [s.side, []]));
  const roundMs = durationMs / ROUNDS;
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < servers.length; i++) {
      const server = servers[(i + r) % servers.length]!;
      rounds.get(server.side)!.push(await round(server, path, connections, roundMs));
    }
  }
  return new Map([...rounds].map(([side, runs]) => [side, combine(runs)]));
}

// ---------------------------------------------------------------------------------------------
// One section: an answer through the three servers at each connection count.

const LOAD_HEADER = ['server', 'conns', ...measuredHeader(['srv CPU%']), 'srv CPU us/req'];

async function benchSection(section: Section, options: BenchOptions, servers: readonly EdgeServer[]): Promise<void> {
  const answer = answers()[section];
  const connectionCounts = [...new Set([1, options.connections])];
  const durationMs = options.durationSeconds * 1000;
  say(
    `== ${section}: GET ${answer.path} -> ${section === 'small' ? `${SMALL_BODY} (${answer.body.length} bytes, ${SMALL_CONTENT_TYPE})` : `${fmtInt(STREAM_BYTES)} bytes through the stream reply in ${fmtInt(STREAM_CHUNK_BYTES)}-byte chunks`}; ` +
      `${connectionCounts.join(' and ')} connection(s); per server ${fmt(WARMUP_MS / 1000, 1)} s warm-up, then ${ROUNDS} rotating rounds of ${fmt(options.durationSeconds / ROUNDS, 2)} s`,
  );
  for (const line of await checkAnswer(answer, servers)) say(`  ${line}`);
  say(`  answers equal on ${servers.length === 2 ? 'both' : `all ${servers.length}`} servers (status 200, ${fmtInt(answer.body.length)} body bytes, content type)`);

  const rows: string[][] = [];
  const ratios: string[][] = [];
  const sides = servers.map((server) => server.side);
  const withUws = sides.includes('uws');
  // The ratio columns: uWS against the node engine and against bare node:http where uWS runs, and always node/bare.
  const pairs: ReadonlyArray<readonly [EdgeSide, EdgeSide]> = withUws
    ? [['uws', 'node'], ['uws', 'bare'], ['node', 'bare']]
    : [['node', 'bare']];
  const pairName = ([a, b]: readonly [EdgeSide, EdgeSide]) => `${SHORT_LABEL[a]}/${SHORT_LABEL[b]}`;
  try {
    for (const connections of connectionCounts) {
      const results = await measureCell(servers, answer.path, connections, durationMs);
      const result = (side: EdgeSide) => results.get(side)!;
      const disturbed: string[] = [];
      for (const side of sides) {
        const r = result(side);
        rows.push([SIDE_LABEL[side], String(connections), ...measuredCells(r.load), fmt(r.cpuMicrosPerRequest, 1)]);
        if (r.load.cpu.other > NOISY_OTHER_CPU) disturbed.push(`${side} ${fmt(r.load.cpu.other, 0)}%`);
        if (r.load.errors === 0 && r.load.bodyBytes !== answer.body.length) {
          throw new InvalidRunError(`${section} ${side}: the last answer had ${r.load.bodyBytes} body bytes, expected ${answer.body.length}`);
        }
      }
      if (disturbed.length > 0) {
        goals.notes.push(`${section} at ${connections} conn(s): other work (outside the server and the generator) during the rounds, % of a core: ${disturbed.join(', ')}; those numbers are disturbed.`);
      }
      const clean = sides.every((side) => result(side).load.errors === 0);
      if (!clean) goals.notes.push(`${section} at ${connections} conn(s): errors during the load runs (see the table); its ratios are not judged.`);
      const measures: ReadonlyArray<readonly [string, (r: EdgeResult) => number, (v: number) => string, string]> = [
        ['req/s', (r) => r.load.requestsPerSecond, fmtInt, ''],
        ['p50', (r) => r.load.p50, (v) => fmt(v, 3), ' ms'],
        ['p99', (r) => r.load.p99, (v) => fmt(v, 3), ' ms'],
        ['server CPU per request', (r) => r.cpuMicrosPerRequest, (v) => fmt(v, 1), ' us'],
      ];
      for (const [name, pick, format, unit] of measures) {
        const value = (side: EdgeSide) => pick(result(side));
        const ratio = ([a, b]: readonly [EdgeSide, EdgeSide]) => value(a) / value(b);
        ratios.push([`${name} at ${connections} conn(s)`, ...sides.map((side) => format(value(side)) + unit), ...pairs.map((pair) => fmt(ratio(pair)))]);
        const label = `${section}: ${name} at ${connections} conn(s)`;
        const goalCell = section === GOAL_SECTION && connections === options.connections && name === 'server CPU per request';
        // The goals table shows each measure as uWS against node where uWS runs, else node against bare node:http.
        const shown: readonly [EdgeSide, EdgeSide] = withUws ? ['uws', 'node'] : ['node', 'bare'];
        const row = (pair: readonly [EdgeSide, EdgeSide], target?: number) => {
          const [a, b] = pair;
          const args = [`${label}, ${pairName(pair)}`, `${format(value(a))}${unit}`, `${format(value(b))}${unit}`, `${fmt(ratio(pair))}x`] as const;
          if (target === undefined) goals.info(...args);
          else goals.judge(...args, `<= ${target}x`, clean && Number.isFinite(ratio(pair)) ? ratio(pair) <= target : undefined);
        };
        if (!goalCell) {
          row(shown);
          continue;
        }
        if (withUws) row(['uws', 'node'], GOAL_CPU_RATIO);
        // Why it was skipped is in a note (and the line printed at start).
        else goals.info(`${label}, uWS/node`, `skipped: no uWS on Node ${process.version}`, '-', '-');
        row(['node', 'bare'], GOAL_NODE_OVER_BARE_CPU_RATIO);
      }
      const b = result('bare');
      const versusBare = sides.filter((side) => side !== 'bare').map((side) => `${SHORT_LABEL[side]}/bare ${fmt(result(side).cpuMicrosPerRequest / b.cpuMicrosPerRequest)}x`);
      goals.notes.push(
        `${section} at ${connections} conn(s), bare node:http baseline: ${fmtInt(b.load.requestsPerSecond)} req/s, p50 ${fmt(b.load.p50, 3)} ms, p99 ${fmt(b.load.p99, 3)} ms, ` +
          `${fmt(b.cpuMicrosPerRequest, 1)} us CPU/request (${versusBare.join(', ')}).`,
      );
    }
  } finally {
    say();
    say(table(LOAD_HEADER, rows));
    say();
    say(table(['measure', ...sides.map((side) => COLUMN_LABEL[side]), ...pairs.map(pairName)], ratios));
    say();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runEdgeBench(options: BenchOptions): Promise<void> {
  const run = (section: Section) => options.only.length === 0 || options.only.includes(section);
  goals.begin('edge benchmark');
  say(
    'servers: HttpServer on uWS (where its binary loads: Node 20), HttpServer on node:http, bare node:http (the baseline), each its own process on 127.0.0.1; ' +
      'the load generator is a worker thread of this process. Server CPU = user+system time of the server process ' +
      `(/proc/<pid>/stat) during its measured rounds / the requests they completed; CPU % is of one core (${cpus().length} cores here).`,
  );
  say();
  say(`node ${process.version} (ABI ${process.versions.modules}, ${process.execPath}); every server runs on this same Node.`);
  const servers: EdgeServer[] = [];
  let uwsSkipped: string | undefined;
  let started = false;
  try {
    await goals.section('start', async () => {
      for (const side of SIDES) {
        const server = await startServer(side);
        if ('unavailable' in server) {
          uwsSkipped = server.unavailable;
          say(`${SIDE_LABEL[side]}: SKIPPED on Node ${process.version}: ${server.unavailable}. The node engine is measured against bare node:http only.`);
          goals.notes.push(`${SIDE_LABEL[side]} skipped on Node ${process.version}: ${server.unavailable}.`);
        } else servers.push(server);
      }
      say(servers.map((s) => `${SIDE_LABEL[s.side]}: pid ${s.process.pid}, port ${s.port}`).join('; '));
      say(`engines run: ${servers.map((s) => s.side).join(', ')}${uwsSkipped === undefined ? '' : ' (uws skipped)'}`);
      say();
      started = true;
    });
    // Every side started, except uws where its binary cannot load (the node engine and bare node:http run on any Node).
    if (started) {
      for (const section of EDGE_SECTIONS) if (run(section)) await goals.section(section, () => benchSection(section, options, servers));
      for (const server of servers) {
        const memory = memoryOf(server.process.pid);
        if (memory) goals.notes.push(`${SIDE_LABEL[server.side]}: peak RSS (VmHWM) ${fmt(memory.peakMiB, 1)} MiB after the runs.`);
      }
    }
    goals.notes.push(
      'closed loop: a connection sends its next request when the answer is complete, so at 50 connections p50 is mostly queueing (connections / throughput) ' +
        'and the generator (one thread, sharing the cores with the server) is part of the limit; CPU per request is the measure that does not depend on it. ' +
        'Requests still in flight when a round ends are finished but not counted, while their server CPU is: at most one per connection per round.',
    );
    goals.print();
    goals.throwIfFailed(() => servers.map((s) => `${s.process.name}: ${s.process.tail().trim().slice(-1_000)}`).join('\n'));
  } finally {
    terminateLoadWorkers();
    await stopAllTracked();
  }
}
