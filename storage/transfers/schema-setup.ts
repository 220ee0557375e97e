// Setting up the transfers schema (storage/transfers/schema.ts: the versioned migrations, then the anonymous role) as
// the process that owns it does: the database actor when the indexer or the embedded database runs here, a gateway
// alone whose login can (actors/transfers/database.actor.ts), and `adm-infra transfers --migrate`
// (src/transfers-migrate.ts). Also what their messages share: which kind of failure it was, and what an operator
// runs about it.

import type { PgConnection } from '../../src/transfers/config.js';
import { ensureAnonRole, migrate, type AnonRoleReport, type MigrateOptions, type MigrationReport } from './schema.js';
import type { SqlClient } from './sql-client.js';
import { openPgClient } from './sql-client.pg.js';

export interface SchemaSetupReport {
  readonly migration: MigrationReport;
  readonly role: AnonRoleReport;
}

/** The migrations, then the anonymous role's creation and grants (best effort: problems are reported, not thrown). */
export async function setUpSchema(db: SqlClient, anonRole: string, indexerVersion: string, options: MigrateOptions = {}): Promise<SchemaSetupReport> {
  const migration = await migrate(db, indexerVersion, options);
  const role = await ensureAnonRole(db, anonRole);
  return { migration, role };
}

/** What an operator runs when the login at hand cannot create the schema. */
export const MIGRATE_ADVICE = 'run `adm-infra transfers --migrate` with a login that can create tables (DB_NAME set to the database owner), or start the indexer once';

/** A failed connection attempt fails within this, so a blackholed server cannot stall a check or the command. */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * A short-lived pool of the given login without any session setup (no SET ROLE): schema checks and migrations must
 * run as the login itself, before the gateway's per-connection SET ROLE to the anonymous role applies (that role may
 * not exist before the migration creates it). Two connections, as the indexer's writer pool migrates with.
 */
export function schemaClient(connection: PgConnection, applicationName: string): SqlClient {
  return openPgClient({ connection: { ...connection, connectionTimeoutMillis: CONNECT_TIMEOUT_MS }, maxConnections: 2, applicationName });
}

/**
 * A gateway found another session migrating (readSchemaStatus's `migrating`): it does not queue behind that
 * session's lock (a long index build would keep its listener closed), it answers 503 and looks again later.
 */
export class MigrationInProgressError extends Error {
  override readonly name = 'MigrationInProgressError';
  constructor() {
    super('another session is migrating the schema (the indexer, or adm-infra transfers --migrate)');
  }
}

export type SchemaFailureKind = 'rights' | 'connection' | 'too-new' | 'busy' | 'other';

/** PostgreSQL's SQLSTATE classes (and Node's socket codes) that mean "could not get a working session". */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN', '3D000', '57P01', '57P02', '57P03']);

export function schemaFailureKind(error: unknown): SchemaFailureKind {
  const { name, code, message } = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  if (name === 'SchemaTooNewError') return 'too-new';
  if (name === 'MigrationInProgressError') return 'busy';
  if (code === '42501') return 'rights'; // insufficient_privilege
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || /^(08|28)/.test(code))) return 'connection'; // connection exception, invalid authorization
  if (typeof message === 'string' && /timeout|Connection terminated|connect/i.test(message)) return 'connection';
  return 'other';
}

/** `postgres://user@host:port/db` without the password, or the key=value fields given (the rest comes from PG* variables). */
export function describeConnection(connection: PgConnection): string {
  if (connection.connectionString) {
    try {
      const url = new URL(connection.connectionString);
      url.password = '';
      return url.toString();
    } catch {
      return '(a connection string that does not parse as a URL)';
    }
  }
  const fields = [`host=${connection.host ?? '$PGHOST'}`, `port=${connection.port ?? '$PGPORT'}`, `dbname=${connection.database ?? '$PGDATABASE'}`, `user=${connection.user ?? '$PGUSER'}`];
  return fields.join(' ');
}
