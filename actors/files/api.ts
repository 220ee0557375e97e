// The files service's API for its edge (docs/DESIGN.md rule 5): one typed ask per actor, from that actor's message map, so
// the edge can neither send a message an actor does not take nor pick the type of its answer. Every operation goes to
// the actor that owns the resource: content (uploads, downloads, lifecycle, pins), the collector, repair, the disk
// scan and claims, the health checkpoint, the peer network.

import { askFor, type AskFor } from '../ask.js';
import type { Runtime } from '../runtime.js';
import type { ContentEvent } from './content.actor.js';
import type { DiskEvent } from './disk.actor.js';
import type { GcEvent } from './gc.actor.js';
import type { HealthEvent } from './health.actor.js';
import type { P2pEvent } from './p2p.actor.js';
import type { RepairEvent } from './repair.actor.js';
import { FILES_CONTENT_ID, FILES_DISK_ID, FILES_GC_ID, FILES_HEALTH_ID, FILES_P2P_ID, FILES_REPAIR_ID } from './tree.js';

export interface FilesApi {
  readonly content: AskFor<ContentEvent>;
  readonly gc: AskFor<GcEvent>;
  readonly repair: AskFor<RepairEvent>;
  readonly disk: AskFor<DiskEvent>;
  readonly health: AskFor<HealthEvent>;
  readonly p2p: AskFor<P2pEvent>;
}

/** `timeoutMs`: each ask's bound unless the call gives its own. */
export function filesApi(runtime: Runtime, timeoutMs: number): FilesApi {
  const to = <E extends { type: string }>(systemId: string) => askFor<E>(runtime.ask, systemId, { timeoutMs });
  return {
    content: to<ContentEvent>(FILES_CONTENT_ID),
    gc: to<GcEvent>(FILES_GC_ID),
    repair: to<RepairEvent>(FILES_REPAIR_ID),
    disk: to<DiskEvent>(FILES_DISK_ID),
    health: to<HealthEvent>(FILES_HEALTH_ID),
    p2p: to<P2pEvent>(FILES_P2P_ID),
  };
}
