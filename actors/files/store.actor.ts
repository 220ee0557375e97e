// `files.store`: the one owner of the node's durable file state (docs/DESIGN.md actor rules 3 and 5;
// docs/specs/files-node.md §3.1, §4.2; docs/notes/files-node.md A.4 rules 7-8, A.7, A.8, C22). It alone writes file
// records, pin intents, root pins and holder acknowledgements, and it holds the storage lease (who may write unpinned
// blocks, and when the collector may delete them). Uploads, incoming copies, the collector, repair, the startup walk
// and the operator routes send it messages and get answers; they still read the registry and the pin set directly
// (a read cannot break what the owner keeps consistent).
//
// How it keeps one CID's story in order without "decide again":
// - every operation names the CIDs it touches (a lifecycle event one, a session commit all of its files); the owner
//   starts an operation only when none of its CIDs is busy and no earlier waiting operation shares one, so a CID's
//   operations run one at a time, in the order they reached the owner;
// - an operation that takes long (a pin that fetches over bitswap, a DAG walk to remove a pin) runs as a child task
//   while its CIDs are marked busy; when it ends it reports back (`store.settled`) and the next one starts. So the
//   record an operation decided on is still the record that stands when it writes: the file-lifecycle machine
//   (`applyFileEvent`) decides once.
// - the storage lease is the owner's own state (src/files/storage-lease.ts, no I/O): block writers (an upload, an
//   incoming copy, a lifecycle event that may fetch) hold it shared from `store.openSession` to `store.closeSession`,
//   the collector exclusively from `store.beginCollection` to `store.endCollection`. A lifecycle event that may fetch
//   takes its hold BEFORE it waits for its CID: the collector's releases, which it sends while holding the lease,
//   must never queue behind a pin that waits for that same lease.
//
// Record writes are synchronous (better-sqlite3): an operation that only writes (a commit) runs at once when its CIDs
// are free.

import { CID } from 'multiformats/cid';
import { fromCallback } from 'xstate';
import { applyFileEvent } from '../../machines/files/file-lifecycle.machine.js';
import { deadline, type Clock } from '../../src/clock.js';
import { linkSignals, onAbort, type LinkedSignal } from '../../src/cancellation.js';
import { FileTimeoutError } from '../../src/files/errors.js';
import { StorageLease, type LeaseMode, type LeaseRelease, type LeaseState } from '../../src/files/storage-lease.js';
import type { FileEvent, FileRecord } from '../../src/files/types.js';
import type { Logger } from '../../src/logger.js';
import type { Reply } from '../../src/reply.js';
import type { HolderNote, PinIntent } from '../../storage/files/registry.js';
import { refuseUnknownMessage, type AskFor } from '../ask.js';
import type { FilesNode, NodeHolder } from './node.js';

/** What a lifecycle event did. */
export interface ChangeOutcome {
  /** The record that stands after the event (undefined: none is stored). */
  readonly record: FileRecord | undefined;
  /** Whether this event wrote it. */
  readonly written: boolean;
}

/** A session's record, built from the record that stands when the session commits (undefined: none yet). */
export interface SessionRecord {
  readonly cid: string;
  readonly build: (existing: FileRecord | undefined) => FileRecord;
}

/** What a pin restored by the collector's verification came to (rule 6). */
export type RestoredPin = 'present' | 'restored' | 'unprotected' | 'notNeeded';

/** Occupancy, for the collector's logs and tests. */
export interface StoreState {
  readonly lease: LeaseState;
  /** CIDs an operation is working on now. */
  readonly busyCids: number;
  /** Operations waiting for a busy CID. */
  readonly waiting: number;
}

export type StoreEvent =
  /**
   * A lifecycle event for the record that stands when the event's turn comes: `decide` picks it (null: nothing to do
   * for that record). `create` is the record to start from when none is stored (re-pinning a CID this node never
   * registered, notes A.7). `fetch`: the event may pin content that is not local, fetched over bitswap within
   * `timeoutMs` (FileTimeoutError 'discovery' past it), under a shared hold of the lease; without it a pin is local.
   */
  | {
      type: 'store.change';
      cid: CID;
      decide: (current: FileRecord) => FileEvent | null;
      create?: FileRecord;
      fetch?: { timeoutMs: number };
      reply: Reply<ChangeOutcome>;
    }
  /** A block-writing session (an upload, an incoming copy) starts: answered once its shared hold is granted. */
  | { type: 'store.openSession'; sessionId: string; reply: Reply<void> }
  /** Gives a session's hold back; idempotent. */
  | { type: 'store.closeSession'; sessionId: string }
  /**
   * Pins `cid` for a session, its intent marker first (a crash between pin and commit is rolled back at the next
   * start). Answers true when this call made the pin (false: a pin was there).
   */
  | { type: 'store.pinForSession'; sessionId: string; cid: CID; reply: Reply<boolean> }
  /** Writes a session's records and removes its intent markers in one transaction (notes A.8, C22). */
  | { type: 'store.commitSession'; sessionId: string; entries: readonly SessionRecord[]; reply: Reply<FileRecord[]> }
  /**
   * A session that did not commit: removes the pins it made (`unpin`) and those under its intents unless a committed
   * record relies on one by now or another session's intent covers it, then its intent markers (`intents`: all of the
   * session's, or those of the listed CIDs).
   */
  | { type: 'store.rollbackSession'; sessionId: string; unpin: readonly CID[]; intents: 'all' | readonly CID[]; reply: Reply<void> }
  /** The startup walk: an interrupted session's intent; the pin is made to agree with the record, then the marker goes. */
  | { type: 'store.settleIntent'; intent: PinIntent; cid: CID; reply: Reply<void> }
  /**
   * The startup walk: registers pins the registry does not know, in one transaction (one fsync for the batch: the walk
   * of an original store registers every pin, issue 30). Answers the CIDs registered; a record is left out when one
   * exists by now, a live session's intent covers the pin, or the pin is gone.
   */
  | { type: 'store.backfill'; records: readonly FileRecord[]; reply: Reply<string[]> }
  /** The collector's pin verification (rule 6): a lost pin of a record that must be pinned, restored from local blocks. */
  | { type: 'store.restorePin'; cid: CID; reply: Reply<RestoredPin> }
  /**
   * Peers that acknowledged (`held`) or no longer hold (`gone`) a stored copy, per file, asked at the note's `at` or
   * else the notice's, for the file status and the repair's recheck window; one registry transaction per notice (a
   * repair batch sends one); best effort.
   */
  | { type: 'store.noteHolders'; notes: readonly HolderNote[]; at: number }
  /** The collector's exclusive hold (its release and deletion pass); answers the hold's token once granted. */
  | { type: 'store.beginCollection'; reply: Reply<number> }
  | { type: 'store.endCollection'; token: number }
  | { type: 'store.state'; reply: Reply<StoreState> }
  /** A child task ended (sent by the owner to itself). */
  | { type: 'store.settled'; op: number };

/** The messages without an answer. */
export type StoreNotice = Extract<StoreEvent, { type: 'store.closeSession' | 'store.noteHolders' | 'store.endCollection' }>;

/** How the other actors reach the owner: asks (bounded by their own signals: the owner bounds its work) and notices. */
export interface StorePort {
  readonly ask: AskFor<Exclude<StoreEvent, { type: 'store.settled' }>>;
  tell(notice: StoreNotice): void;
}

/** The owner stopped (a restart, or the node's shutdown) while an operation waited or ran. */
export class StoreStoppedError extends Error {
  override readonly name = 'StoreStoppedError';
  constructor() {
    super('the files store stopped');
  }
}

export interface StoreOptions {
  /** The running node, read at the start of each operation. */
  readonly holder: NodeHolder;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** One operation: the CIDs it needs to itself, and its work (a promise: a child task; a value: done at once). */
interface Operation {
  readonly id: number;
  readonly keys: readonly string[];
  readonly reply?: Reply<unknown>;
  readonly work: (node: FilesNode, signal: AbortSignal) => unknown;
  /** Run when the operation ended, whatever its outcome (a lease hold given back). */
  readonly after?: () => void;
}

export function storeLogic(options: StoreOptions) {
  const { holder, clock, logger } = options;

  return fromCallback<StoreEvent>(({ receive, self }) => {
    const lease = new StorageLease();
    /** Ends with the actor: waits and child tasks stop, their askers hear StoreStoppedError. */
    const lifetime = new AbortController();
    const sessions = new Map<string, LeaseRelease>();
    const collections = new Map<number, LeaseRelease>();
    let nextToken = 1;
    let nextOp = 1;
    const waiting: Operation[] = [];
    const busy = new Set<string>();
    const running = new Map<number, Operation>();

    /** The asker's signal and the owner's lifetime, linked until the work settles (`linkSignals`: not AbortSignal.any, which leaks). */
    const signalOf = (reply?: Reply<unknown>): LinkedSignal => (reply ? linkSignals([reply.signal, lifetime.signal]) : { signal: lifetime.signal, release: () => {} });

    /** Starts every waiting operation whose CIDs are free and not claimed by an earlier waiting one (arrival order). */
    const pump = () => {
      const claimed = new Set<string>();
      for (let index = 0; index < waiting.length; ) {
        const op = waiting[index]!;
        if (op.keys.some((key) => busy.has(key) || claimed.has(key))) {
          for (const key of op.keys) claimed.add(key);
          index++;
          continue;
        }
        waiting.splice(index, 1);
        start(op);
      }
    };

    const start = (op: Operation) => {
      let result: unknown;
      let linked: LinkedSignal | undefined;
      try {
        if (lifetime.signal.aborted) throw new StoreStoppedError();
        // The asker gave up while the operation waited for its CIDs: nothing is done for it.
        op.reply?.signal.throwIfAborted();
        linked = signalOf(op.reply);
        result = op.work(holder.get(), linked.signal);
      } catch (error) {
        linked?.release();
        op.after?.();
        op.reply?.reject(error as Error);
        return;
      }
      if (!(result instanceof Promise)) {
        linked.release();
        op.after?.();
        op.reply?.resolve(result);
        return;
      }
      for (const key of op.keys) busy.add(key);
      running.set(op.id, op);
      result.then(
        (value) => op.reply?.resolve(value),
        (error: unknown) => op.reply?.reject(failure(error)),
      ).finally(() => {
        linked.release();
        self.send({ type: 'store.settled', op: op.id });
      });
    };

    const enqueue = (keys: readonly string[], reply: Reply<unknown> | undefined, work: Operation['work'], after?: () => void) => {
      waiting.push({ id: nextOp++, keys: [...new Set(keys)], reply, work, after });
      pump();
    };

    /** What an asker hears when its wait or work ends early: the owner's stop, else what ended it. */
    const failure = (error: unknown): Error => (lifetime.signal.aborted ? new StoreStoppedError() : (error as Error));

    /**
     * Grants `reply`'s asker a hold of the lease (`granted` takes it on); a grant that comes after the asker gave up
     * or the owner stopped is given straight back.
     */
    const hold = (mode: LeaseMode, reply: Reply<never>, granted: (release: LeaseRelease) => void) => {
      const linked = signalOf(reply);
      const acquiring = mode === 'shared' ? lease.acquireShared(linked.signal) : lease.acquireExclusive(linked.signal);
      acquiring
        .then(
          (release) => (lifetime.signal.aborted || reply.signal.aborted ? release() : granted(release)),
          (error: unknown) => reply.reject(failure(error)),
        )
        .finally(linked.release);
    };

    /**
     * Removes a root pin a session made unless something relies on it now: a committed record that is pinned, or an
     * intent of another session (any session's, when none is named). Removing a pin that is not there is a no-op.
     */
    const releaseUnrelied = async (node: FilesNode, cid: CID, sessionId: string | undefined, signal: AbortSignal) => {
      const text = cid.toString();
      if (node.registry.get(text)?.pinned) return;
      if (node.registry.intents().some((intent) => intent.cid === text && intent.sessionId !== sessionId)) return;
      await node.pins.remove(cid, signal);
    };

    /**
     * After a failed effect (the record was not written): the root pin is made to agree with the record that stands.
     * Best effort: the collector's pin verification repairs what is left.
     */
    const alignPin = async (node: FilesNode, cid: CID) => {
      try {
        const pinned = await node.pins.has(cid);
        const standing = node.registry.get(cid.toString());
        if (standing?.pinned && !pinned) await node.pins.add(cid, { offline: true });
        else if (!standing?.pinned && pinned) await releaseUnrelied(node, cid, undefined, lifetime.signal);
      } catch (error) {
        logger.warn({ err: error }, 'could not align a pin with its file record');
      }
    };

    /** A pin that may fetch what is missing over bitswap, bounded like a download's discovery (notes C13). */
    const fetchingPin = async (node: FilesNode, cid: CID, timeoutMs: number, signal: AbortSignal) => {
      const discovery = deadline(clock, timeoutMs, signal);
      try {
        await node.pins.add(cid, { signal: discovery.signal });
      } catch (error) {
        throw discovery.expired ? new FileTimeoutError('discovery') : error;
      } finally {
        discovery.clear();
      }
    };

    const change = (event: Extract<StoreEvent, { type: 'store.change' }>) => async (node: FilesNode, signal: AbortSignal): Promise<ChangeOutcome> => {
      const stored = node.registry.get(event.cid.toString());
      const before = stored ?? event.create;
      const fileEvent = before ? event.decide(before) : null;
      if (!before || !fileEvent) return { record: stored, written: false };
      const { record, changed, effect } = applyFileEvent(before, fileEvent);
      if (!changed) return { record: stored, written: false };
      try {
        if (effect === 'pin' && !(await node.pins.has(event.cid, signal))) {
          if (event.fetch) await fetchingPin(node, event.cid, event.fetch.timeoutMs, signal);
          else await node.pins.add(event.cid, { signal, offline: true });
        } else if (effect === 'unpin') {
          await node.pins.remove(event.cid, signal);
        }
      } catch (error) {
        await alignPin(node, event.cid);
        throw error;
      }
      node.registry.put(record);
      return { record, written: true };
    };

    const handle = (event: StoreEvent) => {
      switch (event.type) {
        case 'store.change': {
          const work = change(event);
          if (!event.fetch) return enqueue([event.cid.toString()], event.reply, work);
          // The hold first, then the CID (see the header): fetched blocks stay unpinned until the pin walk ends.
          return hold('shared', event.reply, (release) => enqueue([event.cid.toString()], event.reply, work, release));
        }
        case 'store.openSession':
          return hold('shared', event.reply, (release) => {
            sessions.get(event.sessionId)?.();
            sessions.set(event.sessionId, release);
            event.reply.resolve();
          });
        case 'store.closeSession':
          sessions.get(event.sessionId)?.();
          sessions.delete(event.sessionId);
          return;
        case 'store.pinForSession':
          return enqueue([event.cid.toString()], event.reply, async (node, signal) => {
            node.registry.addIntent(event.cid.toString(), event.sessionId, clock.now());
            if (await node.pins.has(event.cid, signal)) return false;
            await node.pins.add(event.cid, { signal });
            return true;
          });
        case 'store.commitSession':
          return enqueue(
            event.entries.map((entry) => entry.cid),
            event.reply,
            (node) => {
              const records = event.entries.map((entry) => entry.build(node.registry.get(entry.cid)));
              node.registry.commitUpload(records, event.sessionId);
              return records;
            },
          );
        case 'store.rollbackSession': {
          let intentCids: string[];
          let released: Map<string, CID>;
          try {
            intentCids =
              event.intents === 'all'
                ? holder.get().registry.intents().filter((intent) => intent.sessionId === event.sessionId).map((intent) => intent.cid)
                : event.intents.map(String);
            // Every CID under the session's intents too, not only the pins it made: a pin another session made and
            // kept for this one when it rolled back (this session's intent covered it) is this session's to release
            // now, as the startup walk would (store.settleIntent). Found by the fault harness (issue 29).
            released = new Map([...event.unpin, ...intentCids.map((cid) => CID.parse(cid))].map((cid) => [cid.toString(), cid]));
          } catch (error) {
            return event.reply.reject(error as Error);
          }
          return enqueue([...event.unpin.map(String), ...intentCids], event.reply, async (node, signal) => {
            for (const cid of released.values()) {
              await releaseUnrelied(node, cid, event.sessionId, signal).catch((error: unknown) => {
                if (signal.aborted) throw error;
                logger.warn({ err: error }, 'rollback could not release a pin');
              });
            }
            if (event.intents === 'all') node.registry.removeSessionIntents(event.sessionId);
            else for (const cid of intentCids) node.registry.removeIntent(cid, event.sessionId);
          });
        }
        case 'store.settleIntent':
          return enqueue([event.intent.cid], event.reply, async (node, signal) => {
            const record = node.registry.get(event.intent.cid);
            if (!record?.pinned && (await node.pins.has(event.cid, signal))) await node.pins.remove(event.cid, signal);
            node.registry.removeIntent(event.intent.cid, event.intent.sessionId);
          });
        case 'store.backfill':
          // Only a pin nothing else explains: the walk runs with the API open, so a pin it listed may belong to a live
          // session (an upload or an incoming copy pins under its intent before it registers; a strict stage never
          // does unless committed) or may be gone by this turn (a rollback).
          return enqueue(
            event.records.map((record) => record.cid),
            event.reply,
            async (node, signal) => {
              const covered = new Set(node.registry.intents().map((intent) => intent.cid));
              // The batch's lookups in one read transaction (one per record paid SQLite's locking each time).
              const unregistered = new Set(node.registry.unregistered(event.records.map((record) => record.cid)));
              const unexplained: FileRecord[] = [];
              for (const record of event.records) {
                if (!unregistered.has(record.cid) || covered.has(record.cid)) continue;
                if (await node.pins.has(CID.parse(record.cid), signal)) unexplained.push(record);
              }
              node.registry.putMany(unexplained);
              return unexplained.map((record) => record.cid);
            },
          );
        case 'store.restorePin':
          return enqueue([event.cid.toString()], event.reply, async (node, signal): Promise<RestoredPin> => {
            const record = node.registry.get(event.cid.toString());
            if (!record || !((record.state === 'confirmed' && record.heldLocally) || record.pinned)) return 'notNeeded';
            if (await node.pins.has(event.cid, signal)) return 'present';
            try {
              await node.pins.add(event.cid, { signal, offline: true });
              return 'restored';
            } catch (error) {
              if (signal.aborted) throw error;
              return 'unprotected';
            }
          });
        case 'store.noteHolders':
          try {
            // One transaction for the whole notice: a repair batch's answers cost one fsync, not one per file (issue
            // 30: an fsync per confirmed copy was 3.6 s of a 1,000-file cycle's 25 s with one peer).
            if (event.notes.length > 0) holder.get().registry.noteHolders(event.notes, event.at);
          } catch (error) {
            logger.warn({ kind: (error as Error).name }, 'could not note which peers hold a copy');
          }
          return;
        case 'store.beginCollection':
          return hold('exclusive', event.reply, (release) => {
            const token = nextToken++;
            collections.set(token, release);
            event.reply.resolve(token);
          });
        case 'store.endCollection':
          collections.get(event.token)?.();
          collections.delete(event.token);
          return;
        case 'store.state':
          return event.reply.resolve({ lease: lease.state, busyCids: busy.size, waiting: waiting.length });
        case 'store.settled': {
          const op = running.get(event.op);
          if (!op) return;
          running.delete(event.op);
          for (const key of op.keys) busy.delete(key);
          op.after?.();
          return pump();
        }
        default:
          return refuseUnknownMessage(event);
      }
    };

    receive(handle);

    return () => {
      lifetime.abort(new StoreStoppedError());
      for (const op of waiting.splice(0)) {
        op.after?.();
        op.reply?.reject(new StoreStoppedError());
      }
      for (const release of [...sessions.values(), ...collections.values()]) release();
      sessions.clear();
      collections.clear();
    };
  });
}

/** The owner as an actor reference's asks and notices (the tree builds it from the runtime; tests from an actor). */
export function storePortOf(send: (event: StoreEvent) => void): StorePort {
  return {
    ask: ((message: Record<string, unknown>, askOptions: { signal?: AbortSignal } = {}) =>
      new Promise((resolve, reject) => {
        const controller = new AbortController();
        const outer = askOptions.signal;
        if (outer?.aborted) return reject(outer.reason);
        // Waits on the asker's signal only until the answer (onAbort: one listener however many asks share it).
        const stopWaiting = outer
          ? onAbort(outer, () => {
              controller.abort(outer.reason);
              reject(outer.reason);
            })
          : () => {};
        const answered = { resolve: (value: never) => (stopWaiting(), resolve(value)), reject: (error: Error) => (stopWaiting(), reject(error)) };
        send({ ...message, reply: { ...answered, signal: controller.signal } } as unknown as StoreEvent);
      })) as StorePort['ask'],
    tell: (notice) => send(notice),
  };
}
