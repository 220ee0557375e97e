// Schedules: the files service's `peeringSchedule`, `diskUsageScanPeriod`, `storage.gc.schedule` and
// `replication.repairSchedule` (docs/notes/files-node.md B.4, B.5, C-table). The original ran them with the `cron`
// npm package (`new CronJob(expression, tick)`: local time zone, optional seconds field), so the same package parses
// them here and answers "when is the next run": accepted and refused expressions and run times are the original's.
// Only the waiting differs: the library's CronJob would wait on the real clock, so the actors wait on the injected
// Clock instead (actors/clock-at.ts `everyCronRun`), and SimulatedClock tests drive every schedule.
//
// The library's rules, as the original had them (README "Schedules"): 6 fields `second minute hour day-of-month
// month day-of-week`, or 5 (second 0); `*`, lists, ranges, steps (`a/n` runs from a to the field's maximum), names
// `jan`-`dec` and `sun`-`sat` in any case, day-of-week 7 = Sunday; presets `@yearly @monthly @weekly @daily
// @hourly @minutely @secondly @weekdays @weekends`; when day-of-month and day-of-week are both restricted a day
// matches if EITHER does. No `?`, no `L`/`W`/`#`.
//
// A schedule is parsed once, when the configuration is validated (src/files/config.ts), and the parsed value is
// what the actors get.

import { CronTime } from 'cron';

/** How far past the real current time the library looks for a run before it gives up (its own constant). */
export const CRON_HORIZON_YEARS = 8;

/** A parsed cron expression; prints (and serializes to JSON) as the expression it was parsed from. */
export class CronSchedule {
  /** The expression as written. */
  readonly source: string;
  /** Fields are evaluated in UTC instead of the process's local time zone. */
  readonly utc: boolean;
  readonly #time: CronTime;

  /** Throws the library's CronError for an expression it refuses. */
  constructor(source: string, utc: boolean) {
    this.#time = new CronTime(source, utc ? 'UTC' : undefined);
    this.source = source;
    this.utc = utc;
  }

  /**
   * The first run time strictly after `afterMs` (Unix ms), on a whole second. Throws a RangeError when `afterMs` is
   * not a finite number or when the library finds no run within its horizon (CRON_HORIZON_YEARS past the real
   * current time, whatever `afterMs` is; never for a schedule parseCron accepted and an `afterMs` near now).
   */
  next(afterMs: number): number {
    if (!Number.isFinite(afterMs)) throw new RangeError(`next: afterMs must be a finite number, got ${afterMs}`);
    try {
      return this.#time.getNextDateFrom(new Date(afterMs), this.#time.timeZone).toMillis();
    } catch (error) {
      throw new RangeError(`cron '${this.source}' has no run time within ${CRON_HORIZON_YEARS} years: ${firstLine(error)}`);
    }
  }

  toJSON(): string {
    return this.source;
  }

  toString(): string {
    return this.source;
  }
}

export interface CronOptions {
  /** Evaluate in UTC (default: the process's local time zone, like the original). */
  readonly utc?: boolean;
}

/** Why an expression was refused: the library's message. */
export interface CronParseError {
  readonly error: string;
}

const firstLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim();

/**
 * Parses a 5- or 6-field cron expression with the library. Never throws: a refused expression gives `{ error }`.
 * An expression that never fires (e.g. `0 0 0 30 2 *`, 30 February) is refused too: the library accepts it and
 * throws at the first run-time question, which in the original was the job's start; here it is the configuration check.
 */
export function parseCron(expression: string, options: CronOptions = {}): CronSchedule | CronParseError {
  if (typeof expression !== 'string') return { error: 'a cron expression must be a string' };
  let schedule: CronSchedule;
  try {
    schedule = new CronSchedule(expression, options.utc === true);
  } catch (error) {
    return { error: firstLine(error) };
  }
  try {
    // The library's horizon is measured from the real current time, so this asks from there.
    schedule.next(Date.now());
  } catch {
    return { error: `it never fires (no run time within ${CRON_HORIZON_YEARS} years)` };
  }
  return schedule;
}

export function isCronError(value: CronSchedule | CronParseError): value is CronParseError {
  return !(value instanceof CronSchedule);
}

/**
 * A schedule from an expression known to be valid (a configuration default, a test's): a refusal is a programming
 * error, thrown with `field` in the message.
 */
export function requireCron(field: string, expression: string, options: CronOptions = {}): CronSchedule {
  const parsed = parseCron(expression, options);
  if (isCronError(parsed)) throw new Error(`${field}: ${parsed.error}`);
  return parsed;
}
