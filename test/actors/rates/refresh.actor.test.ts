// rates.refresh's I/O side: discovery retries on the injected clock (notes B.1.3, F.22), permanent
// refusals, startup notices, and which sources a cycle asks.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createActor, fromCallback, SimulatedClock } from 'xstate';
import { refreshLogic } from '../../../actors/rates/refresh.actor.js';
import { createRuntime } from '../../../actors/runtime.js';
import type { Reply } from '../../../src/reply.js';
import { SourceFetchError, type HttpJsonClient, type SourceConnector } from '../../../src/rates/sources/source.js';
import type { MergeSettings, SourceName } from '../../../src/rates/types.js';
import { captureLogger } from '../../support/logger.js';

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const settings: MergeSettings = {
  decimals: 8, strategy: 'avg', rateDifferencePercentThreshold: 25, groupPercentage: 65, minSources: 1,
  priorities: [], weights: {}, baseCoins: ['USD'], allCoins: ['BTC'], coverage: { 'BTC/USD': 3 },
};

function connector(name: SourceName, discover: () => Promise<void>, fetched: string[]): SourceConnector {
  return {
    name,
    weight: 10,
    advertisedCoins: () => ['BTC'],
    discover,
    fetch: async () => {
      fetched.push(name);
      return [{ pair: 'BTC/USD', price: 100 }];
    },
  };
}

test('discovery retries with growing waits, disables a source after 4 failures or at once on a permanent refusal', async () => {
  const clock = new SimulatedClock();
  clock.set(0);
  const { logger, lines } = captureLogger();
  const runtime = createRuntime(clock, logger);
  const stored: Array<Record<string, number>> = [];
  runtime.registry.register(
    'rates.history',
    createActor(
      fromCallback<{ type: 'history.append'; date: number; tickers: Record<string, number>; reply: Reply<unknown> }>(({ receive }) =>
        receive((event) => {
          stored.push(event.tickers);
          event.reply.resolve({ _id: 'c'.repeat(24), date: event.date });
        }),
      ),
    ).start(),
  );
  const fetched: string[] = [];
  let flakyAttempts = 0;
  const connectors = [
    connector('CoinPaprika', async () => {
      flakyAttempts++;
      if (flakyAttempts < 3) throw new SourceFetchError('CoinPaprika', 'HTTP 503 from the asset directory', 503);
    }, fetched),
    connector('Binance', async () => {
      throw new SourceFetchError('Binance', 'HTTP 451: unavailable from this location', 451, true);
    }, fetched),
    connector('CoinLore', async () => {
      throw new SourceFetchError('CoinLore', 'no answer within 20000 ms');
    }, fetched),
  ];
  const logic = refreshLogic(runtime, {
    connectors,
    http: {} as HttpJsonClient,
    discoveryRetryDelayMs: 10_000,
    discoveryAttempts: 4,
    startupNotices: [{ level: 'info', message: 'Infoservice v4.2.0 started on port 1' }],
    sourceBudgetMs: 60_000,
  });
  const actor = createActor(logic, { clock, input: { merge: settings, mappings: {}, lifetimeMs: 3_600_000, intervalMs: 600_000, startedAt: 0 } }).start();
  await flush();
  const notices = () => lines.filter((l) => l.notice === true).map((l) => `${l.level}: ${l.msg}`);
  assert.deepEqual(notices(), ['info: Infoservice v4.2.0 started on port 1'], 'the startup notice goes out before discovery ends');

  clock.increment(10_000); // attempt 1 of the flaky and the slow source
  await flush();
  clock.increment(20_000); // attempt 2: the flaky source succeeds
  await flush();
  assert.equal(flakyAttempts, 3);
  assert.equal(actor.getSnapshot().value, 'discovering', 'the first cycle waits for discovery to settle');
  clock.increment(30_000); // attempt 3 of the slow source fails: it is disabled
  await flush();
  assert.equal(actor.getSnapshot().value, 'idle');
  assert.deepEqual(actor.getSnapshot().context.disabled.sort(), ['Binance', 'CoinLore']);
  assert.deepEqual(fetched, ['CoinPaprika'], 'disabled sources are not asked');
  assert.equal(stored.length, 1);
  const texts = notices();
  assert.ok(texts.includes('error: Unable to set up Binance: HTTP 451: unavailable from this location. The source is disabled until restart.'), texts.join('\n'));
  assert.ok(texts.includes('error: Unable to set up CoinLore after 4 attempts: no answer within 20000 ms. The source is disabled until restart.'), texts.join('\n'));
  const binanceTries = lines.filter((l) => l.msg === 'source discovery failed' && l.source === 'Binance');
  assert.equal(binanceTries.length, 1, 'a permanent refusal is not retried');
  actor.stop();
});
