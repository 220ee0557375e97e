// The real HttpJsonClient behind connectors (src/rates/sources/source.ts): global fetch with the caller's
// AbortSignal combined with a per-request deadline on the runtime's clock, and a bounded response body. Failures are
// thrown as the contract's classes (UpstreamTimeoutError, UpstreamRequestError), so connectors classify by class, not
// text.

import { deadline, type Clock, type Deadline } from '../../src/clock.js';
import {
  UpstreamRequestError,
  UpstreamTimeoutError,
  type HttpJsonClient,
  type HttpJsonResponse,
} from '../../src/rates/sources/source.js';

/** Upstream bodies are JSON lists of coins and prices; the largest (CoinPaprika's /v1/coins) is a few MiB. */
export const MAX_UPSTREAM_BODY_BYTES = 32 * 1024 * 1024;

/** The client over global fetch; `timeoutMs` runs on `clock` (docs/DESIGN.md rule 2), so a SimulatedClock drives it. */
export function fetchJsonClient(clock: Clock): HttpJsonClient {
  return {
    async getJson(url, { headers, timeoutMs, signal }): Promise<HttpJsonResponse> {
      // One deadline for the whole exchange: a server that sends headers and then stalls the body is a timeout too.
      const bound = deadline(clock, timeoutMs, signal);
      try {
        let response: Response;
        try {
          response = await fetch(url, { headers: { accept: 'application/json', ...headers }, signal: bound.signal });
        } catch (error) {
          throw transportError(error, signal, bound, timeoutMs);
        }
        const text = await readBounded(response, signal, bound, timeoutMs);
        let body: unknown;
        try {
          body = text.length > 0 ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        return { status: response.status, body };
      } finally {
        bound.clear();
      }
    },
  };
}

async function readBounded(response: Response, signal: AbortSignal, bound: Deadline, timeoutMs: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_UPSTREAM_BODY_BYTES) {
        await reader.cancel();
        throw new UpstreamRequestError('body-too-large', { limitBytes: MAX_UPSTREAM_BODY_BYTES });
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof UpstreamRequestError) throw error;
    throw transportError(error, signal, bound, timeoutMs);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

/**
 * Classified by which signal fired, never by fetch's own error text: that text (and its `cause`) may quote the
 * URL, and the URL may carry an access key. The caller's abort wins over a coincident timeout.
 */
function transportError(error: unknown, signal: AbortSignal, bound: Deadline, timeoutMs: number): Error {
  if (signal.aborted) return new UpstreamRequestError('aborted');
  if (bound.expired) return new UpstreamTimeoutError(timeoutMs);
  // undici reports the socket failure as `TypeError('fetch failed', { cause })`; the cause carries the code.
  const loose = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  return new UpstreamRequestError('connection', { code: loose?.cause?.code ?? loose?.code });
}
