// An HTTP/1.1 keep-alive client for small JSON exchanges with a known set of origins (the console's ADAMANT nodes),
// written for the cost per exchange: the console server is a proxy, and node:http's ClientRequest, agent and
// IncomingMessage stream cost it about 30 µs of CPU per call, three times what the exchange needs. Here one call
// is one write of the whole request and, usually, one read of the whole answer parsed in place.
//
// What it does (and what it deliberately does not):
// - one request per connection at a time (no pipelining), connections kept per origin, at most `maxSockets`, the
//   most recently used first; callers past the limit wait in order;
// - the answer framed by Content-Length, chunked transfer coding (with trailers) or the connection's close; 1xx
//   heads skipped; a head over MAX_HEAD_BYTES or a body over `maxResponseBytes` is refused;
// - an idle connection is closed after `idleTimeoutMs` (below the 5 s keep-alive of Node servers, so the server
//   rarely closes a connection the client is about to use) and never keeps the process alive;
// - a GET whose reused connection closes before any byte of the answer is sent once more on a new connection (the
//   server had closed an idle connection); a POST never is: its failure says whether the request was written.
//
// Why it is not undici (issue 32): the same console server on undici 7.30 (bench/support/undici-http-client.ts, the
// same contract) spent about 30% more CPU per proxied call in the same bench runs (median of 20), and this client
// meets the console's throughput goal by 7-10% (README, "Tests and benchmarks").

import net from 'node:net';
import tls from 'node:tls';
import { AbortedError } from '../src/errors.js';
import { systemClock, type Clock } from '../src/clock.js';
import { onAbort, type Cancellation } from '../src/cancellation.js';
import { HttpExchangeError, MAX_HEAD_BYTES, type HttpAnswer, type HttpClientOptions } from './http-exchange.js';

/** The longest chunk-size or trailer line accepted in a chunked body. */
const MAX_CHUNK_LINE_BYTES = 4 * 1024;

// ---------------------------------------------------------------------------------------------
// The answer parser: fed the bytes of one connection, it finds the end of one answer.

const enum Framing {
  None,
  Length,
  Chunked,
  UntilClose,
}

const enum ChunkStep {
  Size,
  Data,
  DataEnd,
  Trailer,
}

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;

/**
 * `kept` (what arrived earlier of an unfinished head or line) and `data` joined, up to `delimiter`: its text (latin1)
 * and the bytes after it; or, while the delimiter has not arrived, the bytes to keep, refused past `limit`.
 */
function untilDelimiter(kept: Buffer | undefined, data: Buffer, delimiter: Buffer, limit: number, refusal: string): { text: string; rest: Buffer } | { kept: Buffer } {
  const buffered = kept ? Buffer.concat([kept, data]) : data;
  const end = buffered.indexOf(delimiter);
  if (end >= 0) return { text: buffered.toString('latin1', 0, end), rest: buffered.subarray(end + delimiter.length) };
  if (buffered.length > limit) throw new HttpExchangeError(refusal, true);
  return { kept: buffered };
}

/** Parses one answer at a time. `feed` returns 'more' until the answer is complete, then 'done' (see `extra`). */
class AnswerParser {
  status = 0;
  keepAlive = false;
  /** Bytes after the end of the answer (a server that sent more than one answer: the connection is not reused). */
  extra = false;
  /** Any byte of the answer arrived. */
  started = false;
  #head: Buffer | undefined;
  #inHead = true;
  #framing = Framing.None;
  #remaining = 0;
  #chunkStep = ChunkStep.Size;
  #line: Buffer | undefined;
  #parts: Buffer[] = [];
  #bodyBytes = 0;

  constructor(
    private readonly maxBodyBytes: number,
    private readonly method: string,
  ) {}

  get body(): Buffer {
    return this.#parts.length === 1 ? this.#parts[0]! : Buffer.concat(this.#parts, this.#bodyBytes);
  }

  /** Throws HttpExchangeError for an answer that breaks HTTP/1.1 or the limits. */
  feed(chunk: Buffer): 'more' | 'done' {
    this.started = true;
    let data = chunk;
    while (this.#inHead) {
      const found = untilDelimiter(this.#head, data, HEAD_END, MAX_HEAD_BYTES, 'answer head is too large');
      if ('kept' in found) {
        this.#head = found.kept;
        return 'more';
      }
      if (found.text.length > MAX_HEAD_BYTES) throw new HttpExchangeError('answer head is too large', true);
      this.#head = undefined;
      data = found.rest;
      const informational = this.#readHead(found.text);
      if (!informational) this.#inHead = false;
      else if (data.length === 0) return 'more';
    }
    return this.#readBody(data);
  }

  /** The connection ended: completes an answer framed by the close, fails any other. */
  end(): void {
    if (!this.#inHead && this.#framing === Framing.UntilClose) return;
    throw new HttpExchangeError(this.started ? 'the connection closed before the whole answer arrived' : 'the connection closed without an answer', true);
  }

  /** Reads a head; true for an informational (1xx) one, after which the real head follows. */
  #readHead(head: string): boolean {
    const lines = head.split('\r\n');
    const statusLine = STATUS_LINE.exec(lines[0]!);
    if (!statusLine) throw new HttpExchangeError('the answer is not HTTP/1.x', true);
    const status = Number(statusLine[2]);
    if (status < 200) return true;
    let length: number | undefined;
    let chunked = false;
    // Set by `Connection: close` only; HTTP/1.0's default (close unless `keep-alive`) is applied below. Starting an
    // HTTP/1.0 answer as closed made every one of them unreusable, `Connection: keep-alive` or not.
    let close = false;
    let keepAlive = false;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new HttpExchangeError('malformed header line in the answer', true);
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-length') {
        if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value))) throw new HttpExchangeError('invalid Content-Length in the answer', true);
        length = Number(value);
      } else if (name === 'transfer-encoding') {
        // Only chunked itself: the request asks for no other coding (a gzip, chunked body would come back gzipped).
        chunked = /^chunked$/i.test(value);
        if (!chunked) throw new HttpExchangeError(`unsupported Transfer-Encoding '${value}' in the answer`, true);
      } else if (name === 'connection') {
        for (const token of value.toLowerCase().split(',')) {
          if (token.trim() === 'close') close = true;
          else if (token.trim() === 'keep-alive') keepAlive = true;
        }
      }
    }
    this.status = status;
    // HTTP/1.1 keeps the connection unless told to close; HTTP/1.0 only when told to keep it.
    this.keepAlive = statusLine[1] === '1' ? !close : keepAlive && !close;
    if (this.method === 'HEAD' || status === 204 || status === 304) this.#framing = Framing.None;
    else if (chunked) this.#framing = Framing.Chunked;
    else if (length !== undefined) {
      if (length > this.maxBodyBytes) throw new HttpExchangeError(`answer of ${length} bytes is too large`, true);
      this.#framing = Framing.Length;
      this.#remaining = length;
    } else {
      this.#framing = Framing.UntilClose;
      this.keepAlive = false;
    }
    return false;
  }

  #take(data: Buffer): void {
    if (data.length === 0) return;
    this.#bodyBytes += data.length;
    if (this.#bodyBytes > this.maxBodyBytes) throw new HttpExchangeError('answer is too large', true);
    this.#parts.push(data);
  }

  #readBody(data: Buffer): 'more' | 'done' {
    switch (this.#framing) {
      case Framing.None:
        this.extra = data.length > 0;
        return 'done';
      case Framing.UntilClose:
        this.#take(data);
        return 'more';
      case Framing.Length: {
        const taken = Math.min(this.#remaining, data.length);
        this.#take(data.subarray(0, taken));
        this.#remaining -= taken;
        if (this.#remaining > 0) return 'more';
        this.extra = data.length > taken;
        return 'done';
      }
      case Framing.Chunked:
        return this.#readChunks(data);
    }
  }

  #readChunks(input: Buffer): 'more' | 'done' {
    let data = input;
    while (data.length > 0) {
      if (this.#chunkStep === ChunkStep.Data) {
        const taken = Math.min(this.#remaining, data.length);
        this.#take(data.subarray(0, taken));
        this.#remaining -= taken;
        data = data.subarray(taken);
        if (this.#remaining === 0) this.#chunkStep = ChunkStep.DataEnd;
        continue;
      }
      // The other steps read a line.
      const found = untilDelimiter(this.#line, data, CRLF, MAX_CHUNK_LINE_BYTES, 'malformed chunked answer');
      if ('kept' in found) {
        this.#line = found.kept;
        return 'more';
      }
      this.#line = undefined;
      const line = found.text;
      data = found.rest;
      if (this.#chunkStep === ChunkStep.DataEnd) {
        if (line !== '') throw new HttpExchangeError('malformed chunked answer', true);
        this.#chunkStep = ChunkStep.Size;
      } else if (this.#chunkStep === ChunkStep.Size) {
        const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line);
        if (!size) throw new HttpExchangeError('malformed chunked answer', true);
        this.#remaining = parseInt(size[1]!, 16);
        this.#chunkStep = this.#remaining === 0 ? ChunkStep.Trailer : ChunkStep.Data;
      } else if (line === '') {
        // The empty line after the trailers: the answer is complete.
        this.extra = data.length > 0;
        return 'done';
      }
    }
    return 'more';
  }
}

// ---------------------------------------------------------------------------------------------
// Connections and the per-origin pool.

interface Exchange {
  readonly method: string;
  readonly head: string;
  readonly timeoutMs: number;
  /** The clock's time past which the exchange has timed out, however long it waited for a connection. */
  readonly deadline: number;
  readonly signal: Cancellation;
  /** A connection wrote the request: stays true on the new connection of a retried GET (the server may have it). */
  written?: boolean;
  resolve(answer: HttpAnswer): void;
  reject(error: Error): void;
}

type ConnectionState = 'connecting' | 'busy' | 'idle' | 'closed';

class Connection {
  state: ConnectionState = 'connecting';
  /** Served an exchange before the current one: a failure before any answer byte may be the server's idle close. */
  reused = false;
  readonly socket: net.Socket;
  #pool: OriginPool;
  #exchange: Exchange | undefined;
  #parser: AnswerParser | undefined;
  #written = false;
  #timer: unknown;
  #stopWaiting: (() => void) | undefined;

  constructor(pool: OriginPool) {
    this.#pool = pool;
    const { host, port, secure, servername, ca } = pool.target;
    this.socket = secure ? tls.connect({ host, port, servername, ca, ALPNProtocols: ['http/1.1'] }) : net.connect({ host, port });
    this.socket.setNoDelay(true);
    this.socket.once(secure ? 'secureConnect' : 'connect', () => this.#connected());
    this.socket.on('data', (chunk: Buffer) => this.#data(chunk));
    this.socket.on('end', () => this.#ended());
    this.socket.on('error', (error: NodeJS.ErrnoException) => this.#fail(new HttpExchangeError(error.code || error.message, this.#written)));
    this.socket.on('close', () => this.#closed());
    // An idle connection closes itself; uses its own socket timer, which keeps no process alive.
    this.socket.on('timeout', () => this.state === 'idle' && this.socket.destroy());
  }

  /** Starts an exchange on this connection (connecting or idle). */
  start(exchange: Exchange): void {
    this.#exchange = exchange;
    this.#parser = new AnswerParser(this.#pool.options.maxResponseBytes, exchange.method);
    this.#written = exchange.written === true;
    // A timeout is no idle close: the GET is not sent again (that would double its time and the server's work).
    const { clock } = this.#pool;
    this.#timer = clock.setTimeout(
      () => this.#fail(new HttpExchangeError(`timed out after ${exchange.timeoutMs} ms`, this.#written), false),
      Math.max(0, exchange.deadline - clock.now()),
    );
    this.#stopWaiting = onAbort(exchange.signal, () => this.#fail(new AbortedError()));
    if (this.state === 'idle') {
      this.state = 'busy';
      this.socket.setTimeout(0);
      this.socket.ref();
      this.#write();
    }
  }

  #connected(): void {
    if (this.state !== 'connecting') return;
    this.state = 'busy';
    if (this.#exchange) this.#write();
  }

  #write(): void {
    this.#written = this.#exchange!.written = true;
    this.socket.write(this.#exchange!.head);
  }

  #data(chunk: Buffer): void {
    const parser = this.#parser;
    if (!parser || this.state !== 'busy') {
      // Bytes nobody asked for: the server is confused; this connection is not used again.
      this.socket.destroy();
      return;
    }
    let step: 'more' | 'done';
    try {
      step = parser.feed(chunk);
    } catch (error) {
      return this.#fail(error as Error);
    }
    if (step === 'done') this.#complete(parser.keepAlive && !parser.extra);
  }

  #ended(): void {
    const parser = this.#parser;
    if (!parser || this.state !== 'busy') return;
    try {
      parser.end();
    } catch (error) {
      return this.#fail(error as Error);
    }
    this.#complete(false);
  }

  #complete(reusable: boolean): void {
    const exchange = this.#release();
    const parser = this.#parser!;
    this.#parser = undefined;
    if (!exchange) return;
    exchange.resolve({ status: parser.status, body: parser.body });
    if (!reusable) {
      this.socket.destroy();
      return;
    }
    this.reused = true;
    this.state = 'idle';
    this.#pool.idle(this);
  }

  /** Fails the exchange in progress (if any) and closes the connection; `mayRetry` false for a timeout. */
  #fail(error: Error, mayRetry = true): void {
    const exchange = this.#release();
    const parser = this.#parser;
    this.#parser = undefined;
    this.socket.destroy();
    if (!exchange) return;
    // The server closed a connection it had kept for us: a GET goes again on a fresh one.
    // Not after HttpClient.close(): that closed the connection, and the pool is gone.
    if (mayRetry && this.reused && exchange.method === 'GET' && error instanceof HttpExchangeError && !parser?.started && !exchange.signal.aborted && !this.#pool.closing) {
      this.#pool.send(exchange, true);
      return;
    }
    exchange.reject(error);
  }

  #release(): Exchange | undefined {
    const exchange = this.#exchange;
    this.#exchange = undefined;
    if (this.#timer !== undefined) this.#pool.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#stopWaiting?.();
    this.#stopWaiting = undefined;
    return exchange;
  }

  #closed(): void {
    if (this.#exchange) this.#fail(new HttpExchangeError('the connection closed', this.#written));
    this.state = 'closed';
    this.#pool.closed(this);
  }
}

interface Target {
  readonly host: string;
  readonly port: number;
  readonly secure: boolean;
  readonly servername: string | undefined;
  readonly ca: string | Buffer | undefined;
  /** The Host header. */
  readonly authority: string;
}

class OriginPool {
  readonly #idle: Connection[] = [];
  readonly #open = new Set<Connection>();
  readonly #queue: Exchange[] = [];

  constructor(
    readonly target: Target,
    readonly options: HttpClientOptions,
    readonly clock: Clock,
  ) {}

  send(exchange: Exchange, fresh = false): void {
    if (!fresh) {
      const connection = this.#idle.pop();
      if (connection) return connection.start(exchange);
    }
    if (this.#open.size < this.options.maxSockets) {
      const connection = new Connection(this);
      this.#open.add(connection);
      return connection.start(exchange);
    }
    // Every connection is busy: wait in line, leaving it on abort or at the exchange's deadline.
    this.#queue.push(exchange);
    const leave = (error: Error) => {
      const at = this.#queue.indexOf(exchange);
      if (at >= 0) this.#queue.splice(at, 1), exchange.reject(error);
    };
    const stopWaiting = onAbort(exchange.signal, () => leave(new AbortedError()));
    const timer = this.clock.setTimeout(
      () => leave(new HttpExchangeError(`timed out after ${exchange.timeoutMs} ms (waiting for a connection)`, exchange.written === true)),
      Math.max(0, exchange.deadline - this.clock.now()),
    );
    const { resolve, reject } = exchange;
    const done = () => (stopWaiting(), this.clock.clearTimeout(timer));
    exchange.resolve = (answer) => (done(), resolve(answer));
    exchange.reject = (error) => (done(), reject(error));
  }

  /** A connection finished an exchange and may be reused. */
  idle(connection: Connection): void {
    const waiting = this.#queue.shift();
    if (waiting) return connection.start(waiting);
    connection.socket.unref();
    connection.socket.setTimeout(this.options.idleTimeoutMs);
    this.#idle.push(connection);
  }

  closed(connection: Connection): void {
    this.#open.delete(connection);
    const at = this.#idle.indexOf(connection);
    if (at >= 0) this.#idle.splice(at, 1);
    const waiting = this.#queue.shift();
    if (waiting) this.send(waiting, true);
  }

  /** Set by close(): no GET is retried and no queued exchange started (it would open a connection nobody closes). */
  closing = false;

  close(): void {
    this.closing = true;
    for (const exchange of this.#queue.splice(0)) exchange.reject(new HttpExchangeError('the client was closed', exchange.written === true));
    for (const connection of this.#open) connection.socket.destroy();
  }
}

/** A client of any number of origins, each with its own pool; `url` is absolute (http or https). */
export class HttpClient {
  readonly #pools = new Map<string, OriginPool>();

  readonly #clock: Clock;

  constructor(readonly options: HttpClientOptions) {
    this.#clock = options.clock ?? systemClock;
  }

  /**
   * One exchange. `body` (JSON text) makes it carry `Content-Type: application/json`. Rejects with HttpExchangeError
   * for every failure of the server or the network (timeouts included) and with AbortedError when `signal` aborts.
   */
  request(method: 'GET' | 'POST', url: string, body: string | undefined, signal: Cancellation, timeoutMs: number): Promise<HttpAnswer> {
    return new Promise<HttpAnswer>((resolve, reject) => {
      if (signal.aborted) return reject(new AbortedError());
      let pool: OriginPool;
      let target: string;
      try {
        ({ pool, target } = this.#poolFor(url));
      } catch (error) {
        return reject(error);
      }
      let head = `${method} ${target} HTTP/1.1\r\nHost: ${pool.target.authority}\r\nAccept: application/json\r\n`;
      head += body === undefined ? '\r\n' : `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
      pool.send({ method, head, timeoutMs, deadline: this.#clock.now() + timeoutMs, signal, resolve, reject });
    });
  }

  /** Closes every connection (in use or idle). */
  close(): void {
    for (const pool of this.#pools.values()) pool.close();
    this.#pools.clear();
  }

  #poolFor(url: string): { pool: OriginPool; target: string } {
    // The origin is everything before the path's first slash after `//`: split without a URL object per request.
    const pathAt = url.indexOf('/', url.indexOf('//') + 2);
    const origin = pathAt < 0 ? url : url.slice(0, pathAt);
    const target = pathAt < 0 ? '/' : url.slice(pathAt);
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new OriginPool(parseOrigin(origin, this.options.ca), this.options, this.#clock);
      this.#pools.set(origin, pool);
    }
    if (/[^\x21-\x7e]/.test(target)) throw new HttpExchangeError(`'${url}' is not a valid request target`, false);
    return { pool, target };
  }
}

function parseOrigin(origin: string, ca: string | Buffer | undefined): Target {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    throw new HttpExchangeError(`'${origin}' is not a URL`, false);
  }
  const secure = url.protocol === 'https:';
  if (!secure && url.protocol !== 'http:') throw new HttpExchangeError(`unsupported protocol ${url.protocol}`, false);
  // URL keeps IPv6 addresses in brackets; sockets want them bare.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return {
    host,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    secure,
    // SNI names a host, never an address (RFC 6066).
    servername: secure && net.isIP(host) === 0 ? host : undefined,
    ca,
    authority: url.host,
  };
}
