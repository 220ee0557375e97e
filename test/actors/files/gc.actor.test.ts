// `files.gc` on its own, over a scripted node (registry, pins and blockstore in memory; sizes measured on a real
// temporary folder): the lifecycle changes a run makes, rule 7 (re-read before applying), rule 6 (pins verified
// before deleting), the goal of a pressure run, the one-run-at-a-time rule, the status board, and the scheduled
// collector that starts only after the startup walk (docs/specs/files-node.md §4.3, §9.6; notes A.4).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { createActor, SimulatedClock } from 'xstate';
import { systemClock, type Clock } from '../../../src/clock.js';
import { requireCron } from '../../../src/cron.js';
import { gcLogic, PIN_CHECKS_AT_ONCE, RELEASES_AT_ONCE } from '../../../actors/files/gc.actor.js';
import { GcStatusBoard } from '../../../actors/files/gc-status.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import type { RootPins } from '../../../storage/files/root-pins.js';
import { StartupSignal } from '../../../actors/files/startup.js';
import { RunInProgressError } from '../../../src/files/errors.js';
import { gcEvidence, gcReport, type GcReport, type GcSettings } from '../../../src/files/gc.js';
import type { FileRecord } from '../../../src/files/types.js';
import { captureLogger } from '../../support/logger.js';
import { startStore, type TestStore } from '../../support/files-store.js';
import { waitFor } from '../../support/wait.js';
import { PackedStrings, PAGE_BYTES } from '../../../src/packed-strings.js';

const NO_PRESSURE: GcSettings = { highWatermarkBytes: 1e12, lowWatermarkBytes: 1e11, diskReserveBytes: 0 };

async function rawCid(text: string): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(new TextEncoder().encode(text)));
}

/** Blocks and pins are keyed by multihash, as helia and blockstore-fs key them (a CIDv0 listing matches a v1 pin). */
const mh = (cid: CID | string) => Buffer.from((typeof cid === 'string' ? CID.parse(cid) : cid).multihash.bytes).toString('hex');

/** How blockstore-fs names a block when listing it: the multihash decoded as a CID, i.e. CIDv0 for sha2-256. */
const v0 = (cid: CID) => CID.decode(cid.multihash.bytes);

/** An in-memory node: registry records, a pin set (root pins cover their own block), blocks. */
class FakeNode {
  readonly records = new Map<string, FileRecord>();
  readonly pinned = new Set<string>();
  readonly blocks = new Map<string, { cid: CID; bytes: Uint8Array }>();
  readonly runs: Array<{ startedAt: number; finishedAt: number; report: GcReport }> = [];
  last: { id: number; startedAt: number; finishedAt: number; report: unknown } | undefined;
  /** CIDs whose pin cannot be restored (their blocks are "missing"). */
  readonly unrestorable = new Set<string>();

  constructor(readonly directory: string) {}

  node(): FilesNode {
    const self = this;
    const key = mh;
    const node = {
      store: {
        directory: this.directory,
        blockstore: {
          // One batch of every block.
          async *blockBatches() {
            yield [...self.blocks.values()].map((block) => block.cid);
          },
          sizeOf: async (cid: CID) => self.blocks.get(key(cid))?.bytes.byteLength,
          async delete(cid: CID) {
            self.blocks.delete(key(cid));
          },
        },
      },
      registry: {
        get: (cid: string) => self.records.get(cid),
        put: (record: FileRecord) => void self.records.set(record.cid, record),
        list: ({ limit, afterCid, state }: { limit: number; afterCid?: string; state?: FileRecord['state'] }) =>
          [...self.records.values()]
            .sort((a, b) => (a.cid < b.cid ? -1 : 1))
            .filter((record) => (afterCid === undefined || record.cid > afterCid) && (state === undefined || record.state === state))
            .slice(0, limit),
        listPinnedCids: ({ limit, afterCid }: { limit: number; afterCid?: string }) =>
          [...self.records.values()]
            .filter((record) => record.pinned && (afterCid === undefined || record.cid > afterCid))
            .map((record) => record.cid)
            .sort()
            .slice(0, limit),
        pinnedBytes: () => [...self.records.values()].reduce((sum, record) => sum + (record.pinned ? (record.dagBytes ?? 0) : 0), 0),
        recordGcRun: (run: { startedAt: number; finishedAt: number; report: GcReport }) => self.runs.push(run),
        lastGcRun: () => self.last,
        intents: () => [],
      },
      helia: {
        pins: {
          isPinned: async (cid: CID) => self.pinned.has(key(cid)),
        },
      },
      // The fake keeps no partial pin walks: a root pin exists exactly when its CID is marked.
      pins: {
        has: async (cid: CID) => self.pinned.has(key(cid)),
        async remove(cid: CID) {
          self.pinned.delete(key(cid));
        },
        async add(cid: CID, options: { offline?: boolean } = {}) {
          assert.equal(options.offline, true, 'pins are restored from local blocks only');
          if (self.unrestorable.has(cid.toString())) throw new Error(`block ${cid} not found while offline`);
          self.pinned.add(key(cid));
        },
        // Only the startup walk lists pins; the collector never does.
        async *rootTexts(): AsyncGenerator<string[]> {
          throw new Error('the collector does not list the pin set');
        },
      } satisfies RootPins,
    } as unknown as FilesNode;
    return node;
  }

  async add(record: Omit<FileRecord, 'cid'>, text: string, size = 10): Promise<string> {
    const cid = await rawCid(text);
    const full = { ...record, cid: cid.toString() };
    this.records.set(full.cid, full);
    if (full.pinned) this.pinned.add(mh(cid));
    this.blocks.set(mh(cid), { cid: v0(cid), bytes: new Uint8Array(size) });
    return full.cid;
  }

  isPinned(cid: string): boolean {
    return this.pinned.has(mh(cid));
  }

  hasBlock(cid: string): boolean {
    return this.blocks.has(mh(cid));
  }

  addBlock(cid: CID, size: number): void {
    this.blocks.set(mh(cid), { cid: v0(cid), bytes: new Uint8Array(size) });
  }
}

const temporary = (createdAt: number, expiresAt: number): Omit<FileRecord, 'cid'> => ({
  state: 'temporary',
  pinned: true,
  heldLocally: true,
  createdAt,
  expiresAt,
  confirmedAt: null,
  dagBytes: 10,
  origin: 'upload',
});
const confirmed = (createdAt: number): Omit<FileRecord, 'cid'> => ({ ...temporary(createdAt, 0), state: 'confirmed', expiresAt: null, confirmedAt: createdAt });

interface Harness {
  fake: FakeNode;
  /** The store's owner the collector sends its writes to, and takes the lease from. */
  store: TestStore;
  status: GcStatusBoard;
  startup: StartupSignal;
  afterRuns: number;
  log: ReturnType<typeof captureLogger>;
  run(dryRun: boolean, force: boolean): Promise<GcReport>;
  stop(): void;
}

function start(fake: FakeNode, options: { clock?: Clock; settings?: GcSettings; enabled?: boolean; schedule?: string } = {}): Harness {
  const holder = new NodeHolder();
  holder.set(fake.node());
  const log = captureLogger('debug');
  const clock = options.clock ?? systemClock;
  const store = startStore(holder, { clock });
  const status = new GcStatusBoard(options.enabled ?? false, options.schedule ?? '0 */15 * * * *');
  const startup = new StartupSignal();
  const h: Harness = {
    fake,
    store,
    status,
    startup,
    afterRuns: 0,
    log,
    run: (dryRun, force) =>
      new Promise<GcReport>((resolve, reject) => actor.send({ type: 'gc.run', dryRun, force, reply: { resolve, reject, signal: new AbortController().signal } })),
    stop: () => {
      actor.stop();
      store.stop();
    },
  };
  const actor = createActor(
    gcLogic({
      holder,
      clock,
      store: store.port,
      status,
      startup,
      settings: { gc: options.settings ?? NO_PRESSURE, enabled: options.enabled ?? false, schedule: requireCron('test', options.schedule ?? '0 */15 * * * *') },
      logger: log.logger,
      afterRun: () => void h.afterRuns++,
    }),
    { clock },
  );
  actor.start();
  return h;
}

/** A node holding `count` confirmed files (CIDs in order), `onPinnedPage` told before each page of pinned CIDs is read. */
function confirmedFiles(directory: string, count: number, onPinnedPage: () => void): { fake: FakeNode; cids: string[] } {
  class ObservedNode extends FakeNode {
    override node(): FilesNode {
      const node = super.node();
      const listPinnedCids = node.registry.listPinnedCids.bind(node.registry);
      Object.assign(node.registry, {
        listPinnedCids: (query: Parameters<typeof listPinnedCids>[0]) => {
          onPinnedPage();
          return listPinnedCids(query);
        },
      });
      return node;
    }
  }
  const fake = new ObservedNode(directory);
  const createdAt = Date.now() - 1_000;
  const cids = Array.from({ length: count }, (_, i) => `bafkreipage${String(i).padStart(5, '0')}`);
  for (const cid of cids) fake.records.set(cid, { cid, ...confirmed(createdAt) });
  return { fake, cids };
}

describe('files.gc', () => {
  let home: string;
  let directory: string;
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'gc-actor-'));
    directory = join(home, 'store');
    mkdirSync(join(directory, 'blockstore'), { recursive: true });
  });
  after(() => rmSync(home, { recursive: true, force: true }));

  it('restores the last stored run into the status board at start', async () => {
    const fake = new FakeNode(directory);
    const stored = gcReport(
      { outcome: 'collected', dryRun: false, trigger: 'force', blockstoreBytesBefore: 9, estimatedBytesAfter: 1, releasedCids: ['a', 'b'], retainedCids: new PackedStrings(), demoted: [], removedBlocks: 3, removedCids: ['x', 'y', 'z'], repairedPins: [], unprotected: [], errors: [] },
      1_000,
      1_500,
    );
    fake.last = { id: 7, startedAt: 1_000, finishedAt: 1_500, report: stored };
    const h = start(fake);
    assert.deepEqual(h.status.current().lastRun, { startedAt: 1_000, durationMs: 500, dryRun: false, collected: true, trigger: 'force', releasedCount: 2, removedBlocks: 3, errors: [] });
    h.stop();
  });

  it('a dry run lists the expired temporary and changes nothing; the real run expires it through the lifecycle machine', async () => {
    const fake = new FakeNode(directory);
    const now = Date.now();
    const expiredCid = await fake.add(temporary(now - 5_000, now - 1_000), 'expired');
    const liveCid = await fake.add(temporary(now - 5_000, now + 60_000), 'live');
    const keptCid = await fake.add(confirmed(now - 9_000), 'confirmed');
    const h = start(fake);

    const preview = await h.run(true, false);
    assert.deepEqual(preview.releasedCids, [expiredCid]);
    assert.deepEqual([...preview.retainedCids], [keptCid, liveCid].sort());
    assert.equal(fake.records.get(expiredCid)!.state, 'temporary');
    assert.ok(fake.isPinned(expiredCid));
    assert.equal(h.afterRuns, 0, 'no rescan after a dry run');
    assert.equal(fake.runs.length, 1, 'dry runs are recorded too');
    assert.equal(h.status.current().lastRun?.dryRun, true);

    const report = await h.run(false, false);
    assert.deepEqual(report.releasedCids, [expiredCid]);
    assert.equal(report.trigger, 'none');
    assert.equal(report.collected, false, 'no trigger, no deletion');
    assert.equal(report.removedBlocks, 0);
    const record = fake.records.get(expiredCid)!;
    assert.equal(record.state, 'expired');
    assert.equal(record.pinned, false);
    assert.equal(record.heldLocally, false);
    assert.ok(!fake.isPinned(expiredCid), 'unpinned');
    assert.ok(fake.hasBlock(expiredCid), 'releasing is not deleting');
    assert.equal(fake.records.get(liveCid)!.state, 'temporary');
    assert.equal(h.afterRuns, 1);
    assert.equal(fake.runs.length, 2);
    assert.deepEqual(fake.runs[1]!.report, gcEvidence(report), "kept as evidence, the retained files counted");
    assert.equal(h.status.current().running, false);
    assert.equal(h.status.current().lastRun?.releasedCount, 1);
    const lines = h.log.lines.filter((line) => String(line.msg).startsWith('garbage collection'));
    assert.ok(lines.some((line) => line.msg === 'garbage collection finished' && line.released === 1));
    assert.ok(!JSON.stringify(lines).includes(expiredCid), 'progress logs carry counts, never CIDs');
    h.stop();
  });

  it('a run reads the registry a page at a time, letting the event loop turn between pages (a million CIDs held the node ~1 s)', async () => {
    const events: string[] = [];
    const { fake, cids } = confirmedFiles(directory, 3_500, () => events.push('page'));
    const h = start(fake);
    let ticking = true;
    const tick = () => {
      if (!ticking) return;
      events.push('turn');
      setImmediate(tick);
    };
    setImmediate(tick);
    try {
      const report = await h.run(true, false);
      assert.deepEqual([...report.retainedCids], cids, 'every page read, in CID order');
    } finally {
      ticking = false;
      h.stop();
    }
    const pages = events.flatMap((event, index) => (event === 'page' ? [index] : []));
    assert.equal(pages.length, 4, '3,500 CIDs in pages of 1,000');
    // A turn per page: in each turn the ticker may run before or after that turn's page, so at least 2 fall between.
    const turns = events.slice(pages[0], pages.at(-1)).filter((event) => event === 'turn').length;
    assert.ok(turns >= 2, `the event loop turned ${turns} times between the first and the last page`);
  });

  it('a collector stopped while a run reads the registry reads no further page and records nothing', async () => {
    let pagesRead = 0;
    let h: Harness | undefined;
    const { fake } = confirmedFiles(directory, 3_500, () => {
      // The stop arrives in the turn the run gives the event loop after this first page.
      if (++pagesRead === 1) setImmediate(() => h!.stop());
    });
    h = start(fake);
    await assert.rejects(h.run(true, false), /garbage collection stopped/);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(pagesRead, 1, 'no page read after the stop');
    assert.equal(fake.runs.length, 0, 'a stopped run is not recorded');
  });

  it('a collector stopped while the retained list is counted (after the run machine is done) records nothing', async () => {
    const fake = new FakeNode(directory);
    const createdAt = Date.now() - 1_000;
    // Long "CIDs": the retained list spans several pages, so the count takes several turns.
    for (let i = 0; i < 3_000; i++) {
      const cid = `bafkrei${String(i).padStart(5, '0')}${'c'.repeat(1_000)}`;
      fake.records.set(cid, { cid, ...confirmed(createdAt) });
    }
    const h = start(fake);
    const countInTurns = PackedStrings.prototype.countInTurns;
    let turns = 0;
    PackedStrings.prototype.countInTurns = function (this: PackedStrings, turn: () => Promise<unknown>) {
      return countInTurns.call(this, async () => {
        // The stop arrives in the count's first turn.
        if (++turns === 1) h.stop();
        await turn();
      });
    };
    try {
      await assert.rejects(h.run(true, false), /garbage collection stopped/);
    } finally {
      PackedStrings.prototype.countInTurns = countInTurns;
    }
    assert.ok(turns >= 1, 'the stop came during the count');
    assert.equal(fake.runs.length, 0, 'a run stopped while counting is not recorded');
    assert.equal(h.status.current().running, false);
    assert.equal(h.status.current().lastRun, null, 'nor shown as the last run');
  });

  it("a report given back lends its pages to the next run (no new page); a report still being read keeps its own", async () => {
    const fake = new FakeNode(directory);
    const createdAt = Date.now() - 1_000;
    // Long "CIDs", so a few thousand records fill several pages of the packed list.
    const cids = Array.from({ length: 3_000 }, (_, i) => `bafkrei${String(i).padStart(5, '0')}${'q'.repeat(1_000)}`);
    for (const cid of cids) fake.records.set(cid, { cid, ...confirmed(createdAt) });
    const h = start(fake);
    const allocate = Buffer.allocUnsafeSlow;
    let pagesMade = 0;
    Buffer.allocUnsafeSlow = (size: number) => {
      if (size >= PAGE_BYTES) pagesMade++;
      return allocate(size);
    };
    try {
      const first = await h.run(true, false);
      const perRun = pagesMade;
      assert.ok(perRun >= 3, `${perRun} pages for a run`);
      const second = await h.run(true, false);
      assert.equal(pagesMade, 2 * perRun, 'the first report is still held: the second run makes its own pages');
      assert.deepEqual([...first.retainedCids], cids, 'the first report is untouched by the second run');
      first.retainedCids.release();
      second.retainedCids.release();
      // The pages come back to the collector as a message.
      await new Promise((resolve) => setImmediate(resolve));
      const third = await h.run(true, false);
      assert.equal(pagesMade, 2 * perRun, 'the third run made no page: it took those given back');
      assert.deepEqual([...third.retainedCids], cids);
      assert.throws(() => [...first.retainedCids], /released/, 'a released report cannot be read, rather than read another run\'s pages');
    } finally {
      Buffer.allocUnsafeSlow = allocate;
      h.stop();
    }
  });

  it('one run at a time: a request while a run waits for the lease is refused; the waiting run then completes', async () => {
    const fake = new FakeNode(directory);
    const h = start(fake);
    const upload = await h.store.openSession();
    const first = h.run(false, true);
    await waitFor(async () => (await h.store.state()).lease.waitingExclusive === 1, { what: 'the run waiting for the lease' });
    assert.equal(h.status.current().running, true);
    await assert.rejects(h.run(true, false), (error: unknown) => error instanceof RunInProgressError && error.message === 'Garbage collection is already running');
    upload();
    const report = await first;
    assert.equal(report.collected, true);
    await waitFor(async () => !(await h.store.state()).lease.exclusive, { what: 'the lease given back' });
    assert.equal(h.status.current().running, false);
    assert.equal((await h.run(true, false)).dryRun, true, 'the next request runs');
    h.stop();
  });

  it('rule 7: a file confirmed between planning and releasing is not released', async () => {
    const fake = new FakeNode(directory);
    const now = Date.now();
    const cid = await fake.add(temporary(now - 5_000, now - 1_000), 'confirmed-late');
    const h = start(fake);
    const upload = await h.store.openSession();
    const pending = h.run(false, false);
    await waitFor(async () => (await h.store.state()).lease.waitingExclusive === 1, { what: 'the planned run waiting for the lease' });
    fake.records.set(cid, { ...fake.records.get(cid)!, state: 'confirmed', expiresAt: null, confirmedAt: now });
    upload();
    const report = await pending;
    assert.deepEqual(report.releasedCids, []);
    assert.deepEqual([...report.retainedCids], [cid]);
    assert.equal(fake.records.get(cid)!.state, 'confirmed');
    assert.ok(fake.isPinned(cid));
    h.stop();
  });

  it(`releases ${RELEASES_AT_ONCE} files at once and reads ${PIN_CHECKS_AT_ONCE} pins at once (verification, deletion pass), and reports in order`, async () => {
    /** The node's pin reads and removals take longer the earlier their file comes, and are counted while in flight. */
    class SlowPinsNode extends FakeNode {
      inFlight = { remove: 0, has: 0, isPinned: 0 };
      most = { remove: 0, has: 0, isPinned: 0 };
      delayOf = new Map<string, number>();
      override node(): FilesNode {
        const node = super.node();
        const slowly = <A extends unknown[], R>(kind: 'remove' | 'has' | 'isPinned', call: (cid: CID, ...rest: A) => Promise<R>) =>
          async (cid: CID, ...rest: A): Promise<R> => {
            this.most[kind] = Math.max(this.most[kind], ++this.inFlight[kind]);
            try {
              await new Promise((resolve) => setTimeout(resolve, this.delayOf.get(mh(cid)) ?? 0));
              return await call(cid, ...rest);
            } finally {
              this.inFlight[kind]--;
            }
          };
        Object.assign(node.pins, { remove: slowly('remove', node.pins.remove.bind(node.pins)), has: slowly('has', node.pins.has.bind(node.pins)) });
        Object.assign(node.helia.pins, { isPinned: slowly('isPinned', node.helia.pins.isPinned.bind(node.helia.pins)) });
        return node;
      }
    }
    const fake = new SlowPinsNode(directory);
    const now = Date.now();
    const expired: string[] = [];
    for (let i = 0; i < 20; i++) expired.push(await fake.add(temporary(now - 9_000, now - 5_000 + i), `expired ${i}`));
    const kept: string[] = [];
    for (let i = 0; i < 20; i++) kept.push(await fake.add(confirmed(now - 9_000), `kept ${i}`));
    const lost = [kept[3]!, kept[11]!, kept[17]!];
    for (const cid of lost) fake.pinned.delete(mh(cid));
    for (const [i, cid] of [...expired, ...kept].entries()) fake.delayOf.set(mh(cid), 40 - (i % 20) * 2);
    const h = start(fake);
    // Forced: pins are verified only by a run that goes on to delete (rule 6).
    const report = await h.run(false, true);
    assert.deepEqual(report.errors, []);
    assert.deepEqual(report.releasedCids, expired, 'soonest expiry first, as planned');
    assert.equal(fake.most.remove, RELEASES_AT_ONCE);
    assert.equal(fake.most.has, PIN_CHECKS_AT_ONCE);
    assert.equal(fake.most.isPinned, PIN_CHECKS_AT_ONCE, 'the deletion pass reads block pins as many at once too');
    assert.deepEqual([...report.removedCids].sort(), expired.map((cid) => v0(CID.parse(cid)).toString()).sort(), 'the blocks of the released files, and no other');
    assert.deepEqual(report.repairedPins, [...lost].sort(), 'in registry order');
    for (const cid of lost) assert.ok(fake.isPinned(cid));
    h.stop();
  });

  it('rule 6: a lost pin is restored before deleting; unpinned blocks are deleted and listed as the blockstore names them', async () => {
    const fake = new FakeNode(directory);
    const now = Date.now();
    const keptCid = await fake.add(confirmed(now - 9_000), 'kept');
    const lostCid = await fake.add(confirmed(now - 9_000), 'lost-pin');
    fake.pinned.delete(mh(lostCid));
    const cache = await rawCid('read cache');
    fake.addBlock(cache, 5);
    const h = start(fake);
    const report = await h.run(false, true);
    assert.deepEqual(report.repairedPins, [lostCid]);
    assert.deepEqual(report.unprotected, []);
    assert.equal(report.collected, true);
    assert.deepEqual(report.removedCids, [v0(cache).toString()], 'CIDv0, as the file-backed store lists it');
    assert.equal(report.removedBlocks, 1);
    assert.ok(fake.hasBlock(keptCid) && fake.hasBlock(lostCid), 'pinned blocks stay');
    h.stop();
  });

  it('rule 6: a pin that cannot be restored abandons the run before a single block is deleted', async () => {
    const fake = new FakeNode(directory);
    const now = Date.now();
    const lostCid = await fake.add(confirmed(now - 9_000), 'unrestorable');
    fake.pinned.delete(mh(lostCid));
    fake.unrestorable.add(lostCid);
    const cache = await rawCid('cache 2');
    fake.addBlock(cache, 5);
    const h = start(fake);
    const report = await h.run(false, true);
    assert.deepEqual(report.unprotected, [lostCid]);
    assert.equal(report.collected, false);
    assert.equal(report.removedBlocks, 0);
    assert.equal(fake.blocks.size, 2, 'nothing deleted');
    await waitFor(async () => !(await h.store.state()).lease.exclusive, { what: 'the lease given back' });
    h.stop();
  });

  it('a pressure run deletes only as many unpinned bytes as it needs', async () => {
    const dir = join(home, 'pressure');
    mkdirSync(join(dir, 'blockstore'), { recursive: true });
    // 1000 measured bytes; above a 900-byte high watermark, below 700 means freeing 301 bytes.
    writeFileSync(join(dir, 'blockstore', 'measured.data'), Buffer.alloc(1_000));
    const fake = new FakeNode(dir);
    for (let i = 0; i < 5; i++) {
      const cid = await rawCid(`unpinned ${i}`);
      fake.addBlock(cid, 100);
    }
    const h = start(fake, { settings: { highWatermarkBytes: 900, lowWatermarkBytes: 700, diskReserveBytes: 0 } });
    const report = await h.run(false, false);
    assert.equal(report.trigger, 'highWatermark');
    assert.equal(report.removedBlocks, 4, '4 × 100 bytes is the first amount of at least 301');
    assert.equal(fake.blocks.size, 1);
    assert.equal(report.estimatedBytesAfter, 600);
    h.stop();
  });

  it('a helia failure: not collected, the records kept, an error text without the CID', async () => {
    const fake = new FakeNode(directory);
    const now = Date.now();
    const cid = await fake.add(temporary(now - 5_000, now - 1_000), 'unpin fails');
    const node = fake.node();
    node.pins.remove = async (failing: CID) => {
      throw new Error(`pin ${failing} could not be removed`);
    };
    const holder = new NodeHolder();
    holder.set(node);
    const log = captureLogger('warn');
    const status = new GcStatusBoard(false, '0 */15 * * * *');
    const store = startStore(holder);
    const actor = createActor(
      gcLogic({ holder, clock: systemClock, store: store.port, status, startup: new StartupSignal(), settings: { gc: NO_PRESSURE, enabled: false, schedule: requireCron('test', '0 */15 * * * *') }, logger: log.logger }),
    );
    actor.start();
    const report = await new Promise<GcReport>((resolve, reject) =>
      actor.send({ type: 'gc.run', dryRun: false, force: true, reply: { resolve, reject, signal: new AbortController().signal } }),
    );
    assert.equal(report.collected, false);
    assert.deepEqual(report.releasedCids, []);
    assert.deepEqual(report.errors, ['release failed: pin <cid> could not be removed']);
    assert.equal(fake.records.get(cid)!.state, 'temporary', 'kept for the next run');
    assert.deepEqual(status.current().lastRun?.errors, report.errors);
    actor.stop();
    store.stop();
  });

  it('the scheduled collector starts only after the startup walk, runs non-dry and unforced, and skips while a run is in progress', async () => {
    const clock = new SimulatedClock();
    clock.set(Date.UTC(2030, 0, 1, 0, 0, 0));
    const fake = new FakeNode(directory);
    const h = start(fake, { clock, enabled: true, schedule: '*/10 * * * * *' });
    clock.increment(60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(fake.runs.length, 0, 'nothing before the walk finished');

    h.startup.complete({ intentsResolved: 0, backfilled: 0, skipped: 0 });
    clock.increment(10_000);
    await waitFor(() => fake.runs.length === 1, { what: 'the first scheduled run' });
    assert.equal(fake.runs[0]!.report.dryRun, false);
    assert.equal(fake.runs[0]!.report.trigger, 'none', 'not forced');
    assert.equal(h.afterRuns, 1);

    // A manual run holds the collector (waiting for the lease); the next tick is skipped, not queued.
    const upload = await h.store.openSession();
    const manual = h.run(false, false);
    await waitFor(async () => (await h.store.state()).lease.waitingExclusive === 1, { what: 'the manual run waiting' });
    clock.increment(10_000);
    await waitFor(() => h.log.lines.some((line) => line.msg === 'garbage collection skipped: a run is in progress'), { what: 'the skip' });
    upload();
    await manual;
    assert.equal(fake.runs.length, 2, 'the skipped tick did not run later');
    clock.increment(10_000);
    await waitFor(() => fake.runs.length === 3, { what: 'the next tick' });
    h.stop();
    clock.increment(60_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(fake.runs.length, 3, 'a stopped collector schedules nothing');
  });
});
