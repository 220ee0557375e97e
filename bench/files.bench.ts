// `npm run bench -- files`: the files node's timing goals, each against a baseline measured in the same run, with
// what users do on the client side (issue 27, item 3).
//
// One node: the built CLI (`adm-infra files`) as its own process with its own HOME, on 127.0.0.1. Every section
// uploads into that same running node, one upload after another (it has done work before each one).
//
// 1. upload:   256 MiB files written to a scratch folder on disk first (distinct content per upload, so nothing is
//              deduplicated), each uploaded by one of two clients: (a) `curl -F files=@<file>` (/usr/bin/curl; the
//              client is skipped, loudly, when it is not there) and (b) a node:http client streaming the file with
//              fs.createReadStream inside a multipart body with Content-Length. The baseline of each upload: the
//              same file read from disk and imported in this process with the node's IMPORTER_SETTINGS into a fresh
//              FsBlockstore, run right before or after it (the order alternates); the CIDs must be equal. Measured:
//              wall time, and CPU (user + system) per MiB of the party that imports: the node process (from
//              /proc/<pid>/stat) against this process (process.cpuUsage()) for the baseline, split into user and
//              system; the client's CPU, and other work's busy CPU on the machine (% of a core; above 25% a note
//              calls the measurement disturbed: on a shared 2-core machine CPU seconds inflate under contention too).
//              Goals (medians of the per-upload ratios, each client): wall <= 1.2x the importer, node CPU per MiB
//              <= 1.5x the importer's; the node's peak RSS during the uploads < 200 MiB (VmHWM reset at the start
//              of the section, and sampled every 100 ms).
// 1b. slow:    160 KiB paced at 8 KiB/s on one connection completes with the expected CID.
// 2. download: GET /api/file/<cid> of the first uploaded file, reading the whole body, against `unixfs.cat` in
//              this process over an FsBlockstore on disk holding the same blocks. Goal: HTTP <= 1.2x the baseline.
//              Time to first byte printed for both. Then 4 concurrent downloads of that file: goal: the node's peak
//              RSS under 200 MiB (its VmHWM reset first, and sampled every 100 ms).
// 3. small:    200 uploads of distinct 4 KiB files from 16 concurrent keep-alive clients, in rounds alternating with
//              an in-process baseline that does what the node does per file without HTTP, 16 at a time: a real
//              node started as the runtime starts it (helia, SQLite registry) in this process, and its content
//              actor's upload session per file (import with IMPORTER_SETTINGS, pin the root, record it in the
//              registry; support/files-in-process.ts says what is left out). Goal: files/s >= 0.7x the
//              baseline's; the node's CPU per upload printed beside the baseline's CPU per file.
//
// The data is generated from a seeded PRNG, chunk by chunk, so every run measures the same bytes. The 256 MiB
// files are written (and fsynced) before their round, outside the measurements, and removed after it.

import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { unixfs, type CatOptions } from '@helia/unixfs';
import { FsBlockstore } from 'blockstore-fs';
import { importByteStream } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import { DOWNLOAD_BLOCK_READ_CONCURRENCY } from '../actors/files/content.actor.js';
import { IMPORTER_SETTINGS } from '../actors/files/upload-session.js';
import type { BenchOptions } from './run.js';
import {
  concurrently,
  CURL,
  curlAvailable,
  curlUpload,
  downloadFile,
  freePort,
  LOOPBACK,
  MIB,
  NODE_READY_TIMEOUT_MS as READY_TIMEOUT_MS,
  nowMs,
  pacedUpload,
  rawCid,
  seededBytes,
  startFilesNodeProcess,
  uploadFile,
  uploadFileFromDisk,
  type DownloadAnswer,
  type FilesNodeProcess,
  type UploadAnswer,
} from './support/files-node.js';
import { startInProcessFilesNode, type InProcessFilesNode } from './support/files-in-process.js';
import { GoalReport } from './support/goals.js';
import { cpuSecondsOf, cpuTimesOf, machineBusySeconds, memoryOf, reapedChildrenCpuSeconds, resetPeakRss, stopAllTracked } from './support/processes.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, median, summarizeMs, table } from './support/stats.js';

export const FILES_SECTIONS = ['upload', 'download', 'small'] as const;

// Goals (issue 27, item 3).
const GOAL_UPLOAD_RATIO = 1.2;
/** The node's CPU per MiB uploaded against the in-process importer's (the original spent about 2.6x). */
const GOAL_UPLOAD_CPU_RATIO = 1.5;
const GOAL_UPLOAD_PEAK_RSS_MIB = 200;
const GOAL_DOWNLOAD_RATIO = 1.2;
const GOAL_CONCURRENT_DOWNLOAD_PEAK_RSS_MIB = 200;
const GOAL_SMALL_RATE_RATIO = 0.7;
/** Downloads of the large file at once for the memory goal: a download must not hold its file in memory. */
const CONCURRENT_DOWNLOADS = 4;

const LARGE_SIZE = 256 * MIB;
const LARGE_MIB = LARGE_SIZE / MIB;
/** Rounds of the upload section: each round uploads one distinct file with each client. */
const UPLOAD_ROUNDS = 5;
const DOWNLOAD_ROUNDS = 5;
const SMALL_FILES = 200;
const SMALL_SIZE = 4096;
const SMALL_CLIENTS = 16;
const SMALL_WARMUP = 16;
/** Rounds of the small section, each with its own 200 files, HTTP and in-process in alternating order. */
const SMALL_ROUNDS = 3;
const RSS_SAMPLE_MS = 100;
/** Busy time outside the measured parties (node, client, this process) above this (% of a core) marks a measurement as disturbed. */
const NOISY_OTHER_CPU = 25;
const LARGE_SEED_BASE = 1;
const SMALL_SEED_BASE = 100_000;
const WARMUP_SEED = 999_999;

const say = (text = ''): void => void process.stdout.write(`${text}\n`);

// ---------------------------------------------------------------------------------------------
// Deterministic data.

function smallFile(index: number): Uint8Array {
  return seededBytes(SMALL_SEED_BASE + index, SMALL_SIZE).next().value as Uint8Array;
}

/** Writes `size` seeded bytes to `path` and fsyncs it, so its writeback does not fall into a measurement. */
function writeSeededFile(path: string, seed: number, size: number): void {
  const fd = openSync(path, 'w');
  try {
    for (const chunk of seededBytes(seed, size)) {
      for (let written = 0; written < chunk.length; ) written += writeSync(fd, chunk, written);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------
// The node as a process.

function nodeConfig(port: number): Record<string, unknown> & { serverPort: number } {
  return {
    nodes: [],
    storeFolder: '.adm-ipfs',
    // Request logs are info lines: at warn the node spends nothing on logging during the measurements.
    logLevel: 'warn',
    serverPort: port,
    peerDiscovery: { listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [] },
    maxFileCount: 10,
    // Room for the 256 MiB file; the request limit adds room for the multipart framing.
    uploadLimitSizeBytes: 288 * MIB,
    findFileTimeout: 20_000,
    cors: { allowedOrigins: ['*'] },
    // Limits high enough that no measured request is refused: the bench measures work, not policy.
    rateLimits: {
      upload: { windowMs: 900_000, limit: 100_000 },
      read: { windowMs: 60_000, limit: 100_000 },
    },
    storage: {
      maxRequestSizeBytes: 320 * MIB,
      maxConcurrentUploads: 32,
      // The bench's own store and the node's share one disk: no reserve, so a nearly full disk still runs.
      diskReserveBytes: 0,
    },
  };
}

async function startNode(home: string): Promise<FilesNodeProcess> {
  // Its own HOME: the store lives in <HOME>/.adm-ipfs (notes B.7). No ADMIN_PORT: the operator listener stays off.
  return startFilesNodeProcess(home, nodeConfig(await freePort()));
}

/**
 * A first small upload, retried while the node finishes starting (GET / answers before every actor is
 * up): it also warms the upload path so the first measured request does not pay for lazy setup.
 */
async function warmUp(node: FilesNodeProcess, agent: Agent): Promise<void> {
  const bytes = seededBytes(WARMUP_SEED, 3 * MIB + 123);
  const chunks = [...bytes];
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    const answer = await uploadFile(node.port, agent, 'warmup.bin', chunks, 3 * MIB + 123);
    if (answer.status === 200 && answer.cid) {
      const download = await downloadFile(node.port, agent, answer.cid, false);
      if (download.status === 200 && download.bytes === 3 * MIB + 123) return;
      last = `download answered ${download.status} with ${download.bytes} bytes`;
    } else {
      last = `upload answered ${answer.status}: ${answer.body.slice(0, 300)}`;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the files node did not accept a warm-up upload within ${READY_TIMEOUT_MS} ms (${last}):\n${node.process.tail()}`);
}

// ---------------------------------------------------------------------------------------------
// Results and goals.

const goals = new GoalReport();

const seconds = (ms: number) => `${fmt(ms / 1000, 2)} s`;
const mibPerSecond = (bytes: number, ms: number) => `${fmt(bytes / MIB / (ms / 1000), 1)} MiB/s`;

// ---------------------------------------------------------------------------------------------
// Shared state between the sections: the large file, in the node and in a baseline store.

interface LargeFile {
  readonly seed: number;
  readonly cid: string;
  /** A store of this process holding exactly the blocks of `cid` (the download baseline reads it). */
  readonly baselineStore: string;
}

/**
 * Imports `content` with the node's importer settings into a fresh FsBlockstore at `dir`: wall time, and this
 * process's CPU (user + system, every thread) while it ran.
 */
async function importInProcess(
  dir: string,
  content: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
): Promise<{ cid: string; ms: number; cpuSeconds: number; cpu: { user: number; system: number } }> {
  const blockstore = new FsBlockstore(dir);
  await blockstore.open();
  try {
    const cpuBefore = process.cpuUsage();
    const started = nowMs();
    // importByteStream, the importer entry the node's upload session calls: a plain `importer()` over one
    // unnamed file gives the same CID, but this keeps the baseline on the node's exact code path.
    const result = await importByteStream(content, blockstore, IMPORTER_SETTINGS);
    const ms = nowMs() - started;
    const cpu = process.cpuUsage(cpuBefore);
    return { cid: result.cid.toString(), ms, cpuSeconds: (cpu.user + cpu.system) / 1e6, cpu: { user: cpu.user / 1e6, system: cpu.system / 1e6 } };
  } finally {
    await blockstore.close();
  }
}

/** Samples the node's RSS while `work` runs; VmHWM covers what falls between samples. */
async function withRssSampling<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; sampledPeakMiB: number; hwmMiB: number }> {
  let sampledPeakMiB = 0;
  const sample = () => {
    const memory = memoryOf(pid);
    if (memory) sampledPeakMiB = Math.max(sampledPeakMiB, memory.rssMiB);
  };
  sample();
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  try {
    const result = await work();
    sample();
    return { result, sampledPeakMiB, hwmMiB: memoryOf(pid)?.peakMiB ?? NaN };
  } finally {
    clearInterval(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// 1. Upload of 256 MiB files from disk.

type UploadClient = 'curl' | 'node:http';

const CLIENT_LABEL: Readonly<Record<UploadClient, string>> = {
  curl: 'curl -F files=@file',
  'node:http': 'node:http, createReadStream',
};

/** One measured upload and the in-process import of the same file next to it. */
interface UploadPair {
  readonly client: UploadClient;
  readonly round: number;
  readonly wallMs: number;
  readonly nodeCpuSeconds: number;
  readonly baseMs: number;
  readonly baseCpuSeconds: number;
  readonly clientCpuSeconds: number;
}

/** CPU ms per MiB of the large file. */
const cpuPerMiB = (cpuSeconds: number) => (cpuSeconds * 1000) / LARGE_MIB;
const msPerMiB = (value: number) => `${fmt(value, 2)} ms/MiB`;

/** Busy CPU seconds of the machine, undefined off Linux. */
const busyDelta = (before: number | undefined): number => {
  const after = machineBusySeconds();
  return before === undefined || after === undefined ? NaN : after - before;
};

/** Busy CPU seconds of other processes over a measurement of `ms`, as % of one core. */
const otherPercent = (seconds: number, ms: number) => (seconds * 1000 * 100) / ms;

/** A note when other work on the machine took more than NOISY_OTHER_CPU of a core during some of a section's measurements. */
function noteDisturbed(section: string, loads: readonly number[]): void {
  const disturbed = loads.filter((load) => load > NOISY_OTHER_CPU);
  if (disturbed.length === 0) return;
  goals.notes.push(
    `${section}: other work took more than ${NOISY_OTHER_CPU}% of a core during ${disturbed.length} of ${loads.length} measurements ` +
      `(median ${fmt(median(loads), 0)}%, max ${fmt(Math.max(...loads), 0)}%); those numbers are disturbed.`,
  );
}

async function benchUpload(node: FilesNodeProcess, scratch: string): Promise<LargeFile> {
  const pid = node.process.pid;
  const clients: UploadClient[] = curlAvailable() ? ['curl', 'node:http'] : ['node:http'];
  say(
    `== 1. upload: ${UPLOAD_ROUNDS} rounds; each round writes one distinct ${LARGE_MIB} MiB file per client to disk, uploads it into the ` +
      `running node (${clients.map((c) => CLIENT_LABEL[c]).join('; ')}) and imports the same file from disk in-process ` +
      '(importByteStream with IMPORTER_SETTINGS into a fresh FsBlockstore); the order alternates',
  );
  if (!clients.includes('curl')) say(`!! ${CURL} NOT FOUND: the curl client is SKIPPED; only the node:http client uploads`);
  const idle = memoryOf(pid);
  if (idle) say(`node RSS before the uploads: ${fmt(idle.rssMiB, 1)} MiB (VmHWM so far ${fmt(idle.peakMiB, 1)} MiB)`);
  // The section's own peak: the warm-up and start-up are not uploads of this section.
  const hwmReset = resetPeakRss(pid);

  // A connection of its own per node:http upload, as curl opens one: a keep-alive socket left idle during the
  // baselines may be closed by the node's idle timeout just as the next upload starts writing on it (ECONNRESET).
  const agent = new Agent({ keepAlive: false, maxSockets: 1 });
  const rows: string[][] = [];
  const pairs: UploadPair[] = [];
  let peakSampled = 0;
  let peakHwm = 0;
  let first: LargeFile | undefined;
  const otherLoads: number[] = [];
  const row = (round: number, side: string, ms: number, cpu: { user: number; system: number }, clientCpu: string, others: number, rss: string, hwm: string, cid: string) => {
    otherLoads.push(otherPercent(others, ms));
    rows.push([
      `${round + 1}`,
      side,
      seconds(ms),
      mibPerSecond(LARGE_SIZE, ms),
      `${fmt(cpu.user + cpu.system, 2)} (${fmt(cpu.user, 2)} + ${fmt(cpu.system, 2)})`,
      fmt(cpuPerMiB(cpu.user + cpu.system), 2),
      clientCpu,
      fmt(otherPercent(others, ms), 0),
      rss,
      hwm,
      cid,
    ]);
  };

  const baseline = async (round: number, client: UploadClient, path: string, store: string) => {
    const busyBefore = machineBusySeconds();
    const base = await importInProcess(store, createReadStream(path));
    const others = busyDelta(busyBefore) - base.cpuSeconds;
    row(round, `baseline: importer (same file as ${client})`, base.ms, base.cpu, '-', others, '-', '-', base.cid);
    return base;
  };

  const upload = async (round: number, client: UploadClient, path: string) => {
    const nodeBefore = cpuTimesOf(pid);
    const selfBefore = process.cpuUsage();
    const childrenBefore = reapedChildrenCpuSeconds();
    const busyBefore = machineBusySeconds();
    const { result, sampledPeakMiB, hwmMiB } = await withRssSampling(pid, (): Promise<UploadAnswer> =>
      client === 'curl' ? curlUpload(node.port, path, join(scratch, 'curl-answer.json')) : uploadFileFromDisk(node.port, agent, path),
    );
    const nodeAfter = cpuTimesOf(pid);
    const nodeTimes = { user: (nodeAfter?.user ?? NaN) - (nodeBefore?.user ?? NaN), system: (nodeAfter?.system ?? NaN) - (nodeBefore?.system ?? NaN) };
    const nodeCpu = nodeTimes.user + nodeTimes.system;
    const self = process.cpuUsage(selfBefore);
    const selfCpu = (self.user + self.system) / 1e6;
    const childrenCpu = (reapedChildrenCpuSeconds() ?? NaN) - (childrenBefore ?? NaN);
    // The client: curl's own CPU (reaped child), or this process's (the node:http client and the RSS sampler).
    const clientCpu = client === 'curl' ? childrenCpu : selfCpu;
    const others = busyDelta(busyBefore) - nodeCpu - selfCpu - (Number.isFinite(childrenCpu) ? childrenCpu : 0);
    if (result.status !== 200 || result.cid === undefined) throw new Error(`${client} upload answered ${result.status}: ${result.body.slice(0, 500)}`);
    peakSampled = Math.max(peakSampled, sampledPeakMiB);
    if (Number.isFinite(hwmMiB)) peakHwm = Math.max(peakHwm, hwmMiB);
    row(round, `HTTP: ${CLIENT_LABEL[client]}`, result.ms, nodeTimes, `${fmt(clientCpu, 2)} s`, others, fmt(sampledPeakMiB, 1), fmt(hwmMiB, 1), result.cid);
    return { ...result, nodeCpu, clientCpu };
  };

  try {
    for (let round = 0; round < UPLOAD_ROUNDS; round++) {
      const files = clients.map((client, index) => {
        const seed = LARGE_SEED_BASE + round * 2 + index;
        return { client, seed, path: join(scratch, `upload-${round + 1}-${client === 'curl' ? 'curl' : 'node'}.bin`), store: join(scratch, `baseline-${round + 1}-${index}`) };
      });
      for (const file of files) writeSeededFile(file.path, file.seed, LARGE_SIZE);
      // Alternating both the clients' order and each upload's place against its baseline spreads the page cache's and
      // the disk's writeback of the previous import over every side.
      const ordered = round % 2 === 0 ? files : [...files].reverse();
      for (const file of ordered) {
        let base: Awaited<ReturnType<typeof baseline>>;
        let http: Awaited<ReturnType<typeof upload>>;
        if (round % 2 === 0) {
          base = await baseline(round, file.client, file.path, file.store);
          http = await upload(round, file.client, file.path);
        } else {
          http = await upload(round, file.client, file.path);
          base = await baseline(round, file.client, file.path, file.store);
        }
        if (http.cid !== base.cid) throw new Error(`round ${round + 1}, ${file.client}: the node stored CID ${http.cid}, the in-process import gave ${base.cid}: not the same importer settings`);
        pairs.push({ client: file.client, round, wallMs: http.ms, nodeCpuSeconds: http.nodeCpu, baseMs: base.ms, baseCpuSeconds: base.cpuSeconds, clientCpuSeconds: http.clientCpu });
        // The first round's first file is the download section's: its baseline store stays.
        if (round === 0 && file === files[0]) first = { seed: file.seed, cid: base.cid, baselineStore: file.store };
      }
      for (const file of files) {
        rmSync(file.path, { force: true });
        if (file.store !== first?.baselineStore) rmSync(file.store, { recursive: true, force: true });
      }
    }
  } finally {
    agent.destroy();
  }
  say();
  say(
    table(
      ['round', 'side', 'wall', 'throughput', 'CPU s (user + sys)', 'CPU ms/MiB', 'client CPU', 'other work %', 'node RSS peak MiB (sampled)', 'node VmHWM MiB', 'CID'],
      rows,
    ),
  );
  say('CPU: the node process (/proc/<pid>/stat) for HTTP, this process (process.cpuUsage()) for the baseline; other work: busy CPU of every other process meanwhile, % of a core.');
  say();
  noteDisturbed('upload', otherLoads);

  const summary: string[][] = [];
  for (const client of clients) {
    const mine = pairs.filter((p) => p.client === client);
    const wall = median(mine.map((p) => p.wallMs));
    const baseWall = median(mine.map((p) => p.baseMs));
    const cpu = median(mine.map((p) => cpuPerMiB(p.nodeCpuSeconds)));
    const baseCpu = median(mine.map((p) => cpuPerMiB(p.baseCpuSeconds)));
    const wallRatio = median(mine.map((p) => p.wallMs / p.baseMs));
    const cpuRatio = median(mine.map((p) => p.nodeCpuSeconds / p.baseCpuSeconds));
    const clientCpu = median(mine.map((p) => cpuPerMiB(p.clientCpuSeconds)));
    summary.push([CLIENT_LABEL[client], seconds(wall), seconds(baseWall), `${fmt(wallRatio)}x`, msPerMiB(cpu), msPerMiB(baseCpu), `${fmt(cpuRatio)}x`, msPerMiB(clientCpu)]);
    goals.judge(`upload ${LARGE_MIB} MiB, ${CLIENT_LABEL[client]}: wall / importer`, seconds(wall), seconds(baseWall), `${fmt(wallRatio)}x`, `<= ${GOAL_UPLOAD_RATIO}x`, wallRatio <= GOAL_UPLOAD_RATIO);
    goals.judge(`upload ${LARGE_MIB} MiB, ${CLIENT_LABEL[client]}: node CPU per MiB / importer's`, msPerMiB(cpu), msPerMiB(baseCpu), `${fmt(cpuRatio)}x`, `<= ${GOAL_UPLOAD_CPU_RATIO}x`, cpuRatio <= GOAL_UPLOAD_CPU_RATIO);
  }
  if (!clients.includes('curl')) goals.info(`upload ${LARGE_MIB} MiB, curl -F files=@file`, `SKIPPED: ${CURL} not found`);
  say(
    table(['client (medians of ' + UPLOAD_ROUNDS + ' rounds)', 'wall', 'importer wall', 'wall ratio', 'node CPU', 'importer CPU', 'CPU ratio', 'client CPU'], summary),
  );
  say('ratios: the median of the per-upload ratios, each upload against the import of the same file run next to it; same CID on both sides in every round');
  say();
  // VmHWM is exact (the kernel's high-water mark) but, when it could not be reset, counts everything since the node
  // started; the sampled peak only sees the upload windows. The goal is judged on the larger of the two.
  const peak = Math.max(peakSampled, peakHwm);
  goals.judge(
    'node peak RSS during the uploads',
    `${fmt(peak, 1)} MiB (sampled ${fmt(peakSampled, 1)}, VmHWM ${fmt(peakHwm, 1)}${hwmReset ? '' : ', not reset'})`,
    '-',
    '-',
    `< ${GOAL_UPLOAD_PEAK_RSS_MIB} MiB`,
    peak < GOAL_UPLOAD_PEAK_RSS_MIB,
  );
  return first!;
}

/** For `--only download`: the file put in place without measuring. */
async function prepareLarge(node: FilesNodeProcess, agent: Agent, scratch: string): Promise<LargeFile> {
  const seed = LARGE_SEED_BASE;
  const baselineStore = join(scratch, 'baseline-download');
  say(`preparing the ${LARGE_SIZE / MIB} MiB file (not measured): HTTP upload and in-process import`);
  const http = await uploadFile(node.port, agent, `bench-${seed}.bin`, seededBytes(seed, LARGE_SIZE), LARGE_SIZE);
  if (http.status !== 200 || http.cid === undefined) throw new Error(`HTTP upload answered ${http.status}: ${http.body.slice(0, 500)}`);
  const base = await importInProcess(baselineStore, seededBytes(seed, LARGE_SIZE));
  if (http.cid !== base.cid) throw new Error(`the node stored CID ${http.cid}, the in-process import gave ${base.cid}`);
  return { seed, cid: base.cid, baselineStore };
}

// ---------------------------------------------------------------------------------------------
// 2. Download of 256 MiB.

async function catInProcess(store: string, cid: string, hash: boolean): Promise<DownloadAnswer> {
  const blockstore = new FsBlockstore(store);
  await blockstore.open();
  try {
    // unixfs needs only a blockstore for cat; no Helia node, no network: the FsBlockstore reads from disk.
    const fs = unixfs({ blockstore });
    const digest = hash ? createHash('sha256') : undefined;
    const started = nowMs();
    let bytes = 0;
    let ttfbMs = NaN;
    // The node's own read-ahead, so both sides read the DAG the same way.
    const options: CatOptions & { blockReadConcurrency: number } = { blockReadConcurrency: DOWNLOAD_BLOCK_READ_CONCURRENCY };
    for await (const chunk of fs.cat(CID.parse(cid), options)) {
      if (bytes === 0) ttfbMs = nowMs() - started;
      bytes += chunk.length;
      digest?.update(chunk);
    }
    return { status: 200, bytes, ttfbMs, ms: nowMs() - started, sha256: digest?.digest('hex') };
  } finally {
    await blockstore.close();
  }
}

async function benchDownload(node: FilesNodeProcess, agent: Agent, large: LargeFile): Promise<void> {
  say(`== 2. download: GET /api/file/<cid> of the ${LARGE_SIZE / MIB} MiB file vs unixfs.cat over an FsBlockstore in-process, ${DOWNLOAD_ROUNDS} rounds (order alternates) after one verified pass each`);
  const source = createHash('sha256');
  for (const chunk of seededBytes(large.seed, LARGE_SIZE)) source.update(chunk);
  const expected = source.digest('hex');
  // The verified passes also warm both paths (and the page cache for both stores). The baseline goes
  // first and is printed at once, so a failing HTTP side still leaves the reference on record.
  const checkCat = await catInProcess(large.baselineStore, large.cid, true);
  if (checkCat.bytes !== LARGE_SIZE || checkCat.sha256 !== expected) throw new Error(`unixfs.cat gave ${checkCat.bytes} bytes, sha256 ${checkCat.sha256}`);
  say(`unixfs.cat verified (${fmtInt(LARGE_SIZE)} bytes, sha256 ${expected.slice(0, 16)}… of the generated source): ${seconds(checkCat.ms)}, TTFB ${fmt(checkCat.ttfbMs, 2)} ms (hashing included)`);
  const checkHttp = await downloadFile(node.port, agent, large.cid, true);
  if (checkHttp.status !== 200 || checkHttp.bytes !== LARGE_SIZE || checkHttp.sha256 !== expected) {
    throw new Error(`HTTP download answered ${checkHttp.status}, ${checkHttp.bytes} bytes, sha256 ${checkHttp.sha256} (expected ${LARGE_SIZE} bytes, ${expected})`);
  }
  say(`HTTP download verified: ${seconds(checkHttp.ms)}, TTFB ${fmt(checkHttp.ttfbMs, 2)} ms (hashing included)`);

  const lines: string[][] = [];
  const http: DownloadAnswer[] = [];
  const base: DownloadAnswer[] = [];
  for (let round = 0; round < DOWNLOAD_ROUNDS; round++) {
    const runHttp = async () => {
      // No goal on the node's memory here, but a download that holds the file in memory shows up in this column.
      const { result: answer, sampledPeakMiB } = await withRssSampling(node.process.pid, () => downloadFile(node.port, agent, large.cid, false));
      if (answer.status !== 200 || answer.bytes !== LARGE_SIZE) throw new Error(`HTTP download answered ${answer.status} with ${answer.bytes} bytes`);
      http.push(answer);
      lines.push([`round ${round + 1}`, 'HTTP GET /api/file/<cid>', fmt(answer.ttfbMs, 2), seconds(answer.ms), mibPerSecond(answer.bytes, answer.ms), fmt(sampledPeakMiB, 1)]);
    };
    const runBase = async () => {
      const answer = await catInProcess(large.baselineStore, large.cid, false);
      if (answer.bytes !== LARGE_SIZE) throw new Error(`unixfs.cat gave ${answer.bytes} bytes`);
      base.push(answer);
      lines.push([`round ${round + 1}`, 'baseline: unixfs.cat', fmt(answer.ttfbMs, 2), seconds(answer.ms), mibPerSecond(answer.bytes, answer.ms), '-']);
    };
    if (round % 2 === 0) {
      await runBase();
      await runHttp();
    } else {
      await runHttp();
      await runBase();
    }
  }
  say();
  say(table(['round', 'side', 'TTFB ms', 'time', 'throughput', 'node RSS peak MiB (sampled)'], lines));
  say();
  const httpMs = median(http.map((a) => a.ms));
  const baseMs = median(base.map((a) => a.ms));
  const httpTtfb = median(http.map((a) => a.ttfbMs));
  const baseTtfb = median(base.map((a) => a.ttfbMs));
  const ratio = httpMs / baseMs;
  say(`median: HTTP ${seconds(httpMs)} (TTFB ${fmt(httpTtfb, 2)} ms), unixfs.cat ${seconds(baseMs)} (TTFB ${fmt(baseTtfb, 2)} ms), ratio ${fmt(ratio)}x`);
  say(`node RSS after the downloads: ${fmt(memoryOf(node.process.pid)?.rssMiB ?? NaN, 1)} MiB`);
  say();
  goals.judge(`download ${LARGE_SIZE / MIB} MiB, HTTP / unixfs.cat (median of ${DOWNLOAD_ROUNDS})`, seconds(httpMs), seconds(baseMs), `${fmt(ratio)}x`, `<= ${GOAL_DOWNLOAD_RATIO}x`, ratio <= GOAL_DOWNLOAD_RATIO);
  goals.info('download time to first byte (median)', `${fmt(httpTtfb, 2)} ms`, `${fmt(baseTtfb, 2)} ms`, `${fmt(httpTtfb / baseTtfb, 1)}x`);
  await benchConcurrentDownloads(node, large);
}

/** The node's peak RSS while CONCURRENT_DOWNLOADS clients download the large file at once (each on its own socket). */
async function benchConcurrentDownloads(node: FilesNodeProcess, large: LargeFile): Promise<void> {
  const pid = node.process.pid;
  say(`-- ${CONCURRENT_DOWNLOADS} concurrent downloads of the ${LARGE_SIZE / MIB} MiB file, node RSS sampled every ${RSS_SAMPLE_MS} ms`);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENT_DOWNLOADS });
  try {
    const before = memoryOf(pid);
    // VmHWM counts from the node's start (the uploads included) unless it is reset; without a reset only the samples count.
    const reset = resetPeakRss(pid);
    const started = nowMs();
    const { result: answers, sampledPeakMiB, hwmMiB } = await withRssSampling(pid, () =>
      Promise.all(Array.from({ length: CONCURRENT_DOWNLOADS }, () => downloadFile(node.port, agent, large.cid, false))),
    );
    const wallMs = nowMs() - started;
    for (const answer of answers) {
      if (answer.status !== 200 || answer.bytes !== LARGE_SIZE) throw new Error(`concurrent download answered ${answer.status} with ${answer.bytes} bytes`);
    }
    const peak = reset && Number.isFinite(hwmMiB) ? Math.max(sampledPeakMiB, hwmMiB) : sampledPeakMiB;
    say(
      `node RSS before ${fmt(before?.rssMiB ?? NaN, 1)} MiB; peak ${fmt(peak, 1)} MiB (sampled ${fmt(sampledPeakMiB, 1)}, VmHWM ${reset ? fmt(hwmMiB, 1) : 'not reset'}); ` +
        `${CONCURRENT_DOWNLOADS} x ${LARGE_SIZE / MIB} MiB in ${seconds(wallMs)} (${mibPerSecond(CONCURRENT_DOWNLOADS * LARGE_SIZE, wallMs)} together), ` +
        `TTFB ${answers.map((a) => fmt(a.ttfbMs, 1)).join(' / ')} ms`,
    );
    say();
    goals.judge(
      `node peak RSS during ${CONCURRENT_DOWNLOADS} concurrent downloads`,
      `${fmt(peak, 1)} MiB (sampled ${fmt(sampledPeakMiB, 1)}, VmHWM ${reset ? fmt(hwmMiB, 1) : '-'})`,
      before ? `${fmt(before.rssMiB, 1)} MiB before` : '-',
      '-',
      `< ${GOAL_CONCURRENT_DOWNLOAD_PEAK_RSS_MIB} MiB`,
      peak < GOAL_CONCURRENT_DOWNLOAD_PEAK_RSS_MIB,
    );
  } finally {
    agent.destroy();
  }
}

/** A phone on a poor network: 160 KiB at 8 KiB/s (20 s), slower than uWS re-arms its 10 s idle timer. */
const SLOW_UPLOAD_BYTES = 160 * 1024;
const SLOW_UPLOAD_BYTES_PER_SECOND = 8 * 1024;

async function benchSlowUpload(node: FilesNodeProcess): Promise<void> {
  const seconds = SLOW_UPLOAD_BYTES / SLOW_UPLOAD_BYTES_PER_SECOND;
  say(`== 1b. slow upload: ${SLOW_UPLOAD_BYTES / 1024} KiB at ${SLOW_UPLOAD_BYTES_PER_SECOND / 1024} KiB/s (${seconds} s on one connection)`);
  const content = Buffer.concat([...seededBytes(808, SLOW_UPLOAD_BYTES)]);
  const expected = await rawCid(content);
  const answer = await pacedUpload(node.port, 'slow.bin', content, SLOW_UPLOAD_BYTES_PER_SECOND);
  const complete = answer.status === 200 && answer.cid === expected;
  say(`answered ${answer.status} after ${fmt(answer.ms / 1000, 1)} s; CID ${answer.cid === expected ? 'as expected' : `${answer.cid}, expected ${expected}`}`);
  say();
  goals.judge(`upload at ${SLOW_UPLOAD_BYTES_PER_SECOND / 1024} KiB/s completes`, `${answer.status} in ${fmt(answer.ms / 1000, 1)} s`, '-', '-', '200, the same CID', complete);
}

// ---------------------------------------------------------------------------------------------
// 3. Many small uploads.

/** One side of one round of small uploads. */
interface SmallRun {
  readonly round: number;
  readonly latencies: number[];
  readonly wallMs: number;
  /** CPU of the party that stores: the node process for HTTP, this process for the in-process baseline. */
  readonly cpuSeconds: number;
  /** HTTP only: this process's CPU (the 16 clients). */
  readonly clientCpuSeconds?: number;
  /** Busy CPU of every other process meanwhile. */
  readonly othersSeconds: number;
}

async function benchSmall(node: FilesNodeProcess, scratch: string): Promise<void> {
  say(
    `== 3. small: ${SMALL_ROUNDS} rounds of ${SMALL_FILES} uploads of distinct ${SMALL_SIZE / 1024} KiB files from ${SMALL_CLIENTS} keep-alive clients, ` +
      `against the same files uploaded ${SMALL_CLIENTS} at a time into an in-process node through its content actor (import, pin, registry; no HTTP); ` +
      `order alternates, ${SMALL_WARMUP} warm-up uploads on each side first`,
  );
  // Round r uploads files [r * SMALL_FILES, (r + 1) * SMALL_FILES); the warm-up files come after every round's.
  const total = SMALL_ROUNDS * SMALL_FILES + SMALL_WARMUP;
  const files = Array.from({ length: total }, (_, i) => smallFile(i));
  const expected = await Promise.all(files.map(rawCid));
  const warmupIndex = SMALL_ROUNDS * SMALL_FILES;
  const pid = node.process.pid;
  // One socket per client, reused for every request of that client.
  const agent = new Agent({ keepAlive: true, maxSockets: SMALL_CLIENTS });
  let local: InProcessFilesNode | undefined;
  try {
    const started = nowMs();
    local = await startInProcessFilesNode(join(scratch, 'in-process-node', '.adm-ipfs'), nodeConfig(await freePort()));
    say(`in-process node started in ${fmt(nowMs() - started, 0)} ms`);
    const inProcess = local;

    const httpUpload = async (index: number) => {
      const answer = await uploadFile(node.port, agent, `small-${index}.bin`, [files[index]!], SMALL_SIZE);
      if (answer.status !== 200) throw new Error(`small upload ${index} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      if (answer.cid !== expected[index]) throw new Error(`small upload ${index}: CID ${answer.cid}, expected ${expected[index]}`);
    };
    const localUpload = async (index: number) => {
      const cid = await inProcess.upload(`small-${index}.bin`, files[index]!);
      if (cid !== expected[index]) throw new Error(`in-process upload ${index}: CID ${cid}, expected ${expected[index]}`);
    };
    await concurrently(SMALL_WARMUP, SMALL_CLIENTS, (i) => httpUpload(warmupIndex + i));
    await concurrently(SMALL_WARMUP, SMALL_CLIENTS, (i) => localUpload(warmupIndex + i));

    const http: SmallRun[] = [];
    const base: SmallRun[] = [];
    const runHttp = async (round: number) => {
      const nodeBefore = cpuSecondsOf(pid);
      const selfBefore = process.cpuUsage();
      const busyBefore = machineBusySeconds();
      const run = await concurrently(SMALL_FILES, SMALL_CLIENTS, (i) => httpUpload(round * SMALL_FILES + i));
      const cpuSeconds = (cpuSecondsOf(pid) ?? NaN) - (nodeBefore ?? NaN);
      const self = process.cpuUsage(selfBefore);
      const clientCpuSeconds = (self.user + self.system) / 1e6;
      http.push({ round, ...run, cpuSeconds, clientCpuSeconds, othersSeconds: busyDelta(busyBefore) - cpuSeconds - clientCpuSeconds });
    };
    const runLocal = async (round: number) => {
      const selfBefore = process.cpuUsage();
      const busyBefore = machineBusySeconds();
      const run = await concurrently(SMALL_FILES, SMALL_CLIENTS, (i) => localUpload(round * SMALL_FILES + i));
      const self = process.cpuUsage(selfBefore);
      const cpuSeconds = (self.user + self.system) / 1e6;
      base.push({ round, ...run, cpuSeconds, othersSeconds: busyDelta(busyBefore) - cpuSeconds });
    };
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      if (round % 2 === 0) {
        await runLocal(round);
        await runHttp(round);
      } else {
        await runHttp(round);
        await runLocal(round);
      }
    }

    const rate = (run: SmallRun) => (SMALL_FILES / run.wallMs) * 1000;
    const perFileMs = (cpuSeconds: number) => (cpuSeconds * 1000) / SMALL_FILES;
    const line = (side: string, run: SmallRun) => {
      const l = summarizeMs(run.latencies);
      return [
        `${run.round + 1}`,
        side,
        fmt(rate(run), 1),
        fmt(l.p50),
        fmt(l.p99),
        fmt(run.cpuSeconds, 2),
        fmt(perFileMs(run.cpuSeconds), 2),
        run.clientCpuSeconds === undefined ? '-' : fmt(perFileMs(run.clientCpuSeconds), 2),
        fmt(otherPercent(run.othersSeconds, run.wallMs), 0),
      ];
    };
    const lines: string[][] = [];
    for (let round = 0; round < SMALL_ROUNDS; round++) {
      lines.push(line('HTTP POST /api/file/upload', http[round]!));
      lines.push(line('in-process: content actor upload', base[round]!));
    }
    say();
    say(table(['round', 'side', 'files/s', 'p50 ms', 'p99 ms', 'CPU s', 'CPU ms/file', 'client CPU ms/file', 'other work %'], lines));
    say('CPU: the node process for HTTP, this process for the in-process baseline; client CPU: this process during the HTTP round (16 clients); other work: busy CPU of every other process meanwhile, % of a core.');
    say();
    noteDisturbed('small', [...http, ...base].map((run) => otherPercent(run.othersSeconds, run.wallMs)));
    const httpRate = median(http.map(rate));
    const baseRate = median(base.map(rate));
    const rateRatio = median(http.map((run, round) => rate(run) / rate(base[round]!)));
    const httpCpu = median(http.map((run) => perFileMs(run.cpuSeconds)));
    const baseCpu = median(base.map((run) => perFileMs(run.cpuSeconds)));
    const cpuRatio = median(http.map((run, round) => run.cpuSeconds / base[round]!.cpuSeconds));
    const h = summarizeMs(http.flatMap((run) => run.latencies));
    const b = summarizeMs(base.flatMap((run) => run.latencies));
    say(
      `medians of ${SMALL_ROUNDS} rounds: HTTP ${fmt(httpRate, 1)} files/s and ${fmt(httpCpu, 2)} ms node CPU per upload; in-process ${fmt(baseRate, 1)} files/s ` +
        `and ${fmt(baseCpu, 2)} ms CPU per file; ratios (per round, median) ${fmt(rateRatio)}x files/s, ${fmt(cpuRatio)}x CPU`,
    );
    say(`every answer carried the expected CID; node RSS after: ${fmt(memoryOf(pid)?.rssMiB ?? NaN, 1)} MiB`);
    say();
    goals.judge(
      `small uploads, ${SMALL_CLIENTS} clients: files/s, HTTP / in-process (median of ${SMALL_ROUNDS})`,
      fmt(httpRate, 1),
      fmt(baseRate, 1),
      `${fmt(rateRatio)}x`,
      `>= ${GOAL_SMALL_RATE_RATIO}x`,
      rateRatio >= GOAL_SMALL_RATE_RATIO,
    );
    goals.info('small uploads: node CPU per upload / in-process CPU per file', `${fmt(httpCpu, 2)} ms`, `${fmt(baseCpu, 2)} ms`, `${fmt(cpuRatio)}x`);
    goals.info('small uploads: p50 / p99 latency (all rounds)', `${fmt(h.p50)} / ${fmt(h.p99)} ms`, `${fmt(b.p50)} / ${fmt(b.p99)} ms`);
  } finally {
    agent.destroy();
    await local?.stop();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runFilesBench(options: BenchOptions): Promise<void> {
  const run = (section: (typeof FILES_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  goals.begin('files benchmark');
  if (cpus().length < 3) {
    goals.notes.push(
      `${cpus().length} cores: in the HTTP runs the client (curl, or this process's node:http writer and readers) and the node compete for them, ` +
        'while each in-process baseline is one process; the wall-time ratios carry that contention. CPU seconds carry it too once other work ' +
        'leaves the node and its client less than the two cores (context switches, shared caches): the node, interleaved with its client, ' +
        'inflates more than the importer, so CPU ratios of disturbed measurements (notes below) read high.',
    );
  }
  if (run('upload') && !curlAvailable()) goals.notes.push(`${CURL} not found: the curl upload client was SKIPPED.`);
  const home = makeScratchDir('adm-bench-files-home');
  const scratch = makeScratchDir('adm-bench-files-baseline');
  // The warm-up and the downloads run one at a time on one reused connection.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let node: FilesNodeProcess | undefined;
  try {
    node = await startNode(home);
    say(`files node pid ${node.process.pid} on ${LOOPBACK}:${node.port} (HOME ${home}), answering after ${node.startupMs} ms`);
    await warmUp(node, agent);
    say(`warm-up upload and download done; node RSS ${fmt(memoryOf(node.process.pid)?.rssMiB ?? NaN, 1)} MiB`);
    say();

    // A failed section is reported in the table and the next one still runs (a stalled download says
    // nothing about small uploads); the bench still ends as failed below, so a failure is never a "result".
    let large: LargeFile | undefined;
    if (run('upload')) await goals.section('upload', async () => void (large = await benchUpload(node!, scratch)));
    if (run('upload')) await goals.section('slow upload', () => benchSlowUpload(node!));
    if (run('download')) await goals.section('download', async () => benchDownload(node!, agent, large ?? (await prepareLarge(node!, agent, scratch))));
    if (run('small')) await goals.section('small', () => benchSmall(node!, scratch));
    goals.print();
    goals.throwIfFailed(() => `node output (tail):\n${node!.process.tail()}`);
  } finally {
    agent.destroy();
    if (node) {
      await node.process.stop(20_000);
      const code = node.process.child.exitCode;
      say(`files node stopped (exit ${code ?? node.process.child.signalCode})`);
    }
    await stopAllTracked();
    removeScratchDirs();
  }
}
