// SqlClient over PGlite, the embedded default (`npm start` needs no server). PGlite is one connection that runs one
// statement at a time, so the indexer and the gateway share it; the gateway's role switch lives inside its own
// transactions (SET LOCAL), never on the shared session.

import { PGlite } from '@electric-sql/pglite';
import { citext } from '@electric-sql/pglite/contrib/citext';
import type { SqlClient } from './sql-client.js';

/** Opens (creating on first use) the database in `dataDir`, or in memory when it is undefined. */
export async function openPgliteClient(dataDir: string | undefined): Promise<SqlClient> {
  // The citext bundle must be passed on every open, not only the first (docs/notes/dependencies.md §4).
  const db = dataDir === undefined ? await PGlite.create({ extensions: { citext } }) : await PGlite.create(dataDir, { extensions: { citext } });
  const query = async (text: string, values?: readonly unknown[]) => (await db.query<Record<string, unknown>>(text, values as unknown[] | undefined)).rows;
  const exec = async (script: string) => void (await db.exec(script));
  return {
    backend: 'pglite',
    query,
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: async (text, values) => (await tx.query<Record<string, unknown>>(text, values as unknown[] | undefined)).rows,
          exec: async (script) => void (await tx.exec(script)),
        }),
      ),
    // PGlite is one session already: `work` runs on it, between other callers' statements.
    session: (work) => work({ query, exec }),
    exec,
    close: () => db.close(),
  };
}
