// Which file the transfers service reads, and loading it under the environment's variables (spec A; notes A.4).

import { resolve } from 'node:path';
import { loadedConfig, readConfigFile, type ConfigLoadOptions, type LoadedConfig } from '../config.js';
import { parseTransfersConfig, type TransfersConfig } from './config.js';

/** The environment variable that names the settings file. */
export const TRANSFERS_CONFIG_ENV = 'TRANSFERS_CONFIG';

/**
 * Loads the transfers settings: the file (--config, else $TRANSFERS_CONFIG, else none) under the environment's
 * variables; `useDefaults` (`adm-infra all`) reads neither. A relative path is kept as written (the startup line
 * keeps the operator's spelling) unless a `cwd` is given, which it is then resolved against.
 */
export function loadTransfersConfig(path: string | undefined, env: NodeJS.ProcessEnv, { cwd, useDefaults = false }: ConfigLoadOptions = {}): LoadedConfig<TransfersConfig> {
  const named = useDefaults ? undefined : path || env[TRANSFERS_CONFIG_ENV] || undefined;
  const file = named === undefined || cwd === undefined ? named : resolve(cwd, named);
  const result = parseTransfersConfig(file ? readConfigFile(file) : undefined, useDefaults ? {} : env);
  const origin = useDefaults
    ? { file, lookup: undefined, defaults: 'the embedded defaults' }
    : { file, lookup: `--config, $${TRANSFERS_CONFIG_ENV}`, defaults: 'the environment and the embedded defaults' };
  return loadedConfig(result, 'Invalid transfers configuration', origin, file ?? '(environment and embedded defaults)');
}
