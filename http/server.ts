// The HTTP edge (docs/DESIGN.md, "The HTTP edge") on one of two engines (http/engine.ts: uWebSockets.js by default,
// node:http where uWS cannot load or a listener asks for it). Every request is one `Exchange`, which keeps uWS's rules
// in one place (the node engine honours the same surface): request data is copied before the callback returns with an
// answer pending, `onAborted` is attached synchronously whenever the answer outlives the callback, writes after an
// await happen inside `res.cork()`, nothing touches `res` after an abort, large bodies go out with tryEnd/onWritable
// backpressure, and request bodies are bounded before and while they are read (http/body.ts). Handlers are plain
// (async) functions from a copied request to a reply.
//
// The per-request path is lean on purpose (issue "Rates: fast as the edge allows"): a synchronous answer allocates
// the Exchange and the strings copied from `req`, and nothing else of the edge's own (~0.2 KB). The request and
// context this file used to build were object literals with getters, which V8 makes in dictionary mode (slow to build,
// large), plus seven closures: ~1.4 KB per request, and under load scavenges of 7-13 ms that kept most of the young
// generation. Exchange keeps its behaviour on the class prototype; closures are made only for answers that outlive
// the callback.

// Buffer and performance are imported rather than read from globalThis, where Node defines them as accessors (a
// getter call per use; performance.now() runs two or three times per request).
import { Buffer } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { resolveEngine, type EdgeRequest, type EdgeResponse, type Engine, type EngineMethod, type EngineName } from './engine.js';
import { CLOSE_GRACE_MS, WebSocketRoute, type WebSocketRouteOptions } from './websocket.js';
import { NodeEngine, type NodeEngineOptions } from './engine.node.js';
import { UwsEngine } from './engine.uws.js';
import type { Logger } from '../src/logger.js';
import { AbortedError } from '../src/errors.js';
import { systemClock, type Clock } from '../src/clock.js';
import { CancellationSource, type Cancellation } from '../src/cancellation.js';
import type { CorsPolicy, HeaderList } from './cors.js';
import { HttpMetrics, ListenerTotals, observe, type RouteMetrics } from './metrics.js';
import {
  BodyWatch,
  BodyWatchTicker,
  collectBody,
  DEFAULT_BODY_DEADLINES,
  PayloadTooLargeError,
  RequestTimeoutError,
  streamBody,
  type BodyDeadlines,
  type ConnectionEnding,
} from './body.js';

export interface HttpRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  /** Raw query string without `?` (undecoded). */
  readonly query: string;
  /** Lower-cased header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** Route parameters (`:name` segments) in pattern order. */
  readonly params: readonly string[];
  /** The peer's address; read it before the answer is given ('' after, or once the client is gone). */
  readonly remoteAddress: string;
  /** The request body when the route asked for one (`body.maxBytes`). */
  readonly body?: Buffer;
  /** The request body as a stream when the route asked for one (`stream`): backpressure pauses the socket. */
  readonly bodyStream?: Readable;
}

export interface HttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /**
   * A body streamed with backpressure (uWS sets Content-Length from `length`). If `chunks` throws after
   * the first byte, the connection is closed so the client sees an incomplete response, never a short 200.
   * The edge reads a chunk only until it asks for the next one (by then uWS has sent or copied all of it), so a
   * source may reuse a chunk's memory then (the files download reader does).
   */
  readonly stream?: { readonly length: number; readonly chunks: AsyncIterable<Uint8Array> };
  /** Headers only, without a body or Content-Length (the answer to HEAD). */
  readonly withoutBody?: boolean;
}

export interface RequestContext {
  /** Aborts when the client disconnects or the server closes. */
  readonly signal: AbortSignal;
  /** The same as `signal`, lighter (no AbortController per request), for handlers that only pass it on. */
  readonly cancellation: Cancellation;
}

export type Handler = (request: HttpRequest, context: RequestContext) => HttpReply | Promise<HttpReply>;

export interface RouteOptions {
  /** Read and bound the request body before the handler runs. */
  readonly body?: { readonly maxBytes: number; readonly deadlines?: BodyDeadlines };
  /** Hand the body to the handler as a stream (`request.bodyStream`), failing past `maxBytes` streamed bytes. */
  readonly stream?: { readonly maxBytes: number; readonly deadlines?: BodyDeadlines };
}

export interface HttpServerOptions {
  /** Names the listener in logs and metrics (e.g. `rates`, `admin`). */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly logger: Logger;
  /** Maps any error a handler throws to the service's wire contract (docs/DESIGN.md: one table per service). */
  readonly mapError: (error: unknown, request: HttpRequest) => HttpReply;
  /** Answer for unknown paths and methods. */
  readonly notFound: (request: HttpRequest) => HttpReply;
  /** Headers on every reply (e.g. CORS for rates). */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /** Per-origin CORS: answers carry it and every OPTIONS path answers preflights (files, spec §5). */
  readonly cors?: CorsPolicy;
  /** Shared by every listener of the process so the operator listener can serve them (default: own). */
  readonly metrics?: HttpMetrics;
  /** Log every answered request at info: method, route pattern (never the path), status (files spec §6). */
  readonly logRequests?: boolean;
  /**
   * A graceful close lets requests still in flight after the drain time go on until they finish (only a kill cuts
   * them), instead of aborting them: files spec §8 closes idle connections at 12 s and lets in-flight requests run
   * into the process's 15 s deadline.
   */
  readonly inFlightOutlivesDrain?: boolean;
  /** The engine this listener asks for (its config key); default $ADM_HTTP_ENGINE, else uws (http/engine.ts). */
  readonly engine?: EngineName;
  /** Timeouts of the node:http engine (headers, idle keep-alive); uWS has its own fixed ones. */
  readonly nodeEngine?: NodeEngineOptions;
  /** The clock request bodies' deadlines run on (http/body.ts; docs/DESIGN.md rule 2): the runtime's; the system clock when absent. */
  readonly clock?: Clock;
}

/** The answer to a request nobody waits for any more: counted, never written. */
const ABANDONED: HttpReply = { status: 499 };

/**
 * How long an answer given before the body arrived waits for the rest of it where the engine would end the
 * connection at once (#answerAfterBody): nginx's lingering_time. Past it the connection is cut, also for a client that
 * declared far more than it is allowed to send.
 */
const REST_OF_BODY_LINGER_MS = 30_000;

/** Bodies up to this size are written at once; larger ones stream with tryEnd/onWritable. */
const SMALL_BODY_BYTES = 64 * 1024;

/**
 * On the uWS engine a Buffer body of at most this size goes to uWS in one `end()`, which sends it or copies what it
 * cannot send before returning: a route may write into the same memory again for its next answer (rates splices
 * the date into one prepared body). node:http keeps a body until it is flushed, so there a route must not.
 */
export const UWS_WRITTEN_AT_ONCE_BYTES = SMALL_BODY_BYTES;

const STATUS_LINES = new Map<number, string>();
function statusLine(status: number): string {
  let line = STATUS_LINES.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    STATUS_LINES.set(status, line);
  }
  return line;
}

interface Route {
  readonly pattern: string;
  readonly handler: Handler;
  readonly options: RouteOptions;
  readonly paramCount: number;
  readonly metrics: RouteMetrics;
  /** The CORS headers its answers carry: those of a simple answer, or of a preflight. */
  readonly cors: 'answer' | 'preflight';
}

const NO_HEADERS: HeaderList = [];
/** The params of a route without `:name` segments: shared, so such a request allocates no array for them. */
const NO_PARAMS: readonly string[] = Object.freeze([]);

type Method = EngineMethod;

/** Upper-case method names without a string built per request (engines give them lower-case). */
function methodName(lower: string): string {
  switch (lower) {
    case 'get':
      return 'GET';
    case 'post':
      return 'POST';
    case 'head':
      return 'HEAD';
    case 'options':
      return 'OPTIONS';
    case 'put':
      return 'PUT';
    case 'delete':
      return 'DELETE';
    case 'patch':
      return 'PATCH';
    default:
      return lower.toUpperCase();
  }
}

/** What the writers need of a request's state: whether `res` is still ours, and a way to keep it past the callback. */
interface AnswerState {
  /** True once the client went away: `res` must not be touched any more. */
  readonly aborted: boolean;
  /**
   * The answer goes on after the route callback returns (a large body under backpressure), so uWS needs onAborted;
   * an answer that already outlived the callback has it.
   */
  answerOutlivesCallback(): void;
}

/**
 * What every request of one listener shares with the server: its options, totals, the set of requests in flight, and
 * the writers. Made once per listener; the per-request state lives in Exchange.
 */
class ListenerCore {
  /** Requests whose answer outlives the route callback; `cancel` aborts the handler's signal on close. */
  readonly inFlight = new Set<Exchange>();
  /** Resolves the server's current wait for in-flight requests (a drain, or a kill cutting it short). */
  drained: (() => void) | undefined = undefined;
  closing = false;
  /** Checks the deadlines of every body still arriving. */
  readonly bodyWatches: BodyWatchTicker;
  /** The default headers as [name, value, name, value, …]. */
  readonly #defaultHeaders: readonly string[];

  constructor(
    readonly options: HttpServerOptions,
    readonly totals: ListenerTotals,
    readonly engine: Engine,
  ) {
    this.bodyWatches = new BodyWatchTicker(options.clock ?? systemClock);
    this.#defaultHeaders = Object.entries(options.defaultHeaders ?? {}).flat();
  }

  /** An answer that outlived its callback is done (or abandoned). */
  settled(exchange: Exchange): void {
    this.inFlight.delete(exchange);
    if (this.inFlight.size === 0) this.drained?.();
  }

  writeHead(res: EdgeResponse, reply: HttpReply, extraHeaders: HeaderList): void {
    res.writeStatus(statusLine(reply.status));
    const defaults = this.#defaultHeaders;
    for (let i = 0; i < defaults.length; i += 2) res.writeHeader(defaults[i]!, defaults[i + 1]!);
    for (let i = 0; i < extraHeaders.length; i++) res.writeHeader(extraHeaders[i]![0], extraHeaders[i]![1]);
    const headers = reply.headers;
    if (headers) for (const key in headers) res.writeHeader(key, headers[key]!);
  }

  /** Streams `stream.chunks` with tryEnd/onWritable; resolves when done, aborted or cut off. */
  async stream(
    res: EdgeResponse,
    reply: HttpReply,
    stream: NonNullable<HttpReply['stream']>,
    state: AnswerState,
    whenAborted: Promise<void>,
    extraHeaders: HeaderList,
  ): Promise<void> {
    const total = stream.length;
    // One reaction for the whole body: a `.then` per chunk would pile up on a promise that settles only on abort.
    const abortedAsDone = whenAborted.then(() => true);
    let started = false;
    const iterator = stream.chunks[Symbol.asyncIterator]();
    try {
      if (total === 0) {
        res.cork(() => {
          this.writeHead(res, reply, extraHeaders);
          res.end();
        });
        return;
      }
      for (;;) {
        const next = await iterator.next();
        if (state.aborted) return;
        if (next.done) {
          // The source ended short of the announced length: never let it pass for a complete answer.
          if (started) res.close();
          return;
        }
        const chunk = next.value;
        if (!started) {
          started = true;
          res.cork(() => this.writeHead(res, reply, extraHeaders));
        }
        const done = await Promise.race([sendChunk(res, chunk, total, state), abortedAsDone]);
        if (done || state.aborted) return;
      }
    } catch (error) {
      if (state.aborted) return;
      this.options.logger.warn({ listener: this.options.name, err: error }, 'response stream failed');
      if (started) res.close();
      else res.cork(() => this.write(res, this.options.mapError(error, EMPTY_REQUEST), state, 'keep', extraHeaders));
    } finally {
      // Ends the source (for example a unixfs cat) when the client went away or the body is complete.
      await iterator.return?.();
    }
  }

  write(res: EdgeResponse, reply: HttpReply, state: AnswerState, ending: ConnectionEnding, extraHeaders: HeaderList): void {
    this.writeHead(res, reply, extraHeaders);
    // An answer given before the body was read whole (a refusal): the client is told the connection ends, and uWS
    // reads and drops the rest of the body meanwhile, so a client still sending gets to read the answer instead of
    // a reset. A body that missed its deadline is cut: uWS closes the connection once the answer is sent.
    if (ending === 'announce') res.writeHeader('connection', 'close');
    const force = ending === 'force';
    if (reply.status === 304 || reply.status === 204 || reply.withoutBody) {
      res.endWithoutBody();
      return;
    }
    const raw = reply.body ?? '';
    // Small bodies go out in one write (strings without a copy); large ones with backpressure below.
    if (force || raw.length <= SMALL_BODY_BYTES / 4 || (typeof raw !== 'string' && raw.length <= SMALL_BODY_BYTES)) {
      res.end(raw, force);
      return;
    }
    const body = typeof raw === 'string' ? Buffer.from(raw) : raw;
    state.answerOutlivesCallback();
    // Large body: stream with backpressure instead of buffering it all in uWS.
    const startOffset = res.getWriteOffset();
    const [ok, done] = res.tryEnd(body, body.length);
    if (ok || done) return;
    res.onWritable((offset) => {
      if (state.aborted) return true;
      const [retryOk] = res.tryEnd(body.subarray(offset - startOffset), body.length);
      return retryOk;
    });
  }
}

/**
 * Where one request is in its life (Exchange's one piece of state besides its data). Each change is one method:
 *
 *   callback ─ #answerInCallback ───────────────────────────────────────────────► done
 *   callback ─ #outlive ─► reading ─ #bodyArrived ─► handling ─ #answer ─► answering ─ #finish ─► done
 *                 └─────────────────────────────────────┘ (no body to collect first: a stream body, or none)
 *   reading ─ #answer ─► answering                          (a body refused, cut or cancelled before it arrived)
 *   any phase, once onAborted is attached ─ #clientGone ─► aborted, which #finish keeps
 *
 * The phase alone answers what the writers and body readers ask: is uWS corked (callback), is onAborted attached (every
 * phase after callback; inside it, only once a large body needs it: answerOutlivesCallback), may a body reader still
 * pause or resume `res` (reading, handling), is the client gone (aborted). done → aborted is real: a large body is
 * counted done once handed to uWS, and the client may still go away while uWS sends it under backpressure (its
 * onWritable then stops). A server closing is not a phase: it cancels the handler's signal (#abortReason), and the
 * answer the handler then gives is written as usual. The phase is a field, not an object per phase, so that a
 * synchronous answer still allocates nothing but the Exchange (see the top of this file).
 *
 *   callback   inside the engine's route callback: `req` is valid, uWS is corked, no onAborted yet
 *   reading    outlived the callback; the route's whole body is being collected, the handler has not run
 *   handling   outlived the callback; the handler is working (a streamed body may still be arriving)
 *   answering  the reply is being written after the callback (inside `cork`, or streamed)
 *   done       answered and counted
 *   aborted    the client went away: `res` must never be touched again
 */
type Phase = 'callback' | 'reading' | 'handling' | 'answering' | 'done' | 'aborted';

/** A body route's reading of its body: its deadlines, and how to let go of it. */
interface BodyReading {
  readonly watch: BodyWatch;
  /** Fails a body still being collected (a disconnect, the server closing) without an AbortSignal made for it. */
  readonly cancel?: (reason: Error) => void;
  /** Un-pauses the socket of a streamed body. */
  readonly release?: () => void;
}

/**
 * One request and its answer: the request the handler reads, the context it gets, and the state of the answer, in one
 * object whose behaviour lives on this prototype. A synchronous answer (the common case: rates /get, status routes)
 * allocates this object and the strings copied from `req`, nothing else; closures and promises are made only where an
 * answer outlives the route callback (an async handler, a body, a stream, backpressure). Handlers see it only as
 * HttpRequest and RequestContext; its own state is in private fields, so spreading or serialising it shows the request.
 *
 * uWS's rules, kept here (docs/DESIGN.md "The HTTP edge"): `req` is valid only during the route callback, so path, query and
 * params are copied at once and headers at the latest before the callback returns with an answer
 * still pending (`#outlive`); `onAborted` is attached whenever an answer outlives the callback; writes after an await
 * happen inside `res.cork()`; nothing touches `res` after an abort.
 */
class Exchange implements HttpRequest, RequestContext, AnswerState {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  readonly params: readonly string[];
  /** Set before the handler runs, for a route that asked for its body. */
  body: Buffer | undefined = undefined;
  bodyStream: Readable | undefined = undefined;

  readonly #core: ListenerCore;
  readonly #route: Route;
  readonly #res: EdgeResponse;
  readonly #cors: HeaderList;
  readonly #started: number;
  #phase: Phase = 'callback';
  /** Valid only in the callback phase; dropped when the answer outlives it, once what the handler may read is copied. */
  #req: EdgeRequest | undefined;
  /** The reply's status, for the totals and the request log. */
  #status = 0;
  /** The first of a disconnect and the server's cancel (closing): the signal's reason, also for a signal read later. */
  #abortReason: Error | undefined = undefined;
  /** Set for routes that read a body. */
  #bodyReading: BodyReading | undefined = undefined;
  /** Wakes a streaming reply that waits for the socket (onWritable never fires after an abort). */
  #wakeStream: (() => void) | undefined = undefined;
  /** Ends an answer's wait for the rest of the body (#answerAfterBody) when the client goes or the server closes. */
  #endRestWait: (() => void) | undefined = undefined;
  /** Copied on first read (most handlers never read them). */
  #headers: Record<string, string> | undefined = undefined;
  #remoteAddress: string | undefined = undefined;
  /** Made only when the handler reads `signal`: most answers are synchronous and never need it. */
  #controller: AbortController | undefined = undefined;
  /** The same for `cancellation`. */
  #cancellation: CancellationSource | undefined = undefined;

  constructor(core: ListenerCore, route: Route, res: EdgeResponse, req: EdgeRequest) {
    this.#core = core;
    this.#route = route;
    this.#res = res;
    this.#req = req;
    this.method = methodName(req.getMethod());
    this.path = req.getUrl();
    this.query = req.getQuery() ?? '';
    if (route.paramCount === 0) this.params = NO_PARAMS;
    else {
      const params: string[] = [];
      for (let i = 0; i < route.paramCount; i++) params.push(req.getParameter(i) ?? '');
      this.params = params;
    }
    const { cors } = core.options;
    const origin = cors ? req.getHeader('origin') : '';
    this.#cors = !origin ? NO_HEADERS : route.cors === 'preflight' ? cors!.preflightHeaders(origin) : cors!.answerHeaders(origin);
    this.#started = performance.now();
    core.totals.started();
  }

  /** Lower-cased header names; copied from `req` on first read (most handlers never read them). */
  get headers(): Readonly<Record<string, string>> {
    if (!this.#headers) {
      const copy: Record<string, string> = {};
      this.#req!.forEach((key, value) => (copy[key] = value));
      this.#headers = copy;
    }
    return this.#headers;
  }

  /** Read from `res` on first use (few routes need it); '' once the answer is written or the client is gone. */
  get remoteAddress(): string {
    if (this.#remoteAddress === undefined) {
      if (this.#answeredOrGone) return '';
      this.#remoteAddress = Buffer.from(this.#res.getRemoteAddressAsText()).toString();
    }
    return this.#remoteAddress;
  }

  /** Aborts when the client disconnects or the server closes. */
  get signal(): AbortSignal {
    const controller = (this.#controller ??= new AbortController());
    if (this.#abortReason && !controller.signal.aborted) controller.abort(this.#abortReason);
    return controller.signal;
  }

  get cancellation(): Cancellation {
    const cancellation = (this.#cancellation ??= new CancellationSource());
    if (this.#abortReason) cancellation.cancel(this.#abortReason);
    return cancellation;
  }

  get aborted(): boolean {
    return this.#phase === 'aborted';
  }

  /** `res` is answered or gone: a body reader must not pause or resume it, and the peer address is no longer read. */
  get #answeredOrGone(): boolean {
    const phase = this.#phase;
    return phase === 'answering' || phase === 'done' || phase === 'aborted';
  }

  answerOutlivesCallback(): void {
    // An answer that outlived the callback has onAborted already (#outlive).
    if (this.#phase === 'callback') this.#watchForAbort();
  }

  /** The server is closing: an answer waiting for the rest of the body (#answerAfterBody) is written now. */
  stopWaitingForBody(): void {
    this.#endRestWait?.();
  }

  /** The server is closing: the handler's signal aborts with `reason` (now, or when the handler first reads it). */
  cancel(reason: Error): void {
    this.#abortWith(reason);
  }

  /** Answers the request; called within the engine's route callback. */
  run(): void {
    const { handler, options } = this.#route;
    const bodyOptions = options.body ?? options.stream;
    if (bodyOptions) return this.#runWithBody(bodyOptions);
    let result: HttpReply | Promise<HttpReply>;
    try {
      result = handler(this, this);
    } catch (error) {
      result = this.#failed(error);
    }
    if (!(result instanceof Promise) && !result.stream) {
      // The fast path: answered right here, nothing outlives the callback.
      this.#answerInCallback(result);
      return;
    }
    this.#outlive('handling');
    void this.#answerLater(result);
  }

  /** callback → reading | handling: copy what is left of `req`, attach onAborted, count it in flight. */
  #outlive(next: 'reading' | 'handling'): void {
    void this.headers;
    this.#req = undefined;
    this.#phase = next;
    this.#watchForAbort();
    this.#core.inFlight.add(this);
  }

  #watchForAbort(): void {
    // uWS aborts the process if a handler returns before the response is finished without an abort handler.
    this.#res.onAborted(() => this.#clientGone());
  }

  /** Any phase → aborted. */
  #clientGone(): void {
    this.#phase = 'aborted';
    this.#abortWith(new AbortedError('client disconnected'));
    this.#wakeStream?.();
  }

  #abortWith(reason: Error): void {
    this.#endRestWait?.();
    this.#abortReason ??= reason;
    this.#controller?.abort(this.#abortReason);
    this.#cancellation?.cancel(this.#abortReason);
    // A body already collected ignores this.
    this.#bodyReading?.cancel?.(this.#abortReason);
  }

  #runWithBody(bodyOptions: NonNullable<RouteOptions['body']>): void {
    const { handler, options } = this.#route;
    // uWS delivers body chunks only to an onData attached before this callback returns.
    this.#outlive(options.body ? 'reading' : 'handling');
    const res = this.#res;
    const finished = () => this.#answeredOrGone;
    const watch = new BodyWatch(this.#core.bodyWatches, res, bodyOptions.deadlines ?? DEFAULT_BODY_DEADLINES, finished);
    let result: Promise<HttpReply>;
    if (options.body) {
      const collecting = collectBody(res, this.headers, options.body.maxBytes, watch);
      this.#bodyReading = { watch, cancel: collecting.cancel };
      if (this.#abortReason) collecting.cancel(this.#abortReason);
      result = collecting.body.then((body) => {
        this.#bodyArrived(body);
        return handler(this, this);
      });
    } else {
      const body = streamBody(res, bodyOptions.maxBytes, this.signal, finished, watch);
      this.#bodyReading = { watch, release: body.release };
      this.bodyStream = body.stream;
      result = Promise.resolve().then(() => handler(this, this));
    }
    void this.#answerLater(result);
  }

  /** reading → handling: the whole body is here and the handler runs next (a client already gone stays aborted). */
  #bodyArrived(body: Buffer): void {
    if (this.#phase === 'reading') this.#phase = 'handling';
    this.body = body;
  }

  async #answerLater(result: HttpReply | Promise<HttpReply>): Promise<void> {
    try {
      let reply: HttpReply;
      try {
        reply = await result;
      } catch (error) {
        reply = this.#failed(error);
      }
      const streaming = this.#answer(reply);
      if (streaming) await streaming;
    } catch (error) {
      this.#core.options.logger.error({ listener: this.#core.options.name, route: this.#route.pattern, err: error }, 'writing the response failed');
    } finally {
      this.#bodyReading?.watch.stop();
      this.#finish();
      this.#core.settled(this);
    }
  }

  /** callback → done: written at once, as uWS is corked inside the route callback. */
  #answerInCallback(reply: HttpReply): void {
    this.#count(reply);
    this.#core.write(this.#res, reply, this, 'keep', this.#cors);
    this.#finish();
  }

  /**
   * reading | handling → answering: the reply is written inside `cork` (after an await nothing is corked) or
   * streamed; resolves when a streamed reply is done. Nothing is written once the client is gone.
   */
  #answer(reply: HttpReply): Promise<void> | undefined {
    this.#count(reply);
    if (this.#phase === 'aborted') return undefined;
    const reading = this.#bodyReading;
    // A socket left paused would never read the next request of this keep-alive connection (or, after an early
    // refusal, never read the rest of the body the client is still sending).
    reading?.release?.();
    if (reading && !reply.stream && reading.watch.ending() === 'announce' && this.#core.engine.closesOnEarlyAnswer(this.headers['connection'])) {
      return this.#answerAfterBody(reply, reading);
    }
    this.#phase = 'answering';
    const core = this.#core;
    const res = this.#res;
    if (reply.stream) {
      const whenAborted = new Promise<void>((resolve) => (this.#wakeStream = resolve));
      return core.stream(res, reply, reply.stream, this, whenAborted, this.#cors);
    }
    const ending = reading ? reading.watch.ending() : 'keep';
    res.cork(() => core.write(res, reply, this, ending, this.#cors));
    return undefined;
  }

  /**
   * An answer given while the body is still arriving, on an engine that ends the connection once such an answer is
   * written (Engine.closesOnEarlyAnswer): the client, still sending, would meet a reset before it read the answer
   * (Node's http client saw EPIPE for a 507 while sending 8 MiB, 10 times of 10 without an agent on uWS). So the
   * answer waits until the rest of the body has arrived, dropped as it comes, at most REST_OF_BODY_LINGER_MS and
   * within the body's deadlines (past them the connection is cut, as for any late body), or until the server closes.
   */
  async #answerAfterBody(reply: HttpReply, reading: BodyReading): Promise<void> {
    // Nobody reads the body any more: its chunks are dropped from here on. A stream stops its watch when it closes,
    // so the watch starts again only after that.
    const stream = this.bodyStream;
    if (stream && !stream.closed) {
      const closed = new Promise((resolve) => stream.once('close', resolve));
      stream.destroy();
      await closed;
    }
    reading.cancel?.(new Error('answered before the body arrived'));
    // Gone or closing meanwhile: nothing would end the wait below before a deadline.
    if (this.#phase !== 'aborted' && !this.#abortReason && !this.#core.closing) {
      await new Promise<void>((resolve) => {
        this.#endRestWait = resolve;
        reading.watch.awaitRest(resolve, REST_OF_BODY_LINGER_MS);
      });
      this.#endRestWait = undefined;
    }
    if (this.#phase === 'aborted') return;
    this.#phase = 'answering';
    const ending = reading.watch.ending();
    this.#res.cork(() => this.#core.write(this.#res, reply, this, ending, this.#cors));
  }

  /** The reply counts in the route's metrics whether or not anybody reads it. */
  #count(reply: HttpReply): void {
    observe(this.#route.metrics, reply.status, performance.now() - this.#started);
    this.#status = reply.status;
  }

  #failed(error: unknown): HttpReply {
    const { options } = this.#core;
    // Nobody is listening any more (client gone, or the server closing): no error table, no error log.
    if (this.#phase === 'aborted' || (this.#core.closing && (error as Error | undefined)?.name === 'AbortError')) return ABANDONED;
    try {
      const reply = options.mapError(error, this);
      // A 500 is a failure nobody planned for: the operator needs its cause. Mapped refusals stay at debug.
      if (reply.status === 500) options.logger.error({ listener: options.name, route: this.#route.pattern, err: error }, 'handler failed');
      else if (!(error instanceof PayloadTooLargeError) && !(error instanceof RequestTimeoutError)) {
        options.logger.debug({ listener: options.name, route: this.#route.pattern, err: error }, 'handler error');
      }
      return reply;
    } catch (mappingError) {
      // mapError itself failed: never leave the response hanging.
      options.logger.error({ listener: options.name, err: mappingError }, 'error mapping failed');
      return { status: 500, body: '' };
    }
  }

  /** → done, or stays aborted: the answer is complete (or abandoned); totals and the request log. */
  #finish(): void {
    const { totals, options } = this.#core;
    const aborted = this.#phase === 'aborted';
    if (!aborted) this.#phase = 'done';
    totals.finished(this.#status, aborted, performance.now() - this.#started);
    if (options.logRequests) options.logger.info({ method: this.method, route: this.#route.pattern, status: aborted ? 'aborted' : this.#status }, 'request');
  }
}

export class HttpServer {
  readonly metrics: HttpMetrics;
  /** This listener's totals since start (requests, status families, aborted, in flight, response times). */
  readonly totals = new ListenerTotals();
  readonly #options: HttpServerOptions;
  readonly #engine: Engine;
  readonly #core: ListenerCore;
  readonly #webSockets: WebSocketRoute[] = [];
  #port = 0;
  #killed = false;
  #closed: Promise<void> | undefined;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.metrics = options.metrics ?? new HttpMetrics();
    this.#engine = resolveEngine(options.engine, options.logger) === 'uws' ? new UwsEngine() : new NodeEngine(options.nodeEngine);
    this.#core = new ListenerCore(options, this.totals, this.#engine);
  }

  /** The engine this listener runs on (the requested one, or node:http where uWS cannot load). */
  get engine(): EngineName {
    return this.#engine.name;
  }

  get port(): number {
    return this.#port;
  }

  get inFlight(): number {
    return this.#core.inFlight.size;
  }

  route(method: Method, pattern: string, handler: Handler, options: RouteOptions = {}): this {
    this.#bind(method, pattern, this.#route(pattern, handler, options));
    return this;
  }

  /**
   * A WebSocket endpoint at `pattern` (http/websocket.ts): a GET with a valid opening handshake, allowed by
   * `options.authorize` while the route has room, is upgraded; any other request to it gets the refusal as an HTTP
   * answer. Upgrades count in the route's metrics (101 as 1xx).
   */
  webSocket(pattern: string, options: WebSocketRouteOptions): this {
    const route = new WebSocketRoute(options);
    this.#webSockets.push(route);
    const metrics = this.metrics.route(this.#options.name, pattern);
    const core = this.#core;
    const paramCount = paramCountOf(pattern);
    this.#engine.webSocket(pattern, {
      maxPayloadLength: options.maxPayloadLength,
      idleTimeoutSeconds: options.idleTimeoutSeconds,
      upgrade: (res, req, accept) => {
        const started = performance.now();
        core.totals.started();
        const request = copiedRequest(req, paramCount, res);
        const refusal = core.closing ? { status: 503, body: '' } : route.refusal(request);
        const status = refusal ? refusal.status : 101;
        observe(metrics, status, performance.now() - started);
        core.totals.finished(status, false, performance.now() - started);
        if (refusal) core.write(res, refusal, ANSWERED_IN_CALLBACK, 'keep', NO_HEADERS);
        else accept(route.session(request));
      },
    });
    // Requests the engine does not upgrade (no or a malformed handshake) reach this route and get the same refusal.
    this.route('get', pattern, (request) => route.refusal(request) ?? { status: 400, body: '' });
    return this;
  }

  /** Registers the catch-all 404 last, then binds. Resolves with the bound port (useful with port 0). */
  listen(): Promise<number> {
    const { cors } = this.#options;
    if (cors) {
      // Every path answers a preflight (the original's express `cors` did), before the catch-all 404.
      this.#bind('options', '/*', { ...this.#route('/*', () => ({ status: 204 }), {}), cors: 'preflight' });
    }
    this.#bind('any', '/*', this.#route('*', (request) => this.#options.notFound(request), {}));
    const { host, port, name, logger } = this.#options;
    return this.#engine.listen(host, port).then(
      (bound) => {
        this.#port = bound;
        logger.info({ listener: name, host, port: bound, engine: this.#engine.name }, 'listening');
        return bound;
      },
      (error: Error) => {
        throw new Error(`${name}: ${error.message}`);
      },
    );
  }

  /**
   * Graceful close: stop accepting, let in-flight requests finish for up to `drainMs`, then abort the rest
   * and close every connection (keep-alive sockets would otherwise hold the process open).
   */
  close(drainMs = 5_000): Promise<void> {
    if (this.#closed) {
      // Already closing: a second call with no drain time (a supervisor's kill) cuts the drain short.
      if (drainMs === 0) {
        this.#killed = true;
        this.#core.drained?.();
      }
      return this.#closed;
    }
    this.#core.closing = true;
    this.#closed = this.#close(drainMs);
    return this.#closed;
  }

  async #close(drainMs: number): Promise<void> {
    const core = this.#core;
    this.#engine.stopAccepting();
    // Refusals waiting for the rest of their bodies are written now, inside the drain.
    for (const exchange of core.inFlight) exchange.stopWaitingForBody();
    // WebSockets get a close frame now and answer it while requests drain (each is cut after CLOSE_GRACE_MS anyway).
    const socketsClosed = Promise.all(this.#webSockets.map((route) => route.closeAll('server closing')));
    if (core.inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs);
        core.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (this.#options.inFlightOutlivesDrain && core.inFlight.size > 0 && !this.#killed && drainMs > 0) {
      this.#options.logger.info({ listener: this.#options.name, inFlight: core.inFlight.size }, 'drain time over; requests in flight go on');
      await new Promise<void>((resolve) => (core.drained = resolve));
    }
    if (this.#webSockets.some((route) => route.size > 0) && !this.#killed) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([socketsClosed, new Promise((resolve) => (timer = setTimeout(resolve, Math.min(drainMs, CLOSE_GRACE_MS))))]);
      clearTimeout(timer);
    }
    for (const exchange of core.inFlight) exchange.cancel(new AbortedError('server closing'));
    this.#engine.closeAll();
    this.#options.logger.info({ listener: this.#options.name, abandoned: core.inFlight.size }, 'closed');
  }

  /** What a route needs per request, worked out once at registration. */
  #route(pattern: string, handler: Handler, options: RouteOptions): Route {
    return { pattern, handler, options, paramCount: paramCountOf(pattern), metrics: this.metrics.route(this.#options.name, pattern), cors: 'answer' };
  }

  /** One engine callback per route, made once: each request is one Exchange. */
  #bind(method: Method, pattern: string, route: Route): void {
    const core = this.#core;
    this.#engine.route(method, pattern, (res, req) => new Exchange(core, route, res, req).run());
  }
}

/** How many `:name` segments a route pattern has. */
const paramCountOf = (pattern: string) => (pattern.match(/\/:/g) ?? []).length;

/** The writers' view of an answer written inside the engine's callback (a WebSocket refusal: small, never streamed). */
const ANSWERED_IN_CALLBACK: AnswerState = { aborted: false, answerOutlivesCallback: () => undefined };

/** A WebSocket upgrade request copied out of `req` (valid only during the engine's callback). */
function copiedRequest(req: EdgeRequest, paramCount: number, res: EdgeResponse): HttpRequest {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => (headers[name] = value));
  const params: string[] = [];
  for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
  return {
    method: methodName(req.getMethod()),
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    params,
    remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
  };
}

/** A request stand-in for mapping errors that happen after the handler returned (mid-stream). */
const EMPTY_REQUEST: HttpRequest = { method: '', path: '', query: '', headers: {}, params: [], remoteAddress: '' };

/**
 * Sends one chunk of a body of `total` bytes. Resolves with true once the whole body has been sent,
 * false when this chunk is accepted and more may follow; waits on onWritable under backpressure.
 */
function sendChunk(res: EdgeResponse, chunk: Uint8Array, total: number, state: AnswerState): Promise<boolean> {
  const lastOffset = res.getWriteOffset();
  let ok = false;
  let done = false;
  res.cork(() => ([ok, done] = res.tryEnd(chunk, total)));
  if (done) return Promise.resolve(true);
  if (ok) return Promise.resolve(false);
  return new Promise((resolve) => {
    // The next chunk must not be sent from inside this onWritable callback: uWS.js drains promise jobs before
    // the callback returns, so a resolve here would run the next tryEnd and register the next onWritable
    // while this handler is still active, and its return value then clobbers that registration: the body
    // stalls for good after a few MiB (found by `npm run bench -- files`). The continuation runs on the next turn.
    const settle = (done: boolean) => setImmediate(() => resolve(done));
    res.onWritable((offset) => {
      if (state.aborted) {
        settle(true);
        return true;
      }
      const [retryOk, retryDone] = res.tryEnd(chunk.subarray(offset - lastOffset), total);
      if (retryDone) settle(true);
      else if (retryOk) settle(false);
      return retryOk;
    });
  });
}
