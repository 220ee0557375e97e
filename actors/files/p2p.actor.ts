// `files.p2p`: peering with the configured `nodes` and the peer-network operator questions
// (docs/specs/files-node.md §4.4, §8; docs/notes/files-node.md B.3, B.4, B.8, C13).
//
// Peering (B.4): one pass dials every configured node except this node's own entry that is not connected yet.
// The first pass runs when the actor starts and the child's start waits for it, bounded (`startupBoundMs`),
// so the HTTP edge (a later sibling) serves with the peers connected, yet an unreachable peer never holds
// startup beyond the bound. Then one pass per `peeringSchedule` tick. The schedule is a small loop with two
// states, idle and passing: a tick that arrives while a pass runs is skipped (never queued, never overlapped),
// and an operator's `p2p.autopeer` during a pass joins that pass instead of starting a second one.
//
// A fromCallback actor rather than a statechart: the loop has no decision beyond "skip while passing", and
// every question is request/response over ask(), like files.content.
//
// Logs carry counts only (connected/total/failed), never names, peer ids or multiaddrs: the scrubber exists
// (spec §6) but nothing here relies on it.

import type { Connection, Libp2p, PeerId } from '@libp2p/interface';
import { peerIdFromString } from '@libp2p/peer-id';
import type { Ping } from '@libp2p/ping';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { fromCallback } from 'xstate';
import { canonicalPeerId, type FilesNode as ConfiguredNode } from '../../src/files/config-peers.js';
import {
  InvalidPeerInputError,
  PEER_STORE_LIST_LIMIT,
  PEERING_DEFAULTS,
  PeerDialError,
  peeringTargets,
  PeerTimeoutError,
  runPeeringPass,
  type PeeringPassResult,
  type PeeringTimings,
} from '../../src/files/peering.js';
import type { CronSchedule } from '../../src/cron.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import { actorChild } from '../actor-child.js';
import { deadline, sleep, type Clock } from '../../src/clock.js';
import { everyCronRun } from '../clock-at.js';
import type { ChildSpec } from '../supervisor.js';
import type { PeerNetwork } from './node.js';
import { refuseUnknownMessage } from '../ask.js';

// ---------------------------------------------------------------------------------------------
// Answers (the original's payloads, notes B.8; JSON-safe: ids and addresses as strings)

/** Tries of one operator ping when libp2p closes its stream under it (StreamStateError), and the step between them. */
const PING_ATTEMPTS = 4;
const PING_RETRY_STEP_MS = 25;
export interface P2pStatus {
  readonly status: string;
  /** Extra to the original's `{status}`: what an operator needs to add this node to another node's `nodes`. */
  readonly peerId: string;
  readonly multiaddrs: string[];
}

export interface P2pConnection {
  readonly peerId: string;
  readonly remoteAddr: string;
  readonly status: string;
  readonly direction: string;
}

export interface P2pPeerRecord {
  readonly id: string;
  readonly addresses: string[];
  readonly protocols: string[];
}

export type P2pEvent =
  | { type: 'p2p.status'; reply: Reply<P2pStatus> }
  | { type: 'p2p.peers'; reply: Reply<{ peers: string[] }> }
  | { type: 'p2p.connections'; peerId?: string; reply: Reply<{ length: number; connections: P2pConnection[] }> }
  | { type: 'p2p.peerStore'; peerId?: string; reply: Reply<{ length: number; peers: Array<{ id: string }> }> }
  | { type: 'p2p.peerInfo'; peerId: string; reply: Reply<{ length: number; peer: P2pPeerRecord[] }> }
  | { type: 'p2p.dial'; peerId?: string; multiAddr?: string; reply: Reply<{ success: true; connection: { peerId: string; remoteAddr: string } }> }
  | { type: 'p2p.ping'; peerId: string; reply: Reply<{ pong: number }> }
  | { type: 'p2p.autopeer'; reply: Reply<PeeringPassResult> };

// ---------------------------------------------------------------------------------------------
// The schedule loop

export type PassTrigger = 'startup' | 'schedule' | 'operator';

export interface PeeringLoopOptions {
  readonly clock: Clock;
  readonly schedule: CronSchedule;
  /** One pass; may reject (the node is not running): the loop logs it through `onPassError` and carries on. */
  runPass(signal: AbortSignal): Promise<PeeringPassResult>;
  onPass?(result: PeeringPassResult, trigger: PassTrigger): void;
  onPassError?(error: unknown, trigger: PassTrigger): void;
  /** A tick arrived while a pass was running and was skipped. */
  onSkippedTick?(): void;
}

/** idle ⇄ passing, on the cron schedule; passes never overlap. */
export class PeeringLoop {
  readonly #options: PeeringLoopOptions;
  readonly #stopping = new AbortController();
  #current: Promise<PeeringPassResult> | undefined;
  #cancelTimer: (() => void) | undefined;
  #stopped = false;

  constructor(options: PeeringLoopOptions) {
    this.#options = options;
  }

  get state(): 'idle' | 'passing' | 'stopped' {
    return this.#stopped ? 'stopped' : this.#current ? 'passing' : 'idle';
  }

  /** Runs the startup pass and arms the schedule; resolves when that pass has settled (never rejects). */
  start(): Promise<void> {
    if (!this.#stopped) this.#cancelTimer = everyCronRun(this.#options.clock, this.#options.schedule, () => this.#tick());
    return this.#pass('startup').then(
      () => undefined,
      () => undefined,
    );
  }

  /** An operator's pass: joins the running pass, else starts one now. Rejects when the pass cannot run. */
  passNow(): Promise<PeeringPassResult> {
    return this.#current ?? this.#pass('operator');
  }

  /** Disarms the schedule and aborts the running pass's dials. */
  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    this.#stopping.abort();
  }

  #tick(): void {
    if (this.#stopped) return;
    if (this.#current) {
      this.#options.onSkippedTick?.();
      return;
    }
    // Errors are reported through onPassError inside #pass; the schedule goes on.
    this.#pass('schedule').catch(() => undefined);
  }

  #pass(trigger: PassTrigger): Promise<PeeringPassResult> {
    const run = (async () => {
      try {
        const result = await this.#options.runPass(this.#stopping.signal);
        this.#options.onPass?.(result, trigger);
        return result;
      } catch (error) {
        this.#options.onPassError?.(error, trigger);
        throw error;
      }
    })();
    this.#current = run;
    // Cleared in a later microtask, after the assignment above even when runPass throws synchronously.
    const clear = () => {
      if (this.#current === run) this.#current = undefined;
    };
    run.then(clear, clear);
    return run;
  }
}

// ---------------------------------------------------------------------------------------------
// The actor

export interface P2pOptions {
  /** The running node's network, read at each use. */
  readonly network: () => PeerNetwork;
  /** Every configured node; this node's own entry is filtered out at each pass (by peer id). */
  readonly nodes: readonly ConfiguredNode[];
  readonly peeringSchedule: CronSchedule;
  readonly timings: PeeringTimings;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called once, when the startup pass has settled (connected or not). */
  readonly onFirstPass?: () => void;
}

/** The libp2p error's class name, kept only when it looks like one (never a message, which names peers). */
function errorKind(error: unknown): string {
  const name = (error as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' && /^[A-Za-z][A-Za-z0-9]{0,63}$/.test(name) ? name : 'Error';
}

function parsePeerId(text: string | undefined): PeerId {
  const canonical = text === undefined || text === '' ? undefined : canonicalPeerId(text);
  if (canonical === undefined) throw new InvalidPeerInputError('Invalid peerId');
  return peerIdFromString(canonical);
}

function parseMultiaddr(text: string): Multiaddr {
  try {
    const parsed = multiaddr(text);
    if (parsed.getComponents().length > 0) return parsed;
  } catch {
    // reported below
  }
  throw new InvalidPeerInputError('Invalid multiAddr');
}

const describeConnection = (connection: Connection): P2pConnection => ({
  peerId: connection.remotePeer.toString(),
  remoteAddr: connection.remoteAddr.toString(),
  status: connection.status,
  direction: connection.direction,
});

export function p2pLogic(options: P2pOptions) {
  const { network, timings, logger } = options;
  const schedule = options.peeringSchedule;

  const isOpen = (libp2p: Libp2p, peerId: PeerId) => libp2p.getConnections(peerId).some((connection) => connection.status === 'open');

  const runPass = (signal: AbortSignal): Promise<PeeringPassResult> => {
    const node = network();
    return runPeeringPass(
      peeringTargets(options.nodes, node.peerId),
      {
        isConnected: (peerId) => isOpen(node.libp2p, peerIdFromString(peerId)),
        dial: async (address, dialSignal) => {
          await node.libp2p.dial(multiaddr(address), { signal: dialSignal });
        },
      },
      timings,
      options.clock,
      signal,
    );
  };

  /** A dial or ping bounded by the dial timeout: 408 when it ran out, 502 when it failed (notes C13). */
  const bounded = async <T>(operation: 'dial' | 'ping', signal: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const bound = deadline(options.clock, timings.dialTimeoutMs, signal);
    try {
      return await work(bound.signal);
    } catch (error) {
      if (bound.expired) throw new PeerTimeoutError();
      if (signal.aborted) throw error;
      throw new PeerDialError(operation, errorKind(error));
    } finally {
      bound.clear();
    }
  };

  const notSelf = (peerId: PeerId | undefined, self: string) => {
    if (peerId !== undefined && peerId.toString() === self) throw new InvalidPeerInputError('Cannot dial this node itself');
  };

  const dial = async (event: Extract<P2pEvent, { type: 'p2p.dial' }>) => {
    const node = network();
    let target: Multiaddr | PeerId;
    if (event.multiAddr !== undefined && event.multiAddr !== '') {
      const address = parseMultiaddr(event.multiAddr);
      const last = [...address.getComponents()].reverse().find((component) => component.name === 'p2p');
      notSelf(last?.value === undefined ? undefined : parsePeerId(last.value), node.peerId);
      target = address;
    } else if (event.peerId !== undefined && event.peerId !== '') {
      target = parsePeerId(event.peerId);
      notSelf(target, node.peerId);
    } else {
      throw new InvalidPeerInputError('peerId or multiAddr is required');
    }
    const connection = await bounded('dial', event.reply.signal, (signal) => node.libp2p.dial(target, { signal }));
    return { success: true as const, connection: { peerId: connection.remotePeer.toString(), remoteAddr: connection.remoteAddr.toString() } };
  };

  /** The last operator ping to each peer, so the next one waits its turn. */
  const pingTurns = new Map<string, Promise<void>>();

  const ping = async (event: Extract<P2pEvent, { type: 'p2p.ping' }>) => {
    const node = network();
    const peerId = parsePeerId(event.peerId);
    // runtime.actor.ts registers `ping` (the original had none, notes B.3); the node type leaves services open.
    const service = (node.libp2p.services as { ping?: Ping }).ping;
    if (!service) throw new Error('the libp2p ping service is not registered');
    // Pings in flight together on one connection make libp2p fail some with StreamStateError (a stream closed
    // under it while another's close settles, not a sign of the peer): one retry, then a few more, still failed
    // now and then with three pings at once on a loaded machine. So an operator's pings to one peer take turns
    // (each is a millisecond or two), and a StreamStateError is still retried a little later on a new stream;
    // any other failure is reported as it is.
    const pingWithRetries = async (signal: AbortSignal): Promise<number> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await service.ping(peerId, { signal });
        } catch (error) {
          if ((error as Error | undefined)?.name !== 'StreamStateError' || signal.aborted || attempt >= PING_ATTEMPTS) throw error;
          await sleep(options.clock, PING_RETRY_STEP_MS * attempt, signal);
        }
      }
    };
    const key = peerId.toString();
    const before = pingTurns.get(key) ?? Promise.resolve();
    const mine = before.then(() => bounded('ping', event.reply.signal, pingWithRetries));
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    pingTurns.set(key, settled);
    void settled.then(() => {
      if (pingTurns.get(key) === settled) pingTurns.delete(key);
    });
    return { pong: await mine };
  };

  const peerStore = async (event: Extract<P2pEvent, { type: 'p2p.peerStore' }>) => {
    const libp2p = network().libp2p;
    const peerId = event.peerId === undefined || event.peerId === '' ? undefined : parsePeerId(event.peerId);
    const peers = await libp2p.peerStore.all({
      limit: PEER_STORE_LIST_LIMIT,
      filters: peerId ? [(peer) => peer.id.equals(peerId)] : [],
      signal: event.reply.signal,
    });
    return { length: peers.length, peers: peers.map((peer) => ({ id: peer.id.toString() })) };
  };

  const peerInfo = async (event: Extract<P2pEvent, { type: 'p2p.peerInfo' }>) => {
    const libp2p = network().libp2p;
    const peerId = parsePeerId(event.peerId);
    const peers = await libp2p.peerStore.all({ filters: [(peer) => peer.id.equals(peerId)], signal: event.reply.signal });
    const peer = peers.map((record) => ({
      id: record.id.toString(),
      addresses: record.addresses.map((address) => address.multiaddr.toString()),
      protocols: [...record.protocols],
    }));
    return { length: peer.length, peer };
  };

  const connections = async (event: Extract<P2pEvent, { type: 'p2p.connections' }>) => {
    const libp2p = network().libp2p;
    const peerId = event.peerId === undefined || event.peerId === '' ? undefined : parsePeerId(event.peerId);
    const list = libp2p.getConnections(peerId).map(describeConnection);
    return { length: list.length, connections: list };
  };

  let lastConnected: number | undefined;

  return fromCallback<P2pEvent>(({ receive }) => {
    const loop = new PeeringLoop({
      clock: options.clock,
      schedule,
      runPass,
      onPass: (result, trigger) => {
        const counts = { trigger, connected: result.connected.length, total: result.total, failed: result.failed };
        // Every 30 s by default: a line at info only when something changed or someone asked.
        if (trigger !== 'schedule' || result.connected.length !== lastConnected) logger.info(counts, 'peering pass');
        else logger.debug(counts, 'peering pass');
        lastConnected = result.connected.length;
      },
      onPassError: (error, trigger) => logger.warn({ trigger, kind: errorKind(error) }, 'peering pass could not run'),
      onSkippedTick: () => logger.debug('peering tick skipped: a pass is still running'),
    });
    void loop.start().then(() => options.onFirstPass?.());

    const answer = <T>(reply: Reply<T>, work: () => Promise<T>) => {
      work().then(reply.resolve, (error: unknown) => reply.reject(error as Error));
    };

    receive((event) => {
      switch (event.type) {
        case 'p2p.status':
          return answer(event.reply, async () => {
            const node = network();
            return { status: node.libp2p.status, peerId: node.peerId, multiaddrs: node.libp2p.getMultiaddrs().map(String) };
          });
        case 'p2p.peers':
          return answer(event.reply, async () => ({ peers: network().libp2p.getPeers().map(String) }));
        case 'p2p.connections':
          return answer(event.reply, () => connections(event));
        case 'p2p.peerStore':
          return answer(event.reply, () => peerStore(event));
        case 'p2p.peerInfo':
          return answer(event.reply, () => peerInfo(event));
        case 'p2p.dial':
          return answer(event.reply, () => dial(event));
        case 'p2p.ping':
          return answer(event.reply, () => ping(event));
        case 'p2p.autopeer':
          return answer(event.reply, () => loop.passNow());
        default:
          return refuseUnknownMessage(event);
      }
    });

    return () => loop.stop();
  });
}

// ---------------------------------------------------------------------------------------------
// The supervised child

export interface P2pChildOptions {
  readonly systemId: string;
  /** The running node's network, read at each use. */
  readonly network: () => PeerNetwork;
  readonly nodes: readonly ConfiguredNode[];
  readonly peeringSchedule: CronSchedule;
  readonly timings?: Partial<PeeringTimings>;
}

/**
 * The p2p actor as a child whose start completes when the startup pass has settled or `startupBoundMs` has
 * passed, whichever comes first (notes B.4: peers are dialled "before the API serves"; the edge children come
 * after this one). A callback actor's snapshot never changes, so actorChild's `readyWhen` cannot see the pass;
 * the wait is done here, around actorChild's own start.
 */
export function p2pChild(options: P2pChildOptions): ChildSpec {
  const timings: PeeringTimings = { ...PEERING_DEFAULTS, ...options.timings };
  let firstPass: Promise<void> = Promise.resolve();
  const child = actorChild({
    systemId: options.systemId,
    shutdown: 'stop',
    logic: (runtime) => {
      let settle!: () => void;
      firstPass = new Promise<void>((resolve) => (settle = resolve));
      return p2pLogic({
        network: options.network,
        nodes: options.nodes,
        peeringSchedule: options.peeringSchedule,
        timings,
        clock: runtime.clock,
        logger: runtime.logger.child({ actor: options.systemId }),
        onFirstPass: settle,
      });
    },
  });
  return {
    ...child,
    async start(runtime) {
      const handle = await child.start(runtime);
      let timer: unknown;
      const bound = new Promise<'bound'>((resolve) => (timer = runtime.clock.setTimeout(() => resolve('bound'), timings.startupBoundMs)));
      const outcome = await Promise.race([firstPass.then(() => 'done' as const), bound, handle.exited.then(() => 'exited' as const)]);
      runtime.clock.clearTimeout(timer);
      if (outcome === 'bound') {
        runtime.logger.child({ actor: options.systemId }).info({ boundMs: timings.startupBoundMs }, 'startup peering pass still running; serving without waiting for it');
      }
      return handle;
    },
  };
}
