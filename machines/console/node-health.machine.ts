// The console's node pool health (spec B; notes C.3): checks every configured node's /api/node/status on a period
// and keeps the order in which requests should try them (src/console/node-choice.ts).
//
//   checking ──done──▶ ready ──recheckPeriod──▶ checking
//       └──error──▶ ready (the previous order stands; a check that throws is a bug in the checker, not a node)
//   node.failed (a request saw a node fail) ──▶ checking at once when in ready
//
// Before the first check completes the configuration order is used, so the first request never waits for it.

import { assign, fromPromise, setup } from 'xstate';
import { orderNodes, type NodeHealth } from '../../src/console/node-choice.js';

export interface NodeHealthInput {
  readonly nodes: readonly string[];
  readonly recheckMs: number;
}

export interface NodeHealthContext extends NodeHealthInput {
  /** The order requests try the nodes in. */
  order: readonly string[];
  health: readonly NodeHealth[];
  checks: number;
}

export type NodeHealthEvent = { type: 'node.failed'; url: string } | { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`node-health: '${name}' must be provided by actors/console`);
}

export const nodeHealthMachine = setup({
  types: { context: {} as NodeHealthContext, input: {} as NodeHealthInput, events: {} as NodeHealthEvent },
  actors: {
    checkNodes: fromPromise<readonly NodeHealth[], { nodes: readonly string[] }>(async () => notProvided('checkNodes')),
  },
  delays: {
    recheckPeriod: ({ context }) => context.recheckMs,
  },
}).createMachine({
  id: 'consoleNodeHealth',
  context: ({ input }) => ({ ...input, order: input.nodes, health: [], checks: 0 }),
  initial: 'checking',
  on: { 'system.shutdown': '.stopped' },
  states: {
    checking: {
      invoke: {
        src: 'checkNodes',
        input: ({ context }) => ({ nodes: context.nodes }),
        onDone: { target: 'ready', actions: assign(({ context, event }) => ({ health: event.output, order: orderNodes(event.output), checks: context.checks + 1 })) },
        onError: 'ready',
      },
    },
    ready: {
      after: { recheckPeriod: 'checking' },
      on: { 'node.failed': 'checking' },
    },
    stopped: { type: 'final' },
  },
});
