// rates notices through the real actors, under a simulated clock: the cadence of failing sources with real
// connectors against fake upstreams on 127.0.0.1, and `log_level` filtering in the original's ranking
// (none < error < warn < log < info; src/rates/log-level.ts, docs/notes/rates.md E.1, E.3).

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createActor, fromCallback, SimulatedClock } from 'xstate';
import { notifierLogic } from '../../../actors/rates/notifier.actor.js';
import { refreshLogic } from '../../../actors/rates/refresh.actor.js';
import { createRuntime } from '../../../actors/runtime.js';
import { createLogger } from '../../../src/logger.js';
import type { Reply } from '../../../src/reply.js';
import type { LogLevel } from '../../../src/rates/config.js';
import { RATES_LOG_RANKING, ratesLogger, ratesLogShows, type RatesLineLevel } from '../../../src/rates/log-level.js';
import { createCoinmarketcapConnector } from '../../../src/rates/sources/coinmarketcap.source.js';
import { SourceFetchError, type HttpJsonClient, type SourceConnector } from '../../../src/rates/sources/source.js';
import type { MergeSettings } from '../../../src/rates/types.js';
import { createTestContext, startFakeUpstreams } from '../../rates/fakes/upstreams.js';
import { waitFor } from '../../support/wait.js';

const MINUTE = 60_000;

/** A logger at `level` (pino's, for the parent) whose lines are read back. */
function capture(level: string) {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level: level as 'info', destination: stream }), lines };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const settings: MergeSettings = {
  decimals: 8, strategy: 'avg', rateDifferencePercentThreshold: 25, groupPercentage: 65, minSources: 1,
  priorities: [], weights: {}, baseCoins: ['USD'], allCoins: ['BTC', 'ETH'], coverage: { 'BTC/USD': 2, 'ETH/USD': 1 },
};

function historyStub() {
  return createActor(
    fromCallback<{ type: 'history.append'; date: number; tickers: Record<string, number>; reply: Reply<unknown> }>(({ receive }) =>
      receive((event) => event.reply.resolve({ _id: 'c'.repeat(24), date: event.date })),
    ),
  ).start();
}

const steady: SourceConnector = {
  name: 'CoinPaprika',
  weight: 10,
  advertisedCoins: () => ['BTC'],
  fetch: async () => [{ pair: 'BTC/USD', price: 100 }],
};

test('with real connectors: CoinMarketCap without any rate is an error every cycle; a source that could not be set up warns every cycle', async (t) => {
  const fake = await startFakeUpstreams();
  t.after(() => fake.close());
  fake.setApiKey('Coinmarketcap', 'cmc-key');
  fake.addCoin('Coinmarketcap', { id: '1', symbol: 'BTC', price: null });
  fake.addCoin('Coinmarketcap', { id: '1027', symbol: 'ETH', price: null });
  const cmc = createCoinmarketcapConnector(
    { enabled: true, weight: 10, url: fake.baseUrlFor('Coinmarketcap'), api_key: 'cmc-key', coins: [], ids: { BTC: 1, ETH: 1027 } },
    { decimals: 8 },
  );
  const coinlore: SourceConnector = {
    name: 'CoinLore',
    weight: 10,
    advertisedCoins: () => ['BTC'],
    discover: async () => {
      throw new SourceFetchError('CoinLore', 'HTTP 503 from the asset directory', 503);
    },
    fetch: async () => assert.fail('a source that could not be set up is not asked'),
  };

  const clock = new SimulatedClock();
  clock.set(0);
  const { logger, lines } = capture('debug');
  const runtime = createRuntime(clock, logger);
  runtime.registry.register('rates.history', historyStub());
  const actor = createActor(
    refreshLogic(runtime, {
      connectors: [cmc, coinlore, steady],
      http: createTestContext().client,
      discoveryRetryDelayMs: 1_000,
      discoveryAttempts: 2,
      startupNotices: [],
      sourceBudgetMs: 60_000,
      logLevel: 'log',
    }),
    { clock, input: { merge: settings, mappings: {}, lifetimeMs: 60 * MINUTE, intervalMs: 10 * MINUTE, startedAt: 0 } },
  ).start();
  t.after(() => actor.stop());
  const notices = () => lines.filter((l) => l.notice === true).map((l) => `${l.level}: ${l.msg}`);

  await flush();
  clock.increment(1_000); // CoinLore's second and last discovery attempt
  const cycles = async (n: number) => waitFor(() => lines.filter((l) => l.msg === 'sources fetched').length === n, { what: `cycle ${n}` });
  await cycles(1);
  for (let cycle = 2; cycle <= 3; cycle++) {
    await waitFor(() => actor.getSnapshot().value === 'idle', { what: 'idle' });
    clock.increment(10 * MINUTE);
    await cycles(cycle);
  }
  await waitFor(() => actor.getSnapshot().value === 'idle', { what: 'idle' });

  const perCycle = [
    'error: Unable to fetch valid data from Coinmarketcap. Unable to get all of 2 coin rates. Check Coinmarketcap service and configuration file.',
    'warn: Unable to fetch valid data from CoinLore. It could not be set up (HTTP 503 from the asset directory) and is disabled until restart.',
  ];
  assert.deepEqual(notices(), [
    'error: Unable to set up CoinLore after 2 attempts: HTTP 503 from the asset directory. The source is disabled until restart.',
    ...perCycle,
    ...perCycle,
    ...perCycle,
  ]);
  assert.equal(fake.requests('Coinmarketcap').length, 3, 'asked once per cycle');
});

test("the original's ranking: none < error < warn < log < info, each level printing its own rank and those before it", () => {
  assert.deepEqual(RATES_LOG_RANKING, ['none', 'error', 'warn', 'log', 'info']);
  const printed = (configured: LogLevel) => (['error', 'warn', 'log', 'info'] as const).filter((line) => ratesLogShows(configured, line));
  assert.deepEqual(printed('none'), []);
  assert.deepEqual(printed('error'), ['error']);
  assert.deepEqual(printed('warn'), ['error', 'warn']);
  assert.deepEqual(printed('log'), ['error', 'warn', 'log'], '`log` hides info lines');
  assert.deepEqual(printed('info'), ['error', 'warn', 'log', 'info']);
});

test('ratesLogger filters by log_level in that ranking, whatever the parent logger lets through, and names the log level', () => {
  for (const parentLevel of ['debug', 'warn']) {
    for (const configured of RATES_LOG_RANKING) {
      const { logger, lines } = capture(parentLevel);
      const rates = ratesLogger(logger, configured, { actor: 'rates.test' });
      rates.error('e');
      rates.warn('w');
      rates.log('l');
      rates.info('i');
      rates.debug('d');
      const expected = (['error', 'warn', 'log', 'info'] as RatesLineLevel[]).filter((line) => ratesLogShows(configured, line));
      assert.deepEqual(lines.map((l) => l.level), expected, `log_level ${configured} under a ${parentLevel} parent`);
      assert.ok(lines.every((l) => l.actor === 'rates.test'));
    }
  }
});

test('the notifier logs each notice at its level under log_level, and sends every notice whatever the level', async () => {
  for (const [configured, logged] of [
    ['info', ['error: e', 'warn: w', 'info: Infoservice v4.2.0 started on port 1']],
    ['log', ['error: e', 'warn: w']],
    ['warn', ['error: e', 'warn: w']],
    ['error', ['error: e']],
    ['none', []],
  ] as const) {
    const { logger, lines } = capture('info');
    const posted: string[] = [];
    const actor = createActor(
      notifierLogic({
        name: 'Currencyinfo',
        slack: ['https://hooks.slack.com/services/T0/B0/x'],
        discord: [],
        logger: ratesLogger(logger, configured, { actor: 'rates.notifier' }),
        post: async (_url, payload) => void posted.push((payload as { attachments: Array<{ fallback: string }> }).attachments[0]!.fallback),
        clock: new SimulatedClock(),
      }),
    ).start();
    actor.send({ type: 'notify.send', level: 'error', message: 'e' });
    actor.send({ type: 'notify.send', level: 'warn', message: 'w' });
    actor.send({ type: 'notify.send', level: 'info', message: 'Infoservice v4.2.0 started on port 1' });
    await flush();
    actor.stop();
    assert.deepEqual(lines.map((l) => `${l.level}: ${l.msg}`), logged, `log_level ${configured}`);
    assert.deepEqual(posted, ['**Currencyinfo**# e', '**Currencyinfo**# w', '**Currencyinfo**# Infoservice v4.2.0 started on port 1'], 'channels get every level');
  }
});

test('the refresh actor: a line per source per cycle at info, the cycle outcome at log; log_level log hides the former', async () => {
  const seen: Record<string, string[]> = {};
  for (const configured of ['info', 'log', 'warn'] as const) {
    const clock = new SimulatedClock();
    clock.set(0);
    const { logger, lines } = capture('info');
    const runtime = createRuntime(clock, logger);
    runtime.registry.register('rates.history', historyStub());
    const actor = createActor(
      refreshLogic(runtime, {
        connectors: [steady],
        http: {} as HttpJsonClient,
        discoveryRetryDelayMs: 1_000,
        discoveryAttempts: 1,
        startupNotices: [{ level: 'info', message: 'Infoservice v4.2.0 started on port 1' }],
        sourceBudgetMs: 60_000,
        logLevel: configured,
      }),
      { clock, input: { merge: settings, mappings: {}, lifetimeMs: 60 * MINUTE, intervalMs: 10 * MINUTE, startedAt: 0 } },
    ).start();
    await flush();
    assert.equal(actor.getSnapshot().value, 'idle');
    actor.stop();
    seen[configured] = lines.map((l) => `${l.level}: ${l.msg}`);
  }
  assert.deepEqual(seen.info, ['info: Infoservice v4.2.0 started on port 1', 'info: source fetched', 'log: sources fetched', 'log: snapshot saved']);
  assert.deepEqual(seen.log, ['log: sources fetched', 'log: snapshot saved']);
  assert.deepEqual(seen.warn, []);
});
