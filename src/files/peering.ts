// Peering with the configured `nodes` (docs/specs/files-node.md §4.4, §8; docs/notes/files-node.md B.4, C13): which
// entries a node dials, one bounded pass over them, and the failure kinds of the peer-network operator routes.
// Pure: the dial, the "already connected" check and the clock are injected (actors/files/p2p.actor.ts supplies
// libp2p and the runtime's clock).

import pLimit from 'p-limit';
import { deadline, type Clock } from '../clock.js';
import type { FilesNode } from './config-peers.js';

/**
 * Timings of peering (none is in the spec; chosen here, see each line).
 * - dialTimeoutMs: one dial on loopback or a LAN takes tens of milliseconds (docs/notes/dependencies.md §2: about
 *   48 ms); 5 s leaves room for a slow WAN link and the noise + yamux handshakes, while a peer that accepts TCP
 *   and then says nothing cannot hold a pass for long. Operator dials and pings use the same bound.
 * - concurrency: a fleet is a handful of nodes; 4 parallel dials keep a pass to one dial timeout for the usual
 *   sizes without opening dozens of sockets at once on a large list.
 * - startupBoundMs: the API waits for the first pass (B.4: "before the API serves"), but never longer than
 *   one dial timeout plus a margin, so an unreachable peer cannot hold startup beyond it.
 */
export interface PeeringTimings {
  readonly dialTimeoutMs: number;
  readonly concurrency: number;
  readonly startupBoundMs: number;
}

export const PEERING_DEFAULTS: PeeringTimings = Object.freeze({ dialTimeoutMs: 5_000, concurrency: 4, startupBoundMs: 6_000 });

/** The original's peerStore listing was limited to 10 entries (notes B.8). */
export const PEER_STORE_LIST_LIMIT = 10;

/**
 * The entries this node dials: every configured node except its own entry, recognised by peer id, so every
 * node of a fleet can share one `nodes` list (notes B.4). `selfPeerId` is canonical text (as `FilesNode.peerId`).
 */
export function peeringTargets(nodes: readonly FilesNode[], selfPeerId: string): FilesNode[] {
  return nodes.filter((node) => node.peerId !== selfPeerId);
}

/** How long a whole pass can take: the dials run in waves of `concurrency`, each wave bounded by one dial timeout. */
export function passBoundMs(targetCount: number, timings: PeeringTimings = PEERING_DEFAULTS): number {
  return Math.ceil(targetCount / Math.max(1, timings.concurrency)) * timings.dialTimeoutMs;
}

export interface PeeringPassResult {
  /** Names of the targets that are connected at the end of the pass (already connected or dialled now), in list order. */
  readonly connected: string[];
  /** How many targets the pass looked at (own entry excluded). */
  readonly total: number;
  /** Dials that failed or ran out of time (for the count in the log line; never which one). */
  readonly failed: number;
}

export interface PeeringPorts {
  /** Whether an open connection to this peer already exists. */
  isConnected(peerId: string): boolean;
  /** Dials a configured multiaddr; must honour `signal`. */
  dial(multiAddr: string, signal: AbortSignal): Promise<void>;
}

/**
 * One peering pass: dial every target that is not connected, each dial bounded by `dialTimeoutMs` on `clock`, at
 * most `concurrency` at a time. A failed dial is a result, never an error: the pass always settles. `signal` (the
 * actor stopping) aborts every dial in flight and the dials not yet started.
 */
export async function runPeeringPass(
  targets: readonly FilesNode[],
  ports: PeeringPorts,
  timings: Pick<PeeringTimings, 'dialTimeoutMs' | 'concurrency'>,
  clock: Clock,
  signal?: AbortSignal,
): Promise<PeeringPassResult> {
  const ok = new Array<boolean>(targets.length).fill(false);
  let failed = 0;
  await pLimit(Math.max(1, timings.concurrency)).map(targets, async (target, index) => {
    if (signal?.aborted) return;
    if (ports.isConnected(target.peerId)) {
      ok[index] = true;
      return;
    }
    const bound = deadline(clock, timings.dialTimeoutMs, ...(signal ? [signal] : []));
    try {
      await ports.dial(target.multiAddr, bound.signal);
      ok[index] = true;
    } catch {
      failed++;
    } finally {
      bound.clear();
    }
  });
  return { connected: targets.filter((_, index) => ok[index]).map((target) => target.name), total: targets.length, failed };
}

// ---------------------------------------------------------------------------------------------
// Failure kinds of the operator routes (notes C13: 400 invalid input, 502 dial failure, 408 timeout).

/** A peer id or multiaddr that does not parse, a missing parameter, or a request this node cannot act on. */
export class InvalidPeerInputError extends Error {
  override readonly name = 'InvalidPeerInputError';
}

/** A dial or ping did not complete within its bound. */
export class PeerTimeoutError extends Error {
  override readonly name = 'PeerTimeoutError';
  constructor() {
    super('Peer request timed out');
  }
}

/** A dial or ping failed. `kind` is the libp2p error's name (e.g. `NoValidAddressesError`), never its message,
 * which can carry peer ids and addresses. */
export class PeerDialError extends Error {
  override readonly name = 'PeerDialError';
  constructor(
    readonly operation: 'dial' | 'ping',
    readonly kind: string,
  ) {
    super(`${operation === 'dial' ? 'Dial' : 'Ping'} failed (${kind})`);
  }
}
