// The transfers database connection(s) as one lifecycle (DESIGN.md "Storage and real components"): open PGlite or
// the pg pools, run the versioned migrations when this process owns the schema, then serve until shutdown.
//
//   opening ──done──▶ open ──system.shutdown──▶ closing ──done/error──▶ closed (final)
//      └──error: the actor crashes; its supervisor restarts it with backoff (a database that is down at startup)

import { fromPromise, setup } from 'xstate';

export type DatabaseEvent = { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`transfers database: '${name}' must be provided by actors/transfers`);
}

export const databaseMachine = setup({
  types: { events: {} as DatabaseEvent },
  actors: {
    openDatabase: fromPromise<void>(async () => notProvided('openDatabase')),
    closeDatabase: fromPromise<void>(async () => notProvided('closeDatabase')),
  },
}).createMachine({
  id: 'transfersDatabase',
  initial: 'opening',
  states: {
    opening: {
      invoke: { src: 'openDatabase', onDone: 'open' },
      on: { 'system.shutdown': 'closing' },
    },
    open: {
      on: { 'system.shutdown': 'closing' },
    },
    closing: {
      invoke: { src: 'closeDatabase', onDone: 'closed', onError: 'closed' },
    },
    closed: { type: 'final' },
  },
});
