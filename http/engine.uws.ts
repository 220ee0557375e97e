// The uWebSockets.js engine (http/engine.ts): uWS's own router, its responses used as they are.

import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { uwsOrThrow, type Engine, type EngineMethod, type RouteCallback } from './engine.js';

export class UwsEngine implements Engine {
  readonly name = 'uws' as const;
  readonly #uws = uwsOrThrow();
  readonly #app: TemplatedApp = this.#uws.App();
  #listenSocket: us_listen_socket | undefined;

  route(method: EngineMethod, pattern: string, callback: RouteCallback): void {
    this.#app[method](pattern, callback);
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
