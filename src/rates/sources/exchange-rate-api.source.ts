// ExchangeRateApi (open.er-api.com): keyless daily fiat rates, notes/rates.md D.2.
// `GET {url}` → `{"result":"success","base_code":"USD","rates":{"EUR":0.86,…}}`: units per 1 USD.
// Failures arrive with HTTP 200: `{"result":"error","error-type":"unsupported-code"}`.

import type { ConnectorOptions, ExchangeRateApiBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'ExchangeRateApi';
/** The base currency is part of the path and must stay USD (notes D.2). */
export const EXCHANGE_RATE_API_DEFAULT_URL = 'https://open.er-api.com/v6/latest/USD';
/** Per-source timeout (notes D.2, F.21). */
const TIMEOUT_MS = 10_000;

export function createExchangeRateApiConnector(block: ExchangeRateApiBlock, options: ConnectorOptions): SourceConnector {
  const url = block.url ?? EXCHANGE_RATE_API_DEFAULT_URL;
  const codes = [...block.codes];

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...codes],
    async fetch(ctx) {
      const response = await request(ctx, url);
      const body = response.body as { result?: unknown; 'error-type'?: unknown; base_code?: unknown; rates?: unknown } | undefined;
      // The error body comes with HTTP 200, and 429 carries one too: read it before judging the status.
      if (body && typeof body === 'object' && body.result === 'error') {
        const type = typeof body['error-type'] === 'string' ? body['error-type'] : 'unknown';
        throw new SourceFetchError(NAME, `the API answered an error: ${printable(type)}`, response.status);
      }
      if (response.status < 200 || response.status > 299) throw new SourceFetchError(NAME, `HTTP ${response.status}`, response.status);
      if (body === undefined) throw new SourceFetchError(NAME, 'the response is not JSON', response.status);
      if (typeof body !== 'object' || body === null || body.result !== 'success') {
        throw new SourceFetchError(NAME, "the response is not a 'success' result", response.status);
      }
      if (typeof body.rates !== 'object' || body.rates === null || Array.isArray(body.rates)) {
        throw new SourceFetchError(NAME, "the response has no 'rates' object", response.status);
      }
      // Rates against another base would be silently wrong by the cross rate.
      if (body.base_code !== 'USD') {
        throw new SourceFetchError(NAME, `the rates are based on ${printable(String(body.base_code))}, not USD; point 'url' at …/latest/USD`, response.status);
      }
      const rates = body.rates as Record<string, unknown>;
      const quotes: Quote[] = [];
      for (const code of codes) {
        const perUsd = rates[code];
        if (typeof perUsd !== 'number' || !Number.isFinite(perUsd) || perUsd <= 0) continue;
        const quote = rounded(`${code}/USD`, 1 / perUsd, options.decimals);
        if (quote) quotes.push(quote);
      }
      return quotes;
    },
  };
}

/** Upstream text in a notification: one short line. */
function printable(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').slice(0, 80);
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

/** Described by kind only: a client's own error text may quote the URL (notes E.3: 4.2 redacts URIs). */
function transportFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'request aborted';
  const name = error instanceof Error ? error.name : 'Error';
  if (/timeout/i.test(name)) return `no answer within ${TIMEOUT_MS} ms`;
  const loose = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = loose?.cause?.code ?? loose?.code;
  return `request failed (${typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : name})`;
}
