// `GET /inspect` and `GET /inspect/ws` (issue 31): the running system's inspection events in the format of
// @statelyai/inspect, so a tool that speaks that protocol can follow the actors. Two ways to read the same recording
// (actors/inspection-log.ts):
// - the socket (`inspectSocket`): one JSON event per WebSocket text message, as Stately's `createWebSocketReceiver`
//   expects them; on connect every live actor as `@xstate.actor` with its current `@xstate.snapshot`, then each new
//   event as it is recorded;
// - the long poll (`inspect`), for what cannot open a WebSocket: each answer is `{ next, missed, events }`, and the next
//   request asks for the events `after=next`, waiting up to `wait` ms for the first one. The first request (no `after`)
//   gets the present as the socket does, so a late inspector starts from it.
//
// Names follow the protocol: `sessionId` is XState's session of the machine (a supervisor, which is no XState actor,
// goes by its systemId), `parentId` the supervisor's, `rootId` the supervision root's; `name` is the systemId and
// `definition` the machine's exported config as JSON (actors/statechart.ts `toDefinition`). Payloads are never sent,
// only event types, and contexts as GET /actors/{systemId} summarizes them (actors/inspection-log.ts).

import type { Inspector } from '../../actors/inspector.js';
import type { LoggedEvent } from '../../actors/inspection-log.js';
import { MACHINES, toDefinition } from '../../actors/statechart.js';
import type { Clock } from '../../src/clock.js';
import type { BoundedWebSocket } from '../websocket.js';

/** The @statelyai/inspect release whose event types (its `StatelyInspectionEvent`) these follow. */
export const INSPECT_PROTOCOL_VERSION = '0.7.2';
/** A long poll answers empty after this long at most (below common proxy and client idle timeouts). */
export const MAX_WAIT_MS = 25_000;
const DEFAULT_WAIT_MS = 20_000;

interface Base {
  readonly sessionId: string;
  readonly rootId: string;
  readonly id: string;
  readonly createdAt: string;
  readonly _version: string;
}

export type StatelyInspectionEvent =
  | (Base & { readonly type: '@xstate.actor'; readonly name: string; readonly parentId: string | undefined; readonly definition: string | undefined; readonly snapshot: unknown })
  | (Base & { readonly type: '@xstate.event'; readonly event: { readonly type: string }; readonly sourceId: string | undefined })
  | (Base & { readonly type: '@xstate.snapshot'; readonly event: { readonly type: string }; readonly snapshot: unknown });

export interface InspectAnswer {
  /** Ask for `after=next` to continue. */
  readonly next: number;
  /** Events gone before this reader got them (it fell more than the log's bound behind). */
  readonly missed: number;
  readonly events: StatelyInspectionEvent[];
}

const definitions = new Map<string, string>();
function definitionOf(machineId: string | undefined): string | undefined {
  const machine = machineId ? MACHINES.get(machineId) : undefined;
  if (!machine) return undefined;
  let text = definitions.get(machine.id);
  if (text === undefined) definitions.set(machine.id, (text = JSON.stringify(toDefinition(machine))));
  return text;
}

/** An actor record's status as an XState snapshot status. */
const SNAPSHOT_STATUS: Readonly<Record<string, string>> = { running: 'active', starting: 'active', stopping: 'active', stopped: 'stopped', crashed: 'error' };

class Converter {
  readonly #parents = new Map<string, string>();
  readonly #rootId: string;

  constructor(
    private readonly inspector: Inspector,
    roots: readonly string[],
  ) {
    for (const record of inspector.all()) for (const child of record.children ?? []) this.#parents.set(child, record.systemId);
    this.#rootId = roots[0] ? this.session(roots[0]) : 'root';
  }

  session(systemId: string): string {
    return this.inspector.get(systemId)?.sessionId ?? systemId;
  }

  base(sessionId: string, id: string, at: number): Base {
    return { sessionId, rootId: this.#rootId, id, createdAt: String(at), _version: INSPECT_PROTOCOL_VERSION };
  }

  actor(systemId: string, sessionId: string, machineId: string | undefined, id: string, at: number): StatelyInspectionEvent {
    const parent = this.#parents.get(systemId);
    return {
      type: '@xstate.actor',
      ...this.base(sessionId, id, at),
      name: systemId,
      parentId: parent === undefined ? undefined : this.session(parent),
      definition: definitionOf(machineId),
      snapshot: { status: 'active' },
    };
  }

  logged(event: LoggedEvent): StatelyInspectionEvent {
    const id = String(event.seq);
    if (event.kind === 'actor') return this.actor(event.systemId, event.sessionId, event.machineId, id, event.at);
    if (event.kind === 'event') return { type: '@xstate.event', ...this.base(event.sessionId, id, event.at), event: { type: event.eventType }, sourceId: undefined };
    return { type: '@xstate.snapshot', ...this.base(event.sessionId, id, event.at), event: { type: event.eventType }, snapshot: event.snapshot };
  }

  /** Every actor as it is now: supervisors first, each followed by its children (an inspector builds the tree in order). */
  present(roots: readonly string[], at: number): StatelyInspectionEvent[] {
    const out: StatelyInspectionEvent[] = [];
    const visit = (systemId: string, depth: number) => {
      const record = this.inspector.get(systemId);
      if (!record || depth > 16) return;
      const sessionId = this.session(systemId);
      const machineId = record.sessionId !== undefined && MACHINES.has(record.machineId ?? '') ? record.machineId : undefined;
      out.push(this.actor(systemId, sessionId, machineId, `present:${systemId}:actor`, at));
      out.push({
        type: '@xstate.snapshot',
        ...this.base(sessionId, `present:${systemId}:snapshot`, at),
        event: { type: 'xstate.init' },
        snapshot: { status: SNAPSHOT_STATUS[record.status] ?? 'active', value: record.stateValue },
      });
      for (const child of record.children ?? []) visit(child, depth + 1);
    };
    for (const root of roots) visit(root, 0);
    return out;
  }
}

/** RFC 6455 §7.4.1 "try again later": more events came at once than the log keeps; a new socket starts from the present. */
export const CLOSE_EVENTS_LOST = 1013;

const messages = (events: readonly StatelyInspectionEvent[]) => events.map((event) => JSON.stringify(event));

/**
 * One inspection socket, from its open to its close: the present, then the events recorded after it, one message
 * each, sent in a batch per turn of the event loop (an XState macrostep is recorded whole before the batch goes).
 * The socket holds the log's recording on while it is open; its backlog is bounded by the socket (http/websocket.ts).
 */
export function inspectSocket(inspector: Inspector, clock: Clock, roots: readonly string[], socket: BoundedWebSocket): void {
  const log = inspector.log;
  const release = log.hold();
  let cursor = log.head;
  let waiting: { promise: Promise<void>; cancel(): void } | undefined;
  let closed = false;
  const whenClosed = new Promise<void>((resolve) =>
    socket.onClose(() => {
      closed = true;
      release();
      waiting?.cancel();
      resolve();
    }),
  );
  socket.send(messages(new Converter(inspector, roots).present(roots, clock.now())));
  void (async () => {
    while (!closed && socket.open) {
      waiting = log.next();
      await Promise.race([waiting.promise, whenClosed]);
      waiting.cancel();
      if (closed || !socket.open) return;
      const { events, missed } = log.since(cursor);
      cursor = log.head;
      if (missed > 0) {
        socket.end(CLOSE_EVENTS_LOST, `${missed} inspection events lost; reconnect for the present`);
        return;
      }
      const converter = new Converter(inspector, roots);
      socket.send(messages(events.map((event) => converter.logged(event))));
    }
  })();
}

/** `after` and `wait` from the query string; undefined `after`: the reader starts now. */
export function inspectQuery(query: string): { after: number | undefined; waitMs: number } {
  const params = new URLSearchParams(query);
  const number = (name: string) => {
    const text = params.get(name);
    if (text === null || !/^\d{1,15}$/.test(text)) return undefined;
    return Number(text);
  };
  return { after: number('after'), waitMs: Math.min(MAX_WAIT_MS, number('wait') ?? DEFAULT_WAIT_MS) };
}

/** One long poll of the inspection stream. */
export async function inspect(inspector: Inspector, clock: Clock, roots: readonly string[], query: string, signal: AbortSignal): Promise<InspectAnswer> {
  const { after, waitMs } = inspectQuery(query);
  const log = inspector.log;
  log.arm();
  // A reader from before a restart (its cursor is past this process's events) starts again from the present.
  if (after === undefined || after > log.head) return { next: log.head, missed: 0, events: new Converter(inspector, roots).present(roots, clock.now()) };
  if (log.head <= after && waitMs > 0 && !signal.aborted) {
    const next = log.next();
    let timer: unknown;
    let onAbort: (() => void) | undefined;
    const done = new Promise<void>((resolve) => {
      timer = clock.setTimeout(() => resolve(), waitMs);
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    await Promise.race([next.promise, done]);
    next.cancel();
    clock.clearTimeout(timer);
    signal.removeEventListener('abort', onAbort!);
  }
  const { events, missed } = log.since(after);
  const converter = new Converter(inspector, roots);
  return { next: log.head, missed, events: events.map((event) => converter.logged(event)) };
}
