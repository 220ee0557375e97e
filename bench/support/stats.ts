// Percentiles, the machine header and plain-text tables for the benchmarks.

import { cpus, freemem, loadavg, release, totalmem } from 'node:os';

export interface LatencySummary {
  readonly count: number;
  /** Milliseconds. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Summary in milliseconds of samples given in microseconds. */
export function summarize(micros: Float64Array): LatencySummary {
  const sorted = Float64Array.from(micros).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  const ms = (value: number) => value / 1000;
  return {
    count: sorted.length,
    p50: ms(percentile(sorted, 50)),
    p90: ms(percentile(sorted, 90)),
    p99: ms(percentile(sorted, 99)),
    max: ms(sorted.length ? sorted[sorted.length - 1]! : NaN),
    mean: ms(sorted.length ? sum / sorted.length : NaN),
  };
}

/** The middle value (the mean of the two middle ones for an even count), e.g. of per-round figures. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Summary in milliseconds of samples given in milliseconds. */
export function summarizeMs(samples: readonly number[]): LatencySummary {
  return summarize(Float64Array.from(samples, (ms) => ms * 1000));
}

export function machineHeader(): string {
  const cpuList = cpus();
  const model = cpuList[0]?.model.trim() ?? 'unknown cpu';
  const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;
  return [
    `machine: ${cpuList.length} cpu (${model}), ${gib(totalmem())} RAM (${gib(freemem())} free), ${process.platform} ${release()}`,
    `node ${process.version} (${process.arch}), load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  ].join('\n');
}

export function fmt(value: number, digits = 2): string {
  if (!Number.isFinite(value)) return '-';
  return value.toFixed(digits);
}

export function fmtInt(value: number): string {
  if (!Number.isFinite(value)) return '-';
  return Math.round(value).toLocaleString('en-US');
}

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
