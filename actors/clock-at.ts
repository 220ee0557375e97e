// A timer for an absolute time, for schedules (cron runs) that may lie far ahead. Node's timers hold at most
// 2^31 − 1 ms (about 24.8 days) and fire at once past that (TimeoutOverflowWarning), which would turn a
// yearly schedule into a busy loop; a distant time is reached in capped steps, and only the real time fires.

import type { CronSchedule } from '../src/cron.js';
import type { Clock } from '../src/clock.js';

export const MAX_TIMER_MS = 2_147_483_647;

/** Calls `onDue` once `clock.now()` reaches `dueAt`; the returned function cancels it (idempotent). */
export function setTimerAt(clock: Clock, dueAt: number, onDue: () => void): () => void {
  let timer: unknown;
  let cancelled = false;
  const wait = () => {
    timer = clock.setTimeout(
      () => {
        if (cancelled) return;
        if (clock.now() < dueAt) wait();
        else onDue();
      },
      Math.min(Math.max(0, dueAt - clock.now()), MAX_TIMER_MS),
    );
  };
  wait();
  return () => {
    cancelled = true;
    clock.clearTimeout(timer);
  };
}

/**
 * Calls `onTick` at every run of `schedule` from now on, until the returned function cancels it: the one way the
 * actors run on a cron (the next run is computed after each tick, so a slow tick never fires twice at once).
 */
export function everyCronRun(clock: Clock, schedule: CronSchedule, onTick: () => void): () => void {
  let cancel = () => {};
  let stopped = false;
  const arm = () => {
    if (stopped) return;
    cancel = setTimerAt(clock, schedule.next(clock.now()), () => {
      if (stopped) return;
      arm();
      onTick();
    });
  };
  arm();
  return () => {
    stopped = true;
    cancel();
  };
}
