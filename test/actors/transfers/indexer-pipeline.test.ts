// The indexer actor's pipeline (actors/transfers/indexer.actor.ts, issue 30): while catching up, the next batch's
// blocks are fetched while the current batch is written, and the next batch's rows are written on a second
// connection while the batch before it is still in its transaction, committing only after it. The real machine and
// actor over a scripted node (blocksWithReceipts) and a writer whose transactions the test releases one by one, in
// any order: every range is fetched once, the cursor moves in order whatever order the writes finish in, a failed
// write rolls back the one after it and the indexer resumes from the committed cursor, and a shutdown during a write
// cancels the fetch in flight.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor } from 'xstate';
import { DatabaseHolder } from '../../../actors/transfers/database.actor.js';
import { indexerInput, indexerLogic } from '../../../actors/transfers/indexer.actor.js';
import { systemClock } from '../../../src/clock.js';
import type { IndexerSettings } from '../../../src/transfers/config.js';
import type { BlockWithReceipts, EthRpcClient } from '../../../storage/transfers/chain.eth-rpc.js';
import type { SqlClient, SqlQuery } from '../../../storage/transfers/sql-client.js';
import { captureLogger } from '../../support/logger.js';
import { waitFor } from '../../support/wait.js';

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const hex = (n: number) => `0x${n.toString(16)}`;

/** The node: a chain of empty blocks 0…head; every fetch is recorded with its signal. */
class ScriptedNode {
  readonly fetches: Array<{ from: number; to: number; signal: AbortSignal; at: number }> = [];
  constructor(readonly head: number) {}
  client(events: string[]): EthRpcClient {
    const node = this;
    return {
      receiptsMode: 'block',
      async blockNumber() {
        return node.head;
      },
      async blockHeader(n: number) {
        return { number: hex(n), hash: hash(n), parentHash: hash(n - 1) };
      },
      async blocksWithReceipts(from: number, to: number, signal: AbortSignal): Promise<BlockWithReceipts[]> {
        node.fetches.push({ from, to, signal, at: events.length });
        events.push(`fetch ${from}-${to}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        signal.throwIfAborted();
        return Array.from({ length: to - from + 1 }, (_, i) => ({
          block: { number: hex(from + i), hash: hash(from + i), parentHash: hash(from + i - 1), timestamp: hex(1_700_000_000 + from + i), transactions: [] },
          receipts: [],
        })) as unknown as BlockWithReceipts[];
      },
    } as unknown as EthRpcClient;
  }
}

/**
 * A writer whose transactions wait for `release(i)` before running; each transaction keeps its cursor move to itself
 * until its body ends (commit) and drops it when the body throws (rollback), like PostgreSQL's. `failRowsOf` makes
 * the next write of the batch starting at that block fail at its first statement, once.
 */
class HeldWriter {
  readonly written: number[] = [];
  readonly rolledBack: number[] = [];
  private waiting: Array<() => void> = [];
  lastBlock: number | null = null;
  failRowsOf: number | undefined;
  constructor(private readonly events: string[]) {}
  pending(): number {
    return this.waiting.length;
  }
  /** Lets the i-th waiting transaction (in the order they began) run. */
  release(i = 0): void {
    this.waiting.splice(i, 1)[0]?.();
  }
  client(): SqlClient {
    const writer = this;
    const cursorRead: SqlQuery['query'] = async (text) =>
      /FROM indexer\.state s/.test(text) ? [{ last_block: writer.lastBlock, hash: writer.lastBlock === null ? null : hash(writer.lastBlock) }] : [];
    return {
      query: cursorRead,
      exec: async () => undefined,
      async transaction<T>(body: (tx: SqlQuery) => Promise<T>): Promise<T> {
        let cursor: number | undefined;
        let first: number | undefined;
        writer.events.push('write start');
        await new Promise<void>((resolve) => writer.waiting.push(resolve));
        const query: SqlQuery['query'] = async (text, values) => {
          if (/DELETE FROM public\.ethtxs/.test(text)) {
            first = Number(values![0]);
            writer.events.push(`rows ${first}`);
            if (writer.failRowsOf === first) {
              writer.failRowsOf = undefined;
              throw new Error(`the rows of ${first} were refused`);
            }
          }
          if (/UPDATE indexer\.state SET last_block/.test(text)) cursor = Number(values![0]);
          return cursorRead(text, values);
        };
        try {
          const result = await body({ query, exec: async () => undefined });
          if (cursor !== undefined) {
            writer.lastBlock = cursor;
            writer.written.push(cursor);
          }
          writer.events.push(`commit ${cursor}`);
          return result;
        } catch (error) {
          writer.rolledBack.push(first ?? -1);
          writer.events.push(`rollback ${first}`);
          throw error;
        }
      },
      close: async () => undefined,
    } as unknown as SqlClient;
  }
}

function startIndexer(node: ScriptedNode, writer: HeldWriter, events: string[]) {
  const holder = new DatabaseHolder();
  holder.set({ writer: writer.client(), catalog: undefined, read: undefined });
  const settings: IndexerSettings = { enabled: true, ethUrl: 'http://127.0.0.1:1', startBlock: 1, confirmations: 0, periodMs: 60_000 };
  const logic = indexerLogic({ settings, holder, eth: node.client(events), clock: systemClock, logger: captureLogger('warn').logger, batchBlocks: 10 });
  return createActor(logic, { input: indexerInput(settings, 10) }).start();
}

describe('indexer pipeline', () => {
  it('fetches the next batch during a write, writes two batches at once, and commits them in order', async () => {
    const events: string[] = [];
    const node = new ScriptedNode(35);
    const writer = new HeldWriter(events);
    const actor = startIndexer(node, writer, events);
    try {
      // Batch 1-10 is handed to the database and its write waits; 11-20, fetched meanwhile, starts its own write on
      // a second connection, and 21-30 is fetched meanwhile.
      await waitFor(() => writer.pending() === 2 && node.fetches.length === 3, { what: 'two writes in flight and the third fetch' });
      assert.deepEqual(
        node.fetches.map((f) => [f.from, f.to]),
        [
          [1, 10],
          [11, 20],
          [21, 30],
        ],
      );
      assert.deepEqual(writer.written, [], 'nothing committed yet');
      // The second write runs first: its rows go in, but it does not commit before the first.
      writer.release(1);
      await waitFor(() => events.includes('rows 11'), { what: 'the rows of 11-20' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(writer.written, [], `11-20 waits for 1-10 to commit: ${events.join(', ')}`);
      assert.equal(writer.pending(), 1);
      writer.release(0);
      await waitFor(() => writer.written.length === 2, { what: 'both commits' });
      assert.deepEqual(writer.written, [10, 20], 'committed in order');
      for (let i = 0; i < 2; i++) {
        await waitFor(() => writer.pending() >= 1, { what: `write ${i + 3}` });
        writer.release();
      }
      await waitFor(() => actor.getSnapshot().value === 'idle', { what: 'caught up' });
      assert.deepEqual(writer.written, [10, 20, 30, 35]);
      assert.equal(actor.getSnapshot().context.lastBlock, 35);
      // Each range fetched once (no refetch of a prefetched range), none past the head.
      assert.deepEqual(
        node.fetches.map((f) => [f.from, f.to]),
        [
          [1, 10],
          [11, 20],
          [21, 30],
          [31, 35],
        ],
      );
    } finally {
      actor.send({ type: 'system.shutdown' });
      actor.stop();
    }
  });

  it('a write that fails while the one before it is in flight: nothing after it commits, and the indexer resumes from the committed cursor', async () => {
    const events: string[] = [];
    const node = new ScriptedNode(35);
    const writer = new HeldWriter(events);
    writer.failRowsOf = 11;
    const actor = startIndexer(node, writer, events);
    try {
      await waitFor(() => writer.pending() === 2, { what: 'two writes in flight' });
      // 11-20 fails at its rows while 1-10 still waits: the machine backs off, but does not read the cursor while
      // 1-10 may still commit.
      writer.release(1);
      await waitFor(() => actor.getSnapshot().value === 'backingOff', { what: 'the backoff after the failed write' });
      assert.deepEqual(writer.rolledBack, [11]);
      // The backoff (1 s) ends while 1-10 still waits: the cursor is read only once 1-10 has settled.
      await new Promise((resolve) => setTimeout(resolve, 1_300));
      assert.equal(actor.getSnapshot().value, 'loading', `waiting for 1-10 before reading the cursor: ${events.join(', ')}`);
      assert.equal(writer.pending(), 1, 'no write began beside the one in flight');
      writer.release(0);
      // Then the cursor is read (10) and 11-20 is written again.
      const deadline = Date.now() + 10_000;
      while (actor.getSnapshot().value !== 'idle' && Date.now() < deadline) {
        if (writer.pending() > 0) writer.release();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(actor.getSnapshot().value, 'idle', `caught up: ${events.join(', ')}`);
      assert.deepEqual(writer.written, [10, 20, 30, 35], 'every batch committed once, in order');
      assert.deepEqual(writer.rolledBack, [11]);
      // The retry started from the committed cursor: 11-20 was written a second time, 1-10 was not.
      assert.equal(events.filter((event) => event === 'rows 1').length, 1);
      assert.equal(events.filter((event) => event === 'rows 11').length, 2);
    } finally {
      actor.send({ type: 'system.shutdown' });
      actor.stop();
    }
  });

  it('a failed write rolls back the write after it, which had already written its rows', async () => {
    const events: string[] = [];
    const node = new ScriptedNode(35);
    const writer = new HeldWriter(events);
    writer.failRowsOf = 1;
    const actor = startIndexer(node, writer, events);
    try {
      // 1-10's write waits; the indexer moves on to 11-20 only if 1-10 has not failed yet: it has not.
      await waitFor(() => writer.pending() === 2, { what: 'two writes in flight' });
      writer.release(1);
      await waitFor(() => events.includes('rows 11'), { what: 'the rows of 11-20' });
      writer.release(0);
      await waitFor(() => writer.rolledBack.length === 2, { what: 'both rolled back' });
      assert.deepEqual(writer.rolledBack, [1, 11]);
      assert.deepEqual(writer.written, [], 'the rows of 11-20 never committed without those of 1-10');
    } finally {
      actor.send({ type: 'system.shutdown' });
      actor.stop();
    }
  });

  it('a shutdown during a write cancels the next batch being fetched', async () => {
    const events: string[] = [];
    const node = new ScriptedNode(35);
    const writer = new HeldWriter(events);
    const actor = startIndexer(node, writer, events);
    await waitFor(() => writer.pending() === 2 && node.fetches.length === 3, { what: 'two writes in flight and the third fetch' });
    actor.send({ type: 'system.shutdown' });
    assert.equal(actor.getSnapshot().status, 'done');
    assert.equal(node.fetches[2]!.signal.aborted, true, 'the prefetch of 21-30 is cancelled');
    // The writes handed to the database still commit, in order.
    writer.release(1);
    writer.release(0);
    await waitFor(() => writer.written.length === 2, { what: 'the in-flight writes' });
    assert.deepEqual(writer.written, [10, 20]);
    actor.stop();
  });
});
