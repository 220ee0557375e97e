// One request of the console to the ADAMANT node pool (spec B; notes C.3): which node to ask next, and when to stop.
//
//   requesting ──node.answered──────────────────────────────────────────▶ answered
//   requesting ──node.failed [another node may be tried]────────────────▶ requesting (the next node in the order)
//   requesting ──node.failed [a POST the node may have received]────────▶ outcomeUnknown
//   requesting ──node.failed (no node left to try)──────────────────────▶ exhausted
//   (no node configured) ───────────────────────────────────────────────▶ exhausted at once
//
// A GET is tried on at most `GET_ATTEMPTS` nodes in the health order (the original client retried 3× while rotating
// nodes). A POST is moved to the next node only when the failed one certainly never received it (connection refused,
// name not resolved): a transaction whose fate is unknown is reported as such, never posted again blindly.
//
// Per docs/DESIGN.md actor rule 3 this is data, not a live actor per request: the node client
// (actors/console/ordered-node-client.ts) applies it with XState's pure `initialTransition()` / `transition()` and
// performs each attempt itself (a caller that goes away simply ends the session). Every attempt's failure is kept so
// the final error can name the last one.

import { assign, setup } from 'xstate';

/** GETs try at most this many nodes (the original: 3 attempts, rotating nodes). */
export const GET_ATTEMPTS = 3;

export interface RpcSessionInput {
  readonly method: 'GET' | 'POST';
  /** The nodes in the order to try them (the node-health machine's order). */
  readonly nodes: readonly string[];
}

export interface RpcSessionContext extends RpcSessionInput {
  /** Index into `nodes` of the node being asked. */
  attempt: number;
  /** `host: reason` of every failed attempt, oldest first. */
  failures: string[];
}

export type RpcSessionEvent =
  | { type: 'node.answered' }
  | { type: 'node.failed'; reason: string; /** The request certainly never reached the node. */ neverSent: boolean };

export const rpcSessionMachine = setup({
  types: { context: {} as RpcSessionContext, input: {} as RpcSessionInput, events: {} as RpcSessionEvent },
  guards: {
    noNodes: ({ context }) => context.nodes.length === 0,
    /** A POST that may have reached the node must not be repeated. */
    postMaybeReceived: ({ context, event }) => context.method === 'POST' && event.type === 'node.failed' && !event.neverSent,
    anotherNodeLeft: ({ context }) => {
      const limit = context.method === 'GET' ? Math.min(GET_ATTEMPTS, context.nodes.length) : context.nodes.length;
      return context.attempt + 1 < limit;
    },
  },
  actions: {
    recordFailure: assign({ failures: ({ context, event }) => (event.type === 'node.failed' ? [...context.failures, event.reason] : context.failures) }),
    nextNode: assign({ attempt: ({ context }) => context.attempt + 1 }),
  },
}).createMachine({
  id: 'consoleRpcSession',
  context: ({ input }) => ({ ...input, attempt: 0, failures: [] }),
  initial: 'requesting',
  states: {
    requesting: {
      always: { guard: 'noNodes', target: 'exhausted' },
      on: {
        'node.answered': 'answered',
        'node.failed': [
          { guard: 'postMaybeReceived', target: 'outcomeUnknown', actions: 'recordFailure' },
          { guard: 'anotherNodeLeft', target: 'requesting', reenter: true, actions: ['recordFailure', 'nextNode'] },
          { target: 'exhausted', actions: 'recordFailure' },
        ],
      },
    },
    answered: { type: 'final' },
    outcomeUnknown: { type: 'final' },
    exhausted: { type: 'final' },
  },
});

export type RpcSessionSnapshot = ReturnType<typeof rpcSessionMachine.resolveState>;
