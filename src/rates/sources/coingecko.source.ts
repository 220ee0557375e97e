// CoinGecko: crypto quotes on the free Demo plan (key required in 4.2), notes/rates.md D.7.
// Auth header `x-cg-demo-api-key` on every request. Startup reads `GET {base}/api/v3/coins/list`
// (`[{"id":"bitcoin","symbol":"btc",…}]`); each cycle asks
// `GET {base}/api/v3/simple/price?ids=bitcoin,…&vs_currencies=USD` → `{"bitcoin":{"usd":63000},…}`.

import type { CoingeckoBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'Coingecko';
export const COINGECKO_DEFAULT_URL = 'https://api.coingecko.com';
/** Per-source timeout of a cycle (notes F.21). */
const TIMEOUT_MS = 10_000;
/** The coin directory is a multi-megabyte download made once per start, so it gets longer. */
const DIRECTORY_TIMEOUT_MS = 20_000;

export function createCoingeckoConnector(block: CoingeckoBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? COINGECKO_DEFAULT_URL).replace(/\/+$/, '');
  const apiKey = block.api_key;
  /** Symbol → CoinGecko id, filled by discovery. */
  let resolved: Map<string, string> | undefined;

  const get = async (ctx: SourceContext, path: string, timeoutMs: number): Promise<unknown> => {
    if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
    const response = await request(ctx, `${base}${path}`, timeoutMs, { 'x-cg-demo-api-key': apiKey });
    if (response.status < 200 || response.status > 299) {
      // 429 `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit…"}}` (notes D.7).
      const message = (response.body as { status?: { error_message?: unknown } } | undefined)?.status?.error_message;
      const detail = typeof message === 'string' && message !== '' ? `: ${message.split(apiKey).join('***').replace(/[^\x20-\x7e]/g, '?').slice(0, 120)}` : '';
      throw new SourceFetchError(NAME, `HTTP ${response.status}${detail}`, response.status);
    }
    if (response.body === undefined) throw new SourceFetchError(NAME, 'the response is not JSON', response.status);
    return response.body;
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
        // The first id carrying the symbol, as the original resolves it (notes D.7).
        const entry = entries.find((item) => item.symbol.toUpperCase() === symbol);
        if (!entry) {
          ctx.warn(`Unable to get ticker for ${NAME} symbol '${symbol}'. Check if the coin exists, or list its id in 'coingecko.ids'.`);
          continue;
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
      const body = await get(ctx, `/api/v3/simple/price?ids=${ids.map(encodeURIComponent).join(',')}&vs_currencies=USD`, TIMEOUT_MS);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SourceFetchError(NAME, 'the price response is not an object');
      const quotes: Quote[] = [];
      for (const [symbol, id] of coins) {
        const price = ((body as Record<string, unknown>)[id] as { usd?: unknown } | undefined)?.usd;
        // As in 4.1: an id missing from the answer fails the source (notes D.7).
        if (typeof price !== 'number' || !Number.isFinite(price) || price <= 0) throw new SourceFetchError(NAME, `the response has no USD price for id '${id}'`);
        const value = Number(price.toFixed(options.decimals));
        if (value > 0) quotes.push({ pair: `${symbol}/USD`, price: value });
      }
      return quotes;
    },
  };
  return connector;
}

async function request(ctx: SourceContext, url: string, timeoutMs: number, headers: Record<string, string>): Promise<HttpJsonResponse> {
  try {
    return await ctx.http.getJson(url, { headers, timeoutMs, signal: ctx.signal });
  } catch (error) {
    throw new SourceFetchError(NAME, transportFailure(error, ctx.signal, timeoutMs));
  }
}

/** Described by kind only: a client's own error text may quote the request. */
function transportFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return 'request aborted';
  const name = error instanceof Error ? error.name : 'Error';
  if (/timeout/i.test(name)) return `no answer within ${timeoutMs} ms`;
  const loose = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = loose?.cause?.code ?? loose?.code;
  return `request failed (${typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : name})`;
}
