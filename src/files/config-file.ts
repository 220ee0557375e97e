// Which file the files service reads, and loading it (docs/notes/files-node.md B.6).

import { resolve } from 'node:path';
import { loadedConfig, readConfigFile, type ConfigLoadOptions, type LoadedConfig } from '../config.js';
import { FILES_DEFAULT_CONFIG } from './config-defaults.js';
import { parseFilesConfig, type FilesConfig } from './config.js';

/** The environment variable that selects the configuration file (notes B.6). */
export const FILES_CONFIG_ENV = 'IPFS_NODE_CONFIG';
export const FILES_DEFAULT_CONFIG_FILE = 'config.json5';

/** `test1` is a name (→ `config.test1.json5`); anything with a path separator or a JSON extension is a path. */
function isConfigName(value: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(value) && !/\.(json5?|jsonc)$/i.test(value);
}

/**
 * Which configuration file the files service reads (notes B.6, later upstream resolution): the `--config`
 * path; else `$IPFS_NODE_CONFIG`, where a name selects `config.<name>.json5` and a path is a path; else
 * `config.json5`. Relative paths resolve against `cwd`; the result is absolute.
 * (Upstream lets the variable win over its positional argument; here an explicit `--config` flag wins,
 * as flags do for every other service of this CLI.)
 */
export function resolveFilesConfigPath(argvConfig: string | undefined, env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  if (argvConfig !== undefined && argvConfig !== '') return resolve(cwd, argvConfig);
  const selected = env[FILES_CONFIG_ENV]?.trim();
  if (selected) return resolve(cwd, isConfigName(selected) ? `config.${selected}.json5` : selected);
  return resolve(cwd, FILES_DEFAULT_CONFIG_FILE);
}

/** Loads the files configuration (notes B.6): --config, else $IPFS_NODE_CONFIG, else ./config.json5; `useDefaults` (`adm-infra all`) uses the embedded default. */
export function loadFilesConfig(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
  { cwd = process.cwd(), useDefaults = false }: ConfigLoadOptions = {},
): LoadedConfig<FilesConfig> {
  const file = useDefaults ? undefined : resolveFilesConfigPath(path, env, cwd);
  const raw = file ? readConfigFile(file) : structuredClone(FILES_DEFAULT_CONFIG);
  // Outside `all` a file is always named (./config.json5 at the end of the lookup) and must exist, as in the original.
  return loadedConfig(parseFilesConfig(raw), 'Invalid config', { file, lookup: undefined, defaults: 'the embedded defaults' }, file ?? '(embedded defaults)');
}
