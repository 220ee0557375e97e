// Keeps what operators see of every supervised actor (docs/DESIGN.md, "Operators see the running system"):
// state value, status, restart count, the transitions last taken and a bounded history of recent events. Fed by
// XState's `inspect` option for machine actors and by the supervisor for lifecycle facts; while an inspector reads
// `GET /inspect`, the same observer also feeds the inspection log (actors/inspection-log.ts).

import type { InspectionEvent } from 'xstate';
import { InspectionLog } from './inspection-log.js';

export const EVENT_HISTORY_LIMIT = 50;

export interface RecordedEvent {
  readonly at: number;
  readonly type: string;
}

/** A transition the actor took: its source state node, event type ('' for `always`) and targets (none: it stayed). */
export interface TakenTransition {
  readonly source: string;
  readonly eventType: string;
  readonly targets: readonly string[];
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
  /** The XState session of the actor's current (or last) machine, once it has sent anything. */
  sessionId?: string;
  /** The transitions of the last event the machine took any for (the operator page marks them). */
  lastTransitions?: TakenTransition[];
}

/** Context as operators see it: scalars as they are, collections by size (they can be large). */
export function summarizeContext(context: unknown): unknown {
  if (!context || typeof context !== 'object') return context;
  const summary: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (Array.isArray(value)) summary[key] = { items: value.length };
    else if (value && typeof value === 'object') summary[key] = { keys: Object.keys(value).length };
    else summary[key] = value;
  }
  return summary;
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

  /** The inspection events of the supervised actors, recorded while someone reads them (GET /inspect). */
  readonly log: InspectionLog;

  constructor(private readonly now: () => number) {
    this.log = new InspectionLog(now);
  }

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
    /** The transitions of the macrostep in progress: a new event starts a new list. */
    let taken: TakenTransition[] = [];
    let announced = false;
    return (event) => {
      const sessionId = event.actorRef.sessionId;
      if (sessionId !== rootSessionId()) return;
      const record = this.record(systemId);
      if (!announced) {
        // A new actor under this systemId (a start, a restart, the next GC run inside its host): inspectors see it.
        announced = true;
        record.sessionId = sessionId;
        record.lastTransitions = undefined;
        const logic = (event.actorRef as { logic?: { id?: unknown; config?: unknown } }).logic;
        const machineId = logic?.config && typeof logic.id === 'string' ? logic.id : undefined;
        if (this.log.recording) this.log.push({ at: this.now(), kind: 'actor', systemId, sessionId, machineId });
      }
      if (event.type === '@xstate.event') {
        // Internal init/stop events and delayed-transition events are useful too; only their type is kept,
        // never the payload (it may carry request data).
        this.note(systemId, event.event.type);
        taken = [];
        if (this.log.recording) this.log.push({ at: this.now(), kind: 'event', systemId, sessionId, eventType: event.event.type });
      } else if (event.type === '@xstate.microstep') {
        for (const t of event._transitions) {
          taken.push({ source: t.source.id, eventType: t.eventType, targets: (t.target ?? []).map((target) => target.id) });
        }
      } else if (event.type === '@xstate.snapshot') {
        const snapshot = event.snapshot as { value?: unknown; status?: string; context?: unknown };
        if ('value' in snapshot) record.stateValue = snapshot.value;
        if (taken.length > 0) record.lastTransitions = taken;
        if (this.log.recording) {
          this.log.push({
            at: this.now(),
            kind: 'snapshot',
            systemId,
            sessionId,
            eventType: event.event.type,
            snapshot: { status: snapshot.status, value: snapshot.value, context: summarizeContext(snapshot.context) },
          });
        }
      }
    };
  }
}
