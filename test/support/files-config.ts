// A validated files configuration for in-process tests: the embedded default with a test's overrides, in
// the config file's own key names (so a test reads like the config.json5 an operator would write).
// Inert on import (node --test runs every module under dist/test/).

import { parseFilesConfig, type FilesConfig } from '../../src/files/config.js';
import { FILES_DEFAULT_CONFIG } from '../../src/files/config-defaults.js';
import { isRecord } from '../../src/is-record.js';

type Raw = Record<string, unknown>;

function merge(base: unknown, override: unknown): unknown {
  if (override === undefined) return base;
  if (!isRecord(base) || !isRecord(override)) return override;
  const merged: Raw = { ...base };
  for (const [key, value] of Object.entries(override)) merged[key] = merge(base[key], value);
  return merged;
}

/**
 * A cron schedule that never fires during a test (1 January, midnight): the default GC and repair schedules fire at
 * every quarter and half hour, and a test node running then had a scheduled run beside the test's own (a manual
 * `POST /api/storage/gc` answered 409 on CI). Tests of the schedules set their own.
 */
const NEVER_DURING_A_TEST = '0 0 0 1 1 *';

/** Test defaults: loopback libp2p, no disk reserve, short discovery, a generous idle deadline for loaded CI. */
const TEST_DEFAULTS: Raw = {
  findFileTimeout: 700,
  downloadIdleTimeout: 10_000,
  storage: { diskReserveBytes: 0, gc: { schedule: NEVER_DURING_A_TEST } },
  replication: { repairSchedule: NEVER_DURING_A_TEST },
};

/** Layers of overrides, merged deeply in order over the test defaults. */
export function filesTestConfig(...layers: Raw[]): FilesConfig {
  const raw = layers.reduce<unknown>((merged, layer) => merge(merged, layer), merge(structuredClone(FILES_DEFAULT_CONFIG), TEST_DEFAULTS));
  const parsed = parseFilesConfig(raw);
  if (!parsed.ok) throw new Error(`invalid test config:\n${parsed.problems.join('\n')}`);
  return parsed.config;
}

/**
 * The config file of a files node started as the built CLI by a test: its required keys, libp2p on a free loopback
 * port, no peers, no disk reserve, every origin allowed; `extra` keys replace these (shallowly).
 */
export function filesCliConfig(port: number, extra: Raw = {}): Raw {
  return {
    storeFolder: '.adm-ipfs',
    serverPort: port,
    peerDiscovery: { listen: ['/ip4/127.0.0.1/tcp/0'], bootstrap: [] },
    nodes: [],
    maxFileCount: 5,
    uploadLimitSizeBytes: 1024 * 1024,
    findFileTimeout: 1000,
    cors: { allowedOrigins: ['*'] },
    storage: { diskReserveBytes: 0 },
    ...extra,
  };
}
