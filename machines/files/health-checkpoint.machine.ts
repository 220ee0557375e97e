// The health checkpoint schedule (docs/specs/files-node.md §2.3, §3.2; docs/notes/files-node.md A.6, C5, C18, C19).
//
//   checking ──done──▶ deciding ──checkpoint earned──▶ persisting ──done/error──▶ idle
//       │                  └──────────no checkpoint─────────────────────────────▶ idle
//       └──error──────────────────────────────────────────────────────────────▶ idle
//   idle ──after checkpointInterval──▶ checking
//   idle ──health.startupComplete────▶ checking        (immediate attempt, notes C5)
//   checking, persisting ──health.startupComplete──▶ (same state; one more attempt right after this one)
//   any state ──system.shutdown──▶ stopped (final)
//
// One attempt at start, then one per `intervalMs` on a fixed cadence measured from each attempt's own time, and one
// immediately when startup reconciliation completes (notes A.6 "Scheduling"). Two attempts never overlap: an attempt
// is a state, the timer is only armed in `idle`; an attempt that outlives its interval is followed at once by the
// next one (overlaps are skipped and re-run, not queued).
//
// The machine decides, the actors only fetch and write: `gatherInputs` reads the evidence other actors keep (and asks
// peers for attestations) together with the time it was read at; `evaluateCheckpoint` runs here, in `assign`; the
// record is written by `persistCheckpoint` only when the attempt earned one. Reads use `context.snapshot` with
// `readHealth` (or `healthObject` below) at the read time.
//
// Persistence (docs/DESIGN.md rule 7): the versioned record (`PersistedCheckpoint`, read with `parseCheckpoint`) comes in as
// `input.restored` and is discarded here when it was earned under another membership (spec §2.3 rule 6). The only
// deadline, `nextAttemptAt`, lives in context; a restored machine starts with an attempt, so nothing needs re-arming.

import { assign, fromPromise, setup } from 'xstate';
import {
  adoptCheckpoint,
  evaluateCheckpoint,
  initialSnapshot,
  readHealth,
  type FreshnessInputs,
  type HealthInputs,
  type HealthObject,
  type HealthSettings,
  type HealthSnapshot,
  type PersistedCheckpoint,
} from '../../src/files/health.js';

export interface HealthCheckpointInput {
  readonly settings: HealthSettings;
  /** `membership.version` of the configured node list (`membershipVersion` in src/files/health.ts). */
  readonly membershipVersion: string;
  /** The stored checkpoint as read by `parseCheckpoint` at start, or null. */
  readonly restored: PersistedCheckpoint | null;
  /** Process start, the time of the snapshot reads see before the first attempt finishes. */
  readonly startedAt: number;
}

export interface HealthCheckpointContext {
  readonly settings: HealthSettings;
  readonly membershipVersion: string;
  readonly startedAt: number;
  /** The same-membership checkpoint behind `snapshot.height` (persisted, or written by `persisting`). */
  previous: PersistedCheckpoint | null;
  /** What reads see: the last attempt's result. */
  snapshot: HealthSnapshot;
  /** The record the last attempt earned, until `persisting` has written it. */
  pendingPersist: PersistedCheckpoint | null;
  attempts: number;
  /** When the next scheduled attempt is due (Unix ms, from the actors' clock readings). */
  nextAttemptAt: number;
  /** The latest known instant when `idle` was entered; the timer waits `nextAttemptAt − idleSince`. */
  idleSince: number;
  /** An immediate attempt was asked for while one was running. */
  rerun: boolean;
}

export interface GatherInput {
  readonly settings: HealthSettings;
  readonly membershipVersion: string;
}

export interface GatherOutput {
  /** The attempt's time: the evidence is judged at this instant (and the attested round is `roundStart(now)`). */
  readonly now: number;
  /** When gathering ended (after the peer attestations), for the schedule. */
  readonly finishedAt: number;
  readonly inputs: HealthInputs;
}

export interface PersistInput {
  readonly checkpoint: PersistedCheckpoint;
}

export interface PersistOutput {
  readonly finishedAt: number;
}

export type HealthCheckpointEvent = { type: 'health.startupComplete' } | { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`health-checkpoint: '${name}' must be provided by actors/files`);
}

export const healthCheckpointMachine = setup({
  types: {
    context: {} as HealthCheckpointContext,
    input: {} as HealthCheckpointInput,
    events: {} as HealthCheckpointEvent,
  },
  actors: {
    gatherInputs: fromPromise<GatherOutput, GatherInput>(async () => notProvided('gatherInputs')),
    persistCheckpoint: fromPromise<PersistOutput, PersistInput>(async () => notProvided('persistCheckpoint')),
  },
  actions: {
    /** Log an attempt that could not gather its evidence or write its record (the next attempt retries). */
    reportFailure: (_, _params: { stage: 'gather' | 'persist'; error: unknown }) => notProvided('reportFailure'),
  },
  guards: {
    hasCheckpointToPersist: ({ context }) => context.pendingPersist !== null,
    rerunRequested: ({ context }) => context.rerun,
    /** The attempt outlived its interval: the next one is already due (no zero-length timer, notes A.6 re-run). */
    attemptOverdue: ({ context }) => context.nextAttemptAt <= context.idleSince,
  },
  delays: {
    checkpointInterval: ({ context }) => Math.max(0, context.nextAttemptAt - context.idleSince),
  },
}).createMachine({
  id: 'filesHealthCheckpoint',
  context: ({ input }) => {
    const previous = adoptCheckpoint(input.restored, input.membershipVersion);
    return {
      settings: input.settings,
      membershipVersion: input.membershipVersion,
      startedAt: input.startedAt,
      previous,
      snapshot: initialSnapshot(previous, input.settings, input.membershipVersion, input.startedAt),
      pendingPersist: null,
      attempts: 0,
      nextAttemptAt: input.startedAt,
      idleSince: input.startedAt,
      rerun: false,
    };
  },
  initial: 'checking',
  on: {
    'system.shutdown': { target: '.stopped' },
    // While an attempt runs: its evidence may predate the event, so one more attempt follows it at once.
    'health.startupComplete': { actions: assign({ rerun: true }) },
  },
  states: {
    checking: {
      entry: assign({ rerun: false }),
      invoke: {
        src: 'gatherInputs',
        input: ({ context }) => ({ settings: context.settings, membershipVersion: context.membershipVersion }),
        onDone: {
          target: 'deciding',
          actions: assign(({ context, event }) => {
            const { now, finishedAt, inputs } = event.output;
            const { snapshot, persist } = evaluateCheckpoint(
              context.previous,
              context.snapshot.observedAt,
              inputs,
              context.settings,
              context.membershipVersion,
              now,
            );
            return {
              snapshot,
              pendingPersist: persist,
              // A failed attempt keeps the checkpoint it had (height freezes, spec §2.3 rule 3).
              previous: persist ?? adoptCheckpoint(context.previous, context.membershipVersion),
              attempts: context.attempts + 1,
              // Fixed cadence from this attempt's own time (notes A.6).
              nextAttemptAt: now + context.settings.intervalMs,
              idleSince: Math.max(now, finishedAt),
            };
          }),
        },
        onError: {
          target: 'idle',
          actions: [
            { type: 'reportFailure', params: ({ event }) => ({ stage: 'gather' as const, error: event.error }) },
            // No clock reading came back: wait one full interval from here. The snapshot stays as it was; reads
            // turn it stale once its checkpoint ages past the maximum.
            assign(({ context }) => ({
              attempts: context.attempts + 1,
              nextAttemptAt: context.idleSince + context.settings.intervalMs,
            })),
          ],
        },
      },
    },
    deciding: {
      always: [{ guard: 'hasCheckpointToPersist', target: 'persisting' }, { target: 'idle' }],
    },
    persisting: {
      invoke: {
        src: 'persistCheckpoint',
        input: ({ context }) => ({ checkpoint: context.pendingPersist! }),
        onDone: {
          target: 'idle',
          actions: assign(({ context, event }) => ({
            pendingPersist: null,
            idleSince: Math.max(context.idleSince, event.output.finishedAt),
          })),
        },
        onError: {
          target: 'idle',
          // The attempt passed; only its record was not written. The in-memory height stays monotonic, and the
          // next successful attempt writes a height at least as high (roundStart only grows with the clock), so
          // a failed write is reported, not turned into a health failure.
          actions: [
            { type: 'reportFailure', params: ({ event }) => ({ stage: 'persist' as const, error: event.error }) },
            assign({ pendingPersist: null }),
          ],
        },
      },
    },
    idle: {
      always: [
        { guard: 'rerunRequested', target: 'checking' },
        { guard: 'attemptOverdue', target: 'checking' },
      ],
      after: { checkpointInterval: 'checking' },
      on: { 'health.startupComplete': 'checking' },
    },
    stopped: { type: 'final' },
  },
});

/** The Health object for a read at `now` from the machine's context (spec §2.3). */
export function healthObject(
  context: Pick<HealthCheckpointContext, 'snapshot' | 'settings'>,
  fresh: FreshnessInputs | null,
  now: number,
  meta: { readonly version: string; readonly startedAt: number },
): HealthObject {
  return readHealth(context.snapshot, fresh, context.settings, now, meta);
}
