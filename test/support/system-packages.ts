// System packages some suites need beyond Node (README "Tests and benchmarks"): Debian's Chromium for the operator page
// test, the PostgreSQL ≥ 15 server binaries for the suites that start throwaway clusters, curl for the upload refusals
// as users meet them, iproute2 and nftables for the fault suite. `.ci/run` installs them all. On a machine without
// them, `npm ci && npm test` must still pass, so those suites skip, loudly: the skip reason (with the install command)
// is in the reporter's output, and a notice goes to stderr once per package and test file. With `CI` set they are never
// skipped: the suites run and fail on their own checks, so a CI machine without the package can never go green by
// skipping.
// Importing this module does nothing (node --test runs every file under dist/test/).

import { existsSync } from 'node:fs';
import { netnsUnavailable, nftBinary } from './faults/network.js';
import { postgresBinDirectory, POSTGRES_ROOT } from './postgres.js';

export interface SystemPackage {
  /** What is missing, as a person names it. */
  readonly name: string;
  /** Whether it is installed on this machine. */
  readonly present: () => boolean;
  /** The exact command that installs it on Debian. */
  readonly install: string;
  /** How its absence reads after the name (default `is not installed`), e.g. when it is a capability. */
  readonly absence?: () => string;
}

/** Where the operator page test finds Chromium (playwright's own browser downloads are never used). */
export const CHROMIUM_EXECUTABLE = '/usr/bin/chromium';

/** Debian's Chromium; the path is a parameter so the helper's own test can point it at nothing. */
export function chromiumPackage(executable = CHROMIUM_EXECUTABLE): SystemPackage {
  return {
    name: `Chromium (${executable})`,
    present: () => existsSync(executable),
    install: 'apt-get install -y --no-install-recommends chromium',
  };
}

/** Debian's PostgreSQL server (postgresql-15 on bookworm); the root is a parameter for the helper's own test. */
export function postgresServerPackage(root = POSTGRES_ROOT): SystemPackage {
  return {
    name: `the PostgreSQL ≥ 15 server (binaries under ${root}/<version>/bin)`,
    present: () => postgresBinDirectory(root) !== undefined,
    install: 'apt-get install -y postgresql',
  };
}

/**
 * Network namespaces for the files fault suite (test/acceptance/files-faults.test.ts): root, iproute2's `ip`, and a
 * namespace that can be created. `probe` is a parameter for the helper's own test; its answer is kept.
 */
export function netnsPackage(probe: () => string | undefined = netnsUnavailable): SystemPackage {
  let reason: string | undefined | null = null;
  const why = () => (reason === null ? (reason = probe()) : reason);
  return {
    name: 'network namespaces (root and iproute2)',
    present: () => why() === undefined,
    install: 'apt-get install -y iproute2 (and run the tests as root)',
    absence: () => `are not usable here: ${why()}`,
  };
}

/** Where the tests find curl, the command-line client the README's upload examples use. */
export const CURL_EXECUTABLE = '/usr/bin/curl';

/** Debian's curl: the edge's refusals are tested through it as users send uploads (`curl -F files=@file`). */
export function curlPackage(executable = CURL_EXECUTABLE): SystemPackage {
  return { name: `curl (${executable})`, present: () => existsSync(executable), install: 'apt-get install -y --no-install-recommends curl' };
}

/** Debian's nftables, for the fault suite's one-way cut (the other faults need only `ip`). */
export function nftablesPackage(present: () => boolean = () => nftBinary() !== undefined): SystemPackage {
  return { name: 'nftables (nft)', present, install: 'apt-get install -y nftables' };
}

export interface SkipOptions {
  /** Defaults to process.env; only `CI` is read. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where the notice goes; defaults to stderr, once per package name and process. */
  readonly notify?: (notice: string) => void;
}

const notified = new Set<string>();
const notifyOncePerProcess = (key: string) => (notice: string) => {
  if (notified.has(key)) return;
  notified.add(key);
  process.stderr.write(notice);
};

/**
 * The `skip` option for the suites that need `pkg`: `false` (run them) when it is installed or when `CI` is set
 * (non-empty), so that on CI they fail with their own message; otherwise the skip reason, after writing the loud
 * notice. `skipped` says which suites, e.g. 'the operator page test (test/acceptance/operator-page.test.ts)'.
 */
export function skipWithout(pkg: SystemPackage, skipped: string, options: SkipOptions = {}): string | false {
  if (pkg.present()) return false;
  const env = options.env ?? process.env;
  if (env.CI) return false;
  const absence = pkg.absence?.() ?? 'is not installed';
  const reason = `SKIPPED: ${pkg.name} ${absence}; install it with \`${pkg.install}\` (with CI set this fails instead)`;
  const notify = options.notify ?? notifyOncePerProcess(pkg.name);
  notify(
    [
      '',
      `!!! ${pkg.name} ${absence}: SKIPPING ${skipped}.`,
      `!!! Install it (as root) with:  ${pkg.install}`,
      '!!! (.ci/run installs it; with the CI environment variable set, these tests fail instead of skipping.)',
      '',
      '',
    ].join('\n'),
  );
  return reason;
}
