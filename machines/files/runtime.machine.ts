// The files node's runtime: the helia node (libp2p + blockstore + datastore) as one lifecycle
// (docs/specs/files-node.md §1, §8; notes B.3):
//
//   starting ──done──▶ running ──system.shutdown──▶ stopping ──done/error──▶ stopped (final)
//      └──error: the actor crashes; its supervisor restarts it with backoff
//
// `runtimeStatus` in /api/node/info reports the state; the node itself lives in the actor layer.

import { assign, fromPromise, setup } from 'xstate';

export type RuntimeEvent = { type: 'system.shutdown' };

export interface RuntimeStarted {
  readonly peerId: string;
}

function notProvided(name: string): never {
  throw new Error(`files runtime: '${name}' must be provided by actors/files`);
}

export const runtimeMachine = setup({
  types: { events: {} as RuntimeEvent, context: {} as { peerId: string | null } },
  actors: {
    startNode: fromPromise<RuntimeStarted>(async () => notProvided('startNode')),
    stopNode: fromPromise<void>(async () => notProvided('stopNode')),
  },
}).createMachine({
  id: 'filesRuntime',
  context: { peerId: null },
  initial: 'starting',
  states: {
    starting: {
      invoke: {
        src: 'startNode',
        onDone: { target: 'running', actions: assign({ peerId: ({ event }) => event.output.peerId }) },
      },
      on: { 'system.shutdown': 'stopping' },
    },
    running: {
      on: { 'system.shutdown': 'stopping' },
    },
    stopping: {
      invoke: { src: 'stopNode', onDone: 'stopped', onError: 'stopped' },
    },
    stopped: { type: 'final' },
  },
});
