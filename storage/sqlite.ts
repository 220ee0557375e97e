// Opening a SQLite database the way every adapter here does: parent folders created, WAL (not for
// `:memory:`), the adapter's durability level, a busy timeout, and a versioned schema applied once
// (`user_version`); a database from a newer build is refused rather than misread, and one from an older
// build is brought forward by its adapter's migration steps.

import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The SQLite driver for this Node: better-sqlite3 13 (Node-API, prebuilt in its package; installed as the optional
 * `better-sqlite3-napi`, which npm skips on Node 20 by its engines) where it is installed, else better-sqlite3 12
 * (built from source; the only line that runs on Node 20). 12 must not run on Node 24.19 and later: built against
 * their headers, its objects abort the process (`Assertion failed: (env) != nullptr` in
 * RemoveEnvironmentCleanupHook) when V8 collects a statement outside JavaScript, at exit or in an idle GC.
 */
function loadDriver(): typeof BetterSqlite3 {
  const require = createRequire(import.meta.url);
  try {
    return require('better-sqlite3-napi') as typeof BetterSqlite3;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    return require('better-sqlite3') as typeof BetterSqlite3;
  }
}

export const Database = loadDriver();
/** One open database (the type is the same for both driver lines). */
export type SqliteDatabase = BetterSqlite3.Database;

export interface SqliteSchema {
  /** Names the database in errors, e.g. `file registry`. */
  readonly name: string;
  readonly version: number;
  /** The whole current layout, applied in one transaction to a new database (`user_version` 0). */
  readonly sql: string;
  /**
   * Steps that bring a database of an older layout forward: every step whose `to` is above the stored version is
   * applied in ascending order, in the same transaction as the version bump, so a crash leaves the old layout or
   * the new one. A database of version v > 0 that has no step to `version` is refused (it would be misread).
   */
  readonly migrations?: readonly SqliteMigration[];
}

/** One layout change: the SQL that turns layout `to - 1` into layout `to`. */
export interface SqliteMigration {
  readonly to: number;
  readonly sql: string;
}

export interface SqliteOptions {
  /** NORMAL survives a process crash; FULL also a power loss (see each adapter for its choice). */
  readonly synchronous: 'NORMAL' | 'FULL';
  readonly schema: SqliteSchema;
}

export function isInMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}

/** Opens and prepares the database, then hands it to `build`; the database is closed if `build` throws. */
export function openSqlite<T>(path: string, options: SqliteOptions, build: (db: SqliteDatabase) => T): T {
  const inMemory = isInMemory(path);
  if (!inMemory) mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  try {
    if (!inMemory) db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.synchronous}`);
    db.pragma('busy_timeout = 5000');
    migrate(db, options.schema);
    return build(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

function migrate(db: SqliteDatabase, schema: SqliteSchema): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > schema.version) {
    throw new Error(`${schema.name} database has schema version ${version}; this build supports up to ${schema.version}`);
  }
  if (version === schema.version) return;
  if (version === 0) {
    db.transaction(() => {
      db.exec(schema.sql);
      db.pragma(`user_version = ${schema.version}`);
    })();
    return;
  }
  const steps = [...(schema.migrations ?? [])].filter((step) => step.to > version && step.to <= schema.version).sort((a, b) => a.to - b.to);
  // Each version from the stored one up to the current one needs its own step; a gap would skip a layout change.
  if (steps.length !== schema.version - version || steps.some((step, index) => step.to !== version + 1 + index)) {
    throw new Error(`${schema.name} database has schema version ${version}; this build has no migration from it to ${schema.version}`);
  }
  db.transaction(() => {
    for (const step of steps) db.exec(step.sql);
    db.pragma(`user_version = ${schema.version}`);
  })();
}
