// `files.content`: every operation that moves or describes content, answered over ask() so the edge never
// touches helia, the blockstore or the registry (docs/DESIGN.md rule 5). Uploads (one ask runs the whole session: the
// disk claim, each file's import, commit or rollback, the claim's release), content reads with the download
// deadlines, file status and lifecycle events, and the operator pin routes.

import type { CatOptions } from '@helia/unixfs';
import { CID } from 'multiformats/cid';
import { code as RAW_CODEC } from 'multiformats/codecs/raw';
import { randomUUID } from 'node:crypto';
import { fromCallback } from 'xstate';
import { FileNotFoundError, FileTimeoutError, QuorumNotReachedError, ReplicaSettlementError, UnreadableContentError } from '../../src/files/errors.js';
import { STAGED_SESSION_PREFIX } from '../../src/files/wire.js';
import { confirmedRecord, newUploadRecord, publicStatus, type FileStatus } from '../../src/files/lifecycle.js';
import type { FilesConfig } from '../../src/files/config.js';
import { copyTargets, localOnlyReport, placementOf, replicationReport, statusReplication, type CopyOutcome, type PlacementTier, type ReplicationReport } from '../../src/files/placement.js';
import type { FileEvent, FileRecord } from '../../src/files/types.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import { deadline, type Clock } from '../../src/clock.js';
import { settledByAbort } from '../../src/cancellation.js';
import { readAcrossPeerLoss } from '../../src/files/peer-loss.js';
import type { CopyClient } from '../../storage/files/peer-copy.libp2p.js';
import type { FilesNode, NodeHolder } from './node.js';
import type { SessionRecord, StorePort } from './store.actor.js';
import { isPlainFileRoot, readFile, type BlockSource } from './file-reader.js';
import { InFlightBlocks, UploadSession, type ImportedFile } from './upload-session.js';
import { refuseUnknownMessage } from '../ask.js';
import { PackedJsonValues } from '../../src/packed-strings.js';

export interface ContentSettings {
  readonly confirmationRequired: boolean;
  readonly temporaryTtlMs: number;
  /** Discovery deadline (`findFileTimeout`). */
  readonly findFileTimeoutMs: number;
  /** Stalled-transfer deadline (`downloadIdleTimeout`). */
  readonly downloadIdleTimeoutMs: number;
  readonly downloadMinBytesPerSecond: number;
  readonly downloadMaxDurationMs: number;
  /** How uploads place copies on peers (docs/specs/files-node.md §2.1, §4.2 503). */
  readonly replication: {
    readonly enabled: boolean;
    readonly placement: readonly PlacementTier[];
    readonly ackQuorum: number;
    readonly requireQuorumOnUpload: boolean;
    /** Peer ids of the configured `nodes` (the placement's members). */
    readonly members: readonly string[];
  };
}

/** A committed upload: each file's record and replication report, in request order. */
export interface CommittedUpload {
  readonly records: readonly FileRecord[];
  readonly reports: readonly ReplicationReport[];
}

/** One file of an upload body, as the edge parsed it (a multipart part named `files`). */
export interface UploadPart {
  readonly name: string;
  readonly content: AsyncIterable<Uint8Array>;
}

/**
 * The files of an upload body, in order. The iteration fails with the body's own refusal (malformed, a file too
 * large, too many files, no file, the client gone), once the body has been read to its end so the client gets the
 * answer after sending.
 */
export interface UploadParts extends AsyncIterable<UploadPart> {
  /**
   * The upload failed with `reason` while a part was being read (its import failed): reads the rest of the body
   * without keeping it and resolves, once it ended, with the failure that decides the answer (the body's own when it
   * failed first, else `reason`).
   */
  stop(reason: Error): Promise<Error>;
}

/** What an upload answered: each file in request order, and the committed records and replication reports. */
export interface UploadOutcome {
  readonly files: ReadonlyArray<{ readonly name: string; readonly cid: CID; readonly dagBytes: number }>;
  readonly committed: CommittedUpload;
}

/** One upload request's transaction (notes A.8). */
interface UploadHandle {
  importFile(content: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<ImportedFile>;
  /**
   * Pins and registers every imported file in one registry transaction (the session's blocks then stay) and places
   * the confirmed ones on their designated peers. A strict upload (`requireQuorumOnUpload`) registers only once every
   * file reached its quorum; otherwise the peers' staged copies are aborted and QuorumNotReachedError is thrown, and
   * `rollback` puts back the pre-request pins (records were never written).
   */
  commit(files: ReadonlyArray<{ cid: CID; dagBytes: number }>, signal: AbortSignal): Promise<CommittedUpload>;
  /** Undoes everything this request did: its pins, its intents, the blocks it created. */
  rollback(): Promise<void>;
}

/** A readable file, found before any byte is sent (so 304 and 408 are decided first). */
export interface OpenedContent {
  readonly cid: string;
  readonly size: number;
  /** The bytes, bounded by the idle and size-aware complete deadlines; ends the retrieval on return. */
  chunks(signal: AbortSignal): AsyncIterable<Uint8Array>;
}

export type ContentEvent =
  /** `claimBytes`: the disk reserve the upload claims before reading its body (507 when refused). */
  | { type: 'upload.run'; claimBytes: number; parts: UploadParts; reply: Reply<UploadOutcome> }
  | { type: 'content.open'; cid: CID; reply: Reply<OpenedContent> }
  | { type: 'file.status'; cid: CID; reply: Reply<FileStatus> }
  | { type: 'file.change'; cid: CID; change: 'confirm' | 'unpin'; reply: Reply<FileStatus> }
  /** Every pin as `{ cid, depth, metadata }`, packed (a million pins as objects were some hundreds of MiB of heap). */
  | { type: 'pins.list'; reply: Reply<PackedJsonValues> }
  | { type: 'pins.add'; cid: CID; reply: Reply<FileStatus> }
  | { type: 'pins.isPinned'; cid: CID; reply: Reply<boolean> };

export interface ContentOptions {
  /**
   * The running node: an upload, a download or a lifecycle change reads it once and uses that node's blocks, pins,
   * records and network throughout, so one operation never spans two lives of a restarted runtime.
   */
  readonly holder: NodeHolder;
  readonly clock: Clock;
  /**
   * The owner of records, intents, pins and the storage lease (actors/files/store.actor.ts). An upload holds the lease
   * shared from its first block write to commit or rollback (notes A.4 rule 8), so the collector's deletion pass never
   * deletes one of its blocks as "unpinned"; an operator pin holds it while it fetches (the owner takes it then).
   */
  readonly store: StorePort;
  readonly settings: ContentSettings;
  /** The asking side of the replication protocol (absent: nothing is placed, as with replication disabled). */
  readonly copies?: CopyClient;
  /** Claims disk space for an upload (`files.disk`; InsufficientStorageError below the reserve). */
  readonly claimDisk: (bytes: number, signal: AbortSignal) => Promise<{ release(): void }>;
  readonly logger: Logger;
}

/**
 * Blocks the exporter reads at once where a download still goes through `unixfs.cat` (a CID that is not a plain
 * UnixFS file; the bench's baseline too). Its default reads every child of a DAG layer at once.
 */
export const DOWNLOAD_BLOCK_READ_CONCURRENCY = 8;

/**
 * Blocks a download reads ahead, the one being waited for included (actors/files/file-reader.ts): enough to keep the
 * disk busy while the client drains a block, and a download holds about this many MiB (1 MiB leaves) of file bytes
 * however slow its client is. The exporter read the whole file ahead of a slow client (issue 14, item 5).
 */
export const DOWNLOAD_READ_AHEAD_BLOCKS = 3;

/** Settling a staged copy goes on when the client leaves (the copy client bounds it by the request timeout). */
const NO_CANCEL = new AbortController().signal;

/** The content actor's settings from the files configuration. */
export function contentSettings(config: FilesConfig): ContentSettings {
  return {
    confirmationRequired: config.storage.confirmationRequired,
    temporaryTtlMs: config.storage.temporaryTtlMs,
    findFileTimeoutMs: config.findFileTimeout,
    downloadIdleTimeoutMs: config.downloadIdleTimeout,
    downloadMinBytesPerSecond: config.downloadMinBytesPerSecond,
    downloadMaxDurationMs: config.downloadMaxDurationMs,
    replication: {
      enabled: config.replication.enabled,
      placement: config.replication.placement,
      ackQuorum: config.replication.ackQuorum,
      requireQuorumOnUpload: config.replication.requireQuorumOnUpload,
      members: config.nodes.map((node) => node.peerId),
    },
  };
}

/** notes A.3: min(downloadMaxDurationMs, ceil(size / minBytesPerSecond) s + idle). */
export function completeDeadlineMs(size: number, settings: ContentSettings): number {
  return Math.min(settings.downloadMaxDurationMs, Math.ceil(size / settings.downloadMinBytesPerSecond) * 1000 + settings.downloadIdleTimeoutMs);
}

/**
 * One block for a download: from the node's block files in one read (storage/files/blockstore.fs.ts); a block not
 * held here comes through helia's blockstore, which fetches it from peers over bitswap and stores it, as `cat` did.
 * A peer that leaves mid-fetch does not end the download: the block is asked again until the download's own idle and
 * complete deadlines (`signal`) end it (src/files/peer-loss.ts).
 */
function downloadBlockSource(node: FilesNode, clock: Clock, logger: Logger): BlockSource {
  return async (cid, signal, memory) => {
    try {
      return await node.store.blockstore.getBlock(cid, { signal, memory });
    } catch (error) {
      if ((error as Error).name !== 'NotFoundError') throw error;
    }
    // From the network: helia may notice the signal seconds late (src/cancellation.ts), the download's deadlines may not.
    const fetchBlock = async () => {
      const pieces: Uint8Array[] = [];
      for await (const piece of node.helia.blockstore.get(cid, { signal })) pieces.push(piece);
      return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
    };
    return readAcrossPeerLoss(clock, signal, () => settledByAbort(fetchBlock(), signal), (error) =>
      logger.debug({ err: error, block: cid.toString() }, 'a peer left while sending a download block; asking again'),
    );
  };
}

/**
 * The bytes of a file for a download. A UnixFS file (stat type `file` or `raw`) is read by readFile with
 * DOWNLOAD_READ_AHEAD_BLOCKS of read-ahead; anything else (a directory, dag-cbor, an identity CID) goes through
 * `unixfs.cat` as before, which yields its bytes or fails as it did (NotAFileError).
 */
export function downloadChunks(node: FilesNode, cid: CID, type: string, size: number, signal: AbortSignal, clock: Clock, logger: Logger): AsyncIterable<Uint8Array> {
  if ((type === 'file' || type === 'raw') && isPlainFileRoot(cid)) {
    // The edge is done with a chunk when it asks for the next one (HttpReply.stream): leaf memory is reused.
    return readFile(cid, size, downloadBlockSource(node, clock, logger), { signal, readAhead: DOWNLOAD_READ_AHEAD_BLOCKS, reuseChunks: true });
  }
  // @helia/unixfs hands its options on to the exporter, which knows `blockReadConcurrency` (not in CatOptions' type).
  const catOptions: CatOptions & { blockReadConcurrency: number } = { signal, blockReadConcurrency: DOWNLOAD_BLOCK_READ_CONCURRENCY };
  return node.unixfs.cat(cid, catOptions);
}

export function contentLogic(options: ContentOptions) {
  const inFlight = new InFlightBlocks();
  const { holder, clock, settings, logger, store } = options;

  const answer = <T>(reply: Reply<T>, work: () => Promise<T>) => {
    work().then(reply.resolve, (error: unknown) => reply.reject(error as Error));
  };

  const replicated = settings.replication.enabled && options.copies !== undefined;

  /**
   * Asks the designated peers of a confirmed file for their copies, in parallel, and reports the outcomes (spec
   * §2.1). With a session, the copies are staged. A temporary file is placed once confirmed (notes C2), so its report
   * has the placement's counts and no attempts (C15); with replication off the local copy is the network (C14).
   */
  const placeCopies = async (node: FilesNode, record: FileRecord, signal: AbortSignal, session?: string) => {
    const { replication } = settings;
    if (!replicated || !options.copies) return { cid: record.cid, report: localOnlyReport(1, replication.ackQuorum), askedPeers: [] as string[] };
    const placement = placementOf(record.cid, replication.members, node.peerId, replication.placement, clock.now() - record.createdAt);
    if (record.state !== 'confirmed') return { cid: record.cid, report: replicationReport(placement, replication.ackQuorum, []), askedPeers: [] };
    const targets = copyTargets(placement, node.peerId);
    const copies = options.copies;
    const outcomes: CopyOutcome[] = await Promise.all(targets.map((peerId) => copies.place(peerId, record.cid, signal, session)));
    // A staged copy is not stored until its commit is settled: the strict path notes those itself.
    if (session === undefined) store.tell({ type: 'store.noteHolders', notes: [{ cid: record.cid, held: targets.filter((_, index) => outcomes[index] === 'stored') }], at: clock.now() });
    return { cid: record.cid, report: replicationReport(placement, replication.ackQuorum, outcomes), askedPeers: targets };
  };

  /** Places each distinct file of a request once (the same bytes twice are one CID), reports in request order. */
  const placeAll = async (node: FilesNode, records: readonly FileRecord[], signal: AbortSignal, session?: string) => {
    const distinct = [...new Map(records.map((record) => [record.cid, record])).values()];
    const placed = await Promise.all(distinct.map((record) => placeCopies(node, record, signal, session)));
    const byCid = new Map(placed.map((entry) => [entry.cid, entry]));
    return { placed, reports: records.map((record) => byCid.get(record.cid)!.report) };
  };

  /** A staged copy's end: true when the peer settled it. A peer that misses an abort drops the stage after its TTL. */
  const settleStaged = async (peerId: string, cid: string, op: 'commit' | 'abort', session: string): Promise<boolean> => {
    try {
      const answer = await options.copies!.request(peerId, { op, cid, session }, NO_CANCEL);
      if (!answer.ok && op === 'commit') logger.warn({ op }, 'a peer refused to settle a staged copy');
      return answer.ok;
    } catch (error) {
      logger.warn({ op, kind: (error as Error).name }, 'a staged copy could not be settled');
      return false;
    }
  };

  const beginUpload = (): UploadHandle => {
    const node = holder.get();
    const session = new UploadSession(node.store.blockstore, inFlight);
    const strict = replicated && settings.replication.requireQuorumOnUpload;
    // A strict session's id goes to the peers too: their staged copies belong to it (src/files/wire.ts), and its
    // prefix lets storage metrics count the markers of in-flight strict uploads (`stagedReplicas`, spec §2.6).
    const sessionId = strict ? `${STAGED_SESSION_PREFIX}${randomUUID()}` : randomUUID();
    const pinnedHere: CID[] = [];
    let registered = false;
    // The shared lease is taken lazily, right before the first block write (the first import), with the request's
    // signal, so a request refused before it sends a file never waits behind a collector pass. runUpload drives the
    // session in order (imports, then commit or rollback), so the lease is given back once the session ends.
    let acquiring: Promise<void> | undefined;
    let held = false;
    const holdLease = (signal: AbortSignal): Promise<void> =>
      (acquiring ??= store.ask({ type: 'store.openSession', sessionId }, { signal }).then(() => {
        held = true;
      }));
    const endLease = () => {
      if (held) store.tell({ type: 'store.closeSession', sessionId });
      held = false;
    };
    return {
      async importFile(content, signal) {
        await holdLease(signal);
        return session.importFile(content, signal);
      },
      async commit(files, signal) {
        await holdLease(signal);
        const now = clock.now();
        const entries: SessionRecord[] = [];
        for (const file of files) {
          const cid = file.cid.toString();
          // The owner writes the intent marker before the pin: a crash between pin and registry is rolled back at the next start.
          if (await store.ask({ type: 'store.pinForSession', sessionId, cid: file.cid }, { signal })) pinnedHere.push(file.cid);
          entries.push({
            cid,
            build: (existing) =>
              existing && existing.state !== 'expired'
                ? { ...existing, pinned: true, heldLocally: true }
                : newUploadRecord(cid, now, { confirmationRequired: settings.confirmationRequired, temporaryTtlMs: settings.temporaryTtlMs, dagBytes: file.dagBytes }),
          });
        }
        const register = async (): Promise<FileRecord[]> => {
          const records = await store.ask({ type: 'store.commitSession', sessionId, entries }, { signal });
          registered = true;
          session.commit();
          // Every block of the request is pinned now: the collector may run.
          endLease();
          return records;
        };
        if (!strict) {
          const records = await register();
          return { records, reports: (await placeAll(node, records, signal)).reports };
        }
        // Strict (spec §4.2 503): the local pins are in place, so the collector may run while peers stage their
        // copies under this session; the records are written only on quorum. Copies are placed for the records as
        // they would be now; the commit builds them again from the records that stand then.
        endLease();
        const preview = entries.map((entry) => entry.build(node.registry.get(entry.cid)));
        const { placed, reports } = await placeAll(node, preview, signal, sessionId);
        if (!reports.every((report) => report.satisfied)) {
          // Every peer asked, not only those that said stored: a stage that finished after its answer timed out
          // would otherwise stay pinned until its time-to-live.
          await Promise.all(placed.flatMap((entry) => entry.askedPeers.map((peerId) => settleStaged(peerId, entry.cid, 'abort', sessionId))));
          logger.warn({ files: preview.length, unsatisfied: reports.filter((report) => !report.satisfied).length }, 'strict upload missed its quorum; rolled back');
          throw new QuorumNotReachedError();
        }
        const records = await register();
        const stored = placed.flatMap((entry) => entry.askedPeers.filter((_, index) => entry.report.attempts[index]?.outcome === 'stored').map((peerId) => ({ peerId, cid: entry.cid })));
        const settled = await Promise.all(stored.map(({ peerId, cid }) => settleStaged(peerId, cid, 'commit', sessionId)));
        const committed = stored.filter((_, index) => settled[index]).map(({ peerId, cid }) => ({ cid, held: [peerId] }));
        store.tell({ type: 'store.noteHolders', notes: committed, at: clock.now() });
        // spec §4.2 500: "replica settlement failed"; the local decision stays durable and repair fixes the copies.
        if (!settled.every(Boolean)) throw new ReplicaSettlementError();
        return { records, reports };
      },
      async rollback() {
        try {
          if (registered) return;
          // A copy a peer asked for meanwhile may rely on one of these pins now (its record is committed): kept then.
          await store.ask({ type: 'store.rollbackSession', sessionId, unpin: pinnedHere, intents: 'all' }).catch((error: unknown) => logger.warn({ err: error }, 'rollback could not release its pins'));
          await session.rollback((cid) => node.helia.pins.isPinned(cid));
        } finally {
          // After the created blocks are gone (or failed to go): the collector may take the rest.
          endLease();
        }
      },
    };
  };

  /**
   * One upload, whole: claim its bytes, import each part as it arrives (one at a time, in order), commit; on any
   * failure roll back after the body ended (so the rollback never races an import); the claim is given back last.
   */
  const runUpload = async (claimBytes: number, parts: UploadParts, signal: AbortSignal): Promise<UploadOutcome> => {
    const claim = await options.claimDisk(claimBytes, signal);
    try {
      const session = beginUpload();
      try {
        const files: Array<UploadOutcome['files'][number]> = [];
        for await (const part of parts) {
          let imported: ImportedFile;
          try {
            imported = await session.importFile(part.content, signal);
          } catch (error) {
            throw await parts.stop(error as Error);
          }
          files.push({ name: part.name, cid: imported.cid, dagBytes: imported.dagBytes });
        }
        return { files, committed: await session.commit(files, signal) };
      } catch (error) {
        await session.rollback().catch((rollbackError: unknown) => logger.error({ err: rollbackError }, 'upload rollback failed'));
        throw error;
      }
    } finally {
      claim.release();
    }
  };

  const open = async (cid: CID, signal: AbortSignal): Promise<OpenedContent> => {
    const node = holder.get();
    const opened = (type: string, size: number): OpenedContent => ({ cid: cid.toString(), size, chunks: (readSignal) => readWithDeadlines(node, cid, type, size, readSignal) });
    // A raw CID held here is a whole file of one block: its size is its block file's size. helia's stat would read
    // the block once more before the download reads it (a small file's download opened its block file twice).
    if (cid.code === RAW_CODEC) {
      const localSize = await node.store.blockstore.sizeOf(cid);
      if (localSize !== undefined) return opened('raw', localSize);
    }
    const discovery = deadline(clock, settings.findFileTimeoutMs, signal);
    let size: number;
    let type: string;
    try {
      // The discovery deadline answers 408 on time even when helia notices its signal late (src/cancellation.ts), and
      // a peer that leaves while it is asked is no answer about the file (src/files/peer-loss.ts).
      const stat = await readAcrossPeerLoss(
        clock,
        discovery.signal,
        () => settledByAbort(node.unixfs.stat(cid, { signal: discovery.signal }), discovery.signal),
        (error) => logger.debug({ err: error, cid: cid.toString() }, 'a peer left while a download was looking for its file; asking again'),
      );
      // A directory (or any non-file UnixFS node) has no bytes to send as one attachment.
      if (stat.type !== 'file' && stat.type !== 'raw') throw new UnreadableContentError();
      size = Number((stat as { size?: bigint | number }).size ?? 0);
      type = stat.type;
    } catch (error) {
      if (discovery.expired) throw new FileTimeoutError('discovery');
      // The block is here but does not decode as its CID's codec says (a dag-pb CID of raw bytes).
      if ((error as Error).name === 'NotUnixFSError') throw new UnreadableContentError();
      throw error;
    } finally {
      discovery.clear();
    }
    return opened(type, size);
  };

  const readWithDeadlines = async function* (node: FilesNode, cid: CID, type: string, size: number, signal: AbortSignal): AsyncGenerator<Uint8Array> {
    const controller = new AbortController();
    const abort = () => controller.abort(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    let expired: FileTimeoutError | undefined;
    const complete = clock.setTimeout(() => {
      expired = new FileTimeoutError('complete');
      controller.abort(expired);
    }, completeDeadlineMs(size, settings));
    let idle: unknown;
    const armIdle = () => {
      clock.clearTimeout(idle);
      idle = clock.setTimeout(() => {
        expired = new FileTimeoutError('idle');
        controller.abort(expired);
      }, settings.downloadIdleTimeoutMs);
    };
    try {
      armIdle();
      for await (const chunk of downloadChunks(node, cid, type, size, controller.signal, clock, logger)) {
        armIdle();
        yield chunk;
      }
    } catch (error) {
      throw expired ?? error;
    } finally {
      clock.clearTimeout(idle);
      clock.clearTimeout(complete);
      signal.removeEventListener('abort', abort);
      controller.abort();
    }
  };

  /**
   * The status of a record with the figures its upload report would give now (spec §2.2, §2.1): the local pinned copy
   * plus the peers that acknowledged a stored copy and are still designated, against the quorum capped by the network.
   */
  const statusOf = (node: FilesNode, record: FileRecord): FileStatus => {
    const { replication } = settings;
    const policy = { replicated, members: replication.members, self: node.peerId, tiers: replication.placement, ackQuorum: replication.ackQuorum, now: clock.now() };
    return publicStatus(record, statusReplication(record, policy, replicated ? node.registry.acknowledgedBy(record.cid) : []));
  };

  const statusOfCid = (node: FilesNode, cid: CID): FileStatus => {
    const record = node.registry.get(cid.toString());
    if (!record) throw new FileNotFoundError();
    return statusOf(node, record);
  };

  const change = async (cid: CID, kind: FileEvent['type'], signal: AbortSignal, create?: FileRecord): Promise<FileStatus> => {
    const node = holder.get();
    // An event that may pin may fetch: bounded like a download's discovery (notes C13); the owner holds the lease then.
    const fetch = kind === 'file.unpin' ? undefined : { timeoutMs: settings.findFileTimeoutMs };
    const decide = (): FileEvent => ({ type: kind, at: clock.now() }) as FileEvent;
    const { record, written } = await store.ask({ type: 'store.change', cid, decide, create, fetch }, { signal });
    if (!record) throw new FileNotFoundError();
    if (written) logger.debug({ change: kind, state: record.state }, 'file lifecycle changed');
    // notes A.7: a confirmed file is placed on its designated peers; the answer does not wait (repair retries).
    if (kind === 'file.confirm' && record.state === 'confirmed' && replicated) {
      void placeCopies(node, record, NO_CANCEL).then(
        ({ report }) => logger.debug({ acknowledged: report.acknowledged, required: report.required }, 'confirmed file placed'),
        (error: unknown) => logger.warn({ err: error }, 'placing a confirmed file failed'),
      );
    }
    return statusOf(node, record);
  };

  return fromCallback<ContentEvent>(({ receive }) => {
    receive((event) => {
      switch (event.type) {
        case 'upload.run':
          return answer(event.reply, () => runUpload(event.claimBytes, event.parts, event.reply.signal));
        case 'content.open':
          return answer(event.reply, () => open(event.cid, event.reply.signal));
        case 'file.status':
          return answer(event.reply, async () => statusOfCid(holder.get(), event.cid));
        case 'file.change':
          return answer(event.reply, () => change(event.cid, event.change === 'confirm' ? 'file.confirm' : 'file.unpin', event.reply.signal));
        case 'pins.list':
          return answer(event.reply, async () => {
            const pins = new PackedJsonValues();
            for await (const pin of holder.get().helia.pins.ls({ signal: event.reply.signal })) {
              pins.push({ cid: pin.cid.toString(), depth: pin.depth, metadata: pin.metadata });
            }
            return pins;
          });
        case 'pins.add':
          // notes A.7: re-pinning registers the file as confirmed again (a new record when unknown).
          return answer(event.reply, () =>
            change(event.cid, 'file.repin', event.reply.signal, { ...confirmedRecord(event.cid.toString(), clock.now(), 'pin', null), pinned: false, state: 'expired' }),
          );
        case 'pins.isPinned':
          return answer(event.reply, () => holder.get().pins.has(event.cid, event.reply.signal));
        default:
          return refuseUnknownMessage(event);
      }
    });
  });
}
