// HTTP spoken by hand on a raw socket, for what no ordinary client sends: truncated, trickled, malformed and
// oversize bodies. Inert on import (node --test runs every module under dist/test/).

import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** The status line and headers, as sent. */
  readonly head: string;
  readonly body: string;
  /** Lower-cased header names. */
  header(name: string): string | undefined;
}

export async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

/** The next response on `socket` (status, head, body by Content-Length), bounded in time. */
export function readResponse(socket: Socket, timeoutMs = 20_000): Promise<RawResponse> {
  const response = new Promise<RawResponse>((resolve, reject) => {
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => done(new Error('no response on the raw socket in time')), timeoutMs);
    const done = (error?: Error, value?: RawResponse) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (error) reject(error);
      else resolve(value!);
    };
    const onData = (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = data.subarray(0, end).toString();
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (data.length < end + 4 + length) return;
      const header = (name: string) => new RegExp(`\\r\\n${name}: *([^\\r]*)`, 'i').exec(head)?.[1];
      done(undefined, { status: Number(head.split(' ')[1]), head, body: data.subarray(end + 4, end + 4 + length).toString(), header });
    };
    const onClose = () => done(new Error('socket closed before a response'));
    socket.on('data', onData);
    socket.once('close', onClose);
  });
  // Tests that cut the socket never await it: no unhandled rejection.
  response.catch(() => {});
  return response;
}

/** Resolves when the server has closed `socket` (or after `timeoutMs`, with false). */
export function closedWithin(socket: Socket, timeoutMs: number): Promise<boolean> {
  if (socket.destroyed || socket.readableEnded) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    const onEnd = () => {
      clearTimeout(timer);
      resolve(true);
    };
    socket.once('end', onEnd);
    socket.once('close', onEnd);
  });
}

/** One multipart/form-data body built by hand, so tests can cut it anywhere. */
export function multipartBody(boundary: string, parts: ReadonlyArray<{ headers: string; content: Buffer | string }>, closed = true): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    pieces.push(Buffer.from(`--${boundary}\r\n${part.headers}\r\n\r\n`), Buffer.from(part.content), Buffer.from('\r\n'));
  }
  if (closed) pieces.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(pieces);
}

/** The part headers of a file named `files`, as a browser's FormData sends them. */
export const filePart = (name: string, field = 'files') =>
  `Content-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/octet-stream`;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One request with its request target sent byte for byte (fetch and http.request normalise or refuse some targets,
 * e.g. bad percent-encoding or raw non-ASCII bytes), answered on a fresh connection that is then closed.
 */
export async function rawRequest(port: number, method: string, target: string, headers: Readonly<Record<string, string>> = {}, body = ''): Promise<RawResponse> {
  const socket = await openSocket(port);
  try {
    const lines = [`${method} ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
    if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
    const answer = readResponse(socket);
    // latin1: a target given with \xNN characters goes out as those raw bytes.
    socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), Buffer.from(body)]));
    return await answer;
  } finally {
    socket.destroy();
  }
}

/**
 * POSTs an 8 MiB multipart upload with Node's http client, which keeps sending after the answer came; resolves with
 * what it saw. With `connectionClose` it uses no agent, and Node's client then sends `Connection: close` (as HTTP/1.0
 * proxies do). A declared body is exactly its Content-Length (bytes past it would be a second, malformed request).
 */
export function keepSending(port: number, boundary: string, declared: boolean, connectionClose = false): Promise<{ status?: number; body?: string; error?: string }> {
  const total = 8 * 1_048_576;
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': `multipart/form-data; boundary=${boundary}` };
    if (declared) headers['content-length'] = total;
    const agent = connectionClose ? { agent: false as const } : {};
    const request = httpRequest({ host: '127.0.0.1', port, path: '/api/file/upload', method: 'POST', headers, ...agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode, body }));
    });
    // An error after the answer was read is the server closing a connection the client keeps writing to.
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    // Never left hanging: a server that neither answers nor closes fails the caller's assertion instead.
    request.setTimeout(60_000, () => request.destroy(new Error('no answer within 60 s')));
    const head = Buffer.from(`--${boundary}\r\n${filePart('big.bin')}\r\n\r\n`);
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(65_536, 1);
    let left = total - head.length - tail.length;
    request.write(head);
    const pump = () => {
      while (left > 0) {
        const piece = chunk.subarray(0, Math.min(chunk.length, left));
        left -= piece.length;
        if (!request.write(piece)) return void request.once('drain', pump);
      }
      request.end(tail);
    };
    pump();
  });
}
