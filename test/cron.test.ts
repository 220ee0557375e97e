import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CRON_SEARCH_LIMIT_MS, isCronError, nextRun, parseCron, type CronSchedule } from '../src/cron.js';

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

/** The next `count` run times after `fromIso`, as ISO strings (UTC schedules). */
function runs(expression: string, fromIso: string, count: number): string[] {
  const parsed = schedule(expression);
  const out: string[] = [];
  let at = Date.parse(fromIso);
  for (let index = 0; index < count; index++) {
    at = nextRun(parsed, at);
    out.push(new Date(at).toISOString().replace('.000Z', 'Z'));
  }
  return out;
}

test('parses 6-field expressions with seconds and 5-field ones without', () => {
  const six = schedule('*/30 * * * * *');
  assert.deepEqual(six.seconds, [0, 30]);
  assert.equal(six.minutes.length, 60);
  assert.equal(six.dayOfMonthRestricted, false);
  assert.equal(six.dayOfWeekRestricted, false);
  assert.equal(six.utc, true);

  const five = schedule('5,10 7-9/2 * * *');
  assert.deepEqual(five.seconds, [0]);
  assert.deepEqual(five.minutes, [5, 10]);
  assert.deepEqual(five.hours, [7, 9]);
  assert.equal(five.source, '5,10 7-9/2 * * *');
});

test('lists, ranges, steps, names, 7 = Sunday and presets', () => {
  const parsed = schedule('0 0/20 1-3,22 1,15 jan-MAR,dec mon-fri,7');
  assert.deepEqual(parsed.minutes, [0, 20, 40]);
  assert.deepEqual(parsed.hours, [1, 2, 3, 22]);
  assert.deepEqual(parsed.daysOfMonth, [1, 15]);
  assert.deepEqual(parsed.months, [1, 2, 3, 12]);
  assert.deepEqual(parsed.daysOfWeek, [0, 1, 2, 3, 4, 5]);
  assert.deepEqual(schedule('0 0 0 * * 0').daysOfWeek, schedule('0 0 0 * * 7').daysOfWeek);
  assert.deepEqual(schedule('0 0 0 * * 5-7').daysOfWeek, [0, 5, 6]);
  assert.equal(schedule('0 0 0 * * 0-7').dayOfWeekRestricted, false);
  assert.equal(schedule('0 0 0 ? * *').dayOfMonthRestricted, false);
  assert.deepEqual(schedule('1-10/3 * * * * *').seconds, [1, 4, 7, 10]);
  assert.deepEqual(schedule('  @hourly ').seconds, [0]);
  assert.deepEqual(schedule('@hourly').minutes, [0]);
  assert.equal(schedule('@daily').hours.length, 1);
  assert.deepEqual(schedule('@weekly').daysOfWeek, [0]);
  assert.deepEqual(schedule('@yearly').months, [1]);
});

test('local time by default, UTC on request', () => {
  const local = parseCron('0 0 * * * *');
  assert.ok(!isCronError(local));
  assert.equal(local.utc, false);
  assert.equal(schedule('0 0 * * * *', true).utc, true);
});

test('refused expressions name the field', () => {
  assert.match(refused(''), /empty/);
  assert.match(refused('* * *'), /expected 5 fields .* or 6 .*, got 3/);
  assert.match(refused('* * * * * * *'), /got 7/);
  assert.equal(refused('61 * * * * *'), 'second field: 61 is out of range 0-59');
  assert.equal(refused('0 60 * * * *'), 'minute field: 60 is out of range 0-59');
  assert.equal(refused('0 0 24 * * *'), 'hour field: 24 is out of range 0-23');
  assert.equal(refused('0 0 0 0 * *'), 'day-of-month field: 0 is out of range 1-31');
  assert.equal(refused('0 0 0 * 13 *'), 'month field: 13 is out of range 1-12');
  assert.equal(refused('0 0 0 * * 8'), 'day-of-week field: 8 is out of range 0-7');
  assert.equal(refused('*/0 * * * * *'), "second field: step '0' must be a whole number of at least 1");
  assert.equal(refused('0 10-5 * * * *'), "minute field: range '10-5' runs backwards");
  assert.equal(refused('0 1,,2 * * * *'), "minute field: '1,,2' has an empty list entry");
  assert.equal(refused('0 x * * * *'), "minute field: 'x' is not a number");
  assert.equal(refused('0 0 0 * foo *'), "month field: 'foo' is not a number or a name");
  assert.equal(refused('0 ? * * * *'), "minute field: '?' is not a number");
  assert.equal(refused('0 1.5 * * * *'), "minute field: '1.5' is not a number");
  assert.match(refused('@often'), /unknown preset/);
  // 30 February never exists.
  assert.equal(refused('0 0 0 30 2 *'), 'day-of-month field: no listed day exists in any listed month');
  assert.equal(refused('0 0 31 4,6,9,11 *'), 'day-of-month field: no listed day exists in any listed month');
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
  assert.equal(nextRun(every30, onRun), onRun + 30_000, 'a time that is itself a run gives the following one');
  assert.equal(nextRun(every30, onRun - 1), onRun, 'one millisecond before a run gives that run');
  assert.equal(nextRun(every30, onRun - 0.5), onRun, 'fractional milliseconds are fine');
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
  // 2100 is not a leap year: the next 29 February after 2096 is in 2104, eight years later.
  assert.deepEqual(runs('0 0 0 29 2 *', '2096-03-01T00:00:00Z', 1), ['2104-02-29T00:00:00Z']);
  assert.deepEqual(runs('@monthly', '2024-01-31T12:00:00Z', 2), ['2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z']);
});

test('nextRun refuses a non-finite time and a schedule that never fires', () => {
  const every = schedule('* * * * * *');
  assert.throws(() => nextRun(every, Number.NaN), RangeError);
  assert.throws(() => nextRun(every, Number.POSITIVE_INFINITY), RangeError);
  // parseCron refuses 30 February; a hand-built schedule still cannot loop forever.
  const impossible: CronSchedule = { ...schedule('0 0 0 1 2 *'), daysOfMonth: [30] };
  assert.throws(() => nextRun(impossible, Date.parse('2024-01-01T00:00:00Z')), /no run time within 10 years/);
  assert.ok(CRON_SEARCH_LIMIT_MS >= 8 * 366 * 86_400_000);
});

test('local time: a daylight-saving change skips a missing time and repeats a doubled one', () => {
  const previous = process.env.TZ;
  process.env.TZ = 'Europe/Berlin';
  try {
    // Skip if this Node has no time-zone data for Berlin.
    if (new Date('2024-07-01T00:00:00Z').getTimezoneOffset() !== -120) return;
    const localRuns = (expression: string, fromIso: string, count: number): string[] => {
      const parsed = parseCron(expression);
      assert.ok(!isCronError(parsed));
      const out: string[] = [];
      let at = Date.parse(fromIso);
      for (let index = 0; index < count; index++) {
        at = nextRun(parsed, at);
        out.push(new Date(at).toISOString().replace('.000Z', 'Z'));
      }
      return out;
    };
    // 31 March 2024: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that day.
    assert.deepEqual(localRuns('0 30 2 * * *', '2024-03-30T00:00:00Z', 2), ['2024-03-30T01:30:00Z', '2024-04-01T00:30:00Z']);
    // Midnight on the 23-hour day and the day after.
    assert.deepEqual(localRuns('0 0 0 * * *', '2024-03-30T12:00:00Z', 2), ['2024-03-30T23:00:00Z', '2024-03-31T22:00:00Z']);
    // 27 October 2024: 03:00 CEST falls back to 02:00 CET; 02:30 happens twice.
    assert.deepEqual(localRuns('0 30 2 * * *', '2024-10-26T12:00:00Z', 3), ['2024-10-27T00:30:00Z', '2024-10-27T01:30:00Z', '2024-10-28T01:30:00Z']);
    // An interval schedule keeps its pace through the repeated hour.
    assert.deepEqual(localRuns('0 */30 * * * *', '2024-10-27T00:15:00Z', 4), [
      '2024-10-27T00:30:00Z',
      '2024-10-27T01:00:00Z',
      '2024-10-27T01:30:00Z',
      '2024-10-27T02:00:00Z',
    ]);
    // Midnight on the 25-hour day.
    assert.deepEqual(localRuns('0 0 0 * * *', '2024-10-26T12:00:00Z', 2), ['2024-10-26T22:00:00Z', '2024-10-27T23:00:00Z']);
  } finally {
    if (previous === undefined) delete process.env.TZ;
    else process.env.TZ = previous;
  }
});
