// A small cron parser and next-run calculator, pure and dependency-free. Used for the files service's
// `peeringSchedule`, `diskUsageScanPeriod`, `storage.gc.schedule` and `replication.repairSchedule`
// (docs/notes/files-node.md B.4, B.5, C-table), which the original ran with the `cron` npm package.
//
// Syntax:
// - 6 fields `second minute hour day-of-month month day-of-week`, or 5 fields (no seconds: second 0);
// - `*` (and `?` in the two day fields), numbers, lists `a,b`, ranges `a-b`, steps `*/n`, `a-b/n` and `a/n`
//   (from a to the field's maximum); month names `jan`-`dec` and day names `sun`-`sat`, case-insensitive;
// - day-of-week 0-7, where 0 and 7 are Sunday;
// - presets `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily` (`@midnight`), `@hourly`.
// When both day-of-month and day-of-week are restricted (neither covers its whole range) a day matches if
// EITHER matches, as in Vixie cron and the `cron` package; otherwise only the restricted one counts.
//
// Time zone: the original's `cron` package ran in the process's local time zone; so does this module by
// default, and `{ utc: true }` evaluates the fields in UTC. A run time is "the next instant whose wall clock
// matches", searched in absolute time, so around a daylight-saving change a wall-clock time that does not
// exist (spring forward) is skipped and one that happens twice (fall back) matches twice; an every-N-seconds
// schedule keeps its pace through both. Schedules that must not do either should use `utc`.

/** A parsed cron expression. Field value lists are sorted and duplicate-free. */
export interface CronSchedule {
  /** The expression as written (trimmed). */
  readonly source: string;
  /** Fields are evaluated in UTC instead of the local time zone. */
  readonly utc: boolean;
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** 1-31. */
  readonly daysOfMonth: readonly number[];
  /** 1-12. */
  readonly months: readonly number[];
  /** 0-6, 0 = Sunday (a written 7 is stored as 0). */
  readonly daysOfWeek: readonly number[];
  /** Whether day-of-month leaves out some day (decides the OR rule). */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

export interface CronOptions {
  /** Evaluate in UTC (default: the process's local time zone, like the original). */
  readonly utc?: boolean;
}

/** Why an expression was refused; the text names the field. */
export interface CronParseError {
  readonly error: string;
}

/**
 * A schedule from a configuration field the configuration check has already accepted (src/files/config.ts): a
 * refusal here is a programming error, thrown with the field's name (the actor crashes, its supervisor reports it).
 */
export function requireCron(field: string, expression: string): CronSchedule {
  const parsed = parseCron(expression);
  if (isCronError(parsed)) throw new Error(`${field}: ${parsed.error}`);
  return parsed;
}

export function isCronError(value: CronSchedule | CronParseError): value is CronParseError {
  return 'error' in value;
}

interface FieldSpec {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
  /** `?` means "any" (the day fields, as in Quartz and the `cron` package). */
  readonly question?: boolean;
}

const MONTH_NAMES = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const DAY_NAMES = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const SECOND: FieldSpec = { name: 'second', min: 0, max: 59 };
const MINUTE: FieldSpec = { name: 'minute', min: 0, max: 59 };
const HOUR: FieldSpec = { name: 'hour', min: 0, max: 23 };
const DAY_OF_MONTH: FieldSpec = { name: 'day-of-month', min: 1, max: 31, question: true };
const MONTH: FieldSpec = { name: 'month', min: 1, max: 12, names: MONTH_NAMES };
const DAY_OF_WEEK: FieldSpec = { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES, question: true };

const PRESETS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 0 1 1 *',
  '@annually': '0 0 0 1 1 *',
  '@monthly': '0 0 0 1 * *',
  '@weekly': '0 0 0 * * 0',
  '@daily': '0 0 0 * * *',
  '@midnight': '0 0 0 * * *',
  '@hourly': '0 0 * * * *',
};

/** Longest day count of each month (February 29 counts: a leap year will come). */
const MAX_DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function parseValue(text: string, spec: FieldSpec): number | string {
  const named = spec.names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(text)) return `${spec.name} field: '${text}' is not a number${spec.names ? ' or a name' : ''}`;
  const value = Number(text);
  if (value < spec.min || value > spec.max) return `${spec.name} field: ${value} is out of range ${spec.min}-${spec.max}`;
  return value;
}

/** One comma-free part: `*`, `?`, `a`, `a-b`, each optionally `/step`. */
function parsePart(part: string, spec: FieldSpec, into: Set<number>): string | undefined {
  const slash = part.indexOf('/');
  const rangeText = slash === -1 ? part : part.slice(0, slash);
  let step = 1;
  if (slash !== -1) {
    const stepText = part.slice(slash + 1);
    if (!/^\d+$/.test(stepText) || Number(stepText) < 1) return `${spec.name} field: step '${stepText}' must be a whole number of at least 1`;
    step = Number(stepText);
  }
  let from: number;
  let to: number;
  if (rangeText === '*' || (spec.question && rangeText === '?')) {
    from = spec.min;
    to = spec.max;
  } else {
    const dash = rangeText.indexOf('-');
    if (dash === -1) {
      const value = parseValue(rangeText, spec);
      if (typeof value === 'string') return value;
      from = value;
      // `a/n` runs from a to the field's maximum; a bare `a` is just a.
      to = slash === -1 ? value : spec.max;
    } else {
      const low = parseValue(rangeText.slice(0, dash), spec);
      if (typeof low === 'string') return low;
      const high = parseValue(rangeText.slice(dash + 1), spec);
      if (typeof high === 'string') return high;
      if (low > high) return `${spec.name} field: range '${rangeText}' runs backwards`;
      from = low;
      to = high;
    }
  }
  for (let value = from; value <= to; value += step) into.add(value);
  return undefined;
}

function parseField(text: string, spec: FieldSpec): number[] | string {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    if (part === '') return `${spec.name} field: '${text}' has an empty list entry`;
    const error = parsePart(part, spec, values);
    if (error !== undefined) return error;
  }
  return [...values].sort((a, b) => a - b);
}

/**
 * Parses a 5- or 6-field cron expression. Never throws: a refused expression gives `{ error }` naming the
 * field. An expression that can never fire (e.g. `0 0 0 30 2 *`, 30 February) is refused here too.
 */
export function parseCron(expression: string, options: CronOptions = {}): CronSchedule | CronParseError {
  if (typeof expression !== 'string') return { error: 'a cron expression must be a string' };
  const source = expression.trim();
  if (source === '') return { error: 'the cron expression is empty' };
  const expanded = PRESETS[source.toLowerCase()] ?? source;
  if (expanded.startsWith('@')) return { error: `unknown preset '${source}'` };
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return { error: `expected 5 fields (minute hour day-of-month month day-of-week) or 6 (with seconds first), got ${fields.length}` };
  }
  const withSeconds = fields.length === 6 ? fields : ['0', ...fields];
  const specs = [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK];
  const parsed: number[][] = [];
  for (let index = 0; index < 6; index++) {
    const result = parseField(withSeconds[index]!, specs[index]!);
    if (typeof result === 'string') return { error: result };
    parsed.push(result);
  }
  const [seconds, minutes, hours, daysOfMonth, months, rawDaysOfWeek] = parsed as [number[], number[], number[], number[], number[], number[]];
  const daysOfWeek = [...new Set(rawDaysOfWeek.map((day) => day % 7))].sort((a, b) => a - b);
  const dayOfMonthRestricted = daysOfMonth.length < 31;
  const dayOfWeekRestricted = daysOfWeek.length < 7;
  if (dayOfMonthRestricted && !dayOfWeekRestricted) {
    const possible = months.some((month) => daysOfMonth.some((day) => day <= MAX_DAYS[month]!));
    if (!possible) return { error: 'day-of-month field: no listed day exists in any listed month' };
  }
  return Object.freeze({
    source,
    utc: options.utc === true,
    seconds: Object.freeze(seconds),
    minutes: Object.freeze(minutes),
    hours: Object.freeze(hours),
    daysOfMonth: Object.freeze(daysOfMonth),
    months: Object.freeze(months),
    daysOfWeek: Object.freeze(daysOfWeek),
    dayOfMonthRestricted,
    dayOfWeekRestricted,
  });
}

// ---------------------------------------------------------------------------------------------
// Next run

/**
 * How far ahead `nextRun` looks. Ten years: the longest gap between two 29 Februaries is eight years
 * (2096 → 2104), and `parseCron` already refuses day/month combinations that never exist.
 */
export const CRON_SEARCH_LIMIT_MS = 10 * 366 * 86_400_000;

/** Safety net on the loop itself (a match is normally found within a few hundred steps). */
const MAX_STEPS = 1_000_000;

interface WallClock {
  readonly year: number;
  readonly month: number; // 1-12
  readonly day: number;
  readonly weekday: number; // 0-6
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

function localClock(ms: number): WallClock {
  const date = new Date(ms);
  return {
    year: date.getFullYear(),
    month: date.getMonth() + 1,
    day: date.getDate(),
    weekday: date.getDay(),
    hour: date.getHours(),
    minute: date.getMinutes(),
    second: date.getSeconds(),
  };
}

function utcClock(ms: number): WallClock {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    weekday: date.getUTCDay(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

const sameDate = (a: WallClock, b: WallClock): boolean => a.year === b.year && a.month === b.month && a.day === b.day;

/** Milliseconds from `clock` to the end of its wall-clock day, assuming no offset change on the way. */
const untilMidnight = (clock: WallClock): number => ((23 - clock.hour) * 3600 + (59 - clock.minute) * 60 + (60 - clock.second)) * 1000;

/**
 * The first instant of the next wall-clock day. Stepping in absolute time by "what is left of the day" is
 * exact in UTC; in local time a daylight-saving change inside the step is corrected afterwards (a 25-hour
 * day needs one more step, a 23-hour day overshoots by the lost hour and steps back).
 */
function nextDayStart(ms: number, clock: WallClock, read: (ms: number) => WallClock): number {
  let next = ms + untilMidnight(clock);
  for (let attempt = 0; attempt < 4; attempt++) {
    const at = read(next);
    if (sameDate(at, clock)) {
      next += untilMidnight(at);
      continue;
    }
    const intoDay = (at.hour * 3600 + at.minute * 60 + at.second) * 1000;
    if (intoDay === 0) return next;
    const back = next - intoDay;
    const atBack = read(back);
    // If stepping back lands on the old day, midnight itself fell into a gap and `next` is the day's first instant.
    return !sameDate(atBack, clock) && back > ms ? back : next;
  }
  return next;
}

/** The first listed value greater than or equal to `value`, or undefined. */
function firstAtLeast(values: readonly number[], value: number): number | undefined {
  for (const candidate of values) if (candidate >= value) return candidate;
  return undefined;
}

/**
 * The first run time strictly after `afterMs` (Unix ms), on a whole second. Throws a RangeError when the
 * schedule has no run within `CRON_SEARCH_LIMIT_MS` (never for an expression `parseCron` accepted, barring
 * a clock near the end of the Date range) or when `afterMs` is not a finite number.
 */
export function nextRun(schedule: CronSchedule, afterMs: number): number {
  if (!Number.isFinite(afterMs)) throw new RangeError(`nextRun: afterMs must be a finite number, got ${afterMs}`);
  const read = schedule.utc ? utcClock : localClock;
  const monthOk = lookup(schedule.months, 13);
  const domOk = lookup(schedule.daysOfMonth, 32);
  const dowOk = lookup(schedule.daysOfWeek, 7);
  const hourOk = lookup(schedule.hours, 24);
  const minuteOk = lookup(schedule.minutes, 60);
  const secondOk = lookup(schedule.seconds, 60);
  const { dayOfMonthRestricted, dayOfWeekRestricted } = schedule;
  const dayOk = (clock: WallClock): boolean => {
    if (dayOfMonthRestricted && dayOfWeekRestricted) return domOk[clock.day] === 1 || dowOk[clock.weekday] === 1;
    if (dayOfMonthRestricted) return domOk[clock.day] === 1;
    if (dayOfWeekRestricted) return dowOk[clock.weekday] === 1;
    return true;
  };

  const limit = afterMs + CRON_SEARCH_LIMIT_MS;
  let ms = Math.floor(afterMs / 1000) * 1000 + 1000;
  for (let step = 0; step < MAX_STEPS && ms <= limit; step++) {
    const clock = read(ms);
    if (monthOk[clock.month] !== 1 || !dayOk(clock)) {
      ms = nextDayStart(ms, clock, read);
      continue;
    }
    // Hours advance one boundary at a time: a daylight-saving change can only happen on such a boundary.
    const toNextHour = ((60 - clock.minute) * 60 - clock.second) * 1000;
    if (hourOk[clock.hour] !== 1) {
      ms += toNextHour;
      continue;
    }
    if (minuteOk[clock.minute] !== 1) {
      const minute = firstAtLeast(schedule.minutes, clock.minute);
      ms += minute === undefined ? toNextHour : ((minute - clock.minute) * 60 - clock.second) * 1000;
      continue;
    }
    if (secondOk[clock.second] !== 1) {
      const second = firstAtLeast(schedule.seconds, clock.second);
      ms += ((second === undefined ? 60 : second) - clock.second) * 1000;
      continue;
    }
    return ms;
  }
  throw new RangeError(`cron '${schedule.source}' has no run time within ${Math.round(CRON_SEARCH_LIMIT_MS / (365.25 * 86_400_000))} years after ${afterMs}`);
}

/** Membership table: `table[v] === 1` when v is listed. */
function lookup(values: readonly number[], size: number): Uint8Array {
  const table = new Uint8Array(size);
  for (const value of values) table[value] = 1;
  return table;
}
