// An in-process transfers service for tests and benchmarks: the real wiring of src/main.ts (serviceChildren) over
// settings given as the original's environment variables, with the gateway on a free loopback port.
// Importing this module does nothing.

import { systemClock } from '../../src/clock.js';
import { createRuntime, type Runtime } from '../../actors/runtime.js';
import { Supervisor } from '../../actors/supervisor.js';
import { serviceChildren } from '../../src/compose.js';
import { parseTransfersConfig, type TransfersConfig } from '../../src/transfers/config.js';
import { freePort } from './cli.js';
import { captureLogger } from './logger.js';

export interface TestTransfersNode {
  readonly port: number;
  readonly url: string;
  readonly config: TransfersConfig;
  readonly runtime: Runtime;
  readonly lines: ReadonlyArray<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startTransfersNode(env: Record<string, string>, options: { logLevel?: 'debug' | 'info' | 'warn' } = {}): Promise<TestTransfersNode> {
  const port = await freePort();
  const parsed = parseTransfersConfig(undefined, { PGRST_SERVER_PORT: String(port), PGRST_SERVER_HOST: '127.0.0.1', ...env });
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const captured = captureLogger(options.logLevel ?? 'warn');
  const runtime = createRuntime(systemClock, captured.logger);
  const children = await serviceChildren({ service: 'transfers', configPath: undefined, checkConfig: false, migrate: false, host: '127.0.0.1' }, { transfers: parsed.config }, undefined);
  const root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 1, periodMs: 10_000, children }, runtime);
  await root.start();
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    config: parsed.config,
    runtime,
    lines: captured.lines,
    async stop() {
      root.shutdown();
      await root.exited;
    },
  };
}
