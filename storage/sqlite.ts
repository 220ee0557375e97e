// Opening a SQLite database the way every adapter here does: parent folders created, WAL (not for
// `:memory:`), the adapter's durability level, a busy timeout, and a versioned schema applied once
// (`user_version`); a database from a newer build is refused rather than misread.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export interface SqliteSchema {
  /** Names the database in errors, e.g. `file registry`. */
  readonly name: string;
  readonly version: number;
  /** Applied in one transaction when the database is older than `version`. */
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
export function openSqlite<T>(path: string, options: SqliteOptions, build: (db: Database.Database) => T): T {
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

function migrate(db: Database.Database, schema: SqliteSchema): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > schema.version) {
    throw new Error(`${schema.name} database has schema version ${version}; this build supports up to ${schema.version}`);
  }
  if (version === schema.version) return;
  db.transaction(() => {
    db.exec(schema.sql);
    db.pragma(`user_version = ${schema.version}`);
  })();
}
