// ExchangeRateApi (open.er-api.com): keyless daily fiat rates, docs/notes/rates.md D.2.
// `GET {url}` → `{"result":"success","base_code":"USD","rates":{"EUR":0.86,…}}`: units per 1 USD.
// Failures arrive with HTTP 200: `{"result":"error","error-type":"unsupported-code"}`.

import type { ConnectorOptions, ExchangeRateApiBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, printableUpstreamText, requireJson, requireOk, roundedQuote, upstreamRequest } from './upstream-request.js';

const NAME = 'ExchangeRateApi';
/** The base currency is part of the path and must stay USD (notes D.2). */
export const EXCHANGE_RATE_API_DEFAULT_URL = 'https://open.er-api.com/v6/latest/USD';

export function createExchangeRateApiConnector(block: ExchangeRateApiBlock, options: ConnectorOptions): SourceConnector {
  const url = block.url ?? EXCHANGE_RATE_API_DEFAULT_URL;
  const codes = [...block.codes];
  const report = coinWarnings();

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...codes],
    async fetch(ctx) {
      const response = await upstreamRequest(NAME, ctx, url);
      const body = response.body as { result?: unknown; 'error-type'?: unknown; base_code?: unknown; rates?: unknown } | undefined;
      // The error body comes with HTTP 200, and 429 carries one too: read it before judging the status.
      if (body && typeof body === 'object' && body.result === 'error') {
        const type = typeof body['error-type'] === 'string' ? body['error-type'] : 'unknown';
        throw new SourceFetchError(NAME, `the API answered an error: ${printableUpstreamText(type, 80)}`, response.status);
      }
      requireOk(NAME, response);
      requireJson(NAME, response);
      if (typeof body !== 'object' || body === null || body.result !== 'success') {
        throw new SourceFetchError(NAME, "the response is not a 'success' result", response.status);
      }
      if (typeof body.rates !== 'object' || body.rates === null || Array.isArray(body.rates)) {
        throw new SourceFetchError(NAME, "the response has no 'rates' object", response.status);
      }
      // Rates against another base would be silently wrong by the cross rate.
      if (body.base_code !== 'USD') {
        throw new SourceFetchError(NAME, `the rates are based on ${printableUpstreamText(String(body.base_code), 80)}, not USD; point 'url' at …/latest/USD`, response.status);
      }
      const rates = body.rates as Record<string, unknown>;
      const quotes: Quote[] = [];
      const missing: string[] = [];
      // A missing, non-number or non-positive rate drops that code only, with a warning; the rest is served.
      for (const code of codes) {
        const perUsd = rates[code];
        const quote = typeof perUsd === 'number' && perUsd > 0 ? roundedQuote(`${code}/USD`, 1 / perUsd, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else missing.push(code);
      }
      report(ctx, missing.length > 0 ? [`Unable to get ${NAME} rates for: ${missing.join(', ')}.`] : []);
      return quotes;
    },
  };
}
