// The rates service's configuration: the currencyinfo 4.2 file format (notes/rates.md E.1, E.2),
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

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import Type, { type Static } from 'typebox';
import { isPassphrase } from '../console/amount.js';
import { ADDRESS as ADAMANT_ADDRESS } from '../console/params.js';
import { deepFreeze, HTTP_ENGINES, schemaProblems, type HttpEngineName } from '../config.js';
import type { SourceName, Strategy } from './types.js';

/** Spec §0: "the listening port is a configuration value (default 36661)". */
export const RATES_DEFAULT_PORT = 36661;
/** Single source of truth for the reported version (notes F.26). */
export const RATES_VERSION = '4.2.0';

const DEFAULT_NAME = 'Currencyinfo';
const DEFAULT_DECIMALS = 12;
const DEFAULT_RATE_DIFFERENCE_PERCENT_THRESHOLD = 25;
const DEFAULT_MIN_SOURCES = 1;
/** Minutes; an absent or zero `refreshInterval` means 10 (notes E.1). */
const DEFAULT_REFRESH_INTERVAL = 10;
const DEFAULT_LOG_LEVEL = 'log';
/** 4.2 defaults of `server.mongodb` (notes E.1). */
const DEFAULT_MONGODB = { host: '127.0.0.1', port: 27017, db: 'tickersdb' } as const;
const DEFAULT_SQLITE_PATH = 'data/rates.sqlite';
/** Voting weight of a source without `weight` (notes D). */
export const DEFAULT_SOURCE_WEIGHT = 10;
/** CoinPaprika's bulk `limit` and per-coin fan-out defaults (notes E.1, D.8). */
export const DEFAULT_COINPAPRIKA_BULK_LIMIT = 200;
export const DEFAULT_COINPAPRIKA_MAX_INDIVIDUAL_REQUESTS = 5;
export const DEFAULT_BINANCE_QUOTE_ASSET = 'USDT';
/** Binance has no USD markets; the quote asset stands in for USD and must be pegged to it (notes D.10). */
export const BINANCE_QUOTE_ASSETS = ['USD', 'USDT', 'USDC', 'FDUSD', 'USD1', 'USDS', 'TUSD', 'USDP', 'PYUSD', 'RLUSD', 'DAI', 'BUSD'] as const;

/**
 * Placeholders shipped in templates (4.2, 4.1 and the v1 service) that mean "no credential": a copied
 * template with `enabled: true` must fail at startup, not 401 on every cycle (notes E.2).
 * Compared case-insensitively after trimming.
 */
const PLACEHOLDER_SECRETS = new Set(
  [
    'API key for ExchangeRate',
    'API key for ExchangeRate.',
    'API key for CoinMarketCap',
    'API key for CoinDesk Data (CryptoCompare)',
    'Demo API key for CoinGecko',
    'apple banana...',
    'API key for CryptoCompare',
    'Put yours CoinMarketCap API key',
    'Put yours CryptoCompare API key',
    'No need for CoinGecko API key',
  ].map((text) => text.toLowerCase()),
);

/** A configured secret that is empty, whitespace or a shipped placeholder counts as absent (notes E.2). */
export function isPlaceholderSecret(value: string): boolean {
  const trimmed = value.trim();
  return trimmed === '' || PLACEHOLDER_SECRETS.has(trimmed.toLowerCase());
}

/**
 * Public ADAMANT nodes the original's adamant-api sends notifications through (notes E.3); `notify.adamantNodes`
 * replaces the list. The original's two bare-IP nodes are left out: a named node is maintained, an IP may change hands.
 */
export const DEFAULT_ADAMANT_NODES: readonly string[] = ['https://endless.adamant.im', 'https://clown.adamant.im', 'https://lake.adamant.im'];

/** The original's refinement text (notes E.1): addresses listed, no usable passphrase (absent, blank or the placeholder). */
export const ADAMANT_PASSPHRASE_MISSING = 'Provide passphrase to use ADAMANT notifier';
/** A passphrase the console would refuse (more than 30 characters, src/console/amount.ts); its value is never echoed. */
export const ADAMANT_PASSPHRASE_INVALID = 'Invalid ADAMANT passphrase: it must be longer than 30 characters (the 12 words of the sending account)';
/** Later upstream documentation's text for `^U[0-9]{6,21}$` (notes E.1); the value is not echoed, it may be a pasted secret. */
export const ADAMANT_ADDRESS_INVALID = 'Invalid ADAMANT address. The format is U followed by 6 to 21 digits';

/** Notification webhook formats of the original (notes E.1); loopback URLs are deliberately not accepted. */
const SLACK_WEBHOOK = /^https:\/\/hooks\.slack\.com\/services\/[A-Z0-9]+\/[A-Z0-9]+\/[A-Za-z0-9]+$/;
const DISCORD_WEBHOOK = /^https:\/\/discord(app)?\.com\/api\/webhooks\/\d+\/[A-Za-z0-9_-]+$/;

/**
 * Coin symbols: letters and digits plus `$ . - _` (notes F.15, e.g. `$CWIF` from the template's mappings).
 * `/` and `,` stay reserved as the pair and list separators of the query API.
 */
const COIN_PATTERN = '^[$A-Za-z0-9._-]+$';
const COIN_RE = new RegExp(COIN_PATTERN);

// ---------------------------------------------------------------------------------------------
// Schema of the file format. Every object is closed: "a typo cannot silently disable a source" (E.2).

const strict = { additionalProperties: false } as const;
const Coin = Type.String({ pattern: COIN_PATTERN });
const Coins = Type.Array(Coin);
const Percentage = Type.Number({ minimum: 0, maximum: 200 });
const Weight = Type.Number({ minimum: 0 });
/** Checked for http(s) in the semantic pass so the message can stay free of the (possibly secret) value. */
const Url = Type.String({ minLength: 1 });
const Secret = Type.String();

const sourceCommon = {
  enabled: Type.Optional(Type.Boolean()),
  weight: Type.Optional(Weight),
  url: Type.Optional(Url),
};

const CurrencyApiSchema = Type.Object({ ...sourceCommon, codes: Type.Optional(Coins) }, strict);
const ExchangeRateApiSchema = Type.Object({ ...sourceCommon, codes: Type.Optional(Coins) }, strict);
const ExchangeRateHostSchema = Type.Object({ ...sourceCommon, api_key: Type.Optional(Secret), codes: Type.Optional(Coins) }, strict);
const MoexSchema = Type.Object(
  { ...sourceCommon, codes: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }))) },
  strict,
);
const CoinmarketcapSchema = Type.Object(
  {
    ...sourceCommon,
    api_key: Type.Optional(Secret),
    coins: Type.Optional(Coins),
    ids: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 1 }))),
  },
  strict,
);
const CryptoCompareSchema = Type.Object({ ...sourceCommon, api_key: Type.Optional(Secret), coins: Type.Optional(Coins) }, strict);
const CoingeckoSchema = Type.Object(
  {
    ...sourceCommon,
    api_key: Type.Optional(Secret),
    coins: Type.Optional(Coins),
    ids: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  },
  strict,
);
const CoinPaprikaSchema = Type.Object(
  {
    ...sourceCommon,
    coins: Type.Optional(Coins),
    ids: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    // CoinPaprika caps the bulk response at 2000 rows whatever `limit` says (notes D.8).
    bulk_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 2000 })),
    // Bounded because the free tier has 20k calls a month (notes D.8).
    max_individual_requests: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
  },
  strict,
);
const CoinLoreSchema = Type.Object(
  {
    ...sourceCommon,
    coins: Type.Optional(Coins),
    ids: Type.Optional(Type.Record(Type.String(), Type.Integer({ minimum: 1 }))),
  },
  strict,
);
const BinanceSchema = Type.Object({ ...sourceCommon, quote_asset: Type.Optional(Coin), coins: Type.Optional(Coins) }, strict);

/** The 4.2 configuration file format (notes E.1), plus the additive keys listed at the top of this file. */
export const RatesConfigSchema = Type.Object(
  {
    name: Type.Optional(Type.String()),
    decimals: Type.Optional(Type.Integer({ minimum: 0, maximum: 100 })),
    strategy: Type.Enum(['avg', 'min', 'max', 'priority', 'weight']),
    rateDifferencePercentThreshold: Type.Optional(Percentage),
    groupPercentage: Percentage,
    minSources: Type.Optional(Type.Integer({ minimum: 1 })),
    priorities: Type.Array(Type.String()),
    refreshInterval: Type.Optional(Type.Number({ minimum: 0 })),
    rateLifetime: Type.Number({ exclusiveMinimum: 0 }),
    server: Type.Optional(
      Type.Object(
        {
          port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
          // Additive key: the HTTP engine of the listener (http/engine.ts).
          engine: Type.Optional(Type.Enum([...HTTP_ENGINES])),
          mongodb: Type.Optional(
            Type.Object(
              {
                host: Type.Optional(Type.String({ minLength: 1 })),
                port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
                db: Type.Optional(Type.String({ minLength: 1 })),
              },
              strict,
            ),
          ),
          sqlite: Type.Optional(Type.Object({ path: Type.Optional(Type.String({ minLength: 1 })) }, strict)),
          admin: Type.Optional(
            Type.Object(
              {
                port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
                host: Type.Optional(Type.String({ minLength: 1 })),
                apiKey: Type.Optional(Type.String({ minLength: 32 })),
              },
              strict,
            ),
          ),
        },
        strict,
      ),
    ),
    notify: Type.Optional(
      Type.Object(
        {
          slack: Type.Optional(Type.Array(Type.String())),
          discord: Type.Optional(Type.Array(Type.String())),
          adamant: Type.Optional(Type.Array(Type.String())),
          adamantPassphrase: Type.Optional(Secret),
          // Additive key (see the top of this file): at least one node, each checked for http(s) in the semantic pass.
          adamantNodes: Type.Optional(Type.Array(Url, { minItems: 1 })),
        },
        strict,
      ),
    ),
    log_level: Type.Optional(Type.Enum(['none', 'error', 'warn', 'log', 'info'])),
    base_coins: Type.Array(Coin, { minItems: 1 }),
    mappings: Type.Optional(Type.Record(Type.String(), Coin)),
    currency_api: Type.Optional(CurrencyApiSchema),
    exchange_rate_api: Type.Optional(ExchangeRateApiSchema),
    exchange_rate_host: Type.Optional(ExchangeRateHostSchema),
    moex: Type.Optional(MoexSchema),
    coinmarketcap: Type.Optional(CoinmarketcapSchema),
    cryptocompare: Type.Optional(CryptoCompareSchema),
    coingecko: Type.Optional(CoingeckoSchema),
    coinpaprika: Type.Optional(CoinPaprikaSchema),
    coinlore: Type.Optional(CoinLoreSchema),
    binance: Type.Optional(BinanceSchema),
  },
  strict,
);

/** A configuration file as written by the operator (before defaults). */
export type RawRatesConfig = Static<typeof RatesConfigSchema>;

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

const SOURCE_RULES: Readonly<Record<SourceKey, SourceRule>> = {
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

const SOURCE_KEY_LIST = Object.keys(SOURCE_RULES) as SourceKey[];

// ---------------------------------------------------------------------------------------------
// Defensive accessors for the semantic pass, which runs even when the schema failed so that every
// problem is reported at once.

type Loose = Record<string, unknown>;
const isRecord = (value: unknown): value is Loose => typeof value === 'object' && value !== null && !Array.isArray(value);
const stringsOf = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const countOf = (value: unknown): number => (Array.isArray(value) ? value.length : isRecord(value) ? Object.keys(value).length : 0);
const secretOf = (value: unknown): string | undefined =>
  typeof value === 'string' && !isPlaceholderSecret(value) ? value.trim() : undefined;

/** Something to fetch: codes, coins, or ids (a list or a record). */
function fetchableCount(block: Loose): number {
  return countOf(block.codes) + countOf(block.coins) + countOf(block.ids);
}

function validHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Semantic checks of notes E.1/E.2 that a JSON schema cannot express. Never echoes secrets, URLs or webhooks. */
function semanticCheck(raw: unknown, problems: string[], warnings: string[]): void {
  if (!isRecord(raw)) return;

  const notify = raw.notify;
  if (isRecord(notify)) {
    // The webhook value is a credential: name its position, never its text.
    stringsOf(notify.slack).forEach((url, index) => {
      if (!SLACK_WEBHOOK.test(url)) {
        problems.push(
          `notify.slack[${index}]: Invalid Slack webhook url. The format is \`https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX\``,
        );
      }
    });
    stringsOf(notify.discord).forEach((url, index) => {
      if (!DISCORD_WEBHOOK.test(url)) {
        problems.push(
          `notify.discord[${index}]: Invalid Discord webhook url. The format is \`https://discord.com/api/webhooks/<id>/<token>\``,
        );
      }
    });
    // notes E.1: addresses need a passphrase (4.2: only a non-empty list does); the placeholder counts as none.
    // The passphrase is a secret and addresses may be mis-pasted ones: problems name positions, never values.
    const addresses = Array.isArray(notify.adamant) ? notify.adamant : [];
    addresses.forEach((address, index) => {
      if (typeof address === 'string' && !ADAMANT_ADDRESS.test(address)) problems.push(`notify.adamant[${index}]: ${ADAMANT_ADDRESS_INVALID}`);
    });
    const passphrase = secretOf(notify.adamantPassphrase);
    if (addresses.length > 0) {
      if (passphrase === undefined) problems.push(`notify.adamantPassphrase: ${ADAMANT_PASSPHRASE_MISSING}`);
      else if (!isPassphrase(passphrase)) problems.push(`notify.adamantPassphrase: ${ADAMANT_PASSPHRASE_INVALID}`);
    } else if (passphrase !== undefined) {
      warnings.push('notify.adamantPassphrase: notify.adamant lists no address; the ADAMANT notification channel stays off');
    }
    stringsOf(notify.adamantNodes).forEach((url, index) => {
      if (!validHttpUrl(url)) problems.push(`notify.adamantNodes[${index}]: must be an http:// or https:// URL`);
    });
  }

  if (isRecord(raw.mappings)) {
    for (const key of Object.keys(raw.mappings)) {
      if (!COIN_RE.test(key)) problems.push(`mappings: key '${key}' is not a valid coin symbol`);
    }
  }

  const known = new Set<string>(Object.keys(SOURCE_KEYS));
  for (const entry of stringsOf(raw.priorities)) {
    if (!known.has(entry)) {
      warnings.push(`priorities: '${entry}' is not a source name (names are case-sensitive: ${[...known].join(', ')}); the entry is inert`);
    }
  }

  for (const key of SOURCE_KEY_LIST) {
    const block = raw[key];
    if (!isRecord(block)) continue;
    const rule = SOURCE_RULES[key];

    if (typeof block.url === 'string' && block.url !== '' && !validHttpUrl(block.url)) {
      problems.push(`${key}.url: must be an http:// or https:// URL`);
    }

    const enabled = block.enabled !== false;
    const hasThings = fetchableCount(block) > 0;
    if (enabled && hasThings) {
      if (rule.keyMessage && secretOf(block.api_key) === undefined) problems.push(`${key}.api_key: ${rule.keyMessage}`);
    } else if (block.enabled === true) {
      problems.push(`${key}.${rule.thingsKey}: Provide at least one ${rule.things} when ${rule.display} is enabled`);
    } else if (enabled) {
      warnings.push(`${key}: configured without any ${rule.things}; ${rule.display} stays inactive`);
    }
  }

  const moex = raw.moex;
  if (isRecord(moex) && isRecord(moex.codes)) {
    for (const pair of Object.keys(moex.codes)) {
      if (!/^[$A-Za-z0-9._-]+\/RUB$/i.test(pair)) problems.push(`moex.codes: '${pair}' must be a pair of the form CODE/RUB`);
    }
  }

  const binance = raw.binance;
  if (isRecord(binance)) {
    const quote = typeof binance.quote_asset === 'string' ? binance.quote_asset.toUpperCase() : DEFAULT_BINANCE_QUOTE_ASSET;
    if (!(BINANCE_QUOTE_ASSETS as readonly string[]).includes(quote)) {
      problems.push(`binance.quote_asset: 'quote_asset' must be a USD-pegged asset: ${BINANCE_QUOTE_ASSETS.join(', ')}`);
    }
    if (stringsOf(binance.coins).some((coin) => coin.toUpperCase() === quote)) {
      problems.push(`binance.coins: Remove '${quote}' from the Binance coins: it is the configured quote asset and has no market against itself`);
    }
  }
}

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

/**
 * Whether a configured source will run: enabled, holding a real key where one is needed, and having
 * something to fetch (notes B.1.2, E.2).
 */
export function isSourceActive(key: SourceKey, block: RatesSources[SourceKey]): boolean {
  if (!block || !block.enabled) return false;
  const loose = block as unknown as Loose;
  if (SOURCE_RULES[key].keyMessage && typeof loose.api_key !== 'string') return false;
  return fetchableCount(loose) > 0;
}

// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// File location

/** Names the file to read (notes F.25: "also honour an env var … so tests can run several instances"). */
export const RATES_CONFIG_ENV = 'CURRENCYINFO_CONFIG';
/** The original reads `./config.jsonc` in the working directory (notes E). */
export const RATES_CONFIG_FILE = 'config.jsonc';
/** The lookup, as the startup line and `--check-config` name it when no file was found. */
export const RATES_CONFIG_LOOKUP = `--config, $${RATES_CONFIG_ENV}, ./${RATES_CONFIG_FILE}`;

/**
 * Which file the rates service reads: the `--config` path; else `$CURRENCYINFO_CONFIG`; else `./config.jsonc`
 * in `cwd` when it exists; else undefined (the embedded defaults). A file named by the flag or the variable
 * must exist (reading it reports "No config found"), so a typo never falls through to the defaults. Empty
 * values count as unset; relative paths resolve against `cwd`, so the startup line names an absolute path.
 * `exists` is injectable so the order can be tested without a file system.
 */
export function resolveRatesConfigPath(
  explicit: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (explicit) return resolve(cwd, explicit);
  const fromEnv = env[RATES_CONFIG_ENV];
  if (fromEnv) return resolve(cwd, fromEnv);
  const local = resolve(cwd, RATES_CONFIG_FILE);
  return exists(local) ? local : undefined;
}
