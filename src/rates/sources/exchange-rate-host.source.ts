// ExchangeRateHost (exchangerate.host, APILayer): key-gated fiat, metals and BTC, notes/rates.md D.3.
// `GET {base}/live?access_key=KEY` → `{"success":true,"source":"USD","quotes":{"USDEUR":0.92,…}}`.
// Errors come with HTTP 200: `{"success":false,"error":{"code":101,"type":"missing_access_key",…}}`.
// The key travels in the query string, so no message of this file ever contains the request URL.

import type { ConnectorOptions, ExchangeRateHostBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'ExchangeRateHost';
/** Hard-coded in the original; `url` overrides the origin (notes F.2). */
export const EXCHANGE_RATE_HOST_DEFAULT_URL = 'https://api.exchangerate.host';
/** Per-source timeout (notes F.21). */
const TIMEOUT_MS = 10_000;

export function createExchangeRateHostConnector(block: ExchangeRateHostBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? EXCHANGE_RATE_HOST_DEFAULT_URL).replace(/\/+$/, '');
  const codes = [...block.codes];
  const apiKey = block.api_key;

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...codes],
    async fetch(ctx) {
      if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
      const response = await request(ctx, `${base}/live?access_key=${encodeURIComponent(apiKey)}`);
      const body = response.body as { success?: unknown; error?: { code?: unknown; type?: unknown }; quotes?: unknown } | undefined;
      if (body && typeof body === 'object' && body.success === false) {
        // `code` and `type` are enough to act on; `info` is prose we do not need to forward.
        const code = typeof body.error?.code === 'number' ? body.error.code : '?';
        const type = typeof body.error?.type === 'string' ? scrub(body.error.type, apiKey) : 'unknown';
        throw new SourceFetchError(NAME, `the API answered error ${code} (${type})`, response.status);
      }
      if (response.status < 200 || response.status > 299) throw new SourceFetchError(NAME, `HTTP ${response.status}`, response.status);
      if (body === undefined) throw new SourceFetchError(NAME, 'the response is not JSON', response.status);
      const rates = body?.quotes;
      if (typeof rates !== 'object' || rates === null || Array.isArray(rates)) {
        throw new SourceFetchError(NAME, "the response has no 'quotes' object", response.status);
      }
      const quotes: Quote[] = [];
      for (const code of codes) {
        const perUsd = (rates as Record<string, unknown>)[`USD${code}`];
        if (typeof perUsd !== 'number' || !Number.isFinite(perUsd) || perUsd <= 0) continue;
        const quote = rounded(`${code}/USD`, 1 / perUsd, options.decimals);
        if (quote) quotes.push(quote);
      }
      return quotes;
    },
  };
}

/** Upstream text in a notification: one short line, never the key. */
function scrub(text: string, key: string): string {
  return text.split(key).join('***').replace(/[^\x20-\x7e]/g, '?').slice(0, 80);
}

function rounded(pair: string, price: number, decimals: number): Quote | undefined {
  const value = Number(price.toFixed(decimals));
  return Number.isFinite(value) && value > 0 ? { pair, price: value } : undefined;
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
