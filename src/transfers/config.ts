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

import Type from 'typebox';
import { deepFreeze, httpEngineProblem, schemaProblems, type HttpEngineName } from '../config.js';

/** `max_block.version` (spec A §9): the indexer's semver; 3.x is this rewrite of the original 2.4.1. */
export const INDEXER_VERSION = '3.0.0';

/** notes F.2: the row cap of every read unless configured otherwise. */
export const DEFAULT_MAX_ROWS = 10_000;
export const DEFAULT_GATEWAY_PORT = 3000;
export const DEFAULT_ANON_ROLE = 'web_anon';
export const DEFAULT_DATA_DIR = 'data/transfers';

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

/** Every accepted name: file key = environment variable. */
const KEYS = [
  'DB_NAME',
  'ETH_URL',
  'START_BLOCK',
  'CONFIRMATIONS_BLOCK',
  'PERIOD',
  'LOG_FILE',
  'PGRST_DB_URI',
  'PGRST_DB_SCHEMAS',
  'PGRST_DB_ANON_ROLE',
  'PGRST_DB_MAX_ROWS',
  'PGRST_DB_POOL',
  'PGRST_SERVER_HOST',
  'PGRST_SERVER_PORT',
  'MAX_OFFSET',
  'DATA_DIR',
  'INDEXER',
  'GATEWAY',
  'HTTP_ENGINE',
] as const;
type Key = (typeof KEYS)[number];

/** PostgREST's config-file names (its docs' "db-uri" style) for the same settings. */
const POSTGREST_FILE_KEYS: Readonly<Record<string, Key>> = {
  'db-uri': 'PGRST_DB_URI',
  'db-schemas': 'PGRST_DB_SCHEMAS',
  'db-schema': 'PGRST_DB_SCHEMAS',
  'db-anon-role': 'PGRST_DB_ANON_ROLE',
  'db-max-rows': 'PGRST_DB_MAX_ROWS',
  'db-pool': 'PGRST_DB_POOL',
  'server-host': 'PGRST_SERVER_HOST',
  'server-port': 'PGRST_SERVER_PORT',
};

const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
const FileSchema = Type.Object(
  Object.fromEntries([...KEYS, ...Object.keys(POSTGREST_FILE_KEYS)].map((key) => [key, Type.Optional(Scalar)])),
  { additionalProperties: false },
);

export type ParsedTransfersConfig =
  | { ok: true; config: TransfersConfig; warnings: string[] }
  | { ok: false; problems: string[] };

/** Role and schema names go into SQL text as quoted identifiers: plain names only. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * Merges the file (may be undefined) and the environment, then validates everything, reporting every problem at
 * once. Empty strings count as unset, as in a shell.
 */
export function parseTransfersConfig(file: unknown, env: Readonly<Record<string, string | undefined>>): ParsedTransfersConfig {
  const problems: string[] = [];
  const warnings: string[] = [];
  const raw = new Map<Key, string>();
  if (file !== undefined) {
    if (typeof file !== 'object' || file === null || Array.isArray(file)) return { ok: false, problems: ['(root): must be an object of settings'] };
    const shape = schemaProblems(FileSchema, file);
    if (shape.length > 0) return { ok: false, problems: shape };
    for (const [key, value] of Object.entries(file)) {
      if (value === null || value === undefined || value === '') continue;
      const name = POSTGREST_FILE_KEYS[key] ?? (key as Key);
      raw.set(name, String(value));
    }
  }
  for (const key of KEYS) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') raw.set(key, value.trim());
  }

  const integer = (key: Key, fallback: number, min: number): number => {
    const text = raw.get(key);
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value < min) {
      problems.push(`${key}: must be an integer ≥ ${min}, got '${text}'`);
      return fallback;
    }
    return value;
  };
  const optionalInteger = (key: Key, min: number): number | undefined => (raw.has(key) ? integer(key, min, min) : undefined);
  const flag = (key: Key): boolean | undefined => {
    const text = raw.get(key)?.toLowerCase();
    if (text === undefined) return undefined;
    if (['true', '1', 'on', 'yes'].includes(text)) return true;
    if (['false', '0', 'off', 'no'].includes(text)) return false;
    problems.push(`${key}: must be true or false, got '${raw.get(key)}'`);
    return undefined;
  };

  // The indexer runs when it has a node to read (or is told to); the gateway unless told not to.
  const ethUrl = raw.get('ETH_URL');
  const indexerEnabled = flag('INDEXER') ?? ethUrl !== undefined;
  const gatewayEnabled = flag('GATEWAY') ?? true;
  if (indexerEnabled && ethUrl === undefined) problems.push('ETH_URL: required when the indexer is enabled (INDEXER=false runs the gateway alone)');
  if (ethUrl !== undefined && !/^https?:\/\/[^\s]+$/i.test(ethUrl)) {
    problems.push(`ETH_URL: only http:// and https:// node URLs are supported by this build (WebSocket and IPC are not)`);
  }
  if (!indexerEnabled && !gatewayEnabled) problems.push('INDEXER, GATEWAY: at least one part must be enabled');

  const periodText = raw.get('PERIOD');
  let periodMs = 20_000;
  if (periodText !== undefined) {
    const seconds = Number(periodText);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) problems.push(`PERIOD: must be a number of seconds in (0, 86400], got '${periodText}'`);
    else periodMs = Math.round(seconds * 1000);
  }
  if (raw.has('LOG_FILE')) warnings.push('LOG_FILE is ignored: logs go to stdout as NDJSON (redirect or use the service manager)');

  const listed = (raw.get('PGRST_DB_SCHEMAS') ?? 'public').split(',').map((s) => s.trim()).filter(Boolean);
  const schemas = [...new Set(listed.length > 0 ? listed : ['public'])];
  for (const schema of schemas) if (!IDENTIFIER.test(schema)) problems.push(`PGRST_DB_SCHEMAS: '${schema}' is not a plain schema name`);
  const anonRole = raw.get('PGRST_DB_ANON_ROLE') ?? DEFAULT_ANON_ROLE;
  if (!IDENTIFIER.test(anonRole)) problems.push(`PGRST_DB_ANON_ROLE: '${anonRole}' is not a plain role name`);

  const indexerDb = raw.get('DB_NAME');
  const gatewayDb = raw.get('PGRST_DB_URI');
  let database: TransfersDatabase;
  if (indexerDb === undefined && gatewayDb === undefined) {
    database = { kind: 'pglite', dataDir: raw.get('DATA_DIR') ?? DEFAULT_DATA_DIR };
  } else {
    const indexer = parseConnection(indexerDb ?? gatewayDb!, indexerDb !== undefined ? 'DB_NAME' : 'PGRST_DB_URI', problems);
    const gateway = parseConnection(gatewayDb ?? indexerDb!, gatewayDb !== undefined ? 'PGRST_DB_URI' : 'DB_NAME', problems);
    database = { kind: 'postgres', indexer, gateway };
  }

  const rawEngine = raw.get('HTTP_ENGINE');
  const engineProblem = httpEngineProblem('HTTP_ENGINE', rawEngine);
  if (engineProblem) problems.push(engineProblem);
  const engine = rawEngine === undefined || engineProblem ? undefined : (rawEngine as HttpEngineName);
  const config: TransfersConfig = {
    database,
    indexer: {
      enabled: indexerEnabled,
      ethUrl,
      startBlock: integer('START_BLOCK', 1, 0),
      confirmations: integer('CONFIRMATIONS_BLOCK', 0, 0),
      periodMs,
    },
    gateway: {
      enabled: gatewayEnabled,
      host: raw.get('PGRST_SERVER_HOST'),
      port: integer('PGRST_SERVER_PORT', DEFAULT_GATEWAY_PORT, 0),
      schemas,
      anonRole,
      maxRows: raw.has('PGRST_DB_MAX_ROWS') ? optionalInteger('PGRST_DB_MAX_ROWS', 1) : DEFAULT_MAX_ROWS,
      maxOffset: optionalInteger('MAX_OFFSET', 0),
      poolSize: integer('PGRST_DB_POOL', 10, 1),
      ...(engine ? { engine } : {}),
    },
  };
  if (config.gateway.port > 65_535) problems.push(`PGRST_SERVER_PORT: must be a port number, got ${config.gateway.port}`);
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: deepFreeze(config), warnings };
}

/**
 * DB_NAME was handed to psycopg as `dbname`, so it may be a plain database name, a libpq key=value string or a
 * postgres:// URI (the original's docker-compose passes a URI); PGRST_DB_URI is a URI or key=value string.
 */
export function parseConnection(text: string, key: string, problems: string[]): PgConnection {
  if (/^postgres(ql)?:\/\//i.test(text)) return { connectionString: text };
  if (!text.includes('=')) return { database: text };
  const fields: Record<string, string> = {};
  // key = value pairs; values may be single-quoted with \' and \\ escapes (libpq's conninfo syntax).
  const pattern = /\s*([A-Za-z_]+)\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S*))/gy;
  let match: RegExpExecArray | null;
  let consumed = 0;
  while ((match = pattern.exec(text)) !== null) {
    fields[match[1]!] = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!;
    consumed = pattern.lastIndex;
  }
  if (text.slice(consumed).trim() !== '') {
    problems.push(`${key}: not a database name, key=value connection string or postgres:// URI`);
    return {};
  }
  const port = fields.port === undefined ? undefined : Number(fields.port);
  if (port !== undefined && !Number.isInteger(port)) problems.push(`${key}: port must be a number`);
  return {
    host: fields.host ?? fields.hostaddr,
    port,
    user: fields.user,
    password: fields.password,
    database: fields.dbname,
  };
}
