// The files node as a benchmark's own process, and the client side of its upload and download routes: shared by
// `npm run bench -- files` (one node) and `npm run bench -- cluster` (three replicating nodes and a single-copy
// baseline). Every node runs the built CLI (`adm-infra files`) with its own HOME, is tracked by pid
// (support/processes.ts) and answers on 127.0.0.1 only.

import { createHash } from 'node:crypto';
import { accessSync, constants as fsConstants, createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import pLimit from 'p-limit';
import { spawnTracked, type ManagedProcess } from './processes.js';
import { fmtInt } from './stats.js';

export const MIB = 1_048_576;
export const LOOPBACK = '127.0.0.1';
/** Generator chunk: the importer's own chunk size, so an in-process baseline does not re-slice more than it must. */
const GEN_CHUNK = MIB;
/** How long a started node may take to answer GET / (and a warm-up upload to succeed). */
export const NODE_READY_TIMEOUT_MS = 60_000;
/**
 * A request that moves no byte for this long has stalled (socket idle timeout; the longest legitimate
 * silence is the node importing or reading a whole large file, a few seconds here).
 */
export const REQUEST_IDLE_MS = 60_000;

const DIST = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(DIST, 'src', 'cli.js');
export const POLYFILL = join(DIST, 'src', 'polyfill.js');

export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// Deterministic data.

/**
 * `size` bytes from xorshift128 seeded through mulberry32, in fresh `GEN_CHUNK` buffers (a consumer may keep
 * a chunk, e.g. a socket write queue, so none is reused). Words are written in the platform's byte order:
 * stable on one machine, which is all a same-run comparison needs.
 */
export function* seededBytes(seed: number, size: number): Generator<Uint8Array> {
  let m = seed >>> 0;
  const next32 = () => {
    m = (m + 0x6d2b79f5) >>> 0;
    let t = m;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  let x = next32() | 1;
  let y = next32();
  let z = next32();
  let w = next32();
  for (let offset = 0; offset < size; offset += GEN_CHUNK) {
    const length = Math.min(GEN_CHUNK, size - offset);
    const words = new Uint32Array(Math.ceil(length / 4));
    for (let i = 0; i < words.length; i++) {
      const t = x ^ (x << 11);
      x = y;
      y = z;
      z = w;
      w = (w ^ (w >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
      words[i] = w;
    }
    yield new Uint8Array(words.buffer, 0, length);
  }
}

/** A file of at most one chunk is one raw block (notes B.1): its CID needs no importer to predict. */
export async function rawCid(bytes: Uint8Array): Promise<string> {
  return CID.createV1(raw.code, await sha256.digest(bytes)).toString();
}

// ---------------------------------------------------------------------------------------------
// HTTP client (node:http, so the body can be streamed with backpressure and a computed Content-Length).

const BOUNDARY = '----adm-infra-bench-7d1f0c2e9b';

function multipartParts(filename: string): { head: Buffer; tail: Buffer } {
  return {
    head: Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    tail: Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  };
}

export interface UploadAnswer {
  readonly status: number;
  readonly cid: string | undefined;
  readonly body: string;
  /** The body parsed as JSON; undefined when it is not JSON (an error page). */
  readonly json: unknown;
  readonly ms: number;
}

/**
 * POSTs a multipart/form-data body of `bodyBytes` bytes whose writing `send` does (with backpressure); resolves with
 * the answer. `send` is told to stop writing once an answer (an early error status) or a closed socket ended the
 * request.
 */
function postUpload(
  port: number,
  agent: Agent,
  what: string,
  bodyBytes: number,
  send: (request: ClientRequest, stopped: () => boolean) => Promise<void>,
): Promise<UploadAnswer> {
  const started = nowMs();
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      request.destroy();
      reject(error);
    };
    const request = httpRequest({
      host: LOOPBACK,
      port,
      method: 'POST',
      path: '/api/file/upload',
      agent,
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': bodyBytes },
    });
    request.setTimeout(REQUEST_IDLE_MS, () => fail(new Error(`upload of ${what}: no progress for ${REQUEST_IDLE_MS / 1000} s`)));
    request.once('error', fail);
    let answered = false;
    request.once('response', (response: IncomingMessage) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', fail);
      response.once('end', () => {
        if (settled) return;
        settled = true;
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(body);
        } catch {
          // Not JSON: an error page; the status tells.
        }
        const cid = (json as { cids?: string[] } | undefined)?.cids?.[0];
        resolve({ status: response.statusCode ?? 0, cid, body, json, ms: nowMs() - started });
      });
    });
    send(request, () => settled || answered || request.destroyed).catch(fail);
  });
}

/** POSTs one file as multipart/form-data (one part named `files`), writing `content` as it is produced. */
export function uploadFile(port: number, agent: Agent, filename: string, content: Iterable<Uint8Array>, size: number): Promise<UploadAnswer> {
  const { head, tail } = multipartParts(filename);
  return postUpload(port, agent, filename, head.length + size + tail.length, async (request, stopped) => {
    // The body is written with backpressure: at most one socket buffer ahead of the node.
    const drained = () =>
      new Promise<void>((done) => {
        const finish = () => {
          request.off('drain', finish);
          request.off('close', finish);
          done();
        };
        request.once('drain', finish);
        request.once('close', finish);
      });
    for (const piece of [[head], content, [tail]] as Iterable<Uint8Array>[]) {
      for (const chunk of piece) {
        // An early answer (an error status) or a closed socket ends the writing.
        if (stopped()) return;
        if (!request.write(chunk)) await drained();
      }
    }
    request.end();
  });
}

/**
 * POSTs a file on disk as multipart/form-data (one part named `files`, the file's base name), as a Node program
 * would: the part's bytes come from `fs.createReadStream` (64 KiB reads) piped into the request, Content-Length set
 * from the file's size.
 */
export function uploadFileFromDisk(port: number, agent: Agent, path: string): Promise<UploadAnswer> {
  const filename = basename(path);
  const { head, tail } = multipartParts(filename);
  const size = statSync(path).size;
  return postUpload(port, agent, filename, head.length + size + tail.length, (request, stopped) => {
    request.write(head);
    const file = createReadStream(path);
    return new Promise<void>((resolve, reject) => {
      // An early answer or a closed socket: stop reading the file (pipe stops on the request's close by itself).
      request.once('close', () => {
        if (stopped()) file.destroy();
      });
      file.once('error', reject);
      file.once('end', () => {
        if (!stopped()) request.end(tail);
        resolve();
      });
      file.pipe(request, { end: false });
    });
  });
}

/** Where curl is looked for; the bench says so loudly and skips the curl client when it is not there. */
export const CURL = '/usr/bin/curl';

export function curlAvailable(): boolean {
  try {
    accessSync(CURL, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** How long a curl upload may take in all (`--max-time`): far beyond a 256 MiB upload on loopback. */
const CURL_MAX_SECONDS = 300;

export interface CurlAnswer extends UploadAnswer {
  /** curl's own `%{time_total}`, in ms (the bench's `ms` also counts starting the curl process). */
  readonly curlMs: number;
  readonly pid: number;
}

/**
 * `curl -F files=@<path> http://127.0.0.1:<port>/api/file/upload`, what a user types: curl builds the multipart
 * body from the file on disk, sends `Expect: 100-continue` for a large body and streams the file. The answer's body
 * goes to `answerPath`; `--noproxy '*'` keeps a proxy of the environment out of a loopback request. The process is
 * tracked by pid (support/processes.ts) and `ms` runs from its start to its exit.
 */
export async function curlUpload(port: number, path: string, answerPath: string): Promise<CurlAnswer> {
  const started = nowMs();
  const curl = spawnTracked('curl', CURL, [
    '--silent',
    '--show-error',
    '--noproxy',
    '*',
    '--max-time',
    String(CURL_MAX_SECONDS),
    '--output',
    answerPath,
    '--write-out',
    'curl-status %{http_code} %{time_total}\n',
    '--form',
    `files=@${path}`,
    `http://${LOOPBACK}:${port}/api/file/upload`,
  ], { env: { PATH: process.env.PATH } });
  const code = await new Promise<number | null>((resolve) => {
    if (curl.exited()) resolve(curl.child.exitCode);
    else curl.child.once('exit', (exitCode) => resolve(exitCode));
  });
  const ms = nowMs() - started;
  const output = curl.tail();
  const status = /curl-status (\d+) ([\d.]+)/.exec(output);
  if (code !== 0 || !status) throw new Error(`curl exited with ${code ?? curl.child.signalCode}: ${output.trim().slice(0, 500)}`);
  let body = '';
  try {
    body = readFileSync(answerPath, 'utf8');
  } catch {
    // No body written: the status tells.
  }
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    // Not JSON: an error page; the status tells.
  }
  const cid = (json as { cids?: string[] } | undefined)?.cids?.[0];
  return { status: Number(status[1]), cid, body, json, ms, curlMs: Number(status[2]) * 1000, pid: curl.pid };
}

/**
 * One upload whose body is written at `bytesPerSecond` (quarter-second steps) on its own connection, as a phone on a
 * poor network sends it: slower than uWS re-arms its 10 s idle timer (160 KB per 10 s).
 */
export function pacedUpload(port: number, filename: string, content: Buffer, bytesPerSecond: number): Promise<UploadAnswer> {
  const { head, tail } = multipartParts(filename);
  const started = nowMs();
  return new Promise((resolve, reject) => {
    let answered = false;
    const request = httpRequest(
      {
        host: LOOPBACK,
        port,
        method: 'POST',
        path: '/api/file/upload',
        agent: false,
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': head.length + content.length + tail.length },
      },
      (response: IncomingMessage) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(body);
          } catch {
            // Not JSON: the status tells.
          }
          resolve({ status: response.statusCode ?? 0, cid: (json as { cids?: string[] } | undefined)?.cids?.[0], body, json, ms: nowMs() - started });
        });
      },
    );
    request.once('error', (error) => reject(new Error(`paced upload of ${filename}: ${error.message} after ${Math.round(nowMs() - started)} ms`)));
    request.write(head);
    const step = Math.max(1, Math.floor(bytesPerSecond / 4));
    let sent = 0;
    const next = () => {
      if (answered || request.destroyed) return;
      if (sent >= content.length) return void request.end(tail);
      request.write(content.subarray(sent, sent + step));
      sent += step;
      setTimeout(next, 250);
    };
    next();
  });
}

export interface DownloadAnswer {
  readonly status: number;
  readonly bytes: number;
  /** From the request to the first body byte. */
  readonly ttfbMs: number;
  readonly ms: number;
  readonly sha256?: string;
}

export function downloadFile(port: number, agent: Agent, cid: string, hash: boolean): Promise<DownloadAnswer> {
  const started = nowMs();
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      request.destroy();
      reject(error);
    };
    let bytes = 0;
    const request = httpRequest({ host: LOOPBACK, port, method: 'GET', path: `/api/file/${cid}`, agent });
    request.setTimeout(REQUEST_IDLE_MS, () => fail(new Error(`download of ${cid}: stalled, no byte for ${REQUEST_IDLE_MS / 1000} s after ${fmtInt(bytes)} bytes`)));
    request.once('error', fail);
    request.once('response', (response: IncomingMessage) => {
      const digest = hash ? createHash('sha256') : undefined;
      let ttfbMs = NaN;
      response.on('data', (chunk: Buffer) => {
        if (bytes === 0) ttfbMs = nowMs() - started;
        bytes += chunk.length;
        digest?.update(chunk);
      });
      response.once('error', fail);
      response.once('end', () => {
        if (settled) return;
        settled = true;
        resolve({ status: response.statusCode ?? 0, bytes, ttfbMs, ms: nowMs() - started, sha256: digest?.digest('hex') });
      });
    });
    request.end();
  });
}

/** Runs `count` jobs, `workers` at a time (p-limit); each job's latency in ms. */
export async function concurrently(count: number, workers: number, job: (index: number) => Promise<void>): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  const started = nowMs();
  await pLimit(Math.max(1, workers)).map(Array.from({ length: count }, (_, index) => index), async (index) => {
    const t0 = nowMs();
    await job(index);
    latencies.push(nowMs() - t0);
  });
  return { latencies, wallMs: nowMs() - started };
}

// ---------------------------------------------------------------------------------------------
// The node as a process.

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface FilesNodeProcess {
  readonly process: ManagedProcess;
  readonly port: number;
  readonly startupMs: number;
}

export interface StartFilesNodeOptions {
  /** The tracked process's name, also used in error messages (default `files node`). */
  readonly label?: string;
  readonly readyTimeoutMs?: number;
}

/**
 * Extra Node flags for every files node a bench starts, from ADM_BENCH_NODE_FLAGS (space-separated), e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the nodes (NODE_OPTIONS refuses --cpu-prof) or `--trace-gc`.
 */
const NODE_FLAGS = (process.env.ADM_BENCH_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');

/**
 * Writes `config` (which must carry its `serverPort`) to `<home>/config.json5` and starts the built CLI as a
 * files node with HOME=`home`: the store lives in `<home>/<storeFolder>` (notes B.7). No ADMIN_PORT: the operator
 * listener stays off. Resolves once GET / answers `IPFS node`.
 */
export async function startFilesNodeProcess(home: string, config: Record<string, unknown> & { serverPort: number }, options: StartFilesNodeOptions = {}): Promise<FilesNodeProcess> {
  const label = options.label ?? 'files node';
  const readyTimeoutMs = options.readyTimeoutMs ?? NODE_READY_TIMEOUT_MS;
  const port = config.serverPort;
  const configPath = join(home, 'config.json5');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  const started = Date.now();
  const managed = spawnTracked(label.replace(/\s+/g, '-'), process.execPath, [...NODE_FLAGS, '--import', POLYFILL, CLI, 'files', '--config', configPath, '--host', LOOPBACK], {
    env: { PATH: process.env.PATH, HOME: home },
  });
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (managed.exited()) throw new Error(`the ${label} exited before it answered:\n${managed.tail()}`);
    if (Date.now() > deadline) throw new Error(`the ${label} did not answer GET / within ${readyTimeoutMs} ms:\n${managed.tail()}`);
    try {
      const response = await fetch(`http://${LOOPBACK}:${port}/`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200 && (await response.text()) === 'IPFS node') break;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  return { process: managed, port, startupMs: Date.now() - started };
}
