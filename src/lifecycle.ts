// The process lifecycle: the root supervisor started over the composed children, SIGINT/SIGTERM handled once, the
// shutdown deadline, and the exit code. An entry file: it drives the actors runtime.

import { systemClock, type Clock } from './clock.js';
import { createRuntime, type Runtime } from '../actors/runtime.js';
import { Supervisor, type ChildSpec, type ExitReason } from '../actors/supervisor.js';
import { EXIT } from './command-line.js';
import type { Logger } from './logger.js';

export interface Running {
  readonly runtime: Runtime;
  readonly root: Supervisor;
}

/** Starts the root supervisor. Throws (after stopping what started) when a child cannot start. */
export async function startRoot(children: ChildSpec[], logger: Logger, clock: Clock = systemClock): Promise<Running> {
  const runtime = createRuntime(clock, logger);
  const record = runtime.inspector.record('root');
  record.machineId = 'supervisor';
  record.children = children.map((child) => child.id);
  record.stateValue = 'one_for_one';
  const root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 3, periodMs: 60_000, children }, runtime);
  await root.start();
  record.status = 'running';
  return { runtime, root };
}

/** Starts the root and resolves with the exit code: 0 after a signal, 1 when startup failed, supervision gave up or the shutdown deadline passed. */
export async function runRoot(children: ChildSpec[], logger: Logger, onStarted?: (running: Running) => void): Promise<number> {
  // Signals are caught from the very start: a SIGTERM while the store opens must not kill the process
  // half-way; the shutdown then begins as soon as the root has started, and the deadline runs from the signal.
  const signals = new ShutdownSignals(logger);
  const started = await Promise.race([
    startRoot(children, logger).then(
      (running) => ({ running }),
      (error: unknown) => ({ error }),
    ),
    signals.deadlinePassed.then(() => 'deadline' as const),
  ]);
  if (started === 'deadline') return EXIT.failure;
  if ('error' in started) {
    signals.dispose();
    logger.fatal({ err: started.error }, 'startup failed');
    return EXIT.failure;
  }
  onStarted?.(started.running);
  return waitForExit(started.running, logger, signals);
}

/**
 * spec files §8: the hard deadline of a graceful shutdown. Listeners force-close idle connections at 12 s
 * (FILES_DRAIN_MS); a process still stopping at 15 s logs the timeout and exits 1.
 */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/**
 * SIGINT and SIGTERM, each handled once: the first starts the shutdown and the deadline, later ones are
 * logged and ignored, so an impatient second Ctrl-C cannot cut an upload's rollback short.
 */
class ShutdownSignals {
  /** Resolves when the deadline after the first signal has passed (the timeout is logged by then). */
  readonly deadlinePassed: Promise<void>;
  #received: NodeJS.Signals | undefined;
  #onFirst: (() => void) | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #passed!: () => void;
  readonly #handler = (signal: NodeJS.Signals) => {
    if (this.#received) {
      this.logger.warn({ signal }, 'already shutting down; signal ignored');
      return;
    }
    this.#received = signal;
    this.logger.info({ signal }, 'shutting down');
    this.#deadline = setTimeout(() => {
      this.logger.error({ deadlineMs: this.deadlineMs }, 'shutdown timed out; exiting');
      this.#passed();
    }, this.deadlineMs);
    this.#onFirst?.();
  };

  constructor(
    private readonly logger: Logger,
    private readonly deadlineMs = SHUTDOWN_DEADLINE_MS,
  ) {
    this.deadlinePassed = new Promise((resolve) => (this.#passed = resolve));
    process.on('SIGINT', this.#handler);
    process.on('SIGTERM', this.#handler);
  }

  /** Calls `listener` on the first signal, at once when it already came (during startup). */
  onFirst(listener: () => void): void {
    this.#onFirst = listener;
    if (this.#received) listener();
  }

  dispose(): void {
    clearTimeout(this.#deadline);
    process.removeListener('SIGINT', this.#handler);
    process.removeListener('SIGTERM', this.#handler);
  }
}

/** Resolves with the exit code once the root stops: 0 after a signal, 1 when supervision gave up or the deadline passed. */
function waitForExit({ root }: Running, logger: Logger, signals: ShutdownSignals): Promise<number> {
  signals.onFirst(() => root.shutdown());
  return Promise.race([
    signals.deadlinePassed.then(() => EXIT.failure),
    root.exited.then((reason: ExitReason) => {
      signals.dispose();
      if (reason.kind === 'error') {
        logger.fatal({ err: reason.error }, 'supervision gave up; exiting');
        return EXIT.failure;
      }
      logger.info('stopped');
      return EXIT.ok;
    }),
  ]);
}
