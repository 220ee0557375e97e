// Each service's configuration as `adm-infra` loads it: where it is looked up (the original's places), what was read,
// and the one line that says so.

import { readConfigFile, type ConfigOrigin } from './config.js';
import { ConfigError } from './errors.js';
import type { ServiceName } from './command-line.js';
import { parseRatesConfig, type RatesConfig } from './rates/config.js';
import { RATES_DEFAULT_CONFIG } from './rates/config-defaults.js';
import { RATES_CONFIG_LOOKUP, resolveRatesConfigPath } from './rates/config-file.js';
import { parseFilesConfig, type FilesConfig } from './files/config.js';
import { FILES_DEFAULT_CONFIG } from './files/config-defaults.js';
import { resolveFilesConfigPath } from './files/config-file.js';
import { parseTransfersConfig, type TransfersConfig } from './transfers/config.js';

export interface LoadedConfig<C> {
  readonly config: C;
  /** The file, else a parenthesised name of the defaults. */
  readonly source: string;
  readonly origin: ConfigOrigin;
  readonly warnings: string[];
}

/**
 * Loads the rates configuration: --config, else $CURRENCYINFO_CONFIG, else ./config.jsonc in `cwd` (the original's
 * file), else the embedded defaults; `useDefaults` (`adm-infra all`) reads no file.
 */
export function loadRatesConfig(
  path: string | undefined,
  env: NodeJS.ProcessEnv,
  { cwd = process.cwd(), useDefaults = false }: { cwd?: string; useDefaults?: boolean } = {},
): LoadedConfig<RatesConfig> {
  const file = useDefaults ? undefined : resolveRatesConfigPath(path, env, cwd);
  const raw = file ? readConfigFile(file) : structuredClone(RATES_DEFAULT_CONFIG);
  const result = parseRatesConfig(raw);
  if (!result.ok) throw new ConfigError('App configuration is invalid', result.problems, file);
  const origin = { file, lookup: useDefaults ? undefined : RATES_CONFIG_LOOKUP, defaults: 'the embedded defaults' };
  return { config: result.config, source: file ?? '(embedded defaults)', origin, warnings: result.warnings };
}

/** Loads the files configuration (notes B.6): --config, else $IPFS_NODE_CONFIG, else ./config.json5; `all` uses the embedded default. */
export function loadFilesConfig(path: string | undefined, env: NodeJS.ProcessEnv, useDefaults: boolean): LoadedConfig<FilesConfig> {
  const file = useDefaults ? undefined : resolveFilesConfigPath(path, env, process.cwd());
  const raw = file ? readConfigFile(file) : structuredClone(FILES_DEFAULT_CONFIG);
  const result = parseFilesConfig(raw);
  if (!result.ok) throw new ConfigError('Invalid config', [...result.problems], file);
  // Outside `all` a file is always named (./config.json5 at the end of the lookup) and must exist, as in the original.
  const origin = { file, lookup: undefined, defaults: 'the embedded defaults' };
  return { config: result.config, source: file ?? '(embedded defaults)', origin, warnings: [...result.warnings] };
}

/** Loads the transfers settings: the file (--config, else $TRANSFERS_CONFIG, else none) under the environment's variables. */
export function loadTransfersConfig(path: string | undefined, env: NodeJS.ProcessEnv, useDefaults = false): LoadedConfig<TransfersConfig> {
  const file = useDefaults ? undefined : path || env.TRANSFERS_CONFIG || undefined;
  const result = parseTransfersConfig(file ? readConfigFile(file) : undefined, useDefaults ? {} : env);
  if (!result.ok) throw new ConfigError('Invalid transfers configuration', result.problems, file);
  const origin = useDefaults
    ? { file, lookup: undefined, defaults: 'the embedded defaults' }
    : { file, lookup: '--config, $TRANSFERS_CONFIG', defaults: 'the environment and the embedded defaults' };
  return { config: result.config, source: file ?? '(environment and embedded defaults)', origin, warnings: result.warnings };
}

/** The one startup line naming what each service read; rates keeps the original currencyinfo line (notes/rates.md E), files the later upstream's (notes B.6). */
export function configOriginLine(service: ServiceName, origin: ConfigOrigin): string {
  const { file, lookup, defaults } = origin;
  if (file !== undefined) {
    if (service === 'rates') return `InfoService successfully read the config-file '${file}'.`;
    if (service === 'files') return `Using config file: ${file}`;
    return `configuration read from '${file}'`;
  }
  return lookup ? `no configuration file found (${lookup}): ${defaults} are used` : `${defaults} are used (adm-infra all reads no configuration file)`;
}

/** The `--check-config` report line of one service's valid configuration. */
export function configCheckLine(origin: ConfigOrigin): string {
  const { file, lookup, defaults } = origin;
  if (file !== undefined) return `Configuration is valid (${file})`;
  return lookup ? `no configuration file found (${lookup}): ${defaults} are valid` : `Configuration is valid (${defaults}; adm-infra all reads no configuration file)`;
}
