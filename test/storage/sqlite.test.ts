// Opening a SQLite database with a versioned layout (storage/sqlite.ts): a new database gets the whole current
// layout, an older one its migration steps in order inside one transaction, and a gap or a failing step leaves the
// database as it was.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database, openSqlite, type SqliteDatabase, type SqliteSchema } from '../../storage/sqlite.js';

const root = mkdtempSync(join(tmpdir(), 'sqlite-open-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const freshPath = () => join(root, `db-${++counter}`, 'test.sqlite');

const V3: SqliteSchema = {
  name: 'test store',
  version: 3,
  sql: 'CREATE TABLE a (x INTEGER); CREATE TABLE b (y INTEGER); CREATE TABLE c (z INTEGER);',
  migrations: [
    { to: 3, sql: 'CREATE TABLE c (z INTEGER);' },
    { to: 2, sql: 'CREATE TABLE b (y INTEGER);' },
  ],
};

/** Writes a database at `version` with `sql`, the way an older build left it. */
function oldDatabase(version: number, sql: string): string {
  const path = freshPath();
  openSqlite(path, { synchronous: 'NORMAL', schema: { name: 'seed', version: 1, sql: 'SELECT 1;' } }, (db) => db.close());
  const db = new Database(path);
  db.exec(sql);
  db.pragma(`user_version = ${version}`);
  db.close();
  return path;
}

const tables = (db: SqliteDatabase) => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
const open = (path: string, schema: SqliteSchema) => openSqlite(path, { synchronous: 'NORMAL', schema }, (db) => ({ db, version: db.pragma('user_version', { simple: true }), tables: tables(db) }));

describe('openSqlite: versioned layouts', () => {
  it('a new database gets the whole current layout', () => {
    const { db, version, tables: names } = open(freshPath(), V3);
    db.close();
    assert.equal(version, 3);
    assert.deepEqual(names, ['a', 'b', 'c']);
  });

  it('an older database runs the steps above its version, in order, and keeps its rows', () => {
    const path = oldDatabase(1, 'CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (7);');
    const { db, version, tables: names } = open(path, V3);
    try {
      assert.equal(version, 3);
      assert.deepEqual(names, ['a', 'b', 'c']);
      assert.equal(db.prepare('SELECT x FROM a').pluck().get(), 7);
    } finally {
      db.close();
    }
  });

  it('a version without a step to the next one is refused and left untouched', () => {
    const path = oldDatabase(1, 'CREATE TABLE a (x INTEGER);');
    const gap: SqliteSchema = { ...V3, migrations: [{ to: 3, sql: 'CREATE TABLE c (z INTEGER);' }] };
    assert.throws(() => open(path, gap), /no migration from it/);
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), 1);
      assert.deepEqual(tables(db), ['a']);
    } finally {
      db.close();
    }
  });

  it('a failing step rolls back every step and the version', () => {
    const path = oldDatabase(1, 'CREATE TABLE a (x INTEGER);');
    const failing: SqliteSchema = { ...V3, migrations: [{ to: 2, sql: 'CREATE TABLE b (y INTEGER);' }, { to: 3, sql: 'CREATE TABLE a (x INTEGER);' }] };
    assert.throws(() => open(path, failing), /already exists/);
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('user_version', { simple: true }), 1);
      assert.deepEqual(tables(db), ['a'], 'the first step is undone too');
    } finally {
      db.close();
    }
  });

  it('a database from a newer build is refused', () => {
    const path = oldDatabase(4, 'CREATE TABLE a (x INTEGER);');
    assert.throws(() => open(path, V3), /schema version 4/);
  });
});
