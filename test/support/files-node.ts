// One files node in-process for HTTP tests: the real tree (helia on 127.0.0.1) and its uWS listener under a
// root supervisor, on a free port. Inert on import (node --test runs every module under dist/test/).

import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.js';
import { filesTree, type FilesTreeOptions } from '../../actors/files/tree.js';
import { createRuntime, type Runtime } from '../../actors/runtime.js';
import { Supervisor } from '../../actors/supervisor.js';
import type { FilesRouteContext } from '../../http/files/files.http.js';
import { filesServer } from '../../http/files/files.routes.js';
import { listenerChild } from '../../http/listener.js';
import { freePort } from './cli.js';
import { filesTestConfig } from './files-config.js';
import { nodeAdmission } from '../../src/files/admission.js';
import { captureLogger } from './logger.js';

export interface TestFilesNode {
  readonly port: number;
  readonly storeDirectory: string;
  readonly runtime: Runtime;
  /** Log lines at the captured level. */
  readonly lines: ReadonlyArray<Record<string, unknown>>;
  /** Resolves when the startup walk has finished. */
  readonly startupDone: Promise<void>;
  /** How long the root took to start (the listener opens last). */
  readonly startMs: number;
  /** The listener's route context (admission counters and rate limiters). */
  context(): FilesRouteContext;
  stop(): Promise<void>;
}

export interface TestFilesNodeOptions {
  readonly logLevel?: 'debug' | 'info' | 'warn';
  readonly peering?: FilesTreeOptions['peering'];
}

/** Starts a node on `storeDirectory` with `configLayers` merged deeply over the test defaults (and a free `serverPort`). */
export async function startTestFilesNode(storeDirectory: string, configLayers: ReadonlyArray<Record<string, unknown>>, options: TestFilesNodeOptions = {}): Promise<TestFilesNode> {
  const port = await freePort();
  const config = filesTestConfig({ serverPort: port }, ...configLayers);
  const captured = captureLogger(options.logLevel ?? 'warn');
  const runtime = createRuntime(systemClock, captured.logger);
  let context: FilesRouteContext | undefined;
  let markDone!: () => void;
  const startupDone = new Promise<void>((resolve) => (markDone = resolve));
  const admission = nodeAdmission(config);
  const edge = listenerChild('files.http', (rt) => filesServer(rt, { config, host: '127.0.0.1', admission, onContext: (built) => (context = built) }));
  const root = new Supervisor(
    {
      id: 'root',
      strategy: 'one_for_one',
      intensity: 1,
      periodMs: 10_000,
      children: [filesTree({ config, storeDirectory }, { edge: [edge], admission, onStartupComplete: () => markDone(), peering: options.peering })],
    },
    runtime,
  );
  const started = Date.now();
  await root.start();
  return {
    port,
    storeDirectory,
    runtime,
    lines: captured.lines,
    startupDone,
    startMs: Date.now() - started,
    context: () => context ?? assert.fail('the listener has not built its route context'),
    async stop() {
      root.shutdown();
      await root.exited;
    },
  };
}

/** How many blocks the store's blockstore holds (its `.data` files). */
export function blockCount(storeDirectory: string): number {
  let count = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.data')) count++;
    }
  };
  walk(join(storeDirectory, 'blockstore'));
  return count;
}
