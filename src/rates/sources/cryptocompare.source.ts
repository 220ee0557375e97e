// CryptoCompare (now CoinDesk Data): the deprecated, subscription-only connector of spec §2.6, docs/notes/rates.md D.6.
// `GET {base}/data/pricemulti?fsyms=USD,EUR,BTC&tsyms=USD&api_key=KEY` → `{"BTC":{"USD":63000.5},…}`.
// Errors: legacy HTTP 200 `{"Response":"Error","Message":"…"}`; since 21 May 2026 HTTP 401
// `{"Err":{"message":"API key required, …"}}`. The key is in the query, so no message here contains the URL.

import type { ConnectorOptions, CryptoCompareBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, isOk, roundedQuote, upstreamDetail, upstreamRequest } from './upstream-request.js';

const NAME = 'CryptoCompare';
export const CRYPTOCOMPARE_DEFAULT_URL = 'https://min-api.cryptocompare.com';

export function createCryptoCompareConnector(block: CryptoCompareBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? CRYPTOCOMPARE_DEFAULT_URL).replace(/\/+$/, '');
  const coins = [...block.coins];
  const apiKey = block.api_key;
  const report = coinWarnings();

  return {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...coins],
    async fetch(ctx) {
      if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
      const query = `fsyms=${coins.map(encodeURIComponent).join(',')}&tsyms=USD&api_key=${encodeURIComponent(apiKey)}`;
      const response = await upstreamRequest(NAME, ctx, `${base}/data/pricemulti?${query}`);
      const body = response.body as Record<string, unknown> | undefined;
      const upstreamError =
        body && typeof body === 'object'
          ? body.Response === 'Error'
            ? body.Message
            : (body.Err as { message?: unknown } | undefined)?.message
          : undefined;
      if (upstreamError !== undefined || !isOk(response)) {
        const status = isOk(response) ? 'the API answered an error' : `HTTP ${response.status}`;
        throw new SourceFetchError(NAME, `${status}${upstreamDetail(upstreamError, 160, apiKey)}`, response.status);
      }
      if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) throw new SourceFetchError(NAME, 'the response is not a JSON object', response.status);
      const quotes: Quote[] = [];
      const missing: string[] = [];
      for (const coin of coins) {
        const price = (body[coin] as { USD?: unknown } | null | undefined)?.USD;
        // A coin without a usable price is dropped, the others served: 4.1 failed the whole source (notes D.6),
        // 4.2 skips the coin silently; we skip it and say so.
        const quote = typeof price === 'number' ? roundedQuote(`${coin}/USD`, price, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else missing.push(coin);
      }
      report(ctx, missing.length > 0 ? [`Unable to get ${NAME} rates for: ${missing.join(', ')}.`] : []);
      return quotes;
    },
  };
}
