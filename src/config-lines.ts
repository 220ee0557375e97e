// The lines that say where each service's configuration came from: the startup line and the `--check-config` report
// line. Each service loads its own (src/<service>/config-file.ts: `load<Service>Config`).

import type { ConfigOrigin } from './config.js';
import type { ServiceName } from './command-line.js';

/** The one startup line naming what each service read; rates keeps the original currencyinfo line (docs/notes/rates.md E), files the later upstream's (notes B.6). */
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
