// SqlClient over a `pg` pool (PostgreSQL 15+ in production and CI).

import pg from 'pg';
import type { SqlClient, SqlQuery } from './sql-client.js';

export interface PgClientOptions {
  /** pg connection settings (connectionString or discrete fields; unset fields fall back to libpq's PG* variables). */
  readonly connection: pg.PoolConfig;
  readonly maxConnections: number;
  /** Statements run once on every new connection before its first query (e.g. SET ROLE for the gateway). */
  readonly sessionSetup?: string;
  /** Named in pg_stat_activity so an operator can tell the indexer from the gateway. */
  readonly applicationName: string;
}

export function openPgClient(options: PgClientOptions): SqlClient {
  const pool = new pg.Pool({ ...options.connection, max: options.maxConnections, application_name: options.applicationName, idleTimeoutMillis: 30_000 });
  // An idle connection that breaks (server restart) must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  const prepared = new WeakSet<pg.PoolClient>();
  const acquire = async (): Promise<pg.PoolClient> => {
    const client = await pool.connect();
    if (options.sessionSetup && !prepared.has(client)) {
      try {
        await client.query(options.sessionSetup);
      } catch (error) {
        // A connection whose setup failed (a missing role) must never serve a query: drop it.
        client.release(true);
        throw error;
      }
      prepared.add(client);
    }
    return client;
  };
  const run = async (client: pg.PoolClient | pg.Pool, text: string, values?: readonly unknown[]) =>
    (await client.query({ text, values: values as unknown[] | undefined })).rows as Record<string, unknown>[];
  return {
    backend: 'postgresql',
    async query(text, values) {
      if (!options.sessionSetup) return run(pool, text, values);
      const client = await acquire();
      try {
        return await run(client, text, values);
      } finally {
        client.release();
      }
    },
    async transaction<T>(work: (tx: SqlQuery) => Promise<T>): Promise<T> {
      const client = await acquire();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work({ query: (text, values) => run(client, text, values), exec: async (script) => void (await client.query(script)) });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => (broken = true));
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async session<T>(work: (session: SqlQuery) => Promise<T>): Promise<T> {
      const client = await acquire();
      try {
        return await work({ query: (text, values) => run(client, text, values), exec: async (script) => void (await client.query(script)) });
      } finally {
        // Closed rather than returned to the pool: session locks and settings end with it.
        client.release(true);
      }
    },
    async exec(script) {
      const client = await acquire();
      try {
        await client.query(script);
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
