// The one writer of file records (docs/DESIGN.md actor rule 3; docs/specs/files-node.md §3.1, §4.2; notes A.4 rule 7, A.7,
// A.8, C22). Every change of a record in the registry goes through here: lifecycle events (confirm, unpin, re-pin,
// the collector's expiry, release and handover), session commits (uploads, incoming copies) and the startup
// backfill. test/layout.test.ts checks that no other actor or route calls the registry's record writes.
//
// Why an owner and not "read, await the pin change, write": a lifecycle event carries an effect on the pin set
// (pin may fetch over bitswap for seconds, unpin walks the DAG), and while it runs another writer may change the
// same record, or the same pin. So:
// - the events and pin releases of one CID run one after another (a KeyedQueue): two of them never decide on the
//   same record and then undo each other's pin change (a confirm, an unpin and an operator pin racing over HTTP
//   left a record unpinned with its pin in place before this);
// - session commits and the backfill write synchronously without waiting in that queue (an upload must not wait
//   behind a minute-long pin fetch), so an event is applied to the record that stands at write time: after the
//   effect the record is read again; if it changed, the event is decided again on it (the caller's `decide` may now
//   say "nothing to do"), and the pin set is brought back to agree with the record that stands. The effect is what
//   is reconciled, never the other writer's record. Record writes are synchronous (better-sqlite3), so a read and
//   the write after it cannot interleave with anything.
// Lock order: the storage lease before this queue. A caller whose effect may pin takes the shared lease before it
// applies (content.actor.ts); the collector holds the lease exclusively while it releases. Taking the lease inside
// the queue would deadlock against a collector waiting here.

import type { CID } from 'multiformats/cid';
import { applyFileEvent } from '../../machines/files/file-lifecycle.machine.js';
import type { FileEvent, FileRecord } from '../../src/files/types.js';
import { KeyedQueue } from '../../src/keyed-queue.js';
import type { Logger } from '../../src/logger.js';
import type { FileRegistry } from '../../storage/files/registry.js';
import type { RootPins } from '../../storage/files/root-pins.js';

/** Rounds of "decide, perform, find the record changed": past this the record that stands is left as it is. */
const MAX_ROUNDS = 4;

export interface ApplyOptions {
  readonly signal: AbortSignal;
  /** The record to start from when none is stored (re-pinning a CID this node never registered, notes A.7). */
  readonly create?: () => FileRecord;
  /** Performs a `pin` effect (the content actor fetches missing blocks under the storage lease); a local pin by default. */
  readonly pin?: (cid: CID, signal: AbortSignal) => Promise<void>;
}

export interface ApplyOutcome {
  /** The record that stands after the call (undefined: none is stored). */
  readonly record: FileRecord | undefined;
  /** Whether this call wrote it. */
  readonly written: boolean;
}

/** A session's record, built from the record that stands when the session commits (undefined: none yet). */
export interface SessionRecord {
  readonly cid: string;
  readonly build: (existing: FileRecord | undefined) => FileRecord;
}

export class FileRecords {
  readonly #registry: FileRegistry;
  readonly #pins: RootPins;
  readonly #logger: Logger | undefined;
  /** One CID's events and pin releases, one after another. */
  readonly #queue = new KeyedQueue();

  constructor(registry: FileRegistry, pins: RootPins, logger?: Logger) {
    this.#registry = registry;
    this.#pins = pins;
    this.#logger = logger;
  }

  get(cid: string): FileRecord | undefined {
    return this.#registry.get(cid);
  }

  /**
   * Applies the lifecycle event `decide` chooses for the record that stands (null: nothing to do for it), performs
   * its pin effect, and writes the result only if nobody changed the record meanwhile; otherwise decides again.
   * Throws when an effect fails (the record is then not written) or the signal aborts.
   */
  apply(cid: CID, decide: (current: FileRecord) => FileEvent | null, options: ApplyOptions): Promise<ApplyOutcome> {
    return this.#queue.run(cid.toString(), () => this.#apply(cid, decide, options));
  }

  async #apply(cid: CID, decide: (current: FileRecord) => FileEvent | null, options: ApplyOptions): Promise<ApplyOutcome> {
    const text = cid.toString();
    // An effect ran and its record was not written (the record changed meanwhile, or the effect failed): the pin
    // set is aligned with the record that stands at the end. A written record agrees with its own effect.
    let unsettled = false;
    let stored = this.#registry.get(text);
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const before = stored ?? options.create?.();
        const event = before ? decide(before) : null;
        if (!before || !event) return { record: stored, written: false };
        const { record, changed, effect } = applyFileEvent(before, event);
        if (!changed) return { record: stored, written: false };
        if (effect === 'pin' && !(await this.#pins.has(cid, options.signal))) {
          unsettled = true;
          await (options.pin ?? ((target, signal) => this.#pins.add(target, { signal })))(cid, options.signal);
        } else if (effect === 'unpin') {
          // Removing a root pin that is not there is a no-op (RootPins.remove).
          unsettled = true;
          await this.#pins.remove(cid, options.signal);
        }
        const current = this.#registry.get(text);
        if (sameRecord(current, stored)) {
          this.#registry.put(record);
          unsettled = false;
          return { record, written: true };
        }
        // Someone else wrote this record while the effect ran: their record stands; decide again on it.
        stored = current;
      }
      return { record: stored, written: false };
    } finally {
      if (unsettled) await this.#alignPin(cid);
    }
  }

  /**
   * Commits an upload or copy session in one transaction: each record is built from the record that stands now,
   * and the session's pin intents go with it (notes A.8, C22). Returns the records written.
   */
  commitSession(sessionId: string, entries: readonly SessionRecord[]): FileRecord[] {
    const records = entries.map((entry) => entry.build(this.#registry.get(entry.cid)));
    this.#registry.commitUpload(records, sessionId);
    return records;
  }

  /** Registers a record for a pin the registry does not know (the startup backfill); false when one exists by now. */
  backfill(record: FileRecord): boolean {
    if (this.#registry.get(record.cid)) return false;
    this.#registry.put(record);
    return true;
  }

  /**
   * Removes a root pin this node made for a session that did not commit, unless a committed record relies on it
   * by now (a copy a peer asked for meanwhile, or a confirm) or another session's intent still covers it (any
   * session's, when none is named).
   */
  releaseSessionPin(cid: CID, sessionId?: string, signal?: AbortSignal): Promise<void> {
    return this.#queue.run(cid.toString(), () => this.#releaseUnrelied(cid, sessionId, signal));
  }

  async #releaseUnrelied(cid: CID, sessionId: string | undefined, signal?: AbortSignal): Promise<void> {
    const text = cid.toString();
    if (this.#registry.get(text)?.pinned) return;
    if (this.#registry.intents().some((intent) => intent.cid === text && intent.sessionId !== sessionId)) return;
    await this.#pins.remove(cid, signal);
  }

  /**
   * After an effect, makes the root pin agree with the record that stands: a record that relies on a pin has one
   * (offline: its blocks are local, the collector deletes only after its own pin verification), and a pin that this
   * call made and nothing relies on is removed. Best effort: the collector's pin verification repairs what is left.
   */
  async #alignPin(cid: CID): Promise<void> {
    try {
      const pinned = await this.#pins.has(cid);
      // Read after the pin set: a session commit may have written the record while `has` ran.
      const standing = this.#registry.get(cid.toString());
      if (standing?.pinned && !pinned) await this.#pins.add(cid, { offline: true });
      else if (!standing?.pinned && pinned) await this.#releaseUnrelied(cid, undefined);
    } catch (error) {
      this.#logger?.warn({ err: error }, 'could not align a pin with its file record');
    }
  }
}

/** Whether two reads of a record are the same stored record (every persisted field). */
function sameRecord(a: FileRecord | undefined, b: FileRecord | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return (
    a.state === b.state &&
    a.pinned === b.pinned &&
    a.heldLocally === b.heldLocally &&
    a.createdAt === b.createdAt &&
    a.expiresAt === b.expiresAt &&
    a.confirmedAt === b.confirmedAt &&
    a.dagBytes === b.dagBytes &&
    a.origin === b.origin
  );
}
