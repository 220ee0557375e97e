// `files.content`'s downloads on a real files node (helia, blockstore and registry in a temporary folder): how a
// download is sized, and what it does when a peer leaves while it is asked (src/files/peer-loss.ts). The peer's
// departure is played by the node's own reads failing with the error libp2p gives (issue 29, fault seed 7:
// "UnexpectedEOFError: Unexpected EOF - stream closed while reading 0/1 bytes" from `unixfs.stat` while the peer
// asked restarted): a real restart cannot be timed to the moment a read is in flight.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CID } from 'multiformats/cid';
import { FileTimeoutError } from '../../../src/files/errors.js';
import { PEER_LOSS_RETRY_MS } from '../../../src/files/peer-loss.js';
import type { ContentSettings } from '../../../actors/files/content.actor.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { downloadThroughContent } from '../../support/files-content.js';
import { captureLogger } from '../../support/logger.js';

const DISCOVERY_MS = 800;

const SETTINGS: ContentSettings = {
  confirmationRequired: false,
  temporaryTtlMs: 60_000,
  findFileTimeoutMs: DISCOVERY_MS,
  downloadIdleTimeoutMs: 2_000,
  downloadMinBytesPerSecond: 1,
  downloadMaxDurationMs: 10_000,
  replication: { enabled: false, placement: [{ minAgeMs: 0, copies: 1 }], ackQuorum: 1, requireQuorumOnUpload: false, members: [] },
};

/** An error named as libp2p names it (its classes are not exported from one place; the name is what is checked). */
function libp2pError(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

describe('files.content: sizing a download, and a peer that leaves during one', () => {
  let home: string;
  let node: FilesNode;

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'content-peer-loss-'));
    const holder = new NodeHolder();
    node = await startFilesNode({ storeDirectory: join(home, '.adm-ipfs'), listen: ['/ip4/127.0.0.1/tcp/0'], allow: [], holder, logger: captureLogger('warn').logger });
  });
  after(async () => {
    await stopFilesNode(node);
    rmSync(home, { recursive: true, force: true });
  });

  /** Opens and reads `cid` through the content actor over `seen` (the node as the download sees it). */
  async function download(seen: FilesNode, cid: CID): Promise<Buffer> {
    const holder = new NodeHolder();
    holder.set(seen);
    return downloadThroughContent(holder, cid, SETTINGS);
  }

  /**
   * The node with `unixfs.stat` failing as `fail` says for its first calls; every call is counted. Its own block
   * files do not list the file (`sizeOf`), as when the file is on a peer and discovery has to ask for it.
   */
  function withStat(fail: (call: number) => Error | undefined) {
    let calls = 0;
    const unixfs = Object.create(node.unixfs, {
      stat: {
        value: (...args: Parameters<FilesNode['unixfs']['stat']>) => {
          const failure = fail(++calls);
          return failure ? Promise.reject(failure) : node.unixfs.stat(...args);
        },
      },
    }) as FilesNode['unixfs'];
    const blockstore = Object.create(node.store.blockstore, { sizeOf: { value: async () => undefined } }) as FilesNode['store']['blockstore'];
    const seen = Object.create(node, { unixfs: { value: unixfs }, store: { value: Object.create(node.store, { blockstore: { value: blockstore } }) } }) as FilesNode;
    return { seen, calls: () => calls };
  }

  it('a one-block (raw) file held here is sized from its block file: no stat reads the block first', async () => {
    const bytes = randomBytes(4_096);
    const cid = await node.unixfs.addBytes(bytes);
    assert.equal(cid.code, 0x55, 'a raw CID');
    let stats = 0;
    const unixfs = Object.create(node.unixfs, { stat: { value: (...args: Parameters<FilesNode['unixfs']['stat']>) => (stats++, node.unixfs.stat(...args)) } }) as FilesNode['unixfs'];
    const seen = Object.create(node, { unixfs: { value: unixfs } }) as FilesNode;
    assert.deepEqual(await download(seen, cid), bytes);
    assert.equal(stats, 0);
    // A file of several blocks (a dag-pb root) is still sized by the stat of its root.
    const large = randomBytes(1_048_576 + 10);
    const rooted = await node.unixfs.addBytes(large);
    assert.equal(rooted.code, 0x70, 'a dag-pb CID');
    assert.deepEqual(await download(seen, rooted), large);
    assert.equal(stats, 1);
  });

  it('discovery asks again when the peer asked leaves, and the file downloads', async () => {
    const bytes = randomBytes(3_000);
    const cid = await node.unixfs.addBytes(bytes);
    const { seen, calls } = withStat((call) => (call <= 2 ? libp2pError('UnexpectedEOFError', 'Unexpected EOF - stream closed while reading 0/1 bytes') : undefined));
    const started = Date.now();
    assert.deepEqual(await download(seen, cid), bytes);
    assert.equal(calls(), 3);
    assert.ok(Date.now() - started >= 2 * PEER_LOSS_RETRY_MS - 20, 'each new ask waits a moment, not a spin');
  });

  it('peers that keep leaving end in the discovery deadline (408), not a 500; the asks are paced', async () => {
    const cid = await node.unixfs.addBytes(randomBytes(100));
    const { seen, calls } = withStat(() => libp2pError('StreamResetError', 'the stream has been reset'));
    const started = Date.now();
    await assert.rejects(download(seen, cid), (error: Error) => error instanceof FileTimeoutError && error.deadline === 'discovery');
    assert.ok(Date.now() - started >= DISCOVERY_MS - 20, 'answered at the deadline');
    assert.ok(calls() >= 2 && calls() <= Math.ceil(DISCOVERY_MS / PEER_LOSS_RETRY_MS) + 1, `asked ${calls()} times`);
  });

  it('any other failure of discovery is answered at once, not asked again', async () => {
    const cid = await node.unixfs.addBytes(randomBytes(100));
    const { seen, calls } = withStat(() => new TypeError('broken'));
    await assert.rejects(download(seen, cid), (error: Error) => error instanceof TypeError && error.message === 'broken');
    assert.equal(calls(), 1);
  });

  it('a block fetched from the network is asked again when its peer leaves mid-download', async () => {
    const bytes = randomBytes(5_000);
    const cid = await node.unixfs.addBytes(bytes);
    // The block is not in the node's own files (the download goes to helia, as for a block another peer holds), and
    // helia's first fetch of it fails as a reset stream does.
    let fetches = 0;
    const blockstore = Object.create(node.store.blockstore, {
      getBlock: { value: () => Promise.reject(libp2pError('NotFoundError', 'not here')) },
    }) as FilesNode['store']['blockstore'];
    const heliaBlockstore = Object.create(node.helia.blockstore, {
      get: {
        value: (...args: Parameters<FilesNode['helia']['blockstore']['get']>) => {
          fetches++;
          if (fetches === 1) throw libp2pError('StreamResetError', 'the stream has been reset');
          return node.helia.blockstore.get(...args);
        },
      },
    }) as FilesNode['helia']['blockstore'];
    const seen = Object.create(node, {
      store: { value: Object.create(node.store, { blockstore: { value: blockstore } }) },
      helia: { value: Object.create(node.helia, { blockstore: { value: heliaBlockstore } }) },
    }) as FilesNode;
    assert.deepEqual(await download(seen, cid), bytes);
    assert.equal(fetches, 2);
  });
});
