// A process whose only supervised worker crashes shortly after every start, so the root supervisor
// exceeds its restart intensity and gives up. Used by test/actors/root-exit.test.ts as a subprocess.
// node --test runs every .js under test/, so it does nothing unless asked to by the environment.

import { setup } from 'xstate';
import { actorChild } from '../../actors/actor-child.js';
import { createLogger } from '../../src/logger.js';
import { runRoot } from '../../src/lifecycle.js';

export const CRASHING_ROOT_ENV = 'ADM_INFRA_CRASHING_ROOT';

const crashing = setup({}).createMachine({
  id: 'crashesSoon',
  initial: 'running',
  states: {
    running: {
      after: {
        20: {
          actions: () => {
            throw new Error('worker failure');
          },
        },
      },
    },
  },
});

if (process.env[CRASHING_ROOT_ENV] === '1') {
  const code = await runRoot([actorChild({ systemId: 'test.crashing', logic: () => crashing })], createLogger({ level: 'info' }));
  process.exit(code);
}
