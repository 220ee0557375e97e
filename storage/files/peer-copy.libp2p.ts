// The asking side of the replication protocol (src/files/wire.ts; notes A.3, C1, C25, C27), used by uploads, repair
// and the collector's handover. Peers are addressed by their configured multiaddr (libp2p reuses an open
// connection to the same peer). Every call is bounded by `replication.requestTimeoutMs` on the runtime's clock and by
// the caller's signal; a peer's refusal text never leaves this module (spec §2.1: no peer error text in reports).

import type { Libp2p } from '@libp2p/interface';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import type { CopyOutcome } from '../../src/files/placement.js';
import pLimit from 'p-limit';
import {
  HOLDINGS_MAX_CIDS,
  HOLDINGS_MAX_FRAME_BYTES,
  HOLDINGS_PROTOCOL,
  parseHoldingsResponse,
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
   * `probe` for many CIDs of one peer, the answers in the same order: over the holdings protocol, HOLDINGS_MAX_CIDS
   * a stream. A peer that does not offer it (the original node, an older version) is asked one `have` at a time
   * instead, `fallbackConcurrency` at once, and is offered the protocol again only HOLDINGS_RECHECK_MS later. A
   * holdings request refused or failed answers `unknown` for each of its CIDs, as their `have`s would.
   */
  probeMany(peerId: string, cids: readonly string[], signal: AbortSignal, fallbackConcurrency: number): Promise<ProbeAnswer[]>;
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

/** A peer found without the holdings protocol is asked one `have` at a time for this long (an upgrade is seen after it). */
export const HOLDINGS_RECHECK_MS = 3_600_000;

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

  /** Peers found without the holdings protocol, and when (on the runtime's clock). */
  const withoutHoldings = new Map<string, number>();
  const offersHoldings = (peerId: string) => {
    const since = withoutHoldings.get(peerId);
    return since === undefined || options.clock.now() - since >= HOLDINGS_RECHECK_MS;
  };

  /** One holdings request; undefined when the peer does not offer the protocol. */
  const holdings = async (peerId: string, cids: readonly string[], signal: AbortSignal): Promise<ProbeAnswer[] | undefined> => {
    const target = addresses.get(peerId);
    if (!target) return cids.map(() => 'unknown');
    const bound = deadline(options.clock, options.requestTimeoutMs, signal);
    try {
      const message = { cids };
      const answer = parseHoldingsResponse(await askPeer(options.libp2p(), target, HOLDINGS_PROTOCOL, message, HOLDINGS_MAX_FRAME_BYTES, bound.signal), message);
      return answer.ok ? answer.has.map((has) => (has ? 'held' : 'missing')) : cids.map(() => 'unknown');
    } catch (error) {
      if ((error as Error | undefined)?.name === 'UnsupportedProtocolError') return undefined;
      return cids.map(() => 'unknown');
    } finally {
      bound.clear();
    }
  };

  const probeMany = async (peerId: string, cids: readonly string[], signal: AbortSignal, fallbackConcurrency: number): Promise<ProbeAnswer[]> => {
    const answers: ProbeAnswer[] = [];
    for (let at = 0; at < cids.length; at += HOLDINGS_MAX_CIDS) {
      const chunk = cids.slice(at, at + HOLDINGS_MAX_CIDS);
      const offered = offersHoldings(peerId);
      let chunkAnswers = offered ? await holdings(peerId, chunk, signal) : undefined;
      if (chunkAnswers === undefined) {
        if (offered) withoutHoldings.set(peerId, options.clock.now());
        chunkAnswers = await pLimit(Math.max(1, fallbackConcurrency)).map(chunk, (cid) => (signal.aborted ? 'unknown' : probe(peerId, cid, signal)));
      } else {
        withoutHoldings.delete(peerId);
      }
      answers.push(...chunkAnswers);
    }
    return answers;
  };

  return {
    request,
    probe,
    probeMany,
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
