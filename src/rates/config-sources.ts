// The rates sources as the configuration names them: each config key's connector, and what a source needs before it
// may run (docs/notes/rates.md B.1.2, E.2).

import type { RatesSources, SourceKey } from './config.js';
import type { SourceName } from './types.js';

/** Config key ↔ connector name, in the fixed connector order (types.ts SOURCE_ORDER). */
export const SOURCE_KEYS: Readonly<Record<SourceName, SourceKey>> = {
  CurrencyApi: 'currency_api',
  ExchangeRateApi: 'exchange_rate_api',
  ExchangeRateHost: 'exchange_rate_host',
  MOEX: 'moex',
  Coinmarketcap: 'coinmarketcap',
  CryptoCompare: 'cryptocompare',
  Coingecko: 'coingecko',
  CoinPaprika: 'coinpaprika',
  CoinLore: 'coinlore',
  Binance: 'binance',
};

/** What each source needs before it may run (notes E.2; messages of later upstream documentation). */
interface SourceRule {
  readonly display: string;
  /** Which list(s) give the source something to fetch, and how to name them in a message. */
  readonly things: 'currency code' | 'market code' | 'coin' | 'coin or ID';
  readonly thingsKey: 'codes' | 'coins';
  /** Present for key-gated sources: the message when the key is missing. */
  readonly keyMessage?: string;
}

export const SOURCE_RULES: Readonly<Record<SourceKey, SourceRule>> = {
  currency_api: { display: 'CurrencyApi', things: 'currency code', thingsKey: 'codes' },
  exchange_rate_api: { display: 'ExchangeRateApi', things: 'currency code', thingsKey: 'codes' },
  exchange_rate_host: {
    display: 'ExchangeRateHost',
    things: 'currency code',
    thingsKey: 'codes',
    keyMessage: 'Provide an API key when ExchangeRateHost is enabled',
  },
  moex: { display: 'MOEX', things: 'market code', thingsKey: 'codes' },
  coinmarketcap: {
    display: 'CoinMarketCap',
    things: 'coin or ID',
    thingsKey: 'coins',
    keyMessage: 'Provide an API key when CoinMarketCap is enabled',
  },
  cryptocompare: {
    display: 'CryptoCompare',
    things: 'coin',
    thingsKey: 'coins',
    keyMessage:
      'Provide a CoinDesk Data (former CryptoCompare) API key when CryptoCompare is enabled. The free tier was retired on 21 May 2026',
  },
  coingecko: {
    display: 'CoinGecko',
    things: 'coin or ID',
    thingsKey: 'coins',
    keyMessage:
      'Provide a free CoinGecko Demo API key when CoinGecko is enabled. Get one at https://www.coingecko.com/en/developers/dashboard',
  },
  coinpaprika: { display: 'CoinPaprika', things: 'coin or ID', thingsKey: 'coins' },
  coinlore: { display: 'CoinLore', things: 'coin or ID', thingsKey: 'coins' },
  binance: { display: 'Binance', things: 'coin', thingsKey: 'coins' },
};

export const SOURCE_KEY_LIST = Object.keys(SOURCE_RULES) as SourceKey[];

const countOf = (value: unknown): number =>
  Array.isArray(value) ? value.length : typeof value === 'object' && value !== null ? Object.keys(value).length : 0;

/** Something to fetch: codes, coins, or ids (a list or a record). */
export function fetchableCount(block: Readonly<Record<string, unknown>>): number {
  return countOf(block.codes) + countOf(block.coins) + countOf(block.ids);
}

/**
 * Whether a configured source will run: enabled, holding a real key where one is needed, and having
 * something to fetch (notes B.1.2, E.2).
 */
export function isSourceActive(key: SourceKey, block: RatesSources[SourceKey]): boolean {
  if (!block || !block.enabled) return false;
  const loose = block as unknown as Readonly<Record<string, unknown>>;
  if (SOURCE_RULES[key].keyMessage && typeof loose.api_key !== 'string') return false;
  return fetchableCount(loose) > 0;
}
