// The store's datastore (storage/files/node-store.ts): its key listing reads folders as streams (issue 30) and must
// list exactly what datastore-fs lists, under every prefix shape the node's users ask for.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FsDatastore } from 'datastore-fs';
import { openNodeStore } from '../../../storage/files/node-store.js';

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
});
