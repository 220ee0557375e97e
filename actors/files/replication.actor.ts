// `files.replication`: the answering side of the replication protocol (docs/specs/files-node.md §1.4, §4.2 503, §8
// incoming-copy concurrency; docs/notes/files-node.md A.3, A.8, A.9, C24, C25, C27). It registers
// `/adamant/replication/1.0.0` on the running node when it starts and removes it when it stops; under rest_for_one it
// restarts with the runtime, so the handler always belongs to the current node.
//
// What a peer may ask (src/files/wire.ts):
// - only configured peers (their id is proven by the libp2p handshake) may make this node responsible for content:
//   `store`, `stage`/`commit`/`abort`, and ask `have`/`accept` (or `have` for up to 100 CIDs in one request of
//   `/adamant/holdings/1.0.0`, registered and removed with it); anyone may ask for an unpinned `cache` copy;
// - every copy takes an incoming-copy slot (the shared admission limiter) and must leave the disk reserve intact
//   (a zero-byte claim: the copy's size is unknown until it has been fetched);
// - blocks arrive unpinned until the pin completes, so a copy holds the storage lease shared, like an upload;
// - a pin-intent marker precedes every pin, so a crash mid-copy is rolled back by the next start's walk;
// - the blocks are fetched here; the lease hold, the intent, the pin and the record are the store owner's
//   (actors/files/store.actor.ts), asked for in that order.
//
// A staged copy (strict upload) is pinned under the uploader's session with its marker kept and no record; `commit`
// registers it, `abort` puts the pre-request pin back. A stage nobody settles is aborted after STAGE_TTL_FACTOR ×
// requestTimeoutMs, and a restart before that rolls it back too (the marker has no record).

import { peerIdFromString } from '@libp2p/peer-id';
import { CID } from 'multiformats/cid';
import { code as RAW_CODEC } from 'multiformats/codecs/raw';
import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { fromCallback } from 'xstate';
import { applyFileEvent } from '../../machines/files/file-lifecycle.machine.js';
import type { Release } from '../../src/files/admission.js';
import { confirmedRecord } from '../../src/files/lifecycle.js';
import { KeyedQueue } from '../../src/keyed-queue.js';
import type { FileRecord } from '../../src/files/types.js';
import {
  BLOCKS_PROTOCOL,
  HOLDINGS_MAX_FRAME_BYTES,
  HOLDINGS_PROTOCOL,
  parseHoldingsRequest,
  parseReplicationRequest,
  REPLICATION_MAX_FRAME_BYTES,
  REPLICATION_PROTOCOL,
  type HoldingsRequest,
  type HoldingsResponse,
  type RefusalCode,
  type ReplicationRequest,
  type ReplicationResponse,
} from '../../src/files/wire.js';
import type { Logger } from '../../src/logger.js';
import type { Clock } from '../../src/clock.js';
import { linkSignals } from '../../src/cancellation.js';
import type { FilesNode, NodeHolder } from './node.js';
import type { StorePort } from './store.actor.js';
import { blockServer, pullBlocks } from '../../storage/files/block-pull.libp2p.js';
import { linksOf, walkDag } from '../../storage/files/dag-walk.js';
import { changeProtocols, frameHandler } from '../../storage/files/protocol-stream.libp2p.js';

/** Streams per connection for this protocol, each way: an upload places several files on one peer at once. */
const PROTOCOL_STREAMS = 32;
/** Leaves fetched at once while pulling a copy (1 MiB each, so this bounds the memory a copy holds too). */
const COPY_FETCH_CONCURRENCY = 16;
/**
 * Block pull streams this node serves at once (BLOCKS_PROTOCOL), over all peers; beyond it a peer is refused `busy`
 * and fetches over bitswap. Each holds up to 5 blocks (4 read ahead and one being sent), so ~80 MiB at most.
 */
const BLOCK_STREAMS = 16;
/** A holdings request's CIDs looked up at once (a registry read and a pin record read from disk each). */
const HOLDINGS_LOOKUPS_AT_ONCE = 8;
/** A stage not committed or aborted within this many request timeouts is aborted here. */
const STAGE_TTL_FACTOR = 4;

export interface ReplicationResponderOptions {
  /** The running node, read once per copy request (its pins, blocks and records serve that whole request). */
  readonly holder: NodeHolder;
  /** Peer ids of the configured `nodes`: the peers that may make this node responsible for content. */
  readonly members: readonly string[];
  /** The owner of records, intents, pins and the storage lease (actors/files/store.actor.ts). */
  readonly store: StorePort;
  /** The node's incoming-copy slot (the admission limiter shared with the edge), undefined at the limit. */
  tryIncomingCopy(): Release | undefined;
  /** The disk reserve (disk actor's claim); rejects with InsufficientStorageError when it would be consumed. */
  claimDisk(bytes: number, signal: AbortSignal): Promise<{ release(): void }>;
  /** `replication.requestTimeoutMs`: the bound of one answer, fetching included. */
  readonly requestTimeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

class Refusal extends Error {
  static readonly NAME = 'ReplicationRefusal';
  override readonly name = Refusal.NAME;
  constructor(readonly code: RefusalCode, message: string) {
    super(message);
  }
}

interface StagedCopy {
  readonly cid: CID;
  readonly pinnedHere: boolean;
  readonly expiry: unknown;
}

/** The size of a local DAG (sum of its blocks), for `pinnedBytes`. */
async function localDagBytes(node: FilesNode, cid: CID, signal: AbortSignal): Promise<number> {
  const stat = await node.unixfs.stat(cid, { extended: true, offline: true, signal });
  return Number((stat as { dagSize?: bigint }).dagSize ?? 0);
}

/** The record of a copy this node now holds: an existing record is re-held through the lifecycle (notes A.7). */
function heldRecord(existing: FileRecord | undefined, cid: string, now: number, dagBytes: number): FileRecord {
  if (!existing) return confirmedRecord(cid, now, 'replica', dagBytes);
  const { record } = applyFileEvent(existing, { type: 'file.repin', at: now });
  return { ...record, pinned: true, heldLocally: true, dagBytes: record.dagBytes ?? dagBytes };
}

export function replicationResponderLogic(options: ReplicationResponderOptions) {
  const { holder, store, clock, logger } = options;
  const members = new Set(options.members);
  const staged = new Map<string, StagedCopy>();
  const stageKey = (session: string, cid: string) => `${session}\n${cid}`;

  const parseCid = (text: string): CID => {
    try {
      return CID.parse(text);
    } catch {
      throw new Refusal('invalid', 'invalid CID');
    }
  };

  /**
   * Runs `work` inside an incoming-copy slot and a disk-reserve claim of the file's size (its root is fetched for
   * the size first; spec §8: a copy must leave the reserve intact, like an upload).
   */
  const withCopySlot = async <T>(cid: CID, signal: AbortSignal, work: () => Promise<T>): Promise<T> => {
    const slot = options.tryIncomingCopy();
    if (!slot) throw new Refusal('busy', 'too many incoming copies');
    try {
      const stat = await holder.get().unixfs.stat(cid, { signal });
      let claim: { release(): void };
      try {
        claim = await options.claimDisk(Number((stat as { size?: bigint | number }).size ?? 0), signal);
      } catch (error) {
        if ((error as Error).name === 'InsufficientStorageError') throw new Refusal('insufficientStorage', 'disk reserve reached');
        throw error;
      }
      try {
        return await work();
      } finally {
        claim.release();
      }
    } finally {
      slot();
    }
  };

  /** Requests about one CID run one after another (two stores, a stage and its abort), never interleaved. */
  const cidQueue = new KeyedQueue();
  const oneAtATime = <T>(cid: CID, work: () => Promise<T>): Promise<T> => cidQueue.run(cid.toString(), work);

  /**
   * Pins `cid` (fetching what is missing from `source`, the peer that asked, which holds the content) under an intent
   * of `session`; true when this call made the pin. The caller holds the storage lease: fetched blocks are unpinned
   * until the pin completes. The owner writes the intent and the pin once the blocks are here.
   */
  const pinUnder = async (node: FilesNode, cid: CID, session: string, source: string, signal: AbortSignal): Promise<boolean> => {
    if (!(await node.pins.has(cid, signal))) await fetchFrom(node, cid, source, signal);
    return store.ask({ type: 'store.pinForSession', sessionId: session, cid }, { signal });
  };

  /**
   * Brings the blocks of `cid` into the blockstore, from `source` where it can: over the block pull protocol first
   * (storage/files/block-pull.libp2p.ts: one stream, every block checked against its CID before it is written), and
   * over bitswap when that fails for any reason (the source does not offer the protocol, refuses, lacks a block,
   * sends a block that fails its check, or the stream breaks). Blocks written by a failed pull were verified; the
   * bitswap walk finds them local. Either way the caller's storage hold covers them until the pin.
   */
  const fetchFrom = async (node: FilesNode, cid: CID, source: string, signal: AbortSignal): Promise<void> => {
    // A file of one block: `withCopySlot`'s stat has already brought it in.
    if (cid.code === RAW_CODEC && (await node.store.blockstore.has(cid))) return;
    try {
      await pullBlocks(node.libp2p, peerIdFromString(source), cid, {
        linksOf: (block, bytes) => linksOf(node.helia.getCodec, block, bytes),
        // (no signal into the write: FsBlockstore races it with one listener per write; a local write is short)
        write: async (block, bytes, writeSignal) => {
          if (await node.store.blockstore.has(block)) return;
          writeSignal.throwIfAborted();
          await node.store.blockstore.put(block, bytes);
        },
        signal,
      });
      return;
    } catch (error) {
      if (signal.aborted) throw error;
      // Only the kind: a peer's refusal code and text stay out of the logs (spec §2.1).
      logger.debug({ kind: (error as Error).name }, 'the block pull failed; fetching the copy over bitswap');
    }
    await fetchOverBitswap(node, cid, source, signal);
  };

  /** The copy's blocks over bitswap (before the block pull protocol, the only way; now its fallback). */
  const fetchOverBitswap = async (node: FilesNode, cid: CID, source: string, signal: AbortSignal): Promise<void> => {
    // helia's pin walk would fetch one block at a time (one bitswap round trip per 1 MiB leaf); this walk brings
    // COPY_FETCH_CONCURRENCY blocks in at once without reading them back (storage/files/dag-walk.ts), and the pin
    // walk then finds them local.
    const walk = { getCodec: node.helia.getCodec, concurrency: COPY_FETCH_CONCURRENCY, signal };
    // The blocks come from the asking peer only, through a bitswap session. The plain blockstore broadcasts every
    // want-block to all connected peers; in a cluster the other replicas fetch the same file at the same moment, keep
    // this node's wants and push each leaf to it as soon as they have it themselves, before the cancel arrives:
    // measured (64 MiB from A to B and C at once, B and C connected, 2 cores) B and C each received 128 MiB and sent
    // 64 MiB, 3.3-4.9 s CPU each, 6.2-6.8 s until both were pinned; with the session each receives 64 MiB and sends
    // nothing, 2.3-3.2 s CPU each, 4.5-5.2 s.
    // A single raw block (every file up to one chunk) is one want either way; a session would only add its
    // provider round trip (measured: repair of 1,000 1 KiB files fell from 13-17 to 9 copies/s with sessions).
    if (cid.code === RAW_CODEC) return walkDag(cid, { ...walk, blockstore: node.helia.blockstore });
    // (helia's typing of createSession names only AbortOptions; the networked blockstore passes `providers` on)
    const sessionOptions = { signal, providers: [peerIdFromString(source)] };
    const fromSource = node.helia.blockstore.createSession(cid, sessionOptions);
    try {
      await walkDag(cid, { ...walk, blockstore: fromSource });
    } catch (error) {
      if (signal.aborted) throw error;
      // The asker could not serve a block after all (it lost it meanwhile): ask every connected peer, as before.
      await walkDag(cid, { ...walk, blockstore: node.helia.blockstore });
    } finally {
      fromSource.close();
    }
  };

  /** Whether this node deliberately holds `cid`: a confirmed record it pins and keeps, with its root pin in place. */
  const holds = async (node: FilesNode, cid: CID, signal: AbortSignal): Promise<boolean> => {
    const record = node.registry.get(cid.toString());
    return record?.state === 'confirmed' && record.pinned && record.heldLocally && (await node.pins.has(cid, signal));
  };

  /** `work` under a shared hold of the storage lease, so the collector never deletes or releases what a copy relies on. */
  const leased = async <T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> => {
    // Its own hold: two stages of one uploader's session run side by side.
    const hold = randomUUID();
    await store.ask({ type: 'store.openSession', sessionId: hold }, { signal });
    try {
      return await work();
    } finally {
      store.tell({ type: 'store.closeSession', sessionId: hold });
    }
  };

  /**
   * Registers a pinned copy as held, with its intent marker removed in the same transaction: after this the copy is
   * durable here (notes C27). Answers the copy's DAG size.
   */
  const commitHeld = async (node: FilesNode, cid: CID, session: string, signal: AbortSignal): Promise<number> => {
    const text = cid.toString();
    const dagBytes = await localDagBytes(node, cid, signal);
    await store.ask({ type: 'store.commitSession', sessionId: session, entries: [{ cid: text, build: (existing) => heldRecord(existing, text, clock.now(), dagBytes) }] }, { signal });
    return dagBytes;
  };

  const storeCopy = (cid: CID, source: string, signal: AbortSignal): Promise<number> =>
    oneAtATime(cid, () =>
      leased(signal, async () => {
        const node = holder.get();
        const text = cid.toString();
        if (await holds(node, cid, signal)) return node.registry.get(text)?.dagBytes ?? 0;
        const session = randomUUID();
        let pinnedHere = false;
        try {
          pinnedHere = await pinUnder(node, cid, session, source, signal);
          return await commitHeld(node, cid, session, signal);
        } catch (error) {
          await store.ask({ type: 'store.rollbackSession', sessionId: session, unpin: pinnedHere ? [cid] : [], intents: 'all' }).catch(() => {});
          throw error;
        }
      }),
    );

  const abortStaged = (key: string): Promise<void> => {
    const copy = staged.get(key);
    if (!copy) return Promise.resolve();
    return oneAtATime(copy.cid, async () => {
      if (staged.get(key) !== copy) return;
      staged.delete(key);
      clock.clearTimeout(copy.expiry);
      const session = key.slice(0, key.indexOf('\n'));
      await store.ask({ type: 'store.rollbackSession', sessionId: session, unpin: copy.pinnedHere ? [copy.cid] : [], intents: [copy.cid] });
    });
  };

  const stage = (cid: CID, session: string, source: string, signal: AbortSignal): Promise<number> =>
    oneAtATime(cid, () =>
      leased(signal, async () => {
        const node = holder.get();
        const key = stageKey(session, cid.toString());
        if (staged.has(key)) return localDagBytes(node, cid, signal);
        let pinnedHere = false;
        try {
          pinnedHere = await pinUnder(node, cid, session, source, signal);
          const dagBytes = await localDagBytes(node, cid, signal);
          const expiry = clock.setTimeout(() => {
            logger.warn('a staged copy was neither committed nor aborted in time; aborting it');
            void abortStaged(key).catch((error: unknown) => logger.warn({ err: error }, 'aborting an expired staged copy failed'));
          }, STAGE_TTL_FACTOR * options.requestTimeoutMs);
          staged.set(key, { cid, pinnedHere, expiry });
          return dagBytes;
        } catch (error) {
          await store.ask({ type: 'store.rollbackSession', sessionId: session, unpin: pinnedHere ? [cid] : [], intents: [cid] }).catch(() => {});
          throw error;
        }
      }),
    );

  /**
   * Registers a staged copy. A stage that relied on an existing pin re-checks it (that pin may have been released
   * since) and pins again if needed; the stage is forgotten only once the record is written, so a failed commit can
   * still be aborted.
   */
  const commitStaged = (cid: CID, session: string, source: string, signal: AbortSignal): Promise<void> =>
    oneAtATime(cid, () =>
      leased(signal, async () => {
        const key = stageKey(session, cid.toString());
        const copy = staged.get(key);
        if (!copy) throw new Refusal('notFound', 'no such staged copy');
        const node = holder.get();
        const repinned = await pinUnder(node, cid, session, source, signal);
        await commitHeld(node, cid, session, signal);
        staged.delete(key);
        clock.clearTimeout(copy.expiry);
        if (repinned) logger.debug('a staged copy lost its pin before commit and was pinned again');
      }),
    );

  /** An unpinned copy: every block fetched into the blockstore, nothing registered (collected like read cache). */
  const cache = async (cid: CID, signal: AbortSignal): Promise<number> => {
    let bytes = 0;
    for await (const chunk of holder.get().unixfs.cat(cid, { signal })) bytes += chunk.length;
    return bytes;
  };

  /**
   * A member that asks for a stored copy is its source: it holds the file pinned (an upload pins before it places,
   * repair checks its own pin first), so it acknowledges a stored copy as far as this node's file status is concerned
   * (spec §2.2). The write is best effort: the copy here is durable either way.
   */
  const noteSource = (cid: CID, remotePeer: string) => store.tell({ type: 'store.noteHolders', notes: [{ cid: cid.toString(), held: [remotePeer] }], at: clock.now() });

  const answer = async (raw: unknown, remotePeer: string, signal: AbortSignal): Promise<ReplicationResponse> => {
    let request: ReplicationRequest;
    try {
      request = parseReplicationRequest(raw);
    } catch {
      return { ok: false, code: 'invalid', error: 'invalid request' };
    }
    try {
      const cid = parseCid(request.cid);
      if (request.op === 'cache') return { ok: true, op: 'cache', cachedBytes: await withCopySlot(cid, signal, () => cache(cid, signal)) };
      if (!members.has(remotePeer)) throw new Refusal('unauthorized', 'Not authorized');
      switch (request.op) {
        case 'have':
          return { ok: true, op: 'have', has: await holds(holder.get(), cid, signal) };
        case 'accept': {
          let willAccept = true;
          await withCopySlot(cid, signal, async () => undefined).catch(() => (willAccept = false));
          return { ok: true, op: 'accept', willAccept };
        }
        case 'store': {
          const storedBytes = await withCopySlot(cid, signal, () => storeCopy(cid, remotePeer, signal));
          noteSource(cid, remotePeer);
          return { ok: true, op: 'store', storedBytes };
        }
        case 'stage':
          return { ok: true, op: 'stage', stagedBytes: await withCopySlot(cid, signal, () => stage(cid, request.session, remotePeer, signal)) };
        case 'commit':
          await commitStaged(cid, request.session, remotePeer, signal);
          noteSource(cid, remotePeer);
          return { ok: true, op: 'commit' };
        case 'abort':
          await abortStaged(stageKey(request.session, cid.toString()));
          return { ok: true, op: 'abort' };
      }
    } catch (error) {
      if (error instanceof Refusal) return { ok: false, code: error.code, error: error.message };
      // Counted and kinded, never the peer's CID or id: the logger scrubs, and the line carries neither anyway.
      logger.debug({ op: request.op, kind: (error as Error).name }, 'replication request failed');
      return { ok: false, code: 'failed', error: 'copy failed' };
    }
  };

  /** `have` for each CID of a holdings request, in its order; members only, as `have`. */
  const answerHoldings = async (raw: unknown, remotePeer: string, signal: AbortSignal): Promise<HoldingsResponse> => {
    let request: HoldingsRequest;
    try {
      request = parseHoldingsRequest(raw);
    } catch {
      return { ok: false, code: 'invalid', error: 'invalid request' };
    }
    try {
      const cids = request.cids.map(parseCid);
      if (!members.has(remotePeer)) throw new Refusal('unauthorized', 'Not authorized');
      const node = holder.get();
      return { ok: true, has: await pLimit(HOLDINGS_LOOKUPS_AT_ONCE).map(cids, (cid) => holds(node, cid, signal)) };
    } catch (error) {
      if (error instanceof Refusal) return { ok: false, code: error.code, error: error.message };
      logger.debug({ op: 'holdings', kind: (error as Error).name }, 'replication request failed');
      return { ok: false, code: 'failed', error: 'holdings failed' };
    }
  };

  return fromCallback(() => {
    const node = holder.get();
    const libp2p = node.libp2p;
    // Work in flight ends with the actor: a copy finishing after the stop would pin for nobody.
    const lifetime = new AbortController();
    // The request's signal and the actor's lifetime, linked for the answer only (`linkSignals`: AbortSignal.any leaks).
    const underLifetime =
      <T>(work: (raw: unknown, remotePeer: string, signal: AbortSignal) => Promise<T>) =>
      async (raw: unknown, remotePeer: string, signal: AbortSignal): Promise<T> => {
        const linked = linkSignals([signal, lifetime.signal]);
        try {
          return await work(raw, remotePeer, linked.signal);
        } finally {
          linked.release();
        }
      };
    const bounded = underLifetime(answer);
    const handler = frameHandler(REPLICATION_MAX_FRAME_BYTES, options.requestTimeoutMs, clock, bounded, (error) =>
      logger.debug({ kind: (error as Error | undefined)?.name }, 'replication stream failed'),
    );
    changeProtocols(libp2p, () =>
      libp2p.handle(REPLICATION_PROTOCOL, handler, { maxInboundStreams: PROTOCOL_STREAMS, maxOutboundStreams: PROTOCOL_STREAMS, force: true }),
    ).catch((error: unknown) => logger.error({ err: error }, 'the replication protocol could not be registered'));
    const holdingsHandler = frameHandler(
      HOLDINGS_MAX_FRAME_BYTES,
      options.requestTimeoutMs,
      clock,
      underLifetime(answerHoldings),
      (error) => logger.debug({ kind: (error as Error | undefined)?.name }, 'holdings stream failed'),
    );
    changeProtocols(libp2p, () =>
      libp2p.handle(HOLDINGS_PROTOCOL, holdingsHandler, { maxInboundStreams: PROTOCOL_STREAMS, maxOutboundStreams: PROTOCOL_STREAMS, force: true }),
    ).catch((error: unknown) => logger.error({ err: error }, 'the holdings protocol could not be registered'));
    // The block pull's serving side: members pull the copies this node asks them to keep.
    let blockStreams = 0;
    const blocks = blockServer({
      read: (cid, signal) => node.store.blockstore.getBlock(cid, { signal }),
      linksOf: (cid, bytes) => linksOf(node.helia.getCodec, cid, bytes),
      authorized: (peerId) => members.has(peerId),
      trySlot: () => {
        if (blockStreams >= BLOCK_STREAMS) return undefined;
        blockStreams++;
        return () => void blockStreams--;
      },
      timeoutMs: options.requestTimeoutMs,
      clock,
      lifetime: lifetime.signal,
      onError: (error) => logger.debug({ kind: (error as Error | undefined)?.name }, 'a block pull stream failed'),
    });
    changeProtocols(libp2p, () =>
      libp2p.handle(BLOCKS_PROTOCOL, blocks, { maxInboundStreams: PROTOCOL_STREAMS, maxOutboundStreams: PROTOCOL_STREAMS, force: true }),
    ).catch((error: unknown) => logger.error({ err: error }, 'the block pull protocol could not be registered'));
    return () => {
      lifetime.abort(new Error('the replication actor stopped'));
      for (const key of [...staged.keys()]) void abortStaged(key).catch(() => {});
      void changeProtocols(libp2p, () => libp2p.unhandle(REPLICATION_PROTOCOL)).catch(() => {});
      void changeProtocols(libp2p, () => libp2p.unhandle(HOLDINGS_PROTOCOL)).catch(() => {});
      void changeProtocols(libp2p, () => libp2p.unhandle(BLOCKS_PROTOCOL)).catch(() => {});
    };
  });
}
