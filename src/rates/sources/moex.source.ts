// MOEX (Moscow Exchange, currency market): keyless RUB rates, docs/notes/rates.md D.4.
// `GET {url}` → `{"securities":{"columns":[…],"data":[[SECID, BOARDID, SHORTNAME, …, PREVPRICE, PREVWAPRICE, …], …]}}`.
// Only `securities.data` is read, by column index as the original does.

import type { ConnectorOptions, MoexBlock } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, requireJson, requireOk, roundedQuote, upstreamRequest } from './upstream-request.js';

const NAME = 'MOEX';
/** ADAMANT's proxy: MOEX may refuse requests from some countries. Direct: https://iss.moex.com/iss/engines/currency/markets/selt/securities.jsonp */
export const MOEX_DEFAULT_URL = 'https://rusdoor.adamant.im/securities.jsonp';

/** Column indexes in `securities.data` rows (notes D.4). */
const BOARDID = 1;
const SHORTNAME = 2;
const PREVPRICE = 14;
const PREVWAPRICE = 15;
/** The board whose rows are used: the system-traded currency market. */
const BOARD = 'CETS';
/** The USD rate every `X/USD` is derived from, and the one pair that yields `RUB/USD`. */
const USD_RUB = 'USD/RUB';
/** MOEX quotes JPY per 100 units. */
const PER_HUNDRED = new Set(['JPY/RUB']);

export function createMoexConnector(block: MoexBlock, options: ConnectorOptions): SourceConnector {
  const url = block.url ?? MOEX_DEFAULT_URL;
  const codes = { ...block.codes };
  const pairs = Object.keys(codes);
  const report = coinWarnings();

  return {
    name: NAME,
    weight: block.weight,
    // `USD/RUB` stands for RUB (it yields RUB/USD), every other `X/RUB` for X.
    advertisedCoins: () => [...new Set(pairs.map((pair) => (pair === USD_RUB ? 'RUB' : pair.replace(/\/RUB$/, ''))))],
    async fetch(ctx) {
      const response = await upstreamRequest(NAME, ctx, url);
      requireOk(NAME, response);
      const data = (requireJson(NAME, response) as { securities?: { data?: unknown } } | null)?.securities?.data;
      if (!Array.isArray(data)) throw new SourceFetchError(NAME, "the response has no 'securities.data' rows", response.status);
      const rows = data.filter((row): row is unknown[] => Array.isArray(row) && row[BOARDID] === BOARD);

      const priceOf = (pair: string): number | undefined => {
        const row = rows.find((candidate) => candidate[SHORTNAME] === codes[pair]);
        if (!row) return undefined;
        const previous = row[PREVPRICE];
        const weighted = row[PREVWAPRICE];
        // A falsy price (null before the first trade, or 0) makes the row unusable (notes D.4), and so does a negative one.
        if (typeof previous !== 'number' || typeof weighted !== 'number' || !(previous > 0) || !(weighted > 0)) return undefined;
        const price = (previous + weighted) / 2;
        return PER_HUNDRED.has(pair) ? price / 100 : price;
      };

      const usdRub = USD_RUB in codes ? priceOf(USD_RUB) : undefined;
      const quotes: Quote[] = [];
      /** Pushes the rounded quote and returns its price, or undefined when there was none to push. */
      const push = (pair: string, price: number): number | undefined => {
        const quote = roundedQuote(pair, price, options.decimals);
        if (quote) quotes.push(quote);
        return quote?.price;
      };
      const missing: string[] = [];
      for (const pair of pairs) {
        const price = priceOf(pair);
        // A pair without a usable CETS row drops only itself (and, for USD/RUB, the derived X/USD pairs).
        if (price === undefined) {
          missing.push(pair);
          continue;
        }
        if (pair === USD_RUB) {
          if (push('RUB/USD', 1 / price) === undefined) missing.push(pair);
          continue;
        }
        const direct = push(pair, price);
        if (direct === undefined) missing.push(pair);
        // The original divides the rounded direct rate, keeping both pairs consistent with what is served.
        else if (usdRub) push(`${pair.replace(/\/RUB$/, '')}/USD`, direct / usdRub);
      }
      report(ctx, missing.length > 0 ? [`Unable to get ${NAME} rates for: ${missing.join(', ')}.`] : []);
      return quotes;
    },
  };
}
