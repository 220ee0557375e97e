// The node:http engine (http/engine.ts): HTTP/1.0 and 1.1, keep-alive, pipelined requests answered in order, 400 for
// a malformed request line or header and for HTTP/1.1 without Host, 431 for oversized headers; it runs on any Node
// version. Routes match with uWS's rules (http/router.ts); each response offers the uWS surface the edge uses.
// WebSockets are the `ws` package's (README "Dependencies"), in its `noServer` mode behind node:http's 'upgrade'.

import { createHook } from 'node:async_hooks';
// Imported rather than read from globalThis, where Node defines `Buffer` as an accessor (a getter call per use).
import { Buffer } from 'node:buffer';
import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { EdgeRequest, EdgeResponse, EdgeWebSocket, Engine, EngineMethod, RouteCallback, WebSocketBehavior } from './engine.js';
import { Router, type RouteMatch } from './router.js';

export interface NodeEngineOptions {
  /**
   * A request's headers must arrive within this (slowloris on headers; Node's own default 60 s). Bodies are bounded
   * by the edge's body deadlines (http/body.ts BodyDeadlines), so Node's whole-request timeout is off and cannot cut
   * a slow upload the edge still allows.
   */
  readonly headersTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this (Node's default 5 s). */
  readonly keepAliveTimeoutMs?: number;
}

const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;
const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node checks the headers deadline (its default, 30 s, would let a 60 s deadline run to 90 s). */
const DEADLINE_CHECK_MS = 1_000;

/**
 * One of Node's own `process.nextTick` objects, kept for the life of the process so that every later one has the same
 * map. nextTick makes each with an object literal that starts with computed symbol keys (`{[async_id_symbol]: …,
 * [trigger_async_id_symbol]: …, …, callback, args}`), and node:http and its streams call it several times per request.
 * V8 holds the transitions to that literal's maps weakly: a mark-compact GC while no tick object is alive drops them,
 * the next tick objects get new maps, and once the literal's property definitions have seen enough maps their
 * feedback is megamorphic and every call defines the properties through the V8 runtime. Seen on Node 22 and 24 in the
 * node engine's process of `npm run bench -- edge` (this project's modules make the heap large enough for a
 * mark-compact while it serves; the bare node:http server's stays below): perf put ~9% of the server's CPU in that
 * runtime path, and nextTick's feedback read MEGAMORPHIC; with one tick object kept it stays MONOMORPHIC and the path
 * is gone. Node 20 did not show it. The object is taken once, through an async hook enabled for that one call (its
 * documented `TickObject` resource); nothing else changes.
 */
let keptTickObject: object | undefined;

function keepOneTickObject(): void {
  if (keptTickObject !== undefined) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') keptTickObject ??= resource as object;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
}

keepOneTickObject();

/** Lower-case method names, made once per method (node:http's method strings come from a fixed table). */
const LOWER_METHODS = new Map<string, string>();
function lowerMethod(method: string): string {
  let lower = LOWER_METHODS.get(method);
  if (lower === undefined) {
    lower = method.toLowerCase();
    // Bounded: node:http parses only the methods it knows.
    LOWER_METHODS.set(method, lower);
  }
  return lower;
}

/** A cached "no route" (Map.get's undefined means "not worked out yet"). */
const NO_MATCH = null;

export class NodeEngine implements Engine {
  readonly name = 'node' as const;

  closesOnEarlyAnswer(): boolean {
    // An answer that says `Connection: close` makes Node end the socket when it is written (destroySoon), whatever
    // the request asked.
    return true;
  }

  readonly #router = new Router<RouteCallback>();
  /** Patterns without `:params` or `*`. */
  readonly #staticPatterns = new Set<string>();
  /**
   * The router's answer (route and parameters) for a path equal to a static pattern, per method: it depends only on
   * the method and the path until a route is added, so it is worked out once. Other paths (`:param` routes, the
   * catch-all) are matched every time, so the size is bounded by the methods node:http parses times the static
   * patterns, whatever paths clients send.
   */
  readonly #staticMatches = new Map<string, Map<string, RouteMatch<RouteCallback> | typeof NO_MATCH>>();
  readonly #sockets = new Set<Socket>();
  readonly #server: Server;
  /** WebSocket routes (GET only), each with the `ws` server that speaks the protocol on its sockets. */
  readonly #webSockets = new Router<{ readonly behavior: WebSocketBehavior; readonly wss: WebSocketServer }>();

  constructor(options: NodeEngineOptions = {}) {
    const serverOptions = {
      requestTimeout: 0,
      headersTimeout: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: DEADLINE_CHECK_MS,
      requireHostHeader: true,
    };
    this.#server = createServer(serverOptions, (req, res) => this.#dispatch(req, res));
    this.#server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
  }

  route(method: EngineMethod, pattern: string, callback: RouteCallback): void {
    this.#router.add(method, pattern, callback);
    if (!pattern.includes(':') && !pattern.includes('*')) this.#staticPatterns.add(pattern);
    this.#staticMatches.clear();
  }

  webSocket(pattern: string, behavior: WebSocketBehavior): void {
    // Compression off (as on uWS): a compressed reader's backlog would not be the bytes it is sent.
    const wss = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: behavior.maxPayloadLength });
    // With an 'upgrade' listener node:http hands every request with `Upgrade` to it, on any path (#upgrade).
    if (this.#server.listenerCount('upgrade') === 0) this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.#upgrade(req, socket, head));
    this.#webSockets.add('get', pattern, { behavior, wss });
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error) => reject(new Error(`cannot listen on ${host}:${port}: ${error.message}`));
      this.#server.once('error', onError);
      this.#server.listen(port, host, () => {
        this.#server.off('error', onError);
        const address = this.#server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  stopAccepting(): void {
    this.#server.close();
  }

  closeAll(): void {
    this.#server.close();
    for (const socket of this.#sockets) socket.destroy();
  }

  /**
   * A request with `Upgrade` (node:http has already taken the socket off its parser). To a WebSocket route: the route
   * accepts it (the `ws` server answers 101) or answers it over HTTP. Anywhere else, and refusals: answered as the
   * route table answers it, as uWS does (a client cannot insist on a protocol change), with the connection closed
   * after the answer (the parser is gone, so no next request can be read on it).
   */
  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const target = requestTarget(req.url ?? '/');
    const method = lowerMethod(req.method ?? 'GET');
    const match = this.#webSockets.match(method, target.path);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    const answerOverHttp = () => {
      res.on('finish', () => socket.end());
      // Unassigned, a ServerResponse keeps what it is given; assigning the socket writes it (or lets later writes through).
      res.assignSocket(socket as Socket);
    };
    if (!match) {
      answerOverHttp();
      this.#dispatch(req, res);
      return;
    }
    const { behavior, wss } = match.value;
    let accepted = false;
    behavior.upgrade(new NodeResponse(req, res), new NodeRequest(req, method, target.path, target.query, match.params), (session) => {
      accepted = true;
      wss.handleUpgrade(req, socket, head, (ws) => {
        const edge = new NodeWebSocket(ws, behavior.idleTimeoutSeconds);
        // A protocol error (an oversized or malformed frame) closes the socket with its code; nothing to report.
        ws.on('error', () => undefined);
        ws.on('close', (code, reason) => {
          edge.stopHeartbeat();
          session.closed(code, reason.toString());
        });
        session.open(edge);
      });
    });
    if (!accepted) answerOverHttp();
  }

  #dispatch(req: IncomingMessage, res: ServerResponse): void {
    const target = requestTarget(req.url ?? '/');
    const method = lowerMethod(req.method ?? 'GET');
    const match = this.#match(method, target.path);
    // The edge registers a catch-all, so this is only a request before it did.
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    match.value(new NodeResponse(req, res), new NodeRequest(req, method, target.path, target.query, match.params));
  }

  #match(method: string, path: string): RouteMatch<RouteCallback> | undefined {
    if (!this.#staticPatterns.has(path)) return this.#router.match(method, path);
    let byPath = this.#staticMatches.get(method);
    if (byPath === undefined) this.#staticMatches.set(method, (byPath = new Map()));
    let match = byPath.get(path);
    if (match === undefined) {
      match = this.#router.match(method, path) ?? NO_MATCH;
      byPath.set(path, match);
    }
    return match ?? undefined;
  }
}

/** Path and raw query of a request target: origin form `/p?q`, absolute form `http://h/p?q` (RFC 9112 §3.2), or `*`. */
function requestTarget(url: string): { path: string; query: string | undefined } {
  let target = url;
  if (!target.startsWith('/') && target !== '*') {
    const scheme = target.indexOf('://');
    const slash = scheme === -1 ? -1 : target.indexOf('/', scheme + 3);
    target = slash === -1 ? '/' : target.slice(slash);
  }
  const mark = target.indexOf('?');
  return mark === -1 ? { path: target, query: undefined } : { path: target.slice(0, mark), query: target.slice(mark + 1) };
}

/**
 * The `ws` package's WebSocket as the edge's, with uWS's idle rule: a peer that answered nothing (pong or message)
 * between two pings is cut. `ws` pings only when asked, so each socket pings every half idle timeout.
 */
class NodeWebSocket implements EdgeWebSocket {
  #heard = true;
  readonly #heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    idleTimeoutSeconds: number,
  ) {
    const heard = () => (this.#heard = true);
    ws.on('pong', heard);
    // Inbound messages are ignored beyond proving the peer alive (their size is bounded by maxPayload).
    ws.on('message', heard);
    if (idleTimeoutSeconds > 0) {
      this.#heartbeat = setInterval(() => {
        if (!this.#heard) {
          ws.terminate();
          return;
        }
        this.#heard = false;
        ws.ping();
      }, (idleTimeoutSeconds * 1000) / 2);
      this.#heartbeat.unref();
    }
  }

  stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
  }

  send(text: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }

  bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  cork(work: () => void): void {
    work();
  }

  end(code: number, reason: string): void {
    this.ws.close(code, reason);
  }

  terminate(): void {
    this.ws.terminate();
  }
}

class NodeRequest implements EdgeRequest {
  constructor(
    private readonly req: IncomingMessage,
    /** Lower-case. */
    private readonly method: string,
    private readonly path: string,
    private readonly query: string | undefined,
    private readonly params: readonly string[],
  ) {}

  getMethod(): string {
    return this.method;
  }

  getUrl(): string {
    return this.path;
  }

  getQuery(): string | undefined {
    return this.query;
  }

  getHeader(name: string): string {
    const value = this.req.headers[name];
    return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
  }

  forEach(visit: (name: string, value: string) => void): void {
    for (const [name, value] of Object.entries(this.req.headers)) {
      if (value !== undefined) visit(name, Array.isArray(value) ? value.join(', ') : value);
    }
  }

  getParameter(index: number): string | undefined {
    return this.params[index];
  }
}

const encoder = new TextEncoder();

/**
 * uWS's response surface over a ServerResponse. A streamed chunk is handed to the socket and reported "not ok" until
 * Node has written it out (its write callback): the edge offers the next chunk only then, so Node never holds a
 * chunk whose memory the source reuses (HttpReply.stream), and at most one chunk is buffered per response.
 */
class NodeResponse implements EdgeResponse {
  #status = 200;
  #message: string | undefined;
  readonly #headers: string[] = [];
  #written = 0;
  #writable: ((offset: number) => boolean) | undefined;
  #writablePending = false;
  #aborted: (() => void) | undefined;
  #watchingClose = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
  ) {}

  writeStatus(line: string): this {
    const space = line.indexOf(' ');
    this.#status = Number(space === -1 ? line : line.slice(0, space));
    this.#message = space === -1 ? undefined : line.slice(space + 1);
    return this;
  }

  writeHeader(name: string, value: string): this {
    this.#headers.push(name, value);
    return this;
  }

  end(body: string | Uint8Array = '', closeConnection = false): this {
    if (closeConnection && !this.#hasHeader('connection')) this.#headers.push('connection', 'close');
    this.#headers.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
    this.#head();
    this.res.end(body);
    return this;
  }

  endWithoutBody(): this {
    this.#head();
    this.res.end();
    return this;
  }

  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean] {
    if (!this.res.headersSent) {
      this.#headers.push('content-length', String(totalSize));
      this.#head();
    }
    if (chunk.byteLength === 0) return [true, this.#written >= totalSize];
    this.#written += chunk.byteLength;
    if (this.#written >= totalSize) {
      this.res.end(chunk);
      return [true, true];
    }
    this.res.write(chunk, () => this.#drained());
    return [false, false];
  }

  getWriteOffset(): number {
    return this.#written;
  }

  onWritable(handler: (offset: number) => boolean): this {
    this.#writable = handler;
    if (this.#writablePending) {
      this.#writablePending = false;
      queueMicrotask(() => this.#drained());
    }
    return this;
  }

  onAborted(handler: () => void): this {
    this.#aborted = handler;
    // Watched only for answers that attach a handler (those that outlive the route callback, which attach it inside
    // it, before 'close' can come): a synchronous answer adds no listener.
    if (!this.#watchingClose) {
      this.#watchingClose = true;
      const res = this.res;
      // 'close' before the answer finished: the client went away (or the connection was cut).
      res.once('close', () => {
        if (!res.writableFinished) this.#aborted?.();
        this.#aborted = undefined;
      });
    }
    return this;
  }

  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    this.req.on('data', (chunk: Buffer) => handler(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength) as ArrayBuffer, false));
    this.req.once('end', () => handler(new ArrayBuffer(0), true));
    return this;
  }

  pause(): this {
    this.req.pause();
    return this;
  }

  resume(): this {
    this.req.resume();
    return this;
  }

  cork(work: () => void): this {
    work();
    return this;
  }

  close(): this {
    this.res.destroy();
    return this;
  }

  getRemoteAddressAsText(): ArrayBuffer {
    return encoder.encode(this.req.socket.remoteAddress ?? '').buffer as ArrayBuffer;
  }

  #hasHeader(name: string): boolean {
    for (let i = 0; i < this.#headers.length; i += 2) if (this.#headers[i]!.toLowerCase() === name) return true;
    return false;
  }

  #head(): void {
    if (this.res.headersSent) return;
    this.res.writeHead(this.#status, this.#message, this.#headers);
  }

  #drained(): void {
    if (this.res.destroyed) return;
    const handler = this.#writable;
    if (!handler) {
      this.#writablePending = true;
      return;
    }
    handler(this.#written);
  }
}
