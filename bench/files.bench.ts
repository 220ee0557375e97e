// `npm run bench -- files`: the files node's timing goals, each against a baseline measured in the same run.
//
// One node: the built CLI (`adm-infra files`) as its own process with its own HOME, on 127.0.0.1.
//
// 1. upload:   a 256 MiB file POSTed as multipart/form-data, against importing the same bytes with the node's
//              exact importer settings (IMPORTER_SETTINGS) straight into a fresh FsBlockstore in this process
//              (no HTTP). Both must produce the same CID. Goal: HTTP <= 1.2x the baseline, and the node's
//              peak RSS under 200 MiB during the upload (sampled every 100 ms, and the kernel's VmHWM).
// 2. download: GET /api/file/<cid> of that file, reading the whole body, against `unixfs.cat` in this
//              process over an FsBlockstore on disk holding the same blocks. Goal: HTTP <= 1.2x the baseline.
//              Time to first byte printed for both. Then 4 concurrent downloads of that file: goal: the node's peak
//              RSS under 200 MiB (its VmHWM reset first, and sampled every 100 ms).
// 3. small:    200 uploads of distinct 4 KiB files from 16 concurrent keep-alive clients: files/s, p50/p99.
//              No goal; the same imports in-process (16 at a time, no HTTP) are shown for reference.
//
// The data is generated from a seeded PRNG, chunk by chunk, so every run measures the same bytes and no
// 256 MiB buffer exists in this process. The generator is part of both sides of every comparison; its own
// cost is printed so it can be subtracted by eye.

import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
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
  type DownloadAnswer,
  type FilesNodeProcess,
  type UploadAnswer,
} from './support/files-node.js';
import { GoalReport } from './support/goals.js';
import { cpuSecondsOf, memoryOf, resetPeakRss, stopAllTracked } from './support/processes.js';
import { makeScratchDir, removeScratchDirs } from './support/scratch.js';
import { fmt, fmtInt, summarizeMs, table } from './support/stats.js';

export const FILES_SECTIONS = ['upload', 'download', 'small'] as const;

// Goals (the issue of this benchmark).
const GOAL_UPLOAD_RATIO = 1.2;
const GOAL_UPLOAD_PEAK_RSS_MIB = 200;
const GOAL_DOWNLOAD_RATIO = 1.2;
const GOAL_CONCURRENT_DOWNLOAD_PEAK_RSS_MIB = 200;
/** Downloads of the large file at once for the memory goal: a download must not hold its file in memory. */
const CONCURRENT_DOWNLOADS = 4;

const LARGE_SIZE = 256 * MIB;
/** Distinct files per round keep the node from deduplicating a repeated upload into a no-op. */
const UPLOAD_ROUNDS = 5;
const DOWNLOAD_ROUNDS = 5;
const SMALL_FILES = 200;
const SMALL_SIZE = 4096;
const SMALL_CLIENTS = 16;
const SMALL_WARMUP = 16;
const RSS_SAMPLE_MS = 100;
const LARGE_SEED_BASE = 1;
const SMALL_SEED_BASE = 100_000;
const WARMUP_SEED = 999_999;

const say = (text = ''): void => void process.stdout.write(`${text}\n`);
const median = (values: readonly number[]): number => summarizeMs(values).p50;

// ---------------------------------------------------------------------------------------------
// Deterministic data.

function smallFile(index: number): Uint8Array {
  return seededBytes(SMALL_SEED_BASE + index, SMALL_SIZE).next().value as Uint8Array;
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

async function importInProcess(dir: string, content: Iterable<Uint8Array>): Promise<{ cid: string; ms: number }> {
  const blockstore = new FsBlockstore(dir);
  await blockstore.open();
  try {
    const started = nowMs();
    // importByteStream, the importer entry the node's upload session calls: a plain `importer()` over one
    // unnamed file gives the same CID, but this keeps the baseline on the node's exact code path.
    const result = await importByteStream(content, blockstore, IMPORTER_SETTINGS);
    return { cid: result.cid.toString(), ms: nowMs() - started };
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
// 1. Upload of 256 MiB.

async function benchUpload(node: FilesNodeProcess, agent: Agent, scratch: string): Promise<LargeFile> {
  say(`== 1. upload: ${fmtInt(LARGE_SIZE / MIB)} MiB over HTTP vs importByteStream into a fresh FsBlockstore in-process, ${UPLOAD_ROUNDS} rounds of distinct files (order alternates)`);
  const genStarted = nowMs();
  let generated = 0;
  for (const chunk of seededBytes(LARGE_SEED_BASE, LARGE_SIZE)) generated += chunk.length;
  const genMs = nowMs() - genStarted;
  say(`generating ${fmtInt(generated / MIB)} MiB alone takes ${seconds(genMs)} (${mibPerSecond(generated, genMs)}); both sides include it`);
  const idle = memoryOf(node.process.pid);
  if (idle) say(`node RSS before the uploads: ${fmt(idle.rssMiB, 1)} MiB (VmHWM so far ${fmt(idle.peakMiB, 1)} MiB)`);

  const table1: string[][] = [];
  const httpMs: number[] = [];
  const baseMs: number[] = [];
  let peakSampled = 0;
  let peakHwm = 0;
  let first: LargeFile | undefined;
  for (let round = 0; round < UPLOAD_ROUNDS; round++) {
    const seed = LARGE_SEED_BASE + round;
    const baselineStore = join(scratch, `baseline-upload-${round}`);
    const runBaseline = async () => {
      const base = await importInProcess(baselineStore, seededBytes(seed, LARGE_SIZE));
      baseMs.push(base.ms);
      table1.push([`round ${round + 1}`, 'baseline: importer -> FsBlockstore', seconds(base.ms), mibPerSecond(LARGE_SIZE, base.ms), '-', '-', '-', base.cid]);
      return base;
    };
    const runHttp = async () => {
      const cpuBefore = cpuSecondsOf(node.process.pid);
      const { result, sampledPeakMiB, hwmMiB } = await withRssSampling(node.process.pid, () =>
        uploadFile(node.port, agent, `bench-${seed}.bin`, seededBytes(seed, LARGE_SIZE), LARGE_SIZE),
      );
      const cpuAfter = cpuSecondsOf(node.process.pid);
      if (result.status !== 200 || result.cid === undefined) throw new Error(`HTTP upload answered ${result.status}: ${result.body.slice(0, 500)}`);
      httpMs.push(result.ms);
      peakSampled = Math.max(peakSampled, sampledPeakMiB);
      peakHwm = Math.max(peakHwm, hwmMiB);
      const cpu = cpuBefore !== undefined && cpuAfter !== undefined ? `${fmt(((cpuAfter - cpuBefore) * 1000 * 100) / result.ms, 0)}%` : '-';
      table1.push([`round ${round + 1}`, 'HTTP POST /api/file/upload', seconds(result.ms), mibPerSecond(LARGE_SIZE, result.ms), fmt(sampledPeakMiB, 1), fmt(hwmMiB, 1), cpu, result.cid]);
      return result;
    };
    // Alternating the order spreads any effect of the disk's writeback of the previous import over both sides.
    let base: { cid: string };
    let http: UploadAnswer;
    if (round % 2 === 0) {
      base = await runBaseline();
      http = await runHttp();
    } else {
      http = await runHttp();
      base = await runBaseline();
    }
    if (http.cid !== base.cid) throw new Error(`round ${round + 1}: the node stored CID ${http.cid}, the in-process import gave ${base.cid}: not the same importer settings`);
    if (round === 0) first = { seed, cid: base.cid, baselineStore };
    else rmSync(baselineStore, { recursive: true, force: true });
  }
  say();
  say(table(['round', 'side', 'time', 'throughput', 'node RSS peak MiB (sampled)', 'node VmHWM MiB', 'node CPU', 'CID'], table1));
  say();
  const http = median(httpMs);
  const base = median(baseMs);
  const ratio = http / base;
  say(`median: HTTP ${seconds(http)}, baseline ${seconds(base)}, ratio ${fmt(ratio)}x; same CID on both sides in every round`);
  say();
  goals.judge(`upload ${LARGE_SIZE / MIB} MiB, HTTP / importer (median of ${UPLOAD_ROUNDS})`, seconds(http), seconds(base), `${fmt(ratio)}x`, `<= ${GOAL_UPLOAD_RATIO}x`, ratio <= GOAL_UPLOAD_RATIO);
  // VmHWM is exact (the kernel's high-water mark) but counts everything since the node started; the
  // sampled peak only sees the upload windows. The goal is judged on the larger of the two.
  const peak = Math.max(peakSampled, Number.isFinite(peakHwm) ? peakHwm : 0);
  goals.judge(
    'node peak RSS during the uploads',
    `${fmt(peak, 1)} MiB (sampled ${fmt(peakSampled, 1)}, VmHWM ${fmt(peakHwm, 1)})`,
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

async function benchSmall(node: FilesNodeProcess, scratch: string): Promise<void> {
  say(`== 3. small: ${SMALL_FILES} uploads of distinct ${SMALL_SIZE / 1024} KiB files, ${SMALL_CLIENTS} concurrent keep-alive clients (after ${SMALL_WARMUP} warm-up uploads)`);
  const files = Array.from({ length: SMALL_FILES + SMALL_WARMUP }, (_, i) => smallFile(i));
  const expected = await Promise.all(files.map(rawCid));
  // One socket per client, reused for every request of that client.
  const agent = new Agent({ keepAlive: true, maxSockets: SMALL_CLIENTS });
  try {
    const upload = async (index: number) => {
      const answer = await uploadFile(node.port, agent, `small-${index}.bin`, [files[index]!], SMALL_SIZE);
      if (answer.status !== 200) throw new Error(`small upload ${index} answered ${answer.status}: ${answer.body.slice(0, 300)}`);
      if (answer.cid !== expected[index]) throw new Error(`small upload ${index}: CID ${answer.cid}, expected ${expected[index]}`);
    };
    await concurrently(SMALL_WARMUP, SMALL_CLIENTS, (i) => upload(SMALL_FILES + i));
    const cpuBefore = cpuSecondsOf(node.process.pid);
    const http = await concurrently(SMALL_FILES, SMALL_CLIENTS, upload);
    const cpuAfter = cpuSecondsOf(node.process.pid);

    // Reference: the same imports in-process, as many at a time, into a fresh FsBlockstore.
    const store = new FsBlockstore(join(scratch, 'baseline-small'));
    await store.open();
    let ref: { latencies: number[]; wallMs: number };
    try {
      ref = await concurrently(SMALL_FILES, SMALL_CLIENTS, async (index) => {
        const result = await importByteStream([files[index]!], store, IMPORTER_SETTINGS);
        if (result.cid.toString() !== expected[index]) throw new Error(`in-process import ${index}: CID ${result.cid}, expected ${expected[index]}`);
      });
    } finally {
      await store.close();
    }

    const h = summarizeMs(http.latencies);
    const r = summarizeMs(ref.latencies);
    const httpRate = (SMALL_FILES / http.wallMs) * 1000;
    const refRate = (SMALL_FILES / ref.wallMs) * 1000;
    const cpu = cpuBefore !== undefined && cpuAfter !== undefined ? `${fmt(((cpuAfter - cpuBefore) * 1000 * 100) / http.wallMs, 0)}%` : '-';
    say();
    say(
      table(
        ['side', 'files/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'files', 'node CPU'],
        [
          ['HTTP POST /api/file/upload', fmt(httpRate, 1), fmt(h.p50), fmt(h.p90), fmt(h.p99), fmt(h.max), fmtInt(h.count), cpu],
          ['reference: importer -> FsBlockstore', fmt(refRate, 1), fmt(r.p50), fmt(r.p90), fmt(r.p99), fmt(r.max), fmtInt(r.count), '-'],
        ],
      ),
    );
    say();
    say(`every answer carried the expected CID; node RSS after: ${fmt(memoryOf(node.process.pid)?.rssMiB ?? NaN, 1)} MiB`);
    say();
    goals.info(`small uploads, ${SMALL_CLIENTS} clients: files/s`, fmt(httpRate, 1), fmt(refRate, 1), `${fmt(httpRate / refRate)}x`);
    goals.info('small uploads: p50 / p99 latency', `${fmt(h.p50)} / ${fmt(h.p99)} ms`, `${fmt(r.p50)} / ${fmt(r.p99)} ms`);
  } finally {
    agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runFilesBench(options: BenchOptions): Promise<void> {
  const run = (section: (typeof FILES_SECTIONS)[number]) => options.only.length === 0 || options.only.includes(section);
  goals.begin('files benchmark');
  if (cpus().length < 3) {
    goals.notes.push(
      `${cpus().length} cores: in the HTTP runs the client (generator, multipart writer, reader) and the node compete for them, ` +
        'while each in-process baseline is one process; the HTTP ratios carry that contention.',
    );
  }
  const home = makeScratchDir('adm-bench-files-home');
  const scratch = makeScratchDir('adm-bench-files-baseline');
  // The large transfers run one at a time on one reused connection.
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
    if (run('upload')) await goals.section('upload', async () => void (large = await benchUpload(node!, agent, scratch)));
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
