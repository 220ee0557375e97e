// CoinMarketCap Pro API: key-gated crypto quotes, docs/notes/rates.md D.5.
// Auth header `X-CMC_PRO_API_KEY`. Startup resolves `coins` symbols to ids with
// `GET {base}/v1/cryptocurrency/quotes/latest?symbol=BTC,ETH`; each cycle asks
// `…/quotes/latest?id=1,1027,3703&convert=USD` and matches rows by symbol.

import type { CoinmarketcapBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector, type SourceContext } from './source.js';
import { coinWarnings, isOk, requireJson, roundedQuote, upstreamDetail, upstreamRequest, upstreamValue } from './upstream-request.js';

const NAME = 'Coinmarketcap';
export const COINMARKETCAP_DEFAULT_URL = 'https://pro-api.coinmarketcap.com';
const QUOTES_PATH = '/v1/cryptocurrency/quotes/latest';

interface CmcRow {
  id?: unknown;
  symbol?: unknown;
  quote?: { USD?: { price?: unknown } };
}

export function createCoinmarketcapConnector(block: CoinmarketcapBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? COINMARKETCAP_DEFAULT_URL).replace(/\/+$/, '');
  const apiKey = block.api_key;
  const configuredIds = { ...block.ids };
  // Explicit ids win and cost no lookup credit; only the remaining symbols are resolved at startup.
  const symbolsToResolve = block.coins.filter((coin) => !(coin in configuredIds));
  /** Symbol → UCID, filled by discovery. */
  let resolved: Map<string, number> | undefined;
  const report = coinWarnings();

  const get = async (ctx: SourceContext, query: string): Promise<unknown> => {
    if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
    const response = await upstreamRequest(NAME, ctx, `${base}${QUOTES_PATH}?${query}`, { headers: { 'X-CMC_PRO_API_KEY': apiKey } });
    const body = response.body as { status?: { error_code?: unknown; error_message?: unknown }; data?: unknown } | undefined;
    const errorCode = body?.status?.error_code;
    const failed = !isOk(response) || (typeof errorCode === 'number' && errorCode !== 0);
    if (failed) {
      // 401 error_code 1001/1002 = bad or missing key, 429 error_code 1008 = rate limit (notes D.5).
      const detail = typeof errorCode === 'number' ? ` (error_code ${errorCode}${upstreamDetail(body?.status?.error_message, 120, apiKey)})` : '';
      throw new SourceFetchError(NAME, `HTTP ${response.status}${detail}`, response.status);
    }
    requireJson(NAME, response);
    if (typeof body?.data !== 'object' || body.data === null) throw new SourceFetchError(NAME, "the response has no 'data' object", response.status);
    return body.data;
  };

  const connector: SourceConnector = {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => (resolved ? [...resolved.keys()] : [...new Set([...Object.keys(configuredIds), ...block.coins])]),
    async discover(ctx) {
      const ids = new Map(Object.entries(configuredIds));
      if (symbolsToResolve.length > 0) {
        const data = await get(ctx, `symbol=${symbolsToResolve.map(encodeURIComponent).join(',')}`);
        const rows = rowsOf(data);
        for (const symbol of symbolsToResolve) {
          const row = rows.find((candidate) => candidate.symbol === symbol && typeof candidate.id === 'number');
          if (!row) {
            ctx.warn(`Unable to get ticker for ${NAME} symbol '${symbol}'. Check if the coin exists, or set its id in 'coinmarketcap.ids'.`);
            continue;
          }
          ids.set(symbol, row.id as number);
        }
      }
      if (ids.size === 0) throw new SourceFetchError(NAME, 'none of the configured coins has a CoinMarketCap id');
      resolved = ids;
    },
    async fetch(ctx) {
      if (!resolved) await connector.discover!(ctx);
      const coins = resolved!;
      const data = await get(ctx, `id=${[...new Set(coins.values())].join(',')}&convert=USD`);
      const rows = rowsOf(data);
      const quotes: Quote[] = [];
      const missing: string[] = [];
      const problems: string[] = [];
      for (const [symbol, id] of coins) {
        // Rows are matched by symbol, as the original does (notes D.5); the row under the requested id tells a stale id.
        const row = rows.find((candidate) => candidate.symbol === symbol);
        if (!row) {
          const other = rows.find((candidate) => candidate.id === id);
          if (other) {
            problems.push(
              `${NAME} id ${id} returned symbol '${upstreamValue(other.symbol)}' instead of the configured '${symbol}'. Skipping the rate, check 'coinmarketcap.ids'.`,
            );
          }
        }
        const price = row?.quote?.USD?.price;
        const quote = typeof price === 'number' ? roundedQuote(`${symbol}/USD`, price, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else missing.push(symbol);
      }
      if (quotes.length === 0) {
        report(ctx, problems);
        // notes D.5 / E.3: the original notifies this one at level error, not as the warning of a failed fetch.
        throw new SourceFetchError(NAME, `Unable to get all of ${coins.size} coin rates. Check ${NAME} service and configuration file.`, 200, false, 'error');
      }
      // The original's partial-miss text (4.2 coinmarketcap.ts).
      if (missing.length > 0) problems.push(`${NAME} rates updated against USD successfully, except ${missing.join(', ')}`);
      report(ctx, problems);
      return quotes;
    },
  };
  return connector;
}

/** `data` is keyed by symbol or id; v2-style answers hold an array per symbol. */
function rowsOf(data: unknown): CmcRow[] {
  return Object.values(data as Record<string, unknown>)
    .flatMap((value) => (Array.isArray(value) ? value : [value]))
    .filter((row): row is CmcRow => typeof row === 'object' && row !== null);
}
