// The entry of `adm-infra`: reads the command line (src/command-line.ts), loads and validates each requested service's
// configuration before any port opens (`load<Service>Config` in src/<service>/config-file.ts; the lines saying what
// was read in src/config-lines.ts), composes the services and the operator listener (src/compose.ts) and runs them
// under one root supervisor until a signal (src/lifecycle.ts). `--check-config` and `transfers --migrate` end here.

import { MIN_ADMIN_KEY_LENGTH } from '../http/auth.js';
import { EXIT, parseCommandLine, SERVICES, type ServiceName } from './command-line.js';
import { operatorSettings, serviceChildren, type OperatorSettings } from './compose.js';
import { type ConfigOrigin, type LoadedConfig } from './config.js';
import { configCheckLine, configOriginLine } from './config-lines.js';
import { environmentProblems } from './environment.js';
import { ConfigError } from './errors.js';
import { createLogger } from './logger.js';
import type { ConsoleConfig } from './console/config.js';
import type { FilesConfig } from './files/config.js';
import { scrubLogObject, scrubValue } from './files/scrub.js';
import { runRoot } from './lifecycle.js';
import type { RatesConfig } from './rates/config.js';
import type { TransfersConfig } from './transfers/config.js';

export const USAGE = `Usage: adm-infra <service> [--config FILE] [--check-config] [--host HOST]
       adm-infra transfers [--config FILE] --migrate

Services:
  rates       exchange-rates aggregator (/get, /getHistory, /status), default port 36661
  files       content-addressed file storage node (one node: upload, download, lifecycle), default port 4000
  transfers   Ethereum transfers indexer and PostgREST-compatible read gateway, default port 3000
  console     ADAMANT JSON-RPC console server, default port 5080 (rpc.port)
  all         every available service in one process, each on its embedded defaults

Options:
  --config FILE     the service's configuration file
                    rates: JSONC/JSON5 in the currencyinfo 4.2 format; default $CURRENCYINFO_CONFIG, else
                    ./config.jsonc, else the embedded defaults
                    files: the ipfs-node config.json5 format; default $IPFS_NODE_CONFIG (a name selects
                    config.<name>.json5), else ./config.json5
                    transfers: JSON/JSON5 keyed by the original's variable names (DB_NAME, ETH_URL,
                    START_BLOCK, CONFIRMATIONS_BLOCK, PERIOD, PGRST_DB_URI, PGRST_SERVER_PORT, …);
                    default $TRANSFERS_CONFIG; the same variables in the environment win over the file
                    console: the adamant-console JSONC format; default $ADM_CONFIG_PATH (~/.adm) +
                    $ADM_CONFIG_FILENAME (config.jsonc), else ./config.jsonc, else the packaged defaults
  --check-config    validate the configuration, print the report and exit (0 valid, 1 invalid)
  --migrate         transfers only: create or upgrade the database schema and the anonymous role with
                    DB_NAME's login (else PGRST_DB_URI's; the embedded database: DATA_DIR), print the
                    report and exit (0 done; 1 cannot connect, no rights, or a schema newer than this build)
  --host HOST       address the public listeners bind to (default 0.0.0.0)
  -h, --help        this text

Operator listener (off unless a port is set): ADMIN_PORT, ADMIN_HOST (default 127.0.0.1),
ADMIN_API_KEY (at least ${MIN_ADMIN_KEY_LENGTH} characters; without it every operator route answers 503);
each falls back to the service configuration's server.admin block (port, host, apiKey).

Environment (checked at startup; another value is an error): ADM_HTTP_ENGINE (uws or node, the HTTP engine of
listeners whose configuration names none), ADM_HTTP_UWS (missing: node:http everywhere), LOG_LEVEL (fatal, error,
warn, info, debug, trace or silent, when the configuration sets no level).
`;

/**
 * The process logger's threshold for a rates `log_level`. The rates actors filter their own lines in the original's
 * ranking (src/rates/log-level.ts: `log` hides info lines); the runtime's own lines (config read, listening,
 * started, supervision) stay visible at `log`, which operators and the black-box tests wait for.
 */
const PINO_LEVELS = { none: 'silent', error: 'error', warn: 'warn', info: 'info', log: 'info' } as const;

function printConfigReport(error: ConfigError): void {
  const file = error.file === undefined ? [] : [`Configuration file: ${error.file}`];
  const lines = [`${error.message}:`, ...error.problems.map((p) => `  ${p}`), ...file, 'Cannot start the app.'];
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** Runs the command line; resolves with the process exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (!parsed.ok) {
    if (parsed.message) process.stderr.write(`adm-infra: ${parsed.message}\n\n`);
    (parsed.help ? process.stdout : process.stderr).write(USAGE);
    return parsed.help ? EXIT.ok : EXIT.usage;
  }
  const { command } = parsed;
  const wanted: ServiceName[] = command.service === 'all' ? [...SERVICES] : [command.service];

  const configs: { rates?: RatesConfig; files?: FilesConfig; transfers?: TransfersConfig; console?: ConsoleConfig } = {};
  let operator: OperatorSettings | undefined;
  const warnings: string[] = [];
  /** Where each service's configuration came from (a file, or the defaults after the lookup). */
  const origins: Array<{ service: ServiceName; origin: ConfigOrigin }> = [];
  const useDefaults = command.service === 'all';
  /** Keeps one service's warnings and origin; hands back its configuration. */
  const kept = <C>(service: ServiceName, loaded: LoadedConfig<C>): C => {
    warnings.push(...loaded.warnings);
    origins.push({ service, origin: loaded.origin });
    return loaded.config;
  };
  try {
    const environment = environmentProblems(env);
    if (environment.length > 0) throw new ConfigError('Invalid environment', environment);
    // Each loader is imported only for a service that runs: the files config alone brings ~200 modules (libp2p peer
    // ids, multiaddrs, CIDs) that a rates or console process would load for nothing (README "Dependencies").
    if (wanted.includes('rates')) configs.rates = kept('rates', (await import('./rates/config-file.js')).loadRatesConfig(command.configPath, env, { useDefaults }));
    if (wanted.includes('files')) configs.files = kept('files', (await import('./files/config-file.js')).loadFilesConfig(command.configPath, env, { useDefaults }));
    if (wanted.includes('transfers')) configs.transfers = kept('transfers', (await import('./transfers/config-file.js')).loadTransfersConfig(command.configPath, env, { useDefaults }));
    if (wanted.includes('console')) configs.console = kept('console', (await import('./console/config-file.js')).loadConsoleConfig(command.configPath, env, { useDefaults }));
    operator = operatorSettings(env, configs.rates?.server.admin);
  } catch (error) {
    if (error instanceof ConfigError) {
      printConfigReport(error);
      return EXIT.failure;
    }
    throw error;
  }
  if (command.checkConfig) {
    const report = useDefaults ? ['Configuration is valid (every service on its embedded defaults; adm-infra all reads no configuration file)'] : origins.map(({ origin }) => configCheckLine(origin));
    process.stdout.write(`${report.join('\n')}\n${warnings.map((w) => `warning: ${w}\n`).join('')}`);
    return EXIT.ok;
  }
  if (command.migrate && configs.transfers) {
    // A one-off run, not a service: plain lines (the report on stdout, reasons and warnings on stderr), no listener.
    for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
    const { runMigrateCommand } = await import('./transfers-migrate.js');
    return runMigrateCommand(configs.transfers, { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) });
  }

  const level =
    command.service === 'rates' && configs.rates ? PINO_LEVELS[configs.rates.log_level] : command.service === 'files' && configs.files ? configs.files.logLevel : undefined;
  // spec files §6: no CID, peer id, multiaddr or stack in any line once the files service runs here.
  const logger = createLogger({ level, scrub: configs.files ? { log: scrubLogObject, value: scrubValue } : undefined });
  // One line per service naming the file it read, or the lookup that found none and the defaults used.
  for (const { service, origin } of origins) {
    logger.info({ service, config: origin.file }, configOriginLine(service, origin));
  }
  for (const warning of warnings) logger.warn(warning);

  return runRoot(await serviceChildren(command, configs, operator), logger, () =>
    logger.info({ services: wanted, operator: operator ? `${operator.host}:${operator.port}` : 'off' }, 'adm-infra started'),
  );
}
