// The peer protocols of a files cluster (docs/specs/files-node.md §1.4, §2.3, §9.4; docs/notes/files-node.md A.6, C24,
// C25, C27): framing and message shapes, pure. One request and one response per stream, each a frame of a 4-byte
// big-endian length followed by that many bytes of UTF-8 JSON (the block pull answers its request with block frames
// instead: src/files/block-frames.ts). A frame above the protocol's bound is a protocol
// violation: the reader stops at the length prefix, never buffers it.

/** Copies between nodes. Offered in its one current version only (spec §9.4); storage metrics report it. */
export const REPLICATION_PROTOCOL = '/adamant/replication/1.0.0';
/**
 * A copy's blocks, pulled by the replica from the member that asked it to keep the copy: one request frame `{cid}`
 * (this file's framing), then the DAG's blocks as block frames (src/files/block-frames.ts). Our own addition, not the
 * original's: a peer without it (the original node, an older version) is asked over bitswap instead.
 */
export const BLOCKS_PROTOCOL = '/adamant/blocks/1.0.0';
/**
 * `have` for many CIDs in one stream: one request frame `{cids}`, one answer `{ok: true, has}` (this file's framing).
 * Our own addition, not the original's: repair asks a peer without it (the original node, an older version) one
 * `have` at a time instead. A stream per CID cost each side ~2.5 ms of CPU in libp2p (noise, yamux, multistream,
 * the peer store), most of a first repair cycle with a new peer (issue 30).
 */
export const HOLDINGS_PROTOCOL = '/adamant/holdings/1.0.0';
/** Round attestations between nodes of one membership (spec §2.3 rules 5-7). */
export const HEALTH_PROTOCOL = '/adamant/health/1.0.0';

/** Requests are an op, a CID and at most a session id; anything larger is not a request of ours. */
export const REPLICATION_MAX_FRAME_BYTES = 4096;
export const HEALTH_MAX_FRAME_BYTES = 1024;
/** A block pull's request is a CID. */
export const BLOCKS_MAX_REQUEST_BYTES = 256;
/** CIDs of one holdings request: a repair batch's (src/files/repair.ts REPAIR_BATCH_SIZE). */
export const HOLDINGS_MAX_CIDS = 100;
/** Both ways: HOLDINGS_MAX_CIDS CIDs of at most MAX_CID_CHARS characters with their quotes and commas fit. */
export const HOLDINGS_MAX_FRAME_BYTES = 16_384;

const LENGTH_PREFIX_BYTES = 4;

export class ProtocolMessageError extends Error {
  static readonly NAME = 'ProtocolMessageError';
  override readonly name = ProtocolMessageError.NAME;
}

/** One message as a frame; throws when it does not fit the bound. */
export function encodeFrame(message: unknown, maxBytes: number): Uint8Array {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  if (body.length > maxBytes) throw new ProtocolMessageError(`message of ${body.length} bytes exceeds ${maxBytes}`);
  const frame = Buffer.alloc(LENGTH_PREFIX_BYTES + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, LENGTH_PREFIX_BYTES);
  return frame;
}

/**
 * Collects chunks until one whole frame has arrived. `push` returns the parsed JSON once complete, undefined
 * while more bytes are needed; it throws on a length above the bound, bytes after the frame, or bad JSON.
 */
export class FrameDecoder {
  readonly #chunks: Buffer[] = [];
  #received = 0;
  #expected: number | undefined;
  #done = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Uint8Array): unknown {
    if (this.#done) throw new ProtocolMessageError('bytes after the frame');
    this.#chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.#received += chunk.byteLength;
    if (this.#expected === undefined) {
      if (this.#received < LENGTH_PREFIX_BYTES) return undefined;
      const expected = Buffer.concat(this.#chunks).readUInt32BE(0);
      if (expected > this.maxBytes) throw new ProtocolMessageError(`frame of ${expected} bytes exceeds ${this.maxBytes}`);
      this.#expected = expected;
    }
    const total = LENGTH_PREFIX_BYTES + this.#expected;
    if (this.#received < total) return undefined;
    if (this.#received > total) throw new ProtocolMessageError('bytes after the frame');
    this.#done = true;
    const body = Buffer.concat(this.#chunks).subarray(LENGTH_PREFIX_BYTES);
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      throw new ProtocolMessageError('frame is not JSON');
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Replication messages (notes C25, C27)

/**
 * - `store`: pull the DAG from the asking peer, pin it, register it as confirmed and held, then answer (notes C27);
 * - `have`: whether this node deliberately holds the CID (pinned and held, not merely cached);
 * - `accept`: whether this node has room for another copy (incoming-copy admission and disk reserve);
 * - `cache`: hold an unpinned copy without responsibility (open to any peer, within the disk reserve);
 * - `stage` / `commit` / `abort`: a strict upload's copy (spec §4.2 503): pinned under the upload's session without a
 *   record until `commit` registers it; `abort` (or a restart before `commit`) puts back the pre-request pin.
 */
export type ReplicationOp = 'store' | 'have' | 'accept' | 'cache' | 'stage' | 'commit' | 'abort';
/** Session ids of strict uploads, and so of their peers' staged copies, start with this (`stagedReplicas` counts them). */
export const STAGED_SESSION_PREFIX = 'staged-';
const SESSION_OPS: ReadonlySet<ReplicationOp> = new Set(['stage', 'commit', 'abort']);
const OPS: ReadonlySet<string> = new Set<ReplicationOp>(['store', 'have', 'accept', 'cache', 'stage', 'commit', 'abort']);

export type ReplicationRequest =
  | { readonly op: 'store' | 'have' | 'accept' | 'cache'; readonly cid: string }
  | { readonly op: 'stage' | 'commit' | 'abort'; readonly cid: string; readonly session: string };

/**
 * Why a peer said no. Only `code` is acted on (an `unauthorized` store falls back to `cache`); `error` is the peer's
 * text, kept out of every report and log line (spec §2.1: no peer error text).
 */
export type RefusalCode = 'unauthorized' | 'busy' | 'insufficientStorage' | 'notFound' | 'invalid' | 'failed';

export type ReplicationResponse =
  | { readonly ok: true; readonly op: 'store'; readonly storedBytes: number }
  | { readonly ok: true; readonly op: 'stage'; readonly stagedBytes: number }
  | { readonly ok: true; readonly op: 'have'; readonly has: boolean }
  | { readonly ok: true; readonly op: 'accept'; readonly willAccept: boolean }
  | { readonly ok: true; readonly op: 'cache'; readonly cachedBytes: number }
  | { readonly ok: true; readonly op: 'commit' | 'abort' }
  | { readonly ok: false; readonly code: RefusalCode; readonly error: string };

/** CIDs are short; a longer string is not one (checked again by CID.parse where it is used). */
const MAX_CID_CHARS = 128;
const SESSION_ID = /^[A-Za-z0-9-]{1,64}$/;

export function parseReplicationRequest(value: unknown): ReplicationRequest {
  if (typeof value !== 'object' || value === null) throw new ProtocolMessageError('request is not an object');
  const { op, cid, session } = value as Record<string, unknown>;
  if (typeof op !== 'string' || !OPS.has(op)) throw new ProtocolMessageError('unknown replication operation');
  if (typeof cid !== 'string' || cid === '' || cid.length > MAX_CID_CHARS) throw new ProtocolMessageError('request has no valid CID');
  if (SESSION_OPS.has(op as ReplicationOp)) {
    if (typeof session !== 'string' || !SESSION_ID.test(session)) throw new ProtocolMessageError('request has no valid session');
    return { op: op as 'stage' | 'commit' | 'abort', cid, session };
  }
  return { op: op as 'store' | 'have' | 'accept' | 'cache', cid };
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const REFUSALS: ReadonlySet<string> = new Set<RefusalCode>(['unauthorized', 'busy', 'insufficientStorage', 'notFound', 'invalid', 'failed']);

/** A refusal's code (an unknown one reads as `failed`) and at most 200 characters of its text. */
function refusalOf(r: Record<string, unknown>): { readonly ok: false; readonly code: RefusalCode; readonly error: string } {
  const code = typeof r['code'] === 'string' && REFUSALS.has(r['code']) ? (r['code'] as RefusalCode) : 'failed';
  return { ok: false, code, error: typeof r['error'] === 'string' ? r['error'].slice(0, 200) : '' };
}

/** A peer's answer to `request`; anything else (a wrong op echoed, a malformed field) is a protocol error. */
export function parseReplicationResponse(value: unknown, request: ReplicationRequest): ReplicationResponse {
  if (typeof value !== 'object' || value === null) throw new ProtocolMessageError('response is not an object');
  const r = value as Record<string, unknown>;
  if (r['ok'] === false) return refusalOf(r);
  if (r['ok'] !== true || r['op'] !== request.op) throw new ProtocolMessageError('response does not answer the request');
  switch (request.op) {
    case 'store':
      if (isCount(r['storedBytes'])) return { ok: true, op: 'store', storedBytes: r['storedBytes'] };
      break;
    case 'stage':
      if (isCount(r['stagedBytes'])) return { ok: true, op: 'stage', stagedBytes: r['stagedBytes'] };
      break;
    case 'have':
      if (typeof r['has'] === 'boolean') return { ok: true, op: 'have', has: r['has'] };
      break;
    case 'accept':
      if (typeof r['willAccept'] === 'boolean') return { ok: true, op: 'accept', willAccept: r['willAccept'] };
      break;
    case 'cache':
      if (isCount(r['cachedBytes'])) return { ok: true, op: 'cache', cachedBytes: r['cachedBytes'] };
      break;
    case 'commit':
    case 'abort':
      return { ok: true, op: request.op };
  }
  throw new ProtocolMessageError('response fields do not match the operation');
}

/** A block pull's request (BLOCKS_PROTOCOL): the root of the DAG to send. */
export interface BlocksRequest {
  readonly cid: string;
}

export function parseBlocksRequest(value: unknown): BlocksRequest {
  if (typeof value !== 'object' || value === null) throw new ProtocolMessageError('request is not an object');
  const { cid } = value as Record<string, unknown>;
  if (typeof cid !== 'string' || cid === '' || cid.length > MAX_CID_CHARS) throw new ProtocolMessageError('request has no valid CID');
  return { cid };
}

// ---------------------------------------------------------------------------------------------------------------
// Health attestation messages (notes A.6 "Attestation protocol")

/** Both ways: the asker's round and clock, echoed back with the responder's own clock. */
export interface AttestationMessage {
  readonly round: number;
  readonly timestamp: number;
  readonly membershipVersion: string;
}

const MEMBERSHIP_VERSION = /^[a-f0-9]{64}$/;

export function parseAttestation(value: unknown): AttestationMessage {
  if (typeof value !== 'object' || value === null) throw new ProtocolMessageError('attestation is not an object');
  const { round, timestamp, membershipVersion } = value as Record<string, unknown>;
  if (!isCount(round) || !isCount(timestamp)) throw new ProtocolMessageError('attestation round or timestamp is invalid');
  if (typeof membershipVersion !== 'string' || !MEMBERSHIP_VERSION.test(membershipVersion)) throw new ProtocolMessageError('attestation membership is invalid');
  return { round, timestamp, membershipVersion };
}

// ---------------------------------------------------------------------------------------------------------------
// Holdings messages (HOLDINGS_PROTOCOL)

export interface HoldingsRequest {
  readonly cids: readonly string[];
}

/** `has[i]` answers `cids[i]` of the request as `have` would; a refusal answers none of them. */
export type HoldingsResponse =
  | { readonly ok: true; readonly has: readonly boolean[] }
  | { readonly ok: false; readonly code: RefusalCode; readonly error: string };

export function parseHoldingsRequest(value: unknown): HoldingsRequest {
  if (typeof value !== 'object' || value === null) throw new ProtocolMessageError('request is not an object');
  const { cids } = value as Record<string, unknown>;
  if (!Array.isArray(cids) || cids.length === 0 || cids.length > HOLDINGS_MAX_CIDS) throw new ProtocolMessageError('request has no valid CID list');
  for (const cid of cids) if (typeof cid !== 'string' || cid === '' || cid.length > MAX_CID_CHARS) throw new ProtocolMessageError('request has no valid CID list');
  return { cids: cids as string[] };
}

/** A peer's answer to `request`; an answer that does not say yes or no for each CID is a protocol error. */
export function parseHoldingsResponse(value: unknown, request: HoldingsRequest): HoldingsResponse {
  if (typeof value !== 'object' || value === null) throw new ProtocolMessageError('response is not an object');
  const r = value as Record<string, unknown>;
  if (r['ok'] === false) return refusalOf(r);
  const has = r['has'];
  if (r['ok'] !== true || !Array.isArray(has) || has.length !== request.cids.length || !has.every((answer) => typeof answer === 'boolean')) {
    throw new ProtocolMessageError('response does not answer the request');
  }
  return { ok: true, has: has as boolean[] };
}
