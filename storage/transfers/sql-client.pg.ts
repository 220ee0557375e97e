// SqlClient over a `pg` pool (PostgreSQL 15+ in production and CI).

import { createHash } from 'node:crypto';
import pg from 'pg';
import { BoundedMemo } from '../../src/bounded-memo.js';
import type { Cancellation } from '../../src/cancellation.js';
import type { SqlClient, SqlQuery, SqlRow } from './sql-client.js';

export interface PgClientOptions {
  /** pg connection settings (connectionString or discrete fields; unset fields fall back to libpq's PG* variables). */
  readonly connection: pg.PoolConfig;
  readonly maxConnections: number;
  /** Statements run once on every new connection before its first query (e.g. SET ROLE for the gateway). */
  readonly sessionSetup?: string;
  /** Named in pg_stat_activity so an operator can tell the indexer from the gateway. */
  readonly applicationName: string;
  /**
   * `queryPrepared` runs a statement as a named prepared statement, so PostgreSQL parses and analyses a repeated
   * statement once per connection and may keep its plan (the gateway's reads: a few statement shapes, each run with
   * new parameters). At most this many distinct statements per connection (anyone can send a new query shape: the
   * server's and pg's memory per connection stay bounded); past that, statements run unnamed. Unset or 0: never named.
   */
  readonly namedStatementsPerConnection?: number;
}

/**
 * The name of a named prepared statement: a hash of its text (a name may hold 63 bytes), so the same text gets the
 * same name on every connection and different texts never share one (pg refuses a name reused for another text).
 */
export function statementName(text: string): string {
  return statementNames.get(text);
}

/** Names of recent statement texts: the same few texts come again and again, hashing each was ~1% of a read's CPU. */
const statementNames = new BoundedMemo((text) => `adm_${createHash('sha256').update(text).digest('base64url').slice(0, 40)}`, 1024);

/**
 * pg keeps, per connection, the names of the statements the server has parsed (`connection.parsedStatements`, set on
 * ParseComplete): after an error it tells whether the server kept the statement (it failed at bind or execution) or
 * not (the Parse itself failed). undefined when this pg version keeps no such record.
 */
function serverHasStatement(client: pg.PoolClient, name: string): boolean | undefined {
  const parsed = (client as unknown as { connection?: { parsedStatements?: Record<string, unknown> } }).connection?.parsedStatements;
  return parsed === undefined || typeof parsed !== 'object' ? undefined : parsed[name] !== undefined;
}

export interface PgSqlClient extends SqlClient {
  /**
   * `cancellation`: when it fires while the statement runs, PostgreSQL is asked to cancel it (a CancelRequest on a
   * connection of its own) and the call rejects with its reason; when it has already fired nothing is sent.
   */
  query(text: string, values?: readonly unknown[], cancellation?: Cancellation): Promise<SqlRow[]>;
  /**
   * `query`, as a named prepared statement while the connection has fewer than namedStatementsPerConnection.
   * `genericPlan`: that named statement runs with its generic plan (`plan_cache_mode = force_generic_plan` on its
   * connection meanwhile; every other statement runs under the session's own `auto`).
   */
  queryPrepared(text: string, values?: readonly unknown[], cancellation?: Cancellation, genericPlan?: boolean): Promise<SqlRow[]>;
}

export function openPgClient(options: PgClientOptions): PgSqlClient {
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
  /**
   * Connections whose plan_cache_mode is force_generic_plan now (queryPrepared's genericPlan). It is a session
   * setting, and PostgreSQL applies it to unnamed statements too, so a connection is switched back to `auto` (the
   * gateway session's own setting, anonymousSessionSetup) before any statement that did not ask for it: one SET, a
   * round trip, only when the mode changes; a pool serving the same kinds of reads rarely switches.
   */
  const forcingGeneric = new WeakSet<pg.PoolClient>();
  const planMode = async (client: pg.PoolClient, generic: boolean) => {
    if (forcingGeneric.has(client) === generic) return;
    await client.query(`SET plan_cache_mode = ${generic ? 'force_generic_plan' : 'auto'}`);
    if (generic) forcingGeneric.add(client);
    else forcingGeneric.delete(client);
  };
  const run = async (client: pg.PoolClient | pg.Pool, text: string, values?: readonly unknown[]) => {
    if (client !== pool) await planMode(client as pg.PoolClient, false);
    return (await client.query({ text, values: values as unknown[] | undefined })).rows as Record<string, unknown>[];
  };
  const maxNamed = options.namedStatementsPerConnection ?? 0;
  /**
   * Per connection, the names of the statements it has prepared (or is preparing): a name counts from the moment it
   * is sent, so concurrent first uses cannot overshoot the cap, and is given back when the server did not keep the
   * statement. The server keeps a statement that failed after its Parse (a bind or execution error): it stays
   * counted, so strangers' failing statements cannot grow a connection's statements past the cap either.
   */
  const named = new WeakMap<pg.PoolClient, Set<string>>();
  const runNamed = async (client: pg.PoolClient, text: string, values: readonly unknown[] | undefined, genericPlan: boolean) => {
    let names = named.get(client);
    if (names === undefined) named.set(client, (names = new Set()));
    const name = statementName(text);
    if (!names.has(name)) {
      if (names.size >= maxNamed) return run(client, text, values);
      names.add(name);
    }
    try {
      await planMode(client, genericPlan);
      return (await client.query({ name, text, values: values as unknown[] | undefined })).rows as Record<string, unknown>[];
    } catch (error) {
      if (serverHasStatement(client, name) === false) names.delete(name);
      throw error;
    }
  };
  /**
   * Runs `work` on a connection of the pool; a cancellation that fires meanwhile cancels the running statement on the
   * server. That connection is then closed rather than reused: a CancelRequest that arrives after its statement ended
   * would cancel whatever the connection runs next.
   */
  const onConnection = async (work: (client: pg.PoolClient) => Promise<SqlRow[]>, cancellation: Cancellation | undefined) => {
    if (cancellation?.aborted) throw cancellation.reason;
    const client = await acquire();
    let cancelled = false;
    const cancel = () => {
      cancelled = true;
      const canceller = new pg.Client(options.connection);
      // The server closes the cancel connection itself; a failure to reach it leaves the statement_timeout.
      (canceller as unknown as { connection: { on(event: 'error', listener: () => void): void } }).connection.on('error', () => undefined);
      (canceller as unknown as { cancel(client: pg.PoolClient, query: unknown): void }).cancel(client, (client as unknown as { activeQuery: unknown }).activeQuery);
    };
    cancellation?.addEventListener('abort', cancel, { once: true });
    try {
      const rows = await work(client);
      if (cancelled) throw cancellation!.reason;
      return rows;
    } catch (error) {
      throw cancelled ? cancellation!.reason : error;
    } finally {
      cancellation?.removeEventListener('abort', cancel);
      client.release(cancelled);
    }
  };
  return {
    backend: 'postgresql',
    async query(text, values, cancellation) {
      // Through the pool directly only when no connection can be in a forced plan mode (no named statements).
      if (!options.sessionSetup && !cancellation && maxNamed <= 0) return run(pool, text, values);
      return onConnection((client) => run(client, text, values), cancellation);
    },
    async queryPrepared(text, values, cancellation, genericPlan = false) {
      if (maxNamed <= 0) return this.query(text, values, cancellation);
      return onConnection((client) => runNamed(client, text, values, genericPlan), cancellation);
    },
    async transaction<T>(work: (tx: SqlQuery) => Promise<T>): Promise<T> {
      const client = await acquire();
      let broken = false;
      try {
        await planMode(client, false);
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
        await planMode(client, false);
        return await work({ query: (text, values) => run(client, text, values), exec: async (script) => void (await client.query(script)) });
      } finally {
        // Closed rather than returned to the pool: session locks and settings end with it.
        client.release(true);
      }
    },
    async exec(script) {
      const client = await acquire();
      try {
        await planMode(client, false);
        await client.query(script);
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}
