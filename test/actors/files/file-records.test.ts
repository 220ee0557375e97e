// The one writer of file records (actors/files/file-records.ts) on a real SQLite registry: a lifecycle event is
// applied to the record that stands at write time, and the pin set is brought back to agree with that record when
// another writer changed it while the effect ran. Each race is staged deterministically: the fake pin set holds
// its effect open until the test has written the competing record.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, beforeEach, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { FileRecords } from '../../../actors/files/file-records.js';
import type { RootPins } from '../../../storage/files/root-pins.js';
import { confirmedRecord, newUploadRecord } from '../../../src/files/lifecycle.js';
import type { FileEvent, FileRecord } from '../../../src/files/types.js';
import { openSqliteRegistry } from '../../../storage/files/registry.sqlite.js';
import type { FileRegistry } from '../../../storage/files/registry.js';

const home = mkdtempSync(join(tmpdir(), 'file-records-'));
after(() => rmSync(home, { recursive: true, force: true }));

/** A root pin set in memory; `hold` makes the next add or remove wait until the returned function is called. */
class FakePins implements RootPins {
  readonly pinned = new Set<string>();
  readonly calls: string[] = [];
  failNextAdd = false;
  #gate: { entered: () => void; opened: Promise<void> } | undefined;

  /** The next effect (add or remove) pauses; resolves `entered` when it has started, and waits for `open()`. */
  hold(): { entered: Promise<void>; open: () => void } {
    const entered = Promise.withResolvers<void>();
    const opened = Promise.withResolvers<void>();
    this.#gate = { entered: entered.resolve, opened: opened.promise };
    return { entered: entered.promise, open: () => opened.resolve() };
  }

  async #pass(): Promise<void> {
    const gate = this.#gate;
    this.#gate = undefined;
    if (!gate) return;
    gate.entered();
    await gate.opened;
  }

  async has(cid: CID): Promise<boolean> {
    return this.pinned.has(cid.toString());
  }

  async add(cid: CID, options: { offline?: boolean } = {}): Promise<void> {
    this.calls.push(`add${options.offline ? ' offline' : ''} ${cid}`);
    await this.#pass();
    if (this.failNextAdd) {
      this.failNextAdd = false;
      throw new Error('the content could not be fetched');
    }
    this.pinned.add(cid.toString());
  }

  async remove(cid: CID): Promise<void> {
    this.calls.push(`remove ${cid}`);
    await this.#pass();
    this.pinned.delete(cid.toString());
  }
}

async function cidOf(text: string): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(new TextEncoder().encode(text)));
}

const NOW = 1_800_000_000_000;
const signal = new AbortController().signal;
const event = (type: FileEvent['type']) => (): FileEvent => ({ type, at: NOW }) as FileEvent;

describe('file records: the one writer', () => {
  let registry: FileRegistry;
  let pins: FakePins;
  let records: FileRecords;
  let n = 0;

  afterEach(() => registry.close());

  beforeEach(() => {
    registry = openSqliteRegistry(join(home, `registry-${n++}.sqlite`));
    pins = new FakePins();
    records = new FileRecords(registry, pins);
  });

  const temporary = (cid: CID, pinned = true): FileRecord => ({
    ...newUploadRecord(cid.toString(), NOW - 10_000, { confirmationRequired: true, temporaryTtlMs: 1_000, dagBytes: 5 }),
    pinned,
    heldLocally: pinned,
  });

  it('applies an event and performs its effect before writing', async () => {
    const cid = await cidOf('plain');
    registry.put(temporary(cid));
    pins.pinned.add(cid.toString());
    const { record, written } = await records.apply(cid, event('file.unpin'), { signal });
    assert.equal(written, true);
    assert.equal(record?.state, 'expired');
    assert.equal(registry.get(cid.toString())?.state, 'expired');
    assert.equal(pins.pinned.has(cid.toString()), false, 'the unpin effect ran');
  });

  it('an event that changes nothing writes nothing and touches no pin', async () => {
    const cid = await cidOf('idempotent');
    registry.put(confirmedRecord(cid.toString(), NOW, 'upload', 5));
    pins.pinned.add(cid.toString());
    const { record, written } = await records.apply(cid, event('file.confirm'), { signal });
    assert.equal(written, false);
    assert.equal(record?.state, 'confirmed');
    assert.deepEqual(pins.calls, []);
  });

  it('a record re-held by a session commit while the collector unpinned it keeps its record, and its pin comes back', async () => {
    const cid = await cidOf('confirmed meanwhile');
    const planned = temporary(cid);
    registry.put(planned);
    pins.pinned.add(cid.toString());
    const gate = pins.hold();
    // The collector's decision: release only what still matches its plan (a pinned temporary record).
    const release = records.apply(cid, (current) => (current.state === 'temporary' && current.pinned ? { type: 'file.unpin', at: NOW } : null), { signal });
    await gate.entered;
    // Meanwhile a peer's copy of the same content commits (sessions do not wait in the record queue): confirmed, held.
    records.commitSession('copy', [{ cid: cid.toString(), build: (existing) => ({ ...existing!, state: 'confirmed', confirmedAt: NOW, expiresAt: null, pinned: true, heldLocally: true }) }]);
    gate.open();
    const outcome = await release;
    assert.equal(outcome.written, false, 'the collector did not overwrite the confirmed record');
    assert.equal(registry.get(cid.toString())?.state, 'confirmed');
    assert.equal(registry.get(cid.toString())?.pinned, true);
    assert.equal(pins.pinned.has(cid.toString()), true, 'the pin the collector removed is restored for the record that stands');
    assert.ok(pins.calls.includes(`add offline ${cid}`), 'restored from local blocks');
  });

  it("one CID's events run one after another: a confirm waits for an unpin's effect and then decides on its result", async () => {
    const cid = await cidOf('queued');
    registry.put(temporary(cid));
    pins.pinned.add(cid.toString());
    const gate = pins.hold();
    const unpin = records.apply(cid, event('file.unpin'), { signal });
    await gate.entered;
    let confirmed = false;
    const confirm = records.apply(cid, event('file.confirm'), { signal }).then((outcome) => ((confirmed = true), outcome));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(confirmed, false, 'the confirm waits while the unpin removes the pin');
    gate.open();
    assert.equal((await unpin).record?.state, 'expired');
    const { record } = await confirm;
    // Confirming the expired file pins it again (spec §3.1): record and pin agree at the end.
    assert.equal(record?.state, 'confirmed');
    assert.equal(record?.pinned, true);
    assert.equal(pins.pinned.has(cid.toString()), true);
  });

  it('a file expired while its confirm fetched the content: the confirm applies to the expired record', async () => {
    const cid = await cidOf('expired meanwhile');
    registry.put(temporary(cid, false));
    const gate = pins.hold();
    const confirm = records.apply(cid, event('file.confirm'), { signal });
    await gate.entered;
    registry.put({ ...registry.get(cid.toString())!, state: 'expired' });
    gate.open();
    const { record, written } = await confirm;
    // Confirming an expired file re-pins it (spec §3.1): the later event wins, on the record that stood.
    assert.equal(written, true);
    assert.equal(record?.state, 'confirmed');
    assert.equal(record?.pinned, true);
    assert.equal(pins.pinned.has(cid.toString()), true);
  });

  it('a pin made for an event that no longer applies is removed when nothing relies on it', async () => {
    const cid = await cidOf('dropped meanwhile');
    registry.put(temporary(cid, false));
    const gate = pins.hold();
    // Only a record still temporary is confirmed (a caller whose decision depends on the record).
    const confirm = records.apply(cid, (current) => (current.state === 'temporary' ? { type: 'file.confirm', at: NOW } : null), { signal });
    await gate.entered;
    registry.put({ ...registry.get(cid.toString())!, state: 'expired' });
    gate.open();
    const { written, record } = await confirm;
    assert.equal(written, false);
    assert.equal(record?.state, 'expired');
    assert.equal(pins.pinned.has(cid.toString()), false, 'no pin is left behind an unpinned record');
  });

  it('a failed effect writes nothing and leaves no pin', async () => {
    const cid = await cidOf('fetch fails');
    registry.put(temporary(cid, false));
    pins.failNextAdd = true;
    await assert.rejects(records.apply(cid, event('file.confirm'), { signal }), /could not be fetched/);
    assert.equal(registry.get(cid.toString())?.state, 'temporary');
    assert.equal(pins.pinned.has(cid.toString()), false);
  });

  it('a CID without a record is created only through `create`', async () => {
    const cid = await cidOf('unknown');
    const missing = await records.apply(cid, event('file.repin'), { signal });
    assert.deepEqual(missing, { record: undefined, written: false });
    const created = await records.apply(cid, event('file.repin'), {
      signal,
      create: () => ({ ...confirmedRecord(cid.toString(), NOW, 'pin', null), pinned: false, state: 'expired' }),
    });
    assert.equal(created.written, true);
    assert.equal(created.record?.state, 'confirmed');
    assert.equal(pins.pinned.has(cid.toString()), true);
  });

  it('a record that keeps changing under every effect is left as it stands after a bounded number of rounds', async () => {
    const cid = await cidOf('contended');
    registry.put(temporary(cid));
    pins.pinned.add(cid.toString());
    let rounds = 0;
    // Every unpin is followed by another writer re-pinning a fresh temporary record.
    const contended: RootPins = {
      has: (target) => pins.has(target),
      add: (target, options) => pins.add(target, options),
      remove: async (target) => {
        rounds++;
        await pins.remove(target);
        registry.put({ ...temporary(cid), createdAt: NOW - 10_000 + rounds });
        pins.pinned.add(cid.toString());
      },
    };
    const outcome = await new FileRecords(registry, contended).apply(cid, event('file.unpin'), { signal });
    assert.equal(outcome.written, false);
    assert.ok(rounds >= 2 && rounds <= 8, `bounded (${rounds} rounds)`);
    assert.equal(registry.get(cid.toString())?.pinned, true);
    assert.equal(pins.pinned.has(cid.toString()), true, 'the pin agrees with the record that stands');
  });

  it('a session commit builds each record from the record that stands then and clears its intents', async () => {
    const cid = await cidOf('session');
    registry.addIntent(cid.toString(), 'session-1', NOW);
    registry.put(confirmedRecord(cid.toString(), NOW - 5, 'upload', 5));
    const [record] = records.commitSession('session-1', [{ cid: cid.toString(), build: (existing) => ({ ...existing!, heldLocally: true, pinned: true }) }]);
    assert.equal(record?.state, 'confirmed', 'built from the stored record');
    assert.deepEqual(registry.intents(), []);
    assert.equal(records.backfill(confirmedRecord(cid.toString(), NOW, 'pin', 1)), false, 'a backfill never replaces a record');
  });

  it('a rolled-back session keeps a pin another session is about to commit', async () => {
    const cid = await cidOf('two uploads');
    pins.pinned.add(cid.toString());
    registry.addIntent(cid.toString(), 'a', NOW);
    registry.addIntent(cid.toString(), 'b', NOW);
    await records.releaseSessionPin(cid, 'a');
    assert.equal(pins.pinned.has(cid.toString()), true, "b's intent covers the pin");
    registry.removeIntent(cid.toString(), 'b');
    await records.releaseSessionPin(cid, 'a');
    assert.equal(pins.pinned.has(cid.toString()), false, 'nothing relies on it any more');
  });
});
