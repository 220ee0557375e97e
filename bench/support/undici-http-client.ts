// The console's HTTP client on undici 7.30 (issue 32), kept only so that `npm run bench -- console` measures it beside
// the client that ships (storage/http-client.ts) in the same run: the bench starts a second console server whose
// `storage/http-client.js` resolves to this file (./undici-http-client.hook.ts). It keeps the same contract
// (storage/http-exchange.ts); its contract suite ran green against it (git history: the commit that moved the console
// onto undici) before the measurements kept our client.
//
// Small JSON exchanges with a known set of origins: undici's Agent keeps a Pool per origin, at most `maxSockets`
// keep-alive connections each, one request per connection at a time (no pipelining), idle ones closed after
// `idleTimeoutMs` and never holding the process open; llhttp parses the answers.
//
// What this file adds to undici, because the console's failover depends on it (actors/console/ordered-node-client.ts):
// - every failure is an HttpExchangeError whose `written` says whether the request may have reached the node (a POST
//   is repeated on another node only when it certainly did not), or an AbortedError for the caller's cancellation;
// - a GET whose reused connection closes before any byte of the answer is sent once more (the node had closed an idle
//   connection as the request crossed it); a POST never is, and undici itself retries nothing;
// - the deadline of an exchange (waiting for a connection included) runs on the injected Clock (docs/DESIGN.md
//   rule 2), so undici's own header and body timers are off;
// - a head over MAX_HEAD_BYTES or a body over `maxResponseBytes` is refused (undici's limits, named here);
// - a request target that is not plain visible ASCII is refused before anything is sent.
// TLS: undici's connector sends SNI for a host name and none for an address (RFC 6066), offers only http/1.1.
// What undici does its own way: a connection is reused one event-loop turn after its answer (a request sent sooner
// takes another connection), an exchange aborted mid-way may be followed by a fresh idle connection, and an
// unsolicited `100 Continue` or a 204/304 with a non-zero Content-Length fails the exchange.

import { Agent, Client, Pool, type Dispatcher } from 'undici';
import { AbortedError } from '../../src/errors.js';
import { systemClock, type Clock } from '../../src/clock.js';
import { onAbort, type Cancellation } from '../../src/cancellation.js';
import { HttpExchangeError, MAX_HEAD_BYTES, type HttpAnswer, type HttpClientOptions } from '../../storage/http-exchange.js';

// Built once: undici copies header pairs into each request; the body's Content-Length it counts in UTF-8 bytes itself.
const GET_HEADERS = ['accept', 'application/json'];
const POST_HEADERS = ['accept', 'application/json', 'content-type', 'application/json'];
/** What HttpClient.close() destroys its agent with. */
const CLIENT_CLOSED = Object.assign(new Error('the client was closed'), { code: 'ADM_HTTP_CLIENT_CLOSED' });
/** Thrown from onRequestStart by an exchange that was given up before it reached a connection (see there). */
const GIVEN_UP = new Error('the exchange was given up before it was sent');

/**
 * One connection of an origin's pool: an undici Client (one socket at a time) that counts the answers its current
 * socket carried, so that a failure tells a reused connection (the node may have closed it while idle) from a new one.
 * undici says neither which connection took a request nor whether it was reused; it does hand each Client the
 * dispatch options of the requests it takes (the same object the caller passed: `dispatchedTo` maps it back), and a
 * Client emits 'connect' before it writes anything on a new socket.
 */
class CountingClient extends Client {
  /** Answers completed on the current socket. */
  answered = 0;

  constructor(origin: URL, options: Client.Options) {
    super(origin, options);
    this.on('connect', () => (this.answered = 0));
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    dispatchedTo.set(options, this);
    return super.dispatch(options, handler);
  }
}

/** The Client each exchange's request was last dispatched to (the handler undici passes on is its wrapper, not ours). */
const dispatchedTo = new WeakMap<Dispatcher.DispatchOptions, CountingClient>();

/** One request and its answer: undici's dispatch handler, the clock's deadline and the caller's cancellation. */
class Exchange implements Dispatcher.DispatchHandler {
  /** A connection took the request: stays true for the second try of a GET (the first connection may have got it). */
  #written = false;
  #controller: Dispatcher.DispatchController | undefined;
  /** This try's connection had carried an answer before. */
  #reused = false;
  /** A byte of this try's answer arrived. */
  #started = false;
  #retried = false;
  #settled = false;
  #status = 0;
  readonly #parts: Buffer[] = [];
  #bytes = 0;
  #timer: unknown;
  #stopWaiting: (() => void) | undefined;

  constructor(
    private readonly agent: Agent,
    private readonly options: Dispatcher.DispatchOptions,
    private readonly timeoutMs: number,
    private readonly clock: Clock,
    private readonly signal: Cancellation,
    private readonly resolve: (answer: HttpAnswer) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  /** Arms the deadline and the cancellation, and hands the request to undici. */
  send(): void {
    const { timeoutMs } = this;
    // A timeout is no idle close: a GET is not sent again after it (that would double its time and the node's work).
    this.#timer = this.clock.setTimeout(() => this.#giveUp(new HttpExchangeError(`timed out after ${timeoutMs} ms${this.#controller ? '' : ' (waiting for a connection)'}`, this.#written)), timeoutMs);
    this.#stopWaiting = onAbort(this.signal, () => this.#giveUp(new AbortedError()));
    this.agent.dispatch(this.options, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // Given up while it waited in undici's queue, which cannot be left: throwing here makes undici drop the request
    // and keep the connection (aborting through the controller would close a connection that did nothing wrong).
    if (this.#settled) throw GIVEN_UP;
    this.#controller = controller;
    this.#written = true;
    this.#started = false;
    this.#reused = dispatchedTo.get(this.options)!.answered > 0;
  }

  onResponseStarted(): void {
    this.#started = true;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number): void {
    // 1xx heads come here too; the last head is the answer's.
    this.#status = status;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#parts.push(chunk);
    this.#bytes += chunk.length;
  }

  onResponseEnd(): void {
    dispatchedTo.get(this.options)!.answered++;
    const body = this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#bytes);
    if (this.#settle()) this.resolve({ status: this.#status, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settled) return;
    // Our own timeout or abort, passed to the controller: already the answer.
    if (error instanceof HttpExchangeError || error instanceof AbortedError) return this.#fail(error);
    // The node closed a connection it had kept for us, before answering: a GET goes once more. Not after
    // HttpClient.close(): that destroyed the agent, and with it the connections.
    if (this.#reused && !this.#started && !this.#retried && this.options.method === 'GET' && !this.agent.destroyed && isTransport(error)) {
      this.#retried = true;
      this.#controller = undefined;
      this.#parts.length = 0;
      this.#bytes = 0;
      this.agent.dispatch(this.options, this);
      return;
    }
    this.#fail(new HttpExchangeError(describe(error, this.#started, this.#written), this.#written));
  }

  /** Ends the exchange before its answer (timeout, abort): on its connection if it has one, else at once. */
  #giveUp(error: HttpExchangeError | AbortedError): void {
    if (this.#settled) return;
    if (this.#controller) this.#controller.abort(error);
    else this.#fail(error);
  }

  #fail(error: Error): void {
    if (this.#settle()) this.reject(error);
  }

  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.clock.clearTimeout(this.#timer);
    this.#stopWaiting?.();
    return true;
  }
}

/** Failures of the connection itself (closed, reset, refused), as opposed to an answer undici refused. */
function isTransport(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

/** undici's failure as a message of ours (matched by no caller: the error's name and `written` are the contract). */
function describe(error: Error, started: boolean, written: boolean): string {
  const { code } = error as { code?: unknown };
  switch (code) {
    case 'UND_ERR_SOCKET':
      // 'other side closed' (a FIN) or 'closed'; anything else is an answer out of turn ('bad response').
      if (error.message !== 'other side closed' && error.message !== 'closed') return `the answer is not valid HTTP/1.1 (${error.message})`;
      return started ? 'the connection closed before the whole answer arrived' : 'the connection closed without an answer';
    case 'UND_ERR_HEADERS_OVERFLOW':
      return 'answer head is too large';
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return 'answer is too large';
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
      return 'the answer is not valid HTTP/1.1 (its body and Content-Length differ)';
    case 'UND_ERR_DESTROYED':
    case CLIENT_CLOSED.code:
      return written ? 'the connection closed: the client was closed' : 'the client was closed';
  }
  // Node's socket errors by code (ECONNREFUSED, ECONNRESET, a certificate's); llhttp's by its message.
  return typeof code === 'string' ? code : error.message;
}

/** A client of any number of origins, each with its own pool; `url` is absolute (http or https). */
export class HttpClient {
  #agent: Agent;
  readonly #clock: Clock;
  /** Origins as the caller writes them, checked once, as undici's origin. */
  readonly #origins = new Map<string, string>();

  constructor(readonly options: HttpClientOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#agent = this.#newAgent();
  }

  /**
   * One exchange. `body` (JSON text) makes it carry `Content-Type: application/json`. Rejects with HttpExchangeError
   * for every failure of the server or the network (timeouts included) and with AbortedError when `signal` aborts.
   */
  request(method: 'GET' | 'POST', url: string, body: string | undefined, signal: Cancellation, timeoutMs: number): Promise<HttpAnswer> {
    return new Promise<HttpAnswer>((resolve, reject) => {
      if (signal.aborted) return reject(new AbortedError());
      // The origin is everything before the path's first slash after `//`: split without a URL object per request.
      const pathAt = url.indexOf('/', url.indexOf('//') + 2);
      const path = pathAt < 0 ? '/' : url.slice(pathAt);
      let origin: string;
      try {
        origin = this.#origin(pathAt < 0 ? url : url.slice(0, pathAt));
        // undici accepts any latin1 byte in a path; a node gets visible ASCII only (what a URL's serializer writes).
        if (/[^\x21-\x7e]/.test(path)) throw new HttpExchangeError(`'${url}' is not a valid request target`, false);
      } catch (error) {
        return reject(error);
      }
      const options: Dispatcher.DispatchOptions = { origin, path, method, headers: body === undefined ? GET_HEADERS : POST_HEADERS, body };
      new Exchange(this.#agent, options, timeoutMs, this.#clock, signal, resolve, reject).send();
    });
  }

  /** Closes every connection (in use or idle): exchanges in flight or waiting reject; later ones open new connections. */
  close(): void {
    const agent = this.#agent;
    this.#agent = this.#newAgent();
    agent.destroy(CLIENT_CLOSED).catch(() => undefined);
  }

  #origin(text: string): string {
    let origin = this.#origins.get(text);
    if (origin === undefined) {
      origin = parseOrigin(text);
      this.#origins.set(text, origin);
    }
    return origin;
  }

  #newAgent(): Agent {
    const { maxSockets, idleTimeoutMs, maxResponseBytes, ca } = this.options;
    return new Agent({
      factory: (origin, options) => new Pool(origin, { ...options, factory: (url, clientOptions) => new CountingClient(url, clientOptions as Client.Options) }),
      connections: maxSockets,
      keepAliveTimeout: idleTimeoutMs,
      // A node's `Keep-Alive: timeout=N` may shorten the idle time (undici keeps 2 s below it), never lengthen it.
      keepAliveMaxTimeout: idleTimeoutMs,
      // The exchange's deadline runs on the injected clock (Exchange); undici's wall-clock timers would race it.
      headersTimeout: 0,
      bodyTimeout: 0,
      maxHeaderSize: MAX_HEAD_BYTES,
      maxResponseSize: maxResponseBytes,
      connect: ca === undefined ? undefined : { ca },
    });
  }
}

/** An http(s) origin as undici takes it, or HttpExchangeError (nothing sent). */
function parseOrigin(origin: string): string {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new HttpExchangeError(`'${origin}' is not a URL`, false);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HttpExchangeError(`unsupported protocol ${url.protocol}`, false);
  return url.origin;
}
