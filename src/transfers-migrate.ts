// `adm-infra transfers --migrate`: creates or upgrades the transfers schema and the anonymous role, then exits, so a
// deployment whose long-running processes have no write rights (a gateway alone on a PostgREST authenticator login)
// gets its schema from a one-off run with a login that may create tables. The same setup the indexer runs at startup
// (storage/transfers/schema-setup.ts), on the database the service's configuration names:
//
//   PostgreSQL: DB_NAME, else PGRST_DB_URI (the indexer's login when both are set);
//   embedded:   PGlite in DATA_DIR (stop the service using that folder first: PGlite is one process's database).
//
// Prints the report (from, to, applied, the anonymous role) and resolves 0, or prints the reason (cannot connect,
// no rights, a schema newer than this build) and resolves 1.
//
// An entry file (test/layout.test.ts): a command of its own that src/main.ts runs instead of the services, so it
// opens the transfers storage directly rather than through an actor.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { INDEXER_VERSION, type TransfersConfig } from './transfers/config.js';
import { readSchemaStatus } from '../storage/transfers/schema-status.js';
import { SCHEMA_VERSION, SchemaTooNewError } from '../storage/transfers/schema.js';
import type { SqlClient } from '../storage/transfers/sql-client.js';
import { openPgliteClient } from '../storage/transfers/sql-client.pglite.js';
import { describeConnection, schemaClient, schemaFailureKind, setUpSchema } from '../storage/transfers/schema-setup.js';

export interface MigrateCommandOutput {
  /** The report (stdout). */
  out(line: string): void;
  /** Failures and warnings (stderr). */
  err(line: string): void;
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  // Node's AggregateError (every address of a host refused) has no message of its own.
  return error.message || (typeof code === 'string' ? code : error.name);
}

/** Runs the migrations and the anonymous role setup; resolves with the exit code. */
export async function runMigrateCommand(config: TransfersConfig, io: MigrateCommandOutput): Promise<number> {
  const { database, gateway } = config;
  let target: string;
  let db: SqlClient | undefined;
  let login: string | undefined;
  try {
    if (database.kind === 'pglite') {
      const dataDir = resolve(database.dataDir);
      target = `PGlite in ${dataDir}`;
      mkdirSync(dirname(dataDir), { recursive: true });
    } else {
      target = describeConnection(database.indexer);
    }
  } catch (error) {
    io.err(`adm-infra: cannot migrate the transfers database: ${reasonOf(error)}`);
    return 1;
  }
  try {
    db = database.kind === 'pglite' ? await openPgliteClient(resolve(database.dataDir)) : schemaClient(database.indexer, 'adm-infra transfers --migrate');
    const status = await readSchemaStatus(db);
    login = status.login;
    // migrate() refuses a newer schema too; checked first so nothing (not even a lock) is taken on such a database.
    if (status.state === 'versioned' && status.version > SCHEMA_VERSION) throw new SchemaTooNewError(status.version);
    if (status.migrating) io.err('another session is migrating this database (the indexer?): waiting for it to finish');
    // Index builds on a large table take minutes: say what is happening while they run.
    const { migration, role } = await setUpSchema(db, gateway.anonRole, INDEXER_VERSION, {
      onProgress: (progress) => {
        if (progress.event === 'waiting for another process') io.out('  waiting for another process that is building the indexes');
        else if (progress.event === 'built') io.out(`  built index ${progress.index} in ${(progress.elapsedMs / 1000).toFixed(1)} s`);
        else io.out(`  building index ${progress.index}: ${progress.phase ?? ''}${progress.blocksTotal ? ` (${progress.blocksDone}/${progress.blocksTotal} blocks)` : ''}`);
      },
    });
    io.out(`${migration.applied.length > 0 ? 'Migrated' : 'Checked'} the transfers database ${target} (login ${login})`);
    io.out(`  from: ${migration.from}`);
    io.out(`  to: ${migration.to}`);
    io.out(`  applied: ${migration.applied.length > 0 ? migration.applied.join('; ') : `none (already at version ${migration.to})`}`);
    io.out(`  anonymous role ${gateway.anonRole}: ${role.created ? 'created' : 'present'}${role.problems.length > 0 ? ', not fully set up (see the warnings)' : ', SELECT granted on ethtxs, max_block, aval'}`);
    if (status.state === 'unversioned') {
      io.out("  note: the original indexer's tables were adopted (its possibly partial last block was deleted once; run this with the original indexer stopped)");
    }
    for (const problem of role.problems) io.err(`warning: anonymous role ${gateway.anonRole} not fully set up: ${problem}`);
    return 0;
  } catch (error) {
    const where = `the transfers database ${target}${login ? ` (login ${login})` : ''}`;
    const kind = schemaFailureKind(error);
    if (kind === 'rights') {
      io.err(`adm-infra: cannot migrate ${where}: no rights: ${reasonOf(error)}`);
      io.err('  run it with a login that can create tables in that database (its owner, or a superuser), e.g.');
      io.err('  DB_NAME=postgres://OWNER@HOST:PORT/DATABASE adm-infra transfers --migrate');
    } else if (kind === 'connection') {
      io.err(`adm-infra: cannot migrate ${where}: cannot connect: ${reasonOf(error)}`);
    } else if (kind === 'too-new') {
      io.err(`adm-infra: cannot migrate ${where}: ${reasonOf(error)}`);
    } else {
      io.err(`adm-infra: cannot migrate ${where}: ${error instanceof Error ? `${error.name}: ` : ''}${reasonOf(error)}`);
    }
    return 1;
  } finally {
    await db?.close().catch(() => undefined);
  }
}
