// Request bodies at the HTTP edge (docs/DESIGN.md "The HTTP edge": bounded before they are read, kept alive by our own
// deadlines): a whole body gathered in memory, or a body streamed with backpressure, each bounded by its declared and
// received size, and the deadlines that end a body arriving too slowly. uWS re-arms its fixed 10 s idle timer only
// per 160 KB received, so these deadlines, not uWS's, decide when a slow body is cut.

import { Readable } from 'node:stream';
import type { Clock } from '../src/clock.js';
import type { EdgeResponse } from './engine.js';

/**
 * How long a request body may take to arrive. These are the edge's own deadlines, not uWS's: uWS re-arms its fixed
 * 10 s idle timer only per 160 KB received, so a body slower than ~16 KB/s (a phone on a poor network) would be
 * reset with no answer. A body that misses one fails with RequestTimeoutError (408) and its connection is closed.
 */
export interface BodyDeadlines {
  /** No byte for this long. */
  readonly idleMs: number;
  /** The whole body, counted from the request's start (Node's own `requestTimeout` is 300 s, the original's server). */
  readonly totalMs: number;
  /** Protection against trickled bodies: fewer than `floorBytes` in a `floorWindowMs` window is cut. */
  readonly floorBytes: number;
  readonly floorWindowMs: number;
}

export const DEFAULT_BODY_DEADLINES: BodyDeadlines = { idleMs: 30_000, totalMs: 300_000, floorBytes: 1024, floorWindowMs: 20_000 };

/** A request body missed one of its deadlines (BodyDeadlines): the answer is 408 and the connection is closed. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
  constructor(readonly deadline: 'idle' | 'total' | 'floor') {
    super(`request body ${deadline === 'floor' ? 'arrived too slowly' : deadline === 'idle' ? 'stalled' : 'took too long'}`);
  }
}

/** The request body was larger than the route allows (docs/DESIGN.md: bounded before read). */
export class PayloadTooLargeError extends Error {
  override readonly name = 'PayloadTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`request body exceeds ${maxBytes} bytes`);
  }
}

/**
 * A whole request body of at most `maxBytes`, gathered straight from uWS (no stream: the body is held in memory
 * either way, so there is nothing to pause for). A declared or received size over the bound fails with
 * PayloadTooLargeError before more is kept; a missed deadline with RequestTimeoutError; `cancel` (a disconnect, the
 * server closing) with its reason.
 */
export function collectBody(
  res: EdgeResponse,
  headers: Readonly<Record<string, string>>,
  maxBytes: number,
  watch: BodyWatch,
): { readonly body: Promise<Buffer>; readonly cancel: (reason: Error) => void } {
  let fail: (error: Error) => void = () => {};
  const body = new Promise<Buffer>((resolve, reject) => {
    let settled = false;
    fail = (error: Error) => {
      if (settled) return;
      settled = true;
      watch.stop();
      reject(error);
    };
    const chunks: Buffer[] = [];
    let received = 0;
    // uWS delivers chunks only to an onData attached before the route callback returns, and the handler is set up
    // after a refusal too, so the rest of a refused body is read and dropped.
    res.onData((chunk, isLast) => {
      // Counted after a refusal too: an answer may wait for the rest of the body (http/server.ts #answerAfterBody).
      watch.received(chunk.byteLength);
      if (isLast) watch.complete();
      if (settled) return;
      received += chunk.byteLength;
      if (received > maxBytes) return fail(new PayloadTooLargeError(maxBytes));
      chunks.push(copyChunk(chunk));
      if (isLast) {
        settled = true;
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
      }
    });
    const declared = headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBytes) fail(new PayloadTooLargeError(maxBytes));
    else watch.start(fail, () => false);
  });
  return { body, cancel: (reason) => fail(reason) };
}

/**
 * uWS neuters a body chunk once its onData callback returns, so each is copied out, into uninitialised memory: a
 * copy through `ArrayBuffer.prototype.slice` (zero-filled, then copied) took ~1.5x as long on the 64 KiB chunks
 * uWS mostly delivers (a 256 MiB upload is ~3,700 of them), and ~2x on its occasional 512 KiB ones.
 */
function copyChunk(chunk: ArrayBuffer): Buffer {
  const copy = Buffer.allocUnsafe(chunk.byteLength);
  copy.set(new Uint8Array(chunk));
  return copy;
}

/** The request body as a Readable fed by uWS: a full buffer pauses the socket, reading resumes it. */
export function streamBody(res: EdgeResponse, maxBytes: number, signal: AbortSignal, finished: () => boolean, watch: BodyWatch): { stream: Readable; release(): void } {
  let paused = false;
  let received = 0;
  const stream = new Readable({
    highWaterMark: 1024 * 1024,
    read() {
      // After an abort or a written response uWS forbids touching `res`.
      if (paused && !finished()) {
        paused = false;
        res.resume();
      }
    },
  });
  signal.addEventListener('abort', () => stream.destroy(signal.reason as Error), { once: true });
  // A handler may await before it reads the body (a disk claim, an ask); a disconnect or an oversize body in
  // that gap destroys the stream with no consumer listening yet, which Node would raise as an uncaught
  // 'error' event and end the process. The consumer sees the failure through `destroyed`/`errored` instead.
  stream.on('error', () => {});
  stream.on('close', () => watch.stop());
  // While the consumer holds the socket paused, the client is not the slow side: its deadlines wait.
  watch.start((error) => stream.destroy(error), () => paused);
  res.onData((chunk, isLast) => {
    // Counted after a refusal too: an answer may wait for the rest of the body (http/server.ts #answerAfterBody).
    watch.received(chunk.byteLength);
    if (isLast) watch.complete();
    if (stream.destroyed) return;
    received += chunk.byteLength;
    if (received > maxBytes) {
      stream.destroy(new PayloadTooLargeError(maxBytes));
      return;
    }
    // Never pause on the last chunk: nothing more would come to resume for.
    if (!stream.push(copyChunk(chunk)) && !paused && !isLast && !finished()) {
      paused = true;
      res.pause();
    }
    if (isLast) stream.push(null);
  });
  return {
    stream,
    release() {
      if (paused && !finished()) {
        paused = false;
        res.resume();
      }
    },
  };
}

/** How a reply ends its connection: kept alive, announced as closing (the body was not read whole), or cut. */
export type ConnectionEnding = 'keep' | 'announce' | 'force';

/** uWS's idle timer is 10 s; re-arming it well inside that keeps a slow body's connection ours to end. */
const UWS_REARM_MS = 4_000;
/** How often a body's deadlines are checked (their resolution). */
const BODY_WATCH_TICK_MS = 1_000;

/**
 * The one timer of a listener that checks every body still arriving: a timer made and cleared per request cost more
 * than the checks. It runs on the listener's clock (docs/DESIGN.md rule 2), re-armed once per tick, and stops itself
 * at the first tick that finds no body.
 */
export class BodyWatchTicker {
  readonly #watches = new Set<BodyWatch>();
  #running = false;

  constructor(readonly clock: Clock) {}

  add(watch: BodyWatch): void {
    this.#watches.add(watch);
    if (this.#running) return;
    this.#running = true;
    this.#schedule();
  }

  delete(watch: BodyWatch): void {
    this.#watches.delete(watch);
  }

  #schedule(): void {
    const timer = this.clock.setTimeout(() => this.#tick(), BODY_WATCH_TICK_MS);
    // On the system clock a Node timer: unreferenced, as a body's connection keeps the process alive, not its checks.
    (timer as { unref?: () => void } | undefined)?.unref?.();
  }

  #tick(): void {
    if (this.#watches.size === 0) {
      this.#running = false;
      return;
    }
    for (const watch of [...this.#watches]) watch.tick();
    this.#schedule();
  }
}

/**
 * One request body's deadlines (BodyDeadlines) and its standing with uWS's idle timer, which it keeps re-arming
 * (`pause()` + `resume()` re-arms it) while the body is read, so only these deadlines end a slow body. Time the
 * reader holds the socket paused (its own backpressure) counts against no deadline but the total.
 *
 * A chunk only adds its size (uploads are the hot path: no clock read per chunk); the ticks read the clock and date
 * each byte count they have not seen before at the tick that saw it, a little after it arrived, so a deadline fires
 * at most one tick late, never early.
 */
export class BodyWatch {
  #watching = false;
  #onExpired: ((error: RequestTimeoutError) => void) | undefined;
  #isPaused: () => boolean = () => false;
  #complete = false;
  #expired = false;
  #onRest: (() => void) | undefined;
  /** When an answer waiting for the rest of the body stops waiting (awaitRest). */
  #restDeadline = Number.POSITIVE_INFINITY;
  /** Bytes received so far. */
  #bytes = 0;
  readonly #startedAt: number;
  /** When a tick first saw the byte count it last changed to. */
  #lastByteAt: number;
  #bytesAtLastByte = 0;
  #windowStart: number;
  #bytesAtWindowStart = 0;
  #rearmedAt: number;

  constructor(
    private readonly ticker: BodyWatchTicker,
    private readonly res: EdgeResponse,
    private readonly deadlines: BodyDeadlines,
    /** True once `res` may no longer be touched (answered or aborted). */
    private readonly finished: () => boolean,
  ) {
    this.#startedAt = this.#lastByteAt = this.#windowStart = this.#rearmedAt = ticker.clock.now();
  }

  start(onExpired: (error: RequestTimeoutError) => void, isPaused: () => boolean): void {
    if (this.#complete) return;
    this.#onExpired = onExpired;
    this.#isPaused = isPaused;
    this.#watching = true;
    this.ticker.add(this);
  }

  received(bytes: number): void {
    this.#bytes += bytes;
  }

  /** The last chunk arrived. */
  complete(): void {
    this.#complete = true;
    this.stop();
    const rest = this.#onRest;
    this.#onRest = undefined;
    rest?.();
  }

  /**
   * Calls `then` once the rest of the body has arrived (its reader drops it), the body missed a deadline, or `lingerMs`
   * passed (then counted as missed: `ending()` says 'force'), watching the deadlines again meanwhile: an answer held
   * back for the rest of a body stays bounded, also when the client declared far more than it may send.
   */
  awaitRest(then: () => void, lingerMs: number): void {
    if (this.#complete) return then();
    this.#onRest = then;
    this.#restDeadline = this.ticker.clock.now() + lingerMs;
    this.start(() => {
      this.#onRest = undefined;
      then();
    }, () => false);
  }

  stop(): void {
    if (!this.#watching) return;
    this.#watching = false;
    this.ticker.delete(this);
  }

  /** How the answer ends the connection: a body still arriving is announced closing; an expired one is cut. */
  ending(): ConnectionEnding {
    if (this.#expired) return 'force';
    return this.#complete ? 'keep' : 'announce';
  }

  /** Called by the ticker about every BODY_WATCH_TICK_MS while watching. */
  tick(): void {
    if (this.finished()) return this.stop();
    const now = this.ticker.clock.now();
    const bytes = this.#bytes;
    const { idleMs, totalMs, floorBytes, floorWindowMs } = this.deadlines;
    if (now - this.#startedAt > totalMs || now > this.#restDeadline) return this.#expire('total');
    if (bytes !== this.#bytesAtLastByte) {
      this.#bytesAtLastByte = bytes;
      this.#lastByteAt = now;
    }
    if (this.#isPaused()) {
      this.#lastByteAt = now;
      this.#windowStart = now;
      this.#bytesAtWindowStart = bytes;
      return;
    }
    if (now - this.#lastByteAt > idleMs) return this.#expire('idle');
    if (now - this.#windowStart >= floorWindowMs) {
      if (bytes - this.#bytesAtWindowStart < floorBytes) return this.#expire('floor');
      this.#windowStart = now;
      this.#bytesAtWindowStart = bytes;
    }
    if (now - this.#rearmedAt >= UWS_REARM_MS) {
      this.#rearmedAt = now;
      this.res.pause();
      this.res.resume();
    }
  }

  #expire(deadline: RequestTimeoutError['deadline']): void {
    this.#expired = true;
    this.stop();
    this.#onExpired?.(new RequestTimeoutError(deadline));
  }
}
