// The running system's inspection events, kept for the operator listener's `GET /inspect` (issue 31), which hands them
// out in @statelyai/inspect's format (http/admin/inspect.ts). Recorded only while someone reads: each read arms the log
// for ARMED_MS, and an open inspection socket (GET /inspect/ws) holds it on while it is open, so a process nobody
// inspects pays nothing per event. Bounded: an inspector that falls more than
// LOG_LIMIT events behind is told how many it missed.
//
// What is kept of an event is its type, never its payload (it may carry request data), and of a snapshot its status,
// state value and context summarized as the operator routes show it (collections by size): the same exposure as
// `GET /actors/{systemId}`.

/** One read keeps recording on this long; an inspector polls well within it. */
export const ARMED_MS = 60_000;
export const LOG_LIMIT = 2_000;

export type LoggedEvent =
  | { readonly seq: number; readonly at: number; readonly kind: 'actor'; readonly systemId: string; readonly sessionId: string; readonly machineId: string | undefined }
  | { readonly seq: number; readonly at: number; readonly kind: 'event'; readonly systemId: string; readonly sessionId: string; readonly eventType: string }
  | {
      readonly seq: number;
      readonly at: number;
      readonly kind: 'snapshot';
      readonly systemId: string;
      readonly sessionId: string;
      readonly eventType: string;
      readonly snapshot: { readonly status: string | undefined; readonly value: unknown; readonly context: unknown };
    };

type Entry = LoggedEvent extends infer E ? (E extends LoggedEvent ? Omit<E, 'seq'> : never) : never;

export class InspectionLog {
  readonly #events: LoggedEvent[] = [];
  #seq = 0;
  #armedUntil = -Infinity;
  /** Open inspection sockets: each keeps recording on until it closes. */
  #holders = 0;
  readonly #waiters = new Set<() => void>();

  constructor(private readonly now: () => number) {}

  /** Whether events are recorded now (a socket is open, or someone read within ARMED_MS). */
  get recording(): boolean {
    return this.#holders > 0 || this.now() < this.#armedUntil;
  }

  /** A reader that stays (an inspection socket): recording until the returned function is called. */
  hold(): () => void {
    this.#holders++;
    let held = true;
    return () => {
      if (held) this.#holders--;
      held = false;
    };
  }

  /** A reader came by: record for another ARMED_MS. */
  arm(): void {
    this.#armedUntil = this.now() + ARMED_MS;
  }

  /** The sequence number of the newest event (0 before the first). */
  get head(): number {
    return this.#seq;
  }

  push(entry: Entry): void {
    if (!this.recording) return;
    this.#events.push({ ...entry, seq: ++this.#seq } as LoggedEvent);
    if (this.#events.length > LOG_LIMIT) this.#events.splice(0, this.#events.length - LOG_LIMIT);
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /** The events after `after`, and how many of them are gone already (the reader fell behind). */
  since(after: number): { events: LoggedEvent[]; missed: number } {
    const first = this.#events[0]?.seq ?? this.#seq + 1;
    const events = this.#events.filter((event) => event.seq > after);
    return { events, missed: Math.max(0, first - after - 1) };
  }

  /** Resolves at the next push (a long poll waits on it together with its deadline and its request's signal). */
  next(): { promise: Promise<void>; cancel(): void } {
    let wake!: () => void;
    const promise = new Promise<void>((resolve) => (wake = resolve));
    this.#waiters.add(wake);
    return { promise, cancel: () => this.#waiters.delete(wake) };
  }
}
