// One seeded fault run against a three-node files cluster (issue 29): real processes in network namespaces
// (network.ts, fault-nodes.ts), a TCP fault proxy between two of them (fault-proxy.ts), the plan of fault-plan.ts.
//
//   setup     three namespaces, tmpfs HOMEs, peer ids from a first boot, the nodes started and ready
//   faults    the planned faults (mostly one after the other) while a workload uploads requests of 1-3 files of varied
//             sizes to random nodes, downloads them back, confirms temporaries, unpins and re-pins durable files, runs
//             GC and repair batches; health and the pins of designated holders are watched
//   heal      every fault removed, stopped nodes started again, peering, repair cycles on every node, a GC run on each
//   checks    the invariants below; any breach is a violation with what was seen and when
//
// Invariants (issue 29 §2):
//   1. every acknowledged upload (200) downloads byte-identical from every node, and once repair has run every
//      designated holder reports it confirmed, pinned and held, with the same acknowledged count on each;
//   2. every refused or rolled-back upload (503, 507) left no pinned copy and no record on any node (per CID: unless
//      another upload of the same bytes was acknowledged);
//   3. no designated holder's copy of a durable file was unpinned (watched during the run) or demoted, released or
//      deleted by a GC run (every GC report the harness asks for);
//   4. a node cut off from its peers (partition, split, disk reserve) left `ready` while cut off; every node is
//      `ready` after healing; no node's height ever went backwards (across restarts too);
//   5. no process exited that the harness did not stop, no actor crashed or was restarted, and every request got an
//      answer or a clean connection close (a close only from a node the harness killed or stopped meanwhile);
//   plus: on every node each known CID's record agrees with its pin, no pin lacks a record, no staged copy is left.

import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { placementOf } from '../../../src/files/placement.js';
import { firstBootPeerId } from '../files-cluster.js';
import { prng } from '../random.js';
import { FaultNode, FAULT_KEY, HTTP_PORT, P2P_PORT, cidOfBytes, httpCall, multipartBody, sha256Hex, type HttpCall, type HttpOutcome } from './fault-nodes.js';
import { CUTTING_FAULTS, describeFault, describePlan, NODE_NAMES, type FaultPlan, type NodeName, type PlannedFault } from './fault-plan.js';
import { FaultProxy } from './fault-proxy.js';
import { FaultNetwork, FAULT_PREFIX, nftBinary, sweepLeftovers, type NetNode } from './network.js';

const MIB = 1024 * 1024;
/** The disk reserve each node keeps on its tmpfs; the reserve fault leaves half of it free. */
const RESERVE_BYTES = 24 * MIB;
const REQUEST_TIMEOUT_MS = 4_000;
/** A request that gets no answer for this long hangs (every server-side bound is far shorter). */
const UPLOAD_HANG_MS = 90_000;
const CALL_HANG_MS = 45_000;
const HEALTH_POLL_MS = 600;
const PIN_AUDIT_MS = 2_500;
/** A cut shorter than this need not show in health (an attempt, its attestation timeout and a poll). */
const MIN_CUT_FOR_HEALTH_MS = 5_500;
const READY_TIMEOUT_MS = 90_000;
const FINAL_READY_TIMEOUT_MS = 60_000;

export interface FaultRunOptions {
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
  /** Keep the run folder (node logs, configs) when the run found a violation (default true). */
  readonly keepOnFailure?: boolean;
  /** Keep it whatever the outcome. */
  readonly keep?: boolean;
}

export interface FaultRunResult {
  readonly seed: number;
  readonly violations: string[];
  /** What ran: counts per outcome and fault. */
  readonly summary: string;
  readonly plan: string;
  /** Where the node logs were kept (only after a violation). */
  readonly keptDir?: string;
  readonly ms: number;
}

interface UploadRecord {
  readonly id: number;
  readonly node: NodeName;
  readonly cid: string;
  readonly size: number;
  readonly sha256: string;
  readonly bytes: Uint8Array;
  outcome: 'pending' | 'acknowledged' | 'refused' | 'unknown';
  status?: number;
  /** When the answer (or the close) came, as `+s` into the fault phase. */
  answered?: string;
  temporary?: boolean;
  /** A temporary this run confirmed (200): durable from then on. */
  confirmed?: boolean;
  acknowledged?: number;
  required?: number;
  startedAt: number;
}

interface HealthReading {
  readonly at: number;
  readonly node: NodeName;
  readonly life: number;
  readonly state: string;
  readonly height: number;
}

interface AppliedFault {
  readonly fault: PlannedFault;
  startedAt: number;
  endedAt?: number;
  skipped?: string;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Bytes from a seeded stream (mulberry32 words). */
function seededBytes(random: () => number, size: number): Uint8Array {
  const words = new Uint32Array(Math.ceil(size / 4));
  for (let i = 0; i < words.length; i++) words[i] = Math.floor(random() * 4294967296);
  return new Uint8Array(words.buffer, 0, size);
}

/** Synchronous last-resort cleanups of the runs in progress (a script's second Ctrl-C). */
const activeRuns = new Set<() => void>();

/** kill -9 every node of every run in progress and delete their networks and mounts, at once. */
export function abortActiveRuns(): void {
  for (const cleanup of [...activeRuns]) cleanup();
}

let exitHookInstalled = false;
/** A process that ends with a run in progress (a test timed out, an uncaught error) takes its nodes along. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', abortActiveRuns);
}

export async function runFaultPlan(plan: FaultPlan, options: FaultRunOptions = {}): Promise<FaultRunResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const violations: string[] = [];
  const violate = (text: string) => {
    violations.push(text);
    log(`VIOLATION: ${text}`);
  };
  const since = () => `+${((Date.now() - phaseStart) / 1000).toFixed(1)} s`;
  let phaseStart = Date.now();

  for (const removed of sweepLeftovers()) log(`swept a leftover of an earlier run: ${removed}`);
  const runDir = mkdtempSync(join(tmpdir(), `${FAULT_PREFIX}-${process.pid.toString(36)}-`));
  let network: FaultNetwork | undefined;
  const nodes = new Map<NodeName, FaultNode>();
  const proxies: FaultProxy[] = [];
  const { variant } = plan;
  let keep = false;

  const uploads: UploadRecord[] = [];
  const readings: HealthReading[] = [];
  const applied: AppliedFault[] = [];
  const maxHeight = new Map<NodeName, { height: number; at: number; life: number }>();
  /** Bumped whenever the harness kills or stops a node: a request that saw it change may end in a close. */
  const disruptions = new Map<NodeName, number>(NODE_NAMES.map((name) => [name, 0]));
  /** Nodes the workload may address (running and answering). */
  const available = new Set<NodeName>();
  /** (node, cid) pairs a designated holder was seen to hold confirmed and pinned. */
  const held = new Map<string, number>();
  /** (node, cid) pairs the workload unpinned (released on purpose) and has not pinned again yet. */
  const released = new Set<string>();
  const counts: Record<string, number> = {};
  const count = (key: string) => void (counts[key] = (counts[key] ?? 0) + 1);

  const node = (name: NodeName) => nodes.get(name)!;
  const peerIds = () => NODE_NAMES.map((name) => node(name).peerId);
  const designatedOf = (cid: string): NodeName[] => {
    const ids = peerIds();
    const placement = placementOf(cid, ids, ids[0]!, [{ minAgeMs: 0, copies: variant.copies }], 0);
    return placement.designated.map((id) => NODE_NAMES[ids.indexOf(id)]!);
  };

  /** A call that must be answered or cleanly closed: a hang is a violation, and so is a close from a node left alone. */
  const call = async (name: NodeName, request: HttpCall, what: string, streamed = false): Promise<HttpOutcome> => {
    const before = disruptions.get(name);
    const outcome = await httpCall(node(name), request);
    if (outcome.kind === 'timeout') violate(`${since()} ${what} on ${name}: no answer within ${request.timeoutMs} ms (a hang)`);
    else if (outcome.kind === 'closed' && outcome.afterHeaders && streamed) {
      // Spec §4.2: a download that fails after its first bytes is terminated, a clean close.
      count('download cut after its first bytes');
    } else if (outcome.kind === 'closed' && disruptions.get(name) === before && available.has(name)) {
      violate(`${since()} ${what} on ${name}: the connection closed without an answer (${outcome.code}) while the node was neither killed nor stopped`);
    }
    return outcome;
  };
  const json = async (name: NodeName, method: 'GET' | 'POST', path: string, what: string, timeoutMs = CALL_HANG_MS) =>
    call(name, { method, path, key: true, timeoutMs }, what);

  // ---------------------------------------------------------------------------------------------------------------
  // Configuration.

  const proxyAddress = new Map<string, string>();
  const addressFor = (from: NodeName, to: NodeName): string => proxyAddress.get(`${from}->${to}`) ?? `/ip4/${node(to).net.clusterIp}/tcp/${P2P_PORT}`;
  const configOf = (name: NodeName): Record<string, unknown> => ({
    storeFolder: '.adm-ipfs',
    // ADM_FAULT_LOG_LEVEL=debug puts the peers' copy failures in the node logs (kept after a failure).
    logLevel: process.env.ADM_FAULT_LOG_LEVEL ?? 'info',
    serverPort: HTTP_PORT,
    peerDiscovery: { listen: [`/ip4/${node(name).net.clusterIp}/tcp/${P2P_PORT}`], bootstrap: [] },
    nodes: NODE_NAMES.map((peer) => ({ name: peer, multiAddr: `${peer === name ? `/ip4/${node(peer).net.clusterIp}/tcp/${P2P_PORT}` : addressFor(name, peer)}/p2p/${node(peer).peerId}` })),
    peeringSchedule: '*/2 * * * * *',
    diskUsageScanPeriod: '* * * * * *',
    adminApiKey: FAULT_KEY,
    maxFileCount: 5,
    uploadLimitSizeBytes: 8 * MIB,
    findFileTimeout: 4_000,
    downloadIdleTimeout: 10_000,
    cors: { allowedOrigins: ['*'] },
    rateLimits: {
      upload: { windowMs: 60_000, limit: 100_000 },
      read: { windowMs: 60_000, limit: 100_000 },
      pin: { windowMs: 60_000, limit: 100_000 },
    },
    storage: {
      maxRequestSizeBytes: 16 * MIB,
      diskReserveBytes: RESERVE_BYTES,
      confirmationRequired: variant.confirmationRequired,
      temporaryTtlMs: 3_600_000,
      // The collector runs on its own during the faults too (handover must wait for every designated holder).
      gc: { schedule: '*/7 * * * * *' },
    },
    replication: {
      placement: [{ minAgeMs: 0, copies: variant.copies }],
      ackQuorum: variant.ackQuorum,
      requireQuorumOnUpload: variant.strict,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      repairSchedule: '*/5 * * * * *',
      repairBatchDelayMs: 100,
    },
    health: {
      checkpointIntervalMs: 1_000,
      maxCheckpointAgeMs: 6_000,
      storageMaxAgeMs: 5_000,
      repairMaxAgeMs: 60_000,
      peerAttestationTimeoutMs: 1_500,
      requiredPeerCount: 1,
    },
  });

  const startNode = async (name: NodeName, timeoutMs = 60_000) => {
    const target = node(name);
    target.start(configOf(name));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!target.running) throw new Error(`${name} exited while starting (see ${target.logPath})`);
      const outcome = await httpCall(target, { method: 'GET', path: '/', timeoutMs: 2_000 });
      if (outcome.kind === 'answer' && outcome.status === 200) break;
      if (Date.now() > deadline) throw new Error(`${name} did not answer GET / within ${timeoutMs} ms`);
      await sleep(150);
    }
    available.add(name);
  };
  const killNode = async (name: NodeName) => {
    available.delete(name);
    disruptions.set(name, disruptions.get(name)! + 1);
    await node(name).kill9();
  };
  const stopNode = async (name: NodeName) => {
    available.delete(name);
    disruptions.set(name, disruptions.get(name)! + 1);
    const stopped = Date.now();
    const how = await node(name).stop();
    if (how === 'killed') violate(`${since()} ${name} did not stop within 20 s of SIGTERM (killed)`);
    // README "Shutdown": 0, or 1 when requests in flight kept it past 15 s.
    else count(`graceful stop: exit ${node(name).exitCode} after ${Date.now() - stopped < 5_000 ? '< 5 s' : '≥ 5 s'}`);
  };

  // ---------------------------------------------------------------------------------------------------------------
  // The workload.

  const random = prng(plan.workloadSeed);
  const pick = <T>(values: readonly T[]): T | undefined => (values.length === 0 ? undefined : values[Math.floor(random() * values.length)]);
  const sizeOf = (): number => {
    const roll = random();
    if (roll < 0.45) return 1 + Math.floor(random() * 64 * 1024);
    if (roll < 0.8) return 100_000 + Math.floor(random() * 900_000);
    return MIB + 1 + Math.floor(random() * 2.5 * MIB);
  };

  /** Bytes for one part: fresh, or now and then the bytes of an earlier upload (a re-upload deduplicates). */
  const partBytes = (size: number): Uint8Array => {
    const earlier = random() < 0.12 ? pick(uploads) : undefined;
    return earlier ? earlier.bytes : seededBytes(random, size);
  };

  /**
   * One request of 1–3 files (`sizes` decides; default drawn), each part its own record. `mustDesignate`: the first
   * file's content is drawn until that node is one of its designated holders (a copy to it).
   */
  const upload = async (name: NodeName, options: { sizes?: number[]; mustDesignate?: NodeName } = {}): Promise<UploadRecord[]> => {
    const roll = random();
    const sizes = options.sizes ?? Array.from({ length: roll < 0.75 ? 1 : roll < 0.9 ? 2 : 3 }, () => sizeOf());
    const parts: Array<{ bytes: Uint8Array; cid: string }> = [];
    for (const [index, size] of sizes.entries()) {
      // Now and then a request carries the same bytes twice (one CID, placed once).
      let bytes = index > 0 && random() < 0.05 ? parts[0]!.bytes : index === 0 && options.mustDesignate ? seededBytes(random, size) : partBytes(size);
      let cid = await cidOfBytes(bytes);
      for (let tries = 0; index === 0 && options.mustDesignate && !designatedOf(cid).includes(options.mustDesignate) && tries < 20; tries++) {
        bytes = seededBytes(random, size);
        cid = await cidOfBytes(bytes);
      }
      parts.push({ bytes, cid });
    }
    const records = parts.map(({ bytes, cid }): UploadRecord => {
      const record: UploadRecord = { id: uploads.length + 1, node: name, cid, size: bytes.length, sha256: sha256Hex(bytes), bytes, outcome: 'pending', startedAt: Date.now() };
      uploads.push(record);
      return record;
    });
    const what = `upload #${records.map((record) => record.id).join('+')} (${records.map((record) => record.size).join(' + ')} bytes)`;
    const { body, contentType } = multipartBody(records.map((record) => ({ filename: `file-${record.id}.bin`, bytes: record.bytes })));
    const outcome = await call(name, { method: 'POST', path: '/api/file/upload', body, contentType, timeoutMs: UPLOAD_HANG_MS }, what);
    const settle = (outcomeOf: UploadRecord['outcome'], status?: number) => {
      for (const record of records) {
        record.outcome = outcomeOf;
        record.status = status;
        record.answered = `${since()} (sent ${((record.startedAt - phaseStart) / 1000).toFixed(1)} s, ${records.length} files)`;
      }
      return records;
    };
    if (outcome.kind !== 'answer') {
      count(`upload ${outcome.kind}`);
      return settle('unknown');
    }
    count(`upload ${outcome.status}${records.length > 1 ? ` (${records.length} files)` : ''}`);
    if (outcome.status === 200) {
      settle('acknowledged', 200);
      records.forEach((record, index) => {
        const file = outcome.json?.files?.[index];
        if (outcome.json?.cids?.[index] !== record.cid) violate(`${since()} ${what} on ${name}: file ${index + 1}'s CID is ${outcome.json?.cids?.[index]}, the importer computes ${record.cid}`);
        record.temporary = file?.state === 'temporary';
        record.acknowledged = file?.replication?.acknowledged;
        record.required = file?.replication?.required;
        if (!record.temporary && record.acknowledged !== undefined && record.acknowledged < variant.copies) count('upload 200 short of its copies');
        if (variant.strict && !(record.acknowledged! >= record.required!)) violate(`${since()} strict ${what} on ${name}: file ${index + 1} answered 200 with ${record.acknowledged} of ${record.required} acknowledgements`);
      });
      return records;
    }
    if (outcome.status === 500) {
      // Spec §4.2: "storage or replica settlement failed; not a clean rejection, content may be partly durable".
      return settle('unknown', 500);
    }
    const expected = (outcome.status === 503 && variant.strict && outcome.json?.error === 'Replication quorum not reached') || outcome.status === 507;
    if (!expected) violate(`${since()} ${what} on ${name}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
    return settle('refused', outcome.status);
  };

  /** Per CID, over every upload that carried it. */
  const recordsOf = (cid: string) => uploads.filter((record) => record.cid === cid);
  const distinctCids = () => [...new Set(uploads.map((record) => record.cid))];
  /** Acknowledged as confirmed, or acknowledged as a temporary and confirmed since. */
  const durableCid = (cid: string) => recordsOf(cid).some((record) => record.outcome === 'acknowledged' && (!record.temporary || record.confirmed === true));
  const acknowledgedCid = (cid: string) => recordsOf(cid).some((record) => record.outcome === 'acknowledged');
  /** Every upload of it was refused: nothing of it may be anywhere. */
  const refusedCid = (cid: string) => recordsOf(cid).every((record) => record.outcome === 'refused');
  const label = (cid: string) => `#${recordsOf(cid).map((record) => record.id).join('/')} (${cid.slice(-8)})`;

  const download = async (record: UploadRecord, name: NodeName, during: boolean): Promise<boolean> => {
    const outcome = await call(name, { method: 'GET', path: `/api/file/${record.cid}`, timeoutMs: CALL_HANG_MS }, `download of #${record.id}`, true);
    if (outcome.kind !== 'answer') return false;
    count(`download ${outcome.status}`);
    if (outcome.status === 200) {
      if (sha256Hex(outcome.body) !== record.sha256) violate(`${since()} download of #${record.id} from ${name}: ${outcome.body.length} bytes that differ from the ${record.size} uploaded`);
      return true;
    }
    if (outcome.status === 408 && during) return false;
    if (!during) return false;
    violate(`${since()} download of #${record.id} from ${name}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
    return false;
  };

  const checkGcReport = (name: NodeName, report: any, when: string) => {
    for (const field of ['demoted', 'releasedCids', 'removedCids'] as const) {
      const list: unknown = report?.[field];
      if (!Array.isArray(list)) continue;
      for (let i = 0; i < list.length; i++) count(`gc report ${field}`);
      for (const cid of list) {
        if (released.has(`${name} ${cid}`)) continue;
        if (durableCid(String(cid)) && designatedOf(String(cid)).includes(name)) {
          violate(`${when} a GC run on ${name} listed ${label(String(cid))} in ${field}, but ${name} is one of its designated holders`);
        }
      }
    }
  };

  const gcRun = async (name: NodeName, query: string, when = since()) => {
    const outcome = await json(name, 'POST', `/api/storage/gc${query}`, `GC run${query}`);
    if (outcome.kind !== 'answer') return;
    count(`gc ${outcome.status}`);
    if (outcome.status === 200) checkGcReport(name, outcome.json, when);
    else if (outcome.status !== 409) violate(`${when} GC run on ${name}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
  };

  const repairBatch = async (name: NodeName): Promise<any> => {
    const outcome = await json(name, 'POST', '/api/storage/repair', 'repair batch');
    if (outcome.kind !== 'answer') return undefined;
    count(`repair ${outcome.status}`);
    if (outcome.status === 200) return outcome.json;
    if (outcome.status !== 409) violate(`${since()} repair batch on ${name}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
    return undefined;
  };

  const workloadStep = async () => {
    const live = [...available];
    const roll = random();
    const name = pick(live);
    if (!name) return;
    if (roll < 0.55) {
      await upload(name);
    } else if (roll < 0.72) {
      const record = pick(uploads.filter((candidate) => candidate.outcome === 'acknowledged'));
      if (record) await download(record, name, true);
    } else if (roll < 0.8) {
      const record = pick(uploads.filter((candidate) => candidate.outcome === 'acknowledged' && candidate.temporary && !candidate.confirmed));
      if (record && available.has(record.node)) {
        const outcome = await json(record.node, 'POST', `/api/file/${record.cid}/confirm`, `confirm of #${record.id}`);
        if (outcome.kind === 'answer') {
          count(`confirm ${outcome.status}`);
          if (outcome.status === 200 && outcome.json?.state === 'confirmed') record.confirmed = true;
          // A temporary the collector released meanwhile may be gone (404) or not fetchable (408).
          else if (outcome.status !== 200 && outcome.status !== 404 && outcome.status !== 408) violate(`${since()} confirm of #${record.id} on ${record.node}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
        }
      }
    } else if (roll < 0.84) {
      // Unpin a durable file on one node that holds it (at most one node per file at a time): released there on
      // purpose, so neither the pin watch nor the GC check counts it until it is pinned again.
      const cid = pick(distinctCids().filter((candidate) => durableCid(candidate) && NODE_NAMES.every((other) => !released.has(`${other} ${candidate}`))));
      if (!cid) return;
      released.add(`${name} ${cid}`);
      held.delete(`${name} ${cid}`);
      const outcome = await json(name, 'POST', `/api/file/${cid}/unpin`, `unpin of ${label(cid)}`);
      if (outcome.kind === 'answer') {
        count(`unpin ${outcome.status}`);
        if (outcome.status !== 200 && outcome.status !== 404) violate(`${since()} unpin of ${label(cid)} on ${name}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
      }
    } else if (roll < 0.87) {
      await repin(pick([...released].filter((key) => available.has(key.split(' ')[0] as NodeName))));
    } else if (roll < 0.93) {
      const query = pick(['', '', '?force=true', '?dryRun=true'])!;
      await gcRun(name, query);
    } else {
      await repairBatch(name);
    }
  };

  /** The operator pin route on a (node, cid) the workload released: registered as confirmed again (spec §3.1). */
  const repin = async (key: string | undefined): Promise<boolean> => {
    if (!key) return false;
    const [name, cid] = key.split(' ') as [NodeName, string];
    const outcome = await json(name, 'POST', `/api/runtime/pin/${cid}`, `re-pin of ${label(cid)}`);
    if (outcome.kind !== 'answer') return false;
    count(`re-pin ${outcome.status}`);
    if (outcome.status === 200) {
      released.delete(key);
      return true;
    }
    // 408: the blocks were collected here and no peer could be reached for them within the discovery deadline.
    if (outcome.status !== 408) violate(`${since()} re-pin of ${label(cid)} on ${name}: unexpected answer ${outcome.status} ${outcome.body.toString('utf8').slice(0, 200)}`);
    return false;
  };

  // ---------------------------------------------------------------------------------------------------------------
  // Watchers: health (state, monotonic height) and the pins of designated holders.

  const pollHealth = async (name: NodeName) => {
    const target = node(name);
    const life = target.life;
    const outcome = await call(name, { method: 'GET', path: '/api/node/health', timeoutMs: 10_000 }, 'health read');
    if (outcome.kind !== 'answer') return;
    if (outcome.status !== 200) return violate(`${since()} health on ${name}: answered ${outcome.status}`);
    const state = String(outcome.json?.state);
    const height = Number(outcome.json?.height);
    const reading: HealthReading = { at: Date.now(), node: name, life, state, height };
    readings.push(reading);
    const top = maxHeight.get(name);
    if (top && height < top.height) {
      violate(`${since()} ${name}'s height went backwards: ${height} (life ${life}) after ${top.height} (life ${top.life}, ${((reading.at - top.at) / 1000).toFixed(1)} s earlier)`);
    }
    if (!top || height > top.height) maxHeight.set(name, { height, at: reading.at, life });
  };

  const auditPins = async (name: NodeName) => {
    const outcome = await json(name, 'GET', '/api/runtime/pins', 'pin list', 20_000);
    if (outcome.kind !== 'answer' || outcome.status !== 200) return;
    const pins = new Set<string>((outcome.json?.pins ?? []).map((pin: { cid: string }) => pin.cid));
    for (const cid of distinctCids()) {
      if (!durableCid(cid) || !designatedOf(cid).includes(name)) continue;
      const key = `${name} ${cid}`;
      if (released.has(key)) continue;
      if (held.has(key)) {
        if (!pins.has(cid)) {
          violate(`${since()} ${name}, a designated holder of ${label(cid)}, no longer pins it (held since +${((held.get(key)! - phaseStart) / 1000).toFixed(1)} s)`);
          held.delete(key);
        }
        continue;
      }
      if (!pins.has(cid)) continue;
      // A pin alone may be an uncommitted copy: it counts as held once the record says so.
      const status = await json(name, 'GET', `/api/file/${cid}/status`, `status of ${label(cid)}`, 10_000);
      const body = status.kind === 'answer' && status.status === 200 ? status.json : undefined;
      if (body?.state === 'confirmed' && body.pinned === true && body.replication?.heldLocally === true) {
        held.set(key, Date.now());
        count('designated copies watched');
      }
    }
  };

  // ---------------------------------------------------------------------------------------------------------------
  // Faults.

  const [pairA, pairB] = variant.proxied;
  const proxiedWith = (name: NodeName): NodeName | undefined => (name === pairA ? pairB : name === pairB ? pairA : undefined);
  /** The addresses `from` sends to when it talks to `to` (the proxy's for the proxied pair). */
  const pathsTo = (from: NodeName, to: NodeName): string[] => (proxiedWith(from) === to ? [network!.hostClusterIp] : [node(to).net.clusterIp]);
  const pairRoutes = () => {
    network!.refuseRoutes(node(pairA).net, [node(pairB).net.clusterIp]);
    network!.refuseRoutes(node(pairB).net, [node(pairA).net.clusterIp]);
  };
  const nft = nftBinary() !== undefined;

  const waitAvailable = async (name: NodeName, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!available.has(name) && Date.now() < deadline) await sleep(100);
  };

  const applyFault = async (fault: PlannedFault, record: AppliedFault) => {
    const target = node(fault.target);
    const net: NetNode = target.net;
    const others = NODE_NAMES.filter((name) => name !== fault.target);
    const hold = () => sleep(fault.durationMs);
    switch (fault.kind) {
      case 'partition':
        network!.linkDown(net);
        await hold();
        network!.linkUp(net);
        return;
      case 'split': {
        // 1+2: the target's routes refuse both peers (and the proxy), theirs refuse the target.
        const away = [...others.map((name) => node(name).net.clusterIp), network!.hostClusterIp];
        network!.refuseRoutes(net, away);
        for (const name of others) network!.refuseRoutes(node(name).net, [net.clusterIp]);
        await hold();
        network!.clearRoutes(net, away);
        for (const name of others) network!.clearRoutes(node(name).net, [net.clusterIp]);
        pairRoutes();
        return;
      }
      case 'one-way': {
        if (!nft) {
          record.skipped = 'nft is not installed: the one-way cut is skipped';
          return;
        }
        network!.cutOneWay(net, pathsTo(fault.target, fault.peer!));
        await hold();
        network!.clearOneWay(net);
        return;
      }
      case 'latency':
      case 'stall':
      case 'reset': {
        const mode =
          fault.kind === 'latency'
            ? ({ kind: 'latency', ms: fault.latencyMs! } as const)
            : fault.kind === 'stall'
              ? ({ kind: 'stall' } as const)
              : ({ kind: 'reset', afterBytes: fault.resetAfterBytes! } as const);
        for (const proxy of proxies) {
          // A reset fault first resets every open connection, then each later one after its bytes.
          if (mode.kind === 'reset') proxy.setMode({ kind: 'reset', afterBytes: 0 });
          proxy.setMode(mode);
        }
        await hold();
        for (const proxy of proxies) proxy.setMode({ kind: 'pass' });
        return;
      }
      case 'kill': {
        await waitAvailable(fault.target);
        if (!available.has(fault.target)) {
          record.skipped = `${fault.target} was not available`;
          return;
        }
        let operation: Promise<unknown>;
        if (fault.during === 'upload') operation = upload(fault.target, { sizes: [MIB + 1 + Math.floor(random() * 2.5 * MIB)] });
        else if (fault.during === 'copy') {
          const from = pick(others.filter((name) => available.has(name)));
          operation = from ? upload(from, { sizes: [MIB + 1 + Math.floor(random() * 2.5 * MIB)], mustDesignate: fault.target }) : Promise.resolve();
        } else if (fault.during === 'repair') operation = repairBatch(fault.target);
        else operation = gcRun(fault.target, '?force=true');
        await sleep(fault.killAfterMs!);
        await killNode(fault.target);
        await hold();
        await startNode(fault.target);
        await operation;
        return;
      }
      case 'restart':
        await waitAvailable(fault.target);
        await stopNode(fault.target);
        await startNode(fault.target);
        await hold();
        return;
      case 'reserve':
        target.fill(RESERVE_BYTES / 2);
        await hold();
        target.unfill();
        return;
    }
  };

  // ---------------------------------------------------------------------------------------------------------------
  // The run.

  const waitFor = async <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T | undefined> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        violate(`${since()} timed out after ${timeoutMs / 1000} s waiting for ${what}`);
        return undefined;
      }
      await sleep(300);
    }
  };
  const healthOf = async (name: NodeName) => {
    const outcome = await httpCall(node(name), { method: 'GET', path: '/api/node/health', timeoutMs: 10_000 });
    return outcome.kind === 'answer' && outcome.status === 200 ? outcome.json : undefined;
  };
  const allReady = (what: string, timeoutMs: number) =>
    waitFor(what, timeoutMs, async () => {
      const states = await Promise.all(NODE_NAMES.map(async (name) => (await healthOf(name))?.state));
      return states.every((state) => state === 'ready') ? true : undefined;
    });
  const peered = (timeoutMs: number) =>
    waitFor('every node connected to both peers', timeoutMs, async () => {
      for (const name of NODE_NAMES) {
        const outcome = await httpCall(node(name), { method: 'GET', path: '/api/p2p/peers', key: true, timeoutMs: 10_000 });
        const peers: string[] = outcome.kind === 'answer' ? (outcome.json?.peers ?? []) : [];
        if (!NODE_NAMES.filter((peer) => peer !== name).every((peer) => peers.includes(node(peer).peerId))) return undefined;
      }
      return true;
    });

  const emergency = () => {
    activeRuns.delete(emergency);
    for (const target of nodes.values()) {
      try {
        if (target.pid !== undefined && target.running) process.kill(target.pid, 'SIGKILL');
      } catch {
        // Gone.
      }
    }
    network?.destroy();
    for (const target of nodes.values()) {
      try {
        target.unmount();
      } catch {
        // The next run's sweep unmounts it.
      }
    }
  };
  activeRuns.add(emergency);
  installExitHook();
  try {
    log(describePlan(plan));
    network = FaultNetwork.create(NODE_NAMES);
    log(`network up (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    for (const name of NODE_NAMES) {
      const target = new FaultNode(network, network.node(name), runDir);
      nodes.set(name, target);
      target.mount();
    }
    await Promise.all(NODE_NAMES.map(async (name) => (node(name).peerId = await firstBootPeerId(node(name).storeDirectory))));
    log(`peer ids (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    for (const [from, to] of [
      [pairA, pairB],
      [pairB, pairA],
    ] as const) {
      const proxy = await FaultProxy.start(network.hostClusterIp, { host: node(to).net.clusterIp, port: P2P_PORT });
      proxies.push(proxy);
      proxyAddress.set(`${from}->${to}`, `/ip4/${network.hostClusterIp}/tcp/${proxy.port}`);
    }
    // The proxied pair can reach each other only through the proxy (no direct path learned from identify).
    pairRoutes();
    await Promise.all(NODE_NAMES.map((name) => startNode(name)));
    log(`nodes started (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    phaseStart = Date.now();
    if (!(await peered(60_000)) || !(await allReady('every node ready before the faults', READY_TIMEOUT_MS))) {
      throw new SetupError('the cluster never became ready before the faults');
    }
    log(`cluster ready (${((Date.now() - started) / 1000).toFixed(1)} s); fault phase of ${plan.phaseMs / 1000} s`);

    // --- faults and workload ----------------------------------------------------------------------------------
    phaseStart = Date.now();
    const phaseEnd = phaseStart + plan.phaseMs;
    let watching = true;
    const watchers = [
      (async () => {
        while (watching) {
          await Promise.all([...available].map((name) => pollHealth(name)));
          await sleep(HEALTH_POLL_MS);
        }
      })(),
      (async () => {
        while (watching) {
          for (const name of [...available]) await auditPins(name);
          await sleep(PIN_AUDIT_MS);
        }
      })(),
    ];
    // Each fault at its time; a fault that overran (a kill waits for the restart) delays the one planned after it,
    // but not one planned to overlap it.
    const faultsDone = (async () => {
      const running: Array<{ fault: PlannedFault; done: Promise<void> }> = [];
      for (const fault of plan.faults) {
        await Promise.all(running.filter((earlier) => earlier.fault.at + earlier.fault.durationMs <= fault.at).map((earlier) => earlier.done));
        const wait = phaseStart + fault.at - Date.now();
        if (wait > 0) await sleep(wait);
        const record: AppliedFault = { fault, startedAt: Date.now() };
        applied.push(record);
        log(`${since()} ${describeFault(fault)}`);
        const done = applyFault(fault, record).then(() => {
          record.endedAt = Date.now();
          if (record.skipped) log(`  !!! skipped: ${record.skipped}`);
        });
        running.push({ fault, done });
      }
      await Promise.all(running.map((entry) => entry.done));
    })();
    const inFlight = new Set<Promise<void>>();
    while (Date.now() < phaseEnd) {
      if (inFlight.size < 4) {
        const step = workloadStep().catch((error: unknown) => violate(`${since()} workload step failed: ${(error as Error).stack ?? error}`));
        const tracked = step.then(() => void inFlight.delete(tracked));
        inFlight.add(tracked);
      }
      await sleep(250 + Math.floor(random() * 450));
    }
    await faultsDone;
    await Promise.all(inFlight);
    log(`${since()} fault phase over: ${uploads.length} uploads; healing`);

    // --- heal -------------------------------------------------------------------------------------------------
    for (const proxy of proxies) proxy.setMode({ kind: 'pass' });
    for (const name of NODE_NAMES) {
      network.linkUp(node(name).net);
      network.clearOneWay(node(name).net);
      node(name).unfill();
      if (!node(name).running) await startNode(name);
    }
    pairRoutes();
    const healedAt = Date.now();
    await peered(60_000);
    // What the workload unpinned is pinned again (fetched from its holders where it was collected meanwhile).
    for (const key of [...released]) {
      await waitFor(`the re-pin of ${key}`, 30_000, async () => ((await repin(key)) ? true : undefined));
    }
    if (variant.strict) {
      // A stage nobody settles is aborted after four request timeouts (README "Placement").
      await waitFor('no staged copy left on any node', 4 * REQUEST_TIMEOUT_MS + 20_000, async () => {
        for (const name of NODE_NAMES) {
          const outcome = await httpCall(node(name), { method: 'GET', path: '/api/storage/metrics', timeoutMs: 10_000 });
          if (outcome.kind !== 'answer' || outcome.json?.stagedReplicas !== 0) return undefined;
        }
        return true;
      });
    }
    for (let pass = 1; pass <= 2; pass++) {
      for (const name of NODE_NAMES) {
        let last = 'no batch answered';
        const done = await waitFor(`a complete repair cycle on ${name} with nothing missing (pass ${pass})`, 90_000, async () => {
          const batch = await repairBatch(name);
          if (!batch) return undefined;
          last = JSON.stringify({ examined: batch.examined, underReplicated: batch.underReplicated, repaired: batch.repaired, stillMissing: batch.stillMissing, unrecoverable: batch.unrecoverable, cycle: batch.cycle });
          return batch.cycleCompleted && batch.cycle?.stillMissing === 0 && batch.cycle?.unrecoverable === 0 ? true : undefined;
        });
        if (!done) {
          log(`  the last repair batch on ${name}: ${last}`);
          // Which files: each designated holder that does not hold a durable file.
          for (const cid of distinctCids().filter(durableCid)) {
            for (const holder of designatedOf(cid)) {
              const status = await httpCall(node(holder), { method: 'GET', path: `/api/file/${cid}/status`, timeoutMs: 10_000 });
              const body = status.kind === 'answer' ? status.json : undefined;
              if (!(body?.pinned === true && body?.replication?.heldLocally === true)) violate(`  still missing after ${pass === 1 ? 90 : 180} s: ${label(cid)} on ${holder} (${JSON.stringify(body ?? status.kind)})`);
            }
          }
        }
      }
    }
    for (const name of NODE_NAMES) await gcRun(name, '', 'after healing:');
    await allReady('every node ready after healing', FINAL_READY_TIMEOUT_MS);
    watching = false;
    await Promise.all(watchers);
    for (const name of NODE_NAMES) await pollHealth(name);
    log(`${since()} healed and repaired (${((Date.now() - healedAt) / 1000).toFixed(1)} s); checking`);

    // --- invariants -------------------------------------------------------------------------------------------
    // 1. Acknowledged uploads everywhere, byte-identical; designated holders agree once repair has run.
    const statusOf = async (name: NodeName, cid: string) => {
      const status = await json(name, 'GET', `/api/file/${cid}/status`, `status of ${label(cid)}`, 10_000);
      return status.kind === 'answer' && status.status === 200 ? status.json : status.kind === 'answer' ? { httpStatus: status.status } : { httpStatus: status.kind };
    };
    for (const cid of distinctCids().filter(acknowledgedCid)) {
      const record = recordsOf(cid).find((candidate) => candidate.outcome === 'acknowledged')!;
      const what = `acknowledged upload ${label(cid)} (${record.size} bytes, to ${[...new Set(recordsOf(cid).map((candidate) => candidate.node))].join(', ')})`;
      if (!durableCid(cid)) {
        // A temporary nobody confirmed may be released by the collector inside the disk reserve (README "Lifecycle and
        // GC"): it must download everywhere only while some node still pins it.
        const statuses = await Promise.all(NODE_NAMES.map((name) => statusOf(name, cid)));
        if (!statuses.some((status) => status?.pinned === true)) {
          count('temporary released (not checked for downloads)');
          continue;
        }
      }
      await Promise.all(
        NODE_NAMES.map(async (name) => {
          const ok = await download(record, name, false);
          if (!ok) violate(`after healing: ${what}${durableCid(cid) ? '' : ' (temporary)'} does not download from ${name}`);
        }),
      );
      if (!durableCid(cid)) continue;
      const designated = designatedOf(cid);
      const acknowledgedCounts = new Set<number>();
      await Promise.all(
        designated.map(async (name) => {
          const body = await statusOf(name, cid);
          if (body?.state !== 'confirmed' || body.pinned !== true || body.replication?.heldLocally !== true) {
            violate(`after repair: ${name}, a designated holder of ${what}, reports ${JSON.stringify(body)}`);
          } else {
            acknowledgedCounts.add(body.replication.acknowledged);
          }
        }),
      );
      if (acknowledgedCounts.size > 1 || (acknowledgedCounts.size === 1 && ![...acknowledgedCounts].includes(variant.copies))) {
        violate(`after repair: the designated holders of ${what} report acknowledged ${[...acknowledgedCounts].join(' / ')} (want ${variant.copies} on each)`);
      }
      // A node that is not designated but keeps a record (an uploader, before or after its GC run handed the file over).
      for (const name of NODE_NAMES.filter((candidate) => !designated.includes(candidate))) {
        const body = await statusOf(name, cid);
        if (body?.httpStatus !== undefined) continue;
        // Its own pinned copy (if it still has one) plus the designated holders that acknowledged (spec §2.2). A record
        // still temporary here (the same bytes uploaded to it and never confirmed on it, while another node's upload
        // was confirmed) places no copies: its own copy only. Seen with seed 1121 when the timing put an unconfirmed
        // upload on the node that was cut off.
        const own = body?.pinned === true ? 1 : 0;
        const want = body?.state === 'temporary' ? own : variant.copies + own;
        if (body?.replication?.acknowledged !== want) {
          violate(`after repair: ${name}, not a designated holder of ${what}, reports acknowledged ${body?.replication?.acknowledged} with pinned ${body?.pinned} (want ${want})`);
        }
        count(`records kept by nodes not designated (${body?.pinned ? 'still pinned' : 'handed over'})`);
      }
    }
    // 2 and the store's consistency: refused uploads nowhere; every known CID's record agrees with its pin; no pin
    // without a record.
    await Promise.all(NODE_NAMES.map(async (name) => {
      const pinsOutcome = await json(name, 'GET', '/api/runtime/pins', 'pin list', 20_000);
      const pins = new Set<string>(pinsOutcome.kind === 'answer' ? (pinsOutcome.json?.pins ?? []).map((pin: { cid: string }) => pin.cid) : []);
      for (const cid of pins) if (recordsOf(cid).length === 0) violate(`after healing: ${name} pins ${cid}, which no upload of this run produced`);
      for (const cid of distinctCids()) {
        const status = await json(name, 'GET', `/api/file/${cid}/status`, `status of ${label(cid)}`, 10_000);
        if (status.kind !== 'answer') continue;
        const pinned = pins.has(cid);
        if (refusedCid(cid) && (status.status !== 404 || pinned)) {
          const refusals = recordsOf(cid).map((record) => `${record.status} on ${record.node} at ${record.answered}`).join(', ');
          violate(`after healing: upload ${label(cid)} was refused (${refusals}), but ${name} has ${status.status === 200 ? `a record (${status.json?.state}, pinned ${status.json?.pinned})` : 'no record'}${pinned ? ' and a pin' : ''}`);
          continue;
        }
        if (status.status === 200 && status.json?.pinned !== pinned) {
          violate(`after healing: on ${name} the record of ${label(cid)} says pinned ${status.json?.pinned} but the pin set ${pinned ? 'has' : 'lacks'} it`);
        } else if (status.status === 404 && pinned) {
          violate(`after healing: ${name} pins ${label(cid)} (${recordsOf(cid).map((record) => record.outcome).join('/')}) without a record`);
        }
      }
      const metrics = await httpCall(node(name), { method: 'GET', path: '/api/storage/metrics', timeoutMs: 10_000 });
      if (metrics.kind === 'answer' && metrics.json?.stagedReplicas !== 0) violate(`after healing: ${name} still counts ${metrics.json?.stagedReplicas} staged copies`);
    }));
    // 4. Health while cut off.
    for (const record of applied) {
      const { fault } = record;
      if (record.skipped || !CUTTING_FAULTS.has(fault.kind) || record.endedAt === undefined) continue;
      if (record.endedAt - record.startedAt < MIN_CUT_FOR_HEALTH_MS) continue;
      const window = readings.filter((reading) => reading.node === fault.target && reading.at >= record.startedAt && reading.at <= record.endedAt! + 2_000);
      const states = new Map<string, number>();
      for (const reading of window) states.set(reading.state, (states.get(reading.state) ?? 0) + 1);
      log(`health of ${fault.target} while cut off (${fault.kind}): ${[...states].map(([state, n]) => `${state} ×${n}`).join(', ') || 'no reading'}`);
      if (window.length === 0) violate(`${describeFault(fault)}: no health reading of ${fault.target} while it was cut off`);
      else if (window.every((reading) => reading.state === 'ready')) {
        violate(`${describeFault(fault)}: ${fault.target} stayed ready while cut off (${window.length} readings)`);
      }
    }
    // 5. Processes and actors.
    for (const name of NODE_NAMES) {
      const target = node(name);
      for (const exit of target.unexpectedExits) violate(`${name}: ${exit}`);
      for (const { life, line } of target.notable) {
        const text = `${line.msg}${line.child ? ` (${line.child})` : ''}${line.err ? `: ${JSON.stringify(line.err).slice(0, 300)}` : ''}`;
        if (['child crashed', 'child restarted', 'child restart failed', 'restart intensity exceeded; escalating'].includes(String(line.msg))) violate(`${name} life ${life}: ${text}`);
        else count(`error log line on ${name}: ${String(line.msg).slice(0, 80)}`);
      }
      for (const [message, n] of target.warnings) for (let i = 0; i < n; i++) count(`warn: ${message.slice(0, 100)}`);
    }
  } catch (error) {
    if (error instanceof SetupError) violate(error.message);
    else violate(`the run itself failed: ${(error as Error).stack ?? error}`);
  } finally {
    keep = options.keep === true || (violations.length > 0 && (options.keepOnFailure ?? true));
    await Promise.all(
      [...nodes.values()].map(async (target) => {
        if (target.running) await target.stop(15_000).catch(() => undefined);
        await target.closeLog();
      }),
    );
    for (const proxy of proxies) await proxy.close().catch(() => undefined);
    if (keep) {
      // The stores go with their tmpfs: the registries (records, intents, acknowledgements) are kept beside the logs.
      for (const target of nodes.values()) {
        for (const suffix of ['', '-wal', '-shm']) {
          const from = join(target.storeDirectory, `registry.sqlite${suffix}`);
          if (existsSync(from)) copyFileSync(from, join(runDir, `${target.name}.registry.sqlite${suffix}`));
        }
      }
    }
    network?.destroy();
    for (const target of nodes.values()) {
      try {
        target.unmount();
      } catch (error) {
        log(`could not unmount ${target.home}: ${(error as Error).message}`);
      }
    }
    if (!keep) rmSync(runDir, { recursive: true, force: true });
    activeRuns.delete(emergency);
  }

  const outcomes = (kind: UploadRecord['outcome']) => uploads.filter((record) => record.outcome === kind).length;
  const summary = [
    `seed ${plan.seed}: ${uploads.length} uploads (${outcomes('acknowledged')} acknowledged, ${outcomes('refused')} refused, ${outcomes('unknown')} unknown), ` +
      `${applied.filter((record) => !record.skipped).length} faults (${applied.filter((record) => record.skipped).length} skipped), ${((Date.now() - started) / 1000).toFixed(1)} s`,
    ...Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => `  ${key}: ${value}`),
  ].join('\n');
  return { seed: plan.seed, violations, summary, plan: describePlan(plan), keptDir: keep ? runDir : undefined, ms: Date.now() - started };
}

class SetupError extends Error {
  override readonly name = 'SetupError';
}
