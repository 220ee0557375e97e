// The collector's job state, kept by the tree so storage metrics can show it without asking the GC actor
// (spec §2.6: "garbage-collection job state including `gc.lastRun.errors`"). One writer: the GC actor, which is
// given the board; readers are given `() => board.current()` only (the disk-usage actor reads it when it answers
// a metrics request, so `running` is current, not scan-old). It outlives a restarted GC actor, which restores
// the last run from the registry.

import type { GcLastRun, GcStatus } from '../../src/files/types.js';

export class GcStatusBoard {
  #running = false;
  #lastRun: GcLastRun | null = null;

  constructor(
    readonly enabled: boolean,
    readonly schedule: string,
  ) {}

  started(): void {
    this.#running = true;
  }

  /** A run ended (or none ran, `lastRun` undefined): the collector is idle again. */
  finished(lastRun?: GcLastRun): void {
    this.#running = false;
    if (lastRun) this.#lastRun = lastRun;
  }

  /** The newest stored run, read back at start (the board itself lives only as long as the process). */
  restore(lastRun: GcLastRun | null): void {
    this.#lastRun ??= lastRun;
  }

  current(): GcStatus {
    return { enabled: this.enabled, schedule: this.schedule, running: this.#running, lastRun: this.#lastRun };
  }
}
