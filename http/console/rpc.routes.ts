// The console's JSON-RPC 2.0 listener (spec B §4.2; notes C.1, F.11, F.13): POST to any path with
// `Content-Type: application/json`; everything else is a transport answer:
//
//   other methods            405, Allow: POST
//   other content types      415 (text body)
//   body over 1 MB           413 (bounded before it is read)
//   unparsable JSON          400 with a JSON-RPC -32700 body
//   only notifications       204, no body
//   anything else            200 with the JSON-RPC response(s)
//
// Passphrases travel inside params: nothing here logs a request body, and method errors pass through
// `describeMethodError`, which removes any passphrase the request carried before it reaches the answer (the body is
// searched for them only when a method failed).

import type { ConsoleApi } from '../../actors/console/api.js';
import type { Runtime } from '../../actors/runtime.js';
import type { HttpMetrics } from '../metrics.js';
import { HttpServer, type HttpReply } from '../server.js';
import type { EngineName } from '../engine.js';

/** notes F.13: the body limit of the console server. */
export const RPC_MAX_BODY_BYTES = 1024 * 1024;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

export interface RpcListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly api: ConsoleApi;
  readonly metrics?: HttpMetrics;
  /** `rpc.engine` (http/engine.ts). */
  readonly engine?: EngineName;
}

/** The message of a thrown method error, with every passphrase-like value of the request masked. */
export function describeMethodError(error: unknown, secrets: readonly string[]): string {
  let message = error instanceof Error ? error.message : String(error);
  for (const secret of secrets) if (secret.length > 0) message = message.split(secret).join('***');
  return message;
}

/** Every string under a `passphrase` key anywhere in the body, so an error can never echo it back. */
function passphrasesIn(value: unknown, found: string[] = [], depth = 0): string[] {
  if (depth > 8 || value === null || typeof value !== 'object') return found;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    if (key === 'passphrase' && typeof child === 'string') found.push(child);
    else passphrasesIn(child, found, depth + 1);
  }
  return found;
}

export function rpcServer(runtime: Runtime, options: RpcListenerOptions): HttpServer {
  const logger = runtime.logger.child({ actor: 'console.http' });
  const text = (status: number, body: string, headers: Record<string, string> = {}): HttpReply => ({ status, headers: { 'content-type': 'text/plain; charset=utf-8', ...headers }, body });
  const server = new HttpServer({
    name: 'console',
    engine: options.engine,
    host: options.host,
    port: options.port,
    logger,
    clock: runtime.clock,
    metrics: options.metrics,
    mapError: (error) => {
      if ((error as Error).name === 'PayloadTooLargeError') return text(413, 'Payload Too Large');
      if ((error as Error).name === 'RequestTimeoutError') return text(408, 'Request Timeout');
      logger.error({ reason: error instanceof Error ? error.name : 'unknown' }, 'request failed');
      return { status: 500, headers: JSON_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } }) };
    },
    // Any path, any other method: the original (jayson) answered 405 with Allow: POST.
    notFound: () => text(405, 'Method Not Allowed', { allow: 'POST' }),
  });

  server.route(
    'post',
    '/*',
    async (request, { cancellation }) => {
      if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return text(415, 'Unsupported Media Type');
      const body = request.body?.toString('utf8') ?? '';
      const answer = await options.api.answer(body, cancellation, (error, parsed) => describeMethodError(error, passphrasesIn(parsed)));
      if (answer.kind === 'empty') return { status: 204 };
      return { status: answer.status, headers: JSON_HEADERS, body: JSON.stringify(answer.body) };
    },
    { body: { maxBytes: RPC_MAX_BODY_BYTES } },
  );
  return server;
}
