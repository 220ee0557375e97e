// The running helia node, shared by the files actors that move content (upload, download, GC, pins).
// The runtime actor sets it when the node has started and clears it before stopping; every user reads it
// at the moment of use (never caches it), so a restarted runtime is picked up like a restarted actor.

import type { Helia } from '@helia/utils';
import type { UnixFS } from '@helia/unixfs';
import type { Libp2p } from '@libp2p/interface';
import type { NodeStore } from '../../storage/files/node-store.js';
import type { FileRegistry } from '../../storage/files/registry.js';
import type { Logger } from '../../src/logger.js';
import { ResourceHolder } from '../resource-holder.js';
import type { FileRecords } from './file-records.js';
import type { RootPins } from '../../storage/files/root-pins.js';

export interface FilesNode {
  readonly helia: Helia<Libp2p>;
  readonly libp2p: Libp2p;
  readonly unixfs: UnixFS;
  readonly store: NodeStore;
  /**
   * The file registry (registry.sqlite in the store folder), open as long as the node runs. Its record writes
   * (put, putMany, delete, commitUpload) are `records`' alone; intents, acknowledgements, GC runs and actor
   * state are written here directly.
   */
  readonly registry: FileRegistry;
  /** The one writer of file records. */
  readonly records: FileRecords;
  /** The node's root pins. */
  readonly pins: RootPins;
  readonly peerId: string;
}

/** The node is not running (starting, restarting or stopping). */
export class NodeNotRunningError extends Error {
  override readonly name = 'NodeNotRunningError';
  constructor() {
    super('the files node is not running');
  }
}

/** The node's peer network: what the p2p and health actors use of it. */
export interface PeerNetwork {
  readonly libp2p: Libp2p;
  readonly peerId: string;
}

/** Persisted actor state in the registry's state table (the health checkpoint, the repair cursor and evidence). */
export interface ActorStateStore {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
}

/** What the disk-usage actor shows of the registry (storage metrics). */
export type RegistryFigures = Pick<FileRegistry, 'pinnedBytes' | 'counts' | 'intents'>;

/**
 * The running node, and the narrow faces of it that actors are given instead of the whole node. Each face reads
 * the node at the moment of use (a restarted runtime is picked up; none running throws NodeNotRunningError).
 */
export class NodeHolder extends ResourceHolder<FilesNode> {
  constructor() {
    super(() => new NodeNotRunningError());
  }

  readonly network = (): PeerNetwork => this.get();

  readonly figures = (): RegistryFigures => this.get().registry;

  readonly actorState: ActorStateStore = {
    get: (key) => this.get().registry.getState(key),
    set: (key, value) => this.get().registry.setState(key, value),
  };
}

/**
 * Records which peers hold (`held`) or no longer hold (`gone`) a stored copy of `cid`, for the file status (spec
 * §2.2). Best effort: the copies exist whatever this write does, so a failure costs only the status's accuracy.
 */
export function noteHolders(
  node: FilesNode | NodeHolder,
  cid: string,
  change: { held?: readonly string[]; gone?: readonly string[] },
  at: number,
  logger: Logger,
): void {
  try {
    // A holder is read here, inside the try: a node stopped meanwhile is one more write that did not happen.
    const { registry } = node instanceof NodeHolder ? node.get() : node;
    if (change.held?.length) registry.acknowledge(cid, change.held, at);
    if (change.gone?.length) registry.forgetAcknowledgements(cid, change.gone);
  } catch (error) {
    logger.warn({ kind: (error as Error).name }, 'could not note which peers hold a copy');
  }
}
