// The asking side of the replication protocol (src/files/wire.ts; notes A.3, C1, C25, C27), used by uploads, repair
// and the collector's handover. Peers are addressed by their configured multiaddr (libp2p reuses an open
// connection to the same peer). Every call is bounded by `replication.requestTimeoutMs` on the runtime's clock and by
// the caller's signal; a peer's refusal text never leaves this module (spec §2.1: no peer error text in reports).

import type { Libp2p } from '@libp2p/interface';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import type { CopyOutcome } from '../../src/files/placement.js';
import {
  parseReplicationResponse,
  REPLICATION_MAX_FRAME_BYTES,
  REPLICATION_PROTOCOL,
  type ReplicationRequest,
  type ReplicationResponse,
} from '../../src/files/wire.js';
import { deadline, type Clock } from '../../src/clock.js';
import { askPeer } from './protocol-stream.libp2p.js';

export interface CopyClient {
  /** One request to one configured peer; rejects on a dial, stream or protocol failure or the deadline. */
  request(peerId: string, request: ReplicationRequest, signal: AbortSignal): Promise<ReplicationResponse>;
  /** Whether the peer holds `cid` durably; false when it says no, refuses or cannot be asked. */
  have(peerId: string, cid: string, signal: AbortSignal): Promise<boolean>;
  /**
   * `have` with its three answers kept apart: `held`, `missing` (the peer answered that it does not hold it), or
   * `unknown` (a refusal, a dial or stream failure, the deadline). Repair needs the difference: only a peer that said
   * no has lost its acknowledgement; one that could not be asked may well still hold its copy.
   */
  probe(peerId: string, cid: string, signal: AbortSignal): Promise<ProbeAnswer>;
  /**
   * Asks the peer to keep a copy (`store`, or `stage` under a strict upload's session). A peer that refuses
   * responsibility (this node is not in its `nodes`) is asked to `cache` instead (notes C25); a staged copy never
   * falls back, since a cache is no acknowledgement.
   */
  place(peerId: string, cid: string, signal: AbortSignal, session?: string): Promise<CopyOutcome>;
}

export type ProbeAnswer = 'held' | 'missing' | 'unknown';

export interface CopyClientOptions {
  /**
   * The running node's libp2p, read per request. The files tree reads it through the node holder's network face,
   * which throws while no node runs: that request then fails as a dial would.
   */
  readonly libp2p: () => Libp2p;
  /** Configured peers by id (their `/p2p/` multiaddrs). */
  readonly peers: ReadonlyArray<{ readonly peerId: string; readonly multiAddr: string }>;
  readonly requestTimeoutMs: number;
  /** The runtime's clock: `requestTimeoutMs` runs on it (docs/DESIGN.md rule 2). */
  readonly clock: Clock;
}

export class UnknownPeerError extends Error {
  static readonly NAME = 'UnknownPeerError';
  override readonly name = UnknownPeerError.NAME;
}

export function copyClient(options: CopyClientOptions): CopyClient {
  const addresses = new Map<string, Multiaddr>(options.peers.map((peer) => [peer.peerId, multiaddr(peer.multiAddr)]));

  const request = async (peerId: string, message: ReplicationRequest, signal: AbortSignal): Promise<ReplicationResponse> => {
    const target = addresses.get(peerId);
    if (!target) throw new UnknownPeerError('not a configured peer');
    const bound = deadline(options.clock, options.requestTimeoutMs, signal);
    try {
      const raw = await askPeer(options.libp2p(), target, REPLICATION_PROTOCOL, message, REPLICATION_MAX_FRAME_BYTES, bound.signal);
      return parseReplicationResponse(raw, message);
    } finally {
      bound.clear();
    }
  };

  const probe = async (peerId: string, cid: string, signal: AbortSignal): Promise<ProbeAnswer> => {
    try {
      const answer = await request(peerId, { op: 'have', cid }, signal);
      if (!answer.ok || answer.op !== 'have') return 'unknown';
      return answer.has ? 'held' : 'missing';
    } catch {
      return 'unknown';
    }
  };

  return {
    request,
    probe,
    async have(peerId, cid, signal) {
      return (await probe(peerId, cid, signal)) === 'held';
    },
    async place(peerId, cid, signal, session) {
      try {
        const answer = await request(peerId, session === undefined ? { op: 'store', cid } : { op: 'stage', cid, session }, signal);
        if (answer.ok) return 'stored';
        if (answer.code !== 'unauthorized' || session !== undefined) return 'failed';
        const cached = await request(peerId, { op: 'cache', cid }, signal);
        return cached.ok ? 'cached' : 'failed';
      } catch {
        return 'failed';
      }
    },
  };
}
