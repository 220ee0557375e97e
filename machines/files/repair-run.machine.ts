// The replication repair job (docs/specs/files-node.md §1.4, §4.3 "POST /api/storage/repair"; docs/notes/files-node.md A.4,
// C21): one long-lived machine per repair actor, holding the persisted cursor and cycle evidence in its context.
//
//   idle ──repair.batch──▶ passing ──▶ passed ──one batch, or the cycle completed──▶ idle
//     └───repair.cycle──▶ passing        ├──a cycle goes on──▶ waitingBetweenBatches ──batchDelay──▶ passing
//                                        └──a cycle goes on, the batch asked no peer──▶ passing
//   passing ──error──▶ idle
//
// - `repair.batch` (POST /api/storage/repair) runs exactly ONE next batch and answers its report; only `idle`
//   accepts it, so the actor answers 409 when `snapshot.can(repair.batch)` is false (a pass or a cycle runs).
// - `repair.cycle` (after the startup walk and on each `repairSchedule` tick) runs batches separated by
//   `repairBatchDelayMs` until the cycle completes. The pause spares the peers: a batch that asked none (no record in
//   it had a designated holder to probe, e.g. a node without peers) is followed by the next one at once, or a single
//   node of a million files would wait 10,000 pauses before its first cycle completes and health can say `ready`
//   (issue 30); it continues from the persisted cursor, so a cycle a manual
//   batch (or a previous process) started is finished, not restarted. A tick while running is skipped, not queued.
// - The state is persisted after every batch, except that a cycle going on after a batch that asked no peer writes
//   only every `unpacedBatchesPerWrite` such batches (UNPACED_BATCHES_PER_WRITE): one synchronous write per batch cost
//   a node of a million files without peers more than its ~10,000 batches did.
// - Repair not required (replication or repair disabled, spec §2.3 rule 2): nothing runs; a manual batch is
//   answered at once with an empty batch report (200, so an operator's tooling does not break on a disabled node).
//
// The machine decides; the actor supplies the I/O (docs/DESIGN.md rule 1): `runBatch` walks one batch of the registry
// and probes and places copies, honouring the invoke's signal between records (shutdown stops the job there, and
// the unfinished batch is not folded: the cursor stays where it was). Folding the batch into the evidence is pure
// (foldBatch, src/files/repair.ts); `persistState` writes the new state, `publishPass`, `publishFailure` and
// `noteSkipped` tell the outside (logs, the manual request's answer).

import { assign, fromPromise, setup } from 'xstate';
import { foldBatch, NO_COUNTS, repairReport, type BatchOutcome, type RepairReport, type RepairState } from '../../src/files/repair.js';

export interface RepairRunInput {
  /** replication.enabled && replication.repairEnabled. */
  readonly required: boolean;
  /** `replication.repairBatchDelayMs`: the pause between two batches of a cycle. */
  readonly batchDelayMs: number;
  /** Unpaced batches per write of the state (UNPACED_BATCHES_PER_WRITE; smaller in tests). */
  readonly unpacedBatchesPerWrite: number;
  /** The state restored from the store (or a fresh one). */
  readonly restored: RepairState;
}

/** What the current run is: one manual batch, or a whole cycle. */
export type RepairRunKind = 'batch' | 'cycle';

export interface RepairRunContext {
  readonly required: boolean;
  readonly batchDelayMs: number;
  readonly unpacedBatchesPerWrite: number;
  state: RepairState;
  run: RepairRunKind | null;
  /** The last batch's report (null before the first). */
  lastReport: RepairReport | null;
  /** Batches folded since the state was last persisted (only unpaced ones are left unpersisted). */
  unpersistedBatches: number;
}

/**
 * A cycle's batches that asked no peer are persisted once per this many (and whenever a batch asked peers, or the run
 * ends). Each write is a synchronous SQLite transaction, and a node of a million files without peers runs ~10,000
 * such batches per cycle back to back: a write each cost more than the batches (issue 30). A restart redoes at most
 * this many of them, and they are cheap: they asked nobody.
 */
export const UNPACED_BATCHES_PER_WRITE = 50;

export type RepairRunEvent = { type: 'repair.batch' } | { type: 'repair.cycle' };

export interface RunBatchInput {
  /** Records after this CID (null: from the first). */
  readonly cursor: string | null;
}

function notProvided(name: string): never {
  throw new Error(`repair-run: '${name}' must be provided by actors/files`);
}

/** A cycle run whose last batch did not complete the cycle. */
function cycleContinues(context: RepairRunContext): boolean {
  return context.run === 'cycle' && context.lastReport !== null && !context.lastReport.cycleCompleted;
}

/** The same, and the last batch probed no record: it asked no peer. */
function cycleContinuesUnpaced(context: RepairRunContext): boolean {
  return cycleContinues(context) && context.lastReport!.checked === 0;
}

/** After a fold that is written: the state goes to the store and nothing folded is left unpersisted. */
const PERSIST_FOLDED = [{ type: 'persistState', params: ({ context }: { context: RepairRunContext }) => ({ state: context.state }) }, 'markPersisted'] as const;

export const repairRunMachine = setup({
  types: {
    context: {} as RepairRunContext,
    input: {} as RepairRunInput,
    events: {} as RepairRunEvent,
  },
  actors: {
    runBatch: fromPromise<BatchOutcome, RunBatchInput>(async () => notProvided('runBatch')),
  },
  actions: {
    /** Writes the state (cursor and evidence) to the store; must not throw. */
    persistState: (_, _params: { state: RepairState }) => notProvided('persistState'),
    /** A batch ended (or a disabled repair answered an empty one): progress log, the manual request's answer. */
    publishPass: (_, _params: { run: RepairRunKind; report: RepairReport }) => notProvided('publishPass'),
    /** A batch failed as a whole: a log line, the manual request's rejection. */
    publishFailure: (_, _params: { run: RepairRunKind; error: unknown }) => notProvided('publishFailure'),
    /** A scheduled cycle came while a run was in progress: skipped (a debug line). */
    noteSkipped: () => notProvided('noteSkipped'),
    /** After persistState: nothing folded is unpersisted. */
    markPersisted: assign({ unpersistedBatches: 0 }),
  },
  guards: {
    notRequired: ({ context }) => !context.required,
    /** A cycle run whose last batch did not complete the cycle goes on after the delay. */
    cycleContinues: ({ context }) => cycleContinues(context),
    /** The same, and the last batch probed no record: it asked no peer, so there is nothing to pace. */
    cycleContinuesUnpaced: ({ context }) => cycleContinuesUnpaced(context),
    /** The same, and fewer than `unpacedBatchesPerWrite` batches are unpersisted with this one. */
    cycleContinuesUnpacedUnpersisted: ({ context }) =>
      cycleContinuesUnpaced(context) && context.unpersistedBatches < context.unpacedBatchesPerWrite,
  },
  delays: {
    batchDelay: ({ context }) => context.batchDelayMs,
  },
}).createMachine({
  id: 'filesRepairRun',
  context: ({ input }) => ({
    required: input.required,
    batchDelayMs: input.batchDelayMs,
    unpacedBatchesPerWrite: input.unpacedBatchesPerWrite,
    state: input.restored,
    run: null,
    lastReport: null,
    unpersistedBatches: 0,
  }),
  initial: 'idle',
  states: {
    idle: {
      entry: assign({ run: null }),
      on: {
        'repair.batch': [
          {
            guard: 'notRequired',
            actions: { type: 'publishPass', params: ({ context }) => ({ run: 'batch' as const, report: repairReport(NO_COUNTS, false, context.state) }) },
          },
          { target: 'passing', actions: assign({ run: 'batch' }) },
        ],
        'repair.cycle': [{ guard: 'notRequired' }, { target: 'passing', actions: assign({ run: 'cycle' }) }],
      },
    },
    passing: {
      invoke: {
        src: 'runBatch',
        input: ({ context }) => ({ cursor: context.state.cursor }),
        onDone: {
          target: 'passed',
          actions: [
            assign(({ context, event }) => {
              const { state, report } = foldBatch(context.state, event.output);
              return { state, lastReport: report, unpersistedBatches: context.unpersistedBatches + 1 };
            }),
            { type: 'publishPass', params: ({ context }) => ({ run: context.run!, report: context.lastReport! }) },
          ],
        },
        onError: {
          target: 'idle',
          actions: { type: 'publishFailure', params: ({ context, event }) => ({ run: context.run!, error: event.error }) },
        },
      },
      on: { 'repair.cycle': { actions: 'noteSkipped' } },
    },
    passed: {
      always: [
        { guard: 'cycleContinuesUnpacedUnpersisted', target: 'passing', reenter: true },
        { guard: 'cycleContinuesUnpaced', target: 'passing', reenter: true, actions: PERSIST_FOLDED },
        { guard: 'cycleContinues', target: 'waitingBetweenBatches', actions: PERSIST_FOLDED },
        { target: 'idle', actions: PERSIST_FOLDED },
      ],
    },
    waitingBetweenBatches: {
      after: { batchDelay: 'passing' },
      on: { 'repair.cycle': { actions: 'noteSkipped' } },
    },
  },
});
