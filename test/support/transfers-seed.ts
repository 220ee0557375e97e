// A transfers database for gateway tests: migrated, the anonymous role `web_anon` set up, the given rows written
// block by block as the indexer writes them (with their block hashes), then any extra SQL the test needs.

import type { TransferRow } from '../../src/transfers/rows.js';
import { writeBlocks } from '../../storage/transfers/indexer-store.js';
import { ensureAnonRole, migrate } from '../../storage/transfers/schema.js';
import { openPgClient } from '../../storage/transfers/sql-client.pg.js';

export async function seedTransfers(url: string, rows: readonly TransferRow[], options: { readonly emptyBlocks?: readonly number[]; readonly extraSql?: string } = {}): Promise<void> {
  const db = openPgClient({ connection: { connectionString: url }, maxConnections: 1, applicationName: 'seed' });
  try {
    await migrate(db, '3.0.0');
    await ensureAnonRole(db, 'web_anon');
    const byBlock = new Map<number, TransferRow[]>();
    for (const row of rows) byBlock.set(row.block, [...(byBlock.get(row.block) ?? []), row]);
    for (const number of options.emptyBlocks ?? []) byBlock.set(number, byBlock.get(number) ?? []);
    const blocks = [...byBlock.entries()].sort(([a], [b]) => a - b);
    await writeBlocks(db, blocks.map(([number, list]) => ({ number, hash: `0x${number}`, parentHash: `0x${number - 1}`, rows: list })), 256);
    if (options.extraSql) await db.exec(options.extraSql);
  } finally {
    await db.close();
  }
}
