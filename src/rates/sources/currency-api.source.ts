// CurrencyApi (fawazahmed0/exchange-api): keyless daily fiat rates, notes/rates.md D.1.
// `GET {url}` → `{"date":"…","usd":{"eur":0.8951,…}}`: units per 1 USD, lowercase keys.

import type { ConnectorOptions, CurrencyApiBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'CurrencyApi';
/** The jsDelivr copy; `https://latest.currency-api.pages.dev/v1/currencies/usd.json` is the upstream fallback (exchange-api#90). */
export const CURRENCY_API_DEFAULT_URL = 'https://cdn.jsdelivr.net/npm/@fawazahmed0/currency-api@latest/v1/currencies/usd.json';
/** Per-source timeout (notes F.21). */
const TIMEOUT_MS = 10_000;

export function createCurrencyApiConnector(block: CurrencyApiBlock, options: ConnectorOptions): SourceConnector {
  const url = block.url ?? CURRENCY_API_DEFAULT_URL;
  const codes = [...block.codes];

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...codes],
    async fetch(ctx) {
      const response = await request(ctx, url);
      if (response.status < 200 || response.status > 299) throw new SourceFetchError(NAME, `HTTP ${response.status}`, response.status);
      const body = response.body as { usd?: unknown } | undefined;
      if (response.body === undefined) throw new SourceFetchError(NAME, 'the response is not JSON', response.status);
      const rates = body?.usd;
      if (typeof rates !== 'object' || rates === null || Array.isArray(rates)) {
        throw new SourceFetchError(NAME, "the response has no 'usd' rates object", response.status);
      }
      const quotes: Quote[] = [];
      for (const code of codes) {
        if (code === 'USD') {
          quotes.push({ pair: 'USD/USD', price: 1 });
          continue;
        }
        const perUsd = (rates as Record<string, unknown>)[code.toLowerCase()];
        // Missing or zero rates are skipped, not fatal: the file covers hundreds of codes (notes D.1).
        if (typeof perUsd !== 'number' || !Number.isFinite(perUsd) || perUsd <= 0) continue;
        const quote = rounded(`${code}/USD`, 1 / perUsd, options.decimals);
        if (quote) quotes.push(quote);
      }
      return quotes;
    },
  };
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
