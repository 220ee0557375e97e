// Which file the rates service reads, and loading it (docs/notes/rates.md E, F.25).

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadedConfig, readConfigFile, type ConfigLoadOptions, type LoadedConfig } from '../config.js';
import { RATES_DEFAULT_CONFIG } from './config-defaults.js';
import { parseRatesConfig, type RatesConfig } from './config.js';

/** Names the file to read (notes F.25: "also honour an env var … so tests can run several instances"). */
export const RATES_CONFIG_ENV = 'CURRENCYINFO_CONFIG';
/** The original reads `./config.jsonc` in the working directory (notes E). */
export const RATES_CONFIG_FILE = 'config.jsonc';
/** The lookup, as the startup line and `--check-config` name it when no file was found. */
const RATES_CONFIG_LOOKUP = `--config, $${RATES_CONFIG_ENV}, ./${RATES_CONFIG_FILE}`;

/**
 * Which file the rates service reads: the `--config` path; else `$CURRENCYINFO_CONFIG`; else `./config.jsonc`
 * in `cwd` when it exists; else undefined (the embedded defaults). A file named by the flag or the variable
 * must exist (reading it reports "No config found"), so a typo never falls through to the defaults. Empty
 * values count as unset; relative paths resolve against `cwd`, so the startup line names an absolute path.
 * `exists` is injectable so the order can be tested without a file system.
 */
export function resolveRatesConfigPath(
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (explicit) return resolve(cwd, explicit);
  const fromEnv = env[RATES_CONFIG_ENV];
  if (fromEnv) return resolve(cwd, fromEnv);
  const local = resolve(cwd, RATES_CONFIG_FILE);
  return exists(local) ? local : undefined;
}

/**
 * Loads the rates configuration: --config, else $CURRENCYINFO_CONFIG, else ./config.jsonc in `cwd` (the original's
 * file), else the embedded defaults; `useDefaults` (`adm-infra all`) reads no file.
 */
export function loadRatesConfig(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
  { cwd = process.cwd(), useDefaults = false }: ConfigLoadOptions = {},
): LoadedConfig<RatesConfig> {
  const file = useDefaults ? undefined : resolveRatesConfigPath(path, env, cwd);
  const raw = file ? readConfigFile(file) : structuredClone(RATES_DEFAULT_CONFIG);
  const origin = { file, lookup: useDefaults ? undefined : RATES_CONFIG_LOOKUP, defaults: 'the embedded defaults' };
  return loadedConfig(parseRatesConfig(raw), 'App configuration is invalid', origin, file ?? '(embedded defaults)');
}
