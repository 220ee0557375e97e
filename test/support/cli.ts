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

/**
 * Ports handed out by freePort, below Linux's ephemeral range (32768-60999 by default). A port the kernel picks for
 * `listen(0)` comes from the ephemeral range, the same range every outgoing connection takes its local port from:
 * between the moment freePort closes it and the moment a test's node binds it (seconds, while helia starts), a client
 * connection of the other test file running at the same time could take it, and the node's start failed
 * (EADDRINUSE), cancelling its whole suite. No outgoing connection takes a port below the range.
 */
const PORT_RANGE = { from: 20_000, to: 32_000 } as const;
const FREE_PORT_TRIES = 50;
/** Ports this process has handed out: never twice (test files run in their own processes; each draws at random). */
const handedOut = new Set<number>();

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

/** A TCP port that was free a moment ago on 127.0.0.1, below the ephemeral range (the kernel's pick if none is). */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < FREE_PORT_TRIES; attempt++) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
    if (handedOut.has(port)) continue;
    if ((await tryListen(port)) === port) {
      handedOut.add(port);
      return port;
    }
  }
  const port = await tryListen(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}
