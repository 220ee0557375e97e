// `rates.history`: the history-store machine with its I/O supplied (storage/rates, docs/DESIGN.md rule 1).
// The backend is chosen once from the configuration: MongoDB when `server.mongodb` is set, else SQLite.

import type { LineLogger } from '../../src/rates/log-level.js';
import { historyStoreMachine, type HistoryEvent } from '../../machines/rates/history-store.machine.js';
import type { HistoryStore } from '../../storage/rates/history.js';
import { fromPromise } from 'xstate';

export class HistoryUnavailableError extends Error {
  override readonly name = 'HistoryUnavailableError';
  constructor() {
    super('history store is not open');
  }
}

export function historyLogic(open: () => Promise<HistoryStore>, logger: LineLogger) {
  let store: HistoryStore | undefined;
  return historyStoreMachine.provide({
    actors: {
      openStore: fromPromise(async ({ signal }) => {
        const opened = await open();
        if (signal.aborted) {
          // Shutdown arrived while opening: closeStore already ran with nothing to close.
          await opened.close();
          return;
        }
        store = opened;
        logger.info('history store open');
      }),
      closeStore: fromPromise(async () => {
        const current = store;
        store = undefined;
        await current?.close();
        logger.info('history store closed');
      }),
    },
    actions: {
      runAppend: (_, { event }) => {
        if (event.type !== 'history.append') return;
        const current = store;
        if (!current) return event.reply.reject(new HistoryUnavailableError());
        current.append(event.date, event.tickers, event.reply.signal).then(event.reply.resolve, event.reply.reject);
      },
      runQuery: (_, { event }) => {
        if (event.type !== 'history.query') return;
        const current = store;
        if (!current) return event.reply.reject(new HistoryUnavailableError());
        current.query(event.query, event.reply.signal).then(event.reply.resolve, event.reply.reject);
      },
      refuseNotReady: (_, { event }: { event: HistoryEvent }) => {
        if ('reply' in event) event.reply.reject(new HistoryUnavailableError());
      },
    },
  });
}
