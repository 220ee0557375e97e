// What the transfers benchmark (bench/transfers.bench.ts) and the transfers section of the scale benchmark
// (bench/scale.bench.ts) share around the two HTTP sides of a read: starting a side (the gateway or the direct-pg
// baseline, bench/support/transfers-server.ts) in its own tracked process, a JSON GET, and the choice of the query
// subjects (medium-popularity addresses with a full first page, their busiest token and their keyset cursor).

import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INDEXER_VERSION } from '../../src/transfers/config.js';
import { ensureAnonRole, migrate } from '../../storage/transfers/schema.js';
import type { SqlClient, SqlQuery } from '../../storage/transfers/sql-client.js';
import { spawnTracked, type ManagedProcess } from './processes.js';
import type { GeneratedWorld } from './transfers-data.js';
import { contractWord, FIRST_PAGE_SQL, PAGE_ROWS, type QuerySubject } from './transfers-queries.js';
import type { TransfersServerAnswer, TransfersServerSetup } from './transfers-server.js';

/** PGRST_DB_POOL's default; the baseline's pool has the same size. */
export const SIDE_POOL = 10;
const SERVER_START_TIMEOUT_MS = 60_000;
const POLYFILL = join(fileURLToPath(new URL('../..', import.meta.url)), 'src', 'polyfill.js');

export interface SideServer {
  readonly kind: TransfersServerSetup['kind'];
  readonly process: ManagedProcess;
  readonly port: number;
}

/** One side in its own process (tracked: stopAllTracked stops it), serving once this resolves. */
export async function startSide(kind: TransfersServerSetup['kind'], dbUrl: string, label: string, pool = SIDE_POOL): Promise<SideServer> {
  const script = fileURLToPath(new URL('./transfers-server.js', import.meta.url));
  const managed = spawnTracked(label, process.execPath, ['--import', POLYFILL, script], { ipc: true, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start within ${SERVER_START_TIMEOUT_MS} ms: ${managed.tail()}`)), SERVER_START_TIMEOUT_MS);
    managed.child.once('message', (message: TransfersServerAnswer) => {
      clearTimeout(timer);
      if (message.ok) resolve(message.port);
      else reject(new Error(`${label} failed to start: ${message.error}`));
    });
    managed.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${code}) before serving: ${managed.tail()}`));
    });
    const setup: TransfersServerSetup = { kind, dbUrl, pool };
    managed.child.send(setup);
  }).catch(async (error: unknown) => {
    await managed.stop();
    throw error;
  });
  return { kind, process: managed, port };
}

export interface JsonAnswer {
  readonly status: number;
  readonly body: any;
  readonly bytes: number;
  readonly text: string;
  readonly headers: Headers;
}

export async function getSideJson(port: number, path: string, headers: Readonly<Record<string, string>> = {}, timeoutMs = 30_000): Promise<JsonAnswer> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers, signal: AbortSignal.timeout(timeoutMs) });
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, bytes: Buffer.byteLength(text), text, headers: response.headers };
}

/**
 * Up to `count` medium-popularity addresses (lowercase, as clients often send them) that have a full first page,
 * each with its own busiest token (as a wallet tracking its tokens would ask for it first) and the cursor its
 * first page ends with (order time.desc, txhash.desc).
 */
export async function chooseSubjects(db: SqlQuery, world: GeneratedWorld, count: number): Promise<QuerySubject[]> {
  const subjects: QuerySubject[] = [];
  for (const checksummed of world.medium.slice(0, count)) {
    const address = checksummed.toLowerCase();
    const page = await db.query(FIRST_PAGE_SQL, [address]);
    if (page.length < PAGE_ROWS) continue;
    const last = page[page.length - 1]!;
    const [busiest] = await db.query(
      `SELECT lower(txto::text) AS token, count(*)::int AS n FROM public.ethtxs WHERE (txfrom = $1 OR contract_to = $2) AND contract_to <> '' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1`,
      [address, contractWord(address)],
    );
    subjects.push({ address, token: String(busiest?.token ?? world.tokens[0]!.toLowerCase()), cursorTime: Number(last.time), cursorHash: String(last.txhash) });
  }
  return subjects;
}

/**
 * A fresh database as both transfers benches load it: schema version 1 (the original's 8 indexes), so migration 2
 * can then run on the loaded table as on an upgrade, and the gateway's anonymous role.
 */
export async function prepareVersionOneSchema(admin: SqlClient, anonRole: string): Promise<void> {
  await migrate(admin, INDEXER_VERSION, { upTo: 1 });
  const role = await ensureAnonRole(admin, anonRole);
  if (role.problems.length > 0) throw new Error(`the anonymous role is not set up: ${role.problems.join('; ')}`);
}
