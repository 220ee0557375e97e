// CoinGecko: crypto quotes on the free Demo plan (key required in 4.2), docs/notes/rates.md D.7.
// Auth header `x-cg-demo-api-key` on every request. Startup reads `GET {base}/api/v3/coins/list`
// (`[{"id":"bitcoin","symbol":"btc",…}]`); each cycle asks
// `GET {base}/api/v3/simple/price?ids=bitcoin,…&vs_currencies=USD` → `{"bitcoin":{"usd":63000},…}`.

import type { CoingeckoBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector, type SourceContext } from './source.js';
import { coinWarnings, isOk, requireJson, roundedQuote, upstreamDetail, upstreamRequest } from './upstream-request.js';

const NAME = 'Coingecko';
export const COINGECKO_DEFAULT_URL = 'https://api.coingecko.com';
/** The coin directory is a multi-megabyte download made once per start, so it gets longer. */
const DIRECTORY_TIMEOUT_MS = 20_000;
/** Candidates named in an ambiguous-symbol warning: `btc` alone matches dozens of bridged tokens. */
const MAX_LISTED_CANDIDATES = 10;

export function createCoingeckoConnector(block: CoingeckoBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? COINGECKO_DEFAULT_URL).replace(/\/+$/, '');
  const apiKey = block.api_key;
  /** Symbol → CoinGecko id, filled by discovery. */
  let resolved: Map<string, string> | undefined;
  const report = coinWarnings();

  const get = async (ctx: SourceContext, path: string, timeoutMs?: number): Promise<unknown> => {
    if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
    const response = await upstreamRequest(NAME, ctx, `${base}${path}`, { timeoutMs, headers: { 'x-cg-demo-api-key': apiKey } });
    if (!isOk(response)) {
      // 429 `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit…"}}` (notes D.7).
      const message = (response.body as { status?: { error_message?: unknown } } | undefined)?.status?.error_message;
      throw new SourceFetchError(NAME, `HTTP ${response.status}${upstreamDetail(message, 120, apiKey)}`, response.status);
    }
    return requireJson(NAME, response);
  };

  const connector: SourceConnector = {
    name: NAME,
    weight: block.weight,
    // Ids name no symbol until the directory has been read.
    advertisedCoins: () => (resolved ? [...resolved.keys()] : [...block.coins]),
    async discover(ctx) {
      const list = await get(ctx, '/api/v3/coins/list', DIRECTORY_TIMEOUT_MS);
      if (!Array.isArray(list)) throw new SourceFetchError(NAME, 'the coin list is not an array');
      const entries = list.filter(
        (item): item is { id: string; symbol: string } => typeof item?.id === 'string' && typeof item?.symbol === 'string',
      );
      const coins = new Map<string, string>();
      // Explicit ids first: symbols are ambiguous on CoinGecko, an id is not.
      for (const id of block.ids) {
        const entry = entries.find((item) => item.id === id);
        if (!entry) {
          ctx.warn(`Unable to get ticker for ${NAME} id '${id}'. Check if the coin exists.`);
          continue;
        }
        const symbol = entry.symbol.toUpperCase();
        if (coins.has(symbol)) {
          ctx.warn(`Skipping ${NAME} id '${id}': symbol ${symbol} is already served by '${coins.get(symbol)}'.`);
          continue;
        }
        coins.set(symbol, id);
      }
      for (const symbol of block.coins) {
        if (coins.has(symbol)) continue;
        // The first id carrying the symbol, in coin-list order, as the original resolves it (notes D.7).
        const candidates = entries.filter((item) => item.symbol.toUpperCase() === symbol);
        const entry = candidates[0];
        if (!entry) {
          ctx.warn(`Unable to get ticker for ${NAME} symbol '${symbol}'. Check if the coin exists, or list its id in 'coingecko.ids'.`);
          continue;
        }
        if (candidates.length > 1) {
          const shown = candidates.slice(0, MAX_LISTED_CANDIDATES).map((item) => item.id);
          const more = candidates.length > shown.length ? ` and ${candidates.length - shown.length} more` : '';
          ctx.warn(
            // The candidates in parentheses: currencyinfo's own tests look for `matches 2 coins (adamant-messenger, adm-token)`.
            `Ambiguous ${NAME} symbol '${symbol}' matches ${candidates.length} coins (${shown.join(', ')}${more}). Picking the first one listed, '${entry.id}'; use 'coingecko.ids' to choose explicitly.`,
          );
        }
        coins.set(symbol, entry.id);
      }
      if (coins.size === 0) throw new SourceFetchError(NAME, 'none of the configured coins or ids was found in the coin list');
      resolved = coins;
    },
    async fetch(ctx) {
      if (!resolved) await connector.discover!(ctx);
      const coins = resolved!;
      const ids = [...new Set(coins.values())];
      const body = await get(ctx, `/api/v3/simple/price?ids=${ids.map(encodeURIComponent).join(',')}&vs_currencies=USD`);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SourceFetchError(NAME, 'the price response is not an object');
      const quotes: Quote[] = [];
      const problems: string[] = [];
      for (const [symbol, id] of coins) {
        const price = ((body as Record<string, unknown>)[id] as { usd?: unknown } | null | undefined)?.usd;
        // One id missing or unpriced drops that coin only, with the original's warning (4.1 failed the whole source).
        const quote = typeof price === 'number' ? roundedQuote(`${symbol}/USD`, price, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else problems.push(`Unable to get rates for ${NAME} ID '${id}'`);
      }
      report(ctx, problems);
      return quotes;
    },
  };
  return connector;
}
