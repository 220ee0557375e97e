// The startup walk (actors/files/reconcile.actor.ts) on a real store: an original store's pins (no registry rows)
// are registered as confirmed backfills in batches, a pin whose DAG lacks a block is skipped, a pin the registry
// knows keeps its record, and an interrupted upload's intent is settled.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import type { CID } from 'multiformats/cid';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { reconcile } from '../../../actors/files/reconcile.actor.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { confirmedRecord } from '../../../src/files/lifecycle.js';
import { walkDag } from '../../../storage/files/dag-walk.js';
import { captureLogger } from '../../support/logger.js';
import { startStore, type TestStore } from '../../support/files-store.js';

const NOW = 1_790_000_000_000;
/** More than one of the walk's batches (256 pins per registry transaction). */
const SMALL_FILES = 300;

const holder = new NodeHolder();
let home: string;
let node: FilesNode;
let store: TestStore;

before(async () => {
  home = mkdtempSync(join(tmpdir(), 'reconcile-'));
  node = await startFilesNode({ storeDirectory: join(home, 'store'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder, logger: captureLogger('warn').logger });
  holder.set(node);
  store = startStore(holder);
});
after(async () => {
  store.stop();
  holder.set(undefined);
  await stopFilesNode(node);
  rmSync(home, { recursive: true, force: true });
});

async function pinnedFile(bytes: Uint8Array, options: { chunkSize?: number } = {}): Promise<CID> {
  const chunker = options.chunkSize ? fixedSize({ chunkSize: options.chunkSize }) : undefined;
  const cid = await node.unixfs.addBytes(bytes, { rawLeaves: true, ...(chunker ? { chunker } : {}) });
  await node.pins.add(cid, { offline: true });
  return cid;
}

it('registers every unknown pin whose DAG is local, in batches; skips one with a missing block; keeps known records', async () => {
  const small: CID[] = [];
  for (let i = 0; i < SMALL_FILES; i++) small.push(await pinnedFile(new TextEncoder().encode(`original file ${i} `.repeat(1 + (i % 7)))));
  // A file of several blocks, whole, and one whose second leaf is gone (an interrupted copy on the original node).
  const whole = await pinnedFile(new Uint8Array(10_000).fill(7), { chunkSize: 1024 });
  const broken = await pinnedFile(new Uint8Array(10_000).fill(9), { chunkSize: 1024 });
  const leaves: CID[] = [];
  await walkDag(broken, { blockstore: node.helia.blockstore, getCodec: node.helia.getCodec, concurrency: 1, offline: true }, async (cid) => void leaves.push(cid));
  await node.store.blockstore.delete(leaves[2]!); // beneath helia, which refuses to delete a pinned block
  // A one-block (raw) file whose block file is gone.
  const lostRaw = await pinnedFile(new TextEncoder().encode('a small file whose block was lost'));
  await node.store.blockstore.delete(lostRaw);
  // Known to the registry already: its record stays as it is (SMALL_FILES - 1 small files and `whole` are backfilled).
  const known = small[0]!;
  node.registry.put(confirmedRecord(known.toString(), NOW - 1_000, 'upload', 11));

  const progress: Array<{ checked: number; backfilled: number; skipped: number }> = [];
  const result = await reconcile(node, store.port, NOW, new AbortController().signal, (where) => progress.push(where));

  assert.deepEqual(result, { intentsResolved: 0, backfilled: SMALL_FILES, skipped: 2 });
  // Progress is reported as the pin set is listed, never backwards, and ends at every pin checked.
  assert.ok(progress.length >= 1);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.checked >= progress[i - 1]!.checked && progress[i]!.backfilled >= progress[i - 1]!.backfilled);
  assert.deepEqual(progress.at(-1), { checked: SMALL_FILES + 3, backfilled: SMALL_FILES, skipped: 2 });
  const knownRecord = node.registry.get(known.toString());
  assert.equal(knownRecord?.origin, 'upload');
  assert.equal(knownRecord?.createdAt, NOW - 1_000);
  for (const cid of [...small.slice(1), whole]) {
    const record = node.registry.get(cid.toString());
    assert.equal(record?.origin, 'backfill', cid.toString());
    assert.equal(record?.state, 'confirmed');
    assert.equal(record?.pinned, true);
    assert.equal(record?.createdAt, NOW);
  }
  assert.equal(node.registry.get(whole.toString())?.dagBytes, 10_000, 'the file size, as unixfs stat reports it');
  assert.equal(small[1]!.code, 0x55, 'a small file is one raw block');
  assert.equal(node.registry.get(small[1]!.toString())?.dagBytes, `original file 1 `.repeat(2).length, "a raw file's size is its block's length");
  assert.equal(node.registry.get(lostRaw.toString()), undefined, 'a raw file whose block is gone is not registered');
  assert.equal(node.registry.get(broken.toString()), undefined, 'a DAG with a missing block is not registered');
  assert.equal(await node.pins.has(broken), true, 'and its pin is left alone');

  // A second walk finds every pin known (or still broken): nothing more to register.
  assert.deepEqual(await reconcile(node, store.port, NOW + 1, new AbortController().signal), { intentsResolved: 0, backfilled: 0, skipped: 2 });
});

it('settles an interrupted upload: a pin under an intent with no record is removed, then the intent', async () => {
  const orphan = await pinnedFile(new TextEncoder().encode('pinned by an upload that never committed'));
  node.registry.addIntent(orphan.toString(), 'crashed-session', NOW);
  const result = await reconcile(node, store.port, NOW, new AbortController().signal);
  assert.equal(result.intentsResolved, 1);
  assert.equal(await node.pins.has(orphan), false);
  assert.equal(node.registry.get(orphan.toString()), undefined);
  assert.deepEqual(node.registry.intents(), []);
});

it('passes over a file in the pin folder whose name is no CID, and still registers the real pins', async () => {
  const real = await pinnedFile(new TextEncoder().encode('a real pin beside a stray file'));
  // What an operator's copy or a crashed tool may leave; the walk used to throw on it, and the whole start with it.
  const pinFolder = join(home, 'store', 'datastore', 'pin');
  for (const stray of ['not-a-cid', 'kZZZ', 'bafkreibplogzsbxtgzxw4meorjolhtt4yalvrujlagczxxxsnokfxi5cj4']) writeFileSync(join(pinFolder, `${stray}.data`), 'x');
  const result = await reconcile(node, store.port, NOW, new AbortController().signal);
  assert.equal(result.backfilled, 1);
  assert.equal(node.registry.get(real.toString())?.origin, 'backfill');
});
