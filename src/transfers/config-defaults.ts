// What each transfers setting is when neither the file nor the environment gives it: the original indexer's defaults
// (notes A.4) and PostgREST's as the original deployment configured it, except the row cap (notes F.2).

/** notes F.2: the row cap of every read unless configured otherwise (PostgREST's own default is no cap). */
export const DEFAULT_MAX_ROWS = 10_000;
/** PostgREST's `server-port` in the original README (notes A.4). */
export const DEFAULT_GATEWAY_PORT = 3000;
/** The role anonymous reads run as (PGRST_DB_ANON_ROLE). */
export const DEFAULT_ANON_ROLE = 'web_anon';
/** The exposed schema when PGRST_DB_SCHEMAS names none (the original README's `db-schema = "public"`). */
export const DEFAULT_SCHEMA = 'public';
/** `db-pool = 10` in the original README (notes A.4). */
export const DEFAULT_POOL_SIZE = 10;
/** The embedded PGlite database's folder when neither DB_NAME nor PGRST_DB_URI is set. */
export const DEFAULT_DATA_DIR = 'data/transfers';
/** The original indexer's START_BLOCK, CONFIRMATIONS_BLOCK and PERIOD (20 s) defaults (notes A.4). */
export const DEFAULT_START_BLOCK = 1;
export const DEFAULT_CONFIRMATIONS = 0;
export const DEFAULT_PERIOD_MS = 20_000;
