// Schedules on the `cron` package (src/cron.ts): the expressions the original accepted and refused, and its run
// times. Where the library's answer differs from the parser this project had before, the original's (the library's)
// wins; those cases say so, and the README ("Schedules") lists them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CRON_HORIZON_YEARS, CronSchedule, isCronError, parseCron } from '../src/cron.js';

function schedule(expression: string, utc = true): CronSchedule {
  const parsed = parseCron(expression, { utc });
  assert.ok(!isCronError(parsed), `expected '${expression}' to parse, got ${JSON.stringify(parsed)}`);
  return parsed;
}

function refused(expression: string): string {
  const parsed = parseCron(expression);
  assert.ok(isCronError(parsed), `expected '${expression}' to be refused`);
  return parsed.error;
}

/** The next `count` run times after `fromIso`, as ISO strings (UTC unless `utc` is false). */
function runs(expression: string, fromIso: string, count: number, utc = true): string[] {
  const parsed = schedule(expression, utc);
  const out: string[] = [];
  let at = Date.parse(fromIso);
  for (let index = 0; index < count; index++) {
    at = parsed.next(at);
    out.push(new Date(at).toISOString().replace('.000Z', 'Z'));
  }
  return out;
}

test('parses 6-field expressions with seconds and 5-field ones without; prints as written', () => {
  assert.deepEqual(runs('*/30 * * * * *', '2024-01-01T00:00:00Z', 3), ['2024-01-01T00:00:30Z', '2024-01-01T00:01:00Z', '2024-01-01T00:01:30Z']);
  assert.equal(schedule('*/30 * * * * *').utc, true);

  const five = schedule('5,10 7-9/2 * * *');
  assert.equal(five.source, '5,10 7-9/2 * * *');
  assert.equal(String(five), '5,10 7-9/2 * * *');
  assert.equal(JSON.stringify({ schedule: five }), '{"schedule":"5,10 7-9/2 * * *"}', 'a configuration prints its expressions');
  assert.deepEqual(runs('5,10 7-9/2 * * *', '2024-01-01T00:00:00Z', 3), ['2024-01-01T07:05:00Z', '2024-01-01T07:10:00Z', '2024-01-01T09:05:00Z']);
});

test('lists, ranges, steps, names, 7 = Sunday and presets', () => {
  // Minutes 0,20,40; hours 1-3 and 22; the 1st and 15th OR Sunday-Friday; January-March and December.
  const expression = '0 0/20 1-3,22 1,15 jan-MAR,dec mon-fri,7';
  // 2024-01-01 is a Monday.
  assert.deepEqual(runs(expression, '2024-01-01T00:00:00Z', 4), ['2024-01-01T01:00:00Z', '2024-01-01T01:20:00Z', '2024-01-01T01:40:00Z', '2024-01-01T02:00:00Z']);
  assert.deepEqual(runs(expression, '2024-01-01T03:40:00Z', 1), ['2024-01-01T22:00:00Z']);
  // Saturday 6 January is neither a listed day of the month nor a listed weekday.
  assert.deepEqual(runs(expression, '2024-01-05T22:40:00Z', 1), ['2024-01-07T01:00:00Z']);
  // April to November are skipped.
  assert.deepEqual(runs(expression, '2024-03-31T22:40:00Z', 1), ['2024-12-01T01:00:00Z']);

  assert.deepEqual(runs('0 0 0 * * 0', '2024-01-01T00:00:00Z', 2), runs('0 0 0 * * 7', '2024-01-01T00:00:00Z', 2));
  assert.deepEqual(runs('0 0 0 * * 0', '2024-01-01T00:00:00Z', 2), ['2024-01-07T00:00:00Z', '2024-01-14T00:00:00Z']);
  assert.deepEqual(runs('0 0 0 * * 5-7', '2024-01-01T00:00:00Z', 4), ['2024-01-05T00:00:00Z', '2024-01-06T00:00:00Z', '2024-01-07T00:00:00Z', '2024-01-12T00:00:00Z']);
  // 0-7 covers the whole week, so it does not restrict: only the 13th counts (no OR with "every day").
  assert.deepEqual(runs('0 0 0 13 * 0-7', '2024-01-01T00:00:00Z', 2), ['2024-01-13T00:00:00Z', '2024-02-13T00:00:00Z']);
  assert.deepEqual(runs('1-10/3 * * * * *', '2024-01-01T00:00:00Z', 5), [
    '2024-01-01T00:00:01Z',
    '2024-01-01T00:00:04Z',
    '2024-01-01T00:00:07Z',
    '2024-01-01T00:00:10Z',
    '2024-01-01T00:01:01Z',
  ]);
  assert.deepEqual(runs('@hourly', '2024-01-01T00:30:00Z', 2), ['2024-01-01T01:00:00Z', '2024-01-01T02:00:00Z']);
  assert.deepEqual(runs('@daily', '2024-01-01T00:30:00Z', 2), ['2024-01-02T00:00:00Z', '2024-01-03T00:00:00Z']);
  assert.deepEqual(runs('@weekly', '2024-01-01T00:30:00Z', 1), ['2024-01-07T00:00:00Z']);
  assert.deepEqual(runs('@yearly', '2024-01-01T00:30:00Z', 1), ['2025-01-01T00:00:00Z']);
  // Presets the original has and the previous parser did not.
  assert.deepEqual(runs('@weekdays', '2024-01-05T12:00:00Z', 1), ['2024-01-08T00:00:00Z']);
  assert.deepEqual(runs('@minutely', '2024-01-01T00:00:30Z', 1), ['2024-01-01T00:01:00Z']);
});

test("differences from the previous parser: the original's rules win", () => {
  // `?` in the day fields, `@annually`, `@midnight` and a preset with spaces around it: the original refuses them.
  assert.equal(refused('0 0 0 ? * *'), 'Field (dayOfMonth) cannot be parsed');
  assert.equal(refused('@annually'), 'Unknown alias: ann');
  assert.equal(refused('@midnight'), 'Unknown alias: mid');
  assert.equal(refused('  @hourly '), 'Unknown alias: hou');
  // Names are aliases for numbers in every field, as in the original: `mon-fri` in the seconds field is 1-5.
  assert.deepEqual(runs('mon-fri * * * * *', '2024-01-01T00:00:00Z', 2), ['2024-01-01T00:00:01Z', '2024-01-01T00:00:02Z']);
});

test('local time by default, UTC on request', () => {
  const local = parseCron('0 0 * * * *');
  assert.ok(!isCronError(local));
  assert.equal(local.utc, false);
  assert.equal(schedule('0 0 * * * *', true).utc, true);
});

test("refused expressions, with the library's reason", () => {
  assert.equal(refused(''), 'Too few fields');
  assert.equal(refused('* * *'), 'Too few fields');
  assert.equal(refused('* * * * * * *'), 'Too many fields');
  assert.equal(refused('61 * * * * *'), 'Field value (61) is out of range');
  assert.equal(refused('0 60 * * * *'), 'Field value (60) is out of range');
  assert.equal(refused('0 0 24 * * *'), 'Field value (24) is out of range');
  assert.equal(refused('0 0 0 0 * *'), 'Field value (0) is out of range');
  assert.equal(refused('0 0 0 * 13 *'), 'Field value (13) is out of range');
  assert.equal(refused('0 0 0 * * 8'), 'Field value (8) is out of range');
  assert.equal(refused('*/0 * * * * *'), 'Field (second) has a step of zero');
  assert.equal(refused('0 10-5 * * * *'), 'Field (minute) has an invalid range');
  assert.equal(refused('0 1,,2 * * * *'), 'Field (minute) cannot be parsed');
  assert.equal(refused('0 x * * * *'), 'Unknown alias: x');
  assert.equal(refused('0 0 0 * foo *'), 'Unknown alias: foo');
  assert.equal(refused('0 ? * * * *'), 'Field (minute) cannot be parsed');
  assert.equal(refused('0 1.5 * * * *'), 'Field (minute) cannot be parsed');
  assert.equal(refused('@often'), 'Unknown alias: oft');
  // 30 February never exists: the library accepts the text and finds no run; the check refuses it.
  assert.equal(refused('0 0 0 30 2 *'), `it never fires (no run time within ${CRON_HORIZON_YEARS} years)`);
  assert.equal(refused('0 0 31 4,6,9,11 *'), `it never fires (no run time within ${CRON_HORIZON_YEARS} years)`);
  // …but with a restricted day-of-week the OR rule makes it fire on those weekdays.
  assert.ok(!isCronError(parseCron('0 0 0 30 2 1')));
  // Never throws on junk input.
  assert.ok(isCronError(parseCron(undefined as unknown as string)));
});

test('every 30 seconds (the peering and disk-scan default), strictly after', () => {
  assert.deepEqual(runs('*/30 * * * * *', '2024-01-31T23:59:45Z', 4), [
    '2024-02-01T00:00:00Z',
    '2024-02-01T00:00:30Z',
    '2024-02-01T00:01:00Z',
    '2024-02-01T00:01:30Z',
  ]);
  const every30 = schedule('*/30 * * * * *');
  const onRun = Date.parse('2024-02-01T00:00:30Z');
  assert.equal(every30.next(onRun), onRun + 30_000, 'a time that is itself a run gives the following one');
  assert.equal(every30.next(onRun - 1), onRun, 'one millisecond before a run gives that run');
  assert.equal(every30.next(onRun - 0.5), onRun, 'fractional milliseconds are fine');
});

test('GC and repair defaults: every 15 and every 30 minutes on the minute', () => {
  assert.deepEqual(runs('0 */15 * * * *', '2024-05-05T10:07:12.345Z', 3), ['2024-05-05T10:15:00Z', '2024-05-05T10:30:00Z', '2024-05-05T10:45:00Z']);
  assert.deepEqual(runs('0 */30 * * * *', '2024-05-05T23:45:00Z', 2), ['2024-05-06T00:00:00Z', '2024-05-06T00:30:00Z']);
});

test('seconds lists and ranges with steps', () => {
  assert.deepEqual(runs('5,10,50 * * * * *', '2024-01-01T00:00:07Z', 4), [
    '2024-01-01T00:00:10Z',
    '2024-01-01T00:00:50Z',
    '2024-01-01T00:01:05Z',
    '2024-01-01T00:01:10Z',
  ]);
  assert.deepEqual(runs('10-20/5 30 * * * *', '2024-01-01T00:30:12Z', 4), [
    '2024-01-01T00:30:15Z',
    '2024-01-01T00:30:20Z',
    '2024-01-01T01:30:10Z',
    '2024-01-01T01:30:15Z',
  ]);
});

test('5-field expressions run at second 0', () => {
  assert.deepEqual(runs('5,10 7-9/2 * * *', '2024-01-31T23:59:45Z', 5), [
    '2024-02-01T07:05:00Z',
    '2024-02-01T07:10:00Z',
    '2024-02-01T09:05:00Z',
    '2024-02-01T09:10:00Z',
    '2024-02-02T07:05:00Z',
  ]);
});

test('day-of-week only, day-of-month only, and the OR rule when both are restricted', () => {
  // 2024-02-01 is a Thursday.
  assert.deepEqual(runs('0 0 12 * * 1-5', '2024-02-01T13:00:00Z', 3), ['2024-02-02T12:00:00Z', '2024-02-05T12:00:00Z', '2024-02-06T12:00:00Z']);
  assert.deepEqual(runs('0 0 0 31 * *', '2024-01-31T00:00:00Z', 3), ['2024-03-31T00:00:00Z', '2024-05-31T00:00:00Z', '2024-07-31T00:00:00Z']);
  // The 13th OR any Friday.
  assert.deepEqual(runs('0 0 0 13 * 5', '2024-02-01T00:00:00Z', 4), [
    '2024-02-02T00:00:00Z',
    '2024-02-09T00:00:00Z',
    '2024-02-13T00:00:00Z',
    '2024-02-16T00:00:00Z',
  ]);
  // A stepped day-of-month counts as restricted.
  assert.deepEqual(runs('0 0 0 */10 * *', '2024-02-01T00:00:00Z', 3), ['2024-02-11T00:00:00Z', '2024-02-21T00:00:00Z', '2024-03-01T00:00:00Z']);
});

test('months, year boundaries and 29 February', () => {
  assert.deepEqual(runs('0 0 0 1 jan,jul *', '2024-07-01T00:00:00Z', 3), ['2025-01-01T00:00:00Z', '2025-07-01T00:00:00Z', '2026-01-01T00:00:00Z']);
  assert.deepEqual(runs('59 59 23 31 12 *', '2024-06-01T00:00:00Z', 2), ['2024-12-31T23:59:59Z', '2025-12-31T23:59:59Z']);
  assert.deepEqual(runs('0 0 0 29 2 *', '2024-03-01T00:00:00Z', 2), ['2028-02-29T00:00:00Z', '2032-02-29T00:00:00Z']);
  assert.deepEqual(runs('@monthly', '2024-01-31T12:00:00Z', 2), ['2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z']);
});

test('next refuses a non-finite time and a schedule that never fires; the horizon is the real clock plus 8 years', () => {
  const every = schedule('* * * * * *');
  assert.throws(() => every.next(Number.NaN), RangeError);
  assert.throws(() => every.next(Number.POSITIVE_INFINITY), RangeError);
  // parseCron refuses 30 February; built directly, the library accepts the text and finds no run.
  const impossible = new CronSchedule('0 0 0 30 2 *', true);
  assert.throws(() => impossible.next(Date.parse('2024-01-01T00:00:00Z')), /no run time within 8 years/);
  // The longest gap between two 29 Februaries is eight years (2096 → 2104): the horizon covers it from now on…
  assert.ok(CRON_HORIZON_YEARS >= 8);
  // …but it is measured from the real current time, not from the time asked about (the library's own rule): a
  // question more than 8 years ahead of the real clock has no answer. The previous parser answered 2104-02-29 here.
  assert.throws(() => schedule('0 0 0 29 2 *').next(Date.parse('2096-03-01T00:00:00Z')), RangeError);
});

test("local time: daylight-saving changes as the original runs them (a missing time fires at the jump, a doubled one once; intervals keep their pace)", () => {
  const previous = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
  try {
    // Skip if this Node has no time-zone data for Berlin.
    if (new Date('2024-07-01T00:00:00Z').getTimezoneOffset() !== -120) return;
    const localRuns = (expression: string, fromIso: string, count: number): string[] => runs(expression, fromIso, count, false);
    // 31 March 2024: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that day, so the run is at 03:00 CEST.
    // (The previous parser skipped that day.)
    assert.deepEqual(localRuns('0 30 2 * * *', '2024-03-30T00:00:00Z', 3), ['2024-03-30T01:30:00Z', '2024-03-31T01:00:00Z', '2024-04-01T00:30:00Z']);
    // Midnight on the 23-hour day and the day after.
    assert.deepEqual(localRuns('0 0 0 * * *', '2024-03-30T12:00:00Z', 2), ['2024-03-30T23:00:00Z', '2024-03-31T22:00:00Z']);
    // An interval schedule keeps its pace through the missing hour.
    assert.deepEqual(localRuns('*/30 * * * * *', '2024-03-31T00:59:00Z', 4), [
      '2024-03-31T00:59:30Z',
      '2024-03-31T01:00:00Z',
      '2024-03-31T01:00:30Z',
      '2024-03-31T01:01:00Z',
    ]);
    // 27 October 2024: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice and runs once, the first time.
    // (The previous parser ran it both times.)
    assert.deepEqual(localRuns('0 30 2 * * *', '2024-10-26T12:00:00Z', 3), ['2024-10-27T00:30:00Z', '2024-10-28T01:30:00Z', '2024-10-29T01:30:00Z']);
    // An interval schedule keeps its pace through the repeated hour.
    assert.deepEqual(localRuns('0 */30 * * * *', '2024-10-27T00:15:00Z', 4), [
      '2024-10-27T00:30:00Z',
      '2024-10-27T01:00:00Z',
      '2024-10-27T01:30:00Z',
      '2024-10-27T02:00:00Z',
    ]);
    assert.deepEqual(localRuns('*/30 * * * * *', '2024-10-27T00:59:00Z', 4), [
      '2024-10-27T00:59:30Z',
      '2024-10-27T01:00:00Z',
      '2024-10-27T01:00:30Z',
      '2024-10-27T01:01:00Z',
    ]);
    // Midnight on the 25-hour day.
    assert.deepEqual(localRuns('0 0 0 * * *', '2024-10-26T12:00:00Z', 2), ['2024-10-26T22:00:00Z', '2024-10-27T23:00:00Z']);
  } finally {
    if (previous === undefined) delete process.env.TZ;
    else process.env.TZ = previous;
  }
});
