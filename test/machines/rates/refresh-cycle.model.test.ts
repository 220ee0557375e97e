// Model-based test of the rates refresh cycle (machines/rates/refresh-cycle.machine.ts): every path of its graph
// replayed on a real actor with a SimulatedClock (test/support/model.ts). Discovery is sampled with and without a
// source that failed it; a fetch as two good sources, a permanent failure of a third next to a good one (once: a
// disabled source is not fetched again), and every source failing; the store succeeds and fails. The graph ignores
// the cycle counter. Effects checked per step (spec §1, §2.4, §3; notes B.1, B.2, F.4, F.8): a cycle fetches without
// the disabled sources, stores the table only when a source gave a valid rate, schedules the next cycle from the
// stored snapshot; notices are published once, on entering idle (discovery's at once); /status reports updating
// during a cycle; never two cycles at once.

import assert from 'node:assert/strict';
import type { AnyMachineSnapshot } from 'xstate';
import { refreshCycleMachine, refreshStatus, type DiscoveryOutput, type FetchOutput } from '../../../machines/rates/refresh-cycle.machine.js';
import type { SourceOutcome } from '../../../src/rates/cycle.js';
import { modelTest } from '../../support/model.js';
import { REFRESH_INPUT, START } from '../../support/rates-refresh.js';

const clean: DiscoveryOutput = { disabled: [], notices: [], finishedAt: START + 100 };
const lostOne: DiscoveryOutput = { disabled: ['D'], notices: [{ level: 'warn', message: 'D: discovery failed' }], finishedAt: START + 100 };
const fetched = (outcomes: SourceOutcome[]): FetchOutput => ({ startedAt: START + 200, finishedAt: START + 300, outcomes });
const good = fetched([
  { source: 'A', ok: true, quotes: [{ pair: 'BTC/USD', price: 60_000 }], receivedAt: START + 250 },
  { source: 'B', ok: true, quotes: [{ pair: 'BTC/USD', price: 60_010 }], receivedAt: START + 250 },
]);
const oneGone = fetched([
  { source: 'A', ok: true, quotes: [{ pair: 'BTC/USD', price: 60_000 }], receivedAt: START + 250 },
  { source: 'C', ok: false, error: 'HTTP 451', permanent: true },
]);
const allFailed = fetched([
  { source: 'A', ok: false, error: 'timeout', permanent: false },
  { source: 'B', ok: false, error: 'HTTP 502', permanent: false },
]);
const NAMES = new Map<unknown, string>([[clean, 'clean'], [lostOne, 'a source failed discovery'], [good, 'good'], [oneGone, 'a source gone for good'], [allFailed, 'all failed']]);
const fetchSamples = (s: AnyMachineSnapshot) => (s.context.disabled.includes('C') ? [good, allFailed] : [good, oneGone, allFailed]);

modelTest({
  machine: refreshCycleMachine,
  scenarios: [{ name: 'rates', input: REFRESH_INPUT }],
  startAt: START,
  outputs: { discoverSources: [clean, lostOne], fetchSources: fetchSamples, storeSnapshot: [{ _id: 'a'.repeat(24), date: START + 400 }] },
  errors: { storeSnapshot: [new Error('disk full')] },
  abstract: (s) => ({ ...s.context, cycles: undefined }),
  describe: (event) => NAMES.get(event.output),
  effect: ({ index, event, before, after, actions, invoked, elapsed }) => {
    const ctx = after.context;
    const published = actions.filter((a) => a.type === 'publishNotices').flatMap((a) => a.params.notices);
    assert.ok(Object.keys(after.children).length <= 1, 'never two cycles at once');
    assert.equal(refreshStatus(after as never).updating, after.value !== 'idle' && after.value !== 'stopped' ? true : ctx.lastUpdated === null, '/status: updating during a cycle and before the first snapshot');
    for (const fake of invoked) {
      if (fake.src === 'fetchSources') assert.deepEqual(fake.input, { disabled: ctx.disabled }, 'disabled sources are not fetched');
      if (fake.src === 'storeSnapshot') assert.deepEqual(fake.input, { table: ctx.table }, 'the merged table is stored');
    }
    if (index === 0) return assert.deepEqual(invoked.map((f) => f.src), ['discoverSources']);
    const prev = before!.context;
    if (before!.value === 'discovering' && event.type.startsWith('xstate.done.actor.')) {
      assert.deepEqual([ctx.disabled, published], [event.output.disabled, event.output.notices], 'discovery disables and tells at once');
    }
    if (before!.value === 'fetching' && event.type.startsWith('xstate.done.actor.')) {
      const stores = event.output !== allFailed;
      assert.equal(after.value, stores ? 'storing' : 'idle', 'a snapshot only when a source gave a valid rate (F.8)');
      if (event.output === oneGone) assert.ok(ctx.disabled.includes('C'), 'a permanent failure disables the source');
      if (!stores) assert.ok(published.some((n) => n.message.includes('No data has been saved')), 'the gap is told on entering idle');
    }
    if (before!.value === 'storing' && event.type.startsWith('xstate.done.actor.')) {
      assert.deepEqual([ctx.lastUpdated, ctx.nextCycleAt], [event.output.date, event.output.date + REFRESH_INPUT.intervalMs], 'next_update = last_updated + interval');
    }
    if (before!.value === 'storing' && event.type.startsWith('xstate.error.actor.')) {
      assert.equal(ctx.lastUpdated, prev.lastUpdated);
      assert.ok(published.some((n) => n.level === 'error' && n.message.includes('disk full')), 'a failed store is told');
    }
    if (after.value === 'idle') assert.deepEqual(ctx.notices, [], 'notices are published once');
    if (event.type.startsWith('xstate.after.')) {
      assert.deepEqual([after.value, invoked.map((f) => f.src)], ['fetching', ['fetchSources']], 'the next cycle');
      assert.equal(elapsed, Math.max(0, prev.nextCycleAt - prev.idleSince), 'when due');
    }
    if (event.type === 'system.shutdown') assert.deepEqual([after.value, Object.keys(after.children)], ['stopped', []]);
  },
});
