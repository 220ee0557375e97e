// The one port both transfers backends implement (docs/DESIGN.md, "Storage and real components"): PostgreSQL through
// `pg` in production, PGlite (PostgreSQL in WASM, with citext) as the embedded default. Everything above this port
// speaks plain SQL with bound parameters; the two drivers' JS type parsing differs (PGlite turns int8 into BigInt,
// pg into a string), so callers read what they need as text or int4.

export type SqlRow = Record<string, unknown>;

export interface SqlQuery {
  /** One statement with bound parameters ($1, $2, …). */
  query(text: string, values?: readonly unknown[]): Promise<SqlRow[]>;
  /** Several statements without parameters in one round trip (migrations). */
  exec(script: string): Promise<void>;
}

export interface SqlClient extends SqlQuery {
  /**
   * `postgresql`: a server, several sessions at once (CREATE INDEX CONCURRENTLY works); `pglite`: the embedded
   * database, one session that runs one statement at a time.
   */
  readonly backend: 'postgresql' | 'pglite';
  /** Runs `work` in one transaction (BEGIN … COMMIT, ROLLBACK when it throws) on one connection. */
  transaction<T>(work: (tx: SqlQuery) => Promise<T>): Promise<T>;
  /**
   * Runs `work` on one connection held for its whole duration, outside any transaction: for session-level advisory
   * locks and statements that refuse to run in a transaction block (CREATE INDEX CONCURRENTLY). On pg the connection
   * is closed afterwards, so no session state (a lock, a setting) outlives `work`; on PGlite it is the one session.
   */
  session<T>(work: (session: SqlQuery) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The login the client connected as, for messages and grants. */
export async function currentUser(db: SqlQuery): Promise<string> {
  const [row] = await db.query('SELECT current_user::text AS name');
  return String(row?.name);
}
