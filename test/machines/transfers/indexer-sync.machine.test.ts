// The indexer as a machine (machines/transfers/indexer-sync.machine.ts) over a scripted chain and an in-memory
// store in place of the I/O of actors/transfers/indexer.actor.ts, on a SimulatedClock: batches up to
// head − confirmations, polling, a reorg of the tip, a parent mismatch inside the sync, failures with backoff,
// a restart from the stored cursor, shutdown.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import {
  indexerSyncMachine,
  type ChainCheckInput,
  type ChainCheckOutput,
  type CursorOutput,
  type RewindInput,
  type RewindOutput,
  type SyncBatchInput,
  type SyncBatchOutput,
} from '../../../machines/transfers/indexer-sync.machine.js';
import { waitFor } from '../../support/wait.js';

/** A chain whose block n has hash `<fork>-n`; `fork(from)` replaces blocks ≥ from. */
class Chain {
  head = 0;
  readonly forks = new Map<number, string>();
  hash(n: number): string {
    let fork = 'a';
    for (const [from, name] of this.forks) if (n >= from) fork = name;
    return `${fork}-${n}`;
  }
  fork(from: number, name: string): void {
    this.forks.set(from, name);
  }
}

/** What the database would hold: written block hashes and the cursor. */
class Store {
  readonly blocks = new Map<number, string>();
  lastBlock: number | null = null;
}

function start(options: { chain: Chain; store: Store; confirmations?: number; startBlock?: number; failChecks?: number; blindTipCheck?: boolean }) {
  const clock = new SimulatedClock();
  const { chain, store } = options;
  let failChecks = options.failChecks ?? 0;
  const batches: Array<[number, number]> = [];
  const inputs: SyncBatchInput[] = [];
  const log: string[] = [];
  const machine = indexerSyncMachine.provide({
    actors: {
      loadCursor: fromPromise<CursorOutput>(async () => ({ lastBlock: store.lastBlock, lastHash: store.lastBlock === null ? null : (store.blocks.get(store.lastBlock) ?? null) })),
      checkChain: fromPromise<ChainCheckOutput, ChainCheckInput>(async ({ input }) => {
        if (failChecks > 0) {
          failChecks--;
          throw new Error('node unavailable');
        }
        // blindTipCheck: a node behind a load balancer answered the tip check from a replica that had not seen the reorg.
        const tipOnChain = options.blindTipCheck || input.lastBlock === null || input.lastHash === null || (input.lastBlock <= chain.head && chain.hash(input.lastBlock) === input.lastHash);
        return { head: chain.head, tipOnChain };
      }),
      syncBatch: fromPromise<SyncBatchOutput, SyncBatchInput>(async ({ input }) => {
        inputs.push(input);
        if (input.expectedParent !== null && chain.hash(input.from - 1) !== input.expectedParent) return { kind: 'reorg' };
        batches.push([input.from, input.to]);
        for (let n = input.from; n <= input.to; n++) store.blocks.set(n, chain.hash(n));
        store.lastBlock = input.to;
        return { kind: 'written', lastBlock: input.to, lastHash: chain.hash(input.to), blocks: input.to - input.from + 1, rows: 0 };
      }),
      rewind: fromPromise<RewindOutput, RewindInput>(async ({ input }) => {
        let ancestor: number | null = null;
        for (const n of [...store.blocks.keys()].sort((a, b) => b - a)) {
          if (chain.hash(n) === store.blocks.get(n)) {
            ancestor = n;
            break;
          }
        }
        for (const n of [...store.blocks.keys()]) if (ancestor === null || n > ancestor) store.blocks.delete(n);
        store.lastBlock = ancestor;
        return { lastBlock: ancestor, lastHash: ancestor === null ? null : store.blocks.get(ancestor)!, depth: (input.lastBlock ?? 0) - (ancestor ?? 0), deletedRows: 0 };
      }),
    },
    actions: {
      reportProgress: () => void log.push('progress'),
      reportCaughtUp: (_, params: { lastBlock: number | null }) => void log.push(`caught up ${params.lastBlock}`),
      reportRewind: (_, params: { depth: number; lastBlock: number | null }) => void log.push(`rewind ${params.depth} to ${params.lastBlock}`),
      reportFailure: (_, params: { retryInMs: number }) => void log.push(`failure, retry in ${params.retryInMs}`),
    },
  });
  const actor = createActor(machine, {
    clock,
    input: { startBlock: options.startBlock ?? 1, confirmations: options.confirmations ?? 0, periodMs: 20_000, batchBlocks: 10 },
  }).start();
  return { actor, clock, batches, inputs, log };
}

const settled = (actor: { getSnapshot(): { value: unknown } }, state: string) => waitFor(() => actor.getSnapshot().value === state, { what: state });

describe('indexer-sync machine', () => {
  it('indexes START_BLOCK through head − confirmations in batches, then waits a period and polls again', async () => {
    const chain = new Chain();
    chain.head = 28;
    const store = new Store();
    const { actor, clock, batches, log } = start({ chain, store, confirmations: 3, startBlock: 2 });
    await settled(actor, 'idle');
    assert.deepEqual(batches, [
      [2, 11],
      [12, 21],
      [22, 25],
    ]);
    assert.equal(store.lastBlock, 25);
    assert.deepEqual(log.slice(-1), ['caught up 25']);
    chain.head = 30;
    clock.increment(19_999);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(batches.length, 3, 'nothing before the period ends');
    clock.increment(1);
    await waitFor(() => batches.length === 4);
    assert.deepEqual(batches[3], [26, 27]);
    await settled(actor, 'idle');
    actor.send({ type: 'system.shutdown' });
    assert.equal(actor.getSnapshot().status, 'done');
  });

  it('each batch names the one after it while that one is due too (the actor fetches it during the write), none after the last', async () => {
    const chain = new Chain();
    chain.head = 28;
    const store = new Store();
    const { actor, inputs } = start({ chain, store, confirmations: 3, startBlock: 2 });
    await settled(actor, 'idle');
    assert.deepEqual(
      inputs.map((input) => [input.from, input.to, input.next]),
      [
        [2, 11, { from: 12, to: 21 }],
        [12, 21, { from: 22, to: 25 }],
        [22, 25, undefined],
      ],
    );
    actor.send({ type: 'system.shutdown' });
  });

  it('a replaced tip is rewound to the common ancestor and re-indexed from the new chain', async () => {
    const chain = new Chain();
    chain.head = 10;
    const store = new Store();
    const { actor, clock, log } = start({ chain, store });
    await settled(actor, 'idle');
    chain.fork(8, 'b');
    clock.increment(20_000);
    await waitFor(() => log.includes('rewind 3 to 7'));
    await settled(actor, 'idle');
    assert.equal(store.lastBlock, 10);
    assert.deepEqual([8, 9, 10].map((n) => store.blocks.get(n)), ['b-8', 'b-9', 'b-10']);
    actor.stop();
  });

  it('a new block whose parent is not our tip starts a rewind instead of a write', async () => {
    const chain = new Chain();
    chain.head = 5;
    const store = new Store();
    const { actor, clock, batches, log } = start({ chain, store, blindTipCheck: true });
    await settled(actor, 'idle');
    chain.fork(5, 'b');
    chain.head = 7;
    clock.increment(20_000);
    await settled(actor, 'idle');
    assert.ok(log.includes('rewind 1 to 4'), log.join(', '));
    assert.deepEqual(batches.at(-1), [5, 7]);
    assert.deepEqual([5, 6, 7].map((n) => store.blocks.get(n)), ['b-5', 'b-6', 'b-7']);
    actor.stop();
  });

  it('node failures back off 1 s, 2 s, … and the sync resumes from the stored cursor', async () => {
    const chain = new Chain();
    chain.head = 4;
    const store = new Store();
    store.lastBlock = 2;
    store.blocks.set(2, 'a-2');
    const { actor, clock, batches, log } = start({ chain, store, failChecks: 2 });
    await settled(actor, 'backingOff');
    assert.deepEqual(log, ['failure, retry in 1000']);
    assert.equal(actor.getSnapshot().context.lastError, 'Error: node unavailable');
    clock.increment(1_000);
    await waitFor(() => log.length === 2);
    assert.equal(log[1], 'failure, retry in 2000');
    clock.increment(2_000);
    await settled(actor, 'idle');
    assert.deepEqual(batches, [[3, 4]]);
    assert.equal(actor.getSnapshot().context.failures, 0);
    actor.stop();
  });
});
