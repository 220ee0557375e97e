// SQLite backend of the file registry port: `<home>/<storeFolder>/registry.sqlite`, next to the blockstore
// and datastore, so the store folder stays one unit (spec §1 "Durable state"; notes B.7).
//
// Tables (STRICT, so a non-integer time or a boolean that is not 0/1 is rejected, not silently stored):
// - `files`: one row per FileRecord, keyed by the CID string exactly as given (a CIDv0 `Qm…` stays v0).
// - `pin_intents`: pin-intent markers of in-flight upload/copy sessions (notes C22).
// - `gc_runs`: the last N GC reports as evidence (notes A.4), JSON.
// - `kv`: versioned actor state (health checkpoint, repair cursor, cycle evidence), JSON.
// - `file_acks` (layout 2): which designated peers acknowledged a stored copy of a file (spec §2.2 `acknowledged`).
//   A table of its own rather than a column of `files`: every writer of a record replaces the whole row (and many
//   build it afresh from the lifecycle), which must not drop what peers said, and one peer is added or removed
//   with one statement.
//
// - `file_totals` (layout 3): per lifecycle state, how many records and the pinned bytes (sum of `dag_bytes` over
//   pinned records), kept by triggers on `files` inside the very statement that changes a row, so the totals cannot
//   drift from the rows whoever writes them. `counts()` and `pinnedBytes()` read three rows instead of the whole
//   table: the disk actor asks them on every scan, and a registry of a million files took most of a second per
//   call (issue 30). A registry of layout 2 gets the table filled from its rows once, by the migration.
//
// Partial indexes over `state = 'temporary'` serve the collector's two questions (expired by TTL, oldest
// unconfirmed) without touching confirmed rows, which are the bulk of a long-lived registry.

import type Database from 'better-sqlite3';
import { openSqlite } from '../sqlite.js';
import type { LifecycleCounts } from '../../src/files/lifecycle.js';
import type { FileRecord, FileState, RecordOrigin } from '../../src/files/types.js';
import { DEFAULT_GC_RUNS_KEPT, type FileRegistry, type GcRunEvidence, type HolderNote, type ListQuery, type PinIntent } from './registry.js';

/**
 * `PRAGMA user_version` of the layout below. Bump with a migration step when the layout changes.
 * 1: files, pin_intents, gc_runs, kv. 2: + file_acks. 3: + file_totals and its triggers.
 */
export const SQLITE_REGISTRY_SCHEMA_VERSION = 3;

export interface SqliteRegistryOptions {
  /** GC runs kept as evidence; default DEFAULT_GC_RUNS_KEPT (20). */
  readonly gcRunsKept?: number;
}

// Keyed (cid, peer_id) so a repeated acknowledgement is one row; `acknowledged_at` is when the peer last confirmed its
// copy: repair asks again only about copies older than its recheck window (actors/files/repair.actor.ts).
const ACKS_SQL = `
CREATE TABLE IF NOT EXISTS file_acks (
  cid             TEXT    NOT NULL CHECK (length(cid) > 0),
  peer_id         TEXT    NOT NULL CHECK (length(peer_id) > 0),
  acknowledged_at INTEGER NOT NULL,
  PRIMARY KEY (cid, peer_id)
) STRICT, WITHOUT ROWID;
`;

// What one row adds to its state's totals; the triggers subtract the old row and add the new one.
const PINNED_BYTES = (row: 'NEW' | 'OLD') => `CASE WHEN ${row}.pinned = 1 THEN COALESCE(${row}.dag_bytes, 0) ELSE 0 END`;
const ADD_ROW = (row: 'NEW' | 'OLD', sign: '+' | '-') =>
  `UPDATE file_totals SET files = files ${sign} 1, pinned_bytes = pinned_bytes ${sign} ${PINNED_BYTES(row)} WHERE state = ${row}.state;`;

const TOTALS_SQL = `
CREATE TABLE IF NOT EXISTS file_totals (
  state        TEXT    NOT NULL PRIMARY KEY CHECK (state IN ('temporary', 'confirmed', 'expired')),
  files        INTEGER NOT NULL CHECK (files >= 0),
  pinned_bytes INTEGER NOT NULL CHECK (pinned_bytes >= 0)
) STRICT, WITHOUT ROWID;
INSERT OR IGNORE INTO file_totals (state, files, pinned_bytes) VALUES ('temporary', 0, 0), ('confirmed', 0, 0), ('expired', 0, 0);
CREATE TRIGGER IF NOT EXISTS files_totals_insert AFTER INSERT ON files BEGIN ${ADD_ROW('NEW', '+')} END;
CREATE TRIGGER IF NOT EXISTS files_totals_delete AFTER DELETE ON files BEGIN ${ADD_ROW('OLD', '-')} END;
CREATE TRIGGER IF NOT EXISTS files_totals_update AFTER UPDATE ON files BEGIN ${ADD_ROW('OLD', '-')} ${ADD_ROW('NEW', '+')} END;
`;

/** Layout 2 → 3: the totals of the rows already there, then the triggers keep them. */
const TOTALS_MIGRATION_SQL = `${TOTALS_SQL}
UPDATE file_totals SET
  files = (SELECT COUNT(*) FROM files WHERE files.state = file_totals.state),
  pinned_bytes = (SELECT COALESCE(SUM(dag_bytes), 0) FROM files WHERE files.state = file_totals.state AND pinned = 1);
`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS files (
  cid          TEXT    NOT NULL PRIMARY KEY CHECK (length(cid) > 0),
  state        TEXT    NOT NULL CHECK (state IN ('temporary', 'confirmed', 'expired')),
  pinned       INTEGER NOT NULL CHECK (pinned IN (0, 1)),
  held_locally INTEGER NOT NULL CHECK (held_locally IN (0, 1)),
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  confirmed_at INTEGER,
  dag_bytes    INTEGER CHECK (dag_bytes IS NULL OR dag_bytes >= 0),
  origin       TEXT    NOT NULL CHECK (origin IN ('upload', 'backfill', 'pin', 'replica'))
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS files_state_cid ON files (state, cid);
CREATE INDEX IF NOT EXISTS files_temporary_expiry ON files (expires_at, cid) WHERE state = 'temporary';
CREATE INDEX IF NOT EXISTS files_temporary_age ON files (created_at, cid) WHERE state = 'temporary';

CREATE TABLE IF NOT EXISTS pin_intents (
  cid        TEXT    NOT NULL,
  session_id TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (cid, session_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pin_intents_session ON pin_intents (session_id);

CREATE TABLE IF NOT EXISTS gc_runs (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  report      TEXT    NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS kv (
  key   TEXT NOT NULL PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
${ACKS_SQL}${TOTALS_SQL}`;

/**
 * From layout 1 (registries written before acknowledgements were kept): the new table, empty. From layout 2: the
 * totals, computed once from the rows.
 */
const MIGRATIONS = [
  { to: 2, sql: ACKS_SQL },
  { to: 3, sql: TOTALS_MIGRATION_SQL },
];

const COLUMNS = 'cid, state, pinned, held_locally, created_at, expires_at, confirmed_at, dag_bytes, origin';

/**
 * A row of COLUMNS as better-sqlite3's raw mode gives it: an array, not an object with a key per column. Reading a
 * page of records costs half as much (about 6 -> 3 us a row on a million-row registry), and the GC's and repair's
 * walks read every row.
 */
type FileRow = [
  cid: string,
  state: FileState,
  pinned: 0 | 1,
  heldLocally: 0 | 1,
  createdAt: number,
  expiresAt: number | null,
  confirmedAt: number | null,
  dagBytes: number | null,
  origin: RecordOrigin,
];

interface IntentRow {
  cid: string;
  session_id: string;
  created_at: number;
}

interface GcRunRow {
  id: number;
  started_at: number;
  finished_at: number;
  report: string;
}

/**
 * The one string of each state and origin, shared by every record read: better-sqlite3 makes a new string for each
 * row's value, and a GC run holds every record at once (a million copies of 'confirmed' and 'upload').
 */
const SHARED_TEXT: ReadonlyMap<string, string> = new Map(
  (['temporary', 'confirmed', 'expired', 'upload', 'backfill', 'pin', 'replica'] satisfies ReadonlyArray<FileState | RecordOrigin>).map((text) => [text, text]),
);

function toRecord([cid, state, pinned, heldLocally, createdAt, expiresAt, confirmedAt, dagBytes, origin]: FileRow): FileRecord {
  return {
    cid,
    state: (SHARED_TEXT.get(state) ?? state) as FileState,
    pinned: pinned === 1,
    heldLocally: heldLocally === 1,
    createdAt,
    expiresAt,
    confirmedAt,
    dagBytes,
    origin: (SHARED_TEXT.get(origin) ?? origin) as RecordOrigin,
  };
}

/** Named parameters of the upsert (better-sqlite3 binds no booleans). */
function toParams(record: FileRecord): Record<string, string | number | null> {
  return {
    cid: record.cid,
    state: record.state,
    pinned: record.pinned ? 1 : 0,
    held_locally: record.heldLocally ? 1 : 0,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    confirmed_at: record.confirmedAt,
    dag_bytes: record.dagBytes,
    origin: record.origin,
  };
}

function toGcRun<R>(row: GcRunRow): GcRunEvidence<R> {
  return { id: row.id, startedAt: row.started_at, finishedAt: row.finished_at, report: JSON.parse(row.report) as R };
}

function checkLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`registry: limit must be an integer >= 0, got ${limit}`);
  return limit;
}

function toJson(what: string, value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`registry: ${what} is not JSON-serializable`);
  return text;
}

export function openSqliteRegistry(path: string, options: SqliteRegistryOptions = {}): FileRegistry {
  // FULL, not NORMAL: a commit must survive power loss too, because the pin set (datastore) and this
  // registry must agree after any crash (notes A.8, C22). Commits are per upload, so the fsync is cheap.
  return openSqlite(
    path,
    { synchronous: 'FULL', schema: { name: 'file registry', version: SQLITE_REGISTRY_SCHEMA_VERSION, sql: SCHEMA, migrations: MIGRATIONS } },
    (db) => createRegistry(db, options),
  );
}

function createRegistry(db: Database.Database, options: SqliteRegistryOptions): FileRegistry {
  const gcRunsKept = options.gcRunsKept ?? DEFAULT_GC_RUNS_KEPT;
  if (!Number.isSafeInteger(gcRunsKept) || gcRunsKept < 1) throw new RangeError(`registry: gcRunsKept must be an integer >= 1, got ${gcRunsKept}`);


  const getStmt = db.prepare(`SELECT ${COLUMNS} FROM files WHERE cid = ?`).raw();
  const hasStmt = db.prepare('SELECT 1 FROM files WHERE cid = ?').pluck();
  const unregisteredTx = db.transaction((cids: readonly string[]) => cids.filter((cid) => hasStmt.get(cid) === undefined));
  const upsertStmt = db.prepare(
    `INSERT INTO files (${COLUMNS})
     VALUES (@cid, @state, @pinned, @held_locally, @created_at, @expires_at, @confirmed_at, @dag_bytes, @origin)
     ON CONFLICT (cid) DO UPDATE SET
       state = excluded.state, pinned = excluded.pinned, held_locally = excluded.held_locally,
       created_at = excluded.created_at, expires_at = excluded.expires_at, confirmed_at = excluded.confirmed_at,
       dag_bytes = excluded.dag_bytes, origin = excluded.origin`,
  );
  const deleteStmt = db.prepare('DELETE FROM files WHERE cid = ?');
  const deleteAcksStmt = db.prepare('DELETE FROM file_acks WHERE cid = ?');
  // Only for a CID with a record: an acknowledgement learned after the record went away would never be cleaned up.
  const addAckStmt = db.prepare(
    `INSERT INTO file_acks (cid, peer_id, acknowledged_at) SELECT @cid, @peer, @at WHERE EXISTS (SELECT 1 FROM files WHERE cid = @cid)
     ON CONFLICT (cid, peer_id) DO UPDATE SET acknowledged_at = max(acknowledged_at, excluded.acknowledged_at)`,
  );
  // Only an acknowledgement older than the question that heard "not here" (HolderNote.at).
  const removeAckStmt = db.prepare('DELETE FROM file_acks WHERE cid = ? AND peer_id = ? AND acknowledged_at < ?');
  const acksStmt = db.prepare('SELECT peer_id FROM file_acks WHERE cid = ? ORDER BY peer_id').pluck();
  // The primary key's range between the first and the last CID: the rows of CIDs in between that were not asked for
  // are dropped (a repair batch asks for consecutive confirmed CIDs, so few are).
  const acksRangeStmt = db.prepare('SELECT cid, peer_id, acknowledged_at FROM file_acks WHERE cid >= ? AND cid <= ? ORDER BY cid, peer_id').raw();
  // One statement per filter shape, so each walks its index (an `@x IS NULL OR …` form would not).
  const listAll = db.prepare(`SELECT ${COLUMNS} FROM files ORDER BY cid LIMIT @limit`).raw();
  const listAfter = db.prepare(`SELECT ${COLUMNS} FROM files WHERE cid > @after ORDER BY cid LIMIT @limit`).raw();
  const listState = db.prepare(`SELECT ${COLUMNS} FROM files WHERE state = @state ORDER BY cid LIMIT @limit`).raw();
  const listStateAfter = db.prepare(
    `SELECT ${COLUMNS} FROM files WHERE state = @state AND cid > @after ORDER BY cid LIMIT @limit`,
  ).raw();
  // Every stored CID is non-empty (CHECK above), so `cid > ''` is the cursor's start.
  const listCidsStmt = db.prepare(`SELECT cid FROM files WHERE state = @state AND cid > @after ORDER BY cid LIMIT @limit`).pluck();
  // The primary key in order, filtered: the collector reads every pinned CID once a run, and an index over `pinned`
  // would cost every write for that one pass.
  const listPinnedCidsStmt = db.prepare(`SELECT cid FROM files WHERE pinned = 1 AND cid > @after ORDER BY cid LIMIT @limit`).pluck();
  // Three rows kept by the triggers (file_totals above), not a pass over `files`.
  const countsStmt = db.prepare('SELECT state, files AS n FROM file_totals');
  const pinnedBytesStmt = db.prepare('SELECT COALESCE(SUM(pinned_bytes), 0) FROM file_totals').pluck();
  // `expires_at < now` is notes C3's `now > expiresAt`; NULL (no expiry) never matches.
  const expiredStmt = db.prepare(
    `SELECT ${COLUMNS} FROM files WHERE state = 'temporary' AND expires_at < @now ORDER BY expires_at, cid LIMIT @limit`,
  ).raw();
  const oldestStmt = db.prepare(
    `SELECT ${COLUMNS} FROM files WHERE state = 'temporary' ORDER BY created_at, cid LIMIT @limit`,
  ).raw();

  const addIntentStmt = db.prepare(
    'INSERT INTO pin_intents (cid, session_id, created_at) VALUES (?, ?, ?) ON CONFLICT (cid, session_id) DO NOTHING',
  );
  const removeIntentStmt = db.prepare('DELETE FROM pin_intents WHERE cid = ? AND session_id = ?');
  const removeSessionStmt = db.prepare('DELETE FROM pin_intents WHERE session_id = ?');
  const intentsStmt = db.prepare('SELECT cid, session_id, created_at FROM pin_intents ORDER BY created_at, cid, session_id');

  const insertGcStmt = db.prepare('INSERT INTO gc_runs (started_at, finished_at, report) VALUES (?, ?, ?)');
  const trimGcStmt = db.prepare('DELETE FROM gc_runs WHERE id NOT IN (SELECT id FROM gc_runs ORDER BY id DESC LIMIT ?)');
  const lastGcStmt = db.prepare('SELECT id, started_at, finished_at, report FROM gc_runs ORDER BY id DESC LIMIT 1');
  const gcRunsStmt = db.prepare('SELECT id, started_at, finished_at, report FROM gc_runs ORDER BY id DESC');

  const getStateStmt = db.prepare('SELECT value FROM kv WHERE key = ?').pluck();
  const setStateStmt = db.prepare('INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value');
  const deleteStateStmt = db.prepare('DELETE FROM kv WHERE key = ?');

  const putManyTx = db.transaction((records: readonly FileRecord[]) => {
    for (const record of records) upsertStmt.run(toParams(record));
  });
  const commitTx = db.transaction((records: readonly FileRecord[], sessionId: string) => {
    for (const record of records) upsertStmt.run(toParams(record));
    removeSessionStmt.run(sessionId);
  });
  const deleteTx = db.transaction((cid: string): boolean => {
    deleteAcksStmt.run(cid);
    return deleteStmt.run(cid).changes > 0;
  });
  const notesTx = db.transaction((notes: readonly HolderNote[], at: number): number => {
    let written = 0;
    for (const { cid, held = [], gone = [], at: askedAt = at } of notes) {
      for (const peer of new Set(held)) written += addAckStmt.run({ cid, peer, at: askedAt }).changes;
      for (const peer of new Set(gone)) written += removeAckStmt.run(cid, peer, askedAt).changes;
    }
    return written;
  });
  const noteHolders = (notes: readonly HolderNote[], now: number): number => {
    for (const time of [now, ...notes.map((note) => note.at ?? now)]) {
      if (!Number.isSafeInteger(time)) throw new RangeError(`registry: acknowledgement time must be an integer, got ${time}`);
    }
    return notesTx(notes, now);
  };
  const gcTx = db.transaction((startedAt: number, finishedAt: number, report: string): number => {
    const id = Number(insertGcStmt.run(startedAt, finishedAt, report).lastInsertRowid);
    trimGcStmt.run(gcRunsKept);
    return id;
  });

  let closed = false;

  return {
    get(cid) {
      const row = getStmt.get(cid) as FileRow | undefined;
      return row === undefined ? undefined : toRecord(row);
    },

    unregistered(cids) {
      return unregisteredTx(cids);
    },

    put(record) {
      upsertStmt.run(toParams(record));
    },

    putMany(records) {
      putManyTx(records);
    },

    delete(cid) {
      return deleteTx(cid);
    },

    acknowledge(cid, peerIds, now) {
      return noteHolders([{ cid, held: peerIds }], now);
    },

    forgetAcknowledgements(cid, peerIds) {
      return noteHolders([{ cid, gone: peerIds }], Number.MAX_SAFE_INTEGER); // struck off whenever it was noted
    },

    acknowledgedBy(cid) {
      return acksStmt.all(cid) as string[];
    },

    acknowledgementsOf(cids) {
      const found = new Map<string, Map<string, number>>();
      if (cids.length === 0) return found;
      const wanted = new Set(cids);
      let [first, last] = [cids[0]!, cids[0]!];
      for (const cid of cids) {
        if (cid < first) first = cid;
        if (cid > last) last = cid;
      }
      for (const [cid, peer, at] of acksRangeStmt.all(first, last) as [string, string, number][]) {
        if (!wanted.has(cid)) continue;
        let peers = found.get(cid);
        if (!peers) found.set(cid, (peers = new Map()));
        peers.set(peer, at);
      }
      return found;
    },

    noteHolders,

    list(query: ListQuery) {
      const limit = checkLimit(query.limit);
      const { state, afterCid } = query;
      let rows: unknown[];
      if (state === undefined) {
        rows = afterCid === undefined ? listAll.all({ limit }) : listAfter.all({ after: afterCid, limit });
      } else {
        rows = afterCid === undefined ? listState.all({ state, limit }) : listStateAfter.all({ state, after: afterCid, limit });
      }
      return (rows as FileRow[]).map(toRecord);
    },

    listCids(query) {
      return listCidsStmt.all({ state: query.state, after: query.afterCid ?? '', limit: checkLimit(query.limit) }) as string[];
    },

    listPinnedCids(query) {
      return listPinnedCidsStmt.all({ after: query.afterCid ?? '', limit: checkLimit(query.limit) }) as string[];
    },

    counts() {
      const counts: LifecycleCounts = { temporary: 0, confirmed: 0, expired: 0 };
      for (const row of countsStmt.all() as Array<{ state: FileState; n: number }>) counts[row.state] = row.n;
      return counts;
    },

    pinnedBytes() {
      return pinnedBytesStmt.get() as number;
    },

    expiredTemporaries(now, limit) {
      return (expiredStmt.all({ now, limit: checkLimit(limit) }) as FileRow[]).map(toRecord);
    },

    oldestUnconfirmed(limit) {
      return (oldestStmt.all({ limit: checkLimit(limit) }) as FileRow[]).map(toRecord);
    },

    addIntent(cid, sessionId, now) {
      addIntentStmt.run(cid, sessionId, now);
    },

    removeIntent(cid, sessionId) {
      return removeIntentStmt.run(cid, sessionId).changes > 0;
    },

    removeSessionIntents(sessionId) {
      return removeSessionStmt.run(sessionId).changes;
    },

    intents(): PinIntent[] {
      return (intentsStmt.all() as IntentRow[]).map((row) => ({
        cid: row.cid,
        sessionId: row.session_id,
        createdAt: row.created_at,
      }));
    },

    commitUpload(records, sessionId) {
      commitTx(records, sessionId);
    },

    recordGcRun(run) {
      return gcTx(run.startedAt, run.finishedAt, toJson('GC report', run.report));
    },

    lastGcRun<R>() {
      const row = lastGcStmt.get() as GcRunRow | undefined;
      return row === undefined ? undefined : toGcRun<R>(row);
    },

    gcRuns<R>() {
      return (gcRunsStmt.all() as GcRunRow[]).map((row) => toGcRun<R>(row));
    },

    getState<T>(key: string) {
      const text = getStateStmt.get(key) as string | undefined;
      return text === undefined ? undefined : (JSON.parse(text) as T);
    },

    setState(key, value) {
      setStateStmt.run(key, toJson(`state '${key}'`, value));
    },

    deleteState(key) {
      return deleteStateStmt.run(key).changes > 0;
    },

    close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

