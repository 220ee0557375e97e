// CurrencyApi (fawazahmed0/exchange-api): keyless daily fiat rates, docs/notes/rates.md D.1.
// `GET {url}` → `{"date":"…","usd":{"eur":0.8951,…}}`: units per 1 USD, lowercase keys.

import type { ConnectorOptions, CurrencyApiBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, requireJson, requireOk, roundedQuote, upstreamRequest } from './upstream-request.js';

const NAME = 'CurrencyApi';
/** The jsDelivr copy; `https://latest.currency-api.pages.dev/v1/currencies/usd.json` is the upstream fallback (exchange-api#90). */
export const CURRENCY_API_DEFAULT_URL = 'https://cdn.jsdelivr.net/npm/@fawazahmed0/currency-api@latest/v1/currencies/usd.json';

export function createCurrencyApiConnector(block: CurrencyApiBlock, options: ConnectorOptions): SourceConnector {
  const url = block.url ?? CURRENCY_API_DEFAULT_URL;
  const codes = [...block.codes];
  const report = coinWarnings();

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...codes],
    async fetch(ctx) {
      const response = await upstreamRequest(NAME, ctx, url);
      requireOk(NAME, response);
      const rates = (requireJson(NAME, response) as { usd?: unknown } | null)?.usd;
      if (typeof rates !== 'object' || rates === null || Array.isArray(rates)) {
        throw new SourceFetchError(NAME, "the response has no 'usd' rates object", response.status);
      }
      const quotes: Quote[] = [];
      const missing: string[] = [];
      for (const code of codes) {
        if (code === 'USD') {
          quotes.push({ pair: 'USD/USD', price: 1 });
          continue;
        }
        const perUsd = (rates as Record<string, unknown>)[code.toLowerCase()];
        // A missing, zero or non-numeric rate drops that code only, with a warning; the rest is served (notes D.1).
        const quote = typeof perUsd === 'number' && perUsd > 0 ? roundedQuote(`${code}/USD`, 1 / perUsd, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else missing.push(code);
      }
      report(ctx, missing.length > 0 ? [`Unable to get ${NAME} rates for: ${missing.join(', ')}.`] : []);
      return quotes;
    },
  };
}
