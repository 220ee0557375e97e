// `files.runtime`: the runtime machine with its I/O supplied. Starts helia from @helia/utils with
// libp2p over TCP + noise + yamux, identify and ping, no content routing (`routers: []`) and bitswap as the
// only block broker (notes 0.3, B.3): a CID that exists only on a public network is never found.
// The peer key lives in the store's datastore (/pkcs8/self), so the peer id survives restarts and an
// original ipfs-node store keeps its identity.

import { noise } from '@chainsafe/libp2p-noise';
import { bitswap } from '@helia/block-brokers';
import { unixfs } from '@helia/unixfs';
import { Helia } from '@helia/utils';
import { loadOrCreateSelfKey } from '@libp2p/config';
import { identify } from '@libp2p/identify';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { ping } from '@libp2p/ping';
import { tcp } from '@libp2p/tcp';
import { createLibp2p } from 'libp2p';
import { fromPromise } from 'xstate';
import type { Logger } from '../../src/logger.js';
import { runtimeMachine, type RuntimeStarted } from '../../machines/files/runtime.machine.js';
import { guardedYamux } from '../../storage/files/stream-muxer.libp2p.js';
import { openNodeStore } from '../../storage/files/node-store.js';
import { openSqliteRegistry } from '../../storage/files/registry.sqlite.js';
import type { FilesNode, NodeHolder } from './node.js';
import { datastoreRootPins } from '../../storage/files/root-pins.datastore.js';

export interface RuntimeOptions {
  /** `<home>/<storeFolder>`. */
  readonly storeDirectory: string;
  /** `peerDiscovery.listen` multiaddrs. */
  readonly listen: readonly string[];
  /** Multiaddrs of the configured `nodes`, always allowed by the connection manager. */
  readonly allow: readonly string[];
  readonly holder: NodeHolder;
  readonly logger: Logger;
}

/** Connection ceiling of the original (notes B.3). */
/** Concurrent operator pings per connection, each way. */
const PING_STREAMS = 4;
const MAX_CONNECTIONS = 100;
/**
 * Bytes a libp2p TCP socket takes before it asks its writer to wait (Node's default is 16 KiB). A noise frame is up to
 * 64 KiB, so at the default every frame of a block sent to a peer stopped the connection's send loop until the
 * socket drained; with room for several frames one loop sends them together. `highWaterMark` is net's option
 * (net.connect and net.createServer pass it to each socket); @libp2p/tcp hands these options to both.
 */
const SOCKET_WRITE_BUFFER_BYTES = 256 * 1024;
const SOCKET_OPTIONS = { highWaterMark: SOCKET_WRITE_BUFFER_BYTES } as { noDelay?: boolean };

/**
 * The node's libp2p connection stack: TCP, noise, yamux (guarded: storage/files/stream-muxer.libp2p.ts). Exported for the cluster bench's transport floor, which
 * moves a copy's bytes over this same stack without the node around it (bench/support/transport-floor.ts).
 */
export function connectionStack() {
  return {
    transports: [tcp({ dialOpts: SOCKET_OPTIONS, listenOpts: SOCKET_OPTIONS })],
    connectionEncrypters: [noise()],
    streamMuxers: [guardedYamux()],
  };
}

export async function startFilesNode(options: RuntimeOptions): Promise<FilesNode> {
  const store = await openNodeStore(options.storeDirectory);
  let registry: ReturnType<typeof openSqliteRegistry> | undefined;
  try {
    registry = openSqliteRegistry(store.registryPath);
    const privateKey = await loadOrCreateSelfKey(store.datastore);
    const libp2p = await createLibp2p({
      privateKey,
      datastore: store.datastore,
      addresses: { listen: [...options.listen] },
      ...connectionStack(),
      peerDiscovery: [],
      connectionManager: { maxConnections: MAX_CONNECTIONS, allow: [...options.allow] },
      // Ping allows one outbound stream per connection by default, and a stream is released only after its close
      // settles: an operator's second ping right after the first was refused (TooManyOutboundProtocolStreams).
      services: { identify: identify(), ping: ping({ maxOutboundStreams: PING_STREAMS, maxInboundStreams: PING_STREAMS }) },
      start: false,
    });
    const helia = new Helia({ libp2p, blockstore: store.blockstore, datastore: store.datastore, blockBrokers: [bitswap()], routers: [] });
    await helia.start();
    const pins = datastoreRootPins({ datastore: helia.datastore, names: store.datastore.namesIn.bind(store.datastore), blockstore: helia.blockstore, getCodec: helia.getCodec });
    return { helia, libp2p, unixfs: unixfs(helia), store, registry, pins, peerId: peerIdFromPrivateKey(privateKey).toString() };
  } catch (error) {
    registry?.close();
    await store.close();
    throw error;
  }
}

export function runtimeLogic(options: RuntimeOptions) {
  let node: FilesNode | undefined;
  return runtimeMachine.provide({
    actors: {
      startNode: fromPromise<RuntimeStarted>(async ({ signal }) => {
        const started = await startFilesNode(options);
        if (signal.aborted) {
          // Shutdown arrived while starting: stop what just started instead of leaking it.
          await stopFilesNode(started);
          return { peerId: started.peerId };
        }
        node = started;
        options.holder.set(started);
        options.logger.info({ listen: started.libp2p.getMultiaddrs().length }, 'runtime started');
        return { peerId: started.peerId };
      }),
      stopNode: fromPromise<void>(async () => {
        const current = node;
        node = undefined;
        options.holder.set(undefined);
        if (current) await stopFilesNode(current);
        options.logger.info('runtime stopped');
      }),
    },
  });
}

export async function stopFilesNode(node: FilesNode): Promise<void> {
  try {
    await node.helia.stop();
  } finally {
    node.registry.close();
    await node.store.close();
  }
}
