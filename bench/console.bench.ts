// `npm run bench -- console`: the console server's timing goals, each against a baseline measured in the same run
// (docs/DESIGN.md "Testing").
//
// 1. rpc:     JSON-RPC `nodeHeight` and `getAddress` through the console server (the built CLI, `adm-infra console`,
//             its own process, one configured node) against the node calls they make, sent directly to the same
//             fake ADAMANT node (test/support/adamant-node.ts, its own process): `GET /api/blocks/getHeight` and
//             `GET /api/accounts?address=…` (src/console/read-methods.ts). Both sides are driven by the same
//             closed-loop keep-alive generator (bench/support/load.ts) at 32 connections, a bounded number
//             of requests each: 4 interleaved rounds per side (the side going first alternating), percentiles =
//             median of the rounds'. Both sides must answer the same values (checked first), and the node calls
//             the server made are counted. Goals, per method: added latency = server p50 - direct p50 < 1 ms and
//             server req/s >= 0.6x direct at 32 connections; at 1 connection (sequential requests: the hop's cost
//             without queueing) added p50 < 0.2 ms. The server's CPU (user + system, all threads) per proxied call
//             is printed, beside the fake node's per direct call. A second console server runs the same code on
//             undici (bench/support/undici-http-client.ts, swapped in for our HTTP client by a module hook): its
//             rounds interleave with the other two sides and its figures are printed beside ours (issue 32); the
//             goals are judged on the server as it ships (our client).
// 2. signing: `sendTokens` (type 0) payloads with random recipients and amounts, in-process, bounded loops:
//             the console's signing step (amount parsed, address checked, signedTransaction: bytes, SHA-256, Ed25519
//             through node:crypto) against the raw Ed25519 signature of the same precomputed digests with the same
//             key (node:crypto `sign`: the floor of any signer on this runtime); 3 interleaved rounds, median
//             rate. The signatures must be identical to the baseline's and to @noble/curves' (pure-JS Ed25519,
//             printed as a reference rate). Also the whole sendTokens method (src/console/send-methods.ts) with
//             a stub node client, which derives the keys from the passphrase on every call as the server does
//             (nothing is cached by passphrase), one call after the other and 8 at a time. Goal: one after the
//             other, at least 0.85x the rate of the crypto alone (PBKDF2-HMAC-SHA512 of 2,048 rounds, SHA-256, the
//             Ed25519 key from the seed and the signature, run in a plain loop).
//
// Everything started here is stopped at the end (and on SIGINT: every process it starts is tracked).

import { createHash, createPrivateKey, pbkdf2Sync, sign } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { ed25519 } from '@noble/curves/ed25519.js';
import { systemClock } from '../src/clock.js';
import type { AdamantNodeClient } from '../src/console/node-api.js';
import { sendMethods } from '../src/console/send-methods.js';
import { signedTransaction, type PostedTransaction } from '../src/console/chat-send.js';
import { parseAmount } from '../src/console/amount.js';
import { ADDRESS_PATTERN, adamantTime, keyPairFromPassphrase, transactionBytes, verifyTransaction, type KeyPair, type UnsignedTransaction } from '../src/console/crypto.js';
import { freePort } from '../test/support/cli.js';
import type { BenchOptions } from './run.js';
import type { ConsoleNodeAnswer, ConsoleNodeSetup } from './support/console-node.js';
import { GoalReport, InvalidRunError } from './support/goals.js';
import { getJson } from './support/http-json.js';
import { runLoad, terminateLoadWorkers, type PostRequest } from './support/load.js';
import { combineRounds, interleaveSides, measuredCells, measuredHeader, measuredLoad, type MeasuredLoad } from './support/measured-load.js';
import { cpuSecondsOf, memoryOf, spawnTracked, stopAllTracked, type ManagedProcess } from './support/processes.js';
import { prng } from '../test/support/random.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, median, table } from './support/stats.js';

export const CONSOLE_SECTIONS = ['rpc', 'signing'] as const;

// Goals (the issues of this benchmark: the console server, then "a near-free proxy").
const GOAL_ADDED_P50_MS = 1;
/** Requests/s through the server at CONNECTIONS connections, at least this share of the direct requests/s. */
const GOAL_THROUGHPUT_RATIO = 0.6;
/** Added p50 of one call at 1 connection (the hop without queueing). */
const GOAL_ADDED_P50_ONE_CONN_MS = 0.2;
/** The sendTokens method with keys derived per call, at least this share of the bare crypto's rate. */
const GOAL_METHOD_VS_CRYPTO = 0.85;

// 1. rpc
const CONNECTIONS = 32;
/** Interleaved rounds per side and method at 32 connections (see the header). */
const ROUNDS = 4;
const ROUND_REQUESTS = 3_000;
const ROUND_WARMUP_REQUESTS = 300;
/** Sequential requests (1 connection) per side and method: the hop's cost without queueing. */
const SEQUENTIAL_ROUNDS = 2;
const SEQUENTIAL_REQUESTS = 1_000;
const SEQUENTIAL_WARMUP_REQUESTS = 100;
/** Distinct addresses getAddress asks for, round-robin. */
const ADDRESSES = 64;
const NODE_HEIGHT = 4_242_424;
const START_TIMEOUT_MS = 30_000;
/** Busy time outside the server, the node and the generator above this (% of a core) marks a run as disturbed. */
const NOISY_OTHER_CPU = 25;

// 2. signing
const SIGN_ROUNDS = 3;
const SIGN_TRANSACTIONS = 10_000;
const SIGN_WARMUP = 1_000;
/** @noble/curves signs in pure JS: fewer transactions give a steady rate. */
const NOBLE_TRANSACTIONS = 1_000;
/** The whole method derives the keys (PBKDF2, 2,048 rounds of SHA-512) on every call. */
const METHOD_CALLS = 300;
/** Calls in flight at once for the concurrent rate (libuv's thread pool has 4 threads). */
const METHOD_CONCURRENCY = 8;
const METHOD_WARMUP = 20;
/** The public BIP-39 test mnemonic (notes D): a passphrase that is no secret. */
const MNEMONIC = `${'abandon '.repeat(11)}about`;
const SEED = 0x0ada_5080;

const DIST = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(DIST, 'src', 'cli.js');
const POLYFILL = join(DIST, 'src', 'polyfill.js');
/** Makes a console server run on undici instead of our HTTP client (see the header). */
const UNDICI_CLIENT_HOOK = join(DIST, 'bench', 'support', 'undici-http-client.hook.js');

const say = (text = ''): void => void process.stdout.write(`${text}\n`);

/** A random ADAMANT address: `U` + a uint64 whose bit length is itself uniform (short and 20-digit ids both occur). */
function randomAddress(random: () => number): string {
  const u64 = (BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32));
  const value = u64 >> BigInt(Math.floor(random() * 60));
  return `U${value === 0n ? 1n : value}`;
}

// ---------------------------------------------------------------------------------------------
// Results: the added latency is a difference, not a ratio.

const goals = new GoalReport({ versusHeader: 'vs baseline', stacks: true, timed: true });

// ---------------------------------------------------------------------------------------------
// The two processes: the fake node and the console server.

interface FakeNodeProcess {
  readonly process: ManagedProcess;
  readonly port: number;
  /** Requests per node path since the last call. */
  counts(): Promise<Readonly<Record<string, number>>>;
}

async function startFakeNode(): Promise<FakeNodeProcess> {
  const script = fileURLToPath(new URL('./support/console-node.js', import.meta.url));
  const managed = spawnTracked('fake ADAMANT node', process.execPath, ['--import', POLYFILL, script], { ipc: true, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const waiting: Array<(counts: Readonly<Record<string, number>>) => void> = [];
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the fake node did not start within ${START_TIMEOUT_MS} ms: ${managed.tail()}`)), START_TIMEOUT_MS);
    managed.child.on('message', (message: ConsoleNodeAnswer) => {
      if (message.kind === 'counts') waiting.shift()?.(message.counts);
      else {
        clearTimeout(timer);
        if (message.kind === 'ready') resolve(message.port);
        else reject(new Error(`the fake node failed to start: ${message.error}`));
      }
    });
    managed.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the fake node exited (${code}) before serving: ${managed.tail()}`));
    });
    managed.child.send({ kind: 'setup', height: NODE_HEIGHT } satisfies ConsoleNodeSetup);
  }).catch(async (error: unknown) => {
    await managed.stop();
    throw error;
  });
  return {
    process: managed,
    port,
    counts: () =>
      new Promise((resolve, reject) => {
        if (managed.exited()) return reject(new Error(`the fake node has exited: ${managed.tail()}`));
        waiting.push(resolve);
        managed.child.send({ kind: 'counts' });
      }),
  };
}

async function rpcCall(port: number, method: string, params: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

interface ConsoleServer {
  readonly process: ManagedProcess;
  readonly port: number;
  readonly startupMs: number;
}

/** The HTTP client a console server runs on: ours (as it ships) or undici, for comparison. */
type NodeClient = 'ours' | 'undici';

/**
 * The built CLI as an operator runs it: `adm-infra console --config FILE`, the one node of the network the fake node;
 * `client` 'undici' adds the module hook that swaps undici in for our HTTP client. `dir` is the server's own.
 */
async function startConsoleServer(dir: string, nodePort: number, client: NodeClient): Promise<ConsoleServer> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const configPath = join(dir, 'config.jsonc');
  writeFileSync(
    configPath,
    JSON.stringify({ network: 'testnet', rpc: { port }, networks: { testnet: { nodes: [{ ip: '127.0.0.1', protocol: 'http', port: nodePort }] } } }, null, 2),
  );
  const started = Date.now();
  // A minimal environment and its own HOME: no ~/.adm config, no ADMIN_PORT (operator listener off).
  const hooks = client === 'undici' ? ['--import', UNDICI_CLIENT_HOOK] : [];
  const managed = spawnTracked(`console server (${client})`, process.execPath, ['--import', POLYFILL, ...hooks, CLI, 'console', '--config', configPath, '--host', '127.0.0.1'], {
    env: { PATH: process.env.PATH, HOME: dir },
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last = '';
  for (;;) {
    if (managed.exited()) throw new Error(`the console server exited before serving:\n${managed.tail()}`);
    if (Date.now() > deadline) throw new Error(`the console server did not answer nodeHeight within ${START_TIMEOUT_MS} ms (last: ${last}):\n${managed.tail()}`);
    try {
      const { status, body } = await rpcCall(port, 'nodeHeight', []);
      if (status === 200 && body?.result === NODE_HEIGHT) break;
      last = `${status} ${JSON.stringify(body).slice(0, 200)}`;
    } catch (error) {
      last = (error as Error).message; // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { process: managed, port, startupMs: Date.now() - started };
}

// ---------------------------------------------------------------------------------------------
// Load runs with the CPU of each party.

// The parties: the console server and the fake node (measuredLoad adds the generator and the rest of the machine).
const LOAD_HEADER = ['method', 'side', 'conns', ...measuredHeader(['srv CPU%', 'node CPU%'])];

function loadRow(method: string, side: string, connections: number, s: MeasuredLoad<string>): string[] {
  return [method, side, String(connections), ...measuredCells(s)];
}

// ---------------------------------------------------------------------------------------------
// 1. rpc

interface RpcCase {
  readonly method: 'nodeHeight' | 'getAddress';
  /** The node path the method calls (src/console/read-methods.ts). */
  readonly nodePath: string;
  /** Direct GETs to the node (paths), and the same calls as JSON-RPC POSTs to the server, index for index. */
  readonly direct: readonly string[];
  readonly server: readonly PostRequest[];
  /** The first few (direct path, rpc params) pairs, for the equality check. */
  readonly samples: ReadonlyArray<{ readonly path: string; readonly params: unknown; readonly field: string }>;
}

/** A JSON-RPC 2.0 call as the POST to `/` the load generator repeats. */
function rpcPost(method: string, params: unknown, id: number): PostRequest {
  return { path: '/', contentType: 'application/json', body: JSON.stringify({ jsonrpc: '2.0', method, params, id }) };
}

function rpcCases(): RpcCase[] {
  const random = prng(SEED);
  const addresses = Array.from({ length: ADDRESSES }, () => randomAddress(random));
  const accountPath = (address: string) => `/api/accounts?${new URLSearchParams({ address })}`;
  return [
    {
      method: 'nodeHeight',
      nodePath: 'blocks/getHeight',
      direct: ['/api/blocks/getHeight'],
      server: [rpcPost('nodeHeight', [], 1)],
      samples: [{ path: '/api/blocks/getHeight', params: [], field: 'height' }],
    },
    {
      method: 'getAddress',
      nodePath: 'accounts',
      direct: addresses.map(accountPath),
      server: addresses.map((address, i) => rpcPost('getAddress', [address], i + 1)),
      samples: addresses.slice(0, 5).map((address) => ({ path: accountPath(address), params: [address], field: 'account' })),
    },
  ];
}

/** Both sides must answer the same value: the server's `result` is the node answer's field (notes C.2). */
async function checkAnswers(c: RpcCase, nodePort: number, serverPort: number): Promise<{ directBytes: number }> {
  let directBytes = 0;
  for (const sample of c.samples) {
    const direct = await getJson(nodePort, sample.path);
    const served = await rpcCall(serverPort, c.method, sample.params);
    directBytes = direct.bytes;
    if (direct.status !== 200 || direct.body?.success !== true) throw new InvalidRunError(`${c.method}: the node answered ${direct.status} ${JSON.stringify(direct.body).slice(0, 200)}`);
    if (served.status !== 200 || !isDeepStrictEqual(served.body?.result, direct.body[sample.field])) {
      throw new InvalidRunError(`${c.method}: the server answered ${served.status} ${JSON.stringify(served.body).slice(0, 300)}, the node's ${sample.field} is ${JSON.stringify(direct.body[sample.field]).slice(0, 300)}`);
    }
  }
  return { directBytes };
}

async function benchRpc(dir: string): Promise<void> {
  say(
    `== 1. rpc: JSON-RPC through the console server vs the same node call direct to the fake node; ${CONNECTIONS} keep-alive connections, ` +
      `${ROUNDS} interleaved rounds per side of ${fmtInt(ROUND_REQUESTS)} requests (after ${fmtInt(ROUND_WARMUP_REQUESTS)} warm-up); ` +
      `1 connection: ${SEQUENTIAL_ROUNDS} rounds of ${fmtInt(SEQUENTIAL_REQUESTS)}`,
  );
  const node = await startFakeNode();
  const server = await startConsoleServer(join(dir, 'ours'), node.port, 'ours');
  const onUndici = await startConsoleServer(join(dir, 'undici'), node.port, 'undici');
  say(
    `fake node pid ${node.process.pid} on 127.0.0.1:${node.port} (height ${fmtInt(NODE_HEIGHT)}); console server pid ${server.process.pid} ` +
      `on 127.0.0.1:${server.port}, answering after ${server.startupMs} ms; the same on undici: pid ${onUndici.process.pid} on 127.0.0.1:${onUndici.port}`,
  );
  const servers: Readonly<Record<NodeClient, ConsoleServer>> = { ours: server, undici: onUndici };
  const sideName: Readonly<Record<NodeClient, string>> = { ours: 'server JSON-RPC', undici: 'server JSON-RPC on undici' };
  const table32: string[][] = [];
  const table1: string[][] = [];
  try {
    for (const c of rpcCases()) {
      let directBytes = 0;
      for (const each of [server, onUndici]) ({ directBytes } = await checkAnswers(c, node.port, each.port));
      say(`${c.method}: answers equal on all sides (${c.samples.length} sample(s)); direct answer ${fmtInt(directBytes)} bytes, ${c.direct.length} distinct request(s)`);
      // `srv CPU%` is the CPU of the server the side drives (none for direct).
      const run = (side: 'direct' | NodeClient, connections: number, maxRequests: number, warmupRequests: number) =>
        measuredLoad({ server: () => (side === 'direct' ? 0 : cpuSecondsOf(servers[side].process.pid)), node: () => cpuSecondsOf(node.process.pid) }, () =>
          runLoad(
            side === 'direct'
              ? { port: node.port, paths: c.direct, connections, maxRequests, warmupRequests }
              : { port: servers[side].port, posts: c.server, connections, maxRequests, warmupRequests },
          ),
        );

      let serverNodeCalls = 0;
      let serverRequests = 0;
      let otherNodeCalls: Record<string, number> = {};
      const serverRound = async (client: NodeClient, connections: number, maxRequests: number, warmupRequests: number) => {
        await node.counts(); // reset
        const result = await run(client, connections, maxRequests, warmupRequests);
        const counts = await node.counts();
        serverNodeCalls += counts[c.nodePath] ?? 0;
        serverRequests += maxRequests + warmupRequests;
        for (const [path, n] of Object.entries(counts)) if (path !== c.nodePath) otherNodeCalls[path] = (otherNodeCalls[path] ?? 0) + n;
        return result;
      };
      // The sides' order rotates from round to round (direct first in round 0).
      const [direct, served, servedUndici] = await interleaveSides(ROUNDS, [
        () => run('direct', CONNECTIONS, ROUND_REQUESTS, ROUND_WARMUP_REQUESTS),
        () => serverRound('ours', CONNECTIONS, ROUND_REQUESTS, ROUND_WARMUP_REQUESTS),
        () => serverRound('undici', CONNECTIONS, ROUND_REQUESTS, ROUND_WARMUP_REQUESTS),
      ]);
      const [sequentialDirect, sequentialServed, sequentialUndici] = await interleaveSides(SEQUENTIAL_ROUNDS, [
        () => run('direct', 1, SEQUENTIAL_REQUESTS, SEQUENTIAL_WARMUP_REQUESTS),
        () => serverRound('ours', 1, SEQUENTIAL_REQUESTS, SEQUENTIAL_WARMUP_REQUESTS),
        () => serverRound('undici', 1, SEQUENTIAL_REQUESTS, SEQUENTIAL_WARMUP_REQUESTS),
      ]);

      const d = combineRounds(direct!);
      const s = combineRounds(served!);
      const u = combineRounds(servedUndici!);
      const d1 = combineRounds(sequentialDirect!);
      const s1 = combineRounds(sequentialServed!);
      const u1 = combineRounds(sequentialUndici!);
      table32.push(loadRow(c.method, `direct ${c.nodePath}`, CONNECTIONS, d), loadRow(c.method, sideName.ours, CONNECTIONS, s), loadRow(c.method, sideName.undici, CONNECTIONS, u));
      table1.push(loadRow(c.method, `direct ${c.nodePath}`, 1, d1), loadRow(c.method, sideName.ours, 1, s1), loadRow(c.method, sideName.undici, 1, u1));

      const clean = d.errors === 0 && s.errors === 0;
      const added = s.p50 - d.p50;
      goals.judge(`${c.method}: added p50 at ${CONNECTIONS} conns`, `${fmt(s.p50, 3)} ms`, `${fmt(d.p50, 3)} ms`, `+${fmt(added, 3)} ms`, `< ${GOAL_ADDED_P50_MS} ms`, clean ? added < GOAL_ADDED_P50_MS : undefined);
      goals.info(`${c.method}: p99 at ${CONNECTIONS} conns`, `${fmt(s.p99, 3)} ms`, `${fmt(d.p99, 3)} ms`, `+${fmt(s.p99 - d.p99, 3)} ms`);
      const ratio = s.requestsPerSecond / d.requestsPerSecond;
      goals.judge(`${c.method}: req/s at ${CONNECTIONS} conns`, fmtInt(s.requestsPerSecond), fmtInt(d.requestsPerSecond), `${fmt(ratio)}x`, `>= ${GOAL_THROUGHPUT_RATIO}x`, clean ? ratio >= GOAL_THROUGHPUT_RATIO : undefined);
      goals.info(`${c.method}: on undici, req/s at ${CONNECTIONS} conns`, fmtInt(u.requestsPerSecond), fmtInt(d.requestsPerSecond), `${fmt(u.requestsPerSecond / d.requestsPerSecond)}x`);
      const added1 = s1.p50 - d1.p50;
      const clean1 = d1.errors === 0 && s1.errors === 0;
      goals.judge(`${c.method}: added p50 at 1 conn`, `${fmt(s1.p50, 3)} ms`, `${fmt(d1.p50, 3)} ms`, `+${fmt(added1, 3)} ms`, `< ${GOAL_ADDED_P50_ONE_CONN_MS} ms`, clean1 ? added1 < GOAL_ADDED_P50_ONE_CONN_MS : undefined);
      goals.info(`${c.method}: on undici, added p50 at 1 conn`, `${fmt(u1.p50, 3)} ms`, `${fmt(d1.p50, 3)} ms`, `+${fmt(u1.p50 - d1.p50, 3)} ms`);
      // The server's CPU (user + system, all its threads) per proxied call; the node's per direct call beside it.
      const perCallUs = (m: MeasuredLoad<'server' | 'node'>, party: 'server' | 'node') => (10_000 * m.cpu[party]) / m.requestsPerSecond;
      goals.info(`${c.method}: server CPU per call at ${CONNECTIONS} conns`, `${fmt(perCallUs(s, 'server'), 1)} us`, `${fmt(perCallUs(d, 'node'), 1)} us`, 'node per direct call');
      goals.info(`${c.method}: on undici, server CPU per call at ${CONNECTIONS} conns`, `${fmt(perCallUs(u, 'server'), 1)} us`, `${fmt(perCallUs(s, 'server'), 1)} us`, `${fmt(perCallUs(u, 'server') / perCallUs(s, 'server'))}x ours`);
      goals.info(`${c.method}: server CPU per call at 1 conn`, `${fmt(perCallUs(s1, 'server'), 1)} us`, `${fmt(perCallUs(d1, 'node'), 1)} us`, 'node per direct call');
      goals.info(`${c.method}: on undici, server CPU per call at 1 conn`, `${fmt(perCallUs(u1, 'server'), 1)} us`, `${fmt(perCallUs(s1, 'server'), 1)} us`, `${fmt(perCallUs(u1, 'server') / perCallUs(s1, 'server'))}x ours`);
      if (!clean || d1.errors > 0 || s1.errors > 0) goals.notes.push(`${c.method}: errors during the load runs (see the tables); its goal is not judged.`);
      if (u.errors > 0 || u1.errors > 0) goals.notes.push(`${c.method}: errors during the runs on undici (see the tables).`);
      const perCall = serverNodeCalls / serverRequests;
      const others = Object.entries(otherNodeCalls).map(([path, n]) => `${n} ${path}`).join(', ');
      const p50s = (rounds: ReadonlyArray<MeasuredLoad<string>>) => rounds.map((r) => fmt(r.p50, 2)).join(', ');
      goals.notes.push(
        `${c.method}: the servers made ${fmt(perCall, 3)} node call(s) (${c.nodePath}) per JSON-RPC call over ${fmtInt(serverRequests)} calls` +
          (others ? `, plus ${others} (health checks)` : '') +
          `; p50 by round: direct ${p50s(direct!)} ms, server ${p50s(served!)} ms, on undici ${p50s(servedUndici!)} ms.`,
      );
      if (Math.abs(perCall - 1) > 0.01) goals.notes.push(`${c.method}: expected one node call per JSON-RPC call (failover or retries happened?).`);
      for (const [label, m] of [['direct', d], ['server', s], ['on undici', u], ['direct 1 conn', d1], ['server 1 conn', s1], ['on undici 1 conn', u1]] as const) {
        if (m.cpu.other > NOISY_OTHER_CPU) goals.notes.push(`${c.method} ${label}: ${fmt(m.cpu.other, 0)}% of a core went to other work during the runs; their numbers are disturbed.`);
      }
    }
    goals.notes.push(
      `at ${CONNECTIONS} connections each side is a closed loop on ${cpus().length} shared cores: p50 is mostly queueing (connections / throughput), so the added p50 there ` +
        'follows the throughput ratio; the 1-connection rows show the hop itself (JSON-RPC parse, the rpc-session machine, one keep-alive request to the node, the answer).',
    );
  } finally {
    say();
    say(table(LOAD_HEADER, [...table32, ...table1]));
    say();
    const memory = memoryOf(server.process.pid);
    if (memory) say(`console server after the runs: peak RSS (VmHWM) ${fmt(memory.peakMiB, 1)} MiB, current RSS ${fmt(memory.rssMiB, 1)} MiB`);
    say();
    const undiciMemory = memoryOf(onUndici.process.pid);
    if (undiciMemory) say(`console server on undici: peak RSS (VmHWM) ${fmt(undiciMemory.peakMiB, 1)} MiB, current RSS ${fmt(undiciMemory.rssMiB, 1)} MiB`);
    say();
    await server.process.stop();
    await onUndici.process.stop();
    await node.process.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. signing

interface SendPayload {
  readonly address: string;
  /** As a client sends it: sats, or a decimal amount with `ADM`. */
  readonly amount: string;
}

function sendPayloads(count: number, random: () => number): SendPayload[] {
  return Array.from({ length: count }, () => {
    const address = randomAddress(random);
    const amount =
      random() < 0.5
        ? String(1 + Math.floor(random() * 1e12))
        : `${Math.floor(random() * 1e6)}.${String(Math.floor(random() * 1e8)).padStart(8, '0').slice(0, 1 + Math.floor(random() * 8))}ADM`;
    return { address, amount };
  });
}

/** The console's signing step for one sendTokens payload, as src/console/send-methods.ts does it with the keys. */
function signPayload(payload: SendPayload, keys: KeyPair, timestamp: number): PostedTransaction {
  if (!ADDRESS_PATTERN.test(payload.address)) throw new Error(`not an address: ${payload.address}`);
  const amount = parseAmount(payload.amount);
  return signedTransaction({ type: 0, timestamp, senderPublicKey: keys.publicKey.toString('hex'), recipientId: payload.address, amount, asset: {} }, keys);
}

const rate = (count: number, ns: bigint) => count / (Number(ns) / 1e9);

async function benchSigning(): Promise<void> {
  say(
    `== 2. signing: sendTokens (type 0) payloads with random recipients and amounts; ${SIGN_ROUNDS} interleaved rounds of ${fmtInt(SIGN_TRANSACTIONS)} ` +
      `(after ${fmtInt(SIGN_WARMUP)} warm-up) against raw node:crypto Ed25519 over the same digests; @noble/curves on ${fmtInt(NOBLE_TRANSACTIONS)}; ` +
      `the whole method (keys from the passphrase per call) on ${fmtInt(METHOD_CALLS)}`,
  );
  const keys = keyPairFromPassphrase(MNEMONIC);
  const seed = keys.privateKey.subarray(0, 32);
  const timestamp = adamantTime(Date.now());
  const payloads = sendPayloads(SIGN_WARMUP + SIGN_TRANSACTIONS, prng(SEED + 1));
  // The baseline's input, prepared outside its timing: SHA-256 of the very bytes the console signs.
  const transactions: UnsignedTransaction[] = payloads.map((p) => ({ type: 0, timestamp, senderPublicKey: keys.publicKey.toString('hex'), recipientId: p.address, amount: parseAmount(p.amount), asset: {} }));
  const digests = transactions.map((tx) => createHash('sha256').update(transactionBytes(tx)).digest());

  const oursRates: number[] = [];
  const floorRates: number[] = [];
  let ours: PostedTransaction[] = [];
  let floor: Buffer[] = [];
  const runOurs = () => {
    const out: PostedTransaction[] = new Array(SIGN_TRANSACTIONS);
    for (let i = 0; i < SIGN_WARMUP; i++) signPayload(payloads[i]!, keys, timestamp);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < SIGN_TRANSACTIONS; i++) out[i] = signPayload(payloads[SIGN_WARMUP + i]!, keys, timestamp);
    oursRates.push(rate(SIGN_TRANSACTIONS, process.hrtime.bigint() - t0));
    ours = out;
  };
  const runFloor = () => {
    const out: Buffer[] = new Array(SIGN_TRANSACTIONS);
    for (let i = 0; i < SIGN_WARMUP; i++) sign(null, digests[i]!, keys.signingKey);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < SIGN_TRANSACTIONS; i++) out[i] = sign(null, digests[SIGN_WARMUP + i]!, keys.signingKey);
    floorRates.push(rate(SIGN_TRANSACTIONS, process.hrtime.bigint() - t0));
    floor = out;
  };
  for (let round = 0; round < SIGN_ROUNDS; round++) {
    if (round % 2 === 0) {
      runOurs();
      runFloor();
    } else {
      runFloor();
      runOurs();
    }
  }
  // Same key, same digests: Ed25519 is deterministic, so every signature must be the baseline's.
  for (let i = 0; i < SIGN_TRANSACTIONS; i++) {
    if (ours[i]!.signature !== floor[i]!.toString('hex')) throw new InvalidRunError(`transaction ${i}: the console's signature differs from node:crypto's over the same digest`);
  }
  for (let i = 0; i < SIGN_TRANSACTIONS; i += 97) {
    if (!verifyTransaction(ours[i]!, ours[i]!.signature)) throw new InvalidRunError(`transaction ${i}: the signature does not verify`);
  }

  // @noble/curves: pure-JS Ed25519 over the same digests (a reference, not the baseline).
  const nobleDigests = digests.slice(SIGN_WARMUP, SIGN_WARMUP + NOBLE_TRANSACTIONS);
  for (let i = 0; i < 50; i++) ed25519.sign(digests[i]!, seed);
  const n0 = process.hrtime.bigint();
  const noble = nobleDigests.map((digest) => ed25519.sign(digest, seed));
  const nobleRate = rate(NOBLE_TRANSACTIONS, process.hrtime.bigint() - n0);
  for (let i = 0; i < NOBLE_TRANSACTIONS; i++) {
    if (Buffer.from(noble[i]!).toString('hex') !== ours[i]!.signature) throw new InvalidRunError(`transaction ${i}: @noble/curves' signature differs from the console's`);
  }

  // The whole sendTokens method with a stub node client: what one JSON-RPC sendTokens costs before the node post.
  let posted: PostedTransaction | undefined;
  const stub: AdamantNodeClient = {
    get: () => Promise.reject(new Error('no GET expected')),
    post: <T>(_path: string, body: unknown) => {
      posted = (body as { transaction: PostedTransaction }).transaction;
      return Promise.resolve({ success: true, nodeTimestamp: 1, transactionId: '1' } as T);
    },
  };
  const sendTokens = sendMethods({ node: stub, clock: systemClock, defaultPassphrase: undefined }).get('sendTokens')!;
  const signal = new AbortController().signal;
  const methodPayloads = payloads.slice(0, METHOD_WARMUP + METHOD_CALLS);
  const callMethod = (i: number) => sendTokens.call({ ...methodPayloads[i]!, passphrase: MNEMONIC }, signal);
  for (let i = 0; i < METHOD_WARMUP; i++) await callMethod(i);
  // The crypto alone, one call after the other: PBKDF2 (node:crypto, synchronous), SHA-256, the Ed25519 key from the
  // seed (node:crypto's cheapest import, a JWK: the x it asks for is not used), the signature.
  const passphraseBytes = Buffer.from(MNEMONIC.normalize('NFKD'), 'utf8');
  const anyX = Buffer.alloc(32).toString('base64url');
  const cryptoAlone = () => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < METHOD_CALLS; i++) {
      const seed = createHash('sha256').update(pbkdf2Sync(passphraseBytes, 'mnemonic', 2048, 64, 'sha512')).digest();
      const key = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: anyX }, format: 'jwk' });
      sign(null, digests[i]!, key);
    }
    return rate(METHOD_CALLS, process.hrtime.bigint() - t0);
  };
  // The method one call after the other (PBKDF2 runs on libuv's thread pool, so the event loop serves meanwhile).
  const methodAlone = async () => {
    const t0 = process.hrtime.bigint();
    for (let i = METHOD_WARMUP; i < methodPayloads.length; i++) await callMethod(i);
    return rate(METHOD_CALLS, process.hrtime.bigint() - t0);
  };
  const cryptoRates: number[] = [];
  const methodRates: number[] = [];
  for (let round = 0; round < SIGN_ROUNDS; round++) {
    if (round % 2 === 0) cryptoRates.push(cryptoAlone()), methodRates.push(await methodAlone());
    else methodRates.push(await methodAlone()), cryptoRates.push(cryptoAlone());
  }
  const cryptoRate = median(cryptoRates);
  const methodRate = median(methodRates);
  const last = methodPayloads.at(-1)!;
  if (posted === undefined || posted.recipientId !== last.address || posted.amount !== parseAmount(last.amount) || !verifyTransaction(posted, posted.signature)) {
    throw new InvalidRunError('the sendTokens method did not post the last payload as a verifiable transaction');
  }
  // Then METHOD_CONCURRENCY calls at a time.
  let next = METHOD_WARMUP;
  const p0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: METHOD_CONCURRENCY }, async () => {
      while (next < methodPayloads.length) await callMethod(next++);
    }),
  );
  const concurrentRate = rate(METHOD_CALLS, process.hrtime.bigint() - p0);

  const oursRate = median(oursRates);
  const floorRate = median(floorRates);
  say(
    table(
      ['signer', 'tx/s', 'us/tx', 'tx/s by round'],
      [
        ['console: parse + signedTransaction (node:crypto Ed25519)', fmtInt(oursRate), fmt(1e6 / oursRate, 1), oursRates.map(fmtInt).join(', ')],
        ['baseline: node:crypto sign(digest) only', fmtInt(floorRate), fmt(1e6 / floorRate, 1), floorRates.map(fmtInt).join(', ')],
        ['reference: @noble/curves ed25519.sign(digest)', fmtInt(nobleRate), fmt(1e6 / nobleRate, 1), fmtInt(nobleRate)],
        ['crypto alone: PBKDF2 + SHA-256 + Ed25519 key + sign, sequential', fmtInt(cryptoRate), fmt(1e6 / cryptoRate, 1), cryptoRates.map(fmtInt).join(', ')],
        ['console: sendTokens method, keys from passphrase per call', fmtInt(methodRate), fmt(1e6 / methodRate, 1), methodRates.map(fmtInt).join(', ')],
        [`console: the same, ${METHOD_CONCURRENCY} calls at a time`, fmtInt(concurrentRate), fmt(1e6 / concurrentRate, 1), fmtInt(concurrentRate)],
      ],
    ),
  );
  say(`signatures: all ${fmtInt(SIGN_TRANSACTIONS)} equal to the baseline's, the first ${fmtInt(NOBLE_TRANSACTIONS)} to @noble/curves', every 97th verified`);
  say();
  goals.info('sendTokens signing, tx/s (console vs raw Ed25519 sign)', fmtInt(oursRate), fmtInt(floorRate), `${fmt(oursRate / floorRate)}x`);
  goals.info('sendTokens signing, tx/s (console vs @noble/curves)', fmtInt(oursRate), fmtInt(nobleRate), `${fmt(oursRate / nobleRate)}x`);
  const methodVsCrypto = methodRate / cryptoRate;
  goals.judge('sendTokens method with keys per call vs the crypto alone, calls/s', fmtInt(methodRate), fmtInt(cryptoRate), `${fmt(methodVsCrypto)}x`, `>= ${GOAL_METHOD_VS_CRYPTO}x`, methodVsCrypto >= GOAL_METHOD_VS_CRYPTO);
  goals.info(`sendTokens method with keys per call, ${METHOD_CONCURRENCY} at a time, calls/s`, fmtInt(concurrentRate), fmtInt(methodRate), `${fmt(concurrentRate / methodRate)}x`);
  goals.notes.push(
    `signing: the console's step costs ${fmt(1e6 / oursRate - 1e6 / floorRate, 1)} us/tx above the raw signature (${fmt(1e6 / floorRate, 1)} us): ` +
      `amount parsing, the 53-byte head, SHA-256, hex; a sendTokens call also derives the keys (PBKDF2-HMAC-SHA512, 2,048 rounds): ` +
      `${fmt(1e6 / methodRate, 0)} us a call in all.`,
  );
}

// ---------------------------------------------------------------------------------------------

export async function runConsoleBench(options: BenchOptions): Promise<void> {
  const run = (section: (typeof CONSOLE_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  goals.begin('console benchmark');
  const dir = makeScratchDir('adm-bench-console');
  try {
    if (run('rpc')) await goals.section('rpc', () => benchRpc(dir));
    if (run('signing')) await goals.section('signing', () => benchSigning());
    goals.print();
    goals.throwIfFailed();
  } finally {
    terminateLoadWorkers();
    await stopAllTracked();
    removeScratchDirs();
  }
}
