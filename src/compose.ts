// The composition of the services: each validated configuration becomes its supervision tree with its listener, plus
// the operator listener (src/main.ts starts the root over these children). An entry file: it wires every layer.

import { homedir } from 'node:os';
import type { RatesTreeOptions } from '../actors/rates/tree.js';
import type { ChildSpec } from '../actors/supervisor.js';
import { MIN_ADMIN_KEY_LENGTH } from '../http/auth.js';
import { listenerChild } from '../http/listener.js';
import { HttpMetrics } from '../http/metrics.js';
import type { CommandLine } from './command-line.js';
import { httpEngineProblem, type HttpEngineName } from './config.js';
import type { ConsoleConfig } from './console/config.js';
import { ConfigError } from './errors.js';
import type { FilesConfig } from './files/config.js';
import type { RatesConfig } from './rates/config.js';
import type { TransfersConfig } from './transfers/config.js';

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

/**
 * The children of the root supervisor for a validated command line. A service's modules are loaded only when it runs:
 * each brings its own libraries (libp2p and helia, the MongoDB driver with its 17 MiB serialisation buffer, PGlite,
 * elkjs for the operator's diagrams), and a files node that loaded them all idled ~28 MiB higher (165 vs 137 MiB).
 */
export async function serviceChildren(
  command: CommandLine,
  configs: { rates?: RatesConfig; files?: FilesConfig; transfers?: TransfersConfig; console?: ConsoleConfig },
  operator: OperatorSettings | undefined,
  options: ServiceOptions = {},
): Promise<ChildSpec[]> {
  const children: ChildSpec[] = [];
  // One set of request counters for every listener, served by the operator listener.
  const metrics = new HttpMetrics();
  if (configs.rates) {
    const rates = configs.rates;
    const [{ ratesTree }, { ratesServer }] = await Promise.all([import('../actors/rates/tree.js'), import('../http/rates/rates.routes.js')]);
    children.push(
      ratesTree(rates, {
        ...options.rates,
        edge: [listenerChild('rates.http', (runtime) => ratesServer(runtime, { host: command.host, port: rates.server.port, metrics, engine: rates.server.engine }))],
      }),
    );
  }
  if (configs.files) {
    const config = configs.files;
    const [{ filesTree }, { filesServer }, { nodeAdmission }, { storeDirectory }] = await Promise.all([
      import('../actors/files/tree.js'),
      import('../http/files/files.routes.js'),
      import('./files/admission.js'),
      import('./files/config.js'),
    ]);
    const admission = nodeAdmission(config);
    const edge = listenerChild('files.http', (runtime) => filesServer(runtime, { config, host: command.host, metrics, admission }), FILES_DRAIN_MS, FILES_LISTENER_STOP_MS);
    children.push(filesTree({ config, storeDirectory: storeDirectory(config, homedir()) }, { edge: [edge], admission }));
  }
  if (configs.transfers) {
    const { gateway } = configs.transfers;
    const [{ transfersTree }, { transfersApi }, { gatewayServer }, { INDEXER_VERSION }] = await Promise.all([
      import('../actors/transfers/tree.js'),
      import('../actors/transfers/api.js'),
      import('../http/transfers/gateway.routes.js'),
      import('./transfers/config.js'),
    ]);
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
    const [{ consoleTree }, { consoleApi }, { rpcServer }] = await Promise.all([
      import('../actors/console/tree.js'),
      import('../actors/console/api.js'),
      import('../http/console/rpc.routes.js'),
    ]);
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
    const { adminServer } = await import('../http/admin/admin.routes.js');
    children.push(
      listenerChild('admin.http', (runtime) => adminServer(runtime, { host: operator.host, port: operator.port, apiKey: operator.apiKey, roots: ['root'], metrics, engine: operator.engine })),
    );
  }
  return children;
}
