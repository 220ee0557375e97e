// Request/response over events (docs/DESIGN.md rule 5): the edge sends `{ ...event, reply }` to an actor
// addressed by systemId and awaits the answer, bounded by a timeout and the caller's AbortSignal. A message the
// actor's machine would not take in its current state is refused at once (MessageNotAcceptedError).

import type { EventObject } from 'xstate';
import { AbortedError, AskTimeoutError, MessageNotAcceptedError, UnknownMessageError } from '../src/errors.js';
import type { Clock } from '../src/clock.js';
import type { Inspector } from './inspector.js';
import type { ActorRegistry } from './registry.js';

import type { Reply } from '../src/reply.js';

export type { Reply };

export interface AskOptions {
  signal?: AbortSignal;
  /** Default DEFAULT_ASK_TIMEOUT_MS; Infinity: no timeout, for work the actor bounds itself (an upload's body deadlines). */
  timeoutMs?: number;
}

export const DEFAULT_ASK_TIMEOUT_MS = 10_000;

export type Ask = <T>(systemId: string, event: EventObject & Record<string, unknown>, options?: AskOptions) => Promise<T>;

/** `inspector` (optional) counts each actor's asks in flight for the operator view. */
export function createAsk(registry: ActorRegistry, clock: Clock, inspector?: Inspector): Ask {
  return function ask<T>(systemId: string, event: EventObject & Record<string, unknown>, options: AskOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_ASK_TIMEOUT_MS;
    const controller = new AbortController();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const answered = inspector?.askStarted(systemId);
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        answered?.();
        if (timer !== undefined) clock.clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const onAbort = () => {
        controller.abort(options.signal?.reason);
        settle(() => reject(new AbortedError()));
      };
      const timer =
        timeoutMs === Infinity
          ? undefined
          : clock.setTimeout(() => {
              const error = new AskTimeoutError(systemId, timeoutMs);
              controller.abort(error);
              settle(() => reject(error));
            }, timeoutMs);
      if (options.signal?.aborted) return onAbort();
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const reply: Reply<T> = {
        resolve: (value) => settle(() => resolve(value)),
        reject: (error) => settle(() => reject(error)),
        signal: controller.signal,
      };
      try {
        const actor = registry.require(systemId);
        const message = { ...event, reply };
        // A machine drops an event no transition of its current state takes, and the asker would wait for the
        // timeout: such a message is refused at once (a callback actor has no `can` and takes every message).
        const snapshot = actor.getSnapshot() as { can?: (event: EventObject) => boolean };
        if (typeof snapshot.can === 'function' && !snapshot.can(message)) throw new MessageNotAcceptedError(systemId, event.type);
        actor.send(message);
      } catch (error) {
        settle(() => reject(error as Error));
      }
    });
  };
}

/** What an actor answers to a message of its map: the type its `reply` resolves with. */
export type Answer<E> = E extends { reply: Reply<infer R> } ? R : never;

/** The messages of a map that are asked (carry a reply), each without the reply the ask adds. */
export type Question<E> = E extends { reply: Reply<unknown> } ? Omit<E, 'reply'> : never;

/**
 * A typed ask to one actor, from its message map (the union of the events it takes): the message's type picks the
 * answer's type, so a caller can neither send a message the actor does not take nor choose what the answer is.
 */
export type AskFor<E extends { type: string }> = <M extends Question<E> & { type: string }>(message: M, options?: AskOptions) => Promise<Answer<Extract<E, { type: M['type'] }>>>;

export function askFor<E extends { type: string }>(ask: Ask, systemId: string, defaults: AskOptions = {}): AskFor<E> {
  return (message, options) => ask(systemId, message as EventObject & Record<string, unknown>, { ...defaults, ...options });
}

/**
 * The end of a callback actor's message switch: a message it has no handler for is answered at once (an ask would
 * otherwise wait for its timeout); one without a reply is dropped.
 */
export function refuseUnknownMessage(message: unknown): void {
  const { type, reply } = (message ?? {}) as { type?: unknown; reply?: Reply<unknown> };
  reply?.reject?.(new UnknownMessageError(String(type)));
}
