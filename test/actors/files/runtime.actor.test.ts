// The files runtime on real stores: an original ipfs-node store keeps its peer id, pins and content;
// a new store gets an identity that survives restarts.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CID } from 'multiformats/cid';
import { NodeHolder } from '../../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { captureLogger } from '../../support/logger.js';
import { homeWithOriginalStore, originalStoreManifest } from '../../support/fixtures.js';

const options = (storeDirectory: string) => ({
  storeDirectory,
  listen: ['/ip4/127.0.0.1/tcp/0'],
  allow: [],
  holder: new NodeHolder(),
  logger: captureLogger().logger,
});

test('an original ipfs-node store keeps its peer id, its pins and serves its files byte-identically', async () => {
  const manifest = originalStoreManifest();
  const home = homeWithOriginalStore();
  try {
    const node = await startFilesNode(options(join(home, manifest.storeFolder)));
    try {
      assert.equal(node.peerId, manifest.peerId);
      const pins: string[] = [];
      for await (const pin of node.helia.pins.ls()) pins.push(pin.cid.toString());
      assert.deepEqual(pins.sort(), manifest.files.map((f) => f.cid).sort());
      for (const file of manifest.files) {
        const hash = createHash('sha256');
        let size = 0;
        for await (const chunk of node.unixfs.cat(CID.parse(file.cid), { offline: true })) {
          hash.update(chunk);
          size += chunk.length;
        }
        assert.equal(size, file.size, file.name);
        assert.equal(hash.digest('hex'), file.sha256, file.name);
      }
    } finally {
      await stopFilesNode(node);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('a new store creates an identity that the next start keeps', async () => {
  const home = mkdtempSync(join(tmpdir(), 'files-new-'));
  try {
    const first = await startFilesNode(options(join(home, '.adm-ipfs')));
    const peerId = first.peerId;
    assert.match(peerId, /^12D3KooW/);
    await stopFilesNode(first);
    const second = await startFilesNode(options(join(home, '.adm-ipfs')));
    assert.equal(second.peerId, peerId);
    await stopFilesNode(second);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
