// Main-thread side of the load generator: builds the request bytes (GETs, or POSTs with a fixed body), runs
// bench/support/load.worker.js in its own worker thread, and turns the raw latencies into a summary. Only
// 127.0.0.1 is accepted.

import { Worker } from 'node:worker_threads';
import { summarize, type LatencySummary } from './stats.js';

export interface LoadRequest {
  readonly host: string;
  readonly port: number;
  /** Complete requests, head and body (HTTP/1.1, keep-alive), sent round-robin across all connections. */
  readonly requests: readonly string[];
  readonly connections: number;
  /** Time-based warm-up: answers completed before it ends are not recorded. */
  readonly warmupMs: number;
  /** Count-based warm-up: the first N requests are not recorded. */
  readonly warmupRequests: number;
  /** Stop issuing requests this long after warm-up (closed loop: requests in flight still finish). */
  readonly durationMs?: number;
  /** Stop after this many recorded requests. */
  readonly maxRequests?: number;
  /** Hard bound on top of warm-up + duration: every socket is destroyed then, whatever is pending. */
  readonly maxRunMs: number;
}

export interface LoadResult {
  readonly completed: number;
  readonly warmupCompleted: number;
  readonly windowSeconds: number;
  readonly latenciesMicros: Float64Array;
  readonly statusErrors: number;
  readonly socketErrors: number;
  readonly protocolErrors: number;
  readonly reconnects: number;
  readonly bytesReceived: number;
  /** Body bytes of the last answer completed (Content-Length, or the sum of its chunks): a sanity check of what was measured. */
  readonly lastBodyBytes: number;
}

export interface LoadSummary extends LatencySummary {
  readonly requestsPerSecond: number;
  readonly completed: number;
  readonly errors: number;
  readonly errorDetail: string;
  readonly bodyBytes: number;
}

const LOOPBACK = '127.0.0.1';

/** A POST sent as it is on every turn: one body, one content type. */
export interface PostRequest {
  readonly path: string;
  readonly contentType: string;
  readonly body: string;
}

/** The request line and the headers every request carries, up to (not including) the blank line. */
function requestHead(method: 'GET' | 'POST', port: number, path: string, headers: Readonly<Record<string, string>> = {}): string {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return `${method} ${path} HTTP/1.1\r\nHost: ${LOOPBACK}:${port}\r\nUser-Agent: adm-infra-bench\r\nAccept: */*\r\n${extra}`;
}

/** A GET request head for `path` on the loopback port. */
export function getRequest(port: number, path: string, headers?: Readonly<Record<string, string>>): string {
  return `${requestHead('GET', port, path, headers)}\r\n`;
}

/** A complete POST request, its body framed by Content-Length (in UTF-8 bytes, as the worker sends it). */
export function postRequest(port: number, post: PostRequest, headers?: Readonly<Record<string, string>>): string {
  return `${requestHead('POST', port, post.path, headers)}Content-Type: ${post.contentType}\r\nContent-Length: ${Buffer.byteLength(post.body)}\r\n\r\n${post.body}`;
}

export interface LoadOptions {
  readonly port: number;
  /** GETs of these paths, sent round-robin across all connections (then `posts`, in the same rotation). */
  readonly paths?: readonly string[];
  /** POSTs, each with its fixed body. */
  readonly posts?: readonly PostRequest[];
  /** Extra headers every request carries (e.g. an admin key). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly connections: number;
  readonly warmupMs?: number;
  readonly warmupRequests?: number;
  readonly durationMs?: number;
  readonly maxRequests?: number;
}

/** Workers currently running, so an interrupted bench can terminate them. */
const running = new Set<Worker>();

export function terminateLoadWorkers(): void {
  for (const worker of running) void worker.terminate();
  running.clear();
}

export async function runLoad(options: LoadOptions): Promise<LoadSummary> {
  if (options.durationMs === undefined && options.maxRequests === undefined) throw new Error('a load run needs a duration or a request count');
  if (!(options.connections >= 1 && options.connections <= 1000)) throw new Error(`connections out of range: ${options.connections}`);
  const spec: LoadRequest = {
    host: LOOPBACK,
    port: options.port,
    requests: [
      ...(options.paths ?? []).map((path) => getRequest(options.port, path, options.headers)),
      ...(options.posts ?? []).map((post) => postRequest(options.port, post, options.headers)),
    ],
    connections: options.connections,
    warmupMs: options.warmupMs ?? 0,
    warmupRequests: options.warmupRequests ?? 0,
    ...(options.durationMs !== undefined ? { durationMs: options.durationMs } : {}),
    ...(options.maxRequests !== undefined ? { maxRequests: options.maxRequests } : {}),
    // Count-based runs are bounded too: 2 minutes is far beyond any sane sequential run here.
    maxRunMs: options.durationMs !== undefined ? 15_000 : 120_000,
  };
  if (spec.requests.length === 0) throw new Error('a load run needs paths or posts to send');
  const worker = new Worker(new URL('./load.worker.js', import.meta.url), { workerData: spec });
  running.add(worker);
  const outerBoundMs = spec.warmupMs + (spec.durationMs ?? 0) + spec.maxRunMs + 10_000;
  try {
    const result = await new Promise<LoadResult>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`load worker did not report within ${outerBoundMs} ms`)), outerBoundMs);
      worker.once('message', (message: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
        clearTimeout(timer);
        if (message.ok) resolve(message.result);
        else reject(new Error(`load worker failed: ${message.error}`));
      });
      worker.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      worker.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`load worker exited (${code}) without a result`));
      });
    });
    const errors = result.statusErrors + result.socketErrors + result.protocolErrors;
    const detail = errors === 0 ? '' : `status ${result.statusErrors}, socket ${result.socketErrors}, protocol ${result.protocolErrors}, reconnects ${result.reconnects}`;
    return {
      ...summarize(result.latenciesMicros),
      requestsPerSecond: result.windowSeconds > 0 ? result.completed / result.windowSeconds : 0,
      completed: result.completed,
      errors,
      errorDetail: detail,
      bodyBytes: result.lastBodyBytes,
    };
  } finally {
    running.delete(worker);
    await worker.terminate();
  }
}
