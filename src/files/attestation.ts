// Peer attestation decisions, pure (docs/specs/files-node.md §2.3 rules 5-7; docs/notes/files-node.md A.6 "Attestation
// protocol", C24). The responder decides whether it vouches for an asker's round; the asker decides whether an
// answer counts towards `membership.attestedPeers`. Who may ask (a peer in `nodes`) is decided where the remote
// peer id is known, in storage/files/attestation.libp2p.ts. Nothing here reads a clock: every time is a parameter.

import { roundStart } from './health.js';
import { parseAttestation, type AttestationMessage } from './wire.js';

/** The responder's view at the moment a request arrives. */
export interface ResponderView {
  readonly now: number;
  /** `health.checkpointIntervalMs`: the fixed round length. */
  readonly intervalMs: number;
  readonly clockSkewToleranceMs: number;
  /** This node's own `membership.version`. */
  readonly membershipVersion: string;
}

/**
 * The responder's answer to a request from a configured peer, or undefined when it does not vouch for it.
 * The responder's own health is not a condition (notes A.6): it attests the asker's clock and membership only.
 */
export function answerAttestation(request: AttestationMessage, local: ResponderView): AttestationMessage | undefined {
  // Heights are compared only under one membership (spec §2.3 rules 5-6): another node list is another cluster.
  if (request.membershipVersion !== local.membershipVersion) return undefined;
  // An adjacent round is attested across a boundary (spec §2.3 rule 5): exactly one interval apart still counts.
  if (Math.abs(request.round - roundStart(local.now, local.intervalMs)) > local.intervalMs) return undefined;
  // The asker's clock must agree with ours within the tolerance (notes A.6); exactly the tolerance still counts.
  if (Math.abs(request.timestamp - local.now) > local.clockSkewToleranceMs) return undefined;
  // The round is echoed so the asker can match the answer; the timestamp is ours, for the asker's own clock check.
  return { round: request.round, timestamp: local.now, membershipVersion: local.membershipVersion };
}

/**
 * Whether a peer's raw answer counts as an attestation of `asked` (notes A.6): a well-formed message (a refusal
 * such as `{ok:false}` is not one) echoing the asked round and membership, whose timestamp lies within the
 * tolerance of the asker's clock at receipt.
 */
export function isValidAttestation(answer: unknown, asked: AttestationMessage, receivedAt: number, settings: { readonly clockSkewToleranceMs: number }): boolean {
  let message: AttestationMessage;
  try {
    message = parseAttestation(answer);
  } catch {
    return false;
  }
  // The answer must be about this very round: an answer for another round attests nothing about this one.
  if (message.round !== asked.round) return false;
  // Same node list on both sides (spec §2.3 rule 6).
  if (message.membershipVersion !== asked.membershipVersion) return false;
  // The responder's clock agrees with ours when its answer arrives; exactly the tolerance still counts.
  return Math.abs(message.timestamp - receivedAt) <= settings.clockSkewToleranceMs;
}
