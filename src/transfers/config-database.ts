// Which database the transfers service uses and as whom the gateway reads it (spec A; notes A.4): the embedded PGlite
// in DATA_DIR, or PostgreSQL through DB_NAME (the indexer's, as the original passed it to psycopg) and PGRST_DB_URI
// (the gateway's, as PostgREST took it), either one serving both parts when only one is set; and the exposed schemas
// and the anonymous role, which go into SQL text as quoted identifiers.

import { DEFAULT_ANON_ROLE, DEFAULT_DATA_DIR, DEFAULT_SCHEMA } from './config-defaults.js';
import type { SettingsReader } from './config-settings.js';
import type { PgConnection, TransfersDatabase } from './config.js';

/** Role and schema names go into SQL text as quoted identifiers: plain names only. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

export interface DatabaseSettings {
  readonly database: TransfersDatabase;
  /** PGRST_DB_SCHEMAS in order, without repeats; the first is served by default. */
  readonly schemas: string[];
  readonly anonRole: string;
}

/** Reads the schemas, the anonymous role and the connections, in that order, adding each problem to the reader's. */
export function readDatabaseSettings(settings: SettingsReader): DatabaseSettings {
  const { problems } = settings;
  const listed = (settings.text('PGRST_DB_SCHEMAS') ?? DEFAULT_SCHEMA).split(',').map((s) => s.trim()).filter(Boolean);
  const schemas = [...new Set(listed.length > 0 ? listed : [DEFAULT_SCHEMA])];
  for (const schema of schemas) if (!IDENTIFIER.test(schema)) problems.push(`PGRST_DB_SCHEMAS: '${schema}' is not a plain schema name`);
  const anonRole = settings.text('PGRST_DB_ANON_ROLE') ?? DEFAULT_ANON_ROLE;
  if (!IDENTIFIER.test(anonRole)) problems.push(`PGRST_DB_ANON_ROLE: '${anonRole}' is not a plain role name`);

  // Neither DB_NAME nor PGRST_DB_URI → the embedded PGlite database. One of them → both parts use it.
  const indexerDb = settings.text('DB_NAME');
  const gatewayDb = settings.text('PGRST_DB_URI');
  let database: TransfersDatabase;
  if (indexerDb === undefined && gatewayDb === undefined) {
    database = { kind: 'pglite', dataDir: settings.text('DATA_DIR') ?? DEFAULT_DATA_DIR };
  } else {
    const indexer = parseConnection(indexerDb ?? gatewayDb!, indexerDb !== undefined ? 'DB_NAME' : 'PGRST_DB_URI', problems);
    const gateway = parseConnection(gatewayDb ?? indexerDb!, gatewayDb !== undefined ? 'PGRST_DB_URI' : 'DB_NAME', problems);
    database = { kind: 'postgres', indexer, gateway };
  }
  return { database, schemas, anonRole };
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
