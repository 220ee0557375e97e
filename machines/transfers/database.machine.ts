// The transfers database connection(s) as one lifecycle (docs/DESIGN.md "Storage and real components"): open PGlite or
// the pg pools, run the versioned migrations when this process owns the schema, then serve until shutdown.
//
//   opening ──done: schema ready──▶ open ──system.shutdown──▶ closing ──done/error──▶ closed (final)
//      │  └──done: schema unchecked (a gateway alone on PostgreSQL)──▶ preparingSchema ──done──▶ open
//      │                                                                 │   ▲
//      │                                              error (no rights, no database)  retryDelay (1 s … 30 s)
//      │                                                                 ▼   │
//      │                                                               waitingToRetry
//      └──error: the actor crashes; its supervisor restarts it with backoff (a database that is down at startup)
//
// A gateway alone (no indexer here) used to leave the schema to the indexer and answer 503 PGRST002 forever on a
// database nobody migrated. Now it checks the schema version with a short-lived connection of its own login (which
// often owns the schema in PostgREST deployments) and migrates when the schema is missing or older; without the
// rights it retries with backoff (the schema cache answers 503 PGRST002 meanwhile) until an owner migrated it
// (`adm-infra transfers --migrate`, or the indexer). A schema NEWER than the build is not retried: the actor crashes
// with SchemaTooNewError, as the indexer's open does, and supervision gives up.

import { assign, fromPromise, setup } from 'xstate';
import { retryDelayMs } from '../../src/transfers/sync.js';

export interface DatabaseOpened {
  /**
   * 'ready': migrated (the indexer's login or the embedded database) or nothing to check (no gateway reads);
   * 'unchecked': a gateway alone on PostgreSQL, its reads wait for preparingSchema.
   */
  readonly schema: 'ready' | 'unchecked';
}

export interface DatabaseContext {
  /** Consecutive failed schema preparations; 0 after success. */
  failures: number;
  lastError: string | null;
}

export type DatabaseEvent = { type: 'system.shutdown' };

/**
 * The schema retries back off like the indexer's (1 s, 2 s, 4 s …) but stop at 30 s: an operator who just ran
 * `adm-infra transfers --migrate` sees the gateway serve within half a minute (and at once when the schema cache is
 * asked to reload: the actor's schemaReady does that).
 */
export const SCHEMA_RETRY_MAX_MS = 30_000;

export function schemaRetryDelayMs(failures: number): number {
  return Math.min(SCHEMA_RETRY_MAX_MS, retryDelayMs(failures));
}

/** Matched by name (docs/DESIGN.md "Style"): machines do not import storage/. */
const SCHEMA_TOO_NEW = 'SchemaTooNewError';

function notProvided(name: string): never {
  throw new Error(`transfers database: '${name}' must be provided by actors/transfers`);
}

const describe = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

export const databaseMachine = setup({
  types: { context: {} as DatabaseContext, events: {} as DatabaseEvent },
  actors: {
    openDatabase: fromPromise<DatabaseOpened>(async () => notProvided('openDatabase')),
    /** Checks the schema version; migrates (and sets up the anonymous role) when it is missing or older. */
    prepareSchema: fromPromise<void>(async () => notProvided('prepareSchema')),
    closeDatabase: fromPromise<void>(async () => notProvided('closeDatabase')),
  },
  actions: {
    /** The gateway may read now: its schema cache is asked to reload at once instead of at its next retry. */
    schemaReady: () => notProvided('schemaReady'),
    /** One clear line naming what to run when the reason is new; a shorter line per retry (bounded by the backoff). */
    reportSchemaFailure: (_, _params: { error: string; failures: number; retryInMs: number }) => notProvided('reportSchemaFailure'),
  },
  guards: {
    schemaUnchecked: (_, params: { schema: DatabaseOpened['schema'] }) => params.schema === 'unchecked',
    /** Everything but a schema newer than the build (that one crashes the actor: retrying cannot fix it). */
    retryable: (_, params: { error: unknown }) => (params.error as { name?: unknown } | null)?.name !== SCHEMA_TOO_NEW,
  },
  delays: {
    retryDelay: ({ context }) => schemaRetryDelayMs(context.failures),
  },
}).createMachine({
  id: 'transfersDatabase',
  context: { failures: 0, lastError: null },
  initial: 'opening',
  states: {
    opening: {
      invoke: {
        src: 'openDatabase',
        onDone: [
          { guard: { type: 'schemaUnchecked', params: ({ event }) => ({ schema: event.output.schema }) }, target: 'preparingSchema' },
          { target: 'open' },
        ],
      },
      on: { 'system.shutdown': 'closing' },
    },
    preparingSchema: {
      invoke: {
        src: 'prepareSchema',
        onDone: { target: 'open', actions: [assign({ failures: 0, lastError: null }), 'schemaReady'] },
        // A SchemaTooNewError matches no transition: the actor errors (crashes), as an error while opening does.
        onError: {
          guard: { type: 'retryable', params: ({ event }) => ({ error: event.error }) },
          target: 'waitingToRetry',
          actions: [
            assign(({ context, event }) => ({ failures: context.failures + 1, lastError: describe(event.error) })),
            {
              type: 'reportSchemaFailure',
              params: ({ context }) => ({ error: context.lastError ?? 'unknown', failures: context.failures, retryInMs: schemaRetryDelayMs(context.failures) }),
            },
          ],
        },
      },
      on: { 'system.shutdown': 'closing' },
    },
    waitingToRetry: {
      after: { retryDelay: 'preparingSchema' },
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
