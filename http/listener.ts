// An HTTP listener as a supervised child: start = listen, shutdown = graceful close (stop accepting,
// drain in-flight requests for a bounded time, close connections), kill = close without draining.

import type { ChildSpec, ExitReason } from '../actors/supervisor.js';
import type { Runtime } from '../actors/runtime.js';
import type { HttpServer } from './server.js';

export const DEFAULT_DRAIN_MS = 5_000;

/**
 * `shutdownTimeoutMs` bounds the whole graceful close before the supervisor kills the listener (default: the drain
 * time plus 1 s); a listener whose in-flight requests outlive the drain (files) sets it past the process deadline.
 */
export function listenerChild(id: string, build: (runtime: Runtime) => HttpServer, drainMs = DEFAULT_DRAIN_MS, shutdownTimeoutMs = drainMs + 1_000): ChildSpec {
  return {
    id,
    shutdownTimeoutMs,
    async start(runtime) {
      const server = build(runtime);
      const port = await server.listen();
      const record = runtime.inspector.record(id);
      record.machineId = 'httpListener';
      record.stateValue = { listening: port };
      let settle!: (reason: ExitReason) => void;
      const exited = new Promise<ExitReason>((resolve) => (settle = resolve));
      const close = (ms: number, reason: ExitReason) => {
        record.stateValue = 'closing';
        server.close(ms).then(
          () => settle(reason),
          (error: unknown) => settle({ kind: 'error', error }),
        );
      };
      return {
        exited,
        shutdown: () => close(drainMs, { kind: 'normal' }),
        kill: () => close(0, { kind: 'killed' }),
      };
    },
  };
}
