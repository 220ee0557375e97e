// Temporary directories of a benchmark run, removed in `finally` and by the SIGINT handler.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dirs = new Set<string>();

export function makeScratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  dirs.add(dir);
  return dir;
}

export function removeScratchDirs(): void {
  for (const dir of dirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Best effort: a leftover temp dir must not turn a finished bench into a failure.
    }
    dirs.delete(dir);
  }
}
