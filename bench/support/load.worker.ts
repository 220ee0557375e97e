// The closed-loop HTTP/1.1 keep-alive load generator, run inside a worker thread (bench/support/load.ts)
// so that it never shares an event loop with the process under test or with the bench's own servers.
//
// Each connection has exactly one request in flight (closed loop, no pipelining): it writes the
// precomputed request bytes (a GET head, or a POST with its body), parses the status line and the framing
// of the answer, skips the body bytes without copying them, records the latency with
// process.hrtime.bigint() and sends the next request at once. An answer is framed by Content-Length (uWS)
// or chunked (node:http's `writeHead(...)` without a length, as the console bench's fake ADAMANT node
// answers; RFC 9112 §7.1: size lines, data, a zero size, trailers). Bounded by the connection count, by a
// duration and/or a request count, and by a hard deadline after which every socket is destroyed.

import { connect, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import type { LoadRequest, LoadResult } from './load.js';

const CRLF = Buffer.from('\r\n');
const CRLFCRLF = Buffer.from('\r\n\r\n');
/** A response head (or a chunk-size or trailer line) larger than this is a protocol error, not something to buffer forever. */
const MAX_HEAD_BYTES = 64 * 1024;
/** Reconnects after socket errors, over the whole run (a refused port must not spin). */
const MAX_RECONNECTS = 200;
/** In-flight requests at the end of the window get this long to finish before sockets are destroyed. */
const DRAIN_MS = 5_000;

const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding:[^\r]*chunked/i;
const CONNECTION_CLOSE = /\r\nconnection:[ \t]*close/i;
/** A chunk-size line: hex digits (at most 4 GiB a chunk), optional extensions after `;`. */
const CHUNK_SIZE = /^([0-9a-f]{1,8})[ \t]*(?:;.*)?$/i;

/**
 * What a connection is reading: the response head; a Content-Length body; or, chunked, a chunk-size line,
 * a chunk's data, the CRLF after that data, the trailer lines up to the blank one.
 */
type Reading = 'head' | 'body' | 'chunkSize' | 'chunkData' | 'chunkEnd' | 'trailer';

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
      let reading: Reading = 'head';
      let carry: Buffer | undefined; // a partial head or line carried over between data events
      let remaining = 0; // bytes still expected of a Content-Length body or of a chunk's data
      let bodyBytes = 0;
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
        reading = 'head';
        lastBodyBytes = bodyBytes;
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

      const protocolError = (): void => {
        protocolErrors++;
        socket.destroy();
      };

      /** Acts on one complete head or line (its terminator consumed); false on a protocol error. */
      const onText = (text: string): boolean => {
        switch (reading) {
          case 'head': {
            if (!text.startsWith('HTTP/1.1 ')) return false;
            const status = Number(text.slice(9, 12));
            ok = status >= 200 && status < 300;
            closeAfter = CONNECTION_CLOSE.test(text);
            bodyBytes = 0;
            // Transfer-Encoding wins over a Content-Length sent along with it (RFC 9112 §6.3).
            if (CHUNKED.test(text)) {
              reading = 'chunkSize';
              return true;
            }
            const length = CONTENT_LENGTH.exec(text);
            // Without a length only the answers that never have a body are complete (RFC 9112 §6.3).
            if (length === null && status !== 204 && status !== 304) return false;
            remaining = length === null ? 0 : Number(length[1]);
            bodyBytes = remaining;
            reading = 'body';
            if (remaining === 0) complete();
            return true;
          }
          case 'chunkSize': {
            const size = CHUNK_SIZE.exec(text);
            if (size === null) return false;
            remaining = Number.parseInt(size[1]!, 16);
            bodyBytes += remaining;
            reading = remaining === 0 ? 'trailer' : 'chunkData';
            return true;
          }
          case 'chunkEnd':
            reading = 'chunkSize';
            return text === '';
          case 'trailer':
            if (text === '') complete();
            return true;
          default:
            return false;
        }
      };

      socket.on('data', (data: Buffer) => {
        bytesReceived += data.length;
        let chunk = data;
        let offset = 0;
        while (offset < chunk.length) {
          if (!inFlight) {
            // Bytes nobody asked for: the server pipelined or mis-framed an answer.
            protocolError();
            return;
          }
          if (reading === 'body' || reading === 'chunkData') {
            const take = Math.min(remaining, chunk.length - offset);
            remaining -= take;
            offset += take;
            if (remaining > 0) continue;
            if (reading === 'body') complete();
            else reading = 'chunkEnd';
            continue;
          }
          // A head or a line, perhaps split across data events.
          if (carry !== undefined) {
            chunk = Buffer.concat([carry, chunk.subarray(offset)]);
            offset = 0;
            carry = undefined;
          }
          const terminator = reading === 'head' ? CRLFCRLF : CRLF;
          const end = chunk.indexOf(terminator, offset);
          if (end < 0) {
            if (chunk.length - offset > MAX_HEAD_BYTES) protocolError();
            else carry = Buffer.from(chunk.subarray(offset));
            return;
          }
          const text = chunk.toString('latin1', offset, end);
          offset = end + terminator.length;
          if (!onText(text)) {
            protocolError();
            return;
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
