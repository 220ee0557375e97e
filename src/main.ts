// Composition root: parses the command line, loads and validates each service's configuration before any
// port opens, builds one root supervisor over the requested services (plus the operator listener when a
// port is set), and owns the process lifecycle (signals, exit codes).

import { parseArgs } from 'node:util';
import { systemClock, type Clock } from '../actors/clock.js';
import { ratesTree, type RatesTreeOptions } from '../actors/rates/tree.js';
import { createRuntime, type Runtime } from '../actors/runtime.js';
import { Supervisor, type ChildSpec, type ExitReason } from '../actors/supervisor.js';
import { adminServer } from '../http/admin/admin.routes.js';
import { MIN_ADMIN_KEY_LENGTH } from '../http/auth.js';
import { listenerChild } from '../http/listener.js';
import { HttpMetrics } from '../http/metrics.js';
import { ratesServer } from '../http/rates/rates.routes.js';
import { httpEngineProblem, readConfigFile, type ConfigOrigin, type HttpEngineName } from './config.js';
import { ConfigError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { parseRatesConfig, RATES_CONFIG_LOOKUP, RATES_DEFAULT_CONFIG, resolveRatesConfigPath, type RatesConfig } from './rates/config.js';
import { FILES_DEFAULT_CONFIG, parseFilesConfig, resolveFilesConfigPath, storeDirectory, type FilesConfig } from './files/config.js';
import { scrubLogObject, scrubValue } from './files/scrub.js';
import { filesTree } from '../actors/files/tree.js';
import { nodeAdmission } from './files/admission.js';
import { filesServer } from '../http/files/files.routes.js';
import { homedir } from 'node:os';
import { transfersTree } from '../actors/transfers/tree.js';
import { gatewayView } from '../actors/transfers/gateway.js';
import { runMigrateCommand } from '../actors/transfers/migrate-command.js';
import { gatewayServer } from '../http/transfers/gateway.routes.js';
import { INDEXER_VERSION, parseTransfersConfig, type TransfersConfig } from './transfers/config.js';
import { consoleMethods } from './console/methods.js';
import { consoleNodeClient, consoleTree } from '../actors/console/tree.js';
import { rpcServer } from '../http/console/rpc.routes.js';
import { loadConsoleConfig, type ConsoleConfig } from './console/config.js';

/** spec files §8: idle connections are force-closed at 12 s of a shutdown (the hard deadline is SHUTDOWN_DEADLINE_MS). */
const FILES_DRAIN_MS = 12_000;
/**
 * spec files §8: "Supervisor stop timeouts must exceed 15 s". Requests still in flight at 12 s go on (an upload's body
 * still arriving), so the process deadline, not the supervisor, ends them: exit 1 with the timeout line.
 */
const FILES_LISTENER_STOP_MS = 16_000;

export const SERVICES = ['files', 'rates', 'transfers', 'console'] as const;
export type ServiceName = (typeof SERVICES)[number];
/** Services this build can run; the others are listed so operators see what is coming. */
export const AVAILABLE: ReadonlySet<ServiceName> = new Set(['files', 'rates', 'transfers', 'console']);

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
`;

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export interface CommandLine {
  readonly service: ServiceName | 'all';
  readonly configPath: string | undefined;
  readonly checkConfig: boolean;
  /** `transfers --migrate`: run the schema migrations and the anonymous role setup, then exit. */
  readonly migrate: boolean;
  readonly host: string;
}

export type ParsedCommandLine = { ok: true; command: CommandLine } | { ok: false; help: boolean; message?: string };

export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        'check-config': { type: 'boolean' },
        migrate: { type: 'boolean' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { ok: false, help: false, message: (error as Error).message };
  }
  if (parsed.values.help) return { ok: false, help: true };
  const [service, ...rest] = parsed.positionals;
  if (!service) return { ok: false, help: false, message: 'missing service' };
  if (rest.length > 0) return { ok: false, help: false, message: `unexpected argument: ${rest[0]}` };
  if (service !== 'all' && !(SERVICES as readonly string[]).includes(service)) {
    return { ok: false, help: false, message: `unknown service: ${service}` };
  }
  if (service === 'all' && parsed.values.config) return { ok: false, help: false, message: '--config applies to one service, not to all' };
  const migrate = parsed.values.migrate ?? false;
  if (migrate && service !== 'transfers') return { ok: false, help: false, message: '--migrate applies to the transfers service only' };
  if (migrate && parsed.values['check-config']) return { ok: false, help: false, message: '--migrate and --check-config are separate runs' };
  return {
    ok: true,
    command: {
      service: service as ServiceName | 'all',
      configPath: parsed.values.config,
      checkConfig: parsed.values['check-config'] ?? false,
      migrate,
      host: parsed.values.host ?? '0.0.0.0',
    },
  };
}

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

/**
 * The process logger's threshold for a rates `log_level`. The rates actors filter their own lines in the original's
 * ranking (src/rates/log-level.ts: `log` hides info lines); the runtime's own lines (config read, listening,
 * started, supervision) stay visible at `log`, which operators and the black-box tests wait for.
 */
const PINO_LEVELS = { none: 'silent', error: 'error', warn: 'warn', info: 'info', log: 'info' } as const;

export interface OperatorSettings {
  readonly port: number;
  readonly host: string;
  readonly apiKey: string | undefined;
  /** ADMIN_ENGINE: the operator listener's HTTP engine (http/engine.ts). */
  readonly engine?: HttpEngineName;
}

/**
 * The operator listener: ADMIN_PORT / ADMIN_HOST / ADMIN_API_KEY, each falling back to the service
 * configuration's `server.admin` block; undefined when no port is set (several processes side by side).
 */
export function operatorSettings(env: NodeJS.ProcessEnv, fromConfig: { port?: number; host?: string; apiKey?: string } = {}): OperatorSettings | undefined {
  const rawPort = env.ADMIN_PORT || (fromConfig.port === undefined ? undefined : String(fromConfig.port));
  if (rawPort === undefined) return undefined;
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError('Invalid operator settings', [`ADMIN_PORT: must be a port number, got '${rawPort}'`]);
  const apiKey = env.ADMIN_API_KEY?.trim() || fromConfig.apiKey?.trim() || undefined;
  if (apiKey !== undefined && apiKey.length < MIN_ADMIN_KEY_LENGTH) {
    throw new ConfigError('Invalid operator settings', [`ADMIN_API_KEY: must be at least ${MIN_ADMIN_KEY_LENGTH} characters`]);
  }
  const engineProblem = httpEngineProblem('ADMIN_ENGINE', env.ADMIN_ENGINE || undefined);
  if (engineProblem) throw new ConfigError('Invalid operator settings', [engineProblem]);
  const engine = (env.ADMIN_ENGINE || undefined) as HttpEngineName | undefined;
  return { port, host: env.ADMIN_HOST || fromConfig.host || '127.0.0.1', apiKey, ...(engine ? { engine } : {}) };
}

export interface ServiceOptions {
  readonly rates?: RatesTreeOptions;
}

/** The children of the root supervisor for a validated command line. */
export function serviceChildren(
  command: CommandLine,
  configs: { rates?: RatesConfig; files?: FilesConfig; transfers?: TransfersConfig; console?: ConsoleConfig },
  operator: OperatorSettings | undefined,
  options: ServiceOptions = {},
): ChildSpec[] {
  const children: ChildSpec[] = [];
  // One set of request counters for every listener, served by the operator listener.
  const metrics = new HttpMetrics();
  if (configs.rates) {
    const rates = configs.rates;
    children.push(
      ratesTree(rates, {
        ...options.rates,
        edge: [listenerChild('rates.http', (runtime) => ratesServer(runtime, { host: command.host, port: rates.server.port, metrics, engine: rates.server.engine }))],
      }),
    );
  }
  if (configs.files) {
    const config = configs.files;
    const admission = nodeAdmission(config);
    const edge = listenerChild('files.http', (runtime) => filesServer(runtime, { config, host: command.host, metrics, admission }), FILES_DRAIN_MS, FILES_LISTENER_STOP_MS);
    children.push(filesTree({ config, storeDirectory: storeDirectory(config, homedir()) }, { edge: [edge], admission }));
  }
  if (configs.transfers) {
    const { gateway } = configs.transfers;
    const edge = (holder: Parameters<typeof gatewayView>[1]) => [
      listenerChild('transfers.http', (runtime) =>
        gatewayServer(runtime, {
          host: gateway.host ?? command.host,
          port: gateway.port,
          schemas: gateway.schemas,
          version: INDEXER_VERSION,
          view: gatewayView(runtime, holder, { maxRows: gateway.maxRows, maxOffset: gateway.maxOffset }),
          metrics,
          engine: gateway.engine,
        }),
      ),
    ];
    children.push(transfersTree(configs.transfers, { edge }));
  }
  if (configs.console) {
    const config = configs.console;
    const edge = listenerChild('console.http', (runtime) =>
      rpcServer(runtime, {
        host: config.rpc.host ?? command.host,
        port: config.rpc.port,
        methods: consoleMethods({ node: consoleNodeClient(runtime, config), config, clock: runtime.clock }),
        metrics,
        engine: config.rpc.engine,
      }),
    );
    children.push(consoleTree(config, { edge: [edge] }));
  }
  if (operator) {
    children.push(
      listenerChild('admin.http', (runtime) => adminServer(runtime, { host: operator.host, port: operator.port, apiKey: operator.apiKey, roots: ['root'], metrics, engine: operator.engine })),
    );
  }
  return children;
}

export interface Running {
  readonly runtime: Runtime;
  readonly root: Supervisor;
}

/** Starts the root supervisor. Throws (after stopping what started) when a child cannot start. */
export async function startRoot(children: ChildSpec[], logger: Logger, clock: Clock = systemClock): Promise<Running> {
  const runtime = createRuntime(clock, logger);
  const record = runtime.inspector.record('root');
  record.machineId = 'supervisor';
  record.children = children.map((child) => child.id);
  record.stateValue = 'one_for_one';
  const root = new Supervisor({ id: 'root', strategy: 'one_for_one', intensity: 3, periodMs: 60_000, children }, runtime);
  await root.start();
  record.status = 'running';
  return { runtime, root };
}

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
  const wanted: ServiceName[] = command.service === 'all' ? SERVICES.filter((s) => AVAILABLE.has(s)) : [command.service];
  const missing = wanted.filter((s) => !AVAILABLE.has(s));
  if (missing.length > 0) {
    process.stderr.write(`adm-infra: the ${missing.join(', ')} service is not available in this build yet\n`);
    return EXIT.usage;
  }

  const configs: { rates?: RatesConfig; files?: FilesConfig; transfers?: TransfersConfig; console?: ConsoleConfig } = {};
  let operator: OperatorSettings | undefined;
  const warnings: string[] = [];
  /** Where each service's configuration came from (a file, or the defaults after the lookup). */
  const origins: Array<{ service: ServiceName; origin: ConfigOrigin }> = [];
  const useDefaults = command.service === 'all';
  try {
    if (wanted.includes('rates')) {
      const loaded = loadRatesConfig(command.configPath, env, { useDefaults });
      configs.rates = loaded.config;
      warnings.push(...loaded.warnings);
      origins.push({ service: 'rates', origin: loaded.origin });
    }
    if (wanted.includes('files')) {
      const loaded = loadFilesConfig(command.configPath, env, useDefaults);
      configs.files = loaded.config;
      warnings.push(...loaded.warnings);
      origins.push({ service: 'files', origin: loaded.origin });
    }
    if (wanted.includes('transfers')) {
      const loaded = loadTransfersConfig(command.configPath, env, useDefaults);
      configs.transfers = loaded.config;
      warnings.push(...loaded.warnings);
      origins.push({ service: 'transfers', origin: loaded.origin });
    }
    if (wanted.includes('console')) {
      const loaded = loadConsoleConfig(command.configPath, env, useDefaults);
      configs.console = loaded.config;
      origins.push({ service: 'console', origin: loaded.origin });
    }
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

  return runRoot(serviceChildren(command, configs, operator), logger, () =>
    logger.info({ services: wanted, operator: operator ? `${operator.host}:${operator.port}` : 'off' }, 'adm-infra started'),
  );
}

/** Starts the root and resolves with the exit code: 0 after a signal, 1 when startup failed, supervision gave up or the shutdown deadline passed. */
export async function runRoot(children: ChildSpec[], logger: Logger, onStarted?: (running: Running) => void): Promise<number> {
  // Signals are caught from the very start: a SIGTERM while the store opens must not kill the process
  // half-way; the shutdown then begins as soon as the root has started, and the deadline runs from the signal.
  const signals = new ShutdownSignals(logger);
  const started = await Promise.race([
    startRoot(children, logger).then(
      (running) => ({ running }),
      (error: unknown) => ({ error }),
    ),
    signals.deadlinePassed.then(() => 'deadline' as const),
  ]);
  if (started === 'deadline') return EXIT.failure;
  if ('error' in started) {
    signals.dispose();
    logger.fatal({ err: started.error }, 'startup failed');
    return EXIT.failure;
  }
  onStarted?.(started.running);
  return waitForExit(started.running, logger, signals);
}

/**
 * spec files §8: the hard deadline of a graceful shutdown. Listeners force-close idle connections at 12 s
 * (FILES_DRAIN_MS); a process still stopping at 15 s logs the timeout and exits 1.
 */
export const SHUTDOWN_DEADLINE_MS = 15_000;

/**
 * SIGINT and SIGTERM, each handled once: the first starts the shutdown and the deadline, later ones are
 * logged and ignored, so an impatient second Ctrl-C cannot cut an upload's rollback short.
 */
class ShutdownSignals {
  /** Resolves when the deadline after the first signal has passed (the timeout is logged by then). */
  readonly deadlinePassed: Promise<void>;
  #received: NodeJS.Signals | undefined;
  #onFirst: (() => void) | undefined;
  #deadline: NodeJS.Timeout | undefined;
  #passed!: () => void;
  readonly #handler = (signal: NodeJS.Signals) => {
    if (this.#received) {
      this.logger.warn({ signal }, 'already shutting down; signal ignored');
      return;
    }
    this.#received = signal;
    this.logger.info({ signal }, 'shutting down');
    this.#deadline = setTimeout(() => {
      this.logger.error({ deadlineMs: this.deadlineMs }, 'shutdown timed out; exiting');
      this.#passed();
    }, this.deadlineMs);
    this.#onFirst?.();
  };

  constructor(
    private readonly logger: Logger,
    private readonly deadlineMs = SHUTDOWN_DEADLINE_MS,
  ) {
    this.deadlinePassed = new Promise((resolve) => (this.#passed = resolve));
    process.on('SIGINT', this.#handler);
    process.on('SIGTERM', this.#handler);
  }

  /** Calls `listener` on the first signal, at once when it already came (during startup). */
  onFirst(listener: () => void): void {
    this.#onFirst = listener;
    if (this.#received) listener();
  }

  dispose(): void {
    clearTimeout(this.#deadline);
    process.removeListener('SIGINT', this.#handler);
    process.removeListener('SIGTERM', this.#handler);
  }
}

/** Resolves with the exit code once the root stops: 0 after a signal, 1 when supervision gave up or the deadline passed. */
function waitForExit({ root }: Running, logger: Logger, signals: ShutdownSignals): Promise<number> {
  signals.onFirst(() => root.shutdown());
  return Promise.race([
    signals.deadlinePassed.then(() => EXIT.failure),
    root.exited.then((reason: ExitReason) => {
      signals.dispose();
      if (reason.kind === 'error') {
        logger.fatal({ err: reason.error }, 'supervision gave up; exiting');
        return EXIT.failure;
      }
      logger.info('stopped');
      return EXIT.ok;
    }),
  ]);
}
