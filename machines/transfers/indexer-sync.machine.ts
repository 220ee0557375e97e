// The transfers indexer (spec A; notes A.4 "Recommended design", F.10): one long-lived machine that follows the
// chain from START_BLOCK to head − CONFIRMATIONS_BLOCK and rewinds on reorgs.
//
//   loading ──▶ checking ──behind──▶ syncing ──(still behind: next batch)──▶ syncing
//      │           │  └──caught up──▶ idle ──pollPeriod──▶ checking          │
//      │           └──our tip is no longer on the chain──▶ rewinding ◀──parent mismatch──┘
//      │                                                      └──▶ checking
//      └── any failure (node or database) ──▶ backingOff ──retryDelay (1 s … 60 s)──▶ loading
//   system.shutdown from anywhere ──▶ stopped (final); the invoke's signal cancels the node call in flight
//
// - `checkChain` reads the head and, when this build wrote the cursor's block, whether that block's hash is still
//   the chain's: a reorg that replaced our tip is found even when no new block arrives.
// - `syncBatch` fetches [from, to] with receipts, checks parent-hash continuity against the cursor's hash and
//   inside the batch, and writes rows + hashes + cursor in one transaction; a first block whose parent is not
//   our tip answers `reorg` and nothing is written. Its input names the batch after it when that one is due too
//   (`next`), so the implementation may fetch it during the write (the parent check applies to it all the same).
//   With a `next`, `written` may come while the batch's transaction is still under way, once the batch before it has
//   committed: the implementation writes the next batch beside it and commits them in order, a failure of it failing
//   the next batch (backoff, then the cursor is re-read). The last batch before the target answers once committed,
//   so `idle` sees everything written.
// - `rewind` walks back through the remembered hashes to the common ancestor and deletes what lies above it.
// - Backoff restarts from `loading`: the cursor is re-read, so a failed write leaves nothing half-known.
//
// The cursor lives in the database (indexer.state), not in the actor: a restart resumes from it (docs/DESIGN.md rule 7;
// the only timers are the poll period and the retry delay, both re-armed by entering their states).

import { assign, fromPromise, setup } from 'xstate';
import { nextBatch, retryDelayMs, syncTarget } from '../../src/transfers/sync.js';

export interface IndexerSyncInput {
  readonly startBlock: number;
  readonly confirmations: number;
  readonly periodMs: number;
  /** Blocks fetched and written per transaction. */
  readonly batchBlocks: number;
}

export interface CursorOutput {
  readonly lastBlock: number | null;
  readonly lastHash: string | null;
}

export interface ChainCheckInput {
  readonly lastBlock: number | null;
  readonly lastHash: string | null;
}

export interface ChainCheckOutput {
  readonly head: number;
  /** False when the chain's block at the cursor has another hash than the one written (a reorg). */
  readonly tipOnChain: boolean;
}

export interface SyncBatchInput {
  readonly from: number;
  readonly to: number;
  /** The hash the first block's parent must have; null when unknown (first run, adopted cursor). */
  readonly expectedParent: string | null;
  /**
   * The batch due after this one if it is written, when the last head seen already makes it due (catching up):
   * the implementation may fetch it while it writes this one, so a backfill takes about the longer of fetching and
   * writing rather than their sum. Undefined on the last batch before the target.
   */
  readonly next?: { readonly from: number; readonly to: number };
}

export type SyncBatchOutput =
  | { readonly kind: 'written'; readonly lastBlock: number; readonly lastHash: string; readonly blocks: number; readonly rows: number }
  | { readonly kind: 'reorg' };

export interface RewindInput {
  readonly lastBlock: number | null;
}

export interface RewindOutput extends CursorOutput {
  /** How many blocks were undone. */
  readonly depth: number;
  readonly deletedRows: number;
}

export interface IndexerSyncContext extends IndexerSyncInput {
  lastBlock: number | null;
  lastHash: string | null;
  head: number | null;
  /** Consecutive failures; 0 after any success. */
  failures: number;
  lastError: string | null;
  /** Since this actor started. */
  indexedBlocks: number;
  indexedRows: number;
  reorgs: number;
}

export type IndexerSyncEvent = { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`indexer-sync: '${name}' must be provided by actors/transfers`);
}

const describe = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

export const indexerSyncMachine = setup({
  types: {
    context: {} as IndexerSyncContext,
    input: {} as IndexerSyncInput,
    events: {} as IndexerSyncEvent,
  },
  actors: {
    loadCursor: fromPromise<CursorOutput>(async () => notProvided('loadCursor')),
    checkChain: fromPromise<ChainCheckOutput, ChainCheckInput>(async () => notProvided('checkChain')),
    syncBatch: fromPromise<SyncBatchOutput, SyncBatchInput>(async () => notProvided('syncBatch')),
    rewind: fromPromise<RewindOutput, RewindInput>(async () => notProvided('rewind')),
  },
  actions: {
    // Done and error events of invokes are not in the machine's event union: read their payload explicitly.
    noteHead: assign(({ event }) => ({ head: (event as unknown as { output: ChainCheckOutput }).output.head })),
    noteFailure: assign(({ context, event }) => ({ failures: context.failures + 1, lastError: describe((event as unknown as { error: unknown }).error) })),
    /** Progress log (blocks/s, head, lag), rate-limited by the implementation. */
    reportProgress: (_, _params: { blocks: number; rows: number; lastBlock: number; head: number | null }) => notProvided('reportProgress'),
    reportCaughtUp: (_, _params: { lastBlock: number | null; head: number }) => notProvided('reportCaughtUp'),
    reportRewind: (_, _params: { depth: number; deletedRows: number; lastBlock: number | null }) => notProvided('reportRewind'),
    reportFailure: (_, _params: { error: string; failures: number; retryInMs: number }) => notProvided('reportFailure'),
  },
  guards: {
    tipReplaced: (_, params: { tipOnChain: boolean }) => !params.tipOnChain,
    /** The first fetched block's parent is not our tip: nothing was written. */
    reorgFound: (_, params: { kind: SyncBatchOutput['kind'] }) => params.kind === 'reorg',
    /** A batch is due for `head` (guards run before the transition's actions: the new head comes as a param). */
    behind: ({ context }, params: { head: number | null }) => batchOf({ ...context, head: params.head }) !== undefined,
  },
  delays: {
    pollPeriod: ({ context }) => context.periodMs,
    retryDelay: ({ context }) => retryDelayMs(context.failures),
  },
}).createMachine({
  id: 'transfersIndexerSync',
  context: ({ input }) => ({
    ...input,
    lastBlock: null,
    lastHash: null,
    head: null,
    failures: 0,
    lastError: null,
    indexedBlocks: 0,
    indexedRows: 0,
    reorgs: 0,
  }),
  initial: 'loading',
  on: {
    'system.shutdown': { target: '.stopped' },
  },
  states: {
    loading: {
      invoke: {
        src: 'loadCursor',
        onDone: { target: 'checking', actions: assign(({ event }) => ({ lastBlock: event.output.lastBlock, lastHash: event.output.lastHash })) },
        onError: { target: 'backingOff', actions: 'noteFailure' },
      },
    },
    checking: {
      invoke: {
        src: 'checkChain',
        input: ({ context }) => ({ lastBlock: context.lastBlock, lastHash: context.lastHash }),
        onDone: [
          { guard: { type: 'tipReplaced', params: ({ event }) => ({ tipOnChain: event.output.tipOnChain }) }, target: 'rewinding', actions: 'noteHead' },
          { guard: { type: 'behind', params: ({ event }) => ({ head: event.output.head }) }, target: 'syncing', actions: 'noteHead' },
          { target: 'idle', actions: 'noteHead' },
        ],
        onError: { target: 'backingOff', actions: 'noteFailure' },
      },
    },
    syncing: {
      invoke: {
        src: 'syncBatch',
        input: ({ context }) => syncBatchInput(context),
        onDone: [
          { guard: { type: 'reorgFound', params: ({ event }) => ({ kind: event.output.kind }) }, target: 'rewinding' },
          {
            actions: [
              assign(({ context, event }) => {
                const written = event.output as Extract<SyncBatchOutput, { kind: 'written' }>;
                return {
                  lastBlock: written.lastBlock,
                  lastHash: written.lastHash,
                  failures: 0,
                  lastError: null,
                  indexedBlocks: context.indexedBlocks + written.blocks,
                  indexedRows: context.indexedRows + written.rows,
                };
              }),
              {
                type: 'reportProgress',
                params: ({ context, event }) => {
                  const written = event.output as Extract<SyncBatchOutput, { kind: 'written' }>;
                  return { blocks: written.blocks, rows: written.rows, lastBlock: written.lastBlock, head: context.head };
                },
              },
            ],
            target: 'deciding',
          },
        ],
        onError: { target: 'backingOff', actions: 'noteFailure' },
      },
    },
    // After a batch: the next one while the target is ahead, else wait for the next poll.
    deciding: {
      always: [{ guard: { type: 'behind', params: ({ context }) => ({ head: context.head }) }, target: 'syncing' }, { target: 'idle' }],
    },
    rewinding: {
      invoke: {
        src: 'rewind',
        input: ({ context }) => ({ lastBlock: context.lastBlock }),
        onDone: {
          target: 'checking',
          actions: [
            assign(({ context, event }) => ({ lastBlock: event.output.lastBlock, lastHash: event.output.lastHash, reorgs: context.reorgs + 1, failures: 0 })),
            { type: 'reportRewind', params: ({ event }) => ({ depth: event.output.depth, deletedRows: event.output.deletedRows, lastBlock: event.output.lastBlock }) },
          ],
        },
        onError: { target: 'backingOff', actions: 'noteFailure' },
      },
    },
    idle: {
      entry: { type: 'reportCaughtUp', params: ({ context }) => ({ lastBlock: context.lastBlock, head: context.head ?? 0 }) },
      after: { pollPeriod: 'checking' },
    },
    backingOff: {
      entry: { type: 'reportFailure', params: ({ context }) => ({ error: context.lastError ?? 'unknown', failures: context.failures, retryInMs: retryDelayMs(context.failures) }) },
      after: { retryDelay: 'loading' },
    },
    stopped: { type: 'final' },
  },
});

/** The batch due now, its parent, and the batch after it when that one is due too. */
export function syncBatchInput(context: IndexerSyncContext): SyncBatchInput {
  const batch = batchOf(context)!;
  const next = batchOf({ ...context, lastBlock: batch.to });
  return { ...batch, expectedParent: context.lastHash, ...(next === undefined ? {} : { next }) };
}

/** The batch due now, from the cursor and the last head seen. */
function batchOf(context: IndexerSyncContext): { from: number; to: number } | undefined {
  if (context.head === null) return undefined;
  return nextBatch(context.lastBlock, context.startBlock, syncTarget(context.head, context.confirmations), context.batchBlocks);
}
