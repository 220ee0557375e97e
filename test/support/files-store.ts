// The store's owner (actors/files/store.actor.ts) on its own, for the tests of the actors that send it their writes:
// its port, and the lease as an upload would hold it.

import { createActor } from 'xstate';
import { systemClock, type Clock } from '../../src/clock.js';
import type { Logger } from '../../src/logger.js';
import type { NodeHolder } from '../../actors/files/node.js';
import { storeLogic, storePortOf, type StorePort, type StoreState } from '../../actors/files/store.actor.js';
import { captureLogger } from './logger.js';
import type { FileRegistry } from '../../storage/files/registry.js';

export interface TestStore {
  readonly port: StorePort;
  /** Holds the lease shared as an upload does; resolves (once granted) with the function that gives it back. */
  openSession(): Promise<() => void>;
  state(): Promise<StoreState>;
  stop(): void;
}

let sessions = 0;

export function startStore(holder: NodeHolder, options: { clock?: Clock; logger?: Logger } = {}): TestStore {
  const actor = createActor(storeLogic({ holder, clock: options.clock ?? systemClock, logger: options.logger ?? captureLogger('warn').logger }));
  actor.start();
  const port = storePortOf((event) => actor.send(event));
  return {
    port,
    openSession: async () => {
      const sessionId = `test-session-${++sessions}`;
      await port.ask({ type: 'store.openSession', sessionId });
      return () => port.tell({ type: 'store.closeSession', sessionId });
    },
    state: () => port.ask({ type: 'store.state' }),
    stop: () => actor.stop(),
  };
}

/** When each peer last acknowledged its copy of `cid` (the registry answers this for many files at once). */
export function acknowledgementTimes(registry: FileRegistry, cid: string): Map<string, number> {
  return registry.acknowledgementsOf([cid]).get(cid) ?? new Map();
}
