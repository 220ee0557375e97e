// Load runs with the CPU each party used, and interleaved rounds of them combined. On a small shared machine
// the CPU shows which party was the limit, and `other` shows a burst of work that disturbed a run.

import type { LoadSummary } from './load.js';
import { machineBusySeconds } from './processes.js';
import { fmt, fmtInt, median } from './stats.js';

/**
 * CPU during a run, % of one core: each named party (a process under test, PostgreSQL, a fake upstream); `generator`,
 * this process (the load generator's worker thread: the main thread only waits); `other`, everything else the
 * machine did (kernel loopback work, other processes).
 */
export type CpuShares<P extends string> = Readonly<Record<P | 'generator' | 'other', number>>;

export interface MeasuredLoad<P extends string> extends LoadSummary {
  /** In the parties' order, then `generator` and `other` (the order of the table's CPU columns). */
  readonly cpu: CpuShares<P>;
}

/** One load run plus the CPU each party (its CPU seconds so far: undefined when not readable) used meanwhile. */
export async function measuredLoad<P extends string>(parties: Readonly<Record<P, () => number | undefined>>, run: () => Promise<LoadSummary>): Promise<MeasuredLoad<P>> {
  const names = Object.keys(parties) as P[];
  const wall = process.hrtime.bigint();
  const before = names.map((name) => parties[name]());
  const machine = machineBusySeconds();
  const own = process.cpuUsage();
  const summary = await run();
  const elapsed = Number(process.hrtime.bigint() - wall) / 1e9;
  const after = names.map((name) => parties[name]());
  const machineAfter = machineBusySeconds();
  const ownUsed = process.cpuUsage(own);
  const share = (start: number | undefined, end: number | undefined) => (start === undefined || end === undefined ? NaN : ((end - start) / elapsed) * 100);
  const cpu = {} as Record<P | 'generator' | 'other', number>;
  let other = share(machine, machineAfter);
  names.forEach((name, i) => {
    cpu[name] = share(before[i], after[i]);
    other -= cpu[name];
  });
  cpu.generator = ((ownUsed.user + ownUsed.system) / 1e6 / elapsed) * 100;
  cpu.other = Math.max(0, other - cpu.generator);
  return { ...summary, cpu };
}

/** Rounds of one side as one result: percentiles are the median of the rounds', rates and CPU over all of them. */
export function combineRounds<P extends string>(runs: readonly MeasuredLoad<P>[]): MeasuredLoad<P> {
  const windows = runs.map((run) => (run.requestsPerSecond > 0 ? run.completed / run.requestsPerSecond : 0));
  const window = windows.reduce((sum, w) => sum + w, 0);
  const weighted = (pick: (run: MeasuredLoad<P>) => number) => runs.reduce((sum, run, i) => sum + pick(run) * windows[i]!, 0) / (window || 1);
  const completed = runs.reduce((sum, run) => sum + run.completed, 0);
  const cpu = {} as Record<P | 'generator' | 'other', number>;
  for (const key of Object.keys(runs[0]?.cpu ?? {}) as Array<P | 'generator' | 'other'>) cpu[key] = weighted((run) => run.cpu[key]);
  return {
    count: runs.reduce((sum, run) => sum + run.count, 0),
    p50: median(runs.map((run) => run.p50)),
    p90: median(runs.map((run) => run.p90)),
    p99: median(runs.map((run) => run.p99)),
    max: Math.max(...runs.map((run) => run.max)),
    mean: weighted((run) => run.mean),
    requestsPerSecond: window > 0 ? completed / window : 0,
    completed,
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    errorDetail: runs.map((run) => run.errorDetail).filter((detail) => detail !== '').join('; '),
    bodyBytes: runs.at(-1)?.bodyBytes ?? 0,
    cpu,
  };
}

/**
 * `rounds` rounds of two sides, the side going first alternating (`first` leads round 0), so that neither side
 * always runs on a machine the other has just warmed or loaded. Each side's results in round order.
 */
export async function interleave<T>(rounds: number, first: () => Promise<T>, second: () => Promise<T>): Promise<[T[], T[]]> {
  const [a, b] = await interleaveSides(rounds, [first, second]);
  return [a!, b!];
}

/** `rounds` rounds of any number of sides, the order rotating by one each round (two sides: alternating). */
export async function interleaveSides<T>(rounds: number, sides: ReadonlyArray<() => Promise<T>>): Promise<T[][]> {
  const results = sides.map((): T[] => []);
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < sides.length; i++) {
      const side = (round + i) % sides.length;
      results[side]!.push(await sides[side]!());
    }
  }
  return results;
}

/** Column headers of `measuredCells`: one per party (in the parties' order) among the load figures. */
export function measuredHeader(partyHeaders: readonly string[]): string[] {
  return ['req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'requests', 'body B', ...partyHeaders, 'gen CPU%', 'other CPU%', 'errors'];
}

/** One run's cells under `measuredHeader`. */
export function measuredCells(s: MeasuredLoad<string>): string[] {
  return [
    fmtInt(s.requestsPerSecond), fmt(s.p50, 3), fmt(s.p90, 3), fmt(s.p99, 3), fmt(s.max, 1), fmtInt(s.completed), fmtInt(s.bodyBytes),
    ...Object.values(s.cpu).map((share) => fmt(share, 0)), s.errors ? `${s.errors} (${s.errorDetail})` : '0',
  ];
}
