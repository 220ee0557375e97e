// `rates.notifier`: every notice is logged, then sent to each configured Slack and Discord webhook
// (notes/rates.md E.3, F.1). Delivery failures are only logged; nothing a channel does can stall a cycle.
// Secrets never reach a message: texts are scrubbed once more here, the last stop before leaving.

import { fromCallback } from 'xstate';
import type { Logger } from '../../src/logger.js';
import { scrubSecrets } from '../../src/logger.js';
import type { NoticeLevel } from '../../src/rates/cycle.js';
import { channelText, discordPayload, plainText, slackPayload } from '../../src/rates/notify.js';

export type NotifierEvent = { type: 'notify.send'; level: NoticeLevel; message: string };

export interface NotifierOptions {
  readonly name: string;
  readonly slack: readonly string[];
  readonly discord: readonly string[];
  readonly logger: Logger;
  /** POSTs a JSON payload; injectable so tests can point it at a loopback server. */
  readonly post?: (url: string, payload: unknown, signal: AbortSignal) => Promise<void>;
}

export const WEBHOOK_TIMEOUT_MS = 10_000;

async function postJson(url: string, payload: unknown, signal: AbortSignal): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    signal: AbortSignal.any([signal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`webhook answered HTTP ${response.status}`);
}

export function notifierLogic(options: NotifierOptions) {
  const post = options.post ?? postJson;
  return fromCallback<NotifierEvent>(({ receive }) => {
    const controller = new AbortController();
    receive((event) => {
      if (event.type !== 'notify.send') return;
      const message = scrubSecrets(event.message);
      options.logger[event.level]({ notice: true }, plainText(message));
      const text = channelText(options.name, message);
      const deliveries = [
        ...options.slack.map((url) => ({ channel: 'slack', url, payload: slackPayload(event.level, text) })),
        ...options.discord.map((url) => ({ channel: 'discord', url, payload: discordPayload(event.level, text) })),
      ];
      for (const delivery of deliveries) {
        post(delivery.url, delivery.payload, controller.signal).catch((error: unknown) => {
          if (controller.signal.aborted) return;
          options.logger.warn({ channel: delivery.channel, reason: scrubSecrets(String((error as Error).message ?? error)) }, 'notification delivery failed');
        });
      }
    });
    return () => controller.abort();
  });
}
