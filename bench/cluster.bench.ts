// `npm run bench -- cluster`: the files node as a cluster, each goal against a baseline measured in the same run.
//
// Three nodes A, B, C on 127.0.0.1: the built CLI (`adm-infra files`) as three processes, each with its own HOME
// (store in <HOME>/.adm-ipfs), HTTP port and libp2p port, and ONE shared `nodes` list naming all three. Peer ids
// come from a first boot of each HOME (started with `nodes: []`, `peerId` read from GET /api/node/details, stopped
// with SIGTERM; the identity stays in the store folder, notes E). Placement: 3 copies of every fresh file, so every
// node holds everything; scheduled repair and collection are far away (the bench triggers repair itself).
//
// 1. upload: a 64 MiB file POSTed to A (3 copies: A imports, B and C fetch and pin it before A answers) against
//            the same bytes POSTed to a fourth node D with `replication.enabled: false` (its own HOME too), 3
//            rounds of distinct files, order alternating. A's answer must report `acknowledged: 3` (else the run
//            is invalid) and both sides must give the same CID. Goal: replicated <= 2x the single-copy time.
// 2. repair: C stopped (SIGTERM); 1,000 distinct 1 KiB files uploaded to A from 16 clients (each acknowledged
//            by A and B: 2); C started again; once A is peered with C, POST /api/storage/repair (one batch of 100
//            records each) is called on A until a call completes its cycle with `cycle.stillMissing` 0. Copies
//            placed per second = copies C received / elapsed; checked on C (storage metrics `files.confirmed`, and
//            the status of sampled CIDs). No goal: printed next to the rate at which the same uploads placed their
//            copies on B, for scale.
//
// The data comes from a seeded PRNG (support/files-node.ts), so every run moves the same bytes.

import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchOptions } from './run.js';
import {
  concurrently,
  freePort,
  LOOPBACK,
  MIB,
  NODE_READY_TIMEOUT_MS,
  POLYFILL,
  nowMs,
  rawCid,
  seededBytes,
  sleep,
  startFilesNodeProcess,
  uploadFile,
  type FilesNodeProcess,
  type UploadAnswer,
} from './support/files-node.js';
import { GoalReport, InvalidRunError } from './support/goals.js';
import { cpuSecondsOf, memoryOf, spawnTracked, stopAllTracked, type ManagedProcess } from './support/processes.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, summarizeMs, table } from './support/stats.js';

export const CLUSTER_SECTIONS = ['upload', 'repair'] as const;

// Goals (issue 29, item 4: "bring it to at most 2.5x").
const GOAL_REPLICATED_UPLOAD_RATIO = 2.5;

const COPIES = 3;
const UPLOAD_SIZE = 64 * MIB;
const UPLOAD_ROUNDS = 3;
const REPAIR_FILES = 1_000;
const REPAIR_FILE_SIZE = 1_024;
const REPAIR_CLIENTS = 16;
/** CIDs whose status is read on C after the repair (evenly spread over the 1,000). */
const REPAIR_SAMPLE = 50;
/** A 409 from POST /api/storage/repair (a batch or cycle in progress): wait this long and ask again. */
const REPAIR_BUSY_RETRY_MS = 200;
const REPAIR_TIMEOUT_MS = 150_000;
const PEERING_TIMEOUT_MS = 30_000;
const METRICS_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 20_000;
const UPLOAD_SEED_BASE = 1;
const REPAIR_SEED_BASE = 200_000;
const WARMUP_SEED = 999_999;
const WARMUP_SIZE = 3 * MIB + 123;
/** Never fires during a run (1 January, midnight). */
const FAR_AWAY = '0 0 0 1 1 *';

const say = (text = ''): void => void process.stdout.write(`${text}\n`);
const median = (values: readonly number[]): number => summarizeMs(values).p50;
const seconds = (ms: number) => `${fmt(ms / 1000, 2)} s`;
const mibPerSecond = (bytes: number, ms: number) => `${fmt(bytes / MIB / (ms / 1000), 1)} MiB/s`;

// ---------------------------------------------------------------------------------------------
// Configuration of the nodes.

interface Member {
  readonly name: string;
  readonly home: string;
  readonly serverPort: number;
  readonly p2pPort: number;
  peerId: string;
}

type NodeList = ReadonlyArray<{ name: string; multiAddr: string }>;

const multiAddrOf = (member: Member) => `/ip4/${LOOPBACK}/tcp/${member.p2pPort}/p2p/${member.peerId}`;

/** Everything but `nodes` and `replication` is the same for the cluster members and the single-copy baseline. */
function nodeConfig(member: Member, adminApiKey: string, nodes: NodeList, replication: Record<string, unknown>): Record<string, unknown> & { serverPort: number } {
  return {
    nodes,
    storeFolder: '.adm-ipfs',
    // Request logs are info lines: at warn the nodes spend nothing on logging during the measurements.
    logLevel: 'warn',
    serverPort: member.serverPort,
    peerDiscovery: { listen: [`/ip4/${LOOPBACK}/tcp/${member.p2pPort}`], bootstrap: [] },
    peeringSchedule: '*/2 * * * * *',
    // Storage metrics (files.confirmed, read to verify the repair) refresh on this scan.
    diskUsageScanPeriod: '*/2 * * * * *',
    adminApiKey,
    maxFileCount: 10,
    // Room for the 64 MiB file; the request limit adds room for the multipart framing.
    uploadLimitSizeBytes: 80 * MIB,
    findFileTimeout: 20_000,
    cors: { allowedOrigins: ['*'] },
    // Limits high enough that no measured request is refused: the bench measures work, not policy.
    rateLimits: {
      upload: { windowMs: 60_000, limit: 100_000 },
      read: { windowMs: 60_000, limit: 100_000 },
    },
    storage: {
      maxRequestSizeBytes: 96 * MIB,
      // 64 upload slots give 16 incoming-copy slots (a quarter): the 16 concurrent small uploads to A never find
      // B busy, so every one is acknowledged by B.
      maxConcurrentUploads: 64,
      // The four stores share one disk: no reserve, so a nearly full disk still runs.
      diskReserveBytes: 0,
      gc: { schedule: FAR_AWAY },
    },
    replication,
    health: { requiredPeerCount: 0 },
  };
}

const CLUSTER_REPLICATION = {
  placement: [{ minAgeMs: 0, copies: COPIES }],
  ackQuorum: 1,
  repairSchedule: FAR_AWAY,
};

// ---------------------------------------------------------------------------------------------
// Admin calls.

interface NodeHandle {
  readonly member: Member;
  readonly label: string;
  readonly key: string;
  node: FilesNodeProcess;
}

async function call(handle: NodeHandle, method: 'GET' | 'POST', path: string, timeoutMs = 30_000): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`http://${LOOPBACK}:${handle.node.port}${path}`, {
    method,
    headers: { 'x-api-key': handle.key },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** Polls `check` every 200 ms until it returns a value other than undefined; throws after `timeoutMs`. */
async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? ` (last error: ${last})` : ''}`);
    await sleep(200);
  }
}

async function peersOf(handle: NodeHandle): Promise<string[]> {
  const { status, body, text } = await call(handle, 'GET', '/api/p2p/peers');
  if (status !== 200 || !Array.isArray(body?.peers)) throw new Error(`GET /api/p2p/peers on ${handle.label} answered ${status}: ${text.slice(0, 200)}`);
  return body.peers as string[];
}

/** Waits until `handle` lists every one of `peers` among its connected peers. */
async function peered(handle: NodeHandle, peers: readonly NodeHandle[]): Promise<number> {
  const started = Date.now();
  await eventually(`${handle.label} to be connected to ${peers.map((p) => p.label).join(' and ')}`, PEERING_TIMEOUT_MS, async () => {
    const list = await peersOf(handle);
    return peers.every((peer) => list.includes(peer.member.peerId)) ? true : undefined;
  });
  return Date.now() - started;
}

async function confirmedFiles(handle: NodeHandle): Promise<{ confirmed: number; measuredAt: number | null }> {
  const { status, body, text } = await call(handle, 'GET', '/api/storage/metrics');
  if (status !== 200) throw new Error(`GET /api/storage/metrics on ${handle.label} answered ${status}: ${text.slice(0, 200)}`);
  return { confirmed: Number(body?.files?.confirmed), measuredAt: typeof body?.measuredAt === 'number' ? body.measuredAt : null };
}

/** The acknowledged count of an upload's first file (`files[0].replication.acknowledged`). */
function acknowledgedOf(answer: UploadAnswer): number | undefined {
  const value = (answer.json as { files?: Array<{ replication?: { acknowledged?: unknown } }> } | undefined)?.files?.[0]?.replication?.acknowledged;
  return typeof value === 'number' ? value : undefined;
}

// ---------------------------------------------------------------------------------------------
// Starting the nodes.

function planMember(name: string, prefix: string): Promise<Member> {
  return (async () => ({ name, home: makeScratchDir(prefix), serverPort: await freePort(), p2pPort: await freePort(), peerId: '' }))();
}

/**
 * First boot of a HOME with `nodes: []`: creates the store and its libp2p identity, reads the peer id from
 * GET /api/node/details, then stops the node with SIGTERM. The next start on that HOME keeps the identity.
 */
async function firstBoot(member: Member, key: string): Promise<string> {
  const label = `node ${member.name} (first boot)`;
  const node = await startFilesNodeProcess(member.home, nodeConfig(member, key, [], CLUSTER_REPLICATION), { label });
  const handle: NodeHandle = { member, label, key, node };
  try {
    const peerId = await eventually(`the peer id of ${label}`, NODE_READY_TIMEOUT_MS, async () => {
      const { status, body } = await call(handle, 'GET', '/api/node/details');
      return status === 200 && typeof body?.peerId === 'string' && body.peerId !== '' ? (body.peerId as string) : undefined;
    });
    return peerId;
  } finally {
    await node.process.stop(STOP_TIMEOUT_MS);
    const code = node.process.child.exitCode;
    if (code !== 0) say(`note: ${label} exited with ${code ?? node.process.child.signalCode} after SIGTERM`);
  }
}

async function startMember(member: Member, key: string, nodes: NodeList, replication: Record<string, unknown>, label: string): Promise<NodeHandle> {
  const node = await startFilesNodeProcess(member.home, nodeConfig(member, key, nodes, replication), { label });
  return { member, label, key, node };
}

/**
 * A first upload, retried while the node finishes starting (GET / answers before every actor is up); it also
 * warms the upload path (and, on A, the replication protocol on both peers) so the first measured request does
 * not pay for lazy setup. Succeeds once the answer is 200 with `acknowledged` of at least `copies`.
 */
async function warmUp(handle: NodeHandle, agent: Agent, copies: number): Promise<UploadAnswer> {
  const chunks = [...seededBytes(WARMUP_SEED, WARMUP_SIZE)];
  const deadline = Date.now() + NODE_READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    const answer = await uploadFile(handle.node.port, agent, 'warmup.bin', chunks, WARMUP_SIZE);
    if (answer.status === 200 && answer.cid !== undefined && (acknowledgedOf(answer) ?? 0) >= copies) return answer;
    last = `answered ${answer.status}, acknowledged ${acknowledgedOf(answer)}: ${answer.body.slice(0, 300)}`;
    await sleep(500);
  }
  throw new Error(`${handle.label} did not accept a warm-up upload with ${copies} cop${copies === 1 ? 'y' : 'ies'} within ${NODE_READY_TIMEOUT_MS} ms (${last}):\n${handle.node.process.tail()}`);
}

// ---------------------------------------------------------------------------------------------
// Results and goals.

const goals = new GoalReport();

// ---------------------------------------------------------------------------------------------
// The cluster.

interface Cluster {
  readonly a: NodeHandle;
  readonly b: NodeHandle;
  c: NodeHandle;
  readonly nodes: NodeList;
}

/** CPU seconds of each node so far (undefined where /proc could not be read). */
const cpuOf = (handles: readonly NodeHandle[]): Array<number | undefined> => handles.map((handle) => cpuSecondsOf(handle.node.process.pid));

/** Each node's CPU over a measurement per MiB uploaded, `A / B / C` (ms/MiB). */
const cpuPerMib = (before: ReadonlyArray<number | undefined>, after: ReadonlyArray<number | undefined>): number[] =>
  before.map((start, index) => {
    const end = after[index];
    return start === undefined || end === undefined ? Number.NaN : ((end - start) * 1000) / (UPLOAD_SIZE / MIB);
  });
const cpuCell = (perMib: readonly number[]): string => perMib.map((value) => (Number.isNaN(value) ? '-' : fmt(value, 1))).join(' / ');
const CPU_COLUMN = 'node CPU ms/MiB (A / B / C)';

// ---------------------------------------------------------------------------------------------
// 1. Upload of 64 MiB: 3 copies against 1.

async function benchUpload(cluster: Cluster, single: NodeHandle, agent: Agent): Promise<void> {
  say(
    `== 1. upload: ${UPLOAD_SIZE / MIB} MiB POSTed to A with ${COPIES} copies (B and C fetch and pin before A answers) vs the same bytes to a node with replication off, ` +
      `${UPLOAD_ROUNDS} rounds of distinct files (order alternates)`,
  );
  const members = [cluster.a, cluster.b, cluster.c];
  const lines: string[][] = [];
  const replicatedMs: number[] = [];
  const singleMs: number[] = [];
  const replicatedCpu: number[][] = [];
  const singleCpu: number[][] = [];
  for (let round = 0; round < UPLOAD_ROUNDS; round++) {
    const seed = UPLOAD_SEED_BASE + round;
    const runSingle = async () => {
      const cpuBefore = cpuOf([single]);
      const answer = await uploadFile(single.node.port, agent, `bench-${seed}.bin`, seededBytes(seed, UPLOAD_SIZE), UPLOAD_SIZE);
      const cpu = cpuPerMib(cpuBefore, cpuOf([single]));
      if (answer.status !== 200 || answer.cid === undefined) throw new Error(`upload to the single-copy node answered ${answer.status}: ${answer.body.slice(0, 500)}`);
      singleMs.push(answer.ms);
      singleCpu.push(cpu);
      lines.push([`round ${round + 1}`, 'baseline: 1 copy (replication off)', seconds(answer.ms), mibPerSecond(UPLOAD_SIZE, answer.ms), String(acknowledgedOf(answer) ?? '-'), cpuCell(cpu), answer.cid]);
      return answer;
    };
    const runReplicated = async () => {
      const cpuBefore = cpuOf(members);
      const answer = await uploadFile(cluster.a.node.port, agent, `bench-${seed}.bin`, seededBytes(seed, UPLOAD_SIZE), UPLOAD_SIZE);
      const cpu = cpuPerMib(cpuBefore, cpuOf(members));
      if (answer.status !== 200 || answer.cid === undefined) throw new Error(`upload to A answered ${answer.status}: ${answer.body.slice(0, 500)}`);
      const acknowledged = acknowledgedOf(answer);
      lines.push([`round ${round + 1}`, `A, ${COPIES} copies`, seconds(answer.ms), mibPerSecond(UPLOAD_SIZE, answer.ms), String(acknowledged ?? '-'), cpuCell(cpu), answer.cid]);
      if (acknowledged !== COPIES) {
        say(table(['round', 'side', 'time', 'throughput', 'acknowledged', CPU_COLUMN, 'CID'], lines));
        throw new InvalidRunError(
          `round ${round + 1}: A answered acknowledged ${acknowledged}, not ${COPIES}: the replicated upload did not place every copy, so its time is no result ` +
            `(replication report: ${JSON.stringify((answer.json as { files?: Array<{ replication?: unknown }> })?.files?.[0]?.replication)})`,
        );
      }
      replicatedMs.push(answer.ms);
      replicatedCpu.push(cpu);
      return answer;
    };
    let one: UploadAnswer;
    let three: UploadAnswer;
    if (round % 2 === 0) {
      one = await runSingle();
      three = await runReplicated();
    } else {
      three = await runReplicated();
      one = await runSingle();
    }
    if (one.cid !== three.cid) throw new Error(`round ${round + 1}: A stored CID ${three.cid}, the single-copy node ${one.cid}: not the same bytes or importer settings`);
  }
  say();
  say(table(['round', 'side', 'time', 'throughput', 'acknowledged', CPU_COLUMN, 'CID'], lines));
  const medianOf = (rows: number[][], index: number) => median(rows.map((row) => row[index]!).filter((value) => !Number.isNaN(value)));
  say(
    `node CPU per MiB uploaded (medians): single-copy node ${fmt(medianOf(singleCpu, 0), 1)}; ` +
      `A ${fmt(medianOf(replicatedCpu, 0), 1)}, B ${fmt(medianOf(replicatedCpu, 1), 1)}, C ${fmt(medianOf(replicatedCpu, 2), 1)} ms/MiB`,
  );
  say();
  const replicated = median(replicatedMs);
  const base = median(singleMs);
  const ratio = replicated / base;
  say(`median: ${COPIES} copies ${seconds(replicated)}, 1 copy ${seconds(base)}, ratio ${fmt(ratio)}x; every replicated answer acknowledged ${COPIES}, same CID on both sides in every round`);
  say(`RSS after the uploads: A ${fmt(memoryOf(cluster.a.node.process.pid)?.rssMiB ?? NaN, 1)} MiB, B ${fmt(memoryOf(cluster.b.node.process.pid)?.rssMiB ?? NaN, 1)} MiB, C ${fmt(memoryOf(cluster.c.node.process.pid)?.rssMiB ?? NaN, 1)} MiB, single-copy node ${fmt(memoryOf(single.node.process.pid)?.rssMiB ?? NaN, 1)} MiB`);
  say();
  goals.judge(
    `upload ${UPLOAD_SIZE / MIB} MiB, ${COPIES} copies / 1 copy (median of ${UPLOAD_ROUNDS})`,
    seconds(replicated),
    seconds(base),
    `${fmt(ratio)}x`,
    `<= ${GOAL_REPLICATED_UPLOAD_RATIO}x`,
    ratio <= GOAL_REPLICATED_UPLOAD_RATIO,
  );
  await benchTransportFloor(medianOf(singleCpu, 0), base);
}

// ---------------------------------------------------------------------------------------------
// 1b. The transport floor: one copy's bytes over the nodes' libp2p stack with nothing of the node around it.

const FLOOR_SCRIPT = fileURLToPath(new URL('./support/transport-floor.js', import.meta.url));
const FLOOR_TIMEOUT_MS = 120_000;

/** The first line `child` prints (its listen address or its report), or an error once it exits or times out. */
function firstLine(child: ManagedProcess, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${FLOOR_TIMEOUT_MS} ms:\n${child.tail()}`)), FLOOR_TIMEOUT_MS);
    child.child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const end = text.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        resolve(text.slice(0, end));
      }
    });
    child.child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`${what} exited before it answered:\n${child.tail()}`));
    });
  });
}

const startFloorProcess = (name: string, args: readonly string[]) => spawnTracked(name, process.execPath, ['--import', POLYFILL, FLOOR_SCRIPT, ...args], { ipc: true });

/**
 * Two copies of the upload's bytes pulled at once from one serving process, as B and C pull from A, over the same
 * stack (bench/support/transport-floor.ts: the receivers hash and write every block and do nothing else). With the
 * single-copy node's import CPU, that is the least CPU a replicated upload of 3 copies needs; spread over every core
 * of the machine, it is the least time it can take, printed as the lowest ratio the goal's measurement could show
 * here. The client's own CPU is not counted, so the real floor is higher.
 */
async function benchTransportFloor(singleCpuPerMib: number, singleMs: number): Promise<void> {
  const blocksDir = makeScratchDir('adm-bench-floor-blocks');
  let block = 0;
  for (const piece of seededBytes(UPLOAD_SEED_BASE, UPLOAD_SIZE)) {
    for (let offset = 0; offset < piece.byteLength; offset += MIB) writeFileSync(join(blocksDir, `${String(block++).padStart(6, '0')}.data`), piece.subarray(offset, offset + MIB));
  }
  const server = startFloorProcess('floor-server', ['serve', blocksDir]);
  try {
    const address = await firstLine(server, 'the transport floor server');
    const rows: string[][] = [];
    const sender: number[] = [];
    const receivers: number[][] = [[], []];
    for (let round = 0; round < UPLOAD_ROUNDS; round++) {
      const serverBefore = cpuSecondsOf(server.pid);
      const reports = await Promise.all(
        receivers.map(async (_, index) => {
          const puller = startFloorProcess(`floor-pull-${index}`, ['pull', address, makeScratchDir('adm-bench-floor-copy')]);
          return JSON.parse(await firstLine(puller, 'a transport floor pull')) as { bytes: number; wallMs: number; cpuMs: number };
        }),
      );
      const serverAfter = cpuSecondsOf(server.pid);
      if (reports.some((report) => report.bytes !== UPLOAD_SIZE)) throw new Error(`a floor pull received ${reports.map((report) => report.bytes).join(' and ')} bytes, not ${UPLOAD_SIZE}`);
      const serverPerMib = serverBefore === undefined || serverAfter === undefined ? Number.NaN : ((serverAfter - serverBefore) * 1000) / (UPLOAD_SIZE / MIB);
      const receiverPerMib = reports.map((report) => report.cpuMs / (UPLOAD_SIZE / MIB));
      sender.push(serverPerMib);
      receiverPerMib.forEach((perMib, index) => receivers[index]!.push(perMib));
      rows.push([`round ${round + 1}`, seconds(Math.max(...reports.map((report) => report.wallMs))), cpuCell([serverPerMib, ...receiverPerMib])]);
    }
    say(`transport floor: ${UPLOAD_SIZE / MIB} MiB pulled twice at once from one process over the nodes' stack (TCP + noise + yamux), each receiver hashing and writing every 1 MiB block, nothing else`);
    say(table(['round', 'both copies', 'CPU ms/MiB (sender / receiver 1 / receiver 2)'], rows));
    const floorPerMib = singleCpuPerMib + median(sender) + median(receivers[0]!) + median(receivers[1]!);
    const floorMs = (floorPerMib * (UPLOAD_SIZE / MIB)) / cpus().length;
    say(
      `least CPU for ${COPIES} copies: the single node's import ${fmt(singleCpuPerMib, 1)} + sender ${fmt(median(sender), 1)} + receivers ${fmt(median(receivers[0]!), 1)} and ${fmt(median(receivers[1]!), 1)} ` +
        `= ${fmt(floorPerMib, 1)} ms/MiB; on ${cpus().length} cores that is ${seconds(floorMs)} at best, ${fmt(floorMs / singleMs)}x of the single copy (the client's CPU not counted)`,
    );
    say();
    goals.info(`transport floor of the ratio on ${cpus().length} cores (the stack alone, CPU-bound)`, seconds(floorMs), seconds(singleMs), `${fmt(floorMs / singleMs)}x`);
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Repair after a node rejoins.

interface RepairBatchLine {
  readonly report: any;
  readonly ms: number;
  readonly busyRetries: number;
}

async function benchRepair(cluster: Cluster, options: { adminKey: string; replication: Record<string, unknown> }): Promise<void> {
  say(
    `== 2. repair: C stopped, ${fmtInt(REPAIR_FILES)} distinct ${REPAIR_FILE_SIZE / 1024} KiB files uploaded to A (${REPAIR_CLIENTS} clients), C started again, ` +
      'then POST /api/storage/repair on A until a cycle completes with nothing missing',
  );
  const { a, b } = cluster;

  // C leaves.
  const stopStarted = Date.now();
  await cluster.c.node.process.stop(STOP_TIMEOUT_MS);
  const cExit = cluster.c.node.process.child.exitCode ?? cluster.c.node.process.child.signalCode;
  say(`C stopped with SIGTERM in ${Date.now() - stopStarted} ms (exit ${cExit})`);
  await eventually('A to drop its connection to C', PEERING_TIMEOUT_MS, async () => ((await peersOf(a)).includes(cluster.c.member.peerId) ? undefined : true));

  // 1,000 files that only A and B hold.
  const files = Array.from({ length: REPAIR_FILES }, (_, i) => seededBytes(REPAIR_SEED_BASE + i, REPAIR_FILE_SIZE).next().value as Uint8Array);
  const expected = await Promise.all(files.map(rawCid));
  if (new Set(expected).size !== REPAIR_FILES) throw new Error('the generated small files are not distinct');
  const acknowledgements = new Map<number, number>();
  const agent = new Agent({ keepAlive: true, maxSockets: REPAIR_CLIENTS });
  let uploads: { latencies: number[]; wallMs: number };
  try {
    uploads = await concurrently(REPAIR_FILES, REPAIR_CLIENTS, async (index) => {
      const answer = await uploadFile(a.node.port, agent, `repair-${index}.bin`, [files[index]!], REPAIR_FILE_SIZE);
      if (answer.status !== 200) throw new Error(`small upload ${index} to A answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      if (answer.cid !== expected[index]) throw new Error(`small upload ${index}: CID ${answer.cid}, expected ${expected[index]}`);
      const acknowledged = acknowledgedOf(answer) ?? -1;
      acknowledgements.set(acknowledged, (acknowledgements.get(acknowledged) ?? 0) + 1);
    });
  } finally {
    agent.destroy();
  }
  const ackText = [...acknowledgements.entries()].sort(([x], [y]) => x - y).map(([ack, count]) => `${fmtInt(count)} x acknowledged ${ack}`).join(', ');
  const u = summarizeMs(uploads.latencies);
  const uploadRate = (REPAIR_FILES / uploads.wallMs) * 1000;
  say(`uploads with C down: ${fmt(uploadRate, 1)} files/s, p50 ${fmt(u.p50)} ms, p99 ${fmt(u.p99)} ms; ${ackText}`);
  if (acknowledgements.get(COPIES - 1) !== REPAIR_FILES) {
    throw new InvalidRunError(`with C down every upload should be acknowledged by A and B (${COPIES - 1}); got ${ackText}: C's missing copies would not be the only repair work`);
  }

  // C rejoins.
  const restarted = Date.now();
  const c = await startMember(cluster.c.member, options.adminKey, cluster.nodes, options.replication, 'node C');
  cluster.c = c;
  const peerMs = await peered(a, [b, c]);
  say(`C started again: answering after ${c.node.startupMs} ms, A connected to it ${peerMs} ms later (${Date.now() - restarted} ms in all)`);
  // What C holds before the repair: the first metrics scan after its restart (C's startup walk and its own startup
  // repair cycle, over the files it already had, run meanwhile and are not timed). A's count is the target.
  const before = await eventually(`C's storage metrics after its restart`, METRICS_TIMEOUT_MS, async () => {
    const metrics = await confirmedFiles(c);
    return metrics.measuredAt !== null && metrics.measuredAt >= restarted ? metrics : undefined;
  });
  const target = await eventually(`A's storage metrics after the small uploads`, METRICS_TIMEOUT_MS, async () => {
    const metrics = await confirmedFiles(a);
    return metrics.measuredAt !== null && metrics.measuredAt >= restarted ? metrics : undefined;
  });
  say(`before the repair: C holds ${before.confirmed} confirmed files, A ${target.confirmed} (${fmtInt(REPAIR_FILES)} small + ${target.confirmed - REPAIR_FILES} earlier)`);

  // The repair, timed from the first POST to the answer that completes a clean cycle.
  const batches: RepairBatchLine[] = [];
  const started = nowMs();
  const deadline = started + REPAIR_TIMEOUT_MS;
  let done = false;
  let cycles = 0;
  let busyRetries = 0;
  while (!done) {
    if (nowMs() > deadline) throw new Error(`the repair did not complete a clean cycle within ${REPAIR_TIMEOUT_MS / 1000} s (${batches.length} batches)`);
    const t0 = nowMs();
    const answer = await call(a, 'POST', '/api/storage/repair', REPAIR_TIMEOUT_MS);
    if (answer.status === 409) {
      busyRetries++;
      await sleep(REPAIR_BUSY_RETRY_MS);
      continue;
    }
    if (answer.status === 404) throw new Error('POST /api/storage/repair answered 404: the route is not mounted in this build');
    if (answer.status !== 200 || typeof answer.body?.cycleCompleted !== 'boolean') throw new Error(`POST /api/storage/repair answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    const report = answer.body;
    batches.push({ report, ms: nowMs() - t0, busyRetries });
    busyRetries = 0;
    if (report.cycleCompleted) {
      cycles++;
      done = report.cycle?.stillMissing === 0 && report.cycle?.unrecoverable === 0;
    }
  }
  const elapsedMs = nowMs() - started;
  const repaired = batches.reduce((sum, line) => sum + Number(line.report.repaired ?? 0), 0);

  say();
  say(
    table(
      ['batch', 'examined', 'checked', 'under-replicated', 'repaired', 'still missing', 'unrecoverable', 'cycle completed', 'time', '409 retries before'],
      batches.map((line, i) => [
        String(i + 1),
        fmtInt(line.report.examined),
        fmtInt(line.report.checked),
        fmtInt(line.report.underReplicated),
        fmtInt(line.report.repaired),
        fmtInt(line.report.stillMissing),
        fmtInt(line.report.unrecoverable),
        line.report.cycleCompleted ? 'yes' : 'no',
        `${fmtInt(line.ms)} ms`,
        String(line.busyRetries),
      ]),
    ),
  );
  say();

  // What C received: its registry count from the next scan after the repair, and the status of sampled CIDs.
  const repairEnded = Date.now();
  const after = await eventually(`C's storage metrics after the repair`, METRICS_TIMEOUT_MS, async () => {
    const metrics = await confirmedFiles(c);
    return metrics.measuredAt !== null && metrics.measuredAt >= repairEnded ? metrics : undefined;
  });
  const received = after.confirmed - before.confirmed;
  const sample = Array.from({ length: REPAIR_SAMPLE }, (_, i) => expected[Math.floor((i * REPAIR_FILES) / REPAIR_SAMPLE)]!);
  let held = 0;
  for (const cid of sample) {
    const status = await call(c, 'GET', `/api/file/${cid}/status`);
    if (status.status === 200 && status.body?.state === 'confirmed' && status.body?.pinned === true) held++;
  }
  const rate = (received / elapsedMs) * 1000;
  const uploadPlacementRate = uploadRate; // one peer copy (on B) per upload
  say(
    `repair: ${batches.length} batches in ${cycles} cycle(s), ${seconds(elapsedMs)}; reports sum to ${fmtInt(repaired)} repaired records; ` +
      `C's files.confirmed ${before.confirmed} -> ${after.confirmed} (+${received}; A holds ${target.confirmed}); ${held}/${REPAIR_SAMPLE} sampled CIDs confirmed and pinned on C`,
  );
  say(`RSS after the repair: A ${fmt(memoryOf(a.node.process.pid)?.rssMiB ?? NaN, 1)} MiB, C ${fmt(memoryOf(c.node.process.pid)?.rssMiB ?? NaN, 1)} MiB`);
  say();
  if (after.confirmed !== target.confirmed || received < REPAIR_FILES || held !== REPAIR_SAMPLE) {
    throw new InvalidRunError(
      `after a clean repair cycle C should hold all ${target.confirmed} files of A: its metrics count ${after.confirmed} confirmed (+${received}), ${held}/${REPAIR_SAMPLE} sampled CIDs held`,
    );
  }
  goals.info(`repair: copies placed per second (${fmtInt(received)} copies to C)`, `${fmt(rate, 1)} copies/s`, `${fmt(uploadPlacementRate, 1)} copies/s`, `${fmt(rate / uploadPlacementRate)}x`);
  goals.info('repair: time to a clean cycle (baseline: the uploads)', seconds(elapsedMs), seconds(uploads.wallMs), `${fmt(elapsedMs / uploads.wallMs)}x`);
  goals.notes.push(
    `the repair rows' baseline column is the ${fmtInt(REPAIR_FILES)} uploads to A with C down (${REPAIR_CLIENTS} clients), which placed one copy each on B: ` +
      'the same number of copies of the same files, placed at upload time; repair runs one batch per call, one record after another.',
  );
}

// ---------------------------------------------------------------------------------------------

export async function runClusterBench(options: BenchOptions): Promise<void> {
  const run = (section: (typeof CLUSTER_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  goals.begin('cluster benchmark');
  if (cpus().length < 5) {
    goals.notes.push(
      `${cpus().length} cores for ${run('upload') ? 'four nodes' : 'three nodes'} and the client: in the replicated upload A, B and C (and the client) share them, ` +
        'while the single-copy upload has one node and the client; the ratio carries that contention.',
    );
  }
  // A fresh key each run: the nodes refuse low-entropy keys, and nothing outlives the run.
  const adminKey = randomBytes(32).toString('hex');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const handles: NodeHandle[] = [];
  let cluster: Cluster | undefined;
  let single: NodeHandle | undefined;
  try {
    const members = await Promise.all(['A', 'B', 'C'].map((name) => planMember(name, `adm-bench-cluster-${name.toLowerCase()}`)));
    const t0 = Date.now();
    const peerIds = await Promise.all(members.map((member) => firstBoot(member, adminKey)));
    members.forEach((member, i) => (member.peerId = peerIds[i]!));
    say(`first boots: peer ids of A, B, C read and their nodes stopped in ${Date.now() - t0} ms`);
    const nodes: NodeList = members.map((member) => ({ name: member.name, multiAddr: multiAddrOf(member) }));

    const t1 = Date.now();
    const [a, b, c] = await Promise.all(members.map((member) => startMember(member, adminKey, nodes, CLUSTER_REPLICATION, `node ${member.name}`)));
    handles.push(a!, b!, c!);
    cluster = { a: a!, b: b!, c: c!, nodes };
    const peerMs = await peered(a!, [b!, c!]);
    for (const handle of handles) say(`node ${handle.member.name}: pid ${handle.node.process.pid}, http ${LOOPBACK}:${handle.node.port}, libp2p ${multiAddrOf(handle.member)} (HOME ${handle.member.home})`);
    say(`cluster up in ${Date.now() - t1} ms (A connected to B and C ${peerMs} ms after they answered)`);
    const warm = await warmUp(a!, agent, COPIES);
    say(`warm-up upload on A acknowledged ${acknowledgedOf(warm)}`);

    if (run('upload')) {
      const member = await planMember('D', 'adm-bench-cluster-single');
      single = await startMember(member, adminKey, [], { enabled: false }, 'single-copy node');
      handles.push(single);
      await warmUp(single, agent, 1);
      say(`single-copy node (replication off): pid ${single.node.process.pid}, http ${LOOPBACK}:${single.node.port} (HOME ${member.home}), warm-up upload done`);
    }
    say();

    // A failed section is reported in the table and the next one still runs; the bench still ends as failed below.
    if (run('upload')) await goals.section('upload', () => benchUpload(cluster!, single!, agent));
    if (run('repair')) await goals.section('repair', () => benchRepair(cluster!, { adminKey, replication: CLUSTER_REPLICATION }));
    goals.print();
    goals.throwIfFailed(() =>
      [...(cluster ? [cluster.a, cluster.b, cluster.c] : []), ...(single ? [single] : [])]
        .map((handle) => `${handle.label} output (tail):\n${handle.node.process.tail().slice(-2_000)}`)
        .join('\n'),
    );
  } finally {
    agent.destroy();
    const running = [...(cluster ? [cluster.a, cluster.b, cluster.c] : []), ...(single ? [single] : [])];
    for (const handle of running) {
      if (handle.node.process.exited()) continue;
      await handle.node.process.stop(STOP_TIMEOUT_MS);
      say(`${handle.label} stopped (exit ${handle.node.process.child.exitCode ?? handle.node.process.child.signalCode})`);
    }
    await stopAllTracked();
    removeScratchDirs();
  }
}
