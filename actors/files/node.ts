// The running helia node, shared by the files actors that move content (upload, download, GC, pins).
// The runtime actor sets it when the node has started and clears it before stopping; every user reads it
// at the moment of use (never caches it), so a restarted runtime is picked up like a restarted actor.

import type { Helia } from '@helia/utils';
import type { UnixFS } from '@helia/unixfs';
import type { Libp2p } from '@libp2p/interface';
import type { NodeStore } from '../../storage/files/node-store.js';
import type { FileRegistry } from '../../storage/files/registry.js';
import { ResourceHolder } from '../resource-holder.js';
import type { RootPins } from '../../storage/files/root-pins.js';

export interface FilesNode {
  readonly helia: Helia<Libp2p>;
  readonly libp2p: Libp2p;
  readonly unixfs: UnixFS;
  readonly store: NodeStore;
  /**
   * The file registry (registry.sqlite in the store folder), open as long as the node runs. Records, intents and
   * acknowledgements are written by the store's owner alone (actors/files/store.actor.ts); GC runs and actor state by
   * the actors they belong to. Anyone reads.
   */
  readonly registry: FileRegistry;
  /** The node's root pins: changed by the store's owner alone, read by anyone. */
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
