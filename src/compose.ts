// The composition of the services: each validated configuration becomes its supervision tree with its listener, plus
// the operator listener (src/main.ts starts the root over these children). An entry file: it wires every layer.

import { homedir } from 'node:os';
import { consoleApi } from '../actors/console/api.js';
import { consoleTree } from '../actors/console/tree.js';
import { filesTree } from '../actors/files/tree.js';
import { ratesTree, type RatesTreeOptions } from '../actors/rates/tree.js';
import type { ChildSpec } from '../actors/supervisor.js';
import { transfersApi } from '../actors/transfers/api.js';
import { transfersTree } from '../actors/transfers/tree.js';
import { adminServer } from '../http/admin/admin.routes.js';
import { MIN_ADMIN_KEY_LENGTH } from '../http/auth.js';
import { rpcServer } from '../http/console/rpc.routes.js';
import { filesServer } from '../http/files/files.routes.js';
import { listenerChild } from '../http/listener.js';
import { HttpMetrics } from '../http/metrics.js';
import { ratesServer } from '../http/rates/rates.routes.js';
import { gatewayServer } from '../http/transfers/gateway.routes.js';
import type { CommandLine } from './command-line.js';
import { httpEngineProblem, type HttpEngineName } from './config.js';
import type { ConsoleConfig } from './console/config.js';
import { ConfigError } from './errors.js';
import { nodeAdmission } from './files/admission.js';
import { storeDirectory, type FilesConfig } from './files/config.js';
import type { RatesConfig } from './rates/config.js';
import { INDEXER_VERSION, type TransfersConfig } from './transfers/config.js';

/** spec files §8: idle connections are force-closed at 12 s of a shutdown (the hard deadline is SHUTDOWN_DEADLINE_MS). */
const FILES_DRAIN_MS = 12_000;
/**
 * spec files §8: "Supervisor stop timeouts must exceed 15 s". Requests still in flight at 12 s go on (an upload's body
 * still arriving), so the process deadline, not the supervisor, ends them: exit 1 with the timeout line.
 */
const FILES_LISTENER_STOP_MS = 16_000;

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
    const edge = (holder: Parameters<typeof transfersApi>[1]) => [
      listenerChild('transfers.http', (runtime) =>
        gatewayServer(runtime, {
          host: gateway.host ?? command.host,
          port: gateway.port,
          schemas: gateway.schemas,
          version: INDEXER_VERSION,
          api: transfersApi(runtime, holder, { maxRows: gateway.maxRows, maxOffset: gateway.maxOffset }),
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
        api: consoleApi(runtime, config),
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
