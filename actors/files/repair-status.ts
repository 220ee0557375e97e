// The repair job's state, kept by the tree so readers need not ask the repair actor (like gc-status.ts). One writer,
// the repair actor, on every change of its machine; readers get a function of it, never the board: the health actor
// reads the cycle evidence for `repairFresh` and the `replication` block of the Health object (spec §2.3 rule 2;
// notes A.6), the disk actor shows the job in storage metrics (spec §2.6 "replication job state"). The board lives
// as long as the process, and a restarted repair actor writes the state it restored from the store.

import type { HealthInputs } from '../../src/files/health.js';
import { cycleView, repairHealthInputs, type RepairJobStatus, type RepairState } from '../../src/files/repair.js';

export class RepairStatusBoard {
  #running = false;
  #state: RepairState | null = null;

  /** `required`: replication.enabled && replication.repairEnabled (repairRequired in src/files/repair.ts). */
  constructor(readonly required: boolean) {}

  /** The repair actor's latest: whether a pass or cycle runs, and the persisted cursor and evidence. */
  update(running: boolean, state: RepairState | null): void {
    this.#running = running;
    if (state) this.#state = state;
  }

  /** The repair actor stopped: nothing runs; the evidence stays (it is what the store holds). */
  stopped(): void {
    this.#running = false;
  }

  /** The health checkpoint's repair input. */
  health(): HealthInputs['repair'] {
    return repairHealthInputs(this.required, this.#state);
  }

  /** The job as storage metrics show it (`replication.running`, `replication.cycle`). */
  current(): RepairJobStatus {
    return { running: this.#running, cycle: this.#state ? cycleView(this.#state) : null };
  }
}
