// The real HttpJsonClient behind connectors (src/rates/sources/source.ts): global fetch with the caller's
// AbortSignal combined with a per-request timeout, and a bounded response body.

import type { HttpJsonClient, HttpJsonResponse } from '../src/rates/sources/source.js';

/** Upstream bodies are JSON lists of coins and prices; the largest (CoinPaprika's /v1/coins) is a few MiB. */
export const MAX_UPSTREAM_BODY_BYTES = 32 * 1024 * 1024;

export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
}

export const fetchJsonClient: HttpJsonClient = {
  async getJson(url, { headers, timeoutMs, signal }): Promise<HttpJsonResponse> {
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json', ...headers },
        signal: AbortSignal.any([signal, timeout]),
      });
    } catch (error) {
      // Never echo the URL: it may carry an access key in its query string.
      if (timeout.aborted) throw new UpstreamError(`request timed out after ${timeoutMs} ms`);
      if (signal.aborted) throw new UpstreamError('request aborted');
      const cause = (error as { cause?: { code?: string } }).cause;
      throw new UpstreamError(`request failed${cause?.code ? ` (${cause.code})` : ''}`);
    }
    const text = await readBounded(response, timeout);
    let body: unknown;
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  },
};

async function readBounded(response: Response, timeout: AbortSignal): Promise<string> {
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
        throw new UpstreamError(`response body larger than ${MAX_UPSTREAM_BODY_BYTES} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    throw new UpstreamError(timeout.aborted ? 'response timed out' : 'response interrupted');
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
