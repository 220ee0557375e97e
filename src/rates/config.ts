// The rates service's configuration: the currencyinfo 4.2 file format (docs/notes/rates.md E.1, E.2),
// validated strictly at every level (E.2, F.24) with every problem reported at once, then normalized
// (defaults filled, symbols uppercased, mappings applied) into `RatesConfig`.
//
// Additive keys, not in the original format (documented here so operators can find them):
// - every source block accepts `url`: the API base URL (for `currency_api`, `exchange_rate_api` and
//   `moex` the full endpoint URL, as in the original), so an operator can use a proxy and tests can
//   point a connector at a fake server (notes F.2);
// - `server.sqlite.path`: where the embedded SQLite history lives (notes F.3);
// - `server.admin`: the operator listener (`port`, `host`, `apiKey`); ADMIN_PORT, ADMIN_HOST and
//   ADMIN_API_KEY in the environment override it;
// - `notify.adamantNodes`: the ADAMANT nodes (http(s) base URLs) the ADAMANT notification channel sends
//   through, tried in order with failover. The original hard-codes its node list in adamant-api (notes E.3);
//   the default is its three public nodes, and tests point it at a loopback fake node.
//
// This file holds the normalized shape and the normalization; each concern has its own file: the schema
// (config-schema.ts), the defaults and the embedded configuration (config-defaults.ts), the rules a schema cannot
// express (config-checks.ts), placeholder credentials (config-secrets.ts), what each source needs to run
// (config-sources.ts), and which file is read (config-file.ts).

import { deepFreeze, schemaProblems, type HttpEngineName } from '../config.js';
import { semanticCheck } from './config-checks.js';
import {
  DEFAULT_ADAMANT_NODES,
  DEFAULT_BINANCE_QUOTE_ASSET,
  DEFAULT_COINPAPRIKA_BULK_LIMIT,
  DEFAULT_COINPAPRIKA_MAX_INDIVIDUAL_REQUESTS,
  DEFAULT_DECIMALS,
  DEFAULT_LOG_LEVEL,
  DEFAULT_MIN_SOURCES,
  DEFAULT_MONGODB,
  DEFAULT_NAME,
  DEFAULT_RATE_DIFFERENCE_PERCENT_THRESHOLD,
  DEFAULT_REFRESH_INTERVAL,
  DEFAULT_SOURCE_WEIGHT,
  DEFAULT_SQLITE_PATH,
  RATES_DEFAULT_PORT,
} from './config-defaults.js';
import { RatesConfigSchema, type RawRatesConfig } from './config-schema.js';
import { secretOf } from './config-secrets.js';
import type { Strategy } from './types.js';

/** Single source of truth for the reported version (notes F.26). */
export const RATES_VERSION = '4.2.0';

// ---------------------------------------------------------------------------------------------
// Normalized configuration.

export type LogLevel = 'none' | 'error' | 'warn' | 'log' | 'info';

interface SourceBlockBase {
  /** `false` only when the file says so: an omitted `enabled` on a present block counts as enabled (spec §2.6). */
  readonly enabled: boolean;
  /** Voting weight in group selection, default 10; 0 = no vote. */
  readonly weight: number;
  /** API base URL override; absent = the real upstream host. */
  readonly url?: string;
}

export interface CurrencyApiBlock extends SourceBlockBase {
  readonly codes: readonly string[];
}
export interface ExchangeRateApiBlock extends SourceBlockBase {
  readonly codes: readonly string[];
}
export interface ExchangeRateHostBlock extends SourceBlockBase {
  /** Absent when not configured or a placeholder. */
  readonly api_key?: string;
  readonly codes: readonly string[];
}
export interface MoexBlock extends SourceBlockBase {
  /** `X/RUB` pair (uppercased) → MOEX `SHORTNAME`, e.g. `USD/RUB` → `USDRUB_TOM`. */
  readonly codes: Readonly<Record<string, string>>;
}
export interface CoinmarketcapBlock extends SourceBlockBase {
  readonly api_key?: string;
  readonly coins: readonly string[];
  /** Symbol (uppercased) → CoinMarketCap UCID. */
  readonly ids: Readonly<Record<string, number>>;
}
export interface CryptoCompareBlock extends SourceBlockBase {
  readonly api_key?: string;
  readonly coins: readonly string[];
}
export interface CoingeckoBlock extends SourceBlockBase {
  readonly api_key?: string;
  readonly coins: readonly string[];
  /** CoinGecko API ids, e.g. `adamant-messenger`. */
  readonly ids: readonly string[];
}
export interface CoinPaprikaBlock extends SourceBlockBase {
  readonly coins: readonly string[];
  /** CoinPaprika ids, e.g. `adm-adamant-messenger`. */
  readonly ids: readonly string[];
  readonly bulk_limit: number;
  readonly max_individual_requests: number;
}
export interface CoinLoreBlock extends SourceBlockBase {
  readonly coins: readonly string[];
  /** Symbol (uppercased) → numeric CoinLore id. */
  readonly ids: Readonly<Record<string, number>>;
}
export interface BinanceBlock extends SourceBlockBase {
  readonly quote_asset: string;
  readonly coins: readonly string[];
}

/** Each block is present only when the file configures it (enabled or not). */
export interface RatesSources {
  readonly currency_api?: CurrencyApiBlock;
  readonly exchange_rate_api?: ExchangeRateApiBlock;
  readonly exchange_rate_host?: ExchangeRateHostBlock;
  readonly moex?: MoexBlock;
  readonly coinmarketcap?: CoinmarketcapBlock;
  readonly cryptocompare?: CryptoCompareBlock;
  readonly coingecko?: CoingeckoBlock;
  readonly coinpaprika?: CoinPaprikaBlock;
  readonly coinlore?: CoinLoreBlock;
  readonly binance?: BinanceBlock;
}

export type SourceKey = keyof RatesSources;

export interface RatesNotify {
  readonly slack: readonly string[];
  readonly discord: readonly string[];
  /** Recipient addresses of the ADAMANT channel; empty = the channel is off. */
  readonly adamant: readonly string[];
  /**
   * The sending account's passphrase, present exactly when `adamant` lists addresses. A secret: the property is
   * non-enumerable, so serializing or logging the configuration (JSON, pino, util.inspect) never carries it.
   */
  readonly adamantPassphrase?: string;
  /** Node base URLs for the ADAMANT channel, without a trailing slash (additive key `notify.adamantNodes`). */
  readonly adamantNodes: readonly string[];
}

export interface RatesConfig {
  readonly name: string;
  readonly decimals: number;
  readonly strategy: Strategy;
  readonly rateDifferencePercentThreshold: number;
  readonly groupPercentage: number;
  readonly minSources: number;
  readonly priorities: readonly string[];
  /** Minutes, fractions allowed. */
  readonly refreshInterval: number;
  /** Minutes, fractions allowed. */
  readonly rateLifetime: number;
  readonly server: {
    readonly port: number;
    /** The HTTP engine of the listener (additive key; default $ADM_HTTP_ENGINE, else uws). */
    readonly engine?: HttpEngineName;
    /** Present only when the file has `server.mongodb`: MongoDB is then the history backend (notes F.3). */
    readonly mongodb?: { readonly host: string; readonly port: number; readonly db: string };
    readonly sqlite: { readonly path: string };
    /** The operator listener's settings from the file (additive key); the environment overrides them. */
    readonly admin?: { readonly port?: number; readonly host?: string; readonly apiKey?: string };
  };
  readonly notify: RatesNotify;
  readonly log_level: LogLevel;
  /** Uppercased, `mappings` applied, config order. */
  readonly base_coins: readonly string[];
  /** Keys and values uppercased. */
  readonly mappings: Readonly<Record<string, string>>;
  readonly sources: RatesSources;
}

/** What a connector needs from the configuration besides its own block. */
export interface ConnectorOptions {
  /** Prices are rounded to this many decimals (notes D, F.18). */
  readonly decimals: number;
  /**
   * Accepted so every factory has one signature; connectors emit upstream symbols unchanged, because the
   * merge pipeline applies `mappings` to every source's pairs (notes B.2.2) and applying them twice is wrong
   * for chains such as `{A: B, B: C}`.
   */
  readonly mappings?: Readonly<Record<string, string>>;
}

export type ParseRatesConfigResult =
  | { readonly ok: true; readonly config: RatesConfig; readonly warnings: string[] }
  | { readonly ok: false; readonly problems: string[] };

// ---------------------------------------------------------------------------------------------
// Normalization (runs only on a configuration that passed every check).

const upper = (list: readonly string[] | undefined): string[] => [...new Set((list ?? []).map((s) => s.trim().toUpperCase()))];
const upperKeys = <T>(record: Readonly<Record<string, T>> | undefined): Record<string, T> =>
  Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key.trim().toUpperCase(), value]));

function common(block: { enabled?: boolean; weight?: number; url?: string }): SourceBlockBase {
  return {
    enabled: block.enabled !== false,
    weight: block.weight ?? DEFAULT_SOURCE_WEIGHT,
    ...(block.url !== undefined ? { url: block.url } : {}),
  };
}

const withKey = (value: string | undefined): { api_key?: string } => {
  const key = value === undefined ? undefined : secretOf(value);
  return key === undefined ? {} : { api_key: key };
};

function normalizeSources(raw: RawRatesConfig): RatesSources {
  const sources: { -readonly [K in SourceKey]?: RatesSources[K] } = {};
  if (raw.currency_api) sources.currency_api = { ...common(raw.currency_api), codes: upper(raw.currency_api.codes) };
  if (raw.exchange_rate_api) sources.exchange_rate_api = { ...common(raw.exchange_rate_api), codes: upper(raw.exchange_rate_api.codes) };
  if (raw.exchange_rate_host) {
    const block = raw.exchange_rate_host;
    sources.exchange_rate_host = { ...common(block), ...withKey(block.api_key), codes: upper(block.codes) };
  }
  if (raw.moex) sources.moex = { ...common(raw.moex), codes: upperKeys(raw.moex.codes) };
  if (raw.coinmarketcap) {
    const block = raw.coinmarketcap;
    sources.coinmarketcap = { ...common(block), ...withKey(block.api_key), coins: upper(block.coins), ids: upperKeys(block.ids) };
  }
  if (raw.cryptocompare) {
    const block = raw.cryptocompare;
    sources.cryptocompare = { ...common(block), ...withKey(block.api_key), coins: upper(block.coins) };
  }
  if (raw.coingecko) {
    const block = raw.coingecko;
    sources.coingecko = {
      ...common(block),
      ...withKey(block.api_key),
      coins: upper(block.coins),
      ids: [...new Set((block.ids ?? []).map((id) => id.trim()))],
    };
  }
  if (raw.coinpaprika) {
    const block = raw.coinpaprika;
    sources.coinpaprika = {
      ...common(block),
      coins: upper(block.coins),
      ids: [...new Set((block.ids ?? []).map((id) => id.trim()))],
      bulk_limit: block.bulk_limit ?? DEFAULT_COINPAPRIKA_BULK_LIMIT,
      max_individual_requests: block.max_individual_requests ?? DEFAULT_COINPAPRIKA_MAX_INDIVIDUAL_REQUESTS,
    };
  }
  if (raw.coinlore) sources.coinlore = { ...common(raw.coinlore), coins: upper(raw.coinlore.coins), ids: upperKeys(raw.coinlore.ids) };
  if (raw.binance) {
    const block = raw.binance;
    sources.binance = {
      ...common(block),
      quote_asset: (block.quote_asset ?? DEFAULT_BINANCE_QUOTE_ASSET).toUpperCase(),
      coins: upper(block.coins),
    };
  }
  return sources;
}

function normalizeNotify(notify: RawRatesConfig['notify']): RatesNotify {
  const adamant = [...(notify?.adamant ?? [])];
  const normalized: RatesNotify = {
    slack: [...(notify?.slack ?? [])],
    discord: [...(notify?.discord ?? [])],
    adamant,
    adamantNodes: (notify?.adamantNodes ?? DEFAULT_ADAMANT_NODES).map((url) => url.trim().replace(/\/+$/, '')),
  };
  // Validation guarantees a real passphrase whenever addresses are listed; without addresses it is dropped.
  const passphrase = adamant.length > 0 ? secretOf(notify?.adamantPassphrase) : undefined;
  if (passphrase !== undefined) Object.defineProperty(normalized, 'adamantPassphrase', { value: passphrase, enumerable: false });
  return normalized;
}

function normalize(raw: RawRatesConfig): RatesConfig {
  const mappings = Object.fromEntries(
    Object.entries(raw.mappings ?? {}).map(([from, to]) => [from.trim().toUpperCase(), to.trim().toUpperCase()]),
  );
  const mongodb = raw.server?.mongodb;
  return {
    name: raw.name ?? DEFAULT_NAME,
    decimals: raw.decimals ?? DEFAULT_DECIMALS,
    strategy: raw.strategy,
    rateDifferencePercentThreshold: raw.rateDifferencePercentThreshold ?? DEFAULT_RATE_DIFFERENCE_PERCENT_THRESHOLD,
    groupPercentage: raw.groupPercentage,
    minSources: raw.minSources ?? DEFAULT_MIN_SOURCES,
    priorities: [...raw.priorities],
    // The original treats 0 like "absent" (`refreshInterval || 10`).
    refreshInterval: raw.refreshInterval || DEFAULT_REFRESH_INTERVAL,
    rateLifetime: raw.rateLifetime,
    server: {
      port: raw.server?.port ?? RATES_DEFAULT_PORT,
      ...(raw.server?.engine ? { engine: raw.server.engine } : {}),
      ...(mongodb
        ? {
            mongodb: {
              host: mongodb.host ?? DEFAULT_MONGODB.host,
              port: mongodb.port ?? DEFAULT_MONGODB.port,
              db: mongodb.db ?? DEFAULT_MONGODB.db,
            },
          }
        : {}),
      sqlite: { path: raw.server?.sqlite?.path ?? DEFAULT_SQLITE_PATH },
      ...(raw.server?.admin ? { admin: { ...raw.server.admin } } : {}),
    },
    notify: normalizeNotify(raw.notify),
    log_level: raw.log_level ?? DEFAULT_LOG_LEVEL,
    base_coins: [...new Set(upper(raw.base_coins).map((coin) => mappings[coin] ?? coin))],
    mappings,
    sources: normalizeSources(raw),
  };
}

/**
 * Validates a parsed configuration file (schema + semantic rules) and normalizes it.
 * Problems are `path: message` lines, all of them at once; the result is deep-frozen.
 */
export function parseRatesConfig(raw: unknown): ParseRatesConfigResult {
  const problems = schemaProblems(RatesConfigSchema, raw);
  const warnings: string[] = [];
  semanticCheck(raw, problems, warnings);
  if (problems.length > 0) return { ok: false, problems: [...new Set(problems)] };
  return { ok: true, config: deepFreeze(normalize(raw as RawRatesConfig)), warnings };
}
