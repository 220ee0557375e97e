// The collector's handover (docs/notes/files-node.md A.4 rule 4c, rules 1, 6, 7; A.7 "collector handover"; docs/specs/files-node.md
// §2.8 `demoted`) on a real files node (helia, blockstore and SQLite registry in a temporary folder), with a fake
// CopyClient standing for the designated holders' answers to `have`, and fake member peer ids. The files are picked
// so that this node is outside their designated set, computed with the same placement function the collector uses.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { CID } from 'multiformats/cid';
import { createActor } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { requireCron } from '../../../src/cron.js';
import type { ContentSettings } from '../../../actors/files/content.actor.js';
import type { CopyClient, ProbeAnswer } from '../../../storage/files/peer-copy.libp2p.js';
import { gcLogic, HANDOVER_PROBE_CONCURRENCY } from '../../../actors/files/gc.actor.js';
import { GcStatusBoard } from '../../../actors/files/gc-status.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { StartupSignal } from '../../../actors/files/startup.js';
import type { GcReport, GcSettings } from '../../../src/files/gc.js';
import { confirmedRecord } from '../../../src/files/lifecycle.js';
import { placementOf } from '../../../src/files/placement.js';
import { downloadThroughContent } from '../../support/files-content.js';
import { startStore } from '../../support/files-store.js';
import { captureLogger } from '../../support/logger.js';

const NO_PRESSURE: GcSettings = { highWatermarkBytes: 1e12, lowWatermarkBytes: 1e11, diskReserveBytes: 0 };
/** Three other members (fake ids: only the fake CopyClient ever "dials" them) and two copies per file. */
const MEMBERS = ['12D3KooWFakeMemberA', '12D3KooWFakeMemberB', '12D3KooWFakeMemberC'];
const TIERS = [{ minAgeMs: 0, copies: 2 }];
const SCHEDULE = '0 */15 * * * *';

/** The designated holders' answers: which peer holds which CID; every `have` asked is recorded. */
class FakeHolders implements CopyClient {
  readonly holdings = new Map<string, Set<string>>();
  readonly asked: Array<{ peerId: string; cid: string }> = [];
  /** Peers that cannot be asked at all (the real client answers false; a throwing one must count as no too). */
  readonly unreachable = new Set<string>();
  inFlight = 0;
  maxInFlight = 0;

  hold(peerId: string, cid: string): void {
    if (!this.holdings.has(peerId)) this.holdings.set(peerId, new Set());
    this.holdings.get(peerId)!.add(cid);
  }

  async probe(peerId: string, cid: string): Promise<ProbeAnswer> {
    return (await this.have(peerId, cid).catch(() => undefined)) === undefined ? 'unknown' : this.holdings.get(peerId)?.has(cid) ? 'held' : 'missing';
  }

  async have(peerId: string, cid: string): Promise<boolean> {
    this.asked.push({ peerId, cid });
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2));
      if (this.unreachable.has(peerId)) throw new Error('dial failed');
      return this.holdings.get(peerId)?.has(cid) ?? false;
    } finally {
      this.inFlight--;
    }
  }

  async probeMany(): Promise<never> {
    throw new Error('not used by the collector');
  }

  async request(): Promise<never> {
    throw new Error('not used by the collector');
  }

  async place(): Promise<never> {
    throw new Error('not used by the collector');
  }
}

interface Stored {
  cid: CID;
  bytes: Uint8Array;
  /** The designated holders (this node is not among them for a handover file). */
  holders: readonly string[];
}

describe('files.gc handover (rule 4c) on a real node', () => {
  let home: string;
  let node: FilesNode;
  let holder: NodeHolder;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'gc-handover-'));
    holder = new NodeHolder();
    node = await startFilesNode({ storeDirectory: join(home, '.adm-ipfs'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder, logger: captureLogger('warn').logger });
    holder.set(node);
  });
  after(async () => {
    await stopFilesNode(node);
    rmSync(home, { recursive: true, force: true });
  });
  beforeEach(async () => {
    // Each case starts from an empty registry and pin set; blocks of earlier cases are unpinned read cache.
    for (const record of node.registry.list({ limit: 10_000 })) node.registry.delete(record.cid);
    for await (const pin of node.helia.pins.ls()) await node.pins.remove(pin.cid);
  });

  /** Stores, pins and registers (confirmed, held) new content for which this node is (or is not) designated. */
  async function store(designatedHere: boolean): Promise<Stored> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const bytes = new Uint8Array(randomBytes(2_000));
      const cid = await node.unixfs.addBytes(bytes);
      const { designated } = placementOf(cid.toString(), MEMBERS, node.peerId, TIERS, 1_000);
      if (designated.includes(node.peerId) !== designatedHere) continue;
      await node.pins.add(cid);
      node.registry.put(confirmedRecord(cid.toString(), Date.now() - 1_000, 'upload', bytes.byteLength));
      return { cid, bytes, holders: designated };
    }
    throw new Error('no CID with the wanted placement in 200 tries');
  }

  function collector(copies: CopyClient | undefined, enabled = true) {
    const owner = startStore(holder);
    const actor = createActor(
      gcLogic({
        holder,
        clock: systemClock,
        store: owner.port,
        status: new GcStatusBoard(false, SCHEDULE),
        startup: new StartupSignal(),
        settings: { gc: NO_PRESSURE, enabled: false, schedule: requireCron('test', SCHEDULE), replication: { enabled, placement: TIERS, members: MEMBERS } },
        ...(copies ? { copies } : {}),
        logger: captureLogger('warn').logger,
      }),
    );
    actor.start();
    const run = (dryRun: boolean, force = false) =>
      new Promise<GcReport>((resolve, reject) => actor.send({ type: 'gc.run', dryRun, force, reply: { resolve, reject, signal: new AbortController().signal } }));
    return {
      run,
      stop: () => {
        actor.stop();
        owner.stop();
      },
    };
  }

  /** Downloads through the content actor, as GET /api/file/{cid} does. */
  async function download(cid: CID): Promise<Buffer> {
    const settings: ContentSettings = {
      confirmationRequired: false,
      temporaryTtlMs: 60_000,
      findFileTimeoutMs: 2_000,
      downloadIdleTimeoutMs: 2_000,
      downloadMinBytesPerSecond: 1,
      downloadMaxDurationMs: 10_000,
      replication: { enabled: false, placement: TIERS, ackQuorum: 1, requireQuorumOnUpload: false, members: [] },
    };
    return downloadThroughContent(holder, cid, settings);
  }

  const isPinned = (cid: CID) => node.helia.pins.isPinned(cid);

  it('not demoted when one designated holder says no (or cannot be asked); every holder of the file is asked', async () => {
    const file = await store(false);
    const cid = file.cid.toString();
    const holders = new FakeHolders();
    holders.hold(file.holders[0]!, cid);
    const gc = collector(holders);
    try {
      const report = await gc.run(false);
      assert.deepEqual(report.demoted, []);
      assert.deepEqual([...report.retainedCids], [cid]);
      assert.deepEqual(holders.asked.map((probe) => probe.peerId).sort(), [...file.holders].sort(), 'both designated holders, and only them');
      assert.deepEqual(node.registry.acknowledgedBy(cid), [file.holders[0]], 'the holder that confirmed its copy is noted for the file status');

      holders.hold(file.holders[1]!, cid);
      holders.unreachable.add(file.holders[1]!);
      assert.deepEqual((await gc.run(false)).demoted, [], 'a holder that cannot be asked is no confirmation');

      const record = node.registry.get(cid)!;
      assert.equal(record.state, 'confirmed');
      assert.equal(record.pinned, true);
      assert.equal(record.heldLocally, true);
      assert.equal(await isPinned(file.cid), true);
    } finally {
      gc.stop();
    }
  });

  it('a dry run probes and lists what it would demote, and changes nothing (rule 1)', async () => {
    const file = await store(false);
    const cid = file.cid.toString();
    const holders = new FakeHolders();
    for (const peerId of file.holders) holders.hold(peerId, cid);
    const gc = collector(holders);
    try {
      const report = await gc.run(true);
      assert.equal(report.dryRun, true);
      assert.deepEqual(report.demoted, [cid]);
      assert.deepEqual([...report.retainedCids], []);
      assert.equal(holders.asked.length, file.holders.length);
      assert.deepEqual(node.registry.get(cid), confirmedRecord(cid, node.registry.get(cid)!.createdAt, 'upload', file.bytes.byteLength));
      assert.equal(await isPinned(file.cid), true, 'still pinned');
    } finally {
      gc.stop();
    }
  });

  it('demoted once every holder confirms: record confirmed, unpinned, not held; the pin is not restored; the file is still served locally until collected', async () => {
    const away = await store(false);
    const home = await store(true);
    const cid = away.cid.toString();
    const holders = new FakeHolders();
    for (const peerId of away.holders) holders.hold(peerId, cid);
    // The holders would confirm the file this node is designated for too: it is never even asked about.
    for (const peerId of MEMBERS) holders.hold(peerId, home.cid.toString());
    const gc = collector(holders);
    try {
      const report = await gc.run(false);
      assert.equal(report.trigger, 'none', 'handover does not wait for pressure');
      assert.deepEqual(report.demoted, [cid]);
      assert.deepEqual([...report.retainedCids], [home.cid.toString()]);
      assert.deepEqual(report.releasedCids, []);
      assert.deepEqual(report.repairedPins, [], 'pin verification leaves the handed-over pin dropped (rule 6)');
      assert.deepEqual(report.errors, []);
      assert.ok(holders.asked.every((probe) => probe.cid === cid));

      const record = node.registry.get(cid)!;
      assert.equal(record.state, 'confirmed');
      assert.equal(record.pinned, false);
      assert.equal(record.heldLocally, false);
      assert.equal(record.confirmedAt, record.createdAt, 'the record is kept as it was otherwise');
      assert.equal(await isPinned(away.cid), false);
      assert.equal(await isPinned(home.cid), true);

      assert.deepEqual(await download(away.cid), Buffer.from(away.bytes), 'releasing is not deleting: the blocks still serve');

      // A later run does not ask about a demoted file again; a forced one collects its blocks.
      holders.asked.length = 0;
      const forced = await gc.run(false, true);
      assert.deepEqual(forced.demoted, []);
      assert.equal(holders.asked.length, 0);
      assert.equal(forced.collected, true);
      assert.equal(await node.store.blockstore.has(away.cid), false, 'collected');
      assert.equal(await node.store.blockstore.has(home.cid), true);
      assert.equal(node.registry.get(cid)!.state, 'confirmed', 'the record outlives the local copy');
    } finally {
      gc.stop();
    }
  });

  it('rule 7: a file deleted and uploaded again between the probes and the demotion is left alone', async () => {
    const file = await store(false);
    const cid = file.cid.toString();
    const holders = new FakeHolders();
    for (const peerId of file.holders) holders.hold(peerId, cid);
    // The record changes while the run is between planning and applying: the lease is held by an "upload".
    const owner = startStore(holder);
    const upload = await owner.openSession();
    const actor = createActor(
      gcLogic({
        holder,
        clock: systemClock,
        store: owner.port,
        status: new GcStatusBoard(false, SCHEDULE),
        startup: new StartupSignal(),
        settings: { gc: NO_PRESSURE, enabled: false, schedule: requireCron('test', SCHEDULE), replication: { enabled: true, placement: TIERS, members: MEMBERS } },
        copies: holders,
        logger: captureLogger('warn').logger,
      }),
    );
    actor.start();
    try {
      const pending = new Promise<GcReport>((resolve, reject) =>
        actor.send({ type: 'gc.run', dryRun: false, force: false, reply: { resolve, reject, signal: new AbortController().signal } }),
      );
      for (let i = 0; i < 500 && (await owner.state()).lease.waitingExclusive === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal((await owner.state()).lease.waitingExclusive, 1, 'the planned run waits for the lease');
      // Meanwhile the file is deleted and uploaded again: a different record (createdAt) for the same CID.
      node.registry.put({ ...node.registry.get(cid)!, createdAt: Date.now() });
      upload();
      const report = await pending;
      assert.deepEqual(report.demoted, []);
      assert.deepEqual([...report.retainedCids], [cid]);
      assert.equal(node.registry.get(cid)!.heldLocally, true);
      assert.equal(await isPinned(file.cid), true);
    } finally {
      actor.stop();
      owner.stop();
    }
  });

  it('probes are bounded in concurrency; without replication or a copy client nothing is probed or demoted', async () => {
    const files: Stored[] = [];
    for (let i = 0; i < 6; i++) files.push(await store(false));
    const holders = new FakeHolders();
    for (const file of files) for (const peerId of file.holders) holders.hold(peerId, file.cid.toString());

    const disabled = collector(holders, false);
    try {
      assert.deepEqual((await disabled.run(true)).demoted, []);
      assert.equal(holders.asked.length, 0, 'replication disabled: nobody asked');
    } finally {
      disabled.stop();
    }
    const noClient = collector(undefined);
    try {
      assert.deepEqual((await noClient.run(true)).demoted, []);
    } finally {
      noClient.stop();
    }

    const gc = collector(holders);
    try {
      const report = await gc.run(true);
      assert.deepEqual(report.demoted, files.map((file) => file.cid.toString()).sort());
      assert.equal(holders.asked.length, 12, 'two holders per file');
      assert.ok(holders.maxInFlight <= HANDOVER_PROBE_CONCURRENCY, `at most ${HANDOVER_PROBE_CONCURRENCY} at once (saw ${holders.maxInFlight})`);
      assert.ok(holders.maxInFlight > 1, 'the probes overlap');
    } finally {
      gc.stop();
    }
  });
});
