// `rates.notifier`: every notice is logged, then sent to each configured Slack and Discord webhook and, as an
// encrypted ADAMANT chat message, to each configured ADAMANT address (docs/notes/rates.md E.3, F.1). Delivery failures
// are only logged; nothing a channel does can stall a cycle. Secrets never reach a message: texts are scrubbed once
// more here, the last stop before leaving.
//
// The ADAMANT channel reuses the console's client (chat-send.ts: look up the recipient's key, encrypt, sign a
// type-8 transaction, post it; ordered-node-client.ts: the node pool with the rpc-session machine's failover).
// docs/DESIGN.md's dependency rule is per layer (actors/ may import actors/), and chat-send.ts is written to be shared
// this way.

import { fromCallback } from 'xstate';
import { scrubSecrets } from '../../src/logger.js';
import { keyPairFromPassphrase } from '../../src/console/crypto.js';
import type { NoticeLevel } from '../../src/rates/cycle.js';
import type { LineLogger } from '../../src/rates/log-level.js';
import { adamantText, channelText, discordPayload, plainText, slackPayload } from '../../src/rates/notify.js';
import { sendChatMessage } from '../../src/console/chat-send.js';
import { deadline, type Clock } from '../../src/clock.js';
import { DEFAULT_NODE_TIMEOUT_MS, nodeClient } from '../console/ordered-node-client.js';
import { refuseUnknownMessage } from '../ask.js';

export type NotifierEvent = { type: 'notify.send'; level: NoticeLevel; message: string };

/** The ADAMANT channel: the sending account and where its messages go. */
export interface AdamantChannelOptions {
  /** Recipient addresses (`U…`); each notice is one message to each. */
  readonly addresses: readonly string[];
  /** The sending account. A secret: only its key pair is used, derived once when the actor starts. */
  readonly passphrase: string;
  /** Node base URLs, tried in order; a node that fails a request moves to the back for the next ones. */
  readonly nodes: readonly string[];
  /** Wall clock (ms) for the transaction timestamp: the runtime's clock. */
  readonly now: () => number;
  /** Per node request; defaults to the console's 10 s. */
  readonly timeoutMs?: number;
}

export interface NotifierOptions {
  readonly name: string;
  readonly slack: readonly string[];
  readonly discord: readonly string[];
  /** Absent, or without addresses: the ADAMANT channel is off. */
  readonly adamant?: AdamantChannelOptions;
  /** Notices are logged at their own level (error, warn, info); the tree passes a logger ranked by `log_level`. */
  readonly logger: LineLogger;
  /** POSTs a JSON payload and honours `signal`; injectable so tests can point it at a loopback server. */
  readonly post?: (url: string, payload: unknown, signal: AbortSignal) => Promise<void>;
  /** The runtime's clock: each webhook delivery's WEBHOOK_TIMEOUT_MS runs on it (docs/DESIGN.md rule 2). */
  readonly clock: Clock;
}

/** One webhook delivery, whoever posts it: a channel that does not answer is given up (and logged) after this. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

async function postJson(url: string, payload: unknown, signal: AbortSignal): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
    signal,
  });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`webhook answered HTTP ${response.status}`);
}

/** Sends `text` to one address; rejects with the reason the message did not go out. */
type AdamantSend = (address: string, text: string, signal: AbortSignal) => Promise<string>;

/** Built at actor start: the key pair is derived here, once, and never leaves the closure (nor any log line). */
function adamantSender(options: AdamantChannelOptions): AdamantSend {
  const keys = keyPairFromPassphrase(options.passphrase);
  let order = [...options.nodes];
  const node = nodeClient({
    order: () => order,
    // No health machine here (a few messages per cycle do not warrant polling public nodes): a node that failed
    // moves to the back, so the next notice does not wait on it first.
    onNodeFailure: (url) => (order = [...order.filter((entry) => entry !== url), url]),
    timeoutMs: options.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS,
  });
  return async (address, text, signal) => sendChatMessage(node, keys, { recipientId: address, text, chatType: 1, amount: 0 }, options.now(), signal);
}

export function notifierLogic(options: NotifierOptions) {
  const post = options.post ?? postJson;
  const adamant = options.adamant && options.adamant.addresses.length > 0 ? options.adamant : undefined;
  const passphrase = adamant?.passphrase;
  /** Reasons come from nodes and the network; the passphrase is masked in case anything ever echoed it. */
  const scrubReason = (error: unknown): string => {
    const reason = scrubSecrets(String((error as Error)?.message ?? error));
    return passphrase ? reason.split(passphrase).join('***') : reason;
  };
  return fromCallback<NotifierEvent>(({ receive }) => {
    const controller = new AbortController();
    /** A webhook POST bounded by WEBHOOK_TIMEOUT_MS and by the actor's lifetime. */
    const deliver = async (url: string, payload: unknown): Promise<void> => {
      const bound = deadline(options.clock, WEBHOOK_TIMEOUT_MS, controller.signal);
      try {
        await post(url, payload, bound.signal);
      } finally {
        bound.clear();
      }
    };
    const sendAdamant = adamant ? adamantSender(adamant) : undefined;
    const failed = (channel: string, extra: Record<string, unknown> = {}) => (error: unknown) => {
      if (controller.signal.aborted) return;
      options.logger.warn({ channel, ...extra, reason: scrubReason(error) }, 'notification delivery failed');
    };
    receive((event) => {
      if (event.type !== 'notify.send') return refuseUnknownMessage(event);
      const message = scrubSecrets(event.message);
      options.logger[event.level]({ notice: true }, plainText(message));
      const text = channelText(options.name, message);
      const deliveries = [
        ...options.slack.map((url) => ({ channel: 'slack', url, payload: slackPayload(event.level, text) })),
        ...options.discord.map((url) => ({ channel: 'discord', url, payload: discordPayload(event.level, text) })),
      ];
      for (const delivery of deliveries) {
        deliver(delivery.url, delivery.payload).catch(failed(delivery.channel));
      }
      if (sendAdamant && adamant) {
        const chat = adamantText(event.level, text);
        for (const address of adamant.addresses) {
          // Every send is independent and unawaited (the original: Promise.all per notice, failures only logged).
          sendAdamant(address, chat, controller.signal).then(
            (transactionId) => options.logger.debug({ channel: 'adamant', recipient: address, transactionId }, 'notification delivered'),
            failed('adamant', { recipient: address }),
          );
        }
      }
    });
    return () => controller.abort();
  });
}
