// The gateway's schema cache (notes B.2, F.8): which relations (tables and views) each exposed schema has, so an
// unknown path answers 404 PGRST205 without a query, and a new view is served without a restart; and the common
// values of their columns' statistics, which decide how a read is planned (src/transfers/relation-facts.ts).
//
//   loading ──done──▶ ready ──refreshPeriod / schema.reload──▶ loading (the previous list keeps serving)
//      └──error──▶ retrying ──retryDelay (1 s … 60 s)──▶ loading
//
// Before the first successful load the list is null and the edge answers 503 (PGRST002, as PostgREST does while
// its schema cache is not loaded). A `schema.reload` asked while loading is remembered and runs next.

import { assign, fromPromise, setup } from 'xstate';
import type { CommonValuesBySchema, JsonColumnsBySchema } from '../../src/transfers/relation-facts.js';
import { retryDelayMs } from '../../src/transfers/sync.js';

export interface SchemaCacheInput {
  readonly refreshMs: number;
}

/** Exposed schema → its relations' names. */
export type RelationsBySchema = Readonly<Record<string, readonly string[]>>;

/** What one load reads. */
export interface SchemaCatalog {
  readonly relations: RelationsBySchema;
  readonly commonValues: CommonValuesBySchema;
  readonly jsonColumns: JsonColumnsBySchema;
  readonly selectiveColumns: CommonValuesBySchema;
}

export interface SchemaCacheContext extends SchemaCacheInput {
  relations: RelationsBySchema | null;
  commonValues: CommonValuesBySchema;
  jsonColumns: JsonColumnsBySchema;
  selectiveColumns: CommonValuesBySchema;
  failures: number;
  lastError: string | null;
  reloadRequested: boolean;
}

export type SchemaCacheEvent = { type: 'schema.reload' } | { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`schema-cache: '${name}' must be provided by actors/transfers`);
}

export const schemaCacheMachine = setup({
  types: { context: {} as SchemaCacheContext, input: {} as SchemaCacheInput, events: {} as SchemaCacheEvent },
  actors: {
    loadCatalog: fromPromise<SchemaCatalog>(async () => notProvided('loadCatalog')),
  },
  guards: {
    reloadRequested: ({ context }) => context.reloadRequested,
  },
  delays: {
    refreshPeriod: ({ context }) => context.refreshMs,
    retryDelay: ({ context }) => retryDelayMs(context.failures),
  },
}).createMachine({
  id: 'transfersSchemaCache',
  context: ({ input }) => ({ ...input, relations: null, commonValues: new Map(), jsonColumns: new Map(), selectiveColumns: new Map(), failures: 0, lastError: null, reloadRequested: false }),
  initial: 'loading',
  on: { 'system.shutdown': '.stopped' },
  states: {
    loading: {
      entry: assign({ reloadRequested: false }),
      on: { 'schema.reload': { actions: assign({ reloadRequested: true }) } },
      invoke: {
        src: 'loadCatalog',
        onDone: { target: 'ready', actions: assign(({ event }) => ({ ...event.output, failures: 0, lastError: null })) },
        onError: {
          target: 'retrying',
          actions: assign(({ context, event }) => ({ failures: context.failures + 1, lastError: event.error instanceof Error ? event.error.message : String(event.error) })),
        },
      },
    },
    ready: {
      always: { guard: 'reloadRequested', target: 'loading' },
      on: { 'schema.reload': 'loading' },
      after: { refreshPeriod: 'loading' },
    },
    retrying: {
      on: { 'schema.reload': 'loading' },
      after: { retryDelay: 'loading' },
    },
    stopped: { type: 'final' },
  },
});
