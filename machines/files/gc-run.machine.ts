// One garbage-collection run (docs/specs/files-node.md §2.8, §4.3; docs/notes/files-node.md A.4 rules 1-8, C3, C20).
//
//   measuring ──▶ planning ──▶ probingHolders ──▶ routing ──dry run──▶ previewed (final: nothing touched)
//                                                    └──▶ exclusive (exit: releaseLease)
//                                        locking ──▶ releasing ──▶ released ──a release failed──▶ failed
//                                                                     ──trigger none──▶ releasedOnly
//                                                                     └──▶ verifyingPins ──▶ verified
//                                        verified ──pin lost──▶ abandoned   ──verify error──▶ failed   ──▶ deleting
//                                        deleting ──▶ deleted ──a deletion failed──▶ failed   ──▶ collected
//   any invoked stage ──error──▶ failed
//
// The machine decides; the actors only do I/O (docs/DESIGN.md rule 1). `measure` reads the blockstore size and free
// space with the run's time, `loadRecords` the registry (in one pass, summarized as the plan needs it),
// `probeHolders` asks the designated holders of the handover candidates whether they hold them (rule 4c: a dry run
// probes too, rule 1) and answers the CIDs every holder confirmed; the plan is made here from all three with
// `planGc` (src/files/gc.ts). Probing happens before the lease: slow peers never hold up uploads.
// Everything that changes pins or blocks runs inside `exclusive`, holding the storage lease exclusively (rule 8),
// so no upload has unpinned blocks in flight while blocks are deleted; leaving `exclusive` by any path releases it.
// `releaseFiles` re-reads each planned record and applies the release or the demotion (handover) only when it still
// matches the plan (rule 7); in a run that will delete (it has a trigger), `verifyPins` then checks that every file
// that must be pinned is, restoring lost pins from local blocks (rule 6; a demoted file is no longer held, so its
// dropped pin is not restored); a pin it cannot restore abandons the run before a single block is deleted.
// `deleteUnpinned` deletes unpinned blocks, as many as the pressure asks for (all of them when forced), and only when
// the run has a trigger (spec §4.3).
// A failed stage keeps what earlier stages did (records already released stay released) and reports the error
// text; `collected` is true only for a deletion pass that ran to its end.

import { assign, fromPromise, setup } from 'xstate';
import { PackedStrings } from '../../src/packed-strings.js';
import {
  gcErrorText,
  planGc,
  underPressure,
  type GcMeasurement,
  type GcOutcome,
  type GcPlan,
  type GcRecordSummary,
  type GcRunResult,
  type GcSettings,
  type GcStage,
  type PlannedDemotion,
  type PlannedRelease,
} from '../../src/files/gc.js';

export interface GcRunInput {
  readonly dryRun: boolean;
  /** `force=true` (spec §4.3): delete unpinned blocks even without pressure. */
  readonly force: boolean;
  readonly settings: GcSettings;
}

export interface GcRunContext {
  readonly dryRun: boolean;
  readonly force: boolean;
  readonly settings: GcSettings;
  measurement: GcMeasurement | null;
  /** What the plan needs of the registry (`summarizeRegistry`), kept until the holders are probed (then the plan). */
  records: GcRecordSummary | null;
  plan: GcPlan | null;
  releasedCids: string[];
  demotedCids: string[];
  /** Planned releases and demotions the run did not apply whose files are still pinned (they are retained). */
  keptCids: string[];
  repairedPins: string[];
  unprotected: string[];
  removedCids: string[];
  freedBytes: number;
  errors: string[];
  outcome: GcOutcome | null;
}

export interface LoadRecordsInput {
  /** The run's time: handover candidates are picked while the registry is read, and a file's placement depends on its age. */
  readonly now: number;
  /**
   * The measurement shows pressure (rule 4b may release unexpired temporaries): every temporary record is needed.
   * Without it the plan reads only those past their expiry (rule 4a), and the others need not be kept.
   */
  readonly underPressure: boolean;
}

export interface ProbeHoldersInput {
  /** The registry as read for planning, with the handover candidates picked in that pass. */
  readonly records: GcRecordSummary;
}

export interface ReleaseFilesInput {
  readonly release: readonly PlannedRelease[];
  /** Handovers (rule 4c), applied under the same exclusive lease as the releases. */
  readonly demote: readonly PlannedDemotion[];
  /** The run's time (expiry is judged at it, and lifecycle events carry it). */
  readonly now: number;
}

export interface ReleaseFilesOutput {
  readonly releasedCids: readonly string[];
  /** Files whose local pin was dropped in a handover, their records kept (`confirmed`, not held). */
  readonly demotedCids: readonly string[];
  readonly keptCids: readonly string[];
  /** Errors of single releases or demotions; their records were kept for the next run. */
  readonly failures: readonly unknown[];
}

export interface VerifyPinsOutput {
  readonly repairedPins: readonly string[];
  readonly unprotected: readonly string[];
  /** Checks that could not be made (not the same as a pin that is missing). */
  readonly failures: readonly unknown[];
}

export interface DeleteUnpinnedInput {
  /** Stop once this many bytes are freed; null: delete every unpinned block (force). */
  readonly bytesToFree: number | null;
}

export interface DeleteUnpinnedOutput {
  readonly removedCids: readonly string[];
  readonly freedBytes: number;
  /** A deletion that failed ends the pass; the blocks removed before it stay counted. */
  readonly failures: readonly unknown[];
}

function notProvided(name: string): never {
  throw new Error(`gc-run: '${name}' must be provided by actors/files`);
}

const texts = (stage: GcStage, failures: readonly unknown[]) => failures.map((failure) => gcErrorText(stage, failure));

export const gcRunMachine = setup({
  types: {
    context: {} as GcRunContext,
    input: {} as GcRunInput,
    output: {} as GcRunResult,
  },
  actors: {
    measure: fromPromise<GcMeasurement, void>(async () => notProvided('measure')),
    loadRecords: fromPromise<GcRecordSummary, LoadRecordsInput>(async () => notProvided('loadRecords')),
    /** The CIDs (among the handover candidates) every designated holder confirmed it holds. */
    probeHolders: fromPromise<string[], ProbeHoldersInput>(async () => notProvided('probeHolders')),
    acquireLease: fromPromise<void, void>(async () => notProvided('acquireLease')),
    releaseFiles: fromPromise<ReleaseFilesOutput, ReleaseFilesInput>(async () => notProvided('releaseFiles')),
    verifyPins: fromPromise<VerifyPinsOutput, void>(async () => notProvided('verifyPins')),
    deleteUnpinned: fromPromise<DeleteUnpinnedOutput, DeleteUnpinnedInput>(async () => notProvided('deleteUnpinned')),
  },
  actions: {
    /** A stage failed as a whole: its error text (no stack, no CID) goes into the report. */
    recordFailure: assign(({ context }, params: { stage: GcStage; error: unknown }) => ({ errors: [...context.errors, gcErrorText(params.stage, params.error)] })),
    /** Gives the exclusive lease back (if it was taken); every path out of `exclusive` runs it. */
    releaseLease: () => notProvided('releaseLease'),
  },
  guards: {
    isDryRun: ({ context }) => context.dryRun,
    releaseFailed: ({ context }) => context.errors.length > 0,
    pinLost: ({ context }) => context.unprotected.length > 0,
    verifyFailed: ({ context }) => context.errors.length > 0,
    /** Deletion happens only with a trigger (notes C20: `none` deletes nothing). */
    deletionDue: ({ context }) => context.plan !== null && context.plan.trigger !== 'none',
    deletionFailed: ({ context }) => context.errors.length > 0,
  },
}).createMachine({
  id: 'filesGcRun',
  context: ({ input }) => ({
    dryRun: input.dryRun,
    force: input.force,
    settings: input.settings,
    measurement: null,
    records: null,
    plan: null,
    releasedCids: [],
    demotedCids: [],
    keptCids: [],
    repairedPins: [],
    unprotected: [],
    removedCids: [],
    freedBytes: 0,
    errors: [],
    outcome: null,
  }),
  initial: 'measuring',
  states: {
    measuring: {
      invoke: {
        src: 'measure',
        onDone: { target: 'planning', actions: assign({ measurement: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ stage: 'measure' as const, error: event.error }) } },
      },
    },
    planning: {
      invoke: {
        src: 'loadRecords',
        input: ({ context }) => ({ now: context.measurement!.now, underPressure: underPressure(context.measurement!, context.settings) }),
        onDone: { target: 'probingHolders', actions: assign({ records: ({ event }) => event.output }) },
        onError: { target: 'failed', actions: { type: 'recordFailure', params: ({ event }) => ({ stage: 'plan' as const, error: event.error }) } },
      },
    },
    // Rule 4c: handover candidates' holders are asked before the plan is made; dry runs too (rule 1).
    probingHolders: {
      invoke: {
        src: 'probeHolders',
        input: ({ context }) => ({ records: context.records! }),
        onDone: {
          target: 'routing',
          actions: assign({
            plan: ({ context, event }) => planGc(context.records!, context.measurement!, context.settings, context.force, event.output),
            records: null,
          }),
        },
        onError: {
          target: 'failed',
          actions: [assign({ records: null }), { type: 'recordFailure', params: ({ event }) => ({ stage: 'probe' as const, error: event.error }) }],
        },
      },
    },
    routing: {
      always: [{ guard: 'isDryRun', target: 'previewed' }, { target: 'exclusive' }],
    },
    exclusive: {
      initial: 'locking',
      exit: 'releaseLease',
      states: {
        locking: {
          invoke: {
            src: 'acquireLease',
            onDone: { target: 'releasing' },
            onError: { target: '#filesGcRun.failed', actions: { type: 'recordFailure', params: ({ event }) => ({ stage: 'lease' as const, error: event.error }) } },
          },
        },
        releasing: {
          invoke: {
            src: 'releaseFiles',
            input: ({ context }) => ({ release: context.plan!.release, demote: context.plan!.demote, now: context.measurement!.now }),
            onDone: {
              target: 'released',
              actions: assign(({ context, event }) => ({
                releasedCids: [...event.output.releasedCids],
                demotedCids: [...event.output.demotedCids],
                keptCids: [...event.output.keptCids],
                errors: [...context.errors, ...texts('release', event.output.failures)],
              })),
            },
            onError: { target: '#filesGcRun.failed', actions: { type: 'recordFailure', params: ({ event }) => ({ stage: 'release' as const, error: event.error }) } },
          },
        },
        // A release that failed (helia could not unpin) keeps its record for the next run; nothing is deleted
        // in a run whose picture of the pin set is in doubt. Pins are verified before deleting (rule 6), so a run
        // that deletes nothing (no trigger) ends here: at a million files the verification is ~920k pin reads, over
        // a minute of holding every upload (issue 30), and a lost pin is still restored before any deletion.
        released: {
          always: [
            { guard: 'releaseFailed', target: '#filesGcRun.failed' },
            { guard: 'deletionDue', target: 'verifyingPins' },
            { target: '#filesGcRun.releasedOnly' },
          ],
        },
        verifyingPins: {
          invoke: {
            src: 'verifyPins',
            onDone: {
              target: 'verified',
              actions: assign(({ context, event }) => ({
                repairedPins: [...event.output.repairedPins],
                unprotected: [...event.output.unprotected],
                errors: [...context.errors, ...texts('verify', event.output.failures)],
              })),
            },
            onError: { target: '#filesGcRun.failed', actions: { type: 'recordFailure', params: ({ event }) => ({ stage: 'verify' as const, error: event.error }) } },
          },
        },
        verified: {
          always: [
            { guard: 'pinLost', target: '#filesGcRun.abandoned' },
            { guard: 'verifyFailed', target: '#filesGcRun.failed' },
            { target: 'deleting' },
          ],
        },
        deleting: {
          invoke: {
            src: 'deleteUnpinned',
            input: ({ context }) => ({ bytesToFree: context.plan!.bytesToFree }),
            onDone: {
              target: 'deleted',
              actions: assign(({ context, event }) => ({
                removedCids: [...event.output.removedCids],
                freedBytes: event.output.freedBytes,
                errors: [...context.errors, ...texts('delete', event.output.failures)],
              })),
            },
            onError: { target: '#filesGcRun.failed', actions: { type: 'recordFailure', params: ({ event }) => ({ stage: 'delete' as const, error: event.error }) } },
          },
        },
        deleted: {
          always: [{ guard: 'deletionFailed', target: '#filesGcRun.failed' }, { target: '#filesGcRun.collected' }],
        },
      },
    },
    previewed: { type: 'final', entry: assign({ outcome: 'previewed' }) },
    releasedOnly: { type: 'final', entry: assign({ outcome: 'released' }) },
    collected: { type: 'final', entry: assign({ outcome: 'collected' }) },
    abandoned: { type: 'final', entry: assign({ outcome: 'abandoned' }) },
    failed: { type: 'final', entry: assign({ outcome: 'failed' }) },
  },
  output: ({ context }) => gcRunResult(context),
});

/**
 * The sorted union of the plan's retained list and a few more CIDs, in one pass: the retained list holds every pinned
 * file (a million at that scale), where a set of both and a sort took seconds and a second copy of the list. Without
 * others the plan's list itself is the answer (packed lists are not changed once read).
 */
function sortedUnion(sorted: PackedStrings, others: readonly string[]): PackedStrings {
  if (others.length === 0) return sorted;
  const union = new PackedStrings();
  let last: string | undefined;
  const add = (cid: string) => {
    if (cid !== last) union.push(cid);
    last = cid;
  };
  let j = 0;
  for (const cid of sorted) {
    while (j < others.length && others[j]! <= cid) add(others[j++]!);
    add(cid);
  }
  while (j < others.length) add(others[j++]!);
  return union;
}

/** The run's result from its context (the machine's output). */
export function gcRunResult(context: GcRunContext): GcRunResult {
  const { plan, measurement } = context;
  const before = measurement?.blockstoreBytes ?? 0;
  const dryRun = context.dryRun;
  return {
    outcome: context.outcome ?? 'failed',
    dryRun,
    trigger: plan?.trigger ?? 'none',
    blockstoreBytesBefore: before,
    estimatedBytesAfter: dryRun ? (plan?.estimatedBytesAfter ?? before) : Math.max(0, before - context.freedBytes),
    // A dry run reports exactly what it would release (spec §4.3); a real run what it did release (rule 7).
    releasedCids: dryRun ? (plan?.release.map((entry) => entry.cid) ?? []) : context.releasedCids,
    retainedCids: sortedUnion(plan?.retainedCids ?? new PackedStrings(), [...context.keptCids].sort()),
    // The same for handovers: a dry run lists what it would demote (rule 1), a real run what it demoted.
    demoted: dryRun ? (plan?.demote.map((entry) => entry.cid) ?? []) : context.demotedCids,
    removedBlocks: context.removedCids.length,
    removedCids: context.removedCids,
    repairedPins: context.repairedPins,
    unprotected: context.unprotected,
    errors: context.errors,
  };
}
