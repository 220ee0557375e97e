// The node store's datastore (storage/files/node-store.ts): its key listing reads folders as streams (issue 30) and
// lists exactly what datastore-fs lists (and `namesIn`, one folder's names in batches, the same records), under every prefix shape the node's users ask for; libp2p's peer records are kept in memory and written back
// (before a listing, when the store closes, within seconds otherwise); other keys are written through and never
// cached; nothing is written once the store is closed. (A disk read racing a change of the same record is not staged
// here: the real FsDatastore gives no hook to order them; the change counter in node-store.ts covers it.)

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FsDatastore } from 'datastore-fs';
import { Key } from 'interface-datastore';
import { openNodeStore } from '../../../storage/files/node-store.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array) => new TextDecoder().decode(value);

describe('the node store’s datastore', () => {
  const home = mkdtempSync(join(tmpdir(), 'node-store-'));
  after(() => rmSync(home, { recursive: true, force: true }));

  /** The same folder through a plain FsDatastore: what is on disk, bypassing the node's copy in memory. */
  const onDisk = async (directory: string) => {
    const plain = new FsDatastore(join(directory, 'datastore'));
    await plain.open();
    return plain;
  };

  it('keeps peer records in memory and writes them back: before a listing, when closed, and within seconds', async () => {
    const directory = join(home, 'peers');
    const store = await openNodeStore(directory);
    const disk = await onDisk(directory);
    const peer = new Key('/peers/bafzaapeer');
    await store.datastore.put(peer, bytes('v1'));
    assert.equal(text(await store.datastore.get(peer)), 'v1');
    assert.equal(await store.datastore.has(peer), true);
    assert.equal(await disk.has(peer), false, 'not written yet: libp2p rewrites a record on every stream');

    // A listing reads the disk, so it writes the changed records first.
    const listed: string[] = [];
    for await (const { key, value } of store.datastore.query({ prefix: '/peers/' })) listed.push(`${key.toString()}=${text(value)}`);
    assert.deepEqual(listed, ['/peers/bafzaapeer=v1']);
    assert.equal(text(await disk.get(peer)), 'v1');

    // Changed behind the store's back: the store still answers its own copy, so it read the disk no more.
    await disk.put(peer, bytes('changed on disk'));
    assert.equal(text(await store.datastore.get(peer)), 'v1');

    // A record first read from disk is kept too.
    const known = new Key('/peers/bafzaaknown');
    await disk.put(known, bytes('from disk'));
    assert.equal(text(await store.datastore.get(known)), 'from disk');
    await disk.put(known, bytes('changed on disk'));
    assert.equal(text(await store.datastore.get(known)), 'from disk');

    await store.datastore.delete(peer);
    assert.equal(await disk.has(peer), false);
    await assert.rejects(store.datastore.get(peer), { name: 'NotFoundError' });

    // Closing writes what changed since.
    await store.datastore.put(peer, bytes('v2'));
    await store.close();
    assert.equal(text(await disk.get(peer)), 'v2');
  });

  it('writes a changed peer record back on its own within seconds', async () => {
    const directory = join(home, 'timer');
    const store = await openNodeStore(directory);
    const disk = await onDisk(directory);
    const peer = new Key('/peers/bafzaatimer');
    await store.datastore.put(peer, bytes('soon'));
    const started = Date.now();
    while (!(await disk.has(peer)) && Date.now() - started < 8_000) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(text(await disk.get(peer)), 'soon');
    await store.close();
  });

  it('writes other keys through and reads them from disk every time', async () => {
    const directory = join(home, 'other');
    const store = await openNodeStore(directory);
    const disk = await onDisk(directory);
    const pin = new Key('/pin/bafyother');
    await store.datastore.put(pin, bytes('pin v1'));
    assert.equal(text(await disk.get(pin)), 'pin v1');
    await disk.put(pin, bytes('pin v2'));
    assert.equal(text(await store.datastore.get(pin)), 'pin v2');
    await store.close();
  });

  it('takes no writes once closed', async () => {
    const directory = join(home, 'closed');
    const store = await openNodeStore(directory);
    await store.close();
    const peer = new Key('/peers/bafzaalate');
    await store.datastore.put(peer, bytes('late'));
    const disk = await onDisk(directory);
    assert.equal(await disk.has(peer), false);
  });
});

const root = mkdtempSync(join(tmpdir(), 'node-store-'));
after(() => rmSync(root, { recursive: true, force: true }));

async function keys(iterable: AsyncIterable<{ toString(): string }> | Iterable<{ toString(): string }>): Promise<string[]> {
  const listed: string[] = [];
  for await (const key of iterable) listed.push(key.toString());
  return listed.sort();
}

describe('node store datastore: key listing', () => {
  it('lists the same keys as datastore-fs, flat and nested, under folder prefixes; a name prefix as the interface says', async () => {
    const folder = join(root, 'store', 'datastore');
    // datastore-fs's layout: key `/a/b` is the file `<folder>/a/b.data`; a file of another extension is no key.
    for (const name of ['pin/bafyaaa.data', 'pin/bafybbb.data', 'pinned-block/ciqaaa.data', 'peers/abc/addrs.data', 'peers/abc/meta/x.data', 'version.data', 'pin/stray.tmp']) {
      mkdirSync(dirname(join(folder, name)), { recursive: true });
      writeFileSync(join(folder, name), name);
    }
    const store = await openNodeStore(join(root, 'store'));
    const plain = new FsDatastore(folder);
    await plain.open();
    try {
      for (const prefix of ['/pin/', '/pinned-block/', '/peers/', '/peers/abc/', '/absent/']) {
        assert.deepEqual(await keys(store.datastore.queryKeys({ prefix })), await keys(plain.queryKeys({ prefix })), `prefix ${prefix}`);
      }
      assert.deepEqual(await keys(store.datastore.queryKeys({ prefix: '/pin/' })), ['/pin/bafyaaa', '/pin/bafybbb'], 'not the pinned-block folder');
      assert.deepEqual(await keys(store.datastore.queryKeys({ prefix: '/peers/' })), ['/peers/abc/addrs', '/peers/abc/meta/x']);
      // The root: every key (datastore-fs globs `/**` from the filesystem's root there, so it is not compared).
      assert.deepEqual(await keys(store.datastore.queryKeys({ prefix: '/' })), ['/peers/abc/addrs', '/peers/abc/meta/x', '/pin/bafyaaa', '/pin/bafybbb', '/pinned-block/ciqaaa', '/version']);
      // A prefix that ends inside a name: the keys that start with it (interface-datastore's meaning). datastore-fs's
      // glob finds none there (it reads the prefix as a folder); nothing in the node lists keys that way.
      assert.deepEqual(await keys(store.datastore.queryKeys({ prefix: '/pin/bafyb' })), ['/pin/bafybbb']);
      assert.deepEqual(await keys(plain.queryKeys({ prefix: '/pin/bafyb' })), [], 'the datastore-fs difference, as it stands');
    } finally {
      await plain.close();
      await store.close();
    }
  });

  it('an aborted listing stops', async () => {
    const store = await openNodeStore(join(root, 'aborted'));
    try {
      mkdirSync(join(root, 'aborted', 'datastore', 'pin'), { recursive: true });
      for (let i = 0; i < 10; i++) writeFileSync(join(root, 'aborted', 'datastore', 'pin', `k${i}.data`), 'x');
      const controller = new AbortController();
      controller.abort(new Error('stopped'));
      await assert.rejects(keys(store.datastore.queryKeys({ prefix: '/pin/' }, { signal: controller.signal })), /stopped/);
    } finally {
      await store.close();
    }
  });
  it('namesIn: the names of one folder’s records, in batches of at most 1,024, the same set as queryKeys; nothing for a missing folder', async () => {
    const directory = join(root, 'names');
    const pins = join(directory, 'datastore', 'pin');
    mkdirSync(join(pins, 'nested'), { recursive: true });
    const written = Array.from({ length: 2_500 }, (_, i) => `k${i.toString(36).padStart(6, '0')}`);
    for (const name of written) writeFileSync(join(pins, `${name}.data`), 'x');
    // Not records of this folder: a temporary file datastore-fs writes before its rename, a sub-folder's record.
    writeFileSync(join(pins, '.k000001.data.tmp'), 'x');
    writeFileSync(join(pins, 'nested', 'deeper.data'), 'x');
    const store = await openNodeStore(directory);
    try {
      const batches: string[][] = [];
      for await (const batch of store.datastore.namesIn('/pin/')) batches.push([...batch]);
      assert.ok(batches.every((batch) => batch.length > 0 && batch.length <= 1_024), `batch sizes ${batches.map((batch) => batch.length)}`);
      assert.ok(batches.length >= 3);
      const names = batches.flat().sort();
      assert.deepEqual(names, [...written].sort());
      assert.deepEqual(names.map((name) => `/pin/${name}`), (await keys(store.datastore.queryKeys({ prefix: '/pin/' }))).filter((key) => !key.includes('nested')));
      for await (const batch of store.datastore.namesIn('/absent/')) assert.fail(`listed ${batch.length} names of a missing folder`);
      const controller = new AbortController();
      controller.abort(new Error('stopped'));
      await assert.rejects(async () => {
        for await (const batch of store.datastore.namesIn('/pin/', controller.signal)) assert.fail(`listed ${batch.length} names after the abort`);
      }, /stopped/);
    } finally {
      await store.close();
    }
  });
});
