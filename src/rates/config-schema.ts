// The schema of the rates service's configuration file: the currencyinfo 4.2 format (docs/notes/rates.md E.1), plus the
// additive keys listed in config.ts. Every object is closed: "a typo cannot silently disable a source" (E.2).

import { Type, type Static } from '../typebox.js';
import { HTTP_ENGINES } from '../config.js';

/**
 * Coin symbols: letters and digits plus `$ . - _` (notes F.15, e.g. `$CWIF` from the template's mappings).
 * `/` and `,` stay reserved as the pair and list separators of the query API.
 */
export const COIN_PATTERN = '^[$A-Za-z0-9._-]+$';

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
