import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRatesConfig, type RatesConfig } from '../../../src/rates/config.js';
import { RATES_DEFAULT_CONFIG } from '../../../src/rates/config-defaults.js';
import { activeSourceNames, createConnectors } from '../../../src/rates/sources/index.js';

function configOf(raw: unknown): RatesConfig {
  const result = parseRatesConfig(raw);
  assert.ok(result.ok, JSON.stringify(!result.ok && result.problems));
  return result.config;
}

test('the embedded default yields the five keyless connectors in SOURCE_ORDER', () => {
  const connectors = createConnectors(configOf(RATES_DEFAULT_CONFIG));
  assert.deepEqual(
    connectors.map((connector) => connector.name),
    ['CurrencyApi', 'ExchangeRateApi', 'CoinPaprika', 'CoinLore', 'Binance'],
  );
  assert.ok(connectors.every((connector) => connector.weight === 10));
});

test('only enabled, keyed and non-empty sources become connectors, in fixed order regardless of file order', () => {
  const config = configOf({
    strategy: 'avg',
    groupPercentage: 65,
    rateLifetime: 60,
    priorities: [],
    base_coins: ['USD'],
    binance: { coins: ['BTC'], weight: 3 },
    coingecko: { enabled: false, coins: ['BTC'] },
    coinmarketcap: { api_key: 'real-key', ids: { BTC: 1 } },
    cryptocompare: { api_key: 'real-key', coins: ['BTC'] },
    coinlore: {},
    moex: { enabled: true, codes: { 'USD/RUB': 'USDRUB_TOM' } },
    currency_api: { enabled: false, codes: ['EUR'] },
    exchange_rate_host: { enabled: false },
  });
  assert.deepEqual(activeSourceNames(config), ['MOEX', 'Coinmarketcap', 'CryptoCompare', 'Binance']);
  const connectors = createConnectors(config);
  assert.deepEqual(connectors.map((connector) => connector.name), ['MOEX', 'Coinmarketcap', 'CryptoCompare', 'Binance']);
  assert.equal(connectors.at(-1)!.weight, 3);
  assert.deepEqual(connectors[0]!.advertisedCoins(), ['RUB']);
});
