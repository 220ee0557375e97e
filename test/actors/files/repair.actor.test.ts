// `files.repair` on a real node (helia pins and the SQLite registry in a temporary store folder) with a fake copy
// client (which peer holds what): the counts of a batch, the persisted cursor across restarts, the reset on a policy
// change, one run at a time, the startup cycle and the schedule, a disabled repair, and shutdown between records
// (docs/specs/files-node.md §1.4, §2.3 rule 2, §4.3, §9.6; docs/notes/files-node.md A.4, C21).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import pLimit from 'p-limit';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { createActor, SimulatedClock } from 'xstate';
import { systemClock, type Clock } from '../../../src/clock.js';
import { requireCron } from '../../../src/cron.js';
import type { CopyClient, ProbeAnswer } from '../../../storage/files/peer-copy.libp2p.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { REPAIR_STATE_KEY, repairLogic, type RepairSettings } from '../../../actors/files/repair.actor.js';
import { RepairStatusBoard } from '../../../actors/files/repair-status.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { StartupSignal } from '../../../actors/files/startup.js';
import { RunInProgressError } from '../../../src/files/errors.js';
import { membershipVersion } from '../../../src/files/health.js';
import type { CopyOutcome, PlacementTier } from '../../../src/files/placement.js';
import { repairPolicyVersion, type RepairReport, type RepairState } from '../../../src/files/repair.js';
import type { FileRecord } from '../../../src/files/types.js';
import { acknowledgementTimes, startStore } from '../../support/files-store.js';
import { captureLogger } from '../../support/logger.js';
import { waitFor } from '../../support/wait.js';

const PEERS = ['peer-a', 'peer-b', 'peer-c'];
/** Four copies over three peers and this node: every peer is designated for every file, whatever the ranking. */
const PLACEMENT: PlacementTier[] = [{ minAgeMs: 0, copies: 4 }];

function settings(overrides: Partial<Omit<RepairSettings, 'schedule'>> & { schedule?: string } = {}): RepairSettings {
  const members = overrides.members ?? PEERS;
  const placement = overrides.placement ?? PLACEMENT;
  return {
    required: true,
    batchDelayMs: 1_000,
    probeConcurrency: 2,
    // Every copy asked on every pass, as the original did; the window has its own test.
    recheckMs: 0,
    members,
    placement,
    policyVersion: repairPolicyVersion(membershipVersion(members), placement),
    ...overrides,
    schedule: requireCron('test', overrides.schedule ?? '0 0 0 1 1 *'),
  };
}

/**
 * Which peer holds which CID; `store` decides what a placement does (default: stored). Peers answer `probeMany` as
 * the original node does (no holdings protocol: the real client asks `have` per CID, `fallbackConcurrency` at once)
 * unless `offersHoldings`: then one request answers every CID (recorded in `holdingsCalls`).
 */
class FakePeers implements CopyClient {
  readonly holds = new Map<string, Set<string>>(PEERS.map((peer) => [peer, new Set<string>()]));
  /** Every question about one CID, whichever way it was asked. */
  readonly haveCalls: Array<{ peer: string; cid: string }> = [];
  offersHoldings = false;
  readonly holdingsCalls: Array<{ peer: string; cids: readonly string[] }> = [];
  readonly placeCalls: Array<{ peer: string; cid: string }> = [];
  holdEverything = false;
  store: (peer: string, cid: string) => CopyOutcome = () => 'stored';
  /** When set, `have` waits for it (or for the signal: the real client answers false once aborted). */
  gate: Promise<void> | undefined;
  readonly signals: AbortSignal[] = [];

  async request(): Promise<never> {
    throw new Error('not used by repair');
  }

  async have(peer: string, cid: string, signal: AbortSignal): Promise<boolean> {
    this.haveCalls.push({ peer, cid });
    this.signals.push(signal);
    if (signal.aborted) return false;
    if (this.gate) {
      let onAbort!: () => void;
      const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', (onAbort = () => resolve()), { once: true }));
      await Promise.race([this.gate, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
      if (signal.aborted) return false;
    }
    return this.holdEverything || (this.holds.get(peer)?.has(cid) ?? false);
  }

  /** Peers whose `have` cannot be asked at all (the real client's `unknown`). */
  readonly unreachable = new Set<string>();

  async probe(peer: string, cid: string, signal: AbortSignal): Promise<ProbeAnswer> {
    if (this.unreachable.has(peer)) {
      this.haveCalls.push({ peer, cid });
      return 'unknown';
    }
    return (await this.have(peer, cid, signal)) ? 'held' : signal.aborted ? 'unknown' : 'missing';
  }

  async probeMany(peer: string, cids: readonly string[], signal: AbortSignal, fallbackConcurrency: number): Promise<ProbeAnswer[]> {
    if (!this.offersHoldings) return pLimit(fallbackConcurrency).map(cids, (cid) => (signal.aborted ? 'unknown' : this.probe(peer, cid, signal)));
    this.holdingsCalls.push({ peer, cids });
    for (const cid of cids) this.haveCalls.push({ peer, cid });
    if (this.unreachable.has(peer)) return cids.map(() => 'unknown');
    return cids.map((cid) => (this.holdEverything || this.holds.get(peer)?.has(cid) ? 'held' : 'missing'));
  }

  async place(peer: string, cid: string): Promise<CopyOutcome> {
    this.placeCalls.push({ peer, cid });
    const outcome = this.store(peer, cid);
    if (outcome === 'stored') this.holds.get(peer)!.add(cid);
    return outcome;
  }
}

interface Harness {
  peers: FakePeers;
  status: RepairStatusBoard;
  startup: StartupSignal;
  log: ReturnType<typeof captureLogger>;
  run(): Promise<RepairReport>;
  stop(): void;
}

function start(holder: NodeHolder, options: { peers?: FakePeers; settings?: RepairSettings; clock?: Clock; status?: RepairStatusBoard } = {}): Harness {
  const peers = options.peers ?? new FakePeers();
  const repair = options.settings ?? settings();
  const status = options.status ?? new RepairStatusBoard(repair.required);
  const startup = new StartupSignal();
  const log = captureLogger('debug');
  const clock = options.clock ?? systemClock;
  const owner = startStore(holder, { clock });
  const actor = createActor(repairLogic({ holder, clock, status, startup, settings: repair, copies: peers, store: owner.port, logger: log.logger }), { clock });
  actor.start();
  return {
    peers,
    status,
    startup,
    log,
    run: () => new Promise<RepairReport>((resolve, reject) => actor.send({ type: 'repair.run', reply: { resolve, reject, signal: new AbortController().signal } })),
    stop: () => {
      actor.stop();
      owner.stop();
    },
  };
}

async function rawCid(text: string): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(new TextEncoder().encode(text)));
}

describe('files.repair', () => {
  let home: string;
  let node: FilesNode;
  const holder = new NodeHolder();
  const T = Date.now() - 60_000;

  const record = (cid: string, partial: Partial<FileRecord> = {}): FileRecord => ({
    cid,
    state: 'confirmed',
    pinned: true,
    heldLocally: true,
    createdAt: T,
    expiresAt: null,
    confirmedAt: T,
    dagBytes: 5,
    origin: 'upload',
    ...partial,
  });

  /** A confirmed record whose content is stored and pinned here (this node can be the source). */
  async function pinnedFile(text: string): Promise<string> {
    const cid = await rawCid(text);
    await node.helia.blockstore.put(cid, new TextEncoder().encode(text));
    await node.pins.add(cid);
    node.registry.put(record(cid.toString()));
    return cid.toString();
  }

  /** `count` files pinned here with their records, in CID order (the order a batch reads them). */
  async function pinnedFiles(count: number, prefix: string): Promise<string[]> {
    const cids: string[] = [];
    for (let i = 0; i < count; i++) cids.push(await pinnedFile(`${prefix} ${i}`));
    return cids.sort();
  }

  /** `count` confirmed records (registry only: with every copy present nobody needs the content). */
  async function records(count: number, prefix: string): Promise<string[]> {
    const cids: string[] = [];
    for (let i = 0; i < count; i++) cids.push((await rawCid(`${prefix} ${i}`)).toString());
    node.registry.putMany(cids.map((cid) => record(cid)));
    return cids.sort();
  }

  const stored = () => node.registry.getState<RepairState>(REPAIR_STATE_KEY);

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'repair-actor-'));
    node = await startFilesNode({ storeDirectory: join(home, 'store'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder, logger: captureLogger('warn').logger });
    holder.set(node);
  });
  after(async () => {
    holder.set(undefined);
    await stopFilesNode(node);
    rmSync(home, { recursive: true, force: true });
  });
  beforeEach(() => {
    for (const entry of node.registry.list({ limit: 10_000 })) node.registry.delete(entry.cid);
    node.registry.deleteState(REPAIR_STATE_KEY);
  });

  it('notes acknowledgements: a confirmed or stored copy counts, "not here" strikes a peer off, an unreachable one keeps its own', async () => {
    const cid = await pinnedFile('acknowledgements');
    // Earlier knowledge: every peer once acknowledged a stored copy.
    node.registry.acknowledge(cid, PEERS, T);
    const h = start(holder);
    h.peers.holds.get('peer-a')!.add(cid); // still holds it
    h.peers.unreachable.add('peer-b'); // cannot be asked (and its copy cannot be placed either)
    // peer-c lost its copy and only caches when asked again: no acknowledgement.
    h.peers.store = (peer) => (peer === 'peer-c' ? 'cached' : 'failed');
    await h.run();
    assert.deepEqual(node.registry.acknowledgedBy(cid), ['peer-a', 'peer-b']);

    // peer-c stores it at the next pass: counted again.
    h.peers.store = () => 'stored';
    await h.run();
    assert.deepEqual(node.registry.acknowledgedBy(cid), PEERS);
    h.stop();
  });

  it('a batch\'s late "not here" strikes only older acknowledgements, not one noted while it ran (fault suite seed 7)', async () => {
    const cid = await pinnedFile('acknowledged while the batch ran');
    node.registry.acknowledge(cid, ['peer-a'], T); // an old copy peer-a has lost since
    const h = start(holder);
    // Nobody holds it and every placement fails; while peer-c's placement is tried, a handover probe hears peer-c
    // confirm the copy another node placed there (the store owner writes that note before the batch's arrives).
    h.peers.store = (peer, file) => {
      if (peer === 'peer-c') node.registry.acknowledge(file, ['peer-c'], Date.now());
      return 'failed';
    };
    const report = await h.run();
    assert.equal(report.stillMissing, 3);
    // The batch's note is written once peer-a's old acknowledgement is gone; peer-c's, newer than the question, stays.
    await waitFor(() => (node.registry.acknowledgedBy(cid).includes('peer-a') ? undefined : true), { what: 'the batch\'s note written' });
    assert.deepEqual(node.registry.acknowledgedBy(cid), ['peer-c']);
    h.stop();
  });

  it('a recheck window: a copy confirmed within it is not asked about again; an old or unknown one is, and its time refreshed', async () => {
    const DAY = 86_400_000;
    const cid = await pinnedFile('recheck window');
    const now = Date.now();
    node.registry.acknowledge(cid, ['peer-a'], now - 60_000); // confirmed a minute ago
    node.registry.acknowledge(cid, ['peer-b'], now - DAY - 1); // a whole window ago: past any share of it
    // peer-c never acknowledged a copy.
    const h = start(holder, { settings: settings({ recheckMs: DAY }) });
    h.peers.holdEverything = true;
    const first = await h.run();
    assert.deepEqual(h.peers.haveCalls.map((call) => call.peer).sort(), ['peer-b', 'peer-c']);
    assert.equal(first.checked, 1);
    assert.equal(first.stillMissing, 0);
    const times = await waitFor(() => {
      const known = acknowledgementTimes(node.registry, cid);
      return known.size === 3 && (known.get('peer-b') ?? 0) >= now ? known : undefined;
    }, { what: 'the batch\'s note written' });
    assert.equal(times.get('peer-a'), now - 60_000, 'a copy not asked about keeps its time');
    assert.ok(times.get('peer-c')! >= now);

    // Every copy is fresh now: the next pass examines the record and asks nobody (an unpaced batch in a cycle).
    h.peers.haveCalls.length = 0;
    const second = await h.run();
    assert.deepEqual(h.peers.haveCalls, []);
    assert.equal(second.examined, 1);
    assert.equal(second.checked, 0);
    assert.equal(second.stillMissing, 0);
    h.stop();
  });

  it('one batch: probes the designated peers, places the missing copies, counts what it could not do', async () => {
    const complete = await pinnedFile('all but one peer hold it');
    const failing = await pinnedFile('nobody holds it');
    const lost = (await rawCid('registered but not pinned here')).toString();
    node.registry.put(record(lost));
    const demoted = (await rawCid('handed over')).toString();
    node.registry.put(record(demoted, { pinned: false, heldLocally: false }));
    const temporary = (await rawCid('temporary')).toString();
    node.registry.put(record(temporary, { state: 'temporary', expiresAt: Date.now() + 60_000, confirmedAt: null }));

    const h = start(holder);
    h.peers.holds.get('peer-a')!.add(complete);
    h.peers.holds.get('peer-b')!.add(complete);
    // For `failing`: peer-a stores, peer-b only caches (no acknowledgement), peer-c fails.
    h.peers.store = (peer, cid) => (cid !== failing || peer === 'peer-a' ? 'stored' : peer === 'peer-b' ? 'cached' : 'failed');

    const report = await h.run();
    assert.deepEqual(
      { ...report, cycle: undefined },
      { examined: 4, checked: 3, underReplicated: 3, repaired: 1, stillMissing: 2, unrecoverable: 1, cycleCompleted: true, cycle: undefined },
      'the temporary file is not examined; the handed-over one is examined, not checked',
    );
    assert.equal(report.cycle!.examined, 4);
    assert.equal(report.cycle!.lastCompletedSuccessfully, false);
    assert.equal(report.cycle!.backlog, 3);
    assert.ok(report.cycle!.lastCompletedAt! >= report.cycle!.startedAt);

    const placed = (cid: string) => h.peers.placeCalls.filter((call) => call.cid === cid).map((call) => call.peer).sort();
    assert.deepEqual(placed(complete), ['peer-c'], 'only the missing copy is placed');
    assert.deepEqual(placed(failing), PEERS);
    assert.deepEqual(placed(lost), [], 'content not pinned here cannot be a source');
    assert.equal(h.peers.haveCalls.filter((call) => call.cid === demoted || call.cid === temporary).length, 0);

    // The evidence: persisted, on the board for health and metrics.
    const state = stored()!;
    assert.equal(state.version, 1);
    assert.equal(state.cursor, null, 'a short batch completes the cycle');
    assert.equal(state.last!.successful, false);
    assert.deepEqual(h.status.health(), { required: true, lastCompleteAt: state.last!.completedAt, backlog: 3, lastCycleSuccessful: false });
    assert.deepEqual(h.status.current(), { running: false, cycle: report.cycle });

    // The logs carry counts, never a CID or a peer.
    const pass = h.log.lines.find((line) => line.msg === 'repair pass finished');
    assert.equal(pass?.['examined'], 4);
    assert.equal(pass?.['origin'], 'manual');
    assert.ok(h.log.lines.some((line) => line.msg === 'repair cycle completed' && line['backlog'] === 3));
    const logs = JSON.stringify(h.log.lines);
    for (const secret of [complete, failing, lost, ...PEERS]) assert.ok(!logs.includes(secret), 'no CID or peer id in the logs');

    // The next batch is a new cycle: peer-b and peer-c now store the rest; `lost` stays unrecoverable.
    h.peers.store = () => 'stored';
    const second = await h.run();
    assert.deepEqual({ ...second, cycle: undefined }, { examined: 4, checked: 3, underReplicated: 2, repaired: 1, stillMissing: 0, unrecoverable: 1, cycleCompleted: true, cycle: undefined });
    assert.equal(h.status.health().backlog, 1);
    h.stop();
  });

  it('batches of 100 advance a persisted cursor that survives a restart; the cycle completes where it left off', async () => {
    const cids = await records(150, 'batch');
    const peers = new FakePeers();
    peers.holdEverything = true;
    const first = start(holder, { peers });
    const one = await first.run();
    assert.equal(one.examined, 100);
    assert.equal(one.checked, 100);
    assert.equal(one.cycleCompleted, false);
    assert.equal(one.cycle!.examined, 100);
    assert.equal(one.cycle!.lastCompletedAt, null);
    assert.equal(stored()!.cursor, cids[99], 'the last CID of the batch, in registry order');
    assert.equal(peers.placeCalls.length, 0, 'nothing missing, nothing placed');
    first.stop();

    const status = new RepairStatusBoard(true);
    const second = start(holder, { peers, status });
    assert.equal(status.current().cycle!.examined, 100, 'the restored cycle is on the board at start');
    const two = await second.run();
    assert.equal(two.examined, 50);
    assert.equal(two.cycleCompleted, true);
    assert.equal(two.cycle!.examined, 150);
    assert.equal(two.cycle!.lastCompletedSuccessfully, true);
    assert.equal(two.cycle!.backlog, 0);
    assert.equal(stored()!.cursor, null);
    assert.deepEqual(new Set(peers.haveCalls.map((call) => call.cid)), new Set(cids), 'every record probed once per cycle');
    assert.equal(peers.haveCalls.length, 150 * PEERS.length);
    second.stop();
  });

  it('evidence of another node list or placement policy, or of another format, is discarded at start', async () => {
    await records(3, 'policy');
    const peers = new FakePeers();
    peers.holdEverything = true;
    const h = start(holder, { peers });
    await h.run();
    assert.notEqual(h.status.health().lastCompleteAt, null);
    h.stop();

    const changed = start(holder, { peers, settings: settings({ members: ['peer-a', 'peer-b'] }) });
    assert.deepEqual(changed.status.health(), { required: true, lastCompleteAt: null, backlog: 0, lastCycleSuccessful: false });
    assert.equal(changed.status.current().cycle, null);
    const line = changed.log.lines.find((entry) => String(entry.msg).startsWith('repair evidence reset'));
    assert.ok(line, 'a line says so');
    assert.ok(!JSON.stringify(line).includes('peer-'), 'without peer ids');
    const fresh = await changed.run();
    assert.equal(stored()!.policyVersion, settings({ members: ['peer-a', 'peer-b'] }).policyVersion);
    assert.equal(fresh.cycle!.examined, 3, 'a new cycle');
    changed.stop();

    node.registry.setState(REPAIR_STATE_KEY, { version: 99 });
    const other = start(holder, { peers });
    assert.ok(other.log.lines.some((entry) => entry.level === 'warn' && String(entry.msg).startsWith('repair evidence reset')));
    assert.equal(other.status.health().lastCompleteAt, null);
    other.stop();
  });

  it('one run at a time: a request while a batch runs is refused with RunInProgressError', async () => {
    await records(2, 'overlap');
    const peers = new FakePeers();
    let open!: () => void;
    peers.gate = new Promise<void>((resolve) => (open = resolve));
    const h = start(holder, { peers });
    const first = h.run();
    await waitFor(() => peers.haveCalls.length > 0, { what: 'the batch to probe' });
    assert.equal(h.status.current().running, true);
    await assert.rejects(h.run(), (error: unknown) => error instanceof RunInProgressError && error.message === 'Replication repair is already running');
    open();
    const report = await first;
    assert.equal(report.examined, 2);
    assert.equal(h.status.current().running, false);
    assert.equal((await h.run()).examined, 2, 'the next request runs');
    h.stop();
  });

  it('a whole cycle after the startup walk, paced by the batch delay, then one per schedule tick; ticks while running are skipped', async () => {
    await records(150, 'cycle');
    const clock = new SimulatedClock();
    // 1 s past a 10 s boundary: the first tick comes 9 s later, inside the 15 s pause.
    clock.set(Date.UTC(2030, 0, 1, 0, 0, 1));
    const peers = new FakePeers();
    peers.holdEverything = true;
    const h = start(holder, { peers, clock, settings: settings({ schedule: '*/10 * * * * *', batchDelayMs: 15_000 }) });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(peers.haveCalls.length, 0, 'nothing before the walk');

    h.startup.complete({ intentsResolved: 0, backfilled: 0, skipped: 0 });
    await waitFor(() => h.status.current().cycle?.examined === 100, { what: 'the first batch' });
    assert.equal(h.status.current().running, true, 'a cycle is in progress between its batches');
    await assert.rejects(h.run(), (error: unknown) => error instanceof RunInProgressError);

    clock.increment(9_000);
    await waitFor(() => h.log.lines.some((line) => line.msg === 'scheduled repair skipped: a run is in progress'), { what: 'the skipped tick' });
    clock.increment(6_000);
    await waitFor(() => h.status.current().running === false, { what: 'the cycle to complete' });
    assert.equal(h.status.current().cycle!.examined, 150);
    assert.equal(h.status.health().lastCompleteAt, Date.UTC(2030, 0, 1, 0, 0, 16));
    assert.equal(peers.haveCalls.length, 150 * PEERS.length);

    clock.increment(4_000);
    await waitFor(() => peers.haveCalls.length === 250 * PEERS.length && h.status.current().running, { what: 'the next tick to start a cycle' });
    assert.equal(stored()!.cursor !== null, true);
    h.stop();
    assert.equal(h.status.current().running, false);
    clock.increment(60_000);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(peers.haveCalls.length, 250 * PEERS.length, 'a stopped actor runs nothing');
  });

  it('a cycle of batches that ask no peer lets timers and requests run between its batches, and logs each at debug only', async () => {
    await records(450, 'quiet');
    const peers = new FakePeers();
    // No other member: no record has a designated peer to ask, so no batch is paced (issue 30: a 1M store).
    const h = start(holder, { peers, settings: settings({ members: [], batchDelayMs: 60_000 }) });
    const seenBetween: number[] = [];
    const timer = setInterval(() => seenBetween.push(h.status.current().cycle?.examined ?? 0), 0);
    try {
      h.startup.complete({ intentsResolved: 0, backfilled: 0, skipped: 0 });
      await waitFor(() => h.status.health().lastCompleteAt !== null, { what: 'the cycle to complete' });
      assert.equal(h.status.current().cycle!.examined, 450);
      assert.equal(peers.haveCalls.length, 0);
      // Before, the five batches followed each other through promise callbacks alone: no timer ran until the end.
      assert.ok(seenBetween.some((examined) => examined > 0 && examined < 450), `a timer ran between batches (saw ${[...new Set(seenBetween)]})`);
      const passes = h.log.lines.filter((line) => line.msg === 'repair pass finished');
      assert.equal(passes.length, 5);
      assert.ok(passes.every((line) => line.level === 'debug'), 'batches that asked nobody are debug lines');
      assert.equal(h.log.lines.find((line) => line.msg === 'repair cycle completed')?.level, 'info', 'the cycle itself is an info line');
    } finally {
      clearInterval(timer);
      h.stop();
    }
  });

  it('a peer with the holdings protocol: one request per peer and batch, its answers kept apart per record', async () => {
    const cids = await pinnedFiles(10, 'holdings');
    const peers = new FakePeers();
    peers.offersHoldings = true;
    for (const cid of cids.slice(0, 6)) peers.holds.get('peer-a')!.add(cid);
    for (const cid of cids) peers.holds.get('peer-b')!.add(cid);
    peers.unreachable.add('peer-c');
    const h = start(holder, { peers, settings: settings({ probeConcurrency: 4 }) });
    const report = await h.run();
    assert.deepEqual(
      peers.holdingsCalls.map((call) => call.peer).sort(),
      PEERS,
      'each peer asked once',
    );
    for (const call of peers.holdingsCalls) assert.deepEqual(call.cids, cids, `${call.peer}: the batch's records, in its order`);
    assert.equal(report.checked, 10);
    assert.equal(report.underReplicated, 10, 'peer-c could not be asked about any');
    // peer-a lacks 4 copies and peer-c could not answer: both are asked to store them; peer-b holds every copy.
    const placed = (peer: string) => peers.placeCalls.filter((call) => call.peer === peer).map((call) => call.cid);
    assert.deepEqual(placed('peer-a'), cids.slice(6));
    assert.deepEqual(placed('peer-b'), []);
    assert.deepEqual(placed('peer-c'), cids);
    await waitFor(() => acknowledgementTimes(node.registry, cids[0]!).size === 3, { what: 'held copies noted from the answers, stored ones from the placements' });
    assert.deepEqual([...acknowledgementTimes(node.registry, cids[9]!).keys()].sort(), ['peer-a', 'peer-b', 'peer-c']);
    h.stop();
  });

  it('a peer without it (the original node): `have` per record, probeConcurrency in flight across records, never more', async () => {
    const cids = await pinnedFiles(10, 'overlap');
    const peers = new FakePeers();
    let inFlight = 0;
    let mostInFlight = 0;
    let release!: () => void;
    peers.gate = new Promise<void>((resolve) => (release = resolve));
    const counted = peers.have.bind(peers);
    peers.have = async (peer, cid, signal) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await counted(peer, cid, signal);
      } finally {
        inFlight--;
      }
    };
    const h = start(holder, { peers, settings: settings({ members: ['peer-a'], probeConcurrency: 4 }) });
    const pending = h.run();
    await waitFor(() => peers.haveCalls.length === 4, { what: 'four probes in flight' });
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(peers.haveCalls.length, 4, 'no fifth request while four are unanswered');
    assert.deepEqual(
      peers.haveCalls.map((call) => call.cid),
      cids.slice(0, 4),
      'the first four records at once',
    );
    release();
    const report = await pending;
    assert.equal(mostInFlight, 4);
    assert.equal(peers.haveCalls.length, 10, 'the one designated peer asked once per record');
    assert.equal(report.checked, 10);
    assert.equal(report.repaired, 10, 'nobody held a copy: each record placed after the probes');
    assert.deepEqual(
      peers.placeCalls.map((call) => call.cid),
      cids,
    );
    h.stop();
  });

  it('shutdown stops the batch between records: the signal reaches the probe, the cursor stays', async () => {
    await records(120, 'shutdown');
    const peers = new FakePeers();
    peers.gate = new Promise<void>(() => {});
    const h = start(holder, { peers });
    const pending = h.run();
    await waitFor(() => peers.haveCalls.length === 2, { what: 'the first record to be probed' });
    h.stop();
    await assert.rejects(pending, /replication repair stopped/);
    assert.ok(peers.signals.every((signal) => signal.aborted), 'every probe saw the abort');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(new Set(peers.haveCalls.map((call) => call.cid)).size, 1, 'no record after the stop');
    assert.equal(peers.placeCalls.length, 0);
    assert.equal(stored(), undefined, 'the unfinished batch is not recorded');
    assert.equal(h.status.current().running, false);
  });

  it('not required: a request answers an empty report; nothing runs after the walk; health sees repair as not required', async () => {
    await records(3, 'disabled');
    const peers = new FakePeers();
    const h = start(holder, { peers, settings: settings({ required: false, schedule: '* * * * * *' }) });
    h.startup.complete({ intentsResolved: 0, backfilled: 0, skipped: 0 });
    const report = await h.run();
    assert.deepEqual(report, { examined: 0, checked: 0, underReplicated: 0, repaired: 0, stillMissing: 0, unrecoverable: 0, cycleCompleted: false, cycle: null });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assert.equal(peers.haveCalls.length, 0);
    assert.equal(stored(), undefined);
    assert.equal(h.status.health().required, false);
    h.stop();
  });
});
