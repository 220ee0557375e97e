// The indexer actor's prefetch (actors/transfers/indexer.actor.ts, issue 30): while catching up, the next batch's
// blocks are fetched while the current batch is written, so a backfill takes about the longer of fetching and writing
// rather than their sum. The real machine and actor over a scripted node (blocksWithReceipts) and a writer whose
// transactions the test releases one at a time: the next range is asked for before the current write ends, every
// batch is still written once and in order with its parent checked, and a shutdown during a write cancels the fetch
// in flight.

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

/** A writer whose transactions wait for `release()`; the cursor statement's block is recorded per write. */
class HeldWriter {
  readonly written: number[] = [];
  private waiting: Array<() => void> = [];
  lastBlock: number | null = null;
  constructor(private readonly events: string[]) {}
  pending(): number {
    return this.waiting.length;
  }
  release(): void {
    this.waiting.shift()?.();
  }
  client(): SqlClient {
    const writer = this;
    const query: SqlQuery['query'] = async (text: string, values?: readonly unknown[]) => {
      if (/FROM indexer\.state s/.test(text)) return [{ last_block: writer.lastBlock, hash: writer.lastBlock === null ? null : hash(writer.lastBlock) }];
      if (/UPDATE indexer\.state SET last_block/.test(text)) {
        writer.lastBlock = Number(values![0]);
        writer.written.push(writer.lastBlock);
      }
      return [];
    };
    return {
      query,
      exec: async () => undefined,
      async transaction<T>(body: (tx: SqlQuery) => Promise<T>): Promise<T> {
        writer.events.push('write start');
        await new Promise<void>((resolve) => writer.waiting.push(resolve));
        const result = await body({ query } as SqlQuery);
        writer.events.push(`write end ${writer.lastBlock}`);
        return result;
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

describe('indexer prefetch', () => {
  it('fetches the next batch while the current one is written, and writes every batch once, in order', async () => {
    const events: string[] = [];
    const node = new ScriptedNode(35);
    const writer = new HeldWriter(events);
    const actor = startIndexer(node, writer, events);
    try {
      // Batch 1-10 fetched; its write waits. Meanwhile 11-20 is already being fetched.
      await waitFor(() => writer.pending() === 1, { what: 'the first write' });
      await waitFor(() => node.fetches.length === 2, { what: 'the prefetch of 11-20' });
      assert.deepEqual(
        node.fetches.map((f) => [f.from, f.to]),
        [
          [1, 10],
          [11, 20],
        ],
      );
      assert.deepEqual(writer.written, [], 'nothing written yet: the prefetch started during the first write');
      for (let i = 0; i < 4; i++) {
        await waitFor(() => writer.pending() === 1, { what: `write ${i + 1}` });
        writer.release();
      }
      await waitFor(() => actor.getSnapshot().value === 'idle', { what: 'caught up' });
      assert.deepEqual(writer.written, [10, 20, 30, 35]);
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
      // Every prefetch began before the write of the batch before it ended.
      for (const [i, fetch] of node.fetches.slice(1).entries()) {
        const endOfPrevious = events.indexOf(`write end ${[10, 20, 30][i]}`);
        assert.ok(fetch.at < endOfPrevious, `fetch ${fetch.from}-${fetch.to} at event ${fetch.at}, the write before it ended at ${endOfPrevious}: ${events.join(', ')}`);
      }
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
    await waitFor(() => writer.pending() === 1 && node.fetches.length === 2, { what: 'the first write with its prefetch' });
    actor.send({ type: 'system.shutdown' });
    assert.equal(actor.getSnapshot().status, 'done');
    assert.equal(node.fetches[1]!.signal.aborted, true, 'the prefetch of 11-20 is cancelled');
    writer.release();
    actor.stop();
  });
});
