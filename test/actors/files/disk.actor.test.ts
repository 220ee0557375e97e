// `files.disk` on its own: what a scan measures on a real folder, the schedule (one scan at start, cron ticks,
// rescans, never two at once) under a simulated clock, and the disk-claim arithmetic of notes A.9 against exact
// free-space readings (docs/specs/files-node.md §2.6, §4.2 507, §8).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createActor, SimulatedClock } from 'xstate';
import { systemClock, type Clock } from '../../../src/clock.js';
import { requireCron } from '../../../src/cron.js';
import { diskLogic, type DiskClaim, type DiskProbe, type DiskSnapshot } from '../../../actors/files/disk.actor.js';
import { GcStatusBoard } from '../../../actors/files/gc-status.js';
import type { RegistryFigures } from '../../../actors/files/node.js';
import { InsufficientStorageError } from '../../../src/files/errors.js';
import { captureLogger } from '../../support/logger.js';
import { waitFor } from '../../support/wait.js';

/** The registry's answers to the three questions the scan asks; `intentSessions`: the pin-intent markers' sessions. */
function figuresOf(pinnedBytes: number, counts = { temporary: 1, confirmed: 2, expired: 3 }, intentSessions: readonly string[] = []): () => RegistryFigures {
  const intents = () => intentSessions.map((sessionId, i) => ({ cid: `cid-${i}`, sessionId, createdAt: 0 }));
  return () => ({ pinnedBytes: () => pinnedBytes, counts: () => ({ ...counts }), intents });
}

interface Harness {
  actor: ReturnType<typeof createActor<ReturnType<typeof diskLogic>>>;
  snapshot(): Promise<DiskSnapshot>;
  claim(bytes: number, signal?: AbortSignal): Promise<DiskClaim>;
}

function startDisk(options: { storeDirectory?: string; probe?: DiskProbe; reserve?: number; schedule?: string; clock?: Clock; figures?: () => RegistryFigures; logger?: ReturnType<typeof captureLogger> }): Harness {
  const clock = options.clock ?? systemClock;
  const actor = createActor(
    diskLogic({
      storeDirectory: options.storeDirectory ?? '/nonexistent-store',
      schedule: requireCron('test', options.schedule ?? '0 0 0 1 1 *'),
      diskReserveBytes: options.reserve ?? 0,
      figures: options.figures ?? figuresOf(0),
      gcStatus: () => new GcStatusBoard(true, '0 */15 * * * *').current(),
      clock,
      logger: (options.logger ?? captureLogger('warn')).logger,
      probe: options.probe,
    }),
    { clock },
  );
  actor.start();
  const ask = <T>(event: Record<string, unknown>, signal = new AbortController().signal) =>
    new Promise<T>((resolve, reject) => actor.send({ ...event, reply: { resolve, reject, signal } } as never));
  return {
    actor,
    snapshot: () => ask<DiskSnapshot>({ type: 'disk.snapshot' }),
    claim: (bytes, signal) => ask<DiskClaim>({ type: 'disk.claim', bytes }, signal),
  };
}

/** A probe with fixed free space and instant, counted directory walks. */
function fixedProbe(free: { bytes: number }): DiskProbe & { walks: number } {
  const probe = {
    walks: 0,
    async directoryBytes() {
      probe.walks++;
      return 0;
    },
    async freeBytes() {
      return free.bytes;
    },
  };
  return probe;
}

/** Folder walks that finish only when `open()` is called (each answers `bytes`), counted; free space 1,000. */
function gatedWalker(bytes: number) {
  const gates: Array<() => void> = [];
  let active = 0;
  const counts = { walks: 0, maxActive: 0 };
  const walker = Object.assign(counts, {
    probe: {
      async directoryBytes() {
        counts.walks++;
        active++;
        counts.maxActive = Math.max(counts.maxActive, active);
        await new Promise<void>((resolve) => gates.push(resolve));
        active--;
        return bytes;
      },
      async freeBytes() {
        return 1_000;
      },
    } satisfies DiskProbe,
    async open() {
      while (gates.length > 0) gates.shift()!();
      await flush();
    },
  });
  return walker;
}

const flush = async (times = 5) => {
  for (let i = 0; i < times; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('disk-usage scan', () => {
  it('measures the blockstore and datastore folders, free space, pinned bytes and counts at start', async () => {
    const store = mkdtempSync(join(tmpdir(), 'disk-scan-'));
    try {
      mkdirSync(join(store, 'blockstore', 'AB'), { recursive: true });
      mkdirSync(join(store, 'datastore', 'pins'), { recursive: true });
      writeFileSync(join(store, 'blockstore', 'AB', 'one.data'), Buffer.alloc(3000));
      writeFileSync(join(store, 'blockstore', 'two.data'), Buffer.alloc(1000));
      writeFileSync(join(store, 'datastore', 'pins', 'p.data'), Buffer.alloc(250));
      // Files outside the two folders (the registry) are not part of either size.
      writeFileSync(join(store, 'registry.sqlite'), Buffer.alloc(9999));
      const before = Date.now();
      // Two markers of strict uploads (staged copies) and one of an ordinary upload mid-commit.
      const disk = startDisk({ storeDirectory: store, figures: figuresOf(1500, undefined, ['staged-a', 'staged-b', 'plain-c']) });
      try {
        const { measurement, gc, claimedBytes } = await waitFor(async () => {
          const snapshot = await disk.snapshot();
          return snapshot.measurement ? snapshot : undefined;
        }, { what: 'the first scan' });
        assert.ok(measurement);
        assert.equal(measurement.blockstoreBytes, 4000);
        assert.equal(measurement.datastoreBytes, 250);
        assert.equal(measurement.pinnedBytes, 1500);
        assert.equal(measurement.reclaimableBytes, 2500, 'blockstore bytes no pin protects');
        assert.deepEqual(measurement.files, { temporary: 1, confirmed: 2, expired: 3 });
        assert.equal(measurement.stagedReplicas, 2, 'only the markers of strict sessions');
        assert.ok(measurement.availableBytes > 0 && Number.isSafeInteger(measurement.availableBytes));
        assert.ok(measurement.measuredAt >= before && measurement.measuredAt <= Date.now());
        assert.deepEqual(gc, { enabled: true, schedule: '0 */15 * * * *', running: false, lastRun: null });
        assert.equal(claimedBytes, 0);
      } finally {
        disk.actor.stop();
      }
    } finally {
      rmSync(store, { recursive: true, force: true });
    }
  });

  it('reclaimable bytes never go below 0 when pins cover more than the blockstore holds', async () => {
    const disk = startDisk({ probe: fixedProbe({ bytes: 10 }), figures: figuresOf(5000) });
    try {
      const { measurement } = await waitFor(async () => ((await disk.snapshot()).measurement ? disk.snapshot() : undefined));
      assert.equal(measurement!.reclaimableBytes, 0);
    } finally {
      disk.actor.stop();
    }
  });

  it('scans once at start, then on each cron tick; a rescan while scanning runs once more afterwards, never alongside', async () => {
    const clock = new SimulatedClock();
    clock.set(Date.UTC(2030, 0, 1, 0, 0, 0, 500));
    const walker = gatedWalker(100);
    const disk = startDisk({ probe: walker.probe, clock, schedule: '* * * * * *', figures: figuresOf(0) });
    try {
      await flush();
      assert.equal(walker.walks, 2, 'the scan at start walks both folders');
      const atStart = await disk.snapshot();
      assert.equal(atStart.measurement, null, 'nothing measured before the first scan finished');
      assert.deepEqual(atStart.reserve, { measuredAt: clock.now(), availableBytes: 1_000 }, 'the scan read the free space at once');

      disk.actor.send({ type: 'disk.rescan' });
      disk.actor.send({ type: 'disk.rescan' });
      clock.increment(5_000);
      await flush();
      assert.equal(walker.walks, 2, 'no second scan while one runs (rescans wait, the tick does not walk)');

      await walker.open();
      assert.equal(walker.walks, 4, 'exactly one more scan after the running one, for both rescans');
      await walker.open();
      assert.equal(walker.walks, 4, 'then idle until the next tick');
      const measured = (await disk.snapshot()).measurement!;
      assert.equal(measured.measuredAt, clock.now());
      assert.equal(measured.blockstoreBytes, 100);

      clock.increment(499);
      await flush();
      assert.equal(walker.walks, 4, 'the next whole second has not come yet');
      clock.increment(1);
      await flush();
      assert.equal(walker.walks, 6, 'the cron tick scans');
      await walker.open();
      assert.equal(walker.maxActive, 2, 'at most the two folder walks of one scan at a time');
    } finally {
      disk.actor.stop();
      void walker.open();
    }
  });

  it('a scan longer than its period is followed by a rest as long as itself', async () => {
    const clock = new SimulatedClock();
    clock.set(Date.UTC(2030, 0, 1, 0, 0, 0, 0));
    const walker = gatedWalker(100);
    const logs = captureLogger('info');
    const disk = startDisk({ probe: walker.probe, clock, schedule: '* * * * * *', logger: logs });
    try {
      await flush();
      for (let second = 1; second <= 3; second++) {
        clock.increment(1_000);
        await flush();
      }
      assert.equal(walker.walks, 2, 'ticks during the 3 s scan do not walk');
      await walker.open();
      assert.ok(logs.lines.some((line) => String(line.msg).startsWith('disk-usage scan outlasted its period') && line.durationMs === 3_000), 'an info line says so');
      for (let second = 4; second <= 5; second++) {
        clock.increment(1_000);
        await flush();
        assert.equal(walker.walks, 2, `the tick at ${second} s falls in the 3 s rest`);
      }
      clock.increment(1_000);
      await flush();
      assert.equal(walker.walks, 4, 'the first tick after the rest (6 s) walks');
    } finally {
      disk.actor.stop();
      void walker.open();
    }
  });

  it('a health attempt reads the free space now: it waits for that statfs, never for a walk; a failed one keeps the last', async () => {
    const clock = new SimulatedClock();
    clock.set(Date.UTC(2030, 0, 1));
    const walker = gatedWalker(100);
    const statfs: Array<(free: number | Error) => void> = [];
    const probe: DiskProbe = {
      directoryBytes: walker.probe.directoryBytes,
      freeBytes: () => new Promise<number>((resolve, reject) => statfs.push((free) => (free instanceof Error ? reject(free) : resolve(free)))),
    };
    const logs = captureLogger('warn');
    const disk = startDisk({ probe, clock, logger: logs });
    const attempt = () => {
      let answered: DiskSnapshot | undefined;
      void new Promise<DiskSnapshot>((resolve, reject) =>
        disk.actor.send({ type: 'disk.snapshot', readFreeSpace: true, reply: { resolve, reject, signal: new AbortController().signal } }),
      ).then((snapshot) => (answered = snapshot));
      return () => answered;
    };
    try {
      await flush();
      assert.equal(statfs.length, 1, 'the scan at start asked statfs (and waits for its walks)');
      const first = attempt();
      await flush();
      assert.equal(statfs.length, 2, 'the attempt asked statfs itself');
      assert.equal(first(), undefined, 'it waits while statfs runs');
      clock.increment(1_000);
      statfs[1]!(5_000);
      await flush();
      assert.deepEqual(first()?.reserve, { measuredAt: clock.now(), availableBytes: 5_000 }, 'answered with the reading it asked for');
      assert.equal(first()?.measurement, null, 'while the walk still runs');

      const failed = attempt();
      await flush();
      clock.increment(1_000);
      statfs[2]!(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
      await flush();
      assert.deepEqual(failed()?.reserve, { measuredAt: clock.now() - 1_000, availableBytes: 5_000 }, 'the last reading, which ages');
      assert.ok(logs.lines.some((line) => line.msg === 'free-space reading failed'));

      const plain = await disk.snapshot();
      assert.equal(statfs.length, 3, 'a read without readFreeSpace asks nothing');
      assert.equal(plain.reserve?.availableBytes, 5_000);
    } finally {
      disk.actor.stop();
      void walker.open();
    }
  });

  it('a failed scan keeps the previous measurement and logs a warning', async () => {
    const failing = { fail: false };
    const probe: DiskProbe = {
      async directoryBytes() {
        if (failing.fail) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        return 7;
      },
      async freeBytes() {
        return 1;
      },
    };
    const logs = captureLogger('warn');
    const disk = startDisk({ probe, logger: logs });
    try {
      const first = await waitFor(async () => (await disk.snapshot()).measurement ?? undefined);
      failing.fail = true;
      disk.actor.send({ type: 'disk.rescan' });
      await waitFor(() => logs.lines.some((line) => line.msg === 'disk-usage scan failed'), { what: 'the warning' });
      assert.deepEqual((await disk.snapshot()).measurement, first);
    } finally {
      disk.actor.stop();
    }
  });
});

describe('disk claims (notes A.9)', () => {
  it('admits while free − claimed − request ≥ reserve; two claims together past the margin: the second is refused', async () => {
    const free = { bytes: 1_000 };
    const disk = startDisk({ probe: fixedProbe(free), reserve: 300 });
    try {
      const first = await disk.claim(400);
      await assert.rejects(disk.claim(400), (error: unknown) => error instanceof InsufficientStorageError && error.name === 'InsufficientStorageError');
      assert.equal((await disk.snapshot()).claimedBytes, 400, 'a refused claim books nothing');
      const exact = await disk.claim(300);
      assert.equal((await disk.snapshot()).claimedBytes, 700, 'reaching the reserve exactly is allowed: 1000 − 400 − 300 = 300');
      await assert.rejects(disk.claim(1), InsufficientStorageError);

      first.release();
      first.release();
      assert.equal((await disk.snapshot()).claimedBytes, 300, 'release frees the claim once, however often it is called');
      const again = await disk.claim(400);
      again.release();
      exact.release();
      assert.equal((await disk.snapshot()).claimedBytes, 0);
    } finally {
      disk.actor.stop();
    }
  });

  it('reads free space at claim time, not from the last scan', async () => {
    const free = { bytes: 10_000 };
    const disk = startDisk({ probe: fixedProbe(free), reserve: 1_000 });
    try {
      await waitFor(async () => (await disk.snapshot()).measurement ?? undefined);
      await disk.claim(5_000).then((claim) => claim.release());
      free.bytes = 2_000; // the disk filled up since the scan
      assert.equal((await disk.snapshot()).measurement!.availableBytes, 10_000, 'the scan still says 10 000');
      await assert.rejects(disk.claim(5_000), InsufficientStorageError);
      await disk.claim(1_000).then((claim) => claim.release());
    } finally {
      disk.actor.stop();
    }
  });

  it('concurrent claims cannot both take the same headroom', async () => {
    const disk = startDisk({ probe: fixedProbe({ bytes: 1_000 }), reserve: 0 });
    try {
      const results = await Promise.allSettled([disk.claim(600), disk.claim(600), disk.claim(600)]);
      assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected']);
      assert.equal((await disk.snapshot()).claimedBytes, 600);
    } finally {
      disk.actor.stop();
    }
  });

  it('a claim whose asker gave up is not booked; a nonsensical size is refused', async () => {
    const disk = startDisk({ probe: fixedProbe({ bytes: 1_000 }), reserve: 0 });
    try {
      const controller = new AbortController();
      const pending = disk.claim(100, controller.signal);
      controller.abort(new Error('client went away'));
      await assert.rejects(pending);
      assert.equal((await disk.snapshot()).claimedBytes, 0);
      await assert.rejects(disk.claim(-1), RangeError);
      await assert.rejects(disk.claim(Number.NaN), RangeError);
    } finally {
      disk.actor.stop();
    }
  });

  it('on the real filesystem: a reserve above the free space refuses even a 1-byte claim; no reserve admits', async () => {
    const store = mkdtempSync(join(tmpdir(), 'disk-claim-'));
    try {
      mkdirSync(join(store, 'blockstore'));
      const full = startDisk({ storeDirectory: store, reserve: Number.MAX_SAFE_INTEGER });
      const roomy = startDisk({ storeDirectory: store, reserve: 0 });
      try {
        await assert.rejects(full.claim(1), InsufficientStorageError);
        (await roomy.claim(1)).release();
      } finally {
        full.actor.stop();
        roomy.actor.stop();
      }
    } finally {
      rmSync(store, { recursive: true, force: true });
    }
  });
});
