// The rates service's defaults (docs/notes/rates.md E.1, D) and the embedded 4.2 configuration `adm-infra rates` runs on
// without a file.

import { deepFreeze } from '../config.js';
import type { RawRatesConfig } from './config-schema.js';

/** Spec §0: "the listening port is a configuration value (default 36661)". */
export const RATES_DEFAULT_PORT = 36661;

export const DEFAULT_NAME = 'Currencyinfo';
export const DEFAULT_DECIMALS = 12;
export const DEFAULT_RATE_DIFFERENCE_PERCENT_THRESHOLD = 25;
export const DEFAULT_MIN_SOURCES = 1;
/** Minutes; an absent or zero `refreshInterval` means 10 (notes E.1). */
export const DEFAULT_REFRESH_INTERVAL = 10;
export const DEFAULT_LOG_LEVEL = 'log';
/** 4.2 defaults of `server.mongodb` (notes E.1). */
export const DEFAULT_MONGODB = { host: '127.0.0.1', port: 27017, db: 'tickersdb' } as const;
export const DEFAULT_SQLITE_PATH = 'data/rates.sqlite';
/** Voting weight of a source without `weight` (notes D). */
export const DEFAULT_SOURCE_WEIGHT = 10;
/** CoinPaprika's bulk `limit` and per-coin fan-out defaults (notes E.1, D.8). */
export const DEFAULT_COINPAPRIKA_BULK_LIMIT = 200;
export const DEFAULT_COINPAPRIKA_MAX_INDIVIDUAL_REQUESTS = 5;
export const DEFAULT_BINANCE_QUOTE_ASSET = 'USDT';
/** Binance has no USD markets; the quote asset stands in for USD and must be pegged to it (notes D.10). */
export const BINANCE_QUOTE_ASSETS = ['USD', 'USDT', 'USDC', 'FDUSD', 'USD1', 'USDS', 'TUSD', 'USDP', 'PYUSD', 'RLUSD', 'DAI', 'BUSD'] as const;

/**
 * Public ADAMANT nodes the original's adamant-api sends notifications through (notes E.3); `notify.adamantNodes`
 * replaces the list. The original's two bare-IP nodes are left out: a named node is maintained, an IP may change hands.
 */
export const DEFAULT_ADAMANT_NODES: readonly string[] = ['https://endless.adamant.im', 'https://clown.adamant.im', 'https://lake.adamant.im'];

/**
 * The embedded 4.2 default, used by `adm-infra rates` when no config file is given: keyless sources only
 * (CurrencyApi, ExchangeRateApi, CoinPaprika, CoinLore, Binance), SQLite history, no notifications.
 * Priorities follow the 4.2 template; key-gated names stay listed and are inert until configured.
 */
export const RATES_DEFAULT_CONFIG: RawRatesConfig = deepFreeze({
  name: DEFAULT_NAME,
  decimals: DEFAULT_DECIMALS,
  strategy: 'priority',
  rateDifferencePercentThreshold: DEFAULT_RATE_DIFFERENCE_PERCENT_THRESHOLD,
  groupPercentage: 65,
  refreshInterval: DEFAULT_REFRESH_INTERVAL,
  minSources: 2,
  rateLifetime: 60,
  priorities: ['ExchangeRateHost', 'Coinmarketcap', 'Coingecko', 'CoinPaprika', 'CoinLore', 'Binance', 'ExchangeRateApi', 'CurrencyApi', 'MOEX'],
  server: { port: RATES_DEFAULT_PORT, sqlite: { path: DEFAULT_SQLITE_PATH } },
  notify: { slack: [], discord: [] },
  log_level: 'log',
  base_coins: ['USD', 'RUB', 'EUR', 'CNY', 'JPY', 'BTC', 'ETH'],
  mappings: { CWIF: '$CWIF' },
  currency_api: {
    enabled: true,
    url: 'https://cdn.jsdelivr.net/npm/@fawazahmed0/currency-api@latest/v1/currencies/usd.json',
    codes: ['USD', 'EUR', 'RUB', 'CNY', 'JPY'],
  },
  exchange_rate_api: {
    enabled: true,
    url: 'https://open.er-api.com/v6/latest/USD',
    codes: ['USD', 'RUB', 'EUR', 'CNY', 'JPY'],
  },
  coinpaprika: {
    enabled: true,
    coins: ['BTC', 'ETH', 'ADM'],
    // Explicit ids, because CoinPaprika symbols are ambiguous (ADM matches two active coins, notes D.8).
    ids: [
      'btc-bitcoin',
      'eth-ethereum',
      'bnb-binance-coin',
      'xrp-xrp',
      'sol-solana',
      'doge-dogecoin',
      'ada-cardano',
      'trx-tron',
      'ltc-litecoin',
      'dash-dash',
      'usdt-tether',
      'usdc-usd-coin',
      'adm-adamant-messenger',
    ],
    bulk_limit: DEFAULT_COINPAPRIKA_BULK_LIMIT,
    max_individual_requests: DEFAULT_COINPAPRIKA_MAX_INDIVIDUAL_REQUESTS,
  },
  coinlore: {
    enabled: true,
    coins: ['BTC', 'ETH', 'ADM'],
    ids: { BTC: 90, ETH: 80, BNB: 2710, XRP: 58, SOL: 48543, DOGE: 2, ADA: 257, TRX: 2713, LTC: 1, DASH: 8, USDT: 518, USDC: 33285, ADM: 33250 },
  },
  binance: {
    enabled: true,
    quote_asset: DEFAULT_BINANCE_QUOTE_ASSET,
    // ADM is not listed on Binance; its coverage comes from the aggregators.
    coins: ['BTC', 'ETH', 'BNB', 'XRP', 'SOL', 'DOGE', 'ADA', 'TRX', 'LTC', 'DASH'],
  },
});
