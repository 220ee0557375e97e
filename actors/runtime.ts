// What every supervised actor is started with: the clock, the systemId registry, the inspector,
// the logger and `ask`. Created once per process (src/main.ts) and passed down the supervision tree.

import type { Logger } from 'pino';
import { createAsk, type Ask } from './ask.js';
import type { Clock } from '../src/clock.js';
import { Inspector } from './inspector.js';
import { ActorRegistry } from './registry.js';

export interface Runtime {
  readonly clock: Clock;
  readonly registry: ActorRegistry;
  readonly inspector: Inspector;
  readonly logger: Logger;
  readonly ask: Ask;
}

export function createRuntime(clock: Clock, logger: Logger): Runtime {
  const registry = new ActorRegistry();
  const inspector = new Inspector(() => clock.now());
  return { clock, registry, inspector, logger, ask: createAsk(registry, clock, inspector) };
}
