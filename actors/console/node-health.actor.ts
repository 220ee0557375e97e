// console.nodes: the node-health machine (machines/console/node-health.machine.ts) with its check supplied: every
// configured node's GET /api/node/status at once, its `network.height` and latency.

import { fromPromise } from 'xstate';
import { nodeHealthMachine } from '../../machines/console/node-health.machine.js';
import type { NodeHealth } from '../../src/console/node-choice.js';
import type { Clock } from '../../src/clock.js';
import { nodeClient } from './ordered-node-client.js';

/** A status check that takes longer counts the node as not answering. */
export const HEALTH_CHECK_TIMEOUT_MS = 5_000;
/** How often the order is refreshed without failures. */
export const HEALTH_RECHECK_MS = 60_000;

export function nodeHealthLogic(options: { readonly clock: Clock }) {
  return nodeHealthMachine.provide({
    actors: {
      checkNodes: fromPromise<readonly NodeHealth[], { nodes: readonly string[] }>(async ({ input, signal }) =>
        Promise.all(
          input.nodes.map(async (url): Promise<NodeHealth> => {
            const started = options.clock.now();
            try {
              // One node per check: failover would hide which node answered.
              const status = await nodeClient({ order: () => [url], timeoutMs: HEALTH_CHECK_TIMEOUT_MS }).get<{ success?: boolean; network?: { height?: unknown } }>('node/status', undefined, signal);
              const height = status.success !== false && typeof status.network?.height === 'number' ? status.network.height : null;
              return { url, height, latencyMs: height === null ? null : options.clock.now() - started };
            } catch {
              return { url, height: null, latencyMs: null };
            }
          }),
        ),
      ),
    },
  });
}
