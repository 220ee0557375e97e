// Where a file's copies live (docs/specs/files-node.md §1.4, §2.1; docs/notes/files-node.md A.3 derivations, C1, C14, C26).
// Pure: every node computes the same designated set for a CID from the same configured peer set, so no node has to
// ask another where a file belongs.

import { hash } from 'node:crypto';
import type { FileState } from './types.js';

export interface PlacementTier {
  readonly minAgeMs: number;
  readonly copies: number;
}

/**
 * Rendezvous ranking (notes C26): each candidate scored by sha256(peerId ‖ cid) over the UTF-8 strings, highest
 * first; ties (never in practice) by peer id. Adding or removing one node moves only the files it ranks for.
 */
export function rankHolders(peerIds: readonly string[], cid: string): string[] {
  // One-shot `hash` over the joined string (the same bytes): half the cost of a Hash object, and repair ranks every
  // file of a cycle.
  const scored = [...new Set(peerIds)].map((peerId) => ({ peerId, score: hash('sha256', peerId + cid, 'hex') }));
  scored.sort((a, b) => (a.score < b.score ? 1 : a.score > b.score ? -1 : a.peerId < b.peerId ? -1 : 1));
  return scored.map((entry) => entry.peerId);
}

/** The copies a file of this age wants: the last tier whose `minAgeMs` it has reached (tiers start at 0). */
export function desiredCopies(tiers: readonly PlacementTier[], ageMs: number): number {
  let copies = tiers[0]?.copies ?? 1;
  for (const tier of tiers) if (ageMs >= tier.minAgeMs) copies = tier.copies;
  return copies;
}

export interface Placement {
  readonly desiredCopies: number;
  /** min(desired, network size): the copies that are sought. */
  readonly copies: number;
  /** The `copies` best-ranked members, this node possibly among them. */
  readonly designated: readonly string[];
  /** Every member, best first. */
  readonly ranking: readonly string[];
  /** spec §2.1: the network is no larger than the desired copy count. */
  readonly networkTooSmall: boolean;
}

/**
 * Whether `members` name a peer other than this node: without one (a lone node, `nodes: []`) every file's designated
 * set is this node alone, so no copy is held elsewhere and no holder is asked anything.
 */
export function hasOtherMember(members: readonly string[], self: string): boolean {
  return members.some((peerId) => peerId !== self);
}

/**
 * The placement of one CID over the cluster. `members` are the configured peer ids; this node counts as a member
 * even when its own entry is missing from the list (a lone node with `nodes: []` is a network of one).
 */
export function placementOf(cid: string, members: readonly string[], self: string, tiers: readonly PlacementTier[], ageMs: number): Placement {
  const network = members.includes(self) ? members : [...members, self];
  const ranking = rankHolders(network, cid);
  const desired = desiredCopies(tiers, ageMs);
  const copies = Math.min(desired, ranking.length);
  return { desiredCopies: desired, copies, designated: ranking.slice(0, copies), ranking, networkTooSmall: ranking.length <= desired };
}

/** Peers a holder asks to keep a copy: the designated set without itself, best first. */
export function copyTargets(placement: Placement, self: string): string[] {
  return placement.designated.filter((peerId) => peerId !== self);
}

// ---------------------------------------------------------------------------------------------------------------
// The replication report (spec §2.1)

/** What one peer did with a copy request (notes C1): no peer id, no peer error text. */
export type CopyOutcome = 'stored' | 'cached' | 'failed';

export interface ReplicationReport {
  readonly mode: 'quorum';
  readonly desiredCopies: number;
  readonly copies: number;
  readonly required: number;
  readonly acknowledged: number;
  readonly replicaCount: number;
  readonly cachedCount: number;
  readonly satisfied: boolean;
  readonly networkTooSmall: boolean;
  readonly failedAttemptCount: number;
  readonly attempts: ReadonlyArray<{ readonly ok: boolean; readonly outcome: CopyOutcome }>;
}

/** The quorum of a file (spec §2.1 `required`): the ack quorum, capped by the copies sought, never below one. */
export function requiredAcknowledgements(ackQuorum: number, copies: number): number {
  return Math.max(1, Math.min(ackQuorum, copies));
}

/**
 * The report of a file held here plus the outcomes of asking its peers, in ranking order (notes A.3):
 * acknowledged = the local pinned copy + stored peer copies; cached copies never count; required =
 * max(1, min(ackQuorum, copies)).
 */
export function replicationReport(
  placement: Pick<Placement, 'desiredCopies' | 'copies' | 'networkTooSmall'>,
  ackQuorum: number,
  outcomes: readonly CopyOutcome[],
): ReplicationReport {
  const replicaCount = outcomes.filter((outcome) => outcome === 'stored').length;
  const cachedCount = outcomes.filter((outcome) => outcome === 'cached').length;
  const failedAttemptCount = outcomes.filter((outcome) => outcome === 'failed').length;
  const required = requiredAcknowledgements(ackQuorum, placement.copies);
  const acknowledged = 1 + replicaCount;
  return {
    mode: 'quorum',
    desiredCopies: placement.desiredCopies,
    copies: placement.copies,
    required,
    acknowledged,
    replicaCount,
    cachedCount,
    satisfied: acknowledged >= required,
    networkTooSmall: placement.networkTooSmall,
    failedAttemptCount,
    attempts: outcomes.map((outcome) => ({ ok: outcome !== 'failed', outcome })),
  };
}

/**
 * The report of a file that is not placed: replication disabled (one desired copy, notes C14) or a temporary file
 * (placed once confirmed, notes C15). The local copy is the only one.
 */
export function localOnlyReport(desired: number, ackQuorum: number): ReplicationReport {
  return replicationReport({ desiredCopies: desired, copies: 1, networkTooSmall: true }, ackQuorum, []);
}

// ---------------------------------------------------------------------------------------------------------------
// The replication figures of the file status (spec §2.2)

/** What the status of one file needs to know about the node's replication settings and the cluster. */
export interface StatusPolicy {
  /** `replication.enabled` (and a copy client present): false → the local copy is the network (notes C14). */
  readonly replicated: boolean;
  /** Peer ids of the configured `nodes` now. */
  readonly members: readonly string[];
  readonly self: string;
  readonly tiers: readonly PlacementTier[];
  readonly ackQuorum: number;
  readonly now: number;
}

/** The part of a registry record the figures depend on. */
export interface StatusSubject {
  readonly cid: string;
  readonly state: FileState;
  readonly pinned: boolean;
  readonly createdAt: number;
}

/**
 * `acknowledged` and `required` of `GET /api/file/{cid}/status`: the same figures an upload report gives for the
 * file (spec §2.1, notes A.3), from what this node knows now.
 * - acknowledged = this node's pinned copy (not once expired: an unpinned copy is no acknowledgement) + the peers that
 *   acknowledged a stored copy and are still among the file's designated holders for the current members and the
 *   file's age (a peer dropped from the config, or ranked out, no longer counts).
 * - required = max(1, min(ackQuorum, copies)), copies = min(desired copies for the file's age, network size).
 * - replication off (notes C14): the local copy only, one required. A temporary file is not placed yet (C15): its
 *   figures are the placement's quorum and normally the local copy alone, as in its upload report.
 */
export function statusReplication(record: StatusSubject, policy: StatusPolicy, acknowledgedPeers: readonly string[]): { acknowledged: number; required: number } {
  const local = record.pinned && record.state !== 'expired' ? 1 : 0;
  if (!policy.replicated) return { acknowledged: local, required: 1 };
  const placement = placementOf(record.cid, policy.members, policy.self, policy.tiers, Math.max(0, policy.now - record.createdAt));
  const holders = new Set(copyTargets(placement, policy.self));
  const peers = new Set(acknowledgedPeers.filter((peerId) => holders.has(peerId))).size;
  return { acknowledged: local + peers, required: requiredAcknowledgements(policy.ackQuorum, placement.copies) };
}
