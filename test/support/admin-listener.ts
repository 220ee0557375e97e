// An operator listener over a small supervision tree (root → svc → svc.worker), for the operator route tests
// (test/http/admin.test.ts, test/http/inspect-socket.test.ts). Inert on import.

import { assign, setup } from 'xstate';
import { actorChild } from '../../actors/actor-child.js';
import { createRuntime, type Runtime } from '../../actors/runtime.js';
import { supervisorSpec, Supervisor } from '../../actors/supervisor.js';
import { adminServer, type AdminListenerOptions } from '../../http/admin/admin.routes.js';
import type { HttpServer } from '../../http/server.js';
import { systemClock } from '../../src/clock.js';
import { captureLogger } from './logger.js';

export const ADMIN_TEST_KEY = 'k'.repeat(40);

type WorkerEvent = { type: 'system.shutdown' } | { type: 'ping' } | { type: 'hold' } | { type: 'reset' } | { type: 'note'; text: string };

export const adminTestWorker = setup({ types: { context: {} as { note: string }, events: {} as WorkerEvent } }).createMachine({
  id: 'adminTestWorker',
  initial: 'waiting',
  context: { note: '' },
  // `note` changes the context only: its snapshot carries `text` whole (scalars are kept), so a test can make
  // inspection messages as large as it needs.
  on: { note: { actions: assign({ note: ({ event }) => event.text }) } },
  states: {
    waiting: { on: { ping: 'pinged', 'system.shutdown': 'done' } },
    // `hold` is taken and never answered: an ask that waits, for the operator view.
    pinged: { on: { hold: { actions: () => undefined }, reset: 'waiting', 'system.shutdown': 'done' } },
    done: { type: 'final' },
  },
});

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export type FetchJson = (path: string, key?: string) => Promise<{ status: number; body: any; text: string }>;

/** Runs `run` against a listening operator listener whose worker has taken `ping` (state `pinged`); closes it after. */
export async function withAdmin(
  apiKey: string | undefined,
  run: (port: number, fetchJson: FetchJson, runtime: Runtime, server: HttpServer) => Promise<void>,
  options: Partial<Pick<AdminListenerOptions, 'engine' | 'inspectSocket'>> = {},
): Promise<void> {
  const runtime = createRuntime(systemClock, captureLogger().logger);
  const root = new Supervisor(
    {
      id: 'root',
      strategy: 'one_for_one',
      intensity: 1,
      periodMs: 1_000,
      children: [supervisorSpec({ id: 'svc', strategy: 'one_for_one', intensity: 1, periodMs: 1_000, children: [actorChild({ systemId: 'svc.worker', logic: () => adminTestWorker })] })],
    },
    runtime,
  );
  runtime.inspector.record('root').children = ['svc'];
  await root.start();
  runtime.registry.lookup('svc.worker')!.send({ type: 'ping' });
  const server = adminServer(runtime, { host: '127.0.0.1', port: 0, apiKey, roots: ['root'], ...options });
  const port = await server.listen();
  const fetchJson: FetchJson = async (path, key) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { connection: 'close', ...(key ? { 'x-api-key': key } : {}) } });
    const text = await response.text();
    return { status: response.status, body: jsonOrUndefined(text), text };
  };
  try {
    await run(port, fetchJson, runtime, server);
  } finally {
    await server.close();
    root.shutdown();
    await root.exited;
  }
}
