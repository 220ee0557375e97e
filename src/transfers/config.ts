// The transfers service's settings (spec A; notes A.4, F.2, F.3). An existing deployment configures the original
// indexer with environment variables (DB_NAME, ETH_URL, START_BLOCK, CONFIRMATIONS_BLOCK, PERIOD, LOG_FILE) and
// PostgREST with its own config file or PGRST_* variables; both carry over unchanged:
//
//   - a JSON/JSON5 config file whose keys are those variable names, or PostgREST's config-file names for the gateway
//     (`db-uri`, `db-schemas`, `db-anon-role`, `db-max-rows`, `db-pool`, `server-host`, `server-port`);
//   - the same variables in the environment, which win over the file (as PostgREST's do).
//
// Neither DB_NAME nor PGRST_DB_URI → the embedded PGlite database in DATA_DIR. One of them → both parts use it.
// Unknown keys in the file are refused (a misspelt PERIOD must not silently become 20 s).
//
// This file holds the settings' shape and the resolver; each concern has its own file: the accepted names and the
// file's schema (config-schema.ts), the defaults (config-defaults.ts), merging the file under the environment and
// typed reads (config-settings.ts), the database, its connection strings, schemas and role (config-database.ts), and
// which file is read (config-file.ts).

import { deepFreeze, httpEngineProblem, type HttpEngineName } from '../config.js';
import { readDatabaseSettings } from './config-database.js';
import {
  DEFAULT_CONFIRMATIONS,
  DEFAULT_GATEWAY_PORT,
  DEFAULT_MAX_ROWS,
  DEFAULT_PERIOD_MS,
  DEFAULT_POOL_SIZE,
  DEFAULT_START_BLOCK,
} from './config-defaults.js';
import { mergeSettings, SettingsReader } from './config-settings.js';

/** `max_block.version` (spec A §9): the indexer's semver; 3.x is this rewrite of the original 2.4.1. */
export const INDEXER_VERSION = '3.0.0';

/** Connection settings for pg; absent fields fall back to libpq's PG* variables, as DB_NAME did for psycopg. */
export interface PgConnection {
  readonly connectionString?: string;
  readonly host?: string;
  readonly port?: number;
  readonly user?: string;
  readonly password?: string;
  readonly database?: string;
}

export type TransfersDatabase =
  | { readonly kind: 'pglite'; readonly dataDir: string }
  | { readonly kind: 'postgres'; readonly indexer: PgConnection; readonly gateway: PgConnection };

export interface IndexerSettings {
  readonly enabled: boolean;
  readonly ethUrl: string | undefined;
  /** First block indexed (inclusive, notes F.10). */
  readonly startBlock: number;
  /** Blocks are indexed through head − confirmations (inclusive). */
  readonly confirmations: number;
  readonly periodMs: number;
}

export interface GatewaySettings {
  readonly enabled: boolean;
  /** undefined: the command line's --host. */
  readonly host: string | undefined;
  readonly port: number;
  /**
   * The exposed schemas (PGRST_DB_SCHEMAS, in order): the first is served by default, the others through the
   * Accept-Profile / Content-Profile request headers, as in PostgREST.
   */
  readonly schemas: readonly string[];
  readonly anonRole: string;
  readonly maxRows: number | undefined;
  readonly maxOffset: number | undefined;
  readonly poolSize: number;
  /** `HTTP_ENGINE` (additive): the listener's HTTP engine (http/engine.ts); default $ADM_HTTP_ENGINE, else uws. */
  readonly engine?: HttpEngineName;
}

export interface TransfersConfig {
  readonly database: TransfersDatabase;
  readonly indexer: IndexerSettings;
  readonly gateway: GatewaySettings;
}

export type ParsedTransfersConfig =
  | { ok: true; config: TransfersConfig; warnings: string[] }
  | { ok: false; problems: string[] };

/**
 * Merges the file (may be undefined) and the environment, then validates everything, reporting every problem at
 * once. Empty strings count as unset, as in a shell.
 */
export function parseTransfersConfig(file: unknown, env: Readonly<Record<string, string | undefined>>): ParsedTransfersConfig {
  const merged = mergeSettings(file, env);
  if (!merged.ok) return merged;
  const problems: string[] = [];
  const warnings: string[] = [];
  const settings = new SettingsReader(merged.raw, problems);

  // The indexer runs when it has a node to read (or is told to); the gateway unless told not to.
  const ethUrl = settings.text('ETH_URL');
  const indexerEnabled = settings.flag('INDEXER') ?? ethUrl !== undefined;
  const gatewayEnabled = settings.flag('GATEWAY') ?? true;
  if (indexerEnabled && ethUrl === undefined) problems.push('ETH_URL: required when the indexer is enabled (INDEXER=false runs the gateway alone)');
  if (ethUrl !== undefined && !/^https?:\/\/[^\s]+$/i.test(ethUrl)) {
    problems.push(`ETH_URL: only http:// and https:// node URLs are supported by this build (WebSocket and IPC are not)`);
  }
  if (!indexerEnabled && !gatewayEnabled) problems.push('INDEXER, GATEWAY: at least one part must be enabled');

  const periodText = settings.text('PERIOD');
  let periodMs = DEFAULT_PERIOD_MS;
  if (periodText !== undefined) {
    const seconds = Number(periodText);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) problems.push(`PERIOD: must be a number of seconds in (0, 86400], got '${periodText}'`);
    else periodMs = Math.round(seconds * 1000);
  }
  if (settings.has('LOG_FILE')) warnings.push('LOG_FILE is ignored: logs go to stdout as NDJSON (redirect or use the service manager)');

  const { database, schemas, anonRole } = readDatabaseSettings(settings);

  const rawEngine = settings.text('HTTP_ENGINE');
  const engineProblem = httpEngineProblem('HTTP_ENGINE', rawEngine);
  if (engineProblem) problems.push(engineProblem);
  const engine = rawEngine === undefined || engineProblem ? undefined : (rawEngine as HttpEngineName);
  // The integer reads stay in the literal, in its order: it is the order their problems are reported in.
  const config: TransfersConfig = {
    database,
    indexer: {
      enabled: indexerEnabled,
      ethUrl,
      startBlock: settings.integer('START_BLOCK', DEFAULT_START_BLOCK, 0),
      confirmations: settings.integer('CONFIRMATIONS_BLOCK', DEFAULT_CONFIRMATIONS, 0),
      periodMs,
    },
    gateway: {
      enabled: gatewayEnabled,
      host: settings.text('PGRST_SERVER_HOST'),
      port: settings.integer('PGRST_SERVER_PORT', DEFAULT_GATEWAY_PORT, 0),
      schemas,
      anonRole,
      maxRows: settings.integer('PGRST_DB_MAX_ROWS', DEFAULT_MAX_ROWS, 1),
      maxOffset: settings.optionalInteger('MAX_OFFSET', 0),
      poolSize: settings.integer('PGRST_DB_POOL', DEFAULT_POOL_SIZE, 1),
      ...(engine ? { engine } : {}),
    },
  };
  if (config.gateway.port > 65_535) problems.push(`PGRST_SERVER_PORT: must be a port number, got ${config.gateway.port}`);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: deepFreeze(config), warnings };
}
