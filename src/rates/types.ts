// Shared vocabulary of the rates service (docs/specs/rates.md §2.2, docs/notes/rates.md D).

/** Connector names as they appear in `priorities` and notifications (case-sensitive). */
export type SourceName =
  | 'CurrencyApi'
  | 'ExchangeRateApi'
  | 'ExchangeRateHost'
  | 'MOEX'
  | 'Coinmarketcap'
  | 'CryptoCompare'
  | 'Coingecko'
  | 'CoinPaprika'
  | 'CoinLore'
  | 'Binance';

/** Fixed connector order: merge order and result key order follow it (notes F.21, F.19). */
export const SOURCE_ORDER: readonly SourceName[] = [
  'CurrencyApi',
  'ExchangeRateApi',
  'ExchangeRateHost',
  'MOEX',
  'Coinmarketcap',
  'CryptoCompare',
  'Coingecko',
  'CoinPaprika',
  'CoinLore',
  'Binance',
];

/** One quote from one source: `price` quote units per one base unit of `pair` (`BASE/QUOTE`). */
export interface Quote {
  readonly pair: string;
  readonly price: number;
}

/** Pair key → rate. Insertion order is the served key order. */
export type RateTable = Record<string, number>;

export type Strategy = 'avg' | 'min' | 'max' | 'priority' | 'weight';

/** What the merge pipeline needs from the configuration (notes B.10). */
export interface MergeSettings {
  readonly decimals: number;
  readonly strategy: Strategy;
  readonly rateDifferencePercentThreshold: number;
  readonly groupPercentage: number;
  readonly minSources: number;
  /** Ordered source names; earlier = higher priority; unlisted sources rank below all listed. */
  readonly priorities: readonly string[];
  /** Voting weight per enabled source (default 10; 0 = no vote). */
  readonly weights: Readonly<Record<string, number>>;
  /** Uppercased, mapped base coins in config order. */
  readonly baseCoins: readonly string[];
  /** Union of coins advertised by enabled sources (after mappings), in connector order. */
  readonly allCoins: readonly string[];
  /** `COIN/USD` → number of enabled sources advertising COIN (notes B.1.4, F.5). */
  readonly coverage: Readonly<Record<string, number>>;
}
