// The uWebSockets.js engine (http/engine.ts): uWS's own router, its responses used as they are.

import type { TemplatedApp, us_listen_socket, WebSocket } from 'uWebSockets.js';
import { asksToClose, uwsOrThrow, type EdgeWebSocket, type Engine, type EngineMethod, type RouteCallback, type WebSocketBehavior, type WebSocketSession } from './engine.js';

interface SocketData {
  readonly session: WebSocketSession;
  socket?: UwsWebSocket;
}

/**
 * uWS's WebSocket as the edge's. uWS throws on any use of a closed socket (and runs `close` inside `end`), so every
 * method checks `closed` first.
 */
class UwsWebSocket implements EdgeWebSocket {
  closed = false;

  constructor(private readonly ws: WebSocket<SocketData>) {}

  send(text: string): void {
    // Never dropped by uWS: its maxBackpressure is set above any backlog the edge lets build (http/server.ts).
    if (!this.closed) this.ws.send(text, false, false);
  }

  bufferedAmount(): number {
    return this.closed ? 0 : this.ws.getBufferedAmount();
  }

  cork(work: () => void): void {
    if (this.closed) work();
    else this.ws.cork(work);
  }

  end(code: number, reason: string): void {
    if (!this.closed) this.ws.end(code, reason);
  }

  terminate(): void {
    if (!this.closed) this.ws.close();
  }
}

/**
 * uWS drops a message sent past `maxBackpressure` without a word; the edge closes a reader long before (its own
 * bound, checked after every send), so uWS's is only a backstop far above it.
 */
const UWS_MAX_BACKPRESSURE = 64 * 1024 * 1024;

export class UwsEngine implements Engine {
  readonly name = 'uws' as const;
  readonly #uws = uwsOrThrow();
  readonly #app: TemplatedApp = this.#uws.App();
  #listenSocket: us_listen_socket | undefined;

  closesOnEarlyAnswer(connection: string | undefined): boolean {
    // uWS ends a `Connection: close` request's connection once the answer is written ("to hinder clients from keeping
    // to send their huge data"); a keep-alive one stays open and uWS drops the rest of the body.
    return asksToClose(connection);
  }

  route(method: EngineMethod, pattern: string, callback: RouteCallback): void {
    this.#app[method](pattern, callback);
  }

  webSocket(pattern: string, behavior: WebSocketBehavior): void {
    this.#app.ws<SocketData>(pattern, {
      maxPayloadLength: behavior.maxPayloadLength,
      idleTimeout: behavior.idleTimeoutSeconds,
      sendPingsAutomatically: true,
      maxBackpressure: UWS_MAX_BACKPRESSURE,
      compression: this.#uws.DISABLED,
      upgrade: (res, req, context) => {
        // Read before anything else: `req` is valid only until the first write to `res`.
        const key = req.getHeader('sec-websocket-key');
        const extensions = req.getHeader('sec-websocket-extensions');
        behavior.upgrade(res, req, (session) => {
          // No subprotocol is chosen (an empty one is left out of the answer) and no extension is offered (compression off).
          res.upgrade<SocketData>({ session }, key, '', extensions, context);
        });
      },
      open: (ws) => {
        const data = ws.getUserData();
        data.socket = new UwsWebSocket(ws);
        data.session.open(data.socket);
      },
      // Inbound messages are ignored (the inspection socket only sends); their size is bounded by maxPayloadLength.
      message: () => undefined,
      close: (ws, code, message) => {
        const data = ws.getUserData();
        if (data.socket) data.socket.closed = true;
        data.session.closed(code, Buffer.from(message).toString());
      },
    });
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#app.listen(host, port, (socket) => {
        if (!socket) {
          this.closeAll();
          reject(new Error(`cannot listen on ${host}:${port}`));
          return;
        }
        this.#listenSocket = socket;
        resolve(this.#uws.us_socket_local_port(socket));
      });
    });
  }

  stopAccepting(): void {
    if (this.#listenSocket) this.#uws.us_listen_socket_close(this.#listenSocket);
    this.#listenSocket = undefined;
  }

  closeAll(): void {
    // `close()` exists at runtime but is missing from the bundled typings (docs/notes/dependencies.md §1).
    (this.#app as unknown as { close(): void }).close();
  }
}
