// transfers.db: opens the database the configuration names and hands it to the indexer and the gateway through a
// holder (they start after it, under rest_for_one, so a reopened database restarts them too).
//
// - Embedded (no DB_NAME / PGRST_DB_URI): one PGlite in DATA_DIR shared by both parts; this process owns the schema,
//   so it migrates and creates the anonymous role; gateway reads switch role inside their own transactions.
// - PostgreSQL with the indexer here: the indexer's pool (DB_NAME, the writer login) migrates and sets up the
//   anonymous role; the gateway's pool (PGRST_DB_URI) sets that role on each connection, like PostgREST's
//   authenticator.
// - PostgreSQL, a gateway alone: before any read, a short-lived connection of the gateway's login (no SET ROLE) reads
//   the schema version. At this build's version, unreadable by that login (its owner keeps it), or the original
//   indexer's unversioned tables (that indexer may still be writing): left alone, no writes. Missing (an empty
//   database) or older: migrated with that login when it may (in PostgREST deployments it often owns the schema);
//   an older schema it may not migrate is served as it is (a warning names what to run); an empty one gets one
//   clear error line naming what to run (`adm-infra transfers --migrate` by an owner, or the indexer once), the
//   schema cache answers 503 PGRST002 and the check is retried with backoff until it passes, without a restart.
//   Newer than the build: the actor crashes with SchemaTooNewError, as the indexer's open does.
// - Concurrent index builds (PostgreSQL) run in the background after the transactional migrations: the listener
//   serves and the indexer writes meanwhile; closing cancels a build, the next start resumes it.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { databaseMachine, type DatabaseOpened } from '../../machines/transfers/database.machine.js';
import { fromPromise } from 'xstate';
import type { Clock } from '../../src/clock.js';
import type { Logger } from '../../src/logger.js';
import { INDEXER_VERSION, type TransfersConfig, type PgConnection } from '../../src/transfers/config.js';
import { anonymousReadInTransaction, anonymousSessionSetup, GATEWAY_NAMED_STATEMENTS, type AnonymousRead } from '../../storage/transfers/gateway-store.js';
import { buildPendingIndexes, SCHEMA_VERSION, SchemaTooNewError } from '../../storage/transfers/schema.js';
import { readSchemaStatus } from '../../storage/transfers/schema-status.js';
import type { SqlClient } from '../../storage/transfers/sql-client.js';
import { openPgClient, type PgSqlClient } from '../../storage/transfers/sql-client.pg.js';
import { openPgliteClient } from '../../storage/transfers/sql-client.pglite.js';
import { MIGRATE_ADVICE, MigrationInProgressError, schemaClient, schemaFailureKind, setUpSchema, type SchemaFailureKind, type SchemaSetupReport } from '../../storage/transfers/schema-setup.js';
import { ResourceHolder } from '../resource-holder.js';

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

/** A gateway alone whose database schema is not there yet (not checked, not migrated, or the check failed). */
export class SchemaNotReadyError extends Error {
  override readonly name = 'SchemaNotReadyError';
  constructor(readonly reason: string) {
    super(`the transfers database schema is not ready for the gateway: ${reason}`);
  }
}

export class DatabaseHolder extends ResourceHolder<OpenDatabase> {
  constructor() {
    super(() => new DatabaseNotOpenError());
  }
}

/** The indexer's pool: it writes one batch at a time, plus the cursor reads. */
const WRITER_CONNECTIONS = 2;

export interface DatabaseActorOptions {
  readonly config: TransfersConfig;
  readonly holder: DatabaseHolder;
  readonly logger: Logger;
  /** The runtime's clock (docs/DESIGN.md rule 2): the background index builds' timing and waits run on it. */
  readonly clock: Clock;
  /** For tests: open the embedded database in memory instead of DATA_DIR. */
  readonly inMemory?: boolean;
  /** A gateway alone found (or made) its schema after waiting: the tree asks the schema cache to reload at once. */
  readonly onSchemaReady?: () => void;
}

export function databaseLogic(options: DatabaseActorOptions) {
  const { config, holder, logger, clock } = options;
  let clients: SqlClient[] = [];
  /** A gateway alone: its connections, handed to the holder once preparingSchema found (or made) the schema. */
  let pending: OpenDatabase | undefined;
  /** What the last failed preparation was, for reportSchemaFailure (which gets the machine's text of it). */
  let lastFailure: { kind: SchemaFailureKind; login: string | undefined } | undefined;
  /** The kind of failure last explained at length: the long line is written once per new reason. */
  let explained: SchemaFailureKind | undefined;
  const track = <T extends SqlClient>(client: T): T => (clients.push(client), client);
  const release = async (client: SqlClient) => {
    if (!clients.includes(client)) return; // closeAll already closed it (shutdown)
    clients = clients.filter((c) => c !== client);
    await client.close();
  };
  const pgClient = (connection: PgConnection, max: number, applicationName: string, sessionSetup?: string, namedStatementsPerConnection?: number) =>
    track(openPgClient({ connection, maxConnections: max, applicationName, sessionSetup, namedStatementsPerConnection }));
  /**
   * PostgreSQL's concurrent index builds (schema.ts) run in the background once the transactional migrations are
   * done, so the service serves (and the indexer writes) while an upgrade builds indexes on a large table; closing
   * the database cancels a build (its INVALID index is rebuilt at the next start).
   */
  let indexBuild: { readonly controller: AbortController; readonly done: Promise<void> } | undefined;
  const buildIndexesInBackground = (connection: PgConnection) => {
    if (indexBuild) return;
    const controller = new AbortController();
    const client = track(schemaClient(connection, 'adm-infra transfers index builds'));
    const started = clock.now();
    logger.info('building the new indexes in the background (CREATE INDEX CONCURRENTLY): reads and writes go on meanwhile');
    const done = buildPendingIndexes(client, { signal: controller.signal, clock, onProgress: (progress) => logger.info(progress, 'building index') })
      .then(
        (built) => {
          if (built.applied.length > 0) logger.info({ applied: built.applied, indexes: built.builtIndexes.map((index) => index.name), ms: clock.now() - started }, 'database schema migrated: indexes built');
        },
        (error: unknown) => {
          if (controller.signal.aborted) logger.info('index build interrupted by the shutdown: it starts again at the next start');
          else logger.warn({ reason: error instanceof Error ? error.message : String(error) }, 'index build failed: it is tried again at the next start');
        },
      )
      .finally(() => release(client).catch(() => undefined));
    indexBuild = { controller, done };
  };
  const stopIndexBuild = async () => {
    const build = indexBuild;
    indexBuild = undefined;
    if (!build) return;
    build.controller.abort();
    await build.done;
  };
  const logSetup = ({ migration, role }: SchemaSetupReport, login?: string) => {
    if (migration.applied.length > 0) logger.info({ from: migration.from, to: migration.to, applied: migration.applied, ...(login ? { login } : {}) }, 'database schema migrated');
    if (role.created) logger.info({ role: config.gateway.anonRole }, 'anonymous read-only role created');
    for (const problem of role.problems) logger.warn({ role: config.gateway.anonRole }, `anonymous role not fully set up: ${problem}`);
  };
  /** The transactional migrations and the role now; the concurrent index builds in the background (connection). */
  const setUpSchemaThenIndexes = async (db: SqlClient, connection: PgConnection, login?: string) => {
    const setup = await setUpSchema(db, config.gateway.anonRole, INDEXER_VERSION, { indexBuilds: 'defer' });
    logSetup(setup, login);
    if (setup.migration.pendingIndexBuilds) buildIndexesInBackground(connection);
  };
  /** A gateway login that cannot take the anonymous role answers every read with an error: say so now. */
  const checkAnonymousRead = (reader: SqlClient) =>
    reader.query('SELECT 1').then(
      () => undefined,
      (error: Error) => logger.warn({ role: config.gateway.anonRole, reason: error.message }, 'the gateway cannot read as the anonymous role yet'),
    );
  // Reads whose plan may be kept run as named prepared statements (a few shapes, many parameters); the others and
  // catalog reads stay unnamed, so PostgreSQL plans them for their values.
  const readerOf = (reader: PgSqlClient | undefined, writer: SqlClient | undefined): OpenDatabase => ({
    writer,
    catalog: reader,
    read: reader && ((text, values, options) => (options?.reusePlan ? reader.queryPrepared(text, values, options.cancellation, options.genericPlan) : reader.query(text, values, options?.cancellation))),
  });

  return databaseMachine.provide({
    actors: {
      openDatabase: fromPromise<DatabaseOpened>(async () => {
        const { database, indexer, gateway } = config;
        try {
          if (database.kind === 'pglite') {
            const dataDir = options.inMemory ? undefined : resolve(database.dataDir);
            if (dataDir) mkdirSync(dirname(dataDir), { recursive: true });
            const db = track(await openPgliteClient(dataDir));
            logSetup(await setUpSchema(db, gateway.anonRole, INDEXER_VERSION));
            holder.set({ writer: indexer.enabled ? db : undefined, catalog: gateway.enabled ? db : undefined, read: gateway.enabled ? anonymousReadInTransaction(db, gateway.anonRole) : undefined });
            logger.info({ backend: 'pglite', dataDir: dataDir ?? '(memory)' }, 'transfers database open');
            return { schema: 'ready' };
          }
          // The indexer's login owns the schema: it migrates and sets up the anonymous role before any gateway
          // connection exists (their SET ROLE needs the role).
          const writer = indexer.enabled ? pgClient(database.indexer, WRITER_CONNECTIONS, 'adm-infra transfers indexer') : undefined;
          if (writer) await setUpSchemaThenIndexes(writer, database.indexer);
          // pg pools connect lazily: nothing below reaches the server before the schema is known to be there.
          const reader = gateway.enabled ? pgClient(database.gateway, gateway.poolSize, 'adm-infra transfers gateway', anonymousSessionSetup(gateway.anonRole), GATEWAY_NAMED_STATEMENTS) : undefined;
          if (reader && !writer) {
            // A gateway alone: preparingSchema checks the schema (and migrates it when this login can) before reads.
            pending = readerOf(reader, undefined);
            holder.unavailable(new SchemaNotReadyError('not checked yet'));
            logger.info({ backend: 'postgresql' }, 'transfers database open; checking the schema before serving');
            return { schema: 'unchecked' };
          }
          if (reader) await checkAnonymousRead(reader);
          holder.set(readerOf(reader, writer));
          logger.info({ backend: 'postgresql' }, 'transfers database open');
          return { schema: 'ready' };
        } catch (error) {
          await stopIndexBuild();
          await closeAll();
          throw error;
        }
      }),
      prepareSchema: fromPromise<void>(async ({ signal }) => {
        const { database } = config;
        if (database.kind !== 'postgres' || !pending) throw new Error('transfers database: no gateway connection to prepare');
        // Its own short-lived connections, without the gateway's session setup: as the login, not the anonymous role.
        const client = track(schemaClient(database.gateway, 'adm-infra transfers gateway (schema check)'));
        let login: string | undefined;
        try {
          const status = await readSchemaStatus(client);
          login = status.login;
          if (status.state === 'versioned' && status.version > SCHEMA_VERSION) throw new SchemaTooNewError(status.version);
          if (status.state === 'unreadable') {
            // A PostgREST authenticator has no rights on schema indexer: its owner keeps it migrated, as before.
            logger.info({ login }, 'the schema version is not readable by the gateway\'s login (indexer.migrations): the schema is left to its owner');
          } else if (status.state === 'unversioned') {
            // The original indexer's tables, never adopted: that indexer may still be writing them (this gateway
            // replacing PostgREST alone), and the first migration deletes its possibly partial last block. Served as
            // they are, as PostgREST did; this build's indexer or `--migrate` adopts them.
            logger.info({ login }, "the database has the original indexer's tables without indexer.migrations: served as they are, not migrated by the gateway (the indexer adopts them at its first start, or run `adm-infra transfers --migrate`)");
          } else if (status.state === 'missing' || status.version < SCHEMA_VERSION) {
            // Nobody migrated this database (or an older build did): the gateway's login often owns the schema in
            // PostgREST deployments, so it tries; without the rights this fails and is retried (reportSchemaFailure).
            const from = status.state === 'missing' ? 0 : status.version;
            try {
              if (status.migrating) throw new MigrationInProgressError();
              if (lastFailure === undefined) logger.info({ login, from, to: SCHEMA_VERSION }, 'the database schema is not migrated: migrating it with the gateway\'s login');
              await setUpSchemaThenIndexes(client, database.gateway, login);
            } catch (error) {
              // An older schema already has every public relation (they exist since version 1; later versions add
              // indexes and internal state): a gateway upgraded before its indexer keeps serving it rather than
              // answering 503 until someone with rights migrates.
              const kind = schemaFailureKind(error);
              if (from === 0 || (kind !== 'rights' && kind !== 'busy')) throw error;
              logger.warn(
                { login, from, to: SCHEMA_VERSION, reason: error instanceof Error ? error.message : String(error) },
                `the database schema is older than this build and ${kind === 'busy' ? 'another process is migrating it' : "the gateway's login may not migrate it"}: serving it as it is (same public relations); ${MIGRATE_ADVICE} to apply the rest`,
              );
            }
          }
          // At the current version: left alone, no writes (the gateway only reads).
        } catch (error) {
          lastFailure = { kind: schemaFailureKind(error), login };
          if (!signal.aborted) holder.unavailable(new SchemaNotReadyError(error instanceof Error ? error.message : String(error)));
          throw error;
        } finally {
          await release(client).catch(() => undefined);
        }
        if (signal.aborted) return;
        await checkAnonymousRead(pending.catalog!);
        if (signal.aborted) return;
        holder.set(pending);
        if (explained !== undefined) logger.info({ login }, 'the database schema is ready: the gateway serves now');
        explained = undefined;
        lastFailure = undefined;
      }),
      closeDatabase: fromPromise<void>(async () => {
        holder.set(undefined);
        pending = undefined;
        await stopIndexBuild();
        await closeAll();
      }),
    },
    actions: {
      schemaReady: () => options.onSchemaReady?.(),
      reportSchemaFailure: (_, { error, failures, retryInMs }) => {
        const { kind, login } = lastFailure ?? { kind: 'other' as const, login: undefined };
        const fields = { login, attempt: failures, retryInMs, reason: error };
        if (kind === explained) {
          logger.warn(fields, 'the database schema is still not ready; answering 503 PGRST002, retrying');
          return;
        }
        explained = kind;
        const who = login ? `the gateway's login (${login})` : "the gateway's login";
        if (kind === 'rights') {
          logger.error(fields, `the database schema is not migrated and ${who} may not create it: ${MIGRATE_ADVICE}; the gateway answers 503 PGRST002 until then and retries`);
        } else if (kind === 'busy') {
          logger.warn(fields, 'another process is migrating the database schema; the gateway answers 503 PGRST002 until it is done');
        } else if (kind === 'connection') {
          logger.warn(fields, 'cannot reach the database to check its schema; the gateway answers 503 PGRST002 and retries');
        } else {
          logger.error(fields, `the database schema could not be checked or migrated with ${who}: ${MIGRATE_ADVICE}; the gateway answers 503 PGRST002 until then and retries`);
        }
      },
    },
  });

  async function closeAll(): Promise<void> {
    const closing = clients;
    clients = [];
    await Promise.allSettled(closing.map((client) => client.close()));
  }
}
