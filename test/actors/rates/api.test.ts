// The rates API (actors/rates/api.ts) keeps /status and /get answering while rates.refresh is down (spec §4.3).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createActor, fromPromise, SimulatedClock } from 'xstate';
import { RATES_REFRESH_ID as REFRESH_ID } from '../../../actors/rates/ids.js';
import { ratesApi } from '../../../actors/rates/api.js';
import { createRuntime } from '../../../actors/runtime.js';
import { refreshCycleMachine, type DiscoveryOutput, type FetchInput, type FetchOutput, type StoreInput, type StoreOutput } from '../../../machines/rates/refresh-cycle.machine.js';
import type { MergeSettings } from '../../../src/rates/types.js';
import { captureLogger } from '../../support/logger.js';

const settings: MergeSettings = {
  decimals: 8, strategy: 'avg', rateDifferencePercentThreshold: 25, groupPercentage: 65, minSources: 1,
  priorities: [], weights: { A: 10 }, baseCoins: ['USD'], allCoins: ['BTC'], coverage: { 'BTC/USD': 1 },
};

test('before any refresh snapshot: not ready, updating, next_update = start; an empty table', () => {
  const clock = new SimulatedClock();
  clock.set(5_000);
  const api = ratesApi(createRuntime(clock, captureLogger().logger));
  assert.deepEqual(api.status(), { ready: false, updating: true, next_update: 5_000, last_updated: null });
  assert.deepEqual(api.table().table, {});
  assert.deepEqual(api.table(5).table, {});
  assert.deepEqual(api.cachedTable(), {});
  assert.equal(api.lastUpdated(), null);
});

test('while rates.refresh is restarting, the last table is served and the status says updating', async () => {
  const clock = new SimulatedClock();
  clock.set(1_000_000);
  const runtime = createRuntime(clock, captureLogger().logger);
  const machine = refreshCycleMachine.provide({
    actors: {
      discoverSources: fromPromise<DiscoveryOutput>(async () => ({ disabled: [], notices: [], finishedAt: clock.now() })),
      fetchSources: fromPromise<FetchOutput, FetchInput>(async () => ({
        startedAt: clock.now(),
        finishedAt: clock.now(),
        outcomes: [{ source: 'A', ok: true as const, quotes: [{ pair: 'BTC/USD', price: 100 }], receivedAt: clock.now() }],
      })),
      storeSnapshot: fromPromise<StoreOutput, StoreInput>(async () => ({ _id: 'b'.repeat(24), date: clock.now() })),
    },
    actions: { publishNotices: () => {} },
  });
  const actor = createActor(machine, { clock, input: { merge: settings, mappings: {}, lifetimeMs: 3_600_000, intervalMs: 600_000, startedAt: 1_000_000 } });
  runtime.registry.register(REFRESH_ID, actor);
  actor.start();
  for (let i = 0; i < 4; i++) await new Promise((resolve) => setImmediate(resolve));
  const api = ratesApi(runtime);
  assert.deepEqual(api.status(), { ready: true, updating: false, next_update: 1_600_000, last_updated: 1_000_000 });
  assert.equal(api.table().table['BTC/USD'], 100);
  actor.stop();
  assert.deepEqual(api.status(), { ready: true, updating: true, next_update: 1_600_000, last_updated: 1_000_000 });
  assert.equal(api.table().table['BTC/USD'], 100);
  assert.equal(api.table(30).table['BTC/USD'], 100, 'a per-request window is evaluated over the last retained quotes');
  // The hot path's reads: the published table itself for the configured lifetime (60 min), none for another window.
  assert.equal(api.cachedTable(), api.table().table);
  assert.equal(api.cachedTable(60), api.table().table);
  assert.equal(api.cachedTable(30), undefined);
  assert.equal(api.lastUpdated(), api.status().last_updated);
});
