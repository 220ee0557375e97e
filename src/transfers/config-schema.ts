// The names the transfers settings go by (notes A.4, F.2): the original indexer's environment variables and
// PostgREST's PGRST_* variables, which are also the file's keys, plus PostgREST's own config-file names for the
// gateway's settings; and the file's shape. The file is closed: a misspelt PERIOD must not silently become 20 s.

import { Type } from '../typebox.js';

/** Every accepted name: file key = environment variable. */
export const SETTING_KEYS = [
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
export type SettingKey = (typeof SETTING_KEYS)[number];

/** PostgREST's config-file names (its docs' "db-uri" style) for the same settings. */
export const POSTGREST_FILE_KEYS: Readonly<Record<string, SettingKey>> = {
  'db-uri': 'PGRST_DB_URI',
  'db-schemas': 'PGRST_DB_SCHEMAS',
  'db-schema': 'PGRST_DB_SCHEMAS',
  'db-anon-role': 'PGRST_DB_ANON_ROLE',
  'db-max-rows': 'PGRST_DB_MAX_ROWS',
  'db-pool': 'PGRST_DB_POOL',
  'server-host': 'PGRST_SERVER_HOST',
  'server-port': 'PGRST_SERVER_PORT',
};

/** Values are scalars, as in the environment: each is read as its text. */
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

/** The settings file: any accepted name, each optional; an unknown key is refused. */
export const TransfersFileSchema = Type.Object(
  Object.fromEntries([...SETTING_KEYS, ...Object.keys(POSTGREST_FILE_KEYS)].map((key) => [key, Type.Optional(Scalar)])),
  { additionalProperties: false },
);
