// CoinMarketCap Pro API: key-gated crypto quotes, notes/rates.md D.5.
// Auth header `X-CMC_PRO_API_KEY`. Startup resolves `coins` symbols to ids with
// `GET {base}/v1/cryptocurrency/quotes/latest?symbol=BTC,ETH`; each cycle asks
// `…/quotes/latest?id=1,1027,3703&convert=USD` and matches rows by symbol.

import type { CoinmarketcapBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'Coinmarketcap';
export const COINMARKETCAP_DEFAULT_URL = 'https://pro-api.coinmarketcap.com';
const QUOTES_PATH = '/v1/cryptocurrency/quotes/latest';
/** Per-source timeout (notes D.5, F.21). */
const TIMEOUT_MS = 10_000;

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
  let lastMissing = '';

  const get = async (ctx: SourceContext, query: string): Promise<unknown> => {
    if (!apiKey) throw new SourceFetchError(NAME, 'no API key is configured', undefined, true);
    const response = await request(ctx, `${base}${QUOTES_PATH}?${query}`, { 'X-CMC_PRO_API_KEY': apiKey });
    const body = response.body as { status?: { error_code?: unknown; error_message?: unknown }; data?: unknown } | undefined;
    const errorCode = body?.status?.error_code;
    const failed = response.status < 200 || response.status > 299 || (typeof errorCode === 'number' && errorCode !== 0);
    if (failed) {
      // 401 error_code 1001/1002 = bad or missing key, 429 error_code 1008 = rate limit (notes D.5).
      const detail = typeof errorCode === 'number' ? ` (error_code ${errorCode}${describe(body?.status?.error_message, apiKey)})` : '';
      throw new SourceFetchError(NAME, `HTTP ${response.status}${detail}`, response.status);
    }
    if (body === undefined) throw new SourceFetchError(NAME, 'the response is not JSON', response.status);
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
      for (const symbol of coins.keys()) {
        const price = rows.find((row) => row.symbol === symbol)?.quote?.USD?.price;
        const quote = typeof price === 'number' && price > 0 ? rounded(`${symbol}/USD`, price, options.decimals) : undefined;
        if (quote) quotes.push(quote);
        else missing.push(symbol);
      }
      if (quotes.length === 0) {
        throw new SourceFetchError(NAME, `Unable to get all of ${coins.size} coin rates. Check ${NAME} service and configuration file.`, 200);
      }
      // Warn when the set of missing coins changes, not every cycle: notifications are not throttled elsewhere.
      const key = missing.join(',');
      if (key !== '' && key !== lastMissing) ctx.warn(`${NAME} has no rate for: ${missing.join(', ')}.`);
      lastMissing = key;
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

function describe(message: unknown, key: string): string {
  return typeof message === 'string' && message !== '' ? `: ${message.split(key).join('***').replace(/[^\x20-\x7e]/g, '?').slice(0, 120)}` : '';
}

function rounded(pair: string, price: number, decimals: number): Quote | undefined {
  const value = Number(price.toFixed(decimals));
  return Number.isFinite(value) && value > 0 ? { pair, price: value } : undefined;
}

async function request(ctx: SourceContext, url: string, headers: Record<string, string>): Promise<HttpJsonResponse> {
  try {
    return await ctx.http.getJson(url, { headers, timeoutMs: TIMEOUT_MS, signal: ctx.signal });
  } catch (error) {
    throw new SourceFetchError(NAME, transportFailure(error, ctx.signal));
  }
}

/** Described by kind only: a client's own error text may quote the request. */
function transportFailure(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return 'request aborted';
  const name = error instanceof Error ? error.name : 'Error';
  if (/timeout/i.test(name)) return `no answer within ${TIMEOUT_MS} ms`;
  const loose = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = loose?.cause?.code ?? loose?.code;
  return `request failed (${typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : name})`;
}
