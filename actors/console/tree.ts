// The console service's supervision tree (docs/DESIGN.md, "The actor model"):
//
//   console (one_for_one)
//   ├── console.nodes   node-health machine: the order in which requests try the configured ADAMANT nodes
//   └── …edge           the JSON-RPC listener, supplied by the caller (actors/ never imports http/)
//
// The JSON-RPC methods (actors/console/api.ts) read the order from console.nodes' snapshot at each request; while
// it restarts, the configuration order stands in.

import { actorChild } from '../actor-child.js';
import { supervisorSpec, type ChildSpec } from '../supervisor.js';
import type { ConsoleConfig } from '../../src/console/config.js';
import { CONSOLE_NODES_ID } from './api.js';
import { HEALTH_RECHECK_MS, nodeHealthLogic } from './node-health.actor.js';

export function consoleTree(config: ConsoleConfig, options: { readonly edge?: readonly ChildSpec[] } = {}): ChildSpec {
  return supervisorSpec({
    id: 'console',
    strategy: 'one_for_one',
    intensity: 5,
    periodMs: 60_000,
    backoff: { initialMs: 500, maxMs: 10_000 },
    children: [
      actorChild({
        systemId: CONSOLE_NODES_ID,
        logic: (runtime) => nodeHealthLogic({ clock: runtime.clock }),
        input: () => ({ nodes: config.nodes, recheckMs: HEALTH_RECHECK_MS }),
      }),
      ...(options.edge ?? []),
    ],
  });
}
