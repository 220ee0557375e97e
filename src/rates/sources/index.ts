// The connector set of one configuration: which sources run, in the fixed connector order
// (notes B.1.2, F.21; types.ts SOURCE_ORDER).

import type { ConnectorOptions, RatesConfig, RatesSources, SourceKey } from '../config.js';
import { isSourceActive, SOURCE_KEYS } from '../config-sources.js';
import { SOURCE_ORDER, type SourceName } from '../types.js';
import { createBinanceConnector } from './binance.source.js';
import { createCoingeckoConnector } from './coingecko.source.js';
import { createCoinLoreConnector } from './coinlore.source.js';
import { createCoinmarketcapConnector } from './coinmarketcap.source.js';
import { createCoinPaprikaConnector } from './coinpaprika.source.js';
import { createCryptoCompareConnector } from './cryptocompare.source.js';
import { createCurrencyApiConnector } from './currency-api.source.js';
import { createExchangeRateApiConnector } from './exchange-rate-api.source.js';
import { createExchangeRateHostConnector } from './exchange-rate-host.source.js';
import { createMoexConnector } from './moex.source.js';
import type { SourceConnector } from './source.js';

export { createBinanceConnector } from './binance.source.js';
export { createCoingeckoConnector } from './coingecko.source.js';
export { createCoinLoreConnector } from './coinlore.source.js';
export { createCoinmarketcapConnector } from './coinmarketcap.source.js';
export { createCoinPaprikaConnector } from './coinpaprika.source.js';
export { createCryptoCompareConnector } from './cryptocompare.source.js';
export { createCurrencyApiConnector } from './currency-api.source.js';
export { createExchangeRateApiConnector } from './exchange-rate-api.source.js';
export { createExchangeRateHostConnector } from './exchange-rate-host.source.js';
export { createMoexConnector } from './moex.source.js';

type Factory<K extends SourceKey> = (block: NonNullable<RatesSources[K]>, options: ConnectorOptions) => SourceConnector;

const FACTORIES: { readonly [K in SourceKey]: Factory<K> } = {
  currency_api: createCurrencyApiConnector,
  exchange_rate_api: createExchangeRateApiConnector,
  exchange_rate_host: createExchangeRateHostConnector,
  moex: createMoexConnector,
  coinmarketcap: createCoinmarketcapConnector,
  cryptocompare: createCryptoCompareConnector,
  coingecko: createCoingeckoConnector,
  coinpaprika: createCoinPaprikaConnector,
  coinlore: createCoinLoreConnector,
  binance: createBinanceConnector,
};

/** Names of the sources that will run: enabled, keyed where a key is required, with something to fetch. */
export function activeSourceNames(config: RatesConfig): SourceName[] {
  return SOURCE_ORDER.filter((name) => isSourceActive(SOURCE_KEYS[name], config.sources[SOURCE_KEYS[name]]));
}

/** The active connectors of `config`, in SOURCE_ORDER. Inactive blocks produce no connector. */
export function createConnectors(config: RatesConfig): SourceConnector[] {
  const options: ConnectorOptions = { decimals: config.decimals, mappings: config.mappings };
  return activeSourceNames(config).map((name) => {
    const key = SOURCE_KEYS[name];
    const factory = FACTORIES[key] as Factory<SourceKey>;
    return factory(config.sources[key] as NonNullable<RatesSources[SourceKey]>, options);
  });
}
