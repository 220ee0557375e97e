// The closed-loop HTTP/1.1 keep-alive load generator, run inside a worker thread (bench/support/load.ts)
// so that it never shares an event loop with the process under test or with the bench's own servers.
//
// Each connection has exactly one request in flight (closed loop, no pipelining): it writes the
// precomputed request bytes, parses the status line and Content-Length of the answer, skips the body
// bytes without copying them, records the latency with process.hrtime.bigint() and sends the next
// request at once. Bounded by the connection count, by a duration and/or a request count, and by a
// hard deadline after which every socket is destroyed.

import { connect, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import type { LoadRequest, LoadResult } from './load.js';

const CRLFCRLF = Buffer.from('\r\n\r\n');
/** A response head larger than this is a protocol error, not something to buffer forever. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Reconnects after socket errors, over the whole run (a refused port must not spin). */
const MAX_RECONNECTS = 200;
/** In-flight requests at the end of the window get this long to finish before sockets are destroyed. */
const DRAIN_MS = 5_000;

const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding:[^\r]*chunked/i;
const CONNECTION_CLOSE = /\r\nconnection:[ \t]*close/i;

function run(spec: LoadRequest): Promise<LoadResult> {
  const requests = spec.requests.map((r) => Buffer.from(r));
  if (requests.length === 0) throw new Error('no requests to send');

  const startedAt = process.hrtime.bigint();
  const warmupEnd = startedAt + BigInt(Math.round(spec.warmupMs * 1e6));
  const durationEnd = spec.durationMs === undefined ? undefined : warmupEnd + BigInt(Math.round(spec.durationMs * 1e6));
  const hardDeadlineMs = spec.warmupMs + (spec.durationMs ?? 0) + spec.maxRunMs;

  let latencies = new Float64Array(1 << 16);
  let recorded = 0;
  const record = (microseconds: number): void => {
    if (recorded === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[recorded++] = microseconds;
  };

  let warmupRequests = 0;
  let sent = 0; // requests issued, warm-up included; bounded by spec.warmupRequests + spec.maxRequests
  let statusErrors = 0;
  let socketErrors = 0;
  let protocolErrors = 0;
  let reconnects = 0;
  let bytesReceived = 0;
  let lastBodyBytes = -1;
  let firstMeasured: bigint | undefined;
  let lastMeasured: bigint | undefined;
  let nextRequest = 0;
  let open = 0;
  let stopping = false;

  const requestLimit = spec.maxRequests === undefined ? Infinity : spec.warmupRequests + spec.maxRequests;
  const mayStart = (now: bigint): boolean => {
    if (stopping || sent >= requestLimit) return false;
    if (durationEnd !== undefined && now >= durationEnd) return false;
    return true;
  };

  return new Promise<LoadResult>((resolve) => {
    const sockets = new Set<Socket>();
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(hardDeadline);
      for (const socket of sockets) socket.destroy();
      const end = lastMeasured ?? process.hrtime.bigint();
      const begin = firstMeasured ?? end;
      // Throughput over the measurement window: from the end of warm-up (or the first measured request
      // when warm-up is a request count) to the window's end (or the last measured completion).
      const windowStart = spec.warmupMs > 0 ? warmupEnd : begin;
      const windowEnd = durationEnd !== undefined ? durationEnd : end;
      const windowNs = Number(windowEnd - windowStart);
      const out = latencies.slice(0, recorded);
      resolve({
        completed: recorded,
        warmupCompleted: warmupRequests,
        windowSeconds: windowNs / 1e9,
        latenciesMicros: out,
        statusErrors,
        socketErrors,
        protocolErrors,
        reconnects,
        bytesReceived,
        lastBodyBytes,
      });
    };
    const hardDeadline = setTimeout(finish, hardDeadlineMs);

    const maybeFinish = (): void => {
      if (open === 0 && !mayStart(process.hrtime.bigint())) finish();
    };

    const openConnection = (): void => {
      const socket = connect({ host: spec.host, port: spec.port });
      socket.setNoDelay(true);
      sockets.add(socket);
      open++;
      let sentAt = 0n;
      let inFlight = false;
      let warm = true;
      let head: Buffer | undefined; // partial response head carried over between chunks
      let remaining = -1; // body bytes still expected; -1 while reading the head
      let closeAfter = false;
      let ok = true;

      const send = (now: bigint): void => {
        const request = requests[nextRequest]!;
        nextRequest = (nextRequest + 1) % requests.length;
        sent++;
        warm = now < warmupEnd || sent <= spec.warmupRequests;
        inFlight = true;
        sentAt = now;
        socket.write(request);
      };

      const complete = (): void => {
        const now = process.hrtime.bigint();
        inFlight = false;
        if (!ok) statusErrors++;
        if (warm) warmupRequests++;
        else if (durationEnd === undefined || now <= durationEnd) {
          record(Number(now - sentAt) / 1e3);
          firstMeasured ??= sentAt;
          lastMeasured = now;
        }
        if (!closeAfter && mayStart(now)) send(now);
        else socket.destroy(); // the answer is complete: nothing more to wait for on this socket
      };

      socket.on('connect', () => {
        const now = process.hrtime.bigint();
        if (mayStart(now)) send(now);
        else socket.destroy();
      });

      socket.on('data', (data: Buffer) => {
        bytesReceived += data.length;
        let chunk = data;
        let offset = 0;
        while (offset < chunk.length) {
          if (!inFlight) {
            // Bytes nobody asked for: the server pipelined or mis-framed an answer.
            protocolErrors++;
            socket.destroy();
            return;
          }
          if (remaining < 0) {
            if (head !== undefined) {
              chunk = Buffer.concat([head, chunk.subarray(offset)]);
              offset = 0;
              head = undefined;
            }
            const end = chunk.indexOf(CRLFCRLF, offset);
            if (end < 0) {
              if (chunk.length - offset > MAX_HEAD_BYTES) {
                protocolErrors++;
                socket.destroy();
                return;
              }
              head = Buffer.from(chunk.subarray(offset));
              return;
            }
            const text = chunk.toString('latin1', offset, end);
            const status = Number(text.slice(9, 12));
            const length = CONTENT_LENGTH.exec(text);
            if (!text.startsWith('HTTP/1.1 ') || length === null || CHUNKED.test(text)) {
              protocolErrors++;
              socket.destroy();
              return;
            }
            ok = status >= 200 && status < 300;
            closeAfter = CONNECTION_CLOSE.test(text);
            remaining = Number(length[1]);
            lastBodyBytes = remaining;
            offset = end + 4;
          }
          const take = Math.min(remaining, chunk.length - offset);
          remaining -= take;
          offset += take;
          if (remaining === 0) {
            remaining = -1;
            complete();
          }
        }
      });

      socket.on('error', () => {
        socketErrors++;
      });

      socket.on('close', () => {
        sockets.delete(socket);
        open--;
        // A connection lost mid-run is replaced (bounded), so the concurrency stays what was asked for.
        if (inFlight && !finished) {
          inFlight = false;
          if (reconnects < MAX_RECONNECTS && mayStart(process.hrtime.bigint())) {
            reconnects++;
            openConnection();
            return;
          }
        }
        maybeFinish();
      });
    };

    for (let i = 0; i < spec.connections; i++) openConnection();

    // Once the window has closed, give in-flight requests DRAIN_MS before destroying their sockets.
    if (durationEnd !== undefined) {
      const drainAt = spec.warmupMs + (spec.durationMs ?? 0) + DRAIN_MS;
      setTimeout(() => {
        stopping = true;
        finish();
      }, Math.min(drainAt, hardDeadlineMs)).unref();
    }
  });
}

const port = parentPort;
if (port === null) throw new Error('load.worker.js must run in a worker thread');
run(workerData as LoadRequest).then(
  (result) => port.postMessage({ ok: true, result }, [result.latenciesMicros.buffer as ArrayBuffer]),
  (error: unknown) => port.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) }),
);
