// Keeps what operators see of every supervised actor (docs/DESIGN.md, "Operators see the running system"):
// state value, status, restart count and a bounded history of recent events. Fed by XState's `inspect`
// option for machine actors and by the supervisor for lifecycle facts.

import type { InspectionEvent } from 'xstate';

export const EVENT_HISTORY_LIMIT = 50;

export interface RecordedEvent {
  readonly at: number;
  readonly type: string;
}

export interface ActorRecord {
  readonly systemId: string;
  machineId: string | undefined;
  status: 'starting' | 'running' | 'stopping' | 'stopped' | 'crashed';
  stateValue: unknown;
  restarts: number;
  lastError: string | undefined;
  /** For supervisors: child ids in start order (the tree the operator view draws). */
  children?: string[];
  readonly events: RecordedEvent[];
}

/** The asks an actor has not answered yet: how many, and how long the oldest has waited. */
export interface PendingAsks {
  readonly inFlight: number;
  readonly oldestMs: number | undefined;
}

export class Inspector {
  readonly #records = new Map<string, ActorRecord>();
  /** Per systemId, the start time of each ask not answered yet (keyed by a token per ask). */
  readonly #asks = new Map<string, Map<object, number>>();

  constructor(private readonly now: () => number) {}

  record(systemId: string): ActorRecord {
    let record = this.#records.get(systemId);
    if (!record) {
      record = { systemId, machineId: undefined, status: 'starting', stateValue: undefined, restarts: 0, lastError: undefined, events: [] };
      this.#records.set(systemId, record);
    }
    return record;
  }

  get(systemId: string): ActorRecord | undefined {
    return this.#records.get(systemId);
  }

  all(): ActorRecord[] {
    return [...this.#records.values()];
  }

  /** An ask to `systemId` began; the returned function marks it answered (or given up). */
  askStarted(systemId: string): () => void {
    let pending = this.#asks.get(systemId);
    if (!pending) this.#asks.set(systemId, (pending = new Map()));
    const token = {};
    pending.set(token, this.now());
    return () => void pending.delete(token);
  }

  /** What operators see of the asks waiting on an actor (where requests wait). */
  pendingAsks(systemId: string): PendingAsks {
    const pending = this.#asks.get(systemId);
    if (!pending || pending.size === 0) return { inFlight: 0, oldestMs: undefined };
    // Insertion order: the first entry is the oldest.
    const oldest = pending.values().next().value as number;
    return { inFlight: pending.size, oldestMs: this.now() - oldest };
  }

  note(systemId: string, type: string): void {
    const events = this.record(systemId).events;
    events.push({ at: this.now(), type });
    if (events.length > EVENT_HISTORY_LIMIT) events.splice(0, events.length - EVENT_HISTORY_LIMIT);
  }

  /** An XState `inspect` observer for the root actor registered as `systemId` (child actors are ignored). */
  observer(systemId: string, rootSessionId: () => string | undefined): (event: InspectionEvent) => void {
    return (event) => {
      if (event.actorRef.sessionId !== rootSessionId()) return;
      if (event.type === '@xstate.event') {
        // Internal init/stop events and delayed-transition events are useful too; only their type is kept,
        // never the payload (it may carry request data).
        this.note(systemId, event.event.type);
      } else if (event.type === '@xstate.snapshot') {
        const snapshot = event.snapshot as { value?: unknown; status?: string };
        const record = this.record(systemId);
        if ('value' in snapshot) record.stateValue = snapshot.value;
      }
    };
  }
}
