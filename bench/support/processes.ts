// Child processes of a benchmark: every one is tracked by pid so that a `finally` (or SIGINT) stops
// exactly the processes this bench started and no others. Output is kept as a bounded tail for errors.
// The helper processes themselves call exitWithParent, so none outlives its bench.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const TAIL_CHARS = 8_000;

export interface ManagedProcess {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Last stdout/stderr output, for error messages. */
  tail(): string;
  /** True once the process has exited. */
  exited(): boolean;
  /** SIGTERM by pid, SIGKILL if it has not exited within `timeoutMs`. Resolves once it is gone. */
  stop(timeoutMs?: number): Promise<void>;
}

const tracked = new Map<number, ManagedProcess>();

export function spawnTracked(name: string, command: string, args: readonly string[], options: { env?: NodeJS.ProcessEnv; ipc?: boolean } = {}): ManagedProcess {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${name}`);
  const pid = child.pid;
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-TAIL_CHARS);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let gone = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      tracked.delete(pid);
      resolve();
    }),
  );
  const managed: ManagedProcess = {
    name,
    pid,
    child,
    tail: () => output,
    exited: () => gone,
    async stop(timeoutMs = 10_000) {
      if (gone) return;
      signal(pid, 'SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
      if ((await Promise.race([exit, late])) === 'late') {
        signal(pid, 'SIGKILL');
        await Promise.race([exit, new Promise((resolve) => setTimeout(resolve, 2_000))]);
      }
      clearTimeout(timer);
    },
  };
  tracked.set(pid, managed);
  return managed;
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Stops every tracked process (in reverse start order), each by its own pid. */
export async function stopAllTracked(): Promise<void> {
  for (const managed of [...tracked.values()].reverse()) await managed.stop();
}

/** Synchronous last resort for signal handlers: SIGKILL to each tracked pid. */
export function killAllTrackedNow(): void {
  for (const pid of tracked.keys()) signal(pid, 'SIGKILL');
}

/** Peak and current resident set size (VmHWM, VmRSS) of a process, in MiB; undefined off Linux. */
export function memoryOf(pid: number): { peakMiB: number; rssMiB: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakMiB: kb('VmHWM') / 1024, rssMiB: kb('VmRSS') / 1024 };
  } catch {
    return undefined;
  }
}

/**
 * Resets the kernel's peak RSS (VmHWM) of a process to its current RSS (`echo 5 > /proc/<pid>/clear_refs`, Linux
 * 4.0+, allowed for one's own processes), so a later VmHWM covers only what came after. False when it could not.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

let clockTicks: number | undefined;

/** CPU time (user + system) a process has used so far, in seconds; undefined off Linux. */
export function cpuSecondsOf(pid: number): number | undefined {
  const times = cpuTimesOf(pid);
  return times === undefined ? undefined : times.user + times.system;
}

/** CPU time a process has used so far in user and in system (kernel) mode, every thread, in seconds; undefined off Linux. */
export function cpuTimesOf(pid: number): { user: number; system: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name (which may contain spaces): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return { user: Number(fields[11]) / clockTicks, system: Number(fields[12]) / clockTicks };
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system) of this process's children that have exited and been waited for (cutime + cstime of
 * /proc/self/stat), in seconds; undefined off Linux. The CPU of a short-lived helper (a curl run) is the change of
 * this figure across its life, read after its `exit` event (Node has reaped it by then).
 */
export function reapedChildrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return (Number(fields[13]) + Number(fields[14])) / clockTicks;
  } catch {
    return undefined;
  }
}

/** Busy CPU time of the whole machine so far (all cores, idle and iowait excluded), in seconds; undefined off Linux. */
export function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    return (user! + nice! + system! + irq! + softirq! + steal!) / clockTicks;
  } catch {
    return undefined;
  }
}

/**
 * The child side, for a bench's helper process started by spawnTracked with an IPC channel: refuses to run
 * without the channel, and exits on SIGTERM/SIGINT or when the bench goes away (the channel closes).
 */
export function exitWithParent(script: string): void {
  if (process.send === undefined) {
    process.stderr.write(`${script} must be started with an IPC channel\n`);
    process.exit(2);
  }
  const stop = () => process.exit(0);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
}
