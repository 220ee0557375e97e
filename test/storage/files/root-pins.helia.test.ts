// The root pins over helia's pin set on the real store (datastore-fs), when the caller gives up.
//
// Found by the fault harness (issue 29, `npm run faults -- --seed 22`): a strict upload answered 503, yet after a
// peer's graceful restart every node held a confirmed record of it. The peer had rolled back its staged copy while
// shutting down: the store's removal of the pin ran with the owner's signal already aborted, datastore-fs answers an
// aborted read with NotFoundError (its raceSignal, inside a catch-all), so `remove` took the pin for one that was
// never there, the rollback went on and deleted the intent marker, and the pin stayed. The next start found a pin
// with neither record nor marker, registered it as confirmed, and repair copied it to every node.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { captureLogger } from '../../support/logger.js';

describe('root pins on helia and datastore-fs: an aborted call never reads as "not pinned"', () => {
  let home: string;
  let node: FilesNode;
  let cid: CID;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'root-pins-'));
    node = await startFilesNode({ storeDirectory: join(home, 'store'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder: new NodeHolder(), logger: captureLogger('warn').logger });
    const bytes = new TextEncoder().encode('a staged copy');
    cid = CID.createV1(raw.code, await sha256.digest(bytes));
    await node.helia.blockstore.put(cid, bytes);
    await node.pins.add(cid, { offline: true });
  });

  after(async () => {
    await stopFilesNode(node);
    rmSync(home, { recursive: true, force: true });
  });

  it('a removal whose signal is aborted rejects and leaves the pin; `has` rejects instead of answering false', async () => {
    const gone = new AbortController();
    gone.abort(new Error('the store stopped'));
    await assert.rejects(node.pins.remove(cid, gone.signal), (error: Error) => error.name !== 'NotFoundError', 'the abort, not a quiet success');
    assert.equal(await node.pins.has(cid), true, 'the pin is still there');
    await assert.rejects(node.pins.has(cid, gone.signal), (error: Error) => error.name !== 'NotFoundError');
  });

  it("roots: every root pin from the pin set's keys, the same CIDs helia's own pins.ls reads from the records", async () => {
    const more = await Promise.all(['second', 'third'].map(async (text) => {
      const bytes = new TextEncoder().encode(text);
      const extra = CID.createV1(raw.code, await sha256.digest(bytes));
      await node.helia.blockstore.put(extra, bytes);
      await node.pins.add(extra, { offline: true });
      return extra;
    }));
    const fromKeys: string[] = [];
    for await (const root of node.pins.roots()) fromKeys.push(root.toString());
    const fromRecords: string[] = [];
    for await (const pin of node.helia.pins.ls()) fromRecords.push(pin.cid.toString());
    assert.deepEqual(fromKeys.sort(), fromRecords.sort());
    assert.deepEqual(fromKeys, [cid, ...more].map(String).sort(), 'the three roots, nothing from the pinned-block index');
    for (const extra of more) await node.pins.remove(extra);
  });

  it('without an abort, a removal removes and a missing pin is simply absent', async () => {
    await node.pins.remove(cid);
    assert.equal(await node.pins.has(cid), false);
    await node.pins.remove(cid);
  });
});
