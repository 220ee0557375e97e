// `log_level` as currencyinfo ranks it (docs/notes/rates.md E.1 `log_level`: `none|log|warn|error`, "4.2 adds `info`";
// 4.1's "`none` logs everything" is a bug we do not keep). The original's logger orders its levels, least to most
// verbose:
//
//   none  <  error  <  warn  <  log  <  info
//
// A line is printed when its level is at or before the configured one: `log` (the default) prints error, warn
// and log lines and hides info lines; `info` prints everything; `warn` hides log and info; `none` prints nothing.
// `info` is the diagnostic level below `log` (a line per source per cycle, the startup notice, which the 4.2
// notifier logs below `log`), not a synonym of it.
//
// pino has no `log` level, so the rates actors' loggers get one as a custom level between pino's `info` (30) and
// `warn` (40): lines keep the original's level names (`"level":"log"`), and the threshold is the configured name.

import type { Logger as PinoLogger } from 'pino';
import type { Logger } from '../logger.js';
import type { LogLevel } from './config.js';

/** Least to most verbose (notes E.1): a configured level prints the lines of its own rank and of every rank before it. */
export const RATES_LOG_RANKING = ['none', 'error', 'warn', 'log', 'info'] as const satisfies readonly LogLevel[];

/** The level a line is written at; `none` is only a threshold. */
export type RatesLineLevel = Exclude<LogLevel, 'none'>;

/** Whether a line at `line` is printed under `log_level: configured` (the original's ordering). */
export function ratesLogShows(configured: LogLevel, line: RatesLineLevel): boolean {
  return RATES_LOG_RANKING.indexOf(line) <= RATES_LOG_RANKING.indexOf(configured);
}

/** Between pino's info (30) and warn (40), so that a `log` threshold hides `info` lines and keeps warnings. */
export const PINO_LOG_LEVEL_VALUE = 35;

/** A rates actor's logger: pino's levels plus the original's `log`. */
export type RatesLogger = PinoLogger<'log'>;

const PINO_THRESHOLD: Record<LogLevel, string> = { none: 'silent', error: 'error', warn: 'warn', log: 'log', info: 'info' };

/**
 * A child of `parent` that writes `bindings` on every line and filters by `log_level` in the original's ranking,
 * whatever the parent's own threshold is.
 */
export function ratesLogger(parent: Logger, level: LogLevel, bindings: Record<string, unknown>): RatesLogger {
  return parent.child<'log'>(bindings, { customLevels: { log: PINO_LOG_LEVEL_VALUE }, level: PINO_THRESHOLD[level] });
}

/** What a rates actor that writes only pino's own levels needs: a plain logger or a RatesLogger. */
export type LineLogger = Pick<Logger, 'error' | 'warn' | 'info' | 'debug'>;
