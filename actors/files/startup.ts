// The end of the startup walk, as a fact other files actors can wait for (spec §9.6: the collector and the
// repair sweep start only after it; the health checkpoint runs an attempt the moment it completes, notes C5).
// It belongs to the tree, not to an actor: a sibling started (or restarted) after the walk finished still
// sees it, and a listener added before it is called once when it happens. One writer: the walk (through its
// onComplete, wired in tree.ts); the waiting actors are given a StartupWait, which cannot complete it.

import type { ReconcileResult } from './reconcile.actor.js';

/** What the actors that wait for the walk are given: they can see it and wait for it, not complete it. */
export type StartupWait = Pick<StartupSignal, 'result' | 'onComplete'>;

export class StartupSignal {
  #result: ReconcileResult | undefined;
  readonly #listeners = new Set<(result: ReconcileResult) => void>();

  /** The walk's result once it finished, else undefined. */
  get result(): ReconcileResult | undefined {
    return this.#result;
  }

  /** Called by the walk; later calls (a restarted walk) keep the first result. */
  complete(result: ReconcileResult): void {
    if (this.#result) return;
    this.#result = result;
    for (const listener of this.#listeners) listener(result);
    this.#listeners.clear();
  }

  /** Calls `listener` once the walk has finished (at once when it already has); returns an unsubscribe. */
  onComplete(listener: (result: ReconcileResult) => void): () => void {
    if (this.#result) {
      listener(this.#result);
      return () => {};
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
