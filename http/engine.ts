// The HTTP edge's engines (docs/DESIGN.md "The HTTP edge"; issue 15). Routes, error tables, body limits and deadlines,
// metrics, CORS and graceful close are written once in http/server.ts against the small request/response surface
// below; an engine only parses HTTP, routes and moves bytes:
//
// - `uws`: uWebSockets.js (the default). Fast, but this build never answers HTTP/1.0, closes a connection that
//   pipelines a request behind one whose answer is still pending, and drops malformed requests without an answer.
//   Its binary exists only for Node 20 (ABI 115) with this glibc (docs/notes/dependencies.md); it is loaded directly,
//   never through the package's JavaScript imitation.
// - `node`: node:http. HTTP/1.0, keep-alive, pipelining in order, 400/431 for malformed requests; any Node version.
//
// The response surface is the part of uWS's HttpResponse the edge uses, with uWS's meaning (tryEnd/onWritable
// backpressure, cork, pause/resume); the node engine implements the same meaning over ServerResponse. WebSockets
// (EdgeWebSocket) are each engine's own: uWS's `app.ws`, and on node:http the `ws` package (README "Dependencies").

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { HTTP_ENGINES, type HttpEngineName } from '../src/config.js';
import type { Logger } from '../src/logger.js';

export type EngineName = HttpEngineName;
export const ENGINE_NAMES: readonly EngineName[] = HTTP_ENGINES;

/** One request as the engine parsed it. Valid only during the route callback unless copied (uWS). */
export interface EdgeRequest {
  /** Lower-case method. */
  getMethod(): string;
  /** The raw path, without the query string (undecoded). */
  getUrl(): string;
  /** The raw query string without `?`, or undefined. */
  getQuery(): string | undefined;
  /** A header by lower-case name, '' when absent. */
  getHeader(name: string): string;
  forEach(visit: (name: string, value: string) => void): void;
  /** The route pattern's `:name` segments, in order. */
  getParameter(index: number): string | undefined;
}

/**
 * The answer to one request: the part of uWS's HttpResponse the edge uses, with uWS's meaning and signatures (so a
 * uWS response is one as it is, with no wrapper per request). Never touched after `onAborted` fired or it ended.
 */
export interface EdgeResponse {
  writeStatus(line: string): unknown;
  writeHeader(name: string, value: string): unknown;
  /** Ends with `body`; `closeConnection` closes the connection once it is sent. */
  end(body?: string | Uint8Array, closeConnection?: boolean): unknown;
  /** Ends without a body and without Content-Length (HEAD, 204, 304). */
  endWithoutBody(): unknown;
  /**
   * Sends `chunk` of a body of `totalSize` bytes: [ok, done]. Not ok: the rest must be offered again from the
   * offset `onWritable` reports. Done: the whole body was sent and the response has ended.
   */
  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean];
  getWriteOffset(): number;
  /** Called when the connection can take more; return true when the retry was accepted. */
  onWritable(handler: (offset: number) => boolean): unknown;
  onAborted(handler: () => void): unknown;
  /** Body chunks; `chunk` is valid only during the call (copy to keep). */
  onData(handler: (chunk: ArrayBuffer, isLast: boolean) => void): unknown;
  /** Stop and restart reading the body; together they also re-arm uWS's idle timer (10 s, re-armed per 160 KB). */
  pause(): unknown;
  resume(): unknown;
  cork(work: () => void): unknown;
  /** Cuts the connection at once (an answer that cannot be completed). */
  close(): unknown;
  getRemoteAddressAsText(): ArrayBuffer;
}

/**
 * One WebSocket connection as an engine offers it (issue 31: the operator listener's inspection socket). Text messages
 * go out; what the peer sends is dropped (a message over the route's `maxPayloadLength` closes it, the engine's own
 * check). Never touched after the session's `closed` ran.
 */
export interface EdgeWebSocket {
  /** Sends one text message. */
  send(text: string): void;
  /** Bytes sent and not yet handed to the connection (the reader's backlog). */
  bufferedAmount(): number;
  /** Packs the sends of `work` into as few writes as possible (uWS's cork; node:http has nothing to pack). */
  cork(work: () => void): void;
  /** Closes with a close frame: `code` and a `reason` of at most 123 bytes (RFC 6455 §5.5). */
  end(code: number, reason: string): void;
  /** Cuts the connection at once, without a close frame. */
  terminate(): void;
}

/** What the edge does with one accepted WebSocket; the engine calls it. */
export interface WebSocketSession {
  open(socket: EdgeWebSocket): void;
  /** The socket closed, for whatever reason (peer, `end`, idle, engine closing): it must not be used any more. */
  closed(code: number, reason: string): void;
}

/** A WebSocket route as the engines implement it natively (uWS's `app.ws`, the `ws` package on node:http). */
export interface WebSocketBehavior {
  /** An inbound message longer than this closes the socket (`ws`: 1009; uWS: cut without a close frame). */
  readonly maxPayloadLength: number;
  /** The engine pings a quiet peer and closes a socket that answered nothing (pong or message) for about this long. */
  readonly idleTimeoutSeconds: number;
  /**
   * An upgrade request to the route. Decides within the call: `accept(session)` switches protocols, anything else
   * answers `res` as an HTTP response (the socket is never opened). uWS calls this only for a request whose
   * Sec-WebSocket-Key is 24 characters long and hands any other to the route's plain GET handler; node:http calls
   * it for every request with an `Upgrade` header. The edge registers a GET route on the same pattern and checks the
   * handshake itself, so both engines answer a malformed one the same way.
   */
  upgrade(res: EdgeResponse, req: EdgeRequest, accept: (session: WebSocketSession) => void): void;
}

export type EngineMethod = 'get' | 'post' | 'put' | 'del' | 'patch' | 'head' | 'options' | 'any';
export type RouteCallback = (res: EdgeResponse, req: EdgeRequest) => void;

export interface Engine {
  readonly name: EngineName;
  /**
   * An answer written while the request's body is still arriving ends the connection at once (uWS for a request
   * that sent `Connection: close`; node:http always, as the edge then announces `Connection: close`). A client
   * still sending meets a reset before it reads such an answer, so the edge holds it until the rest of the body has
   * arrived (http/server.ts `#answerAfterBody`).
   */
  closesOnEarlyAnswer(connection: string | undefined): boolean;
  /** Routes match like uWS: static segments before `:params` before `/*`, a method before `any`. */
  route(method: EngineMethod, pattern: string, callback: RouteCallback): void;
  /** A WebSocket endpoint at `pattern` (GET upgrades); register it before a plain GET route on the same pattern. */
  webSocket(pattern: string, behavior: WebSocketBehavior): void;
  /** Binds; resolves with the bound port. */
  listen(host: string, port: number): Promise<number>;
  /** Stops accepting new connections; open ones stay. */
  stopAccepting(): void;
  /** Closes every connection. */
  closeAll(): void;
}

/** The request's `Connection` header names `close` (a list of tokens, any case). */
export function asksToClose(connection: string | undefined): boolean {
  return connection !== undefined && connection.split(',').some((token) => token.trim().toLowerCase() === 'close');
}

/** Set to `missing` to make the uWS binary count as missing (tests the fallback on a machine that has it). */
export const UWS_ENV = 'ADM_HTTP_UWS';
/** The process-wide default engine (`uws` or `node`); a listener's own config key wins. */
export const ENGINE_ENV = 'ADM_HTTP_ENGINE';

type UwsModule = typeof import('uWebSockets.js');

/**
 * Loads uWS's native binary for this Node itself, never through the package's entry: where the package has no
 * binary for this Node's ABI, its entry prints a warning and returns a JavaScript imitation of uWS on node:http
 * (`dist/index`, also chosen by $UWS_USE_FALLBACK), which would pass for uWS here. Binaries ship for Node 20 (ABI
 * 115) and older; on 22 and 24 the require fails and every listener runs the node:http engine.
 */
function loadUwsBinary(): UwsModule {
  const require = createRequire(import.meta.url);
  const packageDir = dirname(dirname(require.resolve('uWebSockets.js')));
  const binary = join(packageDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  let loaded: UwsModule;
  try {
    loaded = require(binary) as UwsModule;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(`no uWebSockets.js binary for Node ${process.version} (${process.platform} ${process.arch}, ABI ${process.versions.modules})`);
  }
  if (typeof loaded.App !== 'function' || !Function.prototype.toString.call(loaded.App).includes('[native code]')) {
    throw new Error(`${binary} is not the native uWS binary`);
  }
  return loaded;
}

let uwsModule: UwsModule | undefined;
let uwsLoadError: string | undefined;
if (process.env[UWS_ENV] === 'missing') {
  uwsLoadError = `${UWS_ENV}=missing`;
} else {
  try {
    uwsModule = loadUwsBinary();
  } catch (error) {
    uwsLoadError = (error as Error).message.split('\n')[0];
  }
}

/** The one line a process logs when its listeners fall back to node:http. */
export const UWS_MISSING_WARNING = 'uWebSockets.js cannot load here; the HTTP edge uses node:http';

let warned = false;

/**
 * The engine a listener gets: the requested one (its config key, else $ADM_HTTP_ENGINE, else uws), except that a
 * uWS binary that cannot load falls back to node:http with one warning line per process.
 */
export function resolveEngine(requested: EngineName | undefined, logger: Logger): EngineName {
  const fromEnv = process.env[ENGINE_ENV];
  const wanted: EngineName = requested ?? (fromEnv === 'node' || fromEnv === 'uws' ? fromEnv : 'uws');
  if (wanted === 'uws' && !uwsModule) {
    if (!warned) {
      warned = true;
      logger.warn({ reason: uwsLoadError }, UWS_MISSING_WARNING);
    }
    return 'node';
  }
  return wanted;
}

/** Whether the uWS binary loaded in this process. */
export function uwsAvailable(): boolean {
  return uwsModule !== undefined;
}

/** The loaded uWS module (resolveEngine returns `uws` only when it is there). */
export function uwsOrThrow(): UwsModule {
  if (!uwsModule) throw new Error(`uWebSockets.js is not available: ${uwsLoadError}`);
  return uwsModule;
}
