// Runs the built CLI as a real process (black-box acceptance tests): NDJSON stdout parsed into lines,
// bounded waits, and a stop that sends SIGTERM and reports the exit code.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** dist/ of the build under test (this file is dist/test/support/cli.js). */
export const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(DIST, 'src', 'cli.js');
export const POLYFILL = join(DIST, 'src', 'polyfill.js');

export interface CliProcess {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first log line matching, or rejects after `timeoutMs` (or when the process exits). */
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code once the process has exited by itself (bounded). */
  exited(timeoutMs?: number): Promise<number | null>;
  /** SIGTERM, then the exit code; SIGKILL if it does not exit in time. */
  stop(timeoutMs?: number): Promise<number | null>;
}

export function startCli(args: readonly string[], env: Record<string, string | undefined> = {}, cwd?: string): CliProcess {
  if (!existsSync(CLI)) throw new Error(`built CLI not found at ${CLI}`);
  const child = spawn(process.execPath, ['--import', POLYFILL, CLI, ...args], {
    cwd,
    // The HTTP engine switches (http/engine.ts) pass through, so a whole run can be repeated on node:http.
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ADM_HTTP_UWS: process.env.ADM_HTTP_UWS, ADM_HTTP_ENGINE: process.env.ADM_HTTP_ENGINE, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let partial = '';
  const lines: Array<Record<string, unknown>> = [];
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const part of parts) {
      if (!part.trim()) continue;
      try {
        lines.push(JSON.parse(part) as Record<string, unknown>);
      } catch {
        lines.push({ raw: part });
      }
    }
    for (const wake of waiters) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.once('exit', () => {
    for (const wake of waiters) wake();
  });

  // A bound on a process that must exit, not a speed check: a --check-config run takes ~2 s alone and up to 10 s on a
  // loaded 2-core machine, and some tests run several in a row.
  const exited = (timeoutMs = 30_000) =>
    Promise.race([exit, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`process did not exit within ${timeoutMs} ms`)), timeoutMs).unref())]);

  return {
    child,
    lines,
    stdout: () => out,
    stderr: () => err,
    waitForLine(predicate, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(predicate);
          if (found) return finish(() => resolve(found));
          if (child.exitCode !== null || child.signalCode !== null) {
            finish(() => reject(new Error(`process exited (${child.exitCode ?? child.signalCode}) before the line appeared; stderr: ${err.slice(0, 2000)}`)));
          }
        };
        const timer = setTimeout(() => finish(() => reject(new Error(`no matching log line within ${timeoutMs} ms`))), timeoutMs);
        const finish = (fn: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          fn();
        };
        waiters.add(check);
        check();
      });
    },
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      try {
        return await exited(timeoutMs);
      } catch (error) {
        child.kill('SIGKILL');
        throw error;
      }
    },
  };
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
