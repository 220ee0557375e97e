// transfers.indexer: the indexer-sync machine (machines/transfers/indexer-sync.machine.ts) with its I/O supplied:
// the Ethereum node through the JSON-RPC client, the database through the indexer store. Progress is logged at most
// every PROGRESS_LOG_MS while catching up (blocks/s, head, lag) and once when caught up.

import { fromPromise } from 'xstate';
import {
  indexerSyncMachine,
  type ChainCheckInput,
  type ChainCheckOutput,
  type CursorOutput,
  type RewindInput,
  type RewindOutput,
  type SyncBatchInput,
  type SyncBatchOutput,
} from '../../machines/transfers/indexer-sync.machine.js';
import type { Logger } from '../../src/logger.js';
import type { IndexerSettings } from '../../src/transfers/config.js';
import { ChecksumAddresses, transferRows } from '../../src/transfers/rows.js';
import { readCursor, recentBlocks, rewindTo, writeBlocks, type IndexedBlock } from '../../storage/transfers/indexer-store.js';
import type { SqlClient } from '../../storage/transfers/sql-client.js';
import type { Clock } from '../../src/clock.js';
import type { DatabaseHolder } from './database.actor.js';
import type { BlockWithReceipts, EthRpcClient } from '../../storage/transfers/chain.eth-rpc.js';

/** Blocks fetched (the client batches block and receipt requests, a few in flight) and written per transaction. */
export const BATCH_BLOCKS = 50;
/** Recent block hashes kept for reorg detection; a reorg deeper than this rewinds only this far (and warns). */
export const KEEP_HASHES = 256;
const PROGRESS_LOG_MS = 10_000;

/** The node changed its chain while a batch was being fetched: nothing is written, the next attempt sorts it out. */
export class ChainMovedError extends Error {
  override readonly name = 'ChainMovedError';
  constructor(at: number) {
    super(`block ${at} does not extend the block before it in the same batch (the chain moved during the fetch)`);
  }
}

export interface IndexerActorOptions {
  readonly settings: IndexerSettings;
  readonly holder: DatabaseHolder;
  readonly eth: EthRpcClient;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly batchBlocks?: number;
}

export function indexerInput(settings: IndexerSettings, batchBlocks = BATCH_BLOCKS) {
  return { startBlock: settings.startBlock, confirmations: settings.confirmations, periodMs: settings.periodMs, batchBlocks };
}

export function indexerLogic(options: IndexerActorOptions) {
  const { holder, eth, clock, logger } = options;
  const writer = (): SqlClient => {
    const db = holder.get().writer;
    if (!db) throw new Error('the indexer has no database connection');
    return db;
  };
  let window = { at: clock.now(), blocks: 0, rows: 0 };
  let caughtUpLogged = false;
  /**
   * The next batch's blocks and receipts, fetched while the current batch is written (SyncBatchInput.next): the node
   * serves the next 50 blocks while PostgreSQL writes these, so catching up takes about the longer of the two, not
   * their sum (issue 30's backfill into a loaded table). Taken by the next syncBatch for exactly that range, with
   * its own parent-hash checks; dropped (aborted) by anything else. Its controller follows the signal of the
   * invocation that holds it, so a shutdown cancels it; a failure of it is the next batch's failure.
   */
  let prefetched: { from: number; to: number; controller: AbortController; blocks: Promise<BlockWithReceipts[]> } | undefined;
  /**
   * Settles once the newest batch handed to the database has committed or failed, and every batch before it too;
   * rejects when any of them failed. The next batch writes its rows beside it on a second connection and commits
   * after it (writeBlocks' `after`): PostgreSQL, the slowest party of a backfill into a large table (index upkeep),
   * writes the next batch's rows while the one before it is still being written rather than waiting for this
   * process between batches. A syncBatch returns once the batch before it has committed, with its own write under
   * way; the last batch before the target returns once it has committed itself, so `idle` is entered with nothing
   * in flight. A failure of an in-flight batch fails the batch after it (it awaits this), and the machine backs off
   * and re-reads the cursor.
   */
  let inFlight: Promise<void> = Promise.resolve();
  /** Waits until no write is in flight: a cursor read and a rewind must see settled data. */
  const settle = async () => {
    await inFlight.catch(() => undefined);
    inFlight = Promise.resolve();
  };
  /** The EIP-55 case of the addresses met lately: this indexer's own memo (src/transfers/rows.ts). */
  const checksums = new ChecksumAddresses();
  const fetchBlocks = (from: number, to: number) => {
    const controller = new AbortController();
    const blocks = eth.blocksWithReceipts(from, to, controller.signal);
    // Observed here so an unused or failed prefetch is never an unhandled rejection; its taker awaits `blocks` itself.
    blocks.catch(() => undefined);
    return { from, to, controller, blocks };
  };
  const dropPrefetch = () => {
    prefetched?.controller.abort();
    prefetched = undefined;
  };

  return indexerSyncMachine.provide({
    actors: {
      loadCursor: fromPromise<CursorOutput>(async () => {
        await settle();
        return readCursor(writer());
      }),

      checkChain: fromPromise<ChainCheckOutput, ChainCheckInput>(async ({ input, signal }) => {
        const head = await eth.blockNumber(signal);
        if (input.lastBlock === null || input.lastHash === null) return { head, tipOnChain: true };
        const block = await eth.blockHeader(input.lastBlock, signal);
        // A chain now shorter than our cursor has dropped our tip as well.
        return { head, tipOnChain: block !== null && block.hash.toLowerCase() === input.lastHash.toLowerCase() };
      }),

      syncBatch: fromPromise<SyncBatchOutput, SyncBatchInput>(async ({ input, signal }) => {
        const current = prefetched !== undefined && prefetched.from === input.from && prefetched.to === input.to ? prefetched : undefined;
        if (current === undefined) dropPrefetch();
        prefetched = undefined;
        const fetch = current ?? fetchBlocks(input.from, input.to);
        const cancel = () => {
          fetch.controller.abort();
          dropPrefetch();
        };
        signal.addEventListener('abort', cancel, { once: true });
        try {
          signal.throwIfAborted();
          const fetched = await fetch.blocks;
          const blocks: IndexedBlock[] = [];
          let parent = input.expectedParent;
          for (const { block, receipts } of fetched) {
            const number = Number(BigInt(block.number));
            if (parent !== null && block.parentHash.toLowerCase() !== parent.toLowerCase()) {
              if (blocks.length === 0) return { kind: 'reorg' };
              throw new ChainMovedError(number);
            }
            blocks.push({ number, hash: block.hash.toLowerCase(), parentHash: block.parentHash.toLowerCase(), rows: transferRows(block, receipts, checksums) });
            parent = block.hash;
          }
          signal.throwIfAborted();
          if (input.next !== undefined) prefetched = fetchBlocks(input.next.from, input.next.to);
          const before = inFlight;
          const commit = writeBlocks(writer(), blocks, KEEP_HASHES, before);
          // Settles once this batch and every one before it have: a batch that fails early (its rows refused) must
          // not let a cursor read or a rewind start while the batch before it may still commit. Rejects when any of
          // them failed, so the batch after this one rolls back.
          inFlight = Promise.allSettled([before, commit]).then(([earlier, own]) => {
            if (earlier.status === 'rejected') throw earlier.reason;
            if (own.status === 'rejected') throw own.reason;
          });
          // Observed here: a failure after this returns is the next batch's failure (it awaits `before`).
          inFlight.catch(() => undefined);
          try {
            // A failure of this write before the batch before it commits is this batch's own failure.
            await Promise.race([before, commit]);
            await before;
            if (input.next === undefined) await commit;
          } catch (error) {
            // Backoff re-reads the cursor: whatever comes next asks for its own range.
            dropPrefetch();
            throw error;
          }
          const last = blocks[blocks.length - 1]!;
          return { kind: 'written', lastBlock: last.number, lastHash: last.hash, blocks: blocks.length, rows: blocks.reduce((sum, block) => sum + block.rows.length, 0) };
        } finally {
          signal.removeEventListener('abort', cancel);
        }
      }),

      rewind: fromPromise<RewindOutput, RewindInput>(async ({ input, signal }) => {
        await settle();
        const db = writer();
        const remembered = await recentBlocks(db, KEEP_HASHES);
        // Every remembered block's header in a few batched requests; the newest that still matches is the ancestor.
        const onChain = await eth.blockHeaders(remembered.map((stored) => stored.number), signal);
        const index = remembered.findIndex((stored, i) => onChain[i]?.hash.toLowerCase() === stored.hash);
        const found = index >= 0;
        let ancestor: number | null = found ? remembered[index]!.number : null;
        if (!found) {
          const oldest = remembered[remembered.length - 1];
          ancestor = oldest ? oldest.number - 1 : null;
          logger.warn({ rewoundTo: ancestor, remembered: remembered.length }, 'no remembered block is on the chain any more: rewinding as far as the remembered hashes reach');
        }
        const { deletedRows } = await rewindTo(db, ancestor);
        const cursor = await readCursor(db);
        const depth = input.lastBlock === null ? 0 : input.lastBlock - (ancestor ?? input.lastBlock);
        return { lastBlock: cursor.lastBlock, lastHash: cursor.lastHash, depth, deletedRows };
      }),
    },
    actions: {
      reportProgress: (_, params) => {
        caughtUpLogged = false;
        window.blocks += params.blocks;
        window.rows += params.rows;
        const now = clock.now();
        const elapsed = now - window.at;
        if (elapsed < PROGRESS_LOG_MS) return;
        logger.info(
          {
            lastBlock: params.lastBlock,
            head: params.head,
            lag: params.head === null ? null : params.head - params.lastBlock,
            blocksPerSecond: Math.round((window.blocks * 10_000) / elapsed) / 10,
            rows: window.rows,
          },
          'indexing',
        );
        window = { at: now, blocks: 0, rows: 0 };
      },
      reportCaughtUp: (_, params) => {
        if (caughtUpLogged) return;
        caughtUpLogged = true;
        window = { at: clock.now(), blocks: 0, rows: 0 };
        logger.info({ lastBlock: params.lastBlock, head: params.head }, 'caught up with the chain');
      },
      reportRewind: (_, params) => logger.warn({ depth: params.depth, deletedRows: params.deletedRows, lastBlock: params.lastBlock }, 'chain reorganization: rewound to the common ancestor'),
      reportFailure: (_, params) => logger.warn({ reason: params.error, failures: params.failures, retryInMs: params.retryInMs }, 'indexer step failed; retrying'),
    },
  });
}
