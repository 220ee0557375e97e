// WebSocket routes of the edge (issue 31: the operator listener's inspection socket), written once over the engines'
// EdgeWebSocket (http/engine.ts): the handshake checked the same way on both engines, the number of sockets per route
// bounded, and each socket's send backlog bounded, so a reader that does not read costs at most `maxBacklogBytes`
// before it is closed. Routes only send text messages; what a peer sends is dropped by the engine (and bounded by
// `maxPayloadLength`).

import type { EdgeWebSocket, WebSocketSession } from './engine.js';
import type { HttpReply, HttpRequest } from './server.js';

/** RFC 6455 §7.4.1: the server is going away (the listener closes). */
export const CLOSE_GOING_AWAY = 1001;
/** RFC 6455 §7.4.1 "policy violation": the reader's backlog passed the route's bound. */
export const CLOSE_TOO_SLOW = 1008;
/** A socket that did not answer its close frame within this is cut (a reader that never reads never will). */
export const CLOSE_GRACE_MS = 2_000;

export interface WebSocketRouteOptions {
  /** Refuses the upgrade with an HTTP answer (no socket is opened), or undefined to go on. Checked first. */
  readonly authorize: (request: HttpRequest) => HttpReply | undefined;
  /** Sockets open at once on this route; one more is refused with 503 before the upgrade. */
  readonly maxSockets: number;
  /** A socket whose unsent messages pass this many bytes is closed with CLOSE_TOO_SLOW. */
  readonly maxBacklogBytes: number;
  /** An inbound message longer than this closes the socket (http/engine.ts WebSocketBehavior). */
  readonly maxPayloadLength: number;
  /** A peer that answers no ping for about this long is cut. */
  readonly idleTimeoutSeconds: number;
  /** A socket was accepted for `request`; it is open from the call on. */
  readonly open: (socket: BoundedWebSocket, request: HttpRequest) => void;
}

const json = (status: number, error: string, headers: Record<string, string> = {}): HttpReply => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  body: JSON.stringify({ error }),
});

/** A Sec-WebSocket-Key is 16 bytes in base64 (RFC 6455 §4.1, item 7). */
const KEY = /^[+/0-9A-Za-z]{22}==$/;
const hasToken = (value: string | undefined, token: string) => (value ?? '').split(',').some((part) => part.trim().toLowerCase() === token);

/**
 * Why `request` (a GET: the engines route only GETs here) is no valid opening handshake (RFC 6455 §4.2.1), as the
 * HTTP answer to give, or undefined when it is one. uWS upgrades any request with a 24-character key and node:http
 * any with `Connection: upgrade`; checking here makes both refuse the same requests with the same answers.
 */
export function handshakeRefusal(request: HttpRequest): HttpReply | undefined {
  const { headers } = request;
  if (!hasToken(headers['upgrade'], 'websocket') || !hasToken(headers['connection'], 'upgrade')) {
    return json(426, 'WebSocket upgrade required', { upgrade: 'websocket', connection: 'upgrade' });
  }
  // §4.4: a version the server does not speak gets the versions it does.
  if (headers['sec-websocket-version'] !== '13') return json(426, 'Unsupported Sec-WebSocket-Version', { 'sec-websocket-version': '13' });
  if (!KEY.test(headers['sec-websocket-key'] ?? '')) return json(400, 'Missing or invalid Sec-WebSocket-Key');
  return undefined;
}

/** The sockets of one route: counted against `maxSockets`, closed together when the listener closes. */
export class WebSocketRoute {
  readonly #open = new Set<BoundedWebSocket>();
  #idle: (() => void) | undefined;

  constructor(readonly options: WebSocketRouteOptions) {}

  /** The answer refusing `request`, or undefined: it may be upgraded (key, handshake, then room, in that order). */
  refusal(request: HttpRequest): HttpReply | undefined {
    const refusal = this.options.authorize(request) ?? handshakeRefusal(request);
    if (refusal) return refusal;
    if (this.#open.size >= this.options.maxSockets) return json(503, 'Too many WebSocket connections');
    return undefined;
  }

  /** The session of a socket accepted for `request`. */
  session(request: HttpRequest): WebSocketSession {
    const socket = new BoundedWebSocket(this.options.maxBacklogBytes);
    return {
      open: (edge) => {
        this.#open.add(socket);
        socket.attach(edge);
        this.options.open(socket, request);
      },
      closed: () => {
        this.#open.delete(socket);
        socket.detach();
        if (this.#open.size === 0) this.#idle?.();
      },
    };
  }

  get size(): number {
    return this.#open.size;
  }

  /** Closes every socket with CLOSE_GOING_AWAY; resolves when all are closed (cut after CLOSE_GRACE_MS at most). */
  closeAll(reason: string): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    const closed = new Promise<void>((resolve) => (this.#idle = resolve));
    for (const socket of this.#open) socket.end(CLOSE_GOING_AWAY, reason);
    return closed;
  }
}

/** One accepted socket as a route sees it: text messages out, bounded backlog, one close. */
export class BoundedWebSocket {
  #edge: EdgeWebSocket | undefined;
  #closing = false;
  #cut: NodeJS.Timeout | undefined;
  readonly #onClose: Array<() => void> = [];

  constructor(private readonly maxBacklogBytes: number) {}

  /** Open: `send` reaches the peer (not closing and not closed). */
  get open(): boolean {
    return this.#edge !== undefined && !this.#closing;
  }

  attach(edge: EdgeWebSocket): void {
    this.#edge = edge;
  }

  detach(): void {
    this.#edge = undefined;
    this.#closing = true;
    clearTimeout(this.#cut);
    for (const listener of this.#onClose.splice(0)) listener();
  }

  /** `listener` runs once, when the socket has closed (for whatever reason; at once if it has). */
  onClose(listener: () => void): void {
    if (this.#edge === undefined && this.#closing) listener();
    else this.#onClose.push(listener);
  }

  /**
   * Sends `messages` in one corked batch. A backlog past the bound closes the socket with CLOSE_TOO_SLOW: checked
   * before each message, so what is queued stays within the bound plus one message. False once the socket is not open.
   */
  send(messages: readonly string[]): boolean {
    const edge = this.#edge;
    if (!edge || this.#closing) return false;
    edge.cork(() => {
      for (const text of messages) {
        if (edge.bufferedAmount() > this.maxBacklogBytes) {
          this.end(CLOSE_TOO_SLOW, `reader too slow: backlog over ${this.maxBacklogBytes} bytes`);
          return;
        }
        edge.send(text);
      }
    });
    return this.open;
  }

  /** Closes with a close frame; a peer that does not complete the close within CLOSE_GRACE_MS is cut. */
  end(code: number, reason: string): void {
    const edge = this.#edge;
    if (!edge || this.#closing) return;
    this.#closing = true;
    this.#cut = setTimeout(() => this.#edge?.terminate(), CLOSE_GRACE_MS);
    this.#cut.unref();
    edge.end(code, reason);
  }
}
