// The HTTP edge (DESIGN.md, "The HTTP edge") on one of two engines (http/engine.ts: uWebSockets.js by default,
// node:http where uWS cannot load or a listener asks for it). Every request is one `Exchange`, which keeps uWS's rules
// in one place (the node engine honours the same surface): request data is copied before the callback returns with an
// answer pending, `onAborted` is attached synchronously whenever the answer outlives the callback, writes after an
// await happen inside `res.cork()`, nothing touches `res` after an abort, large bodies go out with tryEnd/onWritable
// backpressure, and request bodies are bounded before and while they are read. Handlers are plain (async) functions
// from a copied request to a reply.
//
// The per-request path is lean on purpose (issue "Rates: fast as the edge allows"): a synchronous answer allocates
// the Exchange and the strings copied from `req`, and nothing else of the edge's own (~0.2 KB). The request and
// context this file used to build were object literals with getters, which V8 makes in dictionary mode (slow to build,
// large), plus seven closures: ~1.4 KB per request, and under load scavenges of 7-13 ms that kept most of the young
// generation. Exchange keeps its behaviour on the class prototype; closures are made only for answers that outlive
// the callback.

import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import { resolveEngine, type EdgeRequest, type EdgeResponse, type Engine, type EngineMethod, type EngineName } from './engine.js';
import { NodeEngine, type NodeEngineOptions } from './engine.node.js';
import { UwsEngine } from './engine.uws.js';
import type { Logger } from '../src/logger.js';
import { AbortedError } from '../src/errors.js';
import { CancellationSource, type Cancellation } from '../src/cancellation.js';
import type { CorsPolicy, HeaderList } from './cors.js';
import { HttpMetrics, ListenerTotals, observe, type RouteMetrics } from './metrics.js';

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

export interface HttpServerOptions {
  /** Names the listener in logs and metrics (e.g. `rates`, `admin`). */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly logger: Logger;
  /** Maps any error a handler throws to the service's wire contract (DESIGN.md: one table per service). */
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
}

/** The request body was larger than the route allows (DESIGN.md: bounded before read). */
export class PayloadTooLargeError extends Error {
  override readonly name = 'PayloadTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`request body exceeds ${maxBytes} bytes`);
  }
}

/** The answer to a request nobody waits for any more: counted, never written. */
const ABANDONED: HttpReply = { status: 499 };

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
  /** Attaches `onAborted` (needed whenever an answer outlives the route callback); idempotent. */
  attachAbortHandler(): void;
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
  readonly bodyWatches = new BodyWatchTicker();
  /** The default headers as [name, value, name, value, …]. */
  readonly #defaultHeaders: readonly string[];

  constructor(
    readonly options: HttpServerOptions,
    readonly totals: ListenerTotals,
  ) {
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
    state.attachAbortHandler();
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
 * One request and its answer: the request the handler reads, the context it gets, and the state of the answer, in one
 * object whose behaviour lives on this prototype. A synchronous answer (the common case: rates /get, status routes)
 * allocates this object and the strings copied from `req`, nothing else; closures and promises are made only where an
 * answer outlives the route callback (an async handler, a body, a stream, backpressure). Handlers see it only as
 * HttpRequest and RequestContext; its own state is in private fields, so spreading or serialising it shows the request.
 *
 * uWS's rules, kept here (DESIGN.md "The HTTP edge"): `req` is valid only during the route callback, so path, query and
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
  /** Dropped once what the handler may read of it was copied (the answer outlives the callback). */
  #req: EdgeRequest | undefined;
  #headers: Record<string, string> | undefined = undefined;
  #remoteAddress: string | undefined = undefined;
  readonly #cors: HeaderList;
  readonly #started: number;
  /** Made only when the handler reads `signal`: most answers are synchronous and never need it. */
  #controller: AbortController | undefined = undefined;
  /** The same for `cancellation`. */
  #cancellation: CancellationSource | undefined = undefined;
  /** The first of a disconnect and the server's cancel (closing): the signal's reason, also for a signal read later. */
  #abortReason: Error | undefined = undefined;
  /** The client went away: `res` must not be touched any more. */
  #aborted = false;
  #abortHandlerAttached = false;
  /** Answered within the route callback (uWS is corked there). */
  #synchronous = false;
  #responded = false;
  #status = 0;
  /** Wakes a streaming reply that waits for the socket (onWritable never fires after an abort). */
  #wakeStream: (() => void) | undefined = undefined;
  /** Set when the route streams its body: un-pauses the socket before the response is written. */
  #releaseBody: (() => void) | undefined = undefined;
  /** The body's deadlines and progress, for routes that read a body. */
  #watch: BodyWatch | undefined = undefined;
  /** Fails a body still being collected when the request is cancelled (no AbortSignal made just for that). */
  #bodyCancelled: ((reason: Error) => void) | undefined = undefined;

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
      if (this.#aborted || this.#responded) return '';
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
    return this.#aborted;
  }

  attachAbortHandler(): void {
    if (this.#abortHandlerAttached) return;
    this.#abortHandlerAttached = true;
    // uWS aborts the process if a handler returns before the response is finished without an abort handler.
    this.#res.onAborted(() => {
      this.#aborted = true;
      this.#abortWith(new AbortedError('client disconnected'));
      this.#wakeStream?.();
    });
  }

  /** The server is closing: the handler's signal aborts with `reason` (now, or when the handler first reads it). */
  cancel(reason: Error): void {
    this.#abortWith(reason);
  }

  #abortWith(reason: Error): void {
    this.#abortReason ??= reason;
    this.#controller?.abort(this.#abortReason);
    this.#cancellation?.cancel(this.#abortReason);
    this.#bodyCancelled?.(this.#abortReason);
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
      this.#synchronous = true;
      this.#respond(result);
      this.#finish();
      return;
    }
    this.#outlive();
    void this.#answerLater(result);
  }

  /** The answer outlives the route callback: copy what is left of `req`, attach onAborted, count it in flight. */
  #outlive(): void {
    void this.headers;
    this.#req = undefined;
    this.attachAbortHandler();
    this.#core.inFlight.add(this);
  }

  #runWithBody(bodyOptions: NonNullable<RouteOptions['body']>): void {
    // uWS delivers body chunks only to an onData attached before this callback returns.
    this.#outlive();
    const res = this.#res;
    const { handler, options } = this.#route;
    const finished = () => this.#aborted || this.#responded;
    const watch = (this.#watch = new BodyWatch(this.#core.bodyWatches, res, bodyOptions.deadlines ?? DEFAULT_BODY_DEADLINES, finished));
    let result: Promise<HttpReply>;
    if (options.body) {
      const collecting = collectBody(res, this.headers, options.body.maxBytes, watch);
      this.#bodyCancelled = collecting.cancel;
      if (this.#abortReason) collecting.cancel(this.#abortReason);
      result = collecting.body.then((body) => {
        this.#bodyCancelled = undefined;
        this.body = body;
        return handler(this, this);
      });
    } else {
      const body = streamBody(res, bodyOptions.maxBytes, this.signal, finished, watch);
      this.#releaseBody = body.release;
      this.bodyStream = body.stream;
      result = Promise.resolve().then(() => handler(this, this));
    }
    void this.#answerLater(result);
  }

  async #answerLater(result: HttpReply | Promise<HttpReply>): Promise<void> {
    try {
      let reply: HttpReply;
      try {
        reply = await result;
      } catch (error) {
        reply = this.#failed(error);
      }
      const streaming = this.#respond(reply);
      if (streaming) await streaming;
    } catch (error) {
      this.#core.options.logger.error({ listener: this.#core.options.name, route: this.#route.pattern, err: error }, 'writing the response failed');
    } finally {
      this.#watch?.stop();
      this.#finish();
      this.#core.settled(this);
    }
  }

  #respond(reply: HttpReply): Promise<void> | undefined {
    observe(this.#route.metrics, reply.status, performance.now() - this.#started);
    this.#status = reply.status;
    if (this.#aborted) return undefined;
    // A socket left paused would never read the next request of this keep-alive connection (or, after an early
    // refusal, never read the rest of the body the client is still sending).
    this.#releaseBody?.();
    this.#responded = true;
    const core = this.#core;
    const res = this.#res;
    if (reply.stream) {
      const whenAborted = new Promise<void>((resolve) => (this.#wakeStream = resolve));
      return core.stream(res, reply, reply.stream, this, whenAborted, this.#cors);
    }
    const ending = this.#watch ? this.#watch.ending() : 'keep';
    // Inside the route callback uWS is already corked; after an await it is not.
    if (this.#synchronous) core.write(res, reply, this, ending, this.#cors);
    else res.cork(() => core.write(res, reply, this, ending, this.#cors));
    return undefined;
  }

  #failed(error: unknown): HttpReply {
    const { options } = this.#core;
    // Nobody is listening any more (client gone, or the server closing): no error table, no error log.
    if (this.#aborted || (this.#core.closing && (error as Error | undefined)?.name === 'AbortError')) return ABANDONED;
    if (!(error instanceof PayloadTooLargeError) && !(error instanceof RequestTimeoutError)) {
      options.logger.debug({ listener: options.name, route: this.#route.pattern, err: error }, 'handler error');
    }
    try {
      return options.mapError(error, this);
    } catch (mappingError) {
      // mapError itself failed: never leave the response hanging.
      options.logger.error({ listener: options.name, err: mappingError }, 'error mapping failed');
      return { status: 500, body: '' };
    }
  }

  /** The answer is complete (or abandoned): totals and the request log. */
  #finish(): void {
    const { totals, options } = this.#core;
    totals.finished(this.#status, this.#aborted, performance.now() - this.#started);
    if (options.logRequests) options.logger.info({ method: this.method, route: this.#route.pattern, status: this.#aborted ? 'aborted' : this.#status }, 'request');
  }
}

export class HttpServer {
  readonly metrics: HttpMetrics;
  /** This listener's totals since start (requests, status families, aborted, in flight, response times). */
  readonly totals = new ListenerTotals();
  readonly #options: HttpServerOptions;
  readonly #engine: Engine;
  readonly #core: ListenerCore;
  #port = 0;
  #killed = false;
  #closed: Promise<void> | undefined;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.metrics = options.metrics ?? new HttpMetrics();
    this.#core = new ListenerCore(options, this.totals);
    this.#engine = resolveEngine(options.engine, options.logger) === 'uws' ? new UwsEngine() : new NodeEngine(options.nodeEngine);
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
    for (const exchange of core.inFlight) exchange.cancel(new AbortedError('server closing'));
    this.#engine.closeAll();
    this.#options.logger.info({ listener: this.#options.name, abandoned: core.inFlight.size }, 'closed');
  }

  /** What a route needs per request, worked out once at registration. */
  #route(pattern: string, handler: Handler, options: RouteOptions): Route {
    return { pattern, handler, options, paramCount: (pattern.match(/\/:/g) ?? []).length, metrics: this.metrics.route(this.#options.name, pattern), cors: 'answer' };
  }

  /** One engine callback per route, made once: each request is one Exchange. */
  #bind(method: Method, pattern: string, route: Route): void {
    const core = this.#core;
    this.#engine.route(method, pattern, (res, req) => new Exchange(core, route, res, req).run());
  }
}

/**
 * A whole request body of at most `maxBytes`, gathered straight from uWS (no stream: the body is held in memory
 * either way, so there is nothing to pause for). A declared or received size over the bound fails with
 * PayloadTooLargeError before more is kept; a missed deadline with RequestTimeoutError; `cancel` (a disconnect, the
 * server closing) with its reason.
 */
function collectBody(
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
      if (isLast) watch.complete();
      if (settled) return;
      watch.received(chunk.byteLength);
      received += chunk.byteLength;
      if (received > maxBytes) return fail(new PayloadTooLargeError(maxBytes));
      // uWS neuters the chunk after this callback returns: copy it.
      chunks.push(Buffer.from(chunk.slice(0)));
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

/** The request body as a Readable fed by uWS: a full buffer pauses the socket, reading resumes it. */
function streamBody(res: EdgeResponse, maxBytes: number, signal: AbortSignal, finished: () => boolean, watch: BodyWatch): { stream: Readable; release(): void } {
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
    if (isLast) watch.complete();
    if (stream.destroyed) return;
    watch.received(chunk.byteLength);
    received += chunk.byteLength;
    if (received > maxBytes) {
      stream.destroy(new PayloadTooLargeError(maxBytes));
      return;
    }
    // uWS neuters the chunk after this callback returns: copy it.
    // Never pause on the last chunk: nothing more would come to resume for.
    if (!stream.push(Buffer.from(chunk.slice(0))) && !paused && !isLast && !finished()) {
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
type ConnectionEnding = 'keep' | 'announce' | 'force';

/** uWS's idle timer is 10 s; re-arming it well inside that keeps a slow body's connection ours to end. */
const UWS_REARM_MS = 4_000;
/** How often a body's deadlines are checked (their resolution). */
const BODY_WATCH_TICK_MS = 1_000;

/**
 * The one interval of a listener that checks every body still arriving: a timer made and cleared per request cost
 * more than the checks. It stops itself at the first tick that finds no body.
 */
class BodyWatchTicker {
  readonly #watches = new Set<BodyWatch>();
  #timer: NodeJS.Timeout | undefined;

  add(watch: BodyWatch): void {
    this.#watches.add(watch);
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), BODY_WATCH_TICK_MS);
    this.#timer.unref();
  }

  delete(watch: BodyWatch): void {
    this.#watches.delete(watch);
  }

  #tick(): void {
    if (this.#watches.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    for (const watch of [...this.#watches]) watch.tick();
  }
}

/**
 * One request body's deadlines (BodyDeadlines) and its standing with uWS's idle timer, which it keeps re-arming
 * (`pause()` + `resume()` re-arms it) while the body is read, so only these deadlines end a slow body. Time the
 * reader holds the socket paused (its own backpressure) counts against no deadline but the total.
 */
class BodyWatch {
  #watching = false;
  #onExpired: ((error: RequestTimeoutError) => void) | undefined;
  #isPaused: () => boolean = () => false;
  #complete = false;
  #expired = false;
  readonly #startedAt = performance.now();
  #lastByteAt = this.#startedAt;
  #windowStart = this.#startedAt;
  #windowBytes = 0;
  #rearmedAt = this.#startedAt;

  constructor(
    private readonly ticker: BodyWatchTicker,
    private readonly res: EdgeResponse,
    private readonly deadlines: BodyDeadlines,
    /** True once `res` may no longer be touched (answered or aborted). */
    private readonly finished: () => boolean,
  ) {}

  start(onExpired: (error: RequestTimeoutError) => void, isPaused: () => boolean): void {
    if (this.#complete) return;
    this.#onExpired = onExpired;
    this.#isPaused = isPaused;
    this.#watching = true;
    this.ticker.add(this);
  }

  received(bytes: number): void {
    this.#lastByteAt = performance.now();
    this.#windowBytes += bytes;
  }

  /** The last chunk arrived. */
  complete(): void {
    this.#complete = true;
    this.stop();
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
    const now = performance.now();
    const { idleMs, totalMs, floorBytes, floorWindowMs } = this.deadlines;
    if (now - this.#startedAt > totalMs) return this.#expire('total');
    if (this.#isPaused()) {
      this.#lastByteAt = now;
      this.#windowStart = now;
      this.#windowBytes = 0;
      return;
    }
    if (now - this.#lastByteAt > idleMs) return this.#expire('idle');
    if (now - this.#windowStart >= floorWindowMs) {
      if (this.#windowBytes < floorBytes) return this.#expire('floor');
      this.#windowStart = now;
      this.#windowBytes = 0;
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
