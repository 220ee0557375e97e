// A command in a pseudo-terminal, as a person at a keyboard runs it: script(1) (util-linux) gives the process a
// terminal, so readline runs in raw mode and keys such as Ctrl-C reach it as keys. Everything the terminal shows
// (stdout and stderr together) is collected.

import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';

/** Whether script(1) is installed (tests that need a terminal are skipped without it). */
export const HAS_SCRIPT = (() => {
  try {
    return statSync('/usr/bin/script').isFile();
  } catch {
    return false;
  }
})();

export interface Terminal {
  /** What the terminal has shown so far. */
  output(): string;
  /** Types keys (`\r` is Enter, `\x03` Ctrl-C). */
  type(keys: string): void;
  /** Resolves once the output satisfies `predicate`; rejects after `timeoutMs`, naming `what` and the output. */
  waitFor(predicate: (output: string) => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** The exit code, or 'timeout' when the process is still running after `timeoutMs`. */
  exited(timeoutMs?: number): Promise<number | null | 'timeout'>;
  /** Kills the process if it is still running. */
  close(): void;
}

export function startTerminal(argv: readonly string[], env: Record<string, string | undefined>): Terminal {
  const quote = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
  const child = spawn('script', ['-qefc', argv.map(quote).join(' '), '/dev/null'], { env: { TERM: 'xterm', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let shown = '';
  child.stdout.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    output: () => shown,
    type: (keys) => child.stdin.write(keys),
    async waitFor(predicate, what, timeoutMs = 15_000) {
      for (let waited = 0; !predicate(shown); waited += 20) {
        if (waited > timeoutMs) throw new Error(`no ${what} within ${timeoutMs} ms; output: ${JSON.stringify(shown)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    exited: (timeoutMs = 15_000) => Promise.race([exit, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs).unref())]),
    close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
