// transfers.db: opens the database the configuration names and hands it to the indexer and the gateway through a
// holder (they start after it, under rest_for_one, so a reopened database restarts them too).
//
// - Embedded (no DB_NAME / PGRST_DB_URI): one PGlite in DATA_DIR shared by both parts; this process owns the schema,
//   so it migrates and creates the anonymous role; gateway reads switch role inside their own transactions.
// - PostgreSQL: the indexer's pool (DB_NAME, the writer login) migrates when the indexer runs here; the gateway's
//   pool (PGRST_DB_URI) sets the anonymous role on each connection, like PostgREST's authenticator. A gateway
//   running alone never writes, so it never migrates.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { databaseMachine } from '../../machines/transfers/database.machine.js';
import { fromPromise } from 'xstate';
import type { Logger } from '../../src/logger.js';
import { INDEXER_VERSION, type TransfersConfig, type PgConnection } from '../../src/transfers/config.js';
import { anonymousReadInTransaction, anonymousSessionSetup, type AnonymousRead } from '../../storage/transfers/gateway-store.js';
import { ensureAnonRole, migrate } from '../../storage/transfers/schema.js';
import type { SqlClient } from '../../storage/transfers/sql-client.js';
import { openPgClient } from '../../storage/transfers/sql-client.pg.js';
import { openPgliteClient } from '../../storage/transfers/sql-client.pglite.js';

export interface OpenDatabase {
  /** The indexer's connection (undefined when the indexer does not run in this process). */
  readonly writer: SqlClient | undefined;
  /** The gateway's connection for catalog reads (undefined when the gateway does not run here). */
  readonly catalog: SqlClient | undefined;
  /** Reads as the anonymous role (undefined when the gateway does not run here). */
  readonly read: AnonymousRead | undefined;
}

/** The database is not open (starting, restarting or stopping). */
export class DatabaseNotOpenError extends Error {
  override readonly name = 'DatabaseNotOpenError';
  constructor() {
    super('the transfers database is not open');
  }
}

export class DatabaseHolder {
  #open: OpenDatabase | undefined;

  set(open: OpenDatabase | undefined): void {
    this.#open = open;
  }

  get(): OpenDatabase {
    if (!this.#open) throw new DatabaseNotOpenError();
    return this.#open;
  }
}

/** The indexer's pool: it writes one batch at a time, plus the cursor reads. */
const WRITER_CONNECTIONS = 2;

export interface DatabaseActorOptions {
  readonly config: TransfersConfig;
  readonly holder: DatabaseHolder;
  readonly logger: Logger;
  /** For tests: open the embedded database in memory instead of DATA_DIR. */
  readonly inMemory?: boolean;
}

export function databaseLogic(options: DatabaseActorOptions) {
  const { config, holder, logger } = options;
  let clients: SqlClient[] = [];
  const pgClient = (connection: PgConnection, max: number, applicationName: string, sessionSetup?: string) => {
    const client = openPgClient({ connection, maxConnections: max, applicationName, sessionSetup });
    clients.push(client);
    return client;
  };
  const prepareSchema = async (db: SqlClient) => {
    const report = await migrate(db, INDEXER_VERSION);
    if (report.applied.length > 0) logger.info({ from: report.from, to: report.to, applied: report.applied }, 'database schema migrated');
    const role = await ensureAnonRole(db, config.gateway.anonRole);
    if (role.created) logger.info({ role: config.gateway.anonRole }, 'anonymous read-only role created');
    for (const problem of role.problems) logger.warn({ role: config.gateway.anonRole }, `anonymous role not fully set up: ${problem}`);
  };
  return databaseMachine.provide({
    actors: {
      openDatabase: fromPromise<void>(async () => {
        const { database, indexer, gateway } = config;
        try {
          if (database.kind === 'pglite') {
            const dataDir = options.inMemory ? undefined : resolve(database.dataDir);
            if (dataDir) mkdirSync(dirname(dataDir), { recursive: true });
            const db = await openPgliteClient(dataDir);
            clients.push(db);
            await prepareSchema(db);
            holder.set({ writer: indexer.enabled ? db : undefined, catalog: gateway.enabled ? db : undefined, read: gateway.enabled ? anonymousReadInTransaction(db, gateway.anonRole) : undefined });
            logger.info({ backend: 'pglite', dataDir: dataDir ?? '(memory)' }, 'transfers database open');
            return;
          }
          const writer = indexer.enabled ? pgClient(database.indexer, WRITER_CONNECTIONS, 'adm-infra transfers indexer') : undefined;
          if (writer) await prepareSchema(writer);
          const reader = gateway.enabled ? pgClient(database.gateway, gateway.poolSize, 'adm-infra transfers gateway', anonymousSessionSetup(gateway.anonRole)) : undefined;
          if (reader) {
            // A gateway login that cannot take the anonymous role answers every read with an error: say so now.
            await reader.query('SELECT 1').catch((error: Error) => logger.warn({ role: gateway.anonRole, reason: error.message }, 'the gateway cannot read as the anonymous role yet'));
          }
          holder.set({ writer, catalog: reader, read: reader && ((text, values) => reader.query(text, values)) });
          logger.info({ backend: 'postgresql' }, 'transfers database open');
        } catch (error) {
          await closeAll();
          throw error;
        }
      }),
      closeDatabase: fromPromise<void>(async () => {
        holder.set(undefined);
        await closeAll();
      }),
    },
  });

  async function closeAll(): Promise<void> {
    const closing = clients;
    clients = [];
    await Promise.allSettled(closing.map((client) => client.close()));
  }
}
