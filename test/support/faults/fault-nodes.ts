// Files nodes as real processes for the fault harness (issue 29): the built CLI (`adm-infra files --config FILE`) run
// by `ip netns exec` inside each node's namespace (network.ts), HOME on a small tmpfs of its own (so a node's disk
// reserve can be reached without touching the machine's disk), tracked by pid, killed by pid. Plus the harness's HTTP
// client (node:http, a fresh connection per request, so a killed node never leaves a pooled socket behind) and the
// files' CIDs computed locally. Inert on import.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, createWriteStream, existsSync, mkdirSync, openSync, rmSync, statfsSync, writeFileSync, writeSync, type WriteStream } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { importBytes } from 'ipfs-unixfs-importer';
import type { CID } from 'multiformats/cid';
import { IMPORTER_SETTINGS } from '../../../actors/files/upload-session.js';
import { CLI, POLYFILL } from '../cli.js';
import type { FaultNetwork, NetNode } from './network.js';

export const HTTP_PORT = 4000;
export const P2P_PORT = 4001;
export const FAULT_KEY = '7c1e9a3f5b2d4086a8c0e2f4a6b8d0c2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4';
/** Size of each node's tmpfs (its HOME, the store inside). */
export const TMPFS_BYTES = 192 * 1024 * 1024;

/** The log lines a run keeps in memory per node (the whole log goes to a file in the run folder). */
export interface NotableLine {
  readonly at: number;
  readonly life: number;
  readonly line: Record<string, unknown>;
}

const NOTABLE_MESSAGES = new Set(['child crashed', 'child restarted', 'child restart failed', 'restart intensity exceeded; escalating', 'supervisor task failed']);

/** One node: its namespace, its HOME (a tmpfs), its process lives. */
export class FaultNode {
  readonly net: NetNode;
  readonly home: string;
  readonly configPath: string;
  readonly logPath: string;
  peerId = '';
  #child: ChildProcess | undefined;
  #exit: Promise<void> | undefined;
  #log: WriteStream | undefined;
  /** Lives started (1 after the first start). */
  life = 0;
  /** Exits this harness did not cause (a crash), with their code or signal. */
  readonly unexpectedExits: string[] = [];
  readonly notable: NotableLine[] = [];
  /** Warning lines by message, for the run's summary. */
  readonly warnings = new Map<string, number>();
  #expectingExit = false;
  #mounted = false;
  #partial = '';

  constructor(
    readonly network: FaultNetwork,
    net: NetNode,
    runDir: string,
  ) {
    this.net = net;
    this.home = join(runDir, net.name);
    this.configPath = join(runDir, `${net.name}.config.json5`);
    this.logPath = join(runDir, `${net.name}.log`);
  }

  get name(): string {
    return this.net.name;
  }

  get storeDirectory(): string {
    return join(this.home, '.adm-ipfs');
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Mounts the node's tmpfs HOME (root only; the sweep in network.ts unmounts what a dead harness left). */
  mount(): void {
    mkdirSync(this.home, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES},mode=0700`, 'tmpfs', this.home], { stdio: 'ignore', timeout: 10_000 });
    this.#mounted = true;
  }

  unmount(): void {
    if (!this.#mounted) return;
    try {
      execFileSync('umount', [this.home], { stdio: 'ignore', timeout: 10_000 });
    } catch {
      execFileSync('umount', ['-l', this.home], { stdio: 'ignore', timeout: 10_000 });
    }
    this.#mounted = false;
  }

  /** Free bytes on the node's tmpfs. */
  freeBytes(): number {
    const stats = statfsSync(this.home);
    return Number(stats.bavail) * Number(stats.bsize);
  }

  /** Writes a filler so that only `leaveBytes` stay free (the disk-reserve fault). */
  fill(leaveBytes: number): void {
    const path = join(this.home, 'filler');
    const want = this.freeBytes() - leaveBytes;
    if (want <= 0) return;
    const fd = openSync(path, 'a');
    try {
      const chunk = Buffer.alloc(1024 * 1024);
      for (let written = 0; written < want; ) {
        const n = Math.min(chunk.length, want - written);
        try {
          written += writeSync(fd, chunk, 0, n);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw error;
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  unfill(): void {
    rmSync(join(this.home, 'filler'), { force: true });
  }

  /** Starts a life of the node with `config` written to its config file (outside the tmpfs). */
  start(config: Record<string, unknown>): void {
    if (this.running) throw new Error(`${this.name} is already running`);
    writeFileSync(this.configPath, JSON.stringify(config, null, 2));
    this.life++;
    const life = this.life;
    this.#log ??= createWriteStream(this.logPath, { flags: 'a' });
    this.#log.write(`\n==== life ${life} started at ${new Date().toISOString()} ====\n`);
    const { command, args } = this.network.execArgs(this.net, [process.execPath, '--import', POLYFILL, CLI, 'files', '--config', this.configPath]);
    const child = spawn(command, args, {
      env: { PATH: process.env.PATH, HOME: this.home, ADM_HTTP_UWS: process.env.ADM_HTTP_UWS, ADM_HTTP_ENGINE: process.env.ADM_HTTP_ENGINE },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    this.#expectingExit = false;
    this.#partial = '';
    const log = this.#log;
    child.stdout!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      this.#partial += chunk.toString();
      const lines = this.#partial.split('\n');
      this.#partial = lines.pop() ?? '';
      for (const text of lines) this.#scan(text, life);
    });
    child.stderr!.on('data', (chunk: Buffer) => log.write(chunk));
    this.#exit = new Promise<void>((resolve) =>
      child.once('exit', (code, signal) => {
        log.write(`\n==== life ${life} exited: ${code ?? signal} at ${new Date().toISOString()} ====\n`);
        if (!this.#expectingExit) this.unexpectedExits.push(`life ${life} exited by itself with ${code ?? signal}`);
        resolve();
      }),
    );
  }

  #scan(text: string, life: number): void {
    if (!text.startsWith('{')) return;
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return;
    }
    // The files logger writes level labels (`"level":"error"`); pino's numbers are read too.
    const serious = line.level === 'error' || line.level === 'fatal' || (typeof line.level === 'number' && line.level >= 50);
    if (serious || NOTABLE_MESSAGES.has(String(line.msg))) this.notable.push({ at: Date.now(), life, line });
    else if (line.level === 'warn' || line.level === 40) this.warnings.set(String(line.msg), (this.warnings.get(String(line.msg)) ?? 0) + 1);
  }

  /** kill -9 by pid; resolves once the process is gone. */
  async kill9(): Promise<void> {
    if (!this.running) return;
    this.#expectingExit = true;
    process.kill(this.#child!.pid!, 'SIGKILL');
    await this.#exit;
  }

  /** SIGTERM by pid (a graceful stop), SIGKILL after `timeoutMs`; resolves with how it ended. */
  /** Exit code of the last life (null after a signal). */
  get exitCode(): number | null {
    return this.#child?.exitCode ?? null;
  }

  async stop(timeoutMs = 20_000): Promise<'exited' | 'killed' | 'not running'> {
    if (!this.running) return 'not running';
    this.#expectingExit = true;
    process.kill(this.#child!.pid!, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    const outcome = await Promise.race([this.#exit!.then(() => 'exited' as const), late]);
    clearTimeout(timer);
    if (outcome === 'exited') return 'exited';
    try {
      process.kill(this.#child!.pid!, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
    await this.#exit;
    return 'killed';
  }

  /** Closes the log file (after the last life). */
  async closeLog(): Promise<void> {
    const log = this.#log;
    this.#log = undefined;
    if (log) await new Promise<void>((resolve) => log.end(() => resolve()));
  }

  url(path: string): string {
    return `http://${this.net.controlIp}:${HTTP_PORT}${path}`;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The harness's HTTP client.

export type HttpOutcome =
  | { readonly kind: 'answer'; readonly status: number; readonly body: Buffer; readonly json: any; readonly ms: number }
  /** The connection closed or failed without an answer (reset, refused, hang-up). */
  | { readonly kind: 'closed'; readonly code: string; readonly ms: number; readonly afterHeaders?: boolean }
  /** No answer within the request's time bound: a hang. */
  | { readonly kind: 'timeout'; readonly ms: number };

export interface HttpCall {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly key?: boolean;
  readonly body?: Buffer;
  readonly contentType?: string;
  readonly timeoutMs: number;
}

/** One request on its own connection; never throws. */
export function httpCall(node: FaultNode, call: HttpCall): Promise<HttpOutcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: HttpOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const headers: Record<string, string | number> = {};
    if (call.key) headers['x-api-key'] = FAULT_KEY;
    if (call.body) {
      headers['content-length'] = call.body.length;
      headers['content-type'] = call.contentType ?? 'application/octet-stream';
    }
    const request = httpRequest({ host: node.net.controlIp, port: HTTP_PORT, method: call.method, path: call.path, headers, agent: false });
    const timer = setTimeout(() => {
      settle({ kind: 'timeout', ms: Date.now() - started });
      request.destroy();
    }, call.timeoutMs);
    request.once('error', (error: NodeJS.ErrnoException) => settle({ kind: 'closed', code: error.code ?? error.message, ms: Date.now() - started }));
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', (error: NodeJS.ErrnoException) => settle({ kind: 'closed', code: `after headers: ${error.code ?? error.message}`, ms: Date.now() - started, afterHeaders: true }));
      response.once('aborted', () => settle({ kind: 'closed', code: 'aborted after headers', ms: Date.now() - started, afterHeaders: true }));
      response.once('end', () => {
        const body = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(body.toString('utf8'));
        } catch {
          json = undefined;
        }
        settle({ kind: 'answer', status: response.statusCode ?? 0, body, json, ms: Date.now() - started });
      });
    });
    if (call.body) request.end(call.body);
    else request.end();
  });
}

const BOUNDARY = '----adm-infra-faults-4e9b1c';

/** A multipart/form-data body with one part named `files` per file. */
export function multipartBody(files: ReadonlyArray<{ filename: string; bytes: Uint8Array }>): { body: Buffer; contentType: string } {
  return {
    body: Buffer.concat([
      ...files.flatMap(({ filename, bytes }) => [
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
        bytes,
        Buffer.from('\r\n'),
      ]),
      Buffer.from(`--${BOUNDARY}--\r\n`),
    ]),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  };
}

/** The CID the node gives `bytes` (its own importer settings), computed without a store. */
export async function cidOfBytes(bytes: Uint8Array): Promise<string> {
  const blockstore = { put: async (cid: CID) => cid, has: async () => false };
  const entry = await importBytes(bytes, blockstore as never, IMPORTER_SETTINGS as never);
  return entry.cid.toString();
}

export const sha256Hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Whether the CLI this harness runs has been built. */
export const cliBuilt = (): boolean => existsSync(CLI);
