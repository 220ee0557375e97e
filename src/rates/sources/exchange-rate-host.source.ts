// ExchangeRateHost (exchangerate.host, APILayer): key-gated fiat, metals and BTC, docs/notes/rates.md D.3.
// `GET {base}/live?access_key=KEY` → `{"success":true,"source":"USD","quotes":{"USDEUR":0.92,…}}`.
// Errors come with HTTP 200: `{"success":false,"error":{"code":101,"type":"missing_access_key",…}}`.
// The key travels in the query string, so no message of this file ever contains the request URL.

import type { ConnectorOptions, ExchangeRateHostBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, printableUpstreamText, requireJson, requireOk, roundedQuote, upstreamRequest } from './upstream-request.js';

const NAME = 'ExchangeRateHost';
/** Hard-coded in the original; `url` overrides the origin (notes F.2). */
export const EXCHANGE_RATE_HOST_DEFAULT_URL = 'https://api.exchangerate.host';

export function createExchangeRateHostConnector(block: ExchangeRateHostBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? EXCHANGE_RATE_HOST_DEFAULT_URL).replace(/\/+$/, '');
  const codes = [...block.codes];
  const report = coinWarnings();
  const apiKey = block.api_key;

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...codes],
    async fetch(ctx) {
      if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
      // The key travels in the query: upstreamRequest's messages never quote the URL.
      const response = await upstreamRequest(NAME, ctx, `${base}/live?access_key=${encodeURIComponent(apiKey)}`);
      const body = response.body as { success?: unknown; error?: { code?: unknown; type?: unknown }; quotes?: unknown } | undefined;
      if (body && typeof body === 'object' && body.success === false) {
        // `code` and `type` are enough to act on; `info` is prose we do not need to forward.
        const code = typeof body.error?.code === 'number' ? body.error.code : '?';
        const type = typeof body.error?.type === 'string' ? printableUpstreamText(body.error.type, 80, apiKey) : 'unknown';
        throw new SourceFetchError(NAME, `the API answered error ${code} (${type})`, response.status);
      }
      requireOk(NAME, response);
      requireJson(NAME, response);
      const rates = body?.quotes;
      if (typeof rates !== 'object' || rates === null || Array.isArray(rates)) {
        throw new SourceFetchError(NAME, "the response has no 'quotes' object", response.status);
      }
      const quotes: Quote[] = [];
      const missing: string[] = [];
      // A missing, non-number or non-positive rate drops that code only, with a warning; the rest is served.
      for (const code of codes) {
        const perUsd = (rates as Record<string, unknown>)[`USD${code}`];
        const quote = typeof perUsd === 'number' && perUsd > 0 ? roundedQuote(`${code}/USD`, 1 / perUsd, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else missing.push(code);
      }
      report(ctx, missing.length > 0 ? [`Unable to get ${NAME} rates for: ${missing.join(', ')}.`] : []);
      return quotes;
    },
  };
}
