// Runs an XState actor as a supervised child: registers it under its systemId, feeds the inspector,
// maps XState's outcomes to exits (status 'error' → crash, 'done' → normal exit) and implements the
// shutdown protocol: machines receive `system.shutdown` and finish by reaching a final state; other
// logic (callback actors) is stopped directly, which runs its cleanup.

import { createActor, type AnyActorLogic, type InputFrom } from 'xstate';
import type { ChildHandle, ChildSpec, ExitReason, RestartType } from './supervisor.js';
import type { Runtime } from './runtime.js';

export const SHUTDOWN_EVENT = { type: 'system.shutdown' } as const;

export interface ActorChildOptions<TLogic extends AnyActorLogic> {
  /** `<service>.<role>`, e.g. `rates.refresh`. */
  readonly systemId: string;
  /** Built per start, so a restart gets fresh implementations (and fresh closures over resources). */
  readonly logic: (runtime: Runtime) => TLogic;
  readonly input?: (runtime: Runtime) => InputFrom<TLogic>;
  /** 'event': send `system.shutdown` and wait for a final state; 'stop': stop the actor directly. */
  readonly shutdown?: 'event' | 'stop';
  readonly restart?: RestartType;
  readonly shutdownTimeoutMs?: number;
  /**
   * Start completes only once the actor's snapshot satisfies this (e.g. a runtime that is `running`), so
   * later siblings, such as the HTTP listener, never see it half started. A crash before that fails the start.
   */
  readonly readyWhen?: (snapshot: { value?: unknown; status: string }) => boolean;
}

export function actorChild<TLogic extends AnyActorLogic>(options: ActorChildOptions<TLogic>): ChildSpec {
  return {
    id: options.systemId,
    restart: options.restart,
    shutdownTimeoutMs: options.shutdownTimeoutMs,
    async start(runtime): Promise<ChildHandle> {
      const logic = options.logic(runtime);
      const record = runtime.inspector.record(options.systemId);
      record.machineId = (logic as { id?: string }).id ?? options.systemId;
      let sessionId: string | undefined;
      const actor = createActor(logic, {
        input: options.input?.(runtime),
        clock: runtime.clock,
        inspect: runtime.inspector.observer(options.systemId, () => sessionId),
      });
      sessionId = actor.sessionId;

      let settle!: (reason: ExitReason) => void;
      let killed = false;
      const exited = new Promise<ExitReason>((resolve) => (settle = resolve));
      let done = false;
      const finish = (reason: ExitReason) => {
        if (done) return;
        done = true;
        runtime.registry.unregister(options.systemId, actor);
        settle(reason);
      };
      actor.subscribe({
        error: (error) => finish({ kind: 'error', error }),
        complete: () => finish(killed ? { kind: 'killed' } : { kind: 'normal' }),
      });
      runtime.registry.register(options.systemId, actor);
      actor.start();
      const first = actor.getSnapshot() as { status: string; error?: unknown };
      if (first.status === 'error') throw first.error;
      if (options.readyWhen) await untilReady(actor, options.readyWhen);

      return {
        exited,
        shutdown() {
          if (done) return;
          if ((options.shutdown ?? 'event') === 'event') (actor as { send(event: unknown): void }).send(SHUTDOWN_EVENT);
          else actor.stop();
        },
        kill() {
          if (done) return;
          killed = true;
          actor.stop();
          finish({ kind: 'killed' });
        },
      };
    },
  };
}

function untilReady(
  actor: { getSnapshot(): unknown; subscribe(observer: { next(snapshot: unknown): void; error(error: unknown): void }): { unsubscribe(): void } },
  readyWhen: (snapshot: { value?: unknown; status: string }) => boolean,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (snapshot: unknown): boolean => {
      const current = snapshot as { value?: unknown; status: string; error?: unknown };
      if (readyWhen(current)) return resolve(), true;
      if (current.status === 'error') return reject(current.error), true;
      if (current.status === 'done' || current.status === 'stopped') return reject(new Error('actor ended before it was ready')), true;
      return false;
    };
    if (check(actor.getSnapshot())) return;
    const subscription = actor.subscribe({
      next: (snapshot) => {
        if (check(snapshot)) subscription.unsubscribe();
      },
      error: (error) => {
        subscription.unsubscribe();
        reject(error);
      },
    });
  });
}
