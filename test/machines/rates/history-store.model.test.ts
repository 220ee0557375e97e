// Model-based test of the rates history store's lifetime (machines/rates/history-store.machine.ts): every path of its
// graph replayed on a real actor (test/support/model.ts). Effects checked per step (spec §4.2, §9.7; notes C): the
// store is opened at start and closed on shutdown, closed even when the close fails; appends and queries are run only
// in `ready`, with the very request they came with, and refused (never queued) while opening or closing; a shutdown
// while opening aborts the open.

import assert from 'node:assert/strict';
import { historyStoreMachine } from '../../../machines/rates/history-store.machine.js';
import type { Reply } from '../../../src/reply.js';
import { modelTest } from '../../support/model.js';

const reply = <T>(): Reply<T> => ({ resolve: () => {}, reject: () => {}, signal: new AbortController().signal });
const append = { type: 'history.append', date: 1_700_000_000_000, tickers: { 'BTC/USD': 60_000 }, reply: reply() };
const query = { type: 'history.query', query: { limit: 10 }, reply: reply() };

modelTest({
  machine: historyStoreMachine,
  scenarios: [{ name: 'store' }],
  events: { 'history.append': [append], 'history.query': [query] },
  errors: { closeStore: [new Error('connection lost')] },
  simplePaths: { maxStates: 10, maxPaths: 10 },
  effect: ({ index, event, before, after, actions, invoked, fakes }) => {
    if (index === 0) return assert.deepEqual(invoked.map((f) => f.src), ['openStore'], 'opened at start');
    if (event.type === 'history.append' || event.type === 'history.query') {
      const expected = before!.value !== 'ready' ? 'refuseNotReady' : event.type === 'history.append' ? 'runAppend' : 'runQuery';
      assert.deepEqual(actions, [{ type: expected, params: { event } }], 'run in ready, refused otherwise, with the request itself');
      assert.equal(after.value, before!.value, 'a request changes no state');
    } else {
      assert.deepEqual(actions, [], 'no request is answered without one');
    }
    if (event.type === 'system.shutdown') {
      assert.deepEqual([after.value, invoked.map((f) => f.src)], ['closing', ['closeStore']], 'shutdown closes the store');
      if (before!.value === 'opening') assert.equal(fakes[0]!.signal.aborted, true, 'the open in flight is aborted');
    }
    if (before!.value === 'closing' && event.type.startsWith('xstate.')) assert.equal(after.value, 'closed', 'closed even when the close failed');
  },
});
