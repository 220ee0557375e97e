// Capturing a service's exact answer (one raw HTTP/1.1 exchange on node:net) and starting the baseline
// process (bench/support/baseline.server.js) that replays it.

import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { BaselinePorts, BaselineSetup, CapturedResponse } from './baseline.server.js';
import { getRequest } from './load.js';
import { spawnTracked, type ManagedProcess } from './processes.js';

/** Framing headers that node:http writes itself; everything else is copied verbatim. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

/** One GET on a fresh connection, returning the response bytes exactly as sent. Bounded by `timeoutMs`. */
export function captureResponse(port: number, path: string, timeoutMs = 10_000): Promise<CapturedResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let received = 0;
    const timer = setTimeout(() => fail(new Error(`no complete answer for ${path} within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    socket.on('error', fail);
    socket.on('connect', () => socket.write(getRequest(port, path)));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      const all = Buffer.concat(chunks, received);
      const end = all.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = all.toString('latin1', 0, end);
      const [statusLine, ...lines] = head.split('\r\n');
      const headers = lines.map((line) => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon), line.slice(colon + 1).trim()] as const;
      });
      const length = headers.find(([name]) => name.toLowerCase() === 'content-length');
      if (length === undefined) return fail(new Error(`answer for ${path} has no Content-Length`));
      const total = end + 4 + Number(length[1]);
      if (all.length < total) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        path,
        status: Number(statusLine!.split(' ')[1]),
        headers: headers.filter(([name]) => !FRAMING.has(name.toLowerCase())),
        sendDate: headers.some(([name]) => name.toLowerCase() === 'date'),
        body: all.subarray(end + 4, total).toString('base64'),
      });
    });
  });
}

export interface Baseline {
  readonly process: ManagedProcess;
  readonly ports: BaselinePorts;
}

export async function startBaseline(responses: readonly CapturedResponse[], timeoutMs = 15_000): Promise<Baseline> {
  const script = fileURLToPath(new URL('./baseline.server.js', import.meta.url));
  // A minimal environment, as the service's: no ADM_HTTP_UWS from the caller's shell decides whether the replay runs.
  const managed = spawnTracked('baseline', process.execPath, [script], { ipc: true, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const ports = await new Promise<BaselinePorts>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`baseline did not start within ${timeoutMs} ms: ${managed.tail()}`)), timeoutMs);
    managed.child.once('message', (message: { ok: true; ports: BaselinePorts } | { ok: false; error: string }) => {
      clearTimeout(timer);
      if (message.ok) resolve(message.ports);
      else reject(new Error(`baseline failed: ${message.error}`));
    });
    managed.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`baseline exited (${code}) before listening: ${managed.tail()}`));
    });
    const setup: BaselineSetup = { responses };
    managed.child.send(setup);
  }).catch(async (error: unknown) => {
    await managed.stop();
    throw error;
  });
  return { process: managed, ports };
}
