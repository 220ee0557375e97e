// A process for the shutdown rules (docs/specs/files-node.md §8): its one worker either stops 300 ms after
// `system.shutdown` (`quick`), never does (`hang`, its supervisor waiting 60 s), or never finishes starting
// (`stuck-start`). Used by
// test/actors/shutdown-exit.test.ts as a subprocess; does nothing unless asked to by the environment.

import { setup } from 'xstate';
import { actorChild } from '../../actors/actor-child.js';
import { createLogger } from '../../src/logger.js';
import { runRoot } from '../../src/lifecycle.js';

export const SIGNAL_ROOT_ENV = 'ADM_INFRA_SIGNAL_ROOT';

const worker = (mode: string) =>
  setup({}).createMachine({
    id: 'signalWorker',
    initial: 'running',
    states: {
      running: { on: { 'system.shutdown': mode === 'quick' ? 'stopping' : undefined } },
      stopping: { after: { 300: 'stopped' } },
      stopped: { type: 'final' },
    },
  });

const mode = process.env[SIGNAL_ROOT_ENV];
if (mode === 'quick' || mode === 'hang' || mode === 'stuck-start') {
  const logger = createLogger({ level: 'info' });
  // A real service's listener keeps the event loop alive; this worker has nothing pending of its own.
  const keepAlive = setInterval(() => {}, 60_000);
  const worker1 = actorChild({
    systemId: 'test.worker',
    logic: () => worker(mode),
    shutdownTimeoutMs: 60_000,
    readyWhen: mode === 'stuck-start' ? () => false : undefined,
  });
  const exit = runRoot([worker1], logger, () => logger.info('ready'));
  // Logged once runRoot's synchronous part has installed the signal handlers.
  logger.info('starting');
  const code = await exit;
  clearInterval(keepAlive);
  process.exit(code);
}
