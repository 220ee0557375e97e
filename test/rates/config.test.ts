import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { parseRatesConfig, RATES_VERSION, type RatesConfig } from '../../src/rates/config.js';
import { ADAMANT_ADDRESS_INVALID, ADAMANT_PASSPHRASE_INVALID, ADAMANT_PASSPHRASE_MISSING } from '../../src/rates/config-checks.js';
import { DEFAULT_ADAMANT_NODES, RATES_DEFAULT_CONFIG, RATES_DEFAULT_PORT } from '../../src/rates/config-defaults.js';
import { resolveRatesConfigPath } from '../../src/rates/config-file.js';
import { isPlaceholderSecret } from '../../src/rates/config-secrets.js';

/** The smallest valid file: only the required keys. */
const MINIMAL = { strategy: 'priority', groupPercentage: 65, rateLifetime: 60, priorities: ['CoinPaprika'], base_coins: ['USD'] };

function ok(raw: unknown): { config: RatesConfig; warnings: string[] } {
  const result = parseRatesConfig(raw);
  assert.ok(result.ok, `expected a valid config, got: ${JSON.stringify(!result.ok && result.problems)}`);
  return result;
}

function problems(raw: unknown): string[] {
  const result = parseRatesConfig(raw);
  assert.ok(!result.ok, 'expected problems');
  return result.problems;
}

const GECKO = 'coingecko.api_key: Provide a free CoinGecko Demo API key when CoinGecko is enabled. Get one at https://www.coingecko.com/en/developers/dashboard';
const CRYPTOCOMPARE =
  'cryptocompare.api_key: Provide a CoinDesk Data (former CryptoCompare) API key when CryptoCompare is enabled. The free tier was retired on 21 May 2026';
const CMC = 'coinmarketcap.api_key: Provide an API key when CoinMarketCap is enabled';
const ERH = 'exchange_rate_host.api_key: Provide an API key when ExchangeRateHost is enabled';

test('constants', () => {
  assert.equal(RATES_DEFAULT_PORT, 36661);
  assert.equal(RATES_VERSION, '4.2.0');
});

test('the embedded default config is valid, keyless, SQLite-backed and frozen', () => {
  const { config, warnings } = ok(RATES_DEFAULT_CONFIG);
  assert.deepEqual(warnings, []);
  assert.deepEqual(Object.keys(config.sources), ['currency_api', 'exchange_rate_api', 'coinpaprika', 'coinlore', 'binance']);
  assert.equal(config.server.port, 36661);
  assert.equal(config.server.mongodb, undefined);
  assert.deepEqual(config.server.sqlite, { path: 'data/rates.sqlite' });
  assert.deepEqual(config.priorities.slice(0, 6), ['ExchangeRateHost', 'Coinmarketcap', 'Coingecko', 'CoinPaprika', 'CoinLore', 'Binance']);
  assert.ok(config.sources.binance!.coins.includes('BTC'));
  assert.ok(config.sources.coinpaprika!.ids.includes('adm-adamant-messenger'));
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.sources.binance!.coins));
  assert.ok(Object.isFrozen(RATES_DEFAULT_CONFIG));
});

test('defaults are filled for a minimal file', () => {
  const { config, warnings } = ok(MINIMAL);
  assert.deepEqual(warnings, []);
  assert.deepEqual(config, {
    name: 'Currencyinfo',
    decimals: 12,
    strategy: 'priority',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 1,
    priorities: ['CoinPaprika'],
    refreshInterval: 10,
    rateLifetime: 60,
    server: { port: 36661, sqlite: { path: 'data/rates.sqlite' } },
    notify: { slack: [], discord: [], adamant: [], adamantNodes: ['https://endless.adamant.im', 'https://clown.adamant.im', 'https://lake.adamant.im'] },
    log_level: 'log',
    base_coins: ['USD'],
    mappings: {},
    sources: {},
  });
});

test('refreshInterval 0 means 10; fractions are kept', () => {
  assert.equal(ok({ ...MINIMAL, refreshInterval: 0 }).config.refreshInterval, 10);
  assert.equal(ok({ ...MINIMAL, refreshInterval: 0.05, rateLifetime: 0.5 }).config.refreshInterval, 0.05);
});

test('symbols are uppercased, mapping keys and values uppercased, base_coins mapped', () => {
  const { config } = ok({ ...MINIMAL, base_coins: ['usd', 'cwif', 'btc', 'BTC'], mappings: { cwif: '$cwif' }, binance: { coins: ['eth'], quote_asset: 'usdc' } });
  assert.deepEqual(config.base_coins, ['USD', '$CWIF', 'BTC']);
  assert.deepEqual(config.mappings, { CWIF: '$CWIF' });
  assert.deepEqual(config.sources.binance, { enabled: true, weight: 10, quote_asset: 'USDC', coins: ['ETH'] });
});

test('server.mongodb gets the 4.2 defaults; server.sqlite.path is accepted', () => {
  const { config } = ok({ ...MINIMAL, server: { port: 0, mongodb: {}, sqlite: { path: '/tmp/x.sqlite' } } });
  assert.deepEqual(config.server, { port: 0, mongodb: { host: '127.0.0.1', port: 27017, db: 'tickersdb' }, sqlite: { path: '/tmp/x.sqlite' } });
});

test('source blocks are normalized: weight default 10, url kept, omitted enabled counts as enabled', () => {
  const { config } = ok({
    ...MINIMAL,
    cryptocompare: { api_key: '  real-key  ', coins: ['btc'] },
    coinpaprika: { url: 'http://127.0.0.1:9/coinpaprika', ids: ['btc-bitcoin'], weight: 0 },
    coinlore: { enabled: false, ids: { adm: 33250 } },
  });
  assert.deepEqual(config.sources.cryptocompare, { enabled: true, weight: 10, api_key: 'real-key', coins: ['BTC'] });
  assert.deepEqual(config.sources.coinpaprika, {
    enabled: true,
    weight: 0,
    url: 'http://127.0.0.1:9/coinpaprika',
    coins: [],
    ids: ['btc-bitcoin'],
    bulk_limit: 200,
    max_individual_requests: 5,
  });
  assert.deepEqual(config.sources.coinlore, { enabled: false, weight: 10, coins: [], ids: { ADM: 33250 } });
});

test('an unknown key is an error at the top level and at every nested level', () => {
  const found = problems({
    ...MINIMAL,
    foo: 1,
    server: { mongodb: { hots: 'x' } },
    notify: { telegram: [] },
    coingecko: { enabled: false, apikey: 'x' },
    binance: { coins: ['BTC'], extra: true },
  });
  for (const path of ['foo', 'server.mongodb.hots', 'notify.telegram', 'coingecko.apikey', 'binance.extra']) {
    assert.ok(found.includes(`${path}: unknown key (not part of the configuration format)`), `${path} missing in ${JSON.stringify(found)}`);
  }
  assert.equal(found.length, 5);
});

test('every key-gated message, with an omitted enabled counting as enabled', () => {
  assert.deepEqual(problems({ ...MINIMAL, coingecko: { enabled: true, ids: ['bitcoin'] } }), [GECKO]);
  assert.deepEqual(problems({ ...MINIMAL, coingecko: { coins: ['BTC'] } }), [GECKO]);
  assert.deepEqual(problems({ ...MINIMAL, cryptocompare: { coins: ['BTC'] } }), [CRYPTOCOMPARE]);
  assert.deepEqual(problems({ ...MINIMAL, coinmarketcap: { ids: { BTC: 1 } } }), [CMC]);
  assert.deepEqual(problems({ ...MINIMAL, exchange_rate_host: { codes: ['EUR'] } }), [ERH]);
});

test('explicitly enabled sources need something to fetch', () => {
  const found = problems({
    ...MINIMAL,
    coingecko: { enabled: true, api_key: 'k' },
    coinmarketcap: { enabled: true },
    cryptocompare: { enabled: true, coins: [] },
    exchange_rate_host: { enabled: true },
    coinpaprika: { enabled: true },
    coinlore: { enabled: true, ids: {} },
    binance: { enabled: true },
    currency_api: { enabled: true },
    exchange_rate_api: { enabled: true, codes: [] },
    moex: { enabled: true, codes: {} },
  });
  assert.deepEqual(found, [
    'currency_api.codes: Provide at least one currency code when CurrencyApi is enabled',
    'exchange_rate_api.codes: Provide at least one currency code when ExchangeRateApi is enabled',
    'exchange_rate_host.codes: Provide at least one currency code when ExchangeRateHost is enabled',
    'moex.codes: Provide at least one market code when MOEX is enabled',
    'coinmarketcap.coins: Provide at least one coin or ID when CoinMarketCap is enabled',
    'cryptocompare.coins: Provide at least one coin when CryptoCompare is enabled',
    'coingecko.coins: Provide at least one coin or ID when CoinGecko is enabled',
    'coinpaprika.coins: Provide at least one coin or ID when CoinPaprika is enabled',
    'coinlore.coins: Provide at least one coin or ID when CoinLore is enabled',
    'binance.coins: Provide at least one coin when Binance is enabled',
  ]);
});

test('a block with omitted enabled and nothing to fetch is inactive with a warning, not an error', () => {
  const { warnings } = ok({ ...MINIMAL, coinlore: {} });
  assert.deepEqual(warnings, ['coinlore: configured without any coin or ID; CoinLore stays inactive']);
});

test('placeholders count as no key (case-insensitive, trimmed), as do empty and blank keys', () => {
  const placeholders = [
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
    '  demo api key for COINGECKO  ',
    '',
    '   ',
  ];
  for (const placeholder of placeholders) {
    assert.ok(isPlaceholderSecret(placeholder), placeholder);
    assert.deepEqual(problems({ ...MINIMAL, coingecko: { api_key: placeholder, ids: ['bitcoin'] } }), [GECKO], placeholder);
  }
  assert.ok(!isPlaceholderSecret('CG-realKey'));
  assert.equal(ok({ ...MINIMAL, coingecko: { api_key: 'CG-realKey', ids: ['bitcoin'] } }).config.sources.coingecko!.api_key, 'CG-realKey');
});

test('a disabled key-gated source needs no key (acceptance H.31)', () => {
  const { config } = ok({ ...MINIMAL, coingecko: { enabled: false } });
  assert.deepEqual(config.sources.coingecko, { enabled: false, weight: 10, coins: [], ids: [] });
  ok({ ...MINIMAL, cryptocompare: { enabled: false, api_key: 'API key for CoinDesk Data (CryptoCompare)', coins: ['BTC'] } });
});

test('a stock 4.1.2 configuration fails on 4.2 with both key-gated sources named', () => {
  const found = problems({
    ...MINIMAL,
    cryptocompare: { enabled: true, api_key: 'Put yours CryptoCompare API key', coins: ['USD', 'BTC', 'ADM'] },
    coingecko: { enabled: true, coins: ['BTC', 'ADM'] },
  });
  assert.deepEqual(found, [CRYPTOCOMPARE, GECKO]);
});

test('Binance quote asset rules', () => {
  assert.deepEqual(problems({ ...MINIMAL, binance: { quote_asset: 'EUR', coins: ['BTC'] } }), [
    "binance.quote_asset: 'quote_asset' must be a USD-pegged asset: USD, USDT, USDC, FDUSD, USD1, USDS, TUSD, USDP, PYUSD, RLUSD, DAI, BUSD",
  ]);
  assert.deepEqual(problems({ ...MINIMAL, binance: { coins: ['BTC', 'usdt'] } }), [
    "binance.coins: Remove 'USDT' from the Binance coins: it is the configured quote asset and has no market against itself",
  ]);
});

/** The public BIP-39 test mnemonic (docs/notes/transfers-console.md test vectors): a valid ADAMANT passphrase, no real funds. */
const SENDER = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

test('notify.adamant: the exact problem texts', () => {
  assert.equal(ADAMANT_PASSPHRASE_MISSING, 'Provide passphrase to use ADAMANT notifier');
  assert.equal(ADAMANT_ADDRESS_INVALID, 'Invalid ADAMANT address. The format is U followed by 6 to 21 digits');
  assert.equal(ADAMANT_PASSPHRASE_INVALID, 'Invalid ADAMANT passphrase: it must be longer than 30 characters (the 12 words of the sending account)');
  assert.deepEqual(DEFAULT_ADAMANT_NODES, ['https://endless.adamant.im', 'https://clown.adamant.im', 'https://lake.adamant.im']);
});

test('notify.adamant: addresses without a passphrase, or with a blank one, are refused with the original text', () => {
  for (const notify of [{ adamant: ['U1234567890'] }, { adamant: ['U1234567890'], adamantPassphrase: '' }, { adamant: ['U1234567890'], adamantPassphrase: '   ' }]) {
    assert.deepEqual(problems({ ...MINIMAL, notify }), ['notify.adamantPassphrase: Provide passphrase to use ADAMANT notifier'], JSON.stringify(notify));
  }
});

test("notify.adamant: the template's placeholder passphrase counts as absent", () => {
  for (const placeholder of ['apple banana...', '  APPLE banana...  ']) {
    const found = problems({ ...MINIMAL, notify: { adamant: ['U1234567890'], adamantPassphrase: placeholder } });
    assert.deepEqual(found, ['notify.adamantPassphrase: Provide passphrase to use ADAMANT notifier']);
  }
  // The stock template (no addresses, placeholder passphrase) is accepted silently, the channel off.
  const template = ok({ ...MINIMAL, notify: { slack: [], discord: [], adamant: [], adamantPassphrase: 'apple banana...' } });
  assert.deepEqual(template.warnings, []);
  assert.deepEqual(template.config.notify.adamant, []);
  assert.equal(template.config.notify.adamantPassphrase, undefined);
});

test('notify.adamant: each address must match ^U[0-9]{6,21}$, named by its index and never echoed', () => {
  const bad = ['U12345', 'u1234567890', 'U1234567890123456789012', 'secret words in the wrong field', 'U123456a'];
  const found = problems({ ...MINIMAL, notify: { adamant: ['U123456', ...bad, 'U123456789012345678901'], adamantPassphrase: SENDER } });
  assert.deepEqual(found, bad.map((_, index) => `notify.adamant[${index + 1}]: Invalid ADAMANT address. The format is U followed by 6 to 21 digits`));
  assert.ok(!found.join('\n').includes('secret words'), 'the value is not echoed');
});

test('notify.adamant: a passphrase the console would refuse is a problem that never shows the passphrase', () => {
  const short = 'too short to be a passphrase';
  const result = parseRatesConfig({ ...MINIMAL, notify: { adamant: ['U1234567890'], adamantPassphrase: short } });
  assert.ok(!result.ok);
  assert.deepEqual(result.problems, [
    'notify.adamantPassphrase: Invalid ADAMANT passphrase: it must be longer than 30 characters (the 12 words of the sending account)',
  ]);
  assert.ok(!JSON.stringify(result).includes(short));
  const typed = problems({ ...MINIMAL, notify: { adamant: ['U1234567890'], adamantPassphrase: 42 } });
  assert.ok(typed.some((line) => line.startsWith('notify.adamantPassphrase:')));
});

test('notify.adamant: a valid configuration is accepted; the passphrase is kept but never serialized', () => {
  const { config, warnings } = ok({
    ...MINIMAL,
    notify: { adamant: ['U1234567890', 'U9876543210987654321'], adamantPassphrase: `  ${SENDER}  `, adamantNodes: ['http://127.0.0.1:1/', 'https://node.example'] },
  });
  assert.deepEqual(warnings, []);
  assert.deepEqual(config.notify.adamant, ['U1234567890', 'U9876543210987654321']);
  assert.equal(config.notify.adamantPassphrase, SENDER, 'trimmed, as the original');
  assert.deepEqual(config.notify.adamantNodes, ['http://127.0.0.1:1', 'https://node.example'], 'trailing slashes dropped');
  assert.ok(Object.isFrozen(config.notify));
  assert.ok(!JSON.stringify(config).includes('abandon'), 'JSON never carries the passphrase');
  assert.ok(!Object.keys(config.notify).includes('adamantPassphrase'));
  assert.ok(!inspect(config, { depth: 10 }).includes('abandon'), 'neither does util.inspect');
  assert.deepEqual(ok({ ...MINIMAL, notify: { adamant: ['U1234567890'], adamantPassphrase: SENDER } }).config.notify.adamantNodes, DEFAULT_ADAMANT_NODES);
});

test('notify.adamant: a passphrase without addresses is dropped with a warning that does not show it', () => {
  const { config, warnings } = ok({ ...MINIMAL, notify: { adamant: [], adamantPassphrase: SENDER } });
  assert.deepEqual(warnings, ['notify.adamantPassphrase: notify.adamant lists no address; the ADAMANT notification channel stays off']);
  assert.equal(config.notify.adamantPassphrase, undefined);
  assert.ok(!JSON.stringify({ config, warnings }).includes('abandon'));
});

test('notify.adamantNodes (additive key): a non-empty list of http(s) URLs, bad entries named by index and not echoed', () => {
  const found = problems({ ...MINIMAL, notify: { adamantNodes: ['https://ok.example', 'ftp://user:hunter2@node', 'not a url'] } });
  assert.deepEqual(found, ['notify.adamantNodes[1]: must be an http:// or https:// URL', 'notify.adamantNodes[2]: must be an http:// or https:// URL']);
  assert.ok(!found.join('\n').includes('hunter2'));
  const empty = problems({ ...MINIMAL, notify: { adamantNodes: [] } });
  assert.equal(empty.length, 1);
  assert.match(empty[0]!, /^notify\.adamantNodes: /);
});

test('notify.adamant: the passphrase appears in no problem or warning whatever else is wrong', () => {
  const result = parseRatesConfig({ ...MINIMAL, foo: 1, notify: { adamant: ['U1', 'U1234567890'], adamantPassphrase: SENDER, adamantNodes: ['x'], extra: SENDER } });
  assert.ok(!result.ok);
  assert.ok(result.problems.length >= 4, result.problems.join('\n'));
  assert.ok(!JSON.stringify(result).includes('abandon'));
});

test('Slack and Discord webhooks must match the original formats; bad ones are not echoed', () => {
  const slack = 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX';
  const discord = 'https://discord.com/api/webhooks/123456789012345678/aBCdeFg9h0iJKl1-_mNoPqRST2uvwXYZ3ab4cDefgH5ijklmnOPQrsTuvWxYZaBC-de_';
  assert.deepEqual(ok({ ...MINIMAL, notify: { slack: [slack], discord: [discord, discord.replace('discord.com', 'discordapp.com')] } }).config.notify.slack, [slack]);
  const secretish = 'http://127.0.0.1:9/hook-token-abc';
  const found = problems({ ...MINIMAL, notify: { slack: [slack, secretish], discord: ['https://discord.com/api/webhooks/x/y'] } });
  assert.equal(found.length, 2);
  assert.match(found[0]!, /^notify\.slack\[1\]: Invalid Slack webhook url/);
  assert.match(found[1]!, /^notify\.discord\[0\]: Invalid Discord webhook url/);
  assert.ok(!found.join('\n').includes('hook-token-abc'));
});

test('value ranges and types of the 4.2 schema', () => {
  const found = problems({
    strategy: 'median',
    groupPercentage: 250,
    rateDifferencePercentThreshold: -1,
    rateLifetime: 0,
    priorities: 'CoinPaprika',
    base_coins: [],
    decimals: 101,
    minSources: 0,
    log_level: 'verbose',
    server: { port: 70000 },
    moex: { url: 'ftp://example.com/x', codes: { 'USD/EUR': 'X' } },
    coinpaprika: { ids: ['btc-bitcoin'], bulk_limit: 5000, max_individual_requests: -1 },
    coinlore: { ids: { BTC: 0 } },
    binance: { coins: ['BT/C'] },
  });
  for (const expected of [
    'strategy: must be equal to one of the allowed values',
    'groupPercentage: must be <= 200',
    'rateDifferencePercentThreshold: must be >= 0',
    'rateLifetime: must be > 0',
    'priorities: must be array',
    'base_coins: must not have fewer than 1 items',
    'decimals: must be <= 100',
    'minSources: must be >= 1',
    'log_level: must be equal to one of the allowed values',
    'server.port: must be <= 65535',
    'moex.url: must be an http:// or https:// URL',
    "moex.codes: 'USD/EUR' must be a pair of the form CODE/RUB",
    'coinpaprika.bulk_limit: must be <= 2000',
    'coinpaprika.max_individual_requests: must be >= 0',
    'coinlore.ids.BTC: must be >= 1',
  ]) {
    assert.ok(found.includes(expected), `${expected} missing in ${JSON.stringify(found, null, 1)}`);
  }
  assert.ok(found.some((line) => line.startsWith('binance.coins[0]: must match pattern')));
  // More than TypeBox's default buffer of 8: every problem is reported at once.
  assert.ok(found.length >= 16, `${found.length} problems`);
});

test('missing required keys are named', () => {
  const found = problems({});
  assert.equal(found.length, 1);
  for (const key of ['strategy', 'groupPercentage', 'priorities', 'rateLifetime', 'base_coins']) assert.match(found[0]!, new RegExp(key));
  assert.deepEqual(problems(null), ['(root): must be object']);
});

test('schema problems and key-gate problems come together in one report', () => {
  const found = problems({ ...MINIMAL, foo: 1, decimals: 1.5, coingecko: { coins: ['BTC'] }, notify: { adamant: ['U1234567'] } });
  assert.equal(found.length, 4);
  assert.ok(found.includes(GECKO));
  assert.ok(found.includes('notify.adamantPassphrase: Provide passphrase to use ADAMANT notifier'));
});

test('unknown priority names are a warning (names are case-sensitive)', () => {
  const { warnings } = ok({ ...MINIMAL, priorities: ['coinpaprika', 'Binance'] });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /^priorities: 'coinpaprika' is not a source name/);
});

test('server.engine picks the HTTP engine of the listener (additive key, validated like the rest)', () => {
  assert.equal(ok({ ...MINIMAL, server: { engine: 'node' } }).config.server.engine, 'node');
  assert.equal(ok(MINIMAL).config.server.engine, undefined);
  assert.ok(problems({ ...MINIMAL, server: { engine: 'apache' } }).some((problem) => problem.startsWith('server.engine')));
});

test('resolveRatesConfigPath: --config, then $CURRENCYINFO_CONFIG, then ./config.jsonc in the working directory, then none (embedded defaults)', () => {
  const cwd = '/srv/rates';
  const present = new Set<string>();
  const exists = (path: string) => present.has(path);
  assert.equal(resolveRatesConfigPath(undefined, {}, cwd, exists), undefined, 'nothing anywhere: the embedded defaults');
  present.add('/srv/rates/config.jsonc');
  assert.equal(resolveRatesConfigPath(undefined, {}, cwd, exists), '/srv/rates/config.jsonc', 'the original reads ./config.jsonc');
  assert.equal(resolveRatesConfigPath(undefined, { CURRENCYINFO_CONFIG: '/etc/rates.jsonc' }, cwd, exists), '/etc/rates.jsonc', 'the variable wins over ./config.jsonc');
  assert.equal(resolveRatesConfigPath(undefined, { CURRENCYINFO_CONFIG: 'conf/a.jsonc' }, cwd, exists), '/srv/rates/conf/a.jsonc', 'relative to the working directory');
  assert.equal(resolveRatesConfigPath('b.jsonc', { CURRENCYINFO_CONFIG: '/etc/rates.jsonc' }, cwd, exists), '/srv/rates/b.jsonc', 'the flag wins over both');
  assert.equal(resolveRatesConfigPath('/abs/c.jsonc', {}, cwd, exists), '/abs/c.jsonc');
  assert.equal(resolveRatesConfigPath('', { CURRENCYINFO_CONFIG: '' }, cwd, exists), '/srv/rates/config.jsonc', 'empty values count as unset');
  present.clear();
  assert.equal(resolveRatesConfigPath(undefined, { CURRENCYINFO_CONFIG: '/missing.jsonc' }, cwd, exists), '/missing.jsonc', 'a named file is returned even when missing: reading it fails loudly');
  assert.equal(resolveRatesConfigPath('/missing.jsonc', {}, cwd, exists), '/missing.jsonc');
  assert.equal(resolveRatesConfigPath(undefined, { OTHER: 'x' }, 'relative', () => false), undefined);
});
