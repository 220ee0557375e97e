// The store folder's size walk (storage/files/disk-usage.ts, in a worker thread): every regular file under a tree
// counted once, a missing folder as empty, a walk that cannot read rejects with the system's code, an aborted walk
// rejected.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { directoryBytes, WALKER_LINGER_MS, walkerRunning } from '../../../storage/files/disk-usage.js';

const root = mkdtempSync(join(tmpdir(), 'disk-usage-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('directoryBytes', () => {
  it('sums every regular file of a tree, a large flat folder and a sharded one; symlinks are not followed', async () => {
    const dir = join(root, 'tree');
    let expected = 0;
    // 2,600 files in one flat folder (read as a stream) and a nested shard layout beside it.
    mkdirSync(join(dir, 'flat'), { recursive: true });
    for (let i = 0; i < 2_600; i++) {
      writeFileSync(join(dir, 'flat', `${i}.data`), 'x'.repeat(i % 7));
      expected += i % 7;
    }
    for (const shard of ['AA', 'AB', 'ZZ']) {
      mkdirSync(join(dir, 'blocks', shard), { recursive: true });
      writeFileSync(join(dir, 'blocks', shard, 'block.data'), Buffer.alloc(1_000));
      expected += 1_000;
    }
    symlinkSync(join(dir, 'blocks'), join(dir, 'link-to-blocks'));
    assert.equal(await directoryBytes(dir), expected);
  });

  it('a folder that does not exist counts as empty', async () => {
    assert.equal(await directoryBytes(join(root, 'never-made')), 0);
  });

  it('a walk that cannot read its folder rejects with the system error code, and the caller goes on', async () => {
    const file = join(root, 'not-a-folder');
    writeFileSync(file, 'z');
    await assert.rejects(directoryBytes(file), (error: NodeJS.ErrnoException) => error.code === 'ENOTDIR');
    assert.equal(await directoryBytes(join(root, 'never-made')), 0);
  });

  it('an aborted walk rejects instead of answering a partial size', async () => {
    const dir = join(root, 'aborted');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 1_500; i++) writeFileSync(join(dir, `${i}`), 'y');
    const controller = new AbortController();
    const walk = directoryBytes(dir, controller.signal);
    controller.abort(new Error('the node stopped'));
    await assert.rejects(walk, /the node stopped/);
    // The walker thread goes on: walks asked together (one of them aborted) answer each their own tree.
    const other = join(root, 'after-abort');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'one'), 'abc');
    const second = new AbortController();
    const walks = [directoryBytes(dir), directoryBytes(dir, second.signal), directoryBytes(other)];
    second.abort(new Error('gave up'));
    const [first, aborted, last] = await Promise.allSettled(walks);
    assert.deepEqual(first, { status: 'fulfilled', value: 1_500 });
    assert.equal(aborted.status, 'rejected');
    assert.deepEqual(last, { status: 'fulfilled', value: 3 });
  });

  it('the walker thread ends once no walk came for WALKER_LINGER_MS, and the next walk starts another', async () => {
    const dir = join(root, 'linger');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'one'), 'abcd');
    assert.equal(await directoryBytes(dir), 4);
    assert.equal(walkerRunning(), true, 'kept for the next walk of the same measurement');
    await new Promise((resolve) => setTimeout(resolve, WALKER_LINGER_MS / 2));
    assert.equal(walkerRunning(), true, 'still there within the linger');
    assert.equal(await directoryBytes(dir), 4);
    await new Promise((resolve) => setTimeout(resolve, WALKER_LINGER_MS + 500));
    assert.equal(walkerRunning(), false, 'ended after the linger');
    assert.equal(await directoryBytes(dir), 4, 'a new thread walks');
  });
  it('the collector walks on a lane of its own: its walk answers while a long scan walk is still going', async () => {
    const big = join(root, 'big');
    mkdirSync(big, { recursive: true });
    // Enough files that the scan's walk takes a while; queued behind it, the small walk would answer after it.
    for (let i = 0; i < 20_000; i++) writeFileSync(join(big, `${i}`), 'b');
    const small = join(root, 'small');
    mkdirSync(small, { recursive: true });
    writeFileSync(join(small, 'one'), 'abcde');
    const order: string[] = [];
    // Eight scan walks queued on the scan lane (~0.1 s each here), then the collector's, which starts a thread. The
    // scan lane's thread may be running already (an earlier walk), so its first walks can end before the new thread
    // has started (seen on a loaded CI machine); queued behind them, the small walk would answer after the last.
    const scanCount = 8;
    const scans = Array.from({ length: scanCount }, (_, n) => directoryBytes(big, undefined, 'scan').then((bytes) => order.push(`scan ${n}: ${bytes}`)));
    const gc = directoryBytes(small, undefined, 'gc').then((bytes) => order.push(`gc: ${bytes}`));
    assert.equal(walkerRunning('gc') && walkerRunning('scan'), true, 'two threads');
    await Promise.all([...scans, gc]);
    assert.ok(order.indexOf('gc: 5') < order.indexOf(`scan ${scanCount - 1}: 20000`), `the collector's walk did not wait for the scans: ${order.join(', ')}`);
    assert.deepEqual(
      order.filter((entry) => entry.startsWith('scan')),
      Array.from({ length: scanCount }, (_, n) => `scan ${n}: 20000`),
      'one lane walks in order',
    );
  });
});
