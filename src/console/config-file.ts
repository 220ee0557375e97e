// Which file the console reads, and loading it (spec B; notes C.3).
//
// Lookup: `--config FILE`, else the first existing of `$ADM_CONFIG_PATH` (default `~/.adm`) + `/` +
// `$ADM_CONFIG_FILENAME` (default `config.jsonc`) and `./<ADM_CONFIG_FILENAME>`; a name ending in `.json` also finds
// its `.jsonc` sibling when ADM_CONFIG_FILENAME is unset. None found: the defaults alone.

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, normalize, resolve } from 'node:path';
import { loadedConfig, readConfigFile, type ConfigLoadOptions, type LoadedConfig } from '../config.js';
import { PACKAGED_CONSOLE_CONFIG, parseConsoleConfig, type ConsoleConfig } from './config.js';

/** The file name the lookup tries and the configuration folder it tries first. */
function lookupPlaces(env: Readonly<Record<string, string | undefined>>, home: string): { fileName: string; inFolder: string } {
  const fileName = env.ADM_CONFIG_FILENAME || 'config.jsonc';
  return { fileName, inFolder: normalize(join(env.ADM_CONFIG_PATH || join(home, '.adm'), fileName)) };
}

/** Which file the original would read: the first that exists, else undefined (defaults alone). */
export function resolveConsoleConfigPath(explicit: string | undefined, env: Readonly<Record<string, string | undefined>>, home: string, cwd: string): string | undefined {
  if (explicit) return explicit;
  const { fileName, inFolder } = lookupPlaces(env, home);
  for (const candidate of [inFolder, resolve(cwd, fileName)]) {
    if (existsSync(candidate)) return candidate;
    if (!env.ADM_CONFIG_FILENAME && existsSync(`${candidate}c`)) return `${candidate}c`;
  }
  return undefined;
}

/**
 * Resolves, reads and validates the console config (notes C.3); `useDefaults` skips every file (`adm-infra all`).
 * `cwd` holds the `./<ADM_CONFIG_FILENAME>` candidate. A relative `--config` path is kept as written (clientVersion
 * and the startup line keep the operator's spelling) unless a `cwd` is given, which it is then resolved against.
 */
export function loadConsoleConfig(path: string | undefined, env: NodeJS.ProcessEnv, { cwd, useDefaults = false }: ConfigLoadOptions = {}): LoadedConfig<ConsoleConfig> {
  const explicit = path && cwd !== undefined ? resolve(cwd, path) : path;
  const home = homedir();
  const file = useDefaults ? undefined : resolveConsoleConfigPath(explicit, env, home, cwd ?? process.cwd());
  const result = parseConsoleConfig(file ? readConfigFile(file) : undefined, file ?? PACKAGED_CONSOLE_CONFIG);
  const origin = { file, lookup: useDefaults ? undefined : consoleConfigLookup(env, home), defaults: 'the packaged defaults' };
  // The console's format has no warnings.
  // Its source is the parsed config's (the file, or the packaged defaults' name); a failed parse throws first.
  return loadedConfig(result, 'Config validation error', origin, result.ok ? result.config.source : '');
}

/** The places the lookup tried, for the line that says none held a file. */
export function consoleConfigLookup(env: Readonly<Record<string, string | undefined>>, home: string): string {
  const { fileName, inFolder } = lookupPlaces(env, home);
  return `--config, ${inFolder} ($ADM_CONFIG_PATH/$ADM_CONFIG_FILENAME), ./${fileName}`;
}
