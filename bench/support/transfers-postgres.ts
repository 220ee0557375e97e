// The transfers benchmark's PostgreSQL: test/support/postgres.ts's throwaway cluster, plus what a benchmark needs on
// top of it: the postmaster's pid and folder, so that a bench stopped by SIGINT (bench/run.ts exits the process from
// its signal handler, which runs the 'exit' hooks and nothing asynchronous) still stops the server it started and
// removes its folder, and the server log (auto_explain writes the plans it captures there).

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { startPostgres, type PostgresCluster } from '../../test/support/postgres.js';

/** How long the exit hook waits for a postmaster to go after SIGQUIT (immediate shutdown) before SIGKILL. */
const EXIT_WAIT_MS = 5_000;
const EXIT_POLL_MS = 25;

export interface BenchPostgres extends PostgresCluster {
  /** The postmaster (the server's parent process; its backends are its children). */
  readonly postmasterPid: number;
  /** The server's log file (pg_ctl -l): auto_explain's plans land here. */
  readonly logFile: string;
  /** Size of the log now, so a caller can read only what comes after. */
  logSize(): number;
  /** The log from `offset` on. */
  readLog(offset: number): string;
}

interface LiveServer {
  readonly pid: number;
  /** The temporary folder that holds the data directory and the log. */
  readonly folder: string;
}

const live = new Set<LiveServer>();
let hooked = false;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie waits for init to reap it: it is gone for our purposes.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Synchronous last resort ('exit' hook): SIGQUIT to each postmaster still running, a bounded wait, its folder removed. */
function stopAllNow(): void {
  for (const server of live) {
    try {
      process.kill(server.pid, 'SIGQUIT');
    } catch {
      // Already gone.
    }
    const deadline = Date.now() + EXIT_WAIT_MS;
    while (alive(server.pid) && Date.now() < deadline) sleepSync(EXIT_POLL_MS);
    if (alive(server.pid)) {
      try {
        process.kill(server.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    try {
      rmSync(server.folder, { recursive: true, force: true });
    } catch {
      // Best effort.
    }
    live.delete(server);
  }
}

/**
 * More server settings from `ADM_BENCH_PG_SETTINGS` (`name=value,name=value`, e.g. `shared_buffers=2GB`): a run that
 * sizes the server as an operator of a large table would, beside one on PostgreSQL's defaults.
 */
function settingsFromEnvironment(): Record<string, string> {
  const text = process.env.ADM_BENCH_PG_SETTINGS?.trim();
  if (!text) return {};
  return Object.fromEntries(
    text.split(',').map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`ADM_BENCH_PG_SETTINGS: expected name=value, got ${pair}`);
      return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()];
    }),
  );
}

export async function startBenchPostgres(): Promise<BenchPostgres> {
  const settings = settingsFromEnvironment();
  if (Object.keys(settings).length > 0) console.log(`PostgreSQL settings from ADM_BENCH_PG_SETTINGS: ${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  const cluster = await startPostgres({ settings });
  let server: LiveServer | undefined;
  try {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    let dataDirectory: string;
    try {
      const { rows } = await client.query<{ data_directory: string }>('SHOW data_directory');
      dataDirectory = rows[0]!.data_directory;
    } finally {
      await client.end();
    }
    const pid = Number(readFileSync(join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n', 1)[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${dataDirectory}/postmaster.pid`);
    // test/support/postgres.ts: the data directory is <folder>/data and the log <folder>/server.log.
    const folder = dirname(dataDirectory);
    server = { pid, folder };
    live.add(server);
    if (!hooked) {
      hooked = true;
      process.on('exit', stopAllNow);
    }
    const logFile = join(folder, 'server.log');
    const registered = server;
    return {
      ...cluster,
      postmasterPid: pid,
      logFile,
      logSize: () => {
        try {
          return statSync(logFile).size;
        } catch {
          return 0;
        }
      },
      readLog: (offset) => {
        try {
          return readFileSync(logFile).subarray(offset).toString('utf8');
        } catch {
          return '';
        }
      },
      async stop() {
        live.delete(registered);
        await cluster.stop();
      },
    };
  } catch (error) {
    if (server) live.delete(server);
    await cluster.stop();
    throw error;
  }
}

/** Whether a process of this machine is still running (for the end-of-bench check). */
export function processAlive(pid: number): boolean {
  return alive(pid);
}

let clockTicks: number | undefined;

/**
 * CPU time (user + system, seconds) used so far by the server's processes: the postmaster and its children (the
 * backends, the WAL writer, the checkpointer…), those that exited included. Undefined off Linux.
 */
export function serverCpuSeconds(postmasterPid: number): number | undefined {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    let ticks = 0;
    for (const entry of readdirSync('/proc')) {
      if (!/^[0-9]+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      } catch {
        continue; // exited meanwhile
      }
      // Fields after the parenthesised command name: state (0), ppid (1), … utime (11), stime (12), cutime (13),
      // cstime (14). The postmaster reaps its backends, so its cutime/cstime hold the time of those that exited.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(entry) === postmasterPid) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      else if (Number(fields[1]) === postmasterPid) ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks / clockTicks;
  } catch {
    return undefined;
  }
}
