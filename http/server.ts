// The uWebSockets.js edge (DESIGN.md, "The HTTP edge"). Every route goes through `#wrap`, which keeps
// uWS's rules in one place: request data is copied before the first await, `onAborted` is attached
// synchronously, writes after an await happen inside `res.cork()`, nothing touches `res` after an abort,
// large bodies go out with tryEnd/onWritable backpressure, and request bodies are bounded before and while
// they are read. Handlers are plain async functions from a copied request to a reply.

import { STATUS_CODES } from 'node:http';
import uWS from 'uWebSockets.js';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import type { Logger } from '../src/logger.js';
import { HttpMetrics } from './metrics.js';

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
  readonly remoteAddress: string;
  /** The request body when the route asked for one (`body.maxBytes`). */
  readonly body?: Buffer;
}

export interface HttpReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
}

export interface RequestContext {
  /** Aborts when the client disconnects or the server closes. */
  readonly signal: AbortSignal;
}

export type Handler = (request: HttpRequest, context: RequestContext) => HttpReply | Promise<HttpReply>;

export interface RouteOptions {
  /** Read and bound the request body before the handler runs. */
  readonly body?: { readonly maxBytes: number };
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
}

/** The request body was larger than the route allows (DESIGN.md: bounded before read). */
export class PayloadTooLargeError extends Error {
  override readonly name = 'PayloadTooLargeError';
  constructor(readonly maxBytes: number) {
    super(`request body exceeds ${maxBytes} bytes`);
  }
}

type Method = 'get' | 'post' | 'put' | 'del' | 'patch' | 'head' | 'options' | 'any';

export class HttpServer {
  readonly metrics = new HttpMetrics();
  readonly #options: HttpServerOptions;
  readonly #app: TemplatedApp;
  #listenSocket: us_listen_socket | undefined;
  #port = 0;
  #inFlight = new Set<AbortController>();
  #drained: (() => void) | undefined;
  #closing = false;

  constructor(options: HttpServerOptions) {
    this.#options = options;
    this.#app = uWS.App();
  }

  get port(): number {
    return this.#port;
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  route(method: Method, pattern: string, handler: Handler, options: RouteOptions = {}): this {
    this.#app[method](pattern, (res, req) => this.#wrap(pattern, handler, options, res, req));
    return this;
  }

  /** Registers the catch-all 404 last, then binds. Resolves with the bound port (useful with port 0). */
  listen(): Promise<number> {
    this.#app.any('/*', (res, req) => this.#wrap('*', (request) => this.#options.notFound(request), {}, res, req));
    return new Promise((resolve, reject) => {
      this.#app.listen(this.#options.host, this.#options.port, (socket) => {
        if (!socket) {
          reject(new Error(`${this.#options.name}: cannot listen on ${this.#options.host}:${this.#options.port}`));
          return;
        }
        this.#listenSocket = socket;
        this.#port = uWS.us_socket_local_port(socket);
        this.#options.logger.info({ listener: this.#options.name, host: this.#options.host, port: this.#port }, 'listening');
        resolve(this.#port);
      });
    });
  }

  /**
   * Graceful close: stop accepting, let in-flight requests finish for up to `drainMs`, then abort the rest
   * and close every connection (keep-alive sockets would otherwise hold the process open).
   */
  async close(drainMs = 5_000): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#listenSocket) uWS.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = undefined;
    if (this.#inFlight.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs);
        this.#drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    for (const controller of this.#inFlight) controller.abort(new Error('server closing'));
    // `close()` exists at runtime but is missing from the bundled typings (notes/dependencies.md §1).
    (this.#app as unknown as { close(): void }).close();
    this.#options.logger.info({ listener: this.#options.name, abandoned: this.#inFlight.size }, 'closed');
  }

  #wrap(pattern: string, handler: Handler, options: RouteOptions, res: UwsResponse, req: UwsRequest): void {
    // Copy everything from `req` now: it is stack-allocated and invalid after this function returns.
    const headers: Record<string, string> = {};
    req.forEach((key, value) => (headers[key] = value));
    const paramCount = (pattern.match(/\/:/g) ?? []).length;
    const params: string[] = [];
    for (let i = 0; i < paramCount; i++) params.push(req.getParameter(i) ?? '');
    const request: HttpRequest = {
      method: req.getMethod().toUpperCase(),
      path: req.getUrl(),
      query: req.getQuery() ?? '',
      headers,
      params,
      remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
    };
    const controller = new AbortController();
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
      controller.abort(new Error('client disconnected'));
    });
    this.#inFlight.add(controller);
    const started = performance.now();

    const respond = (reply: HttpReply) => {
      this.metrics.observe(this.#options.name, pattern, reply.status, performance.now() - started);
      if (aborted) return;
      res.cork(() => this.#write(res, reply, () => aborted));
    };
    const finish = () => {
      this.#inFlight.delete(controller);
      if (this.#inFlight.size === 0) this.#drained?.();
    };

    const run = async (): Promise<HttpReply> => {
      const body = options.body ? await readBody(res, headers, options.body.maxBytes, controller.signal) : undefined;
      return handler(body ? { ...request, body } : request, { signal: controller.signal });
    };
    run()
      .catch((error: unknown) => {
        if (!(error instanceof PayloadTooLargeError) && !aborted) {
          this.#options.logger.debug({ listener: this.#options.name, route: pattern, err: error }, 'handler error');
        }
        return this.#options.mapError(error, request);
      })
      .then(respond, (error: unknown) => {
        // mapError itself failed: never leave the response hanging.
        this.#options.logger.error({ listener: this.#options.name, err: error }, 'error mapping failed');
        respond({ status: 500, body: '' });
      })
      .finally(finish);
  }

  #write(res: UwsResponse, reply: HttpReply, isAborted: () => boolean): void {
    res.writeStatus(`${reply.status} ${STATUS_CODES[reply.status] ?? 'Unknown'}`);
    for (const [key, value] of Object.entries(this.#options.defaultHeaders ?? {})) res.writeHeader(key, value);
    for (const [key, value] of Object.entries(reply.headers ?? {})) res.writeHeader(key, value);
    const body = reply.body === undefined ? Buffer.alloc(0) : typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
    if (body.length <= 64 * 1024) {
      res.end(body);
      return;
    }
    // Large body: stream with backpressure instead of buffering it all in uWS.
    const startOffset = res.getWriteOffset();
    const [ok, done] = res.tryEnd(body, body.length);
    if (ok || done) return;
    res.onWritable((offset) => {
      if (isAborted()) return true;
      const [retryOk] = res.tryEnd(body.subarray(offset - startOffset), body.length);
      return retryOk;
    });
  }
}

/** Reads a request body, refusing it from Content-Length before reading and from the streamed count while reading. */
function readBody(res: UwsResponse, headers: Record<string, string>, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = headers['content-length'];
    if (declared !== undefined && Number(declared) > maxBytes) {
      reject(new PayloadTooLargeError(maxBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let failed = false;
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    res.onData((chunk, isLast) => {
      if (failed) return;
      received += chunk.byteLength;
      if (received > maxBytes) {
        failed = true;
        reject(new PayloadTooLargeError(maxBytes));
        return;
      }
      // uWS neuters the chunk after this callback returns: copy it.
      chunks.push(Buffer.from(new Uint8Array(chunk.slice(0))));
      if (isLast) resolve(Buffer.concat(chunks, received));
    });
  });
}
