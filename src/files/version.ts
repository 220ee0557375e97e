// The files service's software version, reported in health, info and details (docs/specs/files-node.md §9.1).

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Used only when package.json cannot be found next to the compiled code (it always ships with it). */
const FALLBACK_VERSION = '0.1.0';

/**
 * The package version, read once from the nearest `package.json` named `adm-infra` above this file (works from
 * `dist/` and any other outDir).
 */
function readPackageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 8; level++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'adm-infra' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return FALLBACK_VERSION;
}

export const FILES_VERSION: string = readPackageVersion();
