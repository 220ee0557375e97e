// The indexer's writes and its cursor (notes A.4 "Recommended design"): each batch of blocks is written in one
// transaction together with the cursor and the blocks' hashes, so a crash leaves either all of a block or none of
// it, and a restart resumes after `last_block` without duplicates and without the original's destructive delete.

import type { TransferRow } from '../../src/transfers/rows.js';
import type { SqlClient, SqlQuery } from './sql-client.js';

export interface IndexedBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
  readonly rows: readonly TransferRow[];
}

export interface Cursor {
  /** The last block whose rows are written; null before the first one. */
  readonly lastBlock: number | null;
  /** Its hash when this build wrote it (null for a cursor adopted from the original indexer). */
  readonly lastHash: string | null;
}

export interface StoredBlock {
  readonly number: number;
  readonly hash: string;
}

export async function readCursor(db: SqlQuery): Promise<Cursor> {
  const [row] = await db.query(
    `SELECT s.last_block AS last_block, b.hash AS hash
       FROM indexer.state s LEFT JOIN indexer.blocks b ON b.number = s.last_block`,
  );
  return { lastBlock: row?.last_block === null || row?.last_block === undefined ? null : Number(row.last_block), lastHash: (row?.hash as string | null) ?? null };
}

/** Hashes of the most recent written blocks, newest first. */
export async function recentBlocks(db: SqlQuery, limit: number): Promise<StoredBlock[]> {
  const rows = await db.query('SELECT number, hash FROM indexer.blocks ORDER BY number DESC LIMIT $1', [limit]);
  return rows.map((row) => ({ number: Number(row.number), hash: String(row.hash) }));
}

/**
 * Writes consecutive blocks (ascending) with their rows and moves the cursor to the last one, in one transaction.
 * Rows already present for these blocks are replaced first, so a block is never stored twice. Block hashes older
 * than `keepHashes` blocks below the new cursor are forgotten (reorgs deeper than that are not detected).
 *
 * `after`: the commit of the batch before this one, still in flight on another connection. This batch's rows and
 * hashes are written meanwhile (the costly part: index upkeep), but its cursor moves and it commits only once that
 * one has committed; when that one fails, this one rolls back with its error. So batches commit in order and the
 * cursor never passes a block whose rows are missing, while PostgreSQL writes two batches at once.
 */
export async function writeBlocks(db: SqlClient, blocks: readonly IndexedBlock[], keepHashes: number, after?: Promise<void>): Promise<void> {
  if (blocks.length === 0) return;
  const first = blocks[0]!.number;
  const last = blocks[blocks.length - 1]!.number;
  const rows = blocks.flatMap((block) => block.rows);
  await db.transaction(async (tx) => {
    await tx.query('DELETE FROM public.ethtxs WHERE block BETWEEN $1 AND $2', [first, last]);
    if (rows.length > 0) {
      // One statement per batch: unnest over column arrays (docs/notes/dependencies.md §4: ~100× faster than row inserts).
      await tx.query(
        `INSERT INTO public.ethtxs ("time", txfrom, txto, gas, gasprice, block, txhash, value, contract_to, contract_value)
         SELECT * FROM unnest($1::integer[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::integer[], $7::text[],
                              $8::numeric[], $9::text[], $10::text[])`,
        [
          rows.map((row) => row.time),
          rows.map((row) => row.txfrom),
          rows.map((row) => row.txto),
          rows.map((row) => row.gas),
          rows.map((row) => row.gasprice),
          rows.map((row) => row.block),
          rows.map((row) => row.txhash),
          rows.map((row) => row.value),
          rows.map((row) => row.contract_to),
          rows.map((row) => row.contract_value),
        ],
      );
    }
    await tx.query(
      `INSERT INTO indexer.blocks (number, hash, parent_hash)
       SELECT * FROM unnest($1::integer[], $2::text[], $3::text[])
       ON CONFLICT (number) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash`,
      [blocks.map((block) => block.number), blocks.map((block) => block.hash), blocks.map((block) => block.parentHash)],
    );
    // The hashes it forgets and the cursor row are also the batch before's: touched only once that one has committed.
    await after;
    await tx.query('DELETE FROM indexer.blocks WHERE number <= $1', [last - keepHashes]);
    await tx.query('UPDATE indexer.state SET last_block = $1', [last]);
  });
}

/**
 * Undoes everything above `ancestor` (a reorg's common ancestor; null rewinds to nothing processed): rows, block
 * hashes and the cursor, in one transaction.
 */
export async function rewindTo(db: SqlClient, ancestor: number | null): Promise<{ deletedRows: number }> {
  const floor = ancestor ?? -1;
  return db.transaction(async (tx) => {
    const [deleted] = await tx.query('WITH gone AS (DELETE FROM public.ethtxs WHERE block > $1 RETURNING 1) SELECT count(*)::int AS n FROM gone', [floor]);
    await tx.query('DELETE FROM indexer.blocks WHERE number > $1', [floor]);
    await tx.query('UPDATE indexer.state SET last_block = $1', [ancestor]);
    return { deletedRows: Number(deleted?.n ?? 0) };
  });
}
