// CryptoCompare (now CoinDesk Data): the deprecated, subscription-only connector of spec §2.6, notes/rates.md D.6.
// `GET {base}/data/pricemulti?fsyms=USD,EUR,BTC&tsyms=USD&api_key=KEY` → `{"BTC":{"USD":63000.5},…}`.
// Errors: legacy HTTP 200 `{"Response":"Error","Message":"…"}`; since 21 May 2026 HTTP 401
// `{"Err":{"message":"API key required, …"}}`. The key is in the query, so no message here contains the URL.

import type { ConnectorOptions, CryptoCompareBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'CryptoCompare';
export const CRYPTOCOMPARE_DEFAULT_URL = 'https://min-api.cryptocompare.com';
/** Per-source timeout (notes F.21). */
const TIMEOUT_MS = 10_000;

export function createCryptoCompareConnector(block: CryptoCompareBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? CRYPTOCOMPARE_DEFAULT_URL).replace(/\/+$/, '');
  const coins = [...block.coins];
  const apiKey = block.api_key;

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...coins],
    async fetch(ctx) {
      if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
      const query = `fsyms=${coins.map(encodeURIComponent).join(',')}&tsyms=USD&api_key=${encodeURIComponent(apiKey)}`;
      const response = await request(ctx, `${base}/data/pricemulti?${query}`);
      const body = response.body as Record<string, unknown> | undefined;
      const upstreamError =
        body && typeof body === 'object'
          ? body.Response === 'Error'
            ? body.Message
            : (body.Err as { message?: unknown } | undefined)?.message
          : undefined;
      if (upstreamError !== undefined || response.status < 200 || response.status > 299) {
        const detail = typeof upstreamError === 'string' && upstreamError !== '' ? `: ${scrub(upstreamError, apiKey)}` : '';
        const status = response.status >= 200 && response.status <= 299 ? 'the API answered an error' : `HTTP ${response.status}`;
        throw new SourceFetchError(NAME, `${status}${detail}`, response.status);
      }
      if (body === undefined || typeof body !== 'object' || body === null) throw new SourceFetchError(NAME, 'the response is not a JSON object', response.status);
      const quotes: Quote[] = [];
      for (const coin of coins) {
        const price = (body[coin] as { USD?: unknown } | undefined)?.USD;
        // As in 4.1: a configured coin without a price fails the whole source (notes D.6).
        if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) {
          throw new SourceFetchError(NAME, `the response has no USD price for ${coin}`, response.status);
        }
        const value = Number(price.toFixed(options.decimals));
        if (value > 0) quotes.push({ pair: `${coin}/USD`, price: value });
      }
      return quotes;
    },
  };
}

/** Upstream text in a notification: one short line, never the key. */
function scrub(text: string, key: string): string {
  return text.split(key).join('***').replace(/[^\x20-\x7e]/g, '?').slice(0, 160);
}

async function request(ctx: SourceContext, url: string): Promise<HttpJsonResponse> {
  try {
    return await ctx.http.getJson(url, { timeoutMs: TIMEOUT_MS, signal: ctx.signal });
  } catch (error) {
    throw new SourceFetchError(NAME, transportFailure(error, ctx.signal));
  }
}

/** Described by kind only: a client's own error text may quote the URL, and this URL carries the key. */
function transportFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'request aborted';
  const name = error instanceof Error ? error.name : 'Error';
  if (/timeout/i.test(name)) return `no answer within ${TIMEOUT_MS} ms`;
  const loose = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = loose?.cause?.code ?? loose?.code;
  return `request failed (${typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : name})`;
}
