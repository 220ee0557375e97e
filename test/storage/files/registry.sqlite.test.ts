// The SQLite file registry (storage/files/registry.sqlite.ts): records, cursors, collector queries,
// pin-intent markers and the atomic upload commit (docs/notes/files-node.md A.8, C22), GC evidence, actor
// state, persistence across reopen, WAL mode and the schema version.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Database } from '../../../storage/sqlite.js';
import type { FileRecord } from '../../../src/files/types.js';
import { DEFAULT_GC_RUNS_KEPT, type FileRegistry } from '../../../storage/files/registry.js';
import { openSqliteRegistry, SQLITE_REGISTRY_SCHEMA_VERSION } from '../../../storage/files/registry.sqlite.js';
import { acknowledgementTimes } from '../../support/files-store.js';

const root = mkdtempSync(join(tmpdir(), 'files-registry-sqlite-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
/** A path whose parent folders do not exist yet (`<home>/<storeFolder>/registry.sqlite`): the store creates them. */
const freshPath = () => join(root, `case-${++counter}`, '.adm-ipfs', 'registry.sqlite');

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

function record(cid: string, overrides: Partial<FileRecord> = {}): FileRecord {
  return {
    cid,
    state: 'confirmed',
    pinned: true,
    heldLocally: true,
    createdAt: T0,
    expiresAt: null,
    confirmedAt: T0,
    dagBytes: 100,
    origin: 'upload',
    ...overrides,
  };
}
function temporary(cid: string, createdAt: number, ttl = 24 * HOUR): FileRecord {
  return record(cid, { state: 'temporary', createdAt, expiresAt: createdAt + ttl, confirmedAt: null });
}

/** Opens a fresh registry, runs the body, always closes. */
function withRegistry(body: (registry: FileRegistry, path: string) => void, options?: { gcRunsKept?: number }): void {
  const path = freshPath();
  const registry = openSqliteRegistry(path, options);
  try {
    body(registry, path);
  } finally {
    registry.close();
  }
}

const CIDV0 = 'QmQPeNsJPyVWPFDVHb9qRUdUa1dXXZVd1rm4U8QNMPtBvE';
const CIDV1 = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';

describe('file registry (sqlite): records', () => {
  it('put, get, replace, delete; unknown CID is undefined', () => {
    withRegistry((registry) => {
      assert.equal(registry.get(CIDV1), undefined);
      const original = record(CIDV1, { dagBytes: null, origin: 'backfill' });
      registry.put(original);
      assert.deepEqual(registry.get(CIDV1), original);

      const released = record(CIDV1, { state: 'expired', pinned: false, heldLocally: false, origin: 'backfill' });
      registry.put(released);
      assert.deepEqual(registry.get(CIDV1), released);

      assert.equal(registry.delete(CIDV1), true);
      assert.equal(registry.delete(CIDV1), false);
      assert.equal(registry.get(CIDV1), undefined);
    });
  });

  it('unregistered: the CIDs without a record, in their order, exact strings as get matches them', () => {
    withRegistry((registry) => {
      registry.putMany([record('cid-b'), record('cid-d')]);
      assert.deepEqual(registry.unregistered(['cid-e', 'cid-b', 'cid-a', 'cid-d', 'CID-B']), ['cid-e', 'cid-a', 'CID-B']);
      assert.deepEqual(registry.unregistered([]), []);
      assert.deepEqual(registry.unregistered(['cid-b', 'cid-d']), []);
    });
  });

  it('stores a CID string exactly as given (v0 stays v0; no case folding)', () => {
    withRegistry((registry) => {
      registry.put(record(CIDV0));
      registry.put(record(CIDV1.toUpperCase()));
      assert.equal(registry.get(CIDV0)?.cid, CIDV0);
      assert.equal(registry.get(CIDV1), undefined, 'the upper-case spelling is another key');
      assert.equal(registry.get(CIDV1.toUpperCase())?.cid, CIDV1.toUpperCase());
    });
  });

  it('rejects a malformed record instead of storing it', () => {
    withRegistry((registry) => {
      assert.throws(() => registry.put(record('a', { state: 'released' as never })), /CHECK constraint/);
      assert.throws(() => registry.put(record('b', { createdAt: 1.5 })), /REAL|INTEGER|cannot store/i);
      assert.throws(() => registry.put(record('c', { origin: 'other' as never })), /CHECK constraint/);
      assert.deepEqual(registry.list({ limit: 10 }), []);
    });
  });

  it('putMany writes all records in one transaction: all or nothing', () => {
    withRegistry((registry) => {
      registry.putMany([record('a'), record('b'), record('c')]);
      assert.deepEqual(registry.counts(), { temporary: 0, confirmed: 3, expired: 0 });

      const bad = record('e', { state: 'bogus' as never });
      assert.throws(() => registry.putMany([record('d'), record('a', { state: 'expired', pinned: false }), bad]));
      assert.equal(registry.get('d'), undefined, 'the first record of the failed batch is not kept');
      assert.equal(registry.get('a')?.state, 'confirmed', 'the replaced record is restored');
      assert.deepEqual(registry.counts(), { temporary: 0, confirmed: 3, expired: 0 });
    });
  });

  it('list walks by CID with an exclusive cursor, a limit and an optional state', () => {
    withRegistry((registry) => {
      const cids = ['bafy3', 'bafk2', 'Qm9', 'bafk1', 'bafy1', 'QmA'];
      registry.putMany(cids.map((cid, i) => record(cid, i % 2 === 0 ? {} : { state: 'expired', pinned: false })));
      const sorted = [...cids].sort();
      assert.deepEqual(sorted, ['Qm9', 'QmA', 'bafk1', 'bafk2', 'bafy1', 'bafy3'], 'byte order: upper case first');

      assert.deepEqual(registry.list({ limit: 100 }).map((r) => r.cid), sorted);
      assert.deepEqual(registry.list({ limit: 2 }).map((r) => r.cid), ['Qm9', 'QmA']);
      assert.deepEqual(registry.list({ afterCid: 'QmA', limit: 2 }).map((r) => r.cid), ['bafk1', 'bafk2']);
      assert.deepEqual(registry.list({ afterCid: 'bafy3', limit: 2 }), []);
      assert.deepEqual(registry.list({ limit: 0 }), []);

      // A full cursor walk in pages sees every record once, in order.
      const walked: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = registry.list({ afterCid: cursor, limit: 4 });
        if (page.length === 0) break;
        walked.push(...page.map((r) => r.cid));
        cursor = page[page.length - 1]!.cid;
      }
      assert.deepEqual(walked, sorted);

      // cids at even positions are confirmed: bafy3, Qm9, bafy1.
      assert.deepEqual(registry.list({ state: 'confirmed', limit: 10 }).map((r) => r.cid), ['Qm9', 'bafy1', 'bafy3']);
      assert.deepEqual(registry.list({ state: 'expired', afterCid: 'QmA', limit: 1 }).map((r) => r.cid), ['bafk1']);
      assert.deepEqual(registry.list({ state: 'temporary', limit: 10 }), []);
      // The CIDs alone, the same pages.
      assert.deepEqual(registry.listCids({ state: 'confirmed', limit: 10 }), ['Qm9', 'bafy1', 'bafy3']);
      assert.deepEqual(registry.listCids({ state: 'confirmed', afterCid: 'Qm9', limit: 1 }), ['bafy1']);
      assert.deepEqual(registry.listCids({ state: 'expired', afterCid: 'bafk2', limit: 10 }), []);
      assert.throws(() => registry.listCids({ state: 'confirmed', limit: -1 }), RangeError);
      // Pinned CIDs, any state: the even positions are pinned; a demoted (confirmed, unpinned) record is not listed.
      registry.put(record('QmB', { state: 'confirmed', pinned: false, heldLocally: false }));
      registry.put(record('bafk3', { state: 'temporary', confirmedAt: null, expiresAt: Date.now() + 60_000 }));
      assert.deepEqual(registry.listPinnedCids({ limit: 10 }), ['Qm9', 'bafk3', 'bafy1', 'bafy3']);
      assert.deepEqual(registry.listPinnedCids({ afterCid: 'bafk3', limit: 1 }), ['bafy1']);
      assert.deepEqual(registry.listPinnedCids({ afterCid: 'bafy3', limit: 10 }), []);
      assert.throws(() => registry.listPinnedCids({ limit: -1 }), RangeError);

      assert.throws(() => registry.list({ limit: -1 }), RangeError);
      assert.throws(() => registry.list({ limit: 1.5 }), RangeError);
    });
  });

  it('counts per state and pinned bytes', () => {
    withRegistry((registry) => {
      assert.deepEqual(registry.counts(), { temporary: 0, confirmed: 0, expired: 0 });
      assert.equal(registry.pinnedBytes(), 0);
      registry.putMany([
        temporary('t1', T0),
        temporary('t2', T0),
        record('c1', { dagBytes: 1000 }),
        record('c2', { dagBytes: null }),
        record('c3', { pinned: false, heldLocally: false, dagBytes: 5000 }),
        record('e1', { state: 'expired', pinned: false, heldLocally: false, dagBytes: 7000 }),
      ]);
      assert.deepEqual(registry.counts(), { temporary: 2, confirmed: 3, expired: 1 });
      assert.equal(registry.pinnedBytes(), 100 + 100 + 1000, 'pinned records only; unknown sizes count 0');
    });
  });

  it('counts and pinned bytes follow every kind of write (kept totals, not a pass over the rows)', () => {
    withRegistry((registry) => {
      // What the rows say, recounted the slow way: the kept totals must always equal it.
      const recount = () => {
        const rows = registry.list({ limit: 1_000 });
        const counts = { temporary: 0, confirmed: 0, expired: 0 };
        for (const row of rows) counts[row.state]++;
        return { counts, pinnedBytes: rows.filter((row) => row.pinned).reduce((sum, row) => sum + (row.dagBytes ?? 0), 0) };
      };
      const check = (step: string) => assert.deepEqual({ counts: registry.counts(), pinnedBytes: registry.pinnedBytes() }, recount(), step);
      registry.put(temporary('t1', T0));
      check('insert');
      registry.put(record('t1', { dagBytes: 300 }));
      check('upsert that confirms and resizes');
      registry.put(record('t1', { state: 'expired', pinned: false, heldLocally: false, dagBytes: 300 }));
      check('upsert that expires and unpins');
      registry.putMany([record('c1', { dagBytes: 50 }), record('c2', { dagBytes: null }), temporary('t2', T0)]);
      check('putMany');
      registry.addIntent('c3', 'up-1', T0);
      registry.commitUpload([record('c3', { dagBytes: 7 }), record('c1', { dagBytes: 70 })], 'up-1');
      check('commitUpload (insert and replace)');
      assert.equal(registry.delete('c1'), true);
      assert.equal(registry.delete('absent'), false);
      check('delete');
      assert.throws(() => registry.putMany([record('c9', { dagBytes: 1 }), record('', { dagBytes: 1 })]));
      check('a failed transaction leaves the totals as the rows');
      assert.deepEqual(registry.counts(), { temporary: 1, confirmed: 2, expired: 1 });
      assert.equal(registry.pinnedBytes(), 7 + 100);
    });
  });

  it('expiredTemporaries: temporaries with now > expiresAt, soonest expiry first, limited', () => {
    withRegistry((registry) => {
      registry.putMany([
        temporary('late', T0 + 3 * HOUR, HOUR), // expires T0+4h
        temporary('early', T0, HOUR), // expires T0+1h
        temporary('mid', T0 + HOUR, HOUR), // expires T0+2h
        temporary('fresh', T0 + 10 * HOUR, HOUR),
        record('conf'),
        record('exp', { state: 'expired', pinned: false, heldLocally: false, expiresAt: T0 }),
      ]);
      assert.deepEqual(registry.expiredTemporaries(T0 + HOUR, 10), [], 'exactly at expiresAt is not expired');
      assert.deepEqual(registry.expiredTemporaries(T0 + HOUR + 1, 10).map((r) => r.cid), ['early']);
      assert.deepEqual(registry.expiredTemporaries(T0 + 5 * HOUR, 10).map((r) => r.cid), ['early', 'mid', 'late']);
      assert.deepEqual(registry.expiredTemporaries(T0 + 5 * HOUR, 2).map((r) => r.cid), ['early', 'mid']);
    });
  });

  it('oldestUnconfirmed: temporaries by createdAt, CID breaking ties', () => {
    withRegistry((registry) => {
      registry.putMany([
        temporary('b', T0 + 2),
        temporary('z', T0 + 1),
        temporary('a', T0 + 2),
        record('old-confirmed', { createdAt: T0 - HOUR }),
        record('old-expired', { state: 'expired', pinned: false, createdAt: T0 - HOUR }),
      ]);
      assert.deepEqual(registry.oldestUnconfirmed(10).map((r) => r.cid), ['z', 'a', 'b']);
      assert.deepEqual(registry.oldestUnconfirmed(1).map((r) => r.cid), ['z']);
    });
  });
});

describe('file registry (sqlite): pin intents and the upload commit', () => {
  it('intents lifecycle: add (idempotent), list oldest first, remove one, remove a session', () => {
    withRegistry((registry) => {
      assert.deepEqual(registry.intents(), []);
      registry.addIntent('b', 's1', T0 + 1);
      registry.addIntent('a', 's1', T0 + 1);
      registry.addIntent('a', 's2', T0);
      registry.addIntent('a', 's2', T0 + 50); // repeated: the first time stays
      assert.deepEqual(registry.intents(), [
        { cid: 'a', sessionId: 's2', createdAt: T0 },
        { cid: 'a', sessionId: 's1', createdAt: T0 + 1 },
        { cid: 'b', sessionId: 's1', createdAt: T0 + 1 },
      ]);
      assert.equal(registry.removeIntent('a', 's2'), true);
      assert.equal(registry.removeIntent('a', 's2'), false);
      assert.equal(registry.removeSessionIntents('s1'), 2);
      assert.equal(registry.removeSessionIntents('s1'), 0);
      assert.deepEqual(registry.intents(), []);
    });
  });

  it('commitUpload upserts the records and removes exactly that session\'s intents', () => {
    withRegistry((registry) => {
      registry.put(record('old', { state: 'expired', pinned: false, heldLocally: false }));
      registry.addIntent('new', 'up-1', T0);
      registry.addIntent('old', 'up-1', T0);
      registry.addIntent('other', 'up-2', T0);

      registry.commitUpload([record('new'), record('old', { confirmedAt: T0 + 9 })], 'up-1');

      assert.equal(registry.get('new')?.state, 'confirmed');
      assert.deepEqual(registry.get('old'), record('old', { confirmedAt: T0 + 9 }));
      assert.deepEqual(registry.intents(), [{ cid: 'other', sessionId: 'up-2', createdAt: T0 }]);
    });
  });

  it('commitUpload is atomic: an error inside leaves neither records nor removed intents', () => {
    withRegistry((registry) => {
      registry.put(record('kept', { state: 'expired', pinned: false, heldLocally: false }));
      registry.addIntent('kept', 'up-1', T0);
      registry.addIntent('fresh', 'up-1', T0);

      const broken = record('broken', { state: 'not-a-state' as never });
      assert.throws(() => registry.commitUpload([record('fresh'), record('kept'), broken], 'up-1'), /CHECK constraint/);

      assert.equal(registry.get('fresh'), undefined, 'no record without its committed pin decision');
      assert.equal(registry.get('kept')?.state, 'expired', 'the pre-request record is untouched');
      assert.equal(registry.get('broken'), undefined);
      assert.deepEqual(
        registry.intents().map((i) => i.cid),
        ['fresh', 'kept'],
        'the markers stay, so startup can roll the pins back',
      );
    });
  });

  it('startup reconciliation input: intents whose CID has no committed record', () => {
    const path = freshPath();
    const first = openSqliteRegistry(path);
    first.put(record('committed'));
    first.addIntent('committed', 'crashed', T0);
    first.addIntent('orphan', 'crashed', T0);
    first.close(); // a crash between pin and commit

    const registry = openSqliteRegistry(path);
    try {
      const orphans = registry.intents().filter((intent) => registry.get(intent.cid) === undefined);
      assert.deepEqual(orphans.map((i) => i.cid), ['orphan']);
      assert.equal(registry.removeSessionIntents('crashed'), 2);
    } finally {
      registry.close();
    }
  });
});

describe('file registry (sqlite): GC evidence and actor state', () => {
  it('keeps the last N GC runs, newest first', () => {
    withRegistry(
      (registry) => {
        assert.equal(registry.lastGcRun(), undefined);
        assert.deepEqual(registry.gcRuns(), []);
        const ids: number[] = [];
        for (let i = 0; i < 5; i++) {
          ids.push(registry.recordGcRun({ startedAt: T0 + i, finishedAt: T0 + i + 1, report: { trigger: 'none', n: i } }));
        }
        assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ids increase');
        assert.deepEqual(registry.lastGcRun(), { id: ids[4], startedAt: T0 + 4, finishedAt: T0 + 5, report: { trigger: 'none', n: 4 } });
        assert.deepEqual(
          registry.gcRuns<{ n: number }>().map((run) => run.report.n),
          [4, 3, 2],
        );
      },
      { gcRunsKept: 3 },
    );
  });

  it('default bound is DEFAULT_GC_RUNS_KEPT', () => {
    withRegistry((registry) => {
      for (let i = 0; i < DEFAULT_GC_RUNS_KEPT + 5; i++) registry.recordGcRun({ startedAt: i, finishedAt: i, report: { i } });
      const runs = registry.gcRuns<{ i: number }>();
      assert.equal(runs.length, DEFAULT_GC_RUNS_KEPT);
      assert.equal(runs[0]!.report.i, DEFAULT_GC_RUNS_KEPT + 4);
      assert.equal(runs.at(-1)!.report.i, 5);
    });
  });

  it('rejects a report that is not JSON, and a bad bound', () => {
    withRegistry((registry) => {
      assert.throws(() => registry.recordGcRun({ startedAt: 1, finishedAt: 2, report: undefined }), TypeError);
      assert.equal(registry.lastGcRun(), undefined);
    });
    assert.throws(() => openSqliteRegistry(freshPath(), { gcRunsKept: 0 }), RangeError);
  });

  it('kv round trip as JSON: get, overwrite, delete', () => {
    withRegistry((registry) => {
      assert.equal(registry.getState('health.checkpoint'), undefined);
      const checkpoint = { version: 1, membershipVersion: 'ab'.repeat(32), height: T0, observedAt: null };
      registry.setState('health.checkpoint', checkpoint);
      assert.deepEqual(registry.getState<typeof checkpoint>('health.checkpoint'), checkpoint);
      registry.setState('health.checkpoint', { ...checkpoint, height: T0 + 60_000 });
      assert.equal(registry.getState<typeof checkpoint>('health.checkpoint')?.height, T0 + 60_000);
      registry.setState('repair.cursor', { version: 1, afterCid: null });
      assert.equal(registry.deleteState('health.checkpoint'), true);
      assert.equal(registry.deleteState('health.checkpoint'), false);
      assert.equal(registry.getState('health.checkpoint'), undefined);
      assert.deepEqual(registry.getState('repair.cursor'), { version: 1, afterCid: null });
      assert.throws(() => registry.setState('x', undefined), TypeError);
    });
  });
});

describe('file registry (sqlite): acknowledgements of stored copies', () => {
  it('acknowledge, list sorted, re-acknowledge (one row), forget', () => {
    withRegistry((registry) => {
      registry.put(record(CIDV1));
      assert.deepEqual(registry.acknowledgedBy(CIDV1), []);
      assert.equal(registry.acknowledge(CIDV1, ['peer-c', 'peer-a', 'peer-a'], T0), 2, 'a repeated peer is one row');
      assert.deepEqual(registry.acknowledgedBy(CIDV1), ['peer-a', 'peer-c']);
      registry.acknowledge(CIDV1, ['peer-a', 'peer-b'], T0 + 1);
      assert.deepEqual(registry.acknowledgedBy(CIDV1), ['peer-a', 'peer-b', 'peer-c']);
      assert.equal(registry.forgetAcknowledgements(CIDV1, ['peer-a', 'peer-x']), 1);
      assert.deepEqual(registry.acknowledgedBy(CIDV1), ['peer-b', 'peer-c']);
      assert.equal(registry.acknowledge(CIDV1, [], T0), 0);
      assert.deepEqual(registry.acknowledgedBy(CIDV0), [], 'per CID');
    });
  });

  it('with their times; many files noted in one transaction, all or nothing', () => {
    withRegistry((registry) => {
      registry.put(record(CIDV1));
      registry.put(record(CIDV0));
      assert.equal(registry.noteHolders([{ cid: CIDV1, held: ['peer-b', 'peer-a'] }, { cid: CIDV0, held: ['peer-a'] }, { cid: 'unknown', held: ['peer-a'] }], T0), 3);
      assert.deepEqual([...acknowledgementTimes(registry, CIDV1)], [['peer-a', T0], ['peer-b', T0]]);
      assert.equal(registry.noteHolders([{ cid: CIDV1, held: ['peer-a'], gone: ['peer-b', 'peer-x'] }], T0 + 9), 2);
      assert.deepEqual([...acknowledgementTimes(registry, CIDV1)], [['peer-a', T0 + 9]], 'held: dated anew; gone: struck off');
      // A bad row in the middle of a notice leaves nothing of it written.
      assert.throws(() => registry.noteHolders([{ cid: CIDV0, gone: ['peer-a'] }, { cid: CIDV1, held: [''] }], T0 + 10), /CHECK constraint/);
      assert.deepEqual([...acknowledgementTimes(registry, CIDV0)], [['peer-a', T0]]);
      assert.throws(() => registry.noteHolders([{ cid: CIDV0, held: ['peer-a'] }], 2.5), RangeError);
      assert.deepEqual(acknowledgementTimes(registry, 'unknown').size, 0);
      // Notes that arrive out of the order they were asked in (seed 7 of the fault suite: a repair batch heard "not
      // here" from gamma, a handover probe then heard "I have it", and the batch's note came last): an older "not here"
      // strikes nothing newer, an older "held" does not date an acknowledgement back.
      registry.put(record('R-late'));
      registry.noteHolders([{ cid: 'R-late', held: ['peer-g'], at: T0 + 20 }], T0 + 20);
      assert.equal(registry.noteHolders([{ cid: 'R-late', gone: ['peer-g'], at: T0 + 15 }, { cid: 'R-late', held: ['peer-h'], at: T0 + 15 }], T0 + 25), 1);
      assert.deepEqual([...acknowledgementTimes(registry, 'R-late')], [['peer-g', T0 + 20], ['peer-h', T0 + 15]], 'a late "not here" keeps the newer acknowledgement');
      registry.noteHolders([{ cid: 'R-late', held: ['peer-g'], at: T0 + 12 }], T0 + 30);
      assert.deepEqual(acknowledgementTimes(registry, 'R-late').get('peer-g'), T0 + 20, 'a late "held" keeps the later time');
      assert.equal(registry.noteHolders([{ cid: 'R-late', gone: ['peer-g', 'peer-h'], at: T0 + 21 }], T0 + 30), 2, 'a newer "not here" strikes');
      assert.throws(() => registry.noteHolders([{ cid: 'R-late', held: ['peer-g'], at: Number.NaN }], T0), RangeError);
      registry.delete('R-late');
      // Many files in one read: only those asked for, in any order, each with its peers.
      registry.put(record('R-between'));
      registry.acknowledge('R-between', ['peer-z'], T0);
      const many = registry.acknowledgementsOf([CIDV1, 'unknown', CIDV0]);
      assert.deepEqual([...many.keys()].sort(), [CIDV0, CIDV1].sort());
      assert.deepEqual([...many.get(CIDV1)!], [['peer-a', T0 + 9]]);
      assert.deepEqual([...many.get(CIDV0)!], [['peer-a', T0]]);
      assert.equal(registry.acknowledgementsOf([]).size, 0);
    });
  });

  it('survive every rewrite of the record (put, putMany, commitUpload) and go with delete', () => {
    withRegistry((registry) => {
      registry.put(record(CIDV1));
      registry.acknowledge(CIDV1, ['peer-a'], T0);
      registry.put(record(CIDV1, { state: 'expired', pinned: false }));
      registry.putMany([record(CIDV1)]);
      registry.commitUpload([record(CIDV1, { origin: 'pin' })], 'session');
      assert.deepEqual(registry.acknowledgedBy(CIDV1), ['peer-a']);
      assert.equal(registry.delete(CIDV1), true);
      assert.deepEqual(registry.acknowledgedBy(CIDV1), []);
      registry.put(record(CIDV1));
      assert.deepEqual(registry.acknowledgedBy(CIDV1), [], 'a new record does not inherit the deleted one\'s');
    });
  });

  it('are ignored for a CID without a record; reject a non-integer time', () => {
    withRegistry((registry) => {
      assert.equal(registry.acknowledge('unknown', ['peer-a'], T0), 0);
      assert.deepEqual(registry.acknowledgedBy('unknown'), []);
      registry.put(record('known'));
      assert.throws(() => registry.acknowledge('known', ['peer-a'], 1.5), RangeError);
      assert.throws(() => registry.acknowledge('known', [''], T0), /CHECK constraint/);
      assert.deepEqual(registry.acknowledgedBy('known'), []);
    });
  });

  it('persist across reopen', () => {
    const path = freshPath();
    const first = openSqliteRegistry(path);
    first.put(record(CIDV1));
    first.acknowledge(CIDV1, ['peer-b'], T0);
    first.close();
    const again = openSqliteRegistry(path);
    try {
      assert.deepEqual(again.acknowledgedBy(CIDV1), ['peer-b']);
    } finally {
      again.close();
    }
  });
});

/** The layout of schema version 1, as registries written before acknowledgements were kept have it. */
const VERSION_1_LAYOUT = `
CREATE TABLE files (
  cid TEXT NOT NULL PRIMARY KEY CHECK (length(cid) > 0),
  state TEXT NOT NULL CHECK (state IN ('temporary', 'confirmed', 'expired')),
  pinned INTEGER NOT NULL CHECK (pinned IN (0, 1)),
  held_locally INTEGER NOT NULL CHECK (held_locally IN (0, 1)),
  created_at INTEGER NOT NULL,
  expires_at INTEGER,
  confirmed_at INTEGER,
  dag_bytes INTEGER CHECK (dag_bytes IS NULL OR dag_bytes >= 0),
  origin TEXT NOT NULL CHECK (origin IN ('upload', 'backfill', 'pin', 'replica'))
) STRICT, WITHOUT ROWID;
CREATE INDEX files_state_cid ON files (state, cid);
CREATE INDEX files_temporary_expiry ON files (expires_at, cid) WHERE state = 'temporary';
CREATE INDEX files_temporary_age ON files (created_at, cid) WHERE state = 'temporary';
CREATE TABLE pin_intents (cid TEXT NOT NULL, session_id TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (cid, session_id)) STRICT, WITHOUT ROWID;
CREATE INDEX pin_intents_session ON pin_intents (session_id);
CREATE TABLE gc_runs (id INTEGER PRIMARY KEY AUTOINCREMENT, started_at INTEGER NOT NULL, finished_at INTEGER NOT NULL, report TEXT NOT NULL) STRICT;
CREATE TABLE kv (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) STRICT, WITHOUT ROWID;
`;

describe('file registry (sqlite): a registry of an older layout', () => {
  it('a version-1 registry (no acknowledgements table) opens, keeps its data and gains the table', () => {
    const path = freshPath();
    openSqliteRegistry(path).close(); // creates the folders; the file is replaced below
    rmSync(path, { force: true });
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    const old = new Database(path);
    old.exec(VERSION_1_LAYOUT);
    old.prepare(`INSERT INTO files VALUES ('${CIDV1}', 'confirmed', 1, 1, ${T0}, NULL, ${T0}, 100, 'upload')`).run();
    old.prepare(`INSERT INTO pin_intents VALUES ('pending', 'up-1', ${T0})`).run();
    old.prepare(`INSERT INTO kv VALUES ('repair.state', '{"version":1}')`).run();
    old.pragma('user_version = 1');
    old.close();

    const registry = openSqliteRegistry(path);
    try {
      assert.deepEqual(registry.get(CIDV1), record(CIDV1));
      assert.deepEqual(registry.intents(), [{ cid: 'pending', sessionId: 'up-1', createdAt: T0 }]);
      assert.deepEqual(registry.getState('repair.state'), { version: 1 });
      assert.deepEqual(registry.acknowledgedBy(CIDV1), [], 'nothing known about peers yet');
      registry.acknowledge(CIDV1, ['peer-a'], T0);
      assert.deepEqual(registry.acknowledgedBy(CIDV1), ['peer-a']);
    } finally {
      registry.close();
    }
    const raw = new Database(path, { readonly: true });
    try {
      assert.equal(raw.pragma('user_version', { simple: true }), SQLITE_REGISTRY_SCHEMA_VERSION);
      assert.equal(SQLITE_REGISTRY_SCHEMA_VERSION, 3);
    } finally {
      raw.close();
    }
    // And it opens again as a current one.
    const again = openSqliteRegistry(path);
    try {
      assert.deepEqual(again.acknowledgedBy(CIDV1), ['peer-a']);
    } finally {
      again.close();
    }
  });
});

describe('file registry (sqlite): a version-2 registry (no kept totals)', () => {
  it('gains the totals, computed once from its rows, and keeps them from then on', () => {
    const path = freshPath();
    openSqliteRegistry(path).close();
    rmSync(path, { force: true });
    rmSync(`${path}-wal`, { force: true });
    rmSync(`${path}-shm`, { force: true });
    const old = new Database(path);
    old.exec(VERSION_1_LAYOUT);
    old.exec('CREATE TABLE file_acks (cid TEXT NOT NULL, peer_id TEXT NOT NULL, acknowledged_at INTEGER NOT NULL, PRIMARY KEY (cid, peer_id)) STRICT, WITHOUT ROWID;');
    const insert = old.prepare('INSERT INTO files VALUES (?, ?, ?, ?, ?, NULL, NULL, ?, ?)');
    insert.run('c1', 'confirmed', 1, 1, T0, 100, 'upload');
    insert.run('c2', 'confirmed', 0, 0, T0, 900, 'upload');
    insert.run('t1', 'temporary', 1, 1, T0, null, 'upload');
    insert.run('e1', 'expired', 0, 0, T0, 40, 'upload');
    old.pragma('user_version = 2');
    old.close();

    const registry = openSqliteRegistry(path);
    try {
      assert.deepEqual(registry.counts(), { temporary: 1, confirmed: 2, expired: 1 });
      assert.equal(registry.pinnedBytes(), 100);
      registry.put(record('c2', { dagBytes: 900 }));
      assert.equal(registry.pinnedBytes(), 1000, 'the triggers keep the migrated totals');
    } finally {
      registry.close();
    }
  });
});

describe('file registry (sqlite): the database file', () => {
  it('creates the store folder, persists across reopen, WAL mode, schema version', () => {
    const path = freshPath();
    const first = openSqliteRegistry(path);
    first.putMany([record(CIDV1), temporary(CIDV0, T0)]);
    first.addIntent('pending', 'up-9', T0);
    first.recordGcRun({ startedAt: T0, finishedAt: T0 + 10, report: { releasedCids: [] } });
    first.setState('repair.cursor', { version: 1, afterCid: CIDV0 });
    first.close();
    first.close(); // idempotent
    assert.ok(existsSync(path));

    const raw = new Database(path, { readonly: true });
    try {
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(raw.pragma('user_version', { simple: true }), SQLITE_REGISTRY_SCHEMA_VERSION);
    } finally {
      raw.close();
    }

    const again = openSqliteRegistry(path);
    try {
      assert.deepEqual(again.get(CIDV1), record(CIDV1));
      assert.deepEqual(again.get(CIDV0), temporary(CIDV0, T0));
      assert.deepEqual(again.counts(), { temporary: 1, confirmed: 1, expired: 0 });
      assert.deepEqual(again.intents(), [{ cid: 'pending', sessionId: 'up-9', createdAt: T0 }]);
      assert.deepEqual(again.lastGcRun()?.report, { releasedCids: [] });
      assert.deepEqual(again.getState('repair.cursor'), { version: 1, afterCid: CIDV0 });
    } finally {
      again.close();
    }
    assert.throws(() => again.get(CIDV1), 'a closed registry refuses calls');
  });

  it('refuses a database from a newer build', () => {
    const path = freshPath();
    openSqliteRegistry(path).close();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SQLITE_REGISTRY_SCHEMA_VERSION + 1}`);
    raw.close();
    assert.throws(() => openSqliteRegistry(path), /schema version/);
  });

  it('works in memory (":memory:") for unit tests of callers', () => {
    const registry = openSqliteRegistry(':memory:');
    try {
      registry.put(record('m'));
      assert.equal(registry.get('m')?.cid, 'm');
    } finally {
      registry.close();
    }
  });
});
