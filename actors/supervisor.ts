// OTP-style supervision on top of XState (docs/DESIGN.md rule 4).
//
// XState v5 has no supervision: an actor that throws just ends in status 'error'. A Supervisor owns an
// ordered list of child specs, starts them in order, watches each child's exit, restarts according to the
// child's restart type and the supervisor's strategy, bounds restarts by intensity/period (with backoff
// between attempts), escalates to its parent by exiting with an error when the bound is exceeded, and shuts
// children down in reverse order, each within its own timeout (XState's stop is synchronous, so graceful
// shutdown is a protocol: the child is asked, and killed when its timeout passes).

import { sleep } from '../src/clock.js';
import type { Runtime } from './runtime.js';

export type RestartType = 'permanent' | 'transient' | 'temporary';
export type Strategy = 'one_for_one' | 'rest_for_one' | 'one_for_all';

export type ExitReason =
  | { readonly kind: 'normal' }
  | { readonly kind: 'error'; readonly error: unknown }
  | { readonly kind: 'killed' };

/** A started child as its supervisor drives it. */
export interface ChildHandle {
  /** Settles once, when the child has exited: on its own, after `shutdown()`, or after `kill()`. */
  readonly exited: Promise<ExitReason>;
  /** Begin a graceful stop; the child settles `exited` when done. */
  shutdown(): void;
  /** Stop at once (the shutdown timeout passed). Must settle `exited`. */
  kill(): void;
}

export interface ChildSpec {
  /** Unique among siblings; for workers this is the systemId (`<service>.<role>`). */
  readonly id: string;
  /** permanent: always restarted; transient: restarted only after an abnormal exit; temporary: never. */
  readonly restart?: RestartType;
  readonly shutdownTimeoutMs?: number;
  start(runtime: Runtime): Promise<ChildHandle> | ChildHandle;
  /** A supervisor's strategy and children, known before it starts (drawSupervisionTree). */
  readonly supervises?: { readonly strategy: Strategy; readonly children: readonly ChildSpec[] };
}

export interface SupervisorOptions {
  readonly id: string;
  readonly strategy: Strategy;
  /** At most this many restarts within `periodMs`; one more escalates. */
  readonly intensity: number;
  readonly periodMs: number;
  /** Delay before the n-th restart inside the period: min(maxMs, initialMs·2^(n-1)). */
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  readonly children: readonly ChildSpec[];
  readonly restart?: RestartType;
  readonly shutdownTimeoutMs?: number;
}

export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 5_000;
const DEFAULT_BACKOFF = { initialMs: 100, maxMs: 5_000 };

/** The supervisor gave up: more restarts than its intensity allows within its period. */
export class RestartIntensityError extends Error {
  override readonly name = 'RestartIntensityError';
  constructor(
    readonly supervisorId: string,
    readonly childId: string,
    override readonly cause: unknown,
  ) {
    super(`supervisor ${supervisorId} gave up: child ${childId} exceeded the restart intensity (last error: ${describe(cause)})`);
  }
}

/** A child failed to start (its start function threw). */
export class ChildStartError extends Error {
  override readonly name = 'ChildStartError';
  constructor(
    readonly childId: string,
    override readonly cause: unknown,
  ) {
    super(`child ${childId} failed to start: ${describe(cause)}`);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

interface ChildEntry {
  readonly spec: ChildSpec;
  handle: ChildHandle | undefined;
  /** Bumped on every start, so exits of an old incarnation are recognised and ignored. */
  generation: number;
  /** Set while the supervisor itself stops this incarnation: its exit is expected, not a crash. */
  stopping: boolean;
  removed: boolean;
}

export class Supervisor implements ChildHandle {
  readonly exited: Promise<ExitReason>;
  readonly #options: SupervisorOptions;
  readonly #runtime: Runtime;
  readonly #entries: ChildEntry[];
  readonly #restartTimes: number[] = [];
  #settle!: (reason: ExitReason) => void;
  #phase: 'starting' | 'running' | 'stopping' | 'stopped' = 'starting';
  /** Restarts and shutdown run one at a time, in arrival order. */
  #queue: Promise<void> = Promise.resolve();
  #killed = false;
  /** Set synchronously by shutdown()/kill(): pending restarts give up, and backoff waits end at once. */
  readonly #stopRequested = new AbortController();
  /** Restarts of children that crashed while later siblings were still starting; run once started. */
  readonly #deferred: Array<() => Promise<void>> = [];

  constructor(options: SupervisorOptions, runtime: Runtime) {
    this.#options = options;
    this.#runtime = runtime;
    this.#entries = options.children.map((spec) => ({ spec, handle: undefined, generation: 0, stopping: false, removed: false }));
    this.exited = new Promise((resolve) => (this.#settle = resolve));
    const ids = new Set<string>();
    for (const child of options.children) {
      if (ids.has(child.id)) throw new Error(`supervisor ${options.id}: duplicate child id ${child.id}`);
      ids.add(child.id);
    }
  }

  get id(): string {
    return this.#options.id;
  }

  /** Child ids in start order with whether each is running (for the operator view). */
  children(): Array<{ id: string; running: boolean }> {
    return this.#entries.filter((e) => !e.removed).map((e) => ({ id: e.spec.id, running: e.handle !== undefined }));
  }

  /** Starts every child in order. If one fails, the ones already started are stopped and this throws. */
  async start(): Promise<void> {
    for (let i = 0; i < this.#entries.length; i++) {
      try {
        await this.#startChild(this.#entries[i]!);
      } catch (error) {
        await this.#stopEntries(this.#entries.slice(0, i).reverse());
        this.#phase = 'stopped';
        this.#settle({ kind: 'error', error });
        throw error;
      }
    }
    this.#phase = 'running';
    this.#runtime.logger.debug({ supervisor: this.id, children: this.#entries.length }, 'supervisor started');
    for (const task of this.#deferred.splice(0)) this.#enqueue(task);
  }

  shutdown(): void {
    this.#stopRequested.abort();
    this.#enqueue(async () => {
      if (this.#phase === 'stopped' || this.#phase === 'stopping') return;
      this.#phase = 'stopping';
      await this.#stopEntries([...this.#entries].reverse());
      this.#phase = 'stopped';
      this.#settle(this.#killed ? { kind: 'killed' } : { kind: 'normal' });
    });
  }

  /** Our own parent's timeout passed: kill every child now, without waiting for their timeouts. */
  kill(): void {
    this.#killed = true;
    this.#stopRequested.abort();
    for (const entry of [...this.#entries].reverse()) {
      if (entry.handle) {
        entry.stopping = true;
        entry.handle.kill();
      }
    }
    this.shutdown();
  }

  #enqueue(task: () => Promise<void>): void {
    this.#queue = this.#queue.then(task).catch((error) => {
      this.#runtime.logger.error({ supervisor: this.id, err: error }, 'supervisor task failed');
    });
  }

  async #startChild(entry: ChildEntry): Promise<void> {
    const record = this.#runtime.inspector.record(entry.spec.id);
    record.status = 'starting';
    let handle: ChildHandle;
    try {
      handle = await entry.spec.start(this.#runtime);
    } catch (error) {
      record.status = 'crashed';
      record.lastError = describe(error);
      throw new ChildStartError(entry.spec.id, error);
    }
    const generation = ++entry.generation;
    entry.handle = handle;
    entry.stopping = false;
    record.status = 'running';
    void handle.exited.then((reason) => this.#onExit(entry, generation, reason));
  }

  #onExit(entry: ChildEntry, generation: number, reason: ExitReason): void {
    if (generation !== entry.generation) return;
    entry.handle = undefined;
    const record = this.#runtime.inspector.record(entry.spec.id);
    const expected = entry.stopping;
    entry.stopping = false;
    record.status = reason.kind === 'error' ? 'crashed' : 'stopped';
    if (reason.kind === 'error') record.lastError = describe(reason.error);
    if (expected || this.#phase === 'stopping' || this.#phase === 'stopped') return;

    const log = this.#runtime.logger;
    const restart = entry.spec.restart ?? 'permanent';
    if (reason.kind === 'error') {
      log.error({ supervisor: this.id, child: entry.spec.id, err: reason.error }, 'child crashed');
    } else {
      log.info({ supervisor: this.id, child: entry.spec.id, exit: reason.kind }, 'child exited');
    }
    if (restart === 'temporary') {
      entry.removed = true;
      return;
    }
    if (restart === 'transient' && reason.kind !== 'error') return;
    const task = () => this.#restart(entry, reason.kind === 'error' ? reason.error : new Error(`exited (${reason.kind})`));
    // A crash while later siblings are still starting is restarted once the start has finished.
    if (this.#phase === 'starting') this.#deferred.push(task);
    else this.#enqueue(task);
  }

  async #restart(entry: ChildEntry, cause: unknown): Promise<void> {
    if (this.#phase !== 'running') return;
    const { clock, logger } = this.#runtime;
    const now = clock.now();
    while (this.#restartTimes.length > 0 && now - this.#restartTimes[0]! >= this.#options.periodMs) this.#restartTimes.shift();
    this.#restartTimes.push(now);
    if (this.#restartTimes.length > this.#options.intensity) {
      const error = new RestartIntensityError(this.id, entry.spec.id, cause);
      logger.error({ supervisor: this.id, child: entry.spec.id, err: error }, 'restart intensity exceeded; escalating');
      this.#phase = 'stopping';
      await this.#stopEntries([...this.#entries].reverse());
      this.#phase = 'stopped';
      this.#settle({ kind: 'error', error });
      return;
    }

    const backoff = this.#options.backoff ?? DEFAULT_BACKOFF;
    const delay = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (this.#restartTimes.length - 1));
    try {
      await sleep(clock, delay, this.#stopRequested.signal);
    } catch {
      return; // a shutdown arrived during the backoff: nothing is restarted
    }
    if (this.#phase !== 'running' || this.#stopRequested.signal.aborted) return;

    const index = this.#entries.indexOf(entry);
    const group =
      this.#options.strategy === 'one_for_one'
        ? [entry]
        : this.#options.strategy === 'rest_for_one'
          ? this.#entries.slice(index)
          : [...this.#entries];
    const live = group.filter((e) => !e.removed);
    await this.#stopEntries(live.filter((e) => e !== entry).reverse());
    for (const member of live) {
      if (member.handle) continue;
      if (this.#stopRequested.signal.aborted) return;
      try {
        await this.#startChild(member);
        this.#runtime.inspector.record(member.spec.id).restarts++;
        logger.info({ supervisor: this.id, child: member.spec.id }, 'child restarted');
      } catch (error) {
        // A failed restart counts as another crash of that child.
        logger.error({ supervisor: this.id, child: member.spec.id, err: error }, 'child restart failed');
        this.#enqueue(() => this.#restart(member, error));
        return;
      }
    }
  }

  /** Stops the given running children one after another, in the order given. */
  async #stopEntries(entries: readonly ChildEntry[]): Promise<void> {
    for (const entry of entries) {
      const handle = entry.handle;
      if (!handle) continue;
      entry.stopping = true;
      this.#runtime.inspector.record(entry.spec.id).status = 'stopping';
      const timeoutMs = entry.spec.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
      const { clock, logger } = this.#runtime;
      let timer: unknown;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = clock.setTimeout(() => resolve('timeout'), timeoutMs)));
      handle.shutdown();
      const outcome = await Promise.race([handle.exited, timedOut]);
      clock.clearTimeout(timer);
      if (outcome === 'timeout') {
        logger.warn({ supervisor: this.id, child: entry.spec.id, timeoutMs }, 'child ignored shutdown; killing it');
        handle.kill();
        await handle.exited;
      }
      entry.handle = undefined;
      this.#runtime.inspector.record(entry.spec.id).status = 'stopped';
    }
  }
}

/** A child spec that runs a nested supervisor. */
export function supervisorSpec(options: SupervisorOptions): ChildSpec {
  return {
    id: options.id,
    restart: options.restart ?? 'permanent',
    supervises: { strategy: options.strategy, children: options.children },
    // A supervisor's own shutdown is bounded by the sum of its children's timeouts.
    shutdownTimeoutMs:
      options.shutdownTimeoutMs ??
      options.children.reduce((sum, child) => sum + (child.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS), 0) + 1_000,
    async start(runtime) {
      const supervisor = new Supervisor(options, runtime);
      const record = runtime.inspector.record(options.id);
      record.machineId = 'supervisor';
      record.children = options.children.map((child) => child.id);
      record.stateValue = options.strategy;
      await supervisor.start();
      return supervisor;
    },
  };
}

/**
 * The middle of a service's tree, `rest_for_one[resource, one_for_one[workers], listener]`: independent workers, each
 * restarted alone, so a worker's crash never reaches the listener after the group (its requests in flight finish, its
 * keep-alive connections stay open). Only a worker that keeps crashing past the intensity takes the group down, and
 * with it, by the parent's rest_for_one, the listener.
 */
export function workersSupervisor(id: string, children: readonly ChildSpec[]): ChildSpec {
  return supervisorSpec({ id, strategy: 'one_for_one', intensity: 5, periodMs: 60_000, backoff: { initialMs: 1_000, maxMs: 30_000 }, children });
}

/**
 * A tree of child specs as text, children in start order (`npm run statecharts` writes the services' trees into the
 * README from the code that builds them):
 *
 *   files (rest_for_one)
 *   ├── files.runtime
 *   └── files.workers (one_for_one)
 *       └── files.reconcile [transient]
 */
export function drawSupervisionTree(spec: ChildSpec): string {
  const label = (child: ChildSpec) =>
    `${child.id}${child.supervises ? ` (${child.supervises.strategy})` : ''}${child.restart && child.restart !== 'permanent' ? ` [${child.restart}]` : ''}`;
  const lines = [label(spec)];
  const walk = (children: readonly ChildSpec[], prefix: string) =>
    children.forEach((child, index) => {
      const last = index === children.length - 1;
      lines.push(`${prefix}${last ? '└── ' : '├── '}${label(child)}`);
      walk(child.supervises?.children ?? [], `${prefix}${last ? '    ' : '│   '}`);
    });
  walk(spec.supervises?.children ?? [], '');
  return lines.join('\n');
}
