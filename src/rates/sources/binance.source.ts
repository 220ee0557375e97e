// Binance public market data: keyless exchange prices, docs/notes/rates.md D.10.
// Binance has no USD markets: `<COIN><quote_asset>` (default USDT) is requested and emitted as `COIN/USD`
// with no conversion. The substitution lives here, not in `mappings`, so the aggregators' genuine
// `USDT/USD` quote stays observable during a depeg.
// Startup: `GET {base}/api/v3/exchangeInfo?symbols=["BTCUSDT",…]`; one unlisted market fails the whole
// request with HTTP 400, so it is then retried per market with `?symbol=BTCUSDT`.
// Each cycle: `GET {base}/api/v3/ticker/price?symbols=[…]` → `[{"symbol":"BTCUSDT","price":"81867.52"}]`.

import type { BinanceBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';
import { coinWarnings, requireOk, roundPrice, upstreamRequest } from './upstream-request.js';

const NAME = 'Binance';
export const BINANCE_DEFAULT_URL = 'https://api.binance.com';
/** exchangeInfo is slower and read once per start (notes D.10). */
const EXCHANGE_INFO_TIMEOUT_MS = 15_000;
/** Unavailable For Legal Reasons: a regional block that a retry cannot fix. */
const GEO_BLOCKED = 451;
const GEO_BLOCK_MESSAGE =
  'Binance answered HTTP 451 (unavailable for legal reasons): the API is geo-restricted in this region. The source is disabled for this run; restart the service to re-probe it.';

interface MarketInfo {
  symbol?: unknown;
  status?: unknown;
}

export function createBinanceConnector(block: BinanceBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? BINANCE_DEFAULT_URL).replace(/\/+$/, '');
  const quoteAsset = block.quote_asset;
  /** Market string (`BTCUSDT`) → configured coin (`BTC`); a coin equal to the quote asset has no market. */
  const candidates = new Map(block.coins.filter((coin) => coin !== quoteAsset).map((coin) => [`${coin}${quoteAsset}`, coin]));
  /** Tradable markets, filled by discovery. */
  let markets: Map<string, string> | undefined;
  let geoBlocked = false;
  const report = coinWarnings();

  const geoBlock = (): SourceFetchError => {
    geoBlocked = true;
    return new SourceFetchError(NAME, GEO_BLOCK_MESSAGE, GEO_BLOCKED, true);
  };
  const exchangeInfo = (ctx: SourceContext, query: string) =>
    upstreamRequest(NAME, ctx, `${base}/api/v3/exchangeInfo?${query}`, { timeoutMs: EXCHANGE_INFO_TIMEOUT_MS });

  const connector: SourceConnector = {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => [...(markets ?? candidates).values()],
    async discover(ctx) {
      if (geoBlocked) throw new SourceFetchError(NAME, GEO_BLOCK_MESSAGE, GEO_BLOCKED, true);
      if (candidates.size === 0) throw new SourceFetchError(NAME, 'no coin is configured', undefined, true);
      let listed: MarketInfo[] = [];
      const bulk = await exchangeInfo(ctx, `symbols=${encodeURIComponent(JSON.stringify([...candidates.keys()]))}`);
      if (bulk.status === GEO_BLOCKED) throw geoBlock();
      if (bulk.status === 400) {
        // The answer does not say which market is unlisted (`{"code":-1121,"msg":"Invalid symbol."}`): ask one by one.
        for (const market of candidates.keys()) {
          const single = await exchangeInfo(ctx, `symbol=${encodeURIComponent(market)}`);
          if (single.status === GEO_BLOCKED) throw geoBlock();
          if (single.status === 400) {
            ctx.warn(`Market '${market}' is not listed on ${NAME}. Skipping the coin.`);
            continue;
          }
          listed.push(...symbolsOf(single));
        }
      } else {
        listed = symbolsOf(bulk);
      }
      const tradable = new Map<string, string>();
      const notTrading: string[] = [];
      for (const info of listed) {
        const market = typeof info.symbol === 'string' ? info.symbol : '';
        const coin = candidates.get(market);
        if (coin === undefined) continue;
        if (info.status === 'TRADING') tradable.set(market, coin);
        else notTrading.push(market);
      }
      if (notTrading.length > 0) ctx.warn(`${NAME} markets are not trading and will be skipped: ${notTrading.join(', ')}.`);
      if (tradable.size === 0) throw new SourceFetchError(NAME, `none of the configured coins has a trading ${quoteAsset} market`);
      markets = tradable;
    },
    async fetch(ctx) {
      if (geoBlocked) throw new SourceFetchError(NAME, GEO_BLOCK_MESSAGE, GEO_BLOCKED, true);
      if (!markets) await connector.discover!(ctx);
      const tradable = markets!;
      const response = await upstreamRequest(NAME, ctx, `${base}/api/v3/ticker/price?symbols=${encodeURIComponent(JSON.stringify([...tradable.keys()]))}`);
      if (response.status === GEO_BLOCKED) throw geoBlock();
      requireOk(NAME, response);
      if (!Array.isArray(response.body)) throw new SourceFetchError(NAME, 'the price answer is not an array', response.status);
      const prices = new Map<string, unknown>();
      for (const row of response.body as { symbol?: unknown; price?: unknown }[]) {
        // A malformed row (null, no symbol) names no market: it can only leave its own coin missing.
        if (row && typeof row === 'object' && typeof row.symbol === 'string') prices.set(row.symbol, row.price);
      }
      const quotes: Quote[] = [];
      const missing: string[] = [];
      for (const [market, coin] of tradable) {
        // Prices are strings, e.g. "81867.52000000"; anything that is not one positive finite number drops the coin.
        const price = prices.get(market);
        const value = typeof price === 'string' || typeof price === 'number' ? roundPrice(Number(price), options.decimals) : undefined;
        if (value !== undefined) quotes.push({ pair: `${coin}/USD`, price: value });
        else missing.push(coin);
      }
      // The original's text (4.2 binance.ts).
      report(ctx, missing.length > 0 ? [`Unable to get ${NAME} rates for: ${missing.join(', ')}.`] : []);
      return quotes;
    },
  };
  return connector;
}

function symbolsOf(response: HttpJsonResponse): MarketInfo[] {
  requireOk(NAME, response, 'from exchangeInfo');
  const symbols = (response.body as { symbols?: unknown } | undefined)?.symbols;
  if (!Array.isArray(symbols)) throw new SourceFetchError(NAME, "exchangeInfo has no 'symbols' array", response.status);
  return symbols.filter((info): info is MarketInfo => typeof info === 'object' && info !== null);
}
