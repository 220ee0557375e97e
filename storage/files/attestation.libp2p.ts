// The health attestation protocol `/adamant/health/1.0.0` on the running node (docs/specs/files-node.md §2.3;
// docs/notes/files-node.md A.6 "Attestation protocol", C24): the responder vouches for the rounds of the configured
// peers, and `attestRound` asks every other configured node in parallel and counts the answers that attest.
// The decisions are src/files/attestation.ts; this module only moves frames. Log lines carry counts and error
// names only: never a peer id or an address.

import type { Libp2p } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import { answerAttestation, isValidAttestation } from '../../src/files/attestation.js';
import type { FilesConfig } from '../../src/files/config.js';
import { HEALTH_MAX_FRAME_BYTES, HEALTH_PROTOCOL, parseAttestation, type AttestationMessage } from '../../src/files/wire.js';
import type { Logger } from '../../src/logger.js';
import { deadline, type Clock } from '../../src/clock.js';
import { askPeer, changeProtocols, frameHandler } from './protocol-stream.libp2p.js';

/**
 * Health streams per connection and direction: one ask per round and peer, so a few cover an overlap across a
 * restart; libp2p's defaults (32 in, 64 out) would let one peer hold far more.
 */
export const HEALTH_STREAMS_PER_CONNECTION = 8;

/** The refusal a responder sends: the asker does not count it (and never reads its text). */
const REFUSED = { ok: false, error: 'not attested' } as const;

export interface AttestationPeer {
  readonly peerId: string;
  readonly multiAddr: string;
}

/** The configuration both sides of the protocol share. */
export interface AttestationSettings {
  /** Every configured node, this node's own entry included (it is never asked, and cannot ask itself). */
  readonly nodes: readonly AttestationPeer[];
  /** `health.clockSkewToleranceMs`. */
  readonly clockSkewToleranceMs: number;
  /** `health.peerAttestationTimeoutMs`: bounds each ask, and each answer on the responding side. */
  readonly timeoutMs: number;
}

export function attestationSettings(config: FilesConfig): AttestationSettings {
  return {
    nodes: config.nodes.map((node) => ({ peerId: node.peerId, multiAddr: node.multiAddr })),
    clockSkewToleranceMs: config.health.clockSkewToleranceMs,
    timeoutMs: config.health.peerAttestationTimeoutMs,
  };
}

export interface ResponderOptions extends AttestationSettings {
  /** This node's `membership.version`. */
  readonly membershipVersion: string;
  /** `health.checkpointIntervalMs`. */
  readonly intervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : 'Error');

/**
 * Answers `/adamant/health/1.0.0` on `libp2p`. Only peers in `nodes` are answered: the remote peer id is the one
 * the connection's handshake proved (notes C25 applies the same rule to durable copies). A malformed request
 * aborts the stream; a request it does not vouch for gets a refusal. Replaces an earlier registration (`force`),
 * so an actor restarted on the same node never fails on its predecessor's handler.
 */
export async function registerAttestationResponder(libp2p: Libp2p, options: ResponderOptions): Promise<void> {
  const members = new Set(options.nodes.map((node) => node.peerId));
  const handler = frameHandler(
    HEALTH_MAX_FRAME_BYTES,
    options.timeoutMs,
    options.clock,
    async (raw, remotePeer) => {
      if (!members.has(remotePeer)) return REFUSED;
      const answer = answerAttestation(parseAttestation(raw), {
        now: options.clock.now(),
        intervalMs: options.intervalMs,
        clockSkewToleranceMs: options.clockSkewToleranceMs,
        membershipVersion: options.membershipVersion,
      });
      return answer ?? REFUSED;
    },
    (error) => options.logger.debug({ error: errorName(error) }, 'attestation request dropped'),
  );
  await changeProtocols(libp2p, () =>
    libp2p.handle(HEALTH_PROTOCOL, handler, {
      maxInboundStreams: HEALTH_STREAMS_PER_CONNECTION,
      maxOutboundStreams: HEALTH_STREAMS_PER_CONNECTION,
      force: true,
    }),
  );
}

export async function unregisterAttestationResponder(libp2p: Libp2p): Promise<void> {
  await changeProtocols(libp2p, () => libp2p.unhandle(HEALTH_PROTOCOL));
}

export interface AttestRoundOptions extends AttestationSettings {
  readonly libp2p: Libp2p;
  /** This node's peer id: its own `nodes` entry is not asked. */
  readonly self: string;
  /** `{round: roundStart(now), timestamp: now, membershipVersion}` at the moment of asking. */
  readonly request: AttestationMessage;
  readonly clock: Clock;
}

/**
 * Asks every other configured node at once, each bounded by `timeoutMs` (on `clock`) and `signal`, and resolves to
 * how many attested the round (notes A.6). Never rejects: a peer that cannot be reached, refuses, answers late or
 * answers wrongly is simply not counted.
 */
export async function attestRound(options: AttestRoundOptions, signal: AbortSignal): Promise<number> {
  const peers = options.nodes.filter((node) => node.peerId !== options.self);
  if (peers.length === 0) return 0;
  const bound = deadline(options.clock, options.timeoutMs, signal);
  try {
    const attested = await Promise.all(
      peers.map(async (peer) => {
        try {
          const answer = await askPeer(options.libp2p, multiaddr(peer.multiAddr), HEALTH_PROTOCOL, options.request, HEALTH_MAX_FRAME_BYTES, bound.signal);
          // The asker's clock at receipt, not at asking: the answer's timestamp is compared with when it arrived.
          return isValidAttestation(answer, options.request, options.clock.now(), options);
        } catch {
          return false;
        }
      }),
    );
    return attested.filter(Boolean).length;
  } finally {
    bound.clear();
  }
}
