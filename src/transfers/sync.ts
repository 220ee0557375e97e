// The indexer's arithmetic (spec A; notes F.10): which blocks are due, in which batches, and how long to wait
// after a failure. Pure, so the machine's guards and the tests share it.

/** The first block not yet indexed: one after the cursor, else START_BLOCK (inclusive, unlike the original's +1). */
export function nextBlock(lastBlock: number | null, startBlock: number): number {
  return lastBlock === null ? startBlock : Math.max(lastBlock + 1, startBlock);
}

/** The last block that may be indexed now: head − CONFIRMATIONS_BLOCK, inclusive; -1 when none is. */
export function syncTarget(head: number, confirmations: number): number {
  return head - confirmations;
}

/** The next batch [from, to], or undefined when the cursor has reached the target. */
export function nextBatch(lastBlock: number | null, startBlock: number, target: number, batchBlocks: number): { from: number; to: number } | undefined {
  const from = nextBlock(lastBlock, startBlock);
  if (from > target) return undefined;
  return { from, to: Math.min(target, from + batchBlocks - 1) };
}

export const RETRY_INITIAL_MS = 1_000;
export const RETRY_MAX_MS = 60_000;

/** Exponential backoff after consecutive node or database failures: 1 s, 2 s, 4 s … capped at 60 s. */
export function retryDelayMs(failures: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.max(0, failures - 1));
}
