// The report every benchmark ends with: one row per measure (a goal judged against its target, or a figure
// shown next to its baseline for context), notes under the table, and the sections that failed. A failed
// section is a row and a line, the next section still runs, and the bench still ends as failed: a failure is
// never a result (docs/DESIGN.md "Testing").

import { fmt, machineHeader, table } from './stats.js';

export interface GoalRow {
  readonly name: string;
  readonly measured: string;
  readonly baseline: string;
  /** The measure set against its baseline: a ratio, or a difference. */
  readonly versus: string;
  readonly target: string;
  /** undefined: no goal, or not judged. */
  readonly met: boolean | undefined;
  readonly judged: boolean;
}

/** A measurement whose precondition failed (the two sides disagree, fewer copies than asked): it is no result. */
export class InvalidRunError extends Error {
  override readonly name = 'InvalidRunError';
}

export interface GoalReportInit {
  /** Header of the `versus` column. Default `ratio`. */
  readonly versusHeader?: string;
  /** A failed section's stack goes into the bench's error (an InvalidRunError's message says it all). */
  readonly stacks?: boolean;
  /** The closing line counts the failed sections too, and the total time follows it. */
  readonly timed?: boolean;
}

const say = (text = ''): void => void process.stdout.write(`${text}\n`);

export class GoalReport {
  readonly rows: GoalRow[] = [];
  readonly notes: string[] = [];
  readonly failures: string[] = [];
  private started = Date.now();

  constructor(private readonly init: GoalReportInit = {}) {}

  /** Forgets an earlier run and prints the bench's title, the machine and the start time. */
  begin(title: string): void {
    this.rows.length = 0;
    this.notes.length = 0;
    this.failures.length = 0;
    this.started = Date.now();
    say(title);
    say(machineHeader());
    say(`started ${new Date(this.started).toISOString()}`);
    say();
  }

  /** A measure judged against its target; `met` undefined: not judged (errors during its runs). */
  judge(name: string, measured: string, baseline: string, versus: string, target: string, met: boolean | undefined): void {
    this.rows.push({ name, measured, baseline, versus, target, met, judged: true });
  }

  /** A figure shown for context, no goal. */
  info(name: string, measured: string, baseline = '-', versus = '-'): void {
    this.rows.push({ name, measured, baseline, versus, target: '-', met: undefined, judged: false });
  }

  /** Runs one section; a failure is reported in the table and the next section still runs. */
  async section(name: string, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const invalid = error instanceof InvalidRunError;
      const detail = this.init.stacks && error instanceof Error && !invalid ? (error.stack ?? message) : message;
      this.failures.push(`${name}: ${invalid ? 'INVALID RUN: ' : ''}${detail}`);
      say(`section ${name} ${invalid ? 'INVALID' : 'FAILED'}: ${message}`);
      say();
      this.rows.push({ name: `${name} (section ${invalid ? 'invalid' : 'failed'})`, measured: '-', baseline: '-', versus: '-', target: '-', met: undefined, judged: true });
    }
  }

  /** Prints the goals table, the notes and the closing line. */
  print(): void {
    say('== goals');
    say(
      table(
        ['measure', 'measured', 'baseline', this.init.versusHeader ?? 'ratio', 'goal', 'met'],
        this.rows.map((r) => [r.name, r.measured, r.baseline, r.versus, r.target, !r.judged ? '-' : r.met === undefined ? 'FAILED' : r.met ? 'met' : 'MISSED']),
      ),
    );
    for (const note of this.notes) say(`note: ${note}`);
    const missed = this.rows.filter((r) => r.judged && r.met === false).length;
    const goals = missed === 0 ? 'all goals met' : `${missed} goal(s) missed`;
    say();
    if (!this.init.timed) {
      say(goals);
      return;
    }
    say(this.failures.length > 0 ? `${this.failures.length} section(s) failed, ${missed} goal(s) missed` : goals);
    say(`total time ${fmt((Date.now() - this.started) / 1000, 1)} s`);
  }

  /** Ends a bench whose section failed as failed, with `detail` (the processes' output, say) after the failures. */
  throwIfFailed(detail?: () => string): void {
    if (this.failures.length === 0) return;
    throw new Error(`${this.failures.length} section(s) failed:\n${this.failures.join('\n')}${detail === undefined ? '' : `\n${detail()}`}`);
  }
}
