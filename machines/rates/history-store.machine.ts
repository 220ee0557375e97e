// Owns the rates history store's lifetime (docs/specs/rates.md §4.2, §9.7; docs/notes/rates.md C):
//
//   opening ──done──▶ ready ──system.shutdown──▶ closing ──done/error──▶ closed (final)
//      └──error: the actor crashes and its supervisor retries with backoff
//
// Appends and queries are answered in `ready` by named actions that the actor layer implements over the
// store; before that they are refused (the caller maps it to 500), never queued without bound.

import { fromPromise, setup } from 'xstate';
import type { HistoryQuery, Snapshot } from '../../src/rates/history.js';
import type { Reply } from '../../src/reply.js';

export type HistoryEvent =
  | { type: 'history.append'; date: number; tickers: Record<string, number>; reply: Reply<{ _id: string; date: number }> }
  | { type: 'history.query'; query: HistoryQuery; reply: Reply<Snapshot[]> }
  | { type: 'system.shutdown' };

function notProvided(name: string): never {
  throw new Error(`history-store: '${name}' must be provided by actors/rates`);
}

export const historyStoreMachine = setup({
  types: { events: {} as HistoryEvent },
  actors: {
    openStore: fromPromise<void>(async () => notProvided('openStore')),
    closeStore: fromPromise<void>(async () => notProvided('closeStore')),
  },
  actions: {
    runAppend: (_, _params: { event: HistoryEvent }) => notProvided('runAppend'),
    runQuery: (_, _params: { event: HistoryEvent }) => notProvided('runQuery'),
    refuseNotReady: (_, _params: { event: HistoryEvent }) => notProvided('refuseNotReady'),
  },
}).createMachine({
  id: 'ratesHistoryStore',
  initial: 'opening',
  states: {
    opening: {
      invoke: { src: 'openStore', onDone: 'ready' },
      on: {
        'history.append': { actions: { type: 'refuseNotReady', params: ({ event }) => ({ event }) } },
        'history.query': { actions: { type: 'refuseNotReady', params: ({ event }) => ({ event }) } },
        'system.shutdown': 'closing',
      },
    },
    ready: {
      on: {
        'history.append': { actions: { type: 'runAppend', params: ({ event }) => ({ event }) } },
        'history.query': { actions: { type: 'runQuery', params: ({ event }) => ({ event }) } },
        'system.shutdown': 'closing',
      },
    },
    closing: {
      invoke: { src: 'closeStore', onDone: 'closed', onError: 'closed' },
      on: {
        'history.append': { actions: { type: 'refuseNotReady', params: ({ event }) => ({ event }) } },
        'history.query': { actions: { type: 'refuseNotReady', params: ({ event }) => ({ event }) } },
      },
    },
    closed: { type: 'final' },
  },
});
