// A throwaway PostgreSQL cluster for tests and benchmarks (docs/notes/dependencies.md §4): initdb into a temporary
// directory, pg_ctl start on 127.0.0.1 and a free port with durability off, a fresh database per caller, and
// pg_ctl stop + removal at the end. The server binaries come from Debian's postgresql-15 (installed by .ci/run
// when missing). As root, every server command runs as the `postgres` user: PostgreSQL refuses to run as root.
// Importing this module does nothing (node --test runs every file under dist/test/).

import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './cli.js';

const run = promisify(execFile);

/** Where Debian installs the server binaries, one folder per major version. */
export const POSTGRES_ROOT = '/usr/lib/postgresql';

/** Newest PostgreSQL ≥ 15 whose server binaries are installed (Debian layout). */
export function postgresBinDirectory(root = POSTGRES_ROOT): string | undefined {
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .map(Number)
    .filter((version) => Number.isInteger(version) && version >= 15 && existsSync(join(root, String(version), 'bin', 'initdb')))
    .sort((a, b) => b - a);
  return versions.length > 0 ? join(root, String(versions[0]), 'bin') : undefined;
}

export interface PostgresCluster {
  /** A fresh database created at start, as the superuser `postgres` (trust authentication on loopback). */
  readonly url: string;
  readonly port: number;
  /** Creates another empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * `root` only for the test of test/support/system-packages.ts, which points it at a folder that does not exist.
 * `settings`: more server settings (`-c name=value`), for a benchmark that sizes the server like an operator would.
 */
export async function startPostgres(options: { root?: string; settings?: Readonly<Record<string, string>> } = {}): Promise<PostgresCluster> {
  const root = options.root ?? POSTGRES_ROOT;
  const bin = postgresBinDirectory(root);
  if (!bin) throw new Error(`PostgreSQL ≥ 15 server binaries not found under ${root} (apt-get install postgresql-15)`);
  const directory = await mkdtemp(join(tmpdir(), 'adm-pg-'));
  const asRoot = process.getuid?.() === 0;
  const command = async (program: string, args: string[]) => {
    const file = join(bin, program);
    const { stdout } = asRoot ? await run('runuser', ['-u', 'postgres', '--', file, ...args]) : await run(file, args);
    return stdout;
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(directory, Number(stdout.trim()), Number(group.trim()));
  }
  const data = join(directory, 'data');
  const port = await freePort();
  let started = false;
  const stop = async () => {
    if (started) {
      started = false;
      await command('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    }
    await rm(directory, { recursive: true, force: true });
  };
  try {
    await command('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync']);
    const extra = Object.entries(options.settings ?? {}).map(([name, value]) => {
      if (!/^[a-z_.]+$/.test(name) || !/^[A-Za-z0-9_.]+$/.test(value)) throw new Error(`PostgreSQL setting not allowed: ${name}=${value}`);
      return ` -c ${name}=${value}`;
    });
    const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -k ${directory} -c fsync=off -c synchronous_commit=off -c full_page_writes=off${extra.join('')}`;
    await command('pg_ctl', ['-D', data, '-l', join(directory, 'server.log'), '-w', '-t', '30', '-o', serverOptions, 'start']);
    started = true;
    const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const createDatabase = async (name: string) => {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name not allowed: ${name}`);
      const client = new pg.Client({ connectionString: admin });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    };
    return { url: await createDatabase('appdb'), port, createDatabase, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
