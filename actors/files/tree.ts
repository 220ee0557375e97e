// The files service's supervision tree (DESIGN.md, "The actor model"):
//
//   files (rest_for_one)
//   ├── files.runtime    runtime machine: helia + libp2p + the store folder + the registry
//   ├── files.content    uploads, downloads, status, lifecycle changes, pins (asked by the edge)
//   ├── files.reconcile  the startup walk (transient: runs once, restarted only if it crashes)
//   └── …edge            the HTTP listener, supplied by the caller (actors/ never imports http/)
//
// rest_for_one: everything after the runtime works on the node it started, so a runtime restart
// restarts them too; a crash of the content actor leaves the node running.

import { actorChild } from '../actor-child.js';
import type { ChildSpec } from '../supervisor.js';
import { supervisorSpec } from '../supervisor.js';
import type { FilesConfig } from '../../src/files/config.js';
import { contentLogic, contentSettings } from './content.actor.js';
import { NodeHolder } from './node.js';
import { reconcileLogic, type ReconcileResult } from './reconcile.actor.js';
import { runtimeLogic } from './runtime.actor.js';
import { StartupSignal } from './startup.js';

export const FILES_RUNTIME_ID = 'files.runtime';
export const FILES_CONTENT_ID = 'files.content';
export const FILES_RECONCILE_ID = 'files.reconcile';

export interface FilesTreeSettings {
  /** The validated configuration; each actor takes the part it needs. */
  readonly config: FilesConfig;
  /** `<home>/<storeFolder>`. */
  readonly storeDirectory: string;
}

export interface FilesTreeOptions {
  readonly edge?: readonly ChildSpec[];
  /** Told when the startup walk has finished (the health checkpoint and the collector wait for it). */
  readonly onStartupComplete?: (result: ReconcileResult) => void;
}

export function filesTree(settings: FilesTreeSettings, options: FilesTreeOptions = {}): ChildSpec {
  const { config } = settings;
  const holder = new NodeHolder();
  const startup = new StartupSignal();
  if (options.onStartupComplete) startup.onComplete(options.onStartupComplete);
  return supervisorSpec({
    id: 'files',
    strategy: 'rest_for_one',
    intensity: 5,
    periodMs: 60_000,
    backoff: { initialMs: 500, maxMs: 10_000 },
    children: [
      actorChild({
        systemId: FILES_RUNTIME_ID,
        logic: (runtime) =>
          runtimeLogic({
            storeDirectory: settings.storeDirectory,
            listen: config.peerDiscovery.listen,
            // The configured nodes may always connect (connection manager allow list).
            allow: config.nodes.map((node) => node.multiAddr),
            holder,
            logger: runtime.logger.child({ actor: FILES_RUNTIME_ID }),
          }),
        // helia's stop closes libp2p connections and the stores; spec §8 wants supervisor timeouts > 15 s.
        shutdownTimeoutMs: 16_000,
        // The content actor and the HTTP port start only once the node runs (no 503 at startup).
        readyWhen: (snapshot) => snapshot.value === 'running',
      }),
      actorChild({
        systemId: FILES_CONTENT_ID,
        shutdown: 'stop',
        logic: (runtime) => contentLogic({ holder, clock: runtime.clock, settings: contentSettings(config), logger: runtime.logger.child({ actor: FILES_CONTENT_ID }) }),
      }),
      actorChild({
        systemId: FILES_RECONCILE_ID,
        restart: 'transient',
        shutdown: 'stop',
        logic: (runtime) =>
          reconcileLogic({
            holder,
            clock: runtime.clock,
            logger: runtime.logger.child({ actor: FILES_RECONCILE_ID }),
            onComplete: (result) => startup.complete(result),
          }),
      }),
      ...(options.edge ?? []),
    ],
  });
}
