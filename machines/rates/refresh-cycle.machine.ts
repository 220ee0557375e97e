// The rates refresh cycle (docs/specs/rates.md §1, §2.4, §3; docs/notes/rates.md B.1, B.2, F.4, F.21, F.22).
//
//   discovering ──done──▶ fetching ──done──▶ storing ──done/error──▶ idle ──after untilNextCycle──▶ fetching
//                              └──nothing to store──────────────────▶ idle
//   any state ──system.shutdown──▶ stopped (final)
//
// Never two cycles at once: a cycle is a state, and the next one is only armed from `idle`.
// `discovering` and `fetching` have no error transition on purpose: their actors turn every source failure into
// an outcome (a failed source is data, not an error), so a rejection there is a bug; it stops the actor and the
// rates supervisor restarts it with a fresh cycle.
// Time comes from the actors' outputs (they read the injected clock); the machine itself has no clock.
// Nothing here is persisted: quotes live in memory, snapshots go to the history actor.

import { assign, fromPromise, setup } from 'xstate';
import { foldCycle, type Notice, type SourceOutcome } from '../../src/rates/cycle.js';
import type { ResolvedRates, RetainedQuotes } from '../../src/rates/merge.js';
import type { MergeSettings, RateTable } from '../../src/rates/types.js';

export interface RefreshInput {
  readonly merge: MergeSettings;
  readonly mappings: Readonly<Record<string, string>>;
  readonly lifetimeMs: number;
  readonly intervalMs: number;
  /** Process start (reported as next_update before the first snapshot, spec §2.4). */
  readonly startedAt: number;
}

export interface RefreshContext extends RefreshInput {
  retained: RetainedQuotes;
  resolved: ResolvedRates;
  /** The served /get table for the configured lifetime, recomputed at the end of every cycle. */
  table: RateTable;
  lastUpdated: number | null;
  cycles: number;
  cycleStartedAt: number | null;
  /** When the current idle period began and when the next cycle is due. */
  idleSince: number;
  nextCycleAt: number;
  /** Sources taken out for the run (failed discovery, HTTP 451). */
  disabled: string[];
  /**
   * Sources whose discovery failed, with the reason: not asked, but reported as failed every cycle (spec §6),
   * unlike a permanent refusal (HTTP 451), which notes D.10 reports once.
   */
  unavailable: Record<string, string>;
  /** What the last cycle has to tell operators; published on entering idle. */
  notices: Notice[];
  pendingStore: boolean;
}

export interface DiscoveryOutput {
  readonly disabled: string[];
  /** Of `disabled`, those to report as failed every cycle, with the reason (failed discovery, not a refusal). */
  readonly unavailable?: Readonly<Record<string, string>>;
  readonly notices: Notice[];
  readonly finishedAt: number;
}

export interface FetchInput {
  readonly disabled: readonly string[];
}

export interface FetchOutput {
  readonly startedAt: number;
  readonly finishedAt: number;
  readonly outcomes: SourceOutcome[];
}

export interface StoreInput {
  readonly table: RateTable;
}

export interface StoreOutput {
  readonly _id: string;
  readonly date: number;
}

export type RefreshEvent = { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`refresh-cycle: actor '${name}' must be provided by actors/rates`);
}

export const refreshCycleMachine = setup({
  types: {
    context: {} as RefreshContext,
    input: {} as RefreshInput,
    events: {} as RefreshEvent,
  },
  actors: {
    discoverSources: fromPromise<DiscoveryOutput>(async () => notProvided('discoverSources')),
    fetchSources: fromPromise<FetchOutput, FetchInput>(async () => notProvided('fetchSources')),
    storeSnapshot: fromPromise<StoreOutput, StoreInput>(async () => notProvided('storeSnapshot')),
  },
  actions: {
    /** Log and send every pending notice to the notification channels. */
    publishNotices: (_, _params: { notices: readonly Notice[] }) => notProvided('publishNotices'),
  },
  guards: {
    hasSnapshotToStore: ({ context }) => context.pendingStore,
  },
  delays: {
    untilNextCycle: ({ context }) => Math.max(0, context.nextCycleAt - context.idleSince),
  },
}).createMachine({
  id: 'ratesRefreshCycle',
  context: ({ input }) => ({
    ...input,
    retained: {},
    resolved: {},
    table: {},
    lastUpdated: null,
    cycles: 0,
    cycleStartedAt: null,
    idleSince: input.startedAt,
    nextCycleAt: input.startedAt,
    disabled: [],
    unavailable: {},
    notices: [],
    pendingStore: false,
  }),
  initial: 'discovering',
  on: {
    'system.shutdown': { target: '.stopped' },
  },
  states: {
    discovering: {
      invoke: {
        src: 'discoverSources',
        onDone: {
          target: 'fetching',
          actions: [
            assign(({ context, event }) => ({
              disabled: [...context.disabled, ...event.output.disabled],
              unavailable: { ...context.unavailable, ...event.output.unavailable },
            })),
            { type: 'publishNotices', params: ({ event }) => ({ notices: event.output.notices }) },
          ],
        },
      },
    },
    fetching: {
      invoke: {
        src: 'fetchSources',
        input: ({ context }) => ({ disabled: context.disabled }),
        onDone: {
          target: 'deciding',
          actions: assign(({ context, event }) => {
            const { startedAt, finishedAt } = event.output;
            // A source that could not be set up fails every cycle it is not asked in, and says so each time.
            const outcomes: SourceOutcome[] = [
              ...event.output.outcomes,
              ...Object.entries(context.unavailable).map(([source, error]) => ({ source, ok: false as const, error, permanent: false })),
            ];
            const result = foldCycle(context, outcomes, { merge: context.merge, mappings: context.mappings, lifetimeMs: context.lifetimeMs }, finishedAt);
            return {
              cycles: context.cycles + 1,
              cycleStartedAt: startedAt,
              retained: result.retained,
              resolved: result.resolved,
              table: result.table,
              disabled: [...context.disabled, ...result.disable],
              notices: result.notices,
              pendingStore: result.store,
              idleSince: finishedAt,
              nextCycleAt: startedAt + context.intervalMs,
            };
          }),
        },
      },
    },
    deciding: {
      always: [{ guard: 'hasSnapshotToStore', target: 'storing' }, { target: 'idle' }],
    },
    storing: {
      invoke: {
        src: 'storeSnapshot',
        input: ({ context }) => ({ table: context.table }),
        onDone: {
          target: 'idle',
          actions: assign(({ context, event }) => ({
            lastUpdated: event.output.date,
            idleSince: Math.max(context.idleSince, event.output.date),
            // The schedule follows the stored snapshot, so next_update = last_updated + interval holds (notes A.3).
            nextCycleAt: event.output.date + context.intervalMs,
            pendingStore: false,
          })),
        },
        onError: {
          target: 'idle',
          actions: assign(({ context, event }) => ({
            pendingStore: false,
            notices: [
              ...context.notices,
              {
                level: 'error' as const,
                message: `Error: Unable to save new rates in history database: ${errorText(event.error)}. See logs for details`,
              },
            ],
          })),
        },
      },
    },
    idle: {
      entry: [
        { type: 'publishNotices', params: ({ context }) => ({ notices: context.notices }) },
        assign({ notices: [] }),
      ],
      after: { untilNextCycle: 'fetching' },
    },
    stopped: { type: 'final' },
  },
});

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What /status reports (spec §2.4; notes A.3, F.4). */
export function refreshStatus(snapshot: { value: unknown; context: RefreshContext }): {
  ready: boolean;
  updating: boolean;
  next_update: number;
  last_updated: number | null;
} {
  const { context } = snapshot;
  const ready = context.lastUpdated !== null;
  // Every state but idle (and the final one) is part of a cycle; a view may also pass 'restarting'.
  const inFlight = snapshot.value !== 'idle' && snapshot.value !== 'stopped';
  return {
    ready,
    updating: inFlight || !ready,
    next_update: ready ? context.lastUpdated! + context.intervalMs : context.startedAt,
    last_updated: context.lastUpdated,
  };
}
