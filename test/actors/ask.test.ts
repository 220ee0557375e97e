import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createMachine, fromCallback, createActor, SimulatedClock } from 'xstate';
import { askFor, createAsk, refuseUnknownMessage, type Reply } from '../../actors/ask.js';
import { ActorRegistry } from '../../actors/registry.js';
import { AbortedError, ActorUnavailableError, AskTimeoutError, MessageNotAcceptedError, UnknownMessageError } from '../../src/errors.js';

type Echo = { type: 'echo'; text: string; reply: Reply<string> } | { type: 'ignore'; reply: Reply<string> };

function echoActor() {
  return createActor(
    fromCallback<Echo>(({ receive }) => {
      receive((event) => {
        if (event.type === 'echo') event.reply.resolve(event.text.toUpperCase());
      });
    }),
  ).start();
}

test('ask resolves with the actor reply, looked up by systemId at send time', async () => {
  const registry = new ActorRegistry();
  const ask = createAsk(registry, new SimulatedClock());
  registry.register('t.echo', echoActor());
  assert.equal(await ask<string>('t.echo', { type: 'echo', text: 'hi' }), 'HI');
  // A new incarnation under the same id is what the next ask reaches.
  const second = echoActor();
  registry.register('t.echo', second);
  assert.equal(await ask<string>('t.echo', { type: 'echo', text: 'again' }), 'AGAIN');
});

test('ask rejects with ActorUnavailableError for an unknown or stopped actor', async () => {
  const registry = new ActorRegistry();
  const ask = createAsk(registry, new SimulatedClock());
  await assert.rejects(ask('t.none', { type: 'echo' }), ActorUnavailableError);
  const actor = echoActor();
  registry.register('t.stopped', actor);
  actor.stop();
  await assert.rejects(ask('t.stopped', { type: 'echo', text: 'x' }), ActorUnavailableError);
});

test('ask times out on the injected clock and aborts the reply signal', async () => {
  const registry = new ActorRegistry();
  const clock = new SimulatedClock();
  const ask = createAsk(registry, clock);
  let replySignal: AbortSignal | undefined;
  registry.register(
    't.slow',
    createActor(
      fromCallback<Echo>(({ receive }) => {
        receive((event) => (replySignal = event.reply.signal));
      }),
    ).start(),
  );
  const pending = ask('t.slow', { type: 'ignore' }, { timeoutMs: 1_000 });
  clock.increment(999);
  assert.equal(replySignal?.aborted, false);
  clock.increment(1);
  await assert.rejects(pending, (error: unknown) => error instanceof AskTimeoutError && error.timeoutMs === 1_000);
  assert.equal(replySignal?.aborted, true);
});

test('ask honours the caller AbortSignal', async () => {
  const registry = new ActorRegistry();
  const ask = createAsk(registry, new SimulatedClock());
  registry.register('t.slow', createActor(fromCallback(() => {})).start());
  const controller = new AbortController();
  const pending = ask('t.slow', { type: 'ignore' }, { signal: controller.signal });
  controller.abort();
  await assert.rejects(pending, AbortedError);
  await assert.rejects(ask('t.slow', { type: 'ignore' }, { signal: controller.signal }), AbortedError);
});

test('a message the machine would drop in its state is refused at once, not after the timeout', async () => {
  const registry = new ActorRegistry();
  const clock = new SimulatedClock();
  const ask = createAsk(registry, clock);
  // Answers `status` only while open; `open` is not a message it takes once open.
  const door = createActor(
    createMachine({
      types: {} as { events: { type: 'status'; reply: Reply<string> } | { type: 'open'; reply: Reply<string> } },
      initial: 'closed',
      states: {
        closed: { on: { open: { target: 'open', actions: ({ event }) => event.reply.resolve('opened') } } },
        open: { on: { status: { actions: ({ event }) => event.reply.resolve('open') } } },
      },
    }),
  ).start();
  registry.register('t.door', door);
  await assert.rejects(ask('t.door', { type: 'status' }), (error: Error) => error instanceof MessageNotAcceptedError && /t\.door does not accept 'status'/.test(error.message));
  await assert.rejects(ask('t.door', { type: 'mistyped' }), MessageNotAcceptedError);
  assert.equal(await ask<string>('t.door', { type: 'open' }), 'opened');
  assert.equal(await ask<string>('t.door', { type: 'status' }), 'open');
  await assert.rejects(ask('t.door', { type: 'open' }), MessageNotAcceptedError);
  // A callback actor takes every message: only the timeout bounds an ask it ignores.
  registry.register('t.echo', echoActor());
  const ignored = ask('t.echo', { type: 'ignore' }, { timeoutMs: 50 });
  clock.increment(50);
  await assert.rejects(ignored, AskTimeoutError);
});

test('a callback actor ending its switch with refuseUnknownMessage answers an unknown message at once; askFor types asks by the message map', async () => {
  const registry = new ActorRegistry();
  const clock = new SimulatedClock();
  const ask = createAsk(registry, clock);
  type Counter = { type: 'count.get'; reply: Reply<number> } | { type: 'count.add'; by: number; reply: Reply<number> } | { type: 'count.reset' };
  let total = 0;
  registry.register(
    't.counter',
    createActor(
      fromCallback<Counter>(({ receive }) => {
        receive((event) => {
          switch (event.type) {
            case 'count.get':
              return event.reply.resolve(total);
            case 'count.add':
              return event.reply.resolve((total += event.by));
            case 'count.reset':
              total = 0;
              return;
            default:
              return refuseUnknownMessage(event);
          }
        });
      }),
    ).start(),
  );
  // No clock step: the refusal comes at once, not at the timeout.
  await assert.rejects(ask('t.counter', { type: 'count.mistyped' }), (error: Error) => error instanceof UnknownMessageError && error.message === "no handler for the message 'count.mistyped'");
  const counter = askFor<Counter>(ask, 't.counter');
  const added: number = await counter({ type: 'count.add', by: 3 });
  assert.equal(added, 3);
  assert.equal(await counter({ type: 'count.get' }), 3);
  // @ts-expect-error a message the map does not have is a compile error
  await assert.rejects(counter({ type: 'count.mistyped' }), UnknownMessageError);
  // @ts-expect-error so is a message without its fields
  await counter({ type: 'count.add' }).catch(() => undefined);
  // A message without a reply is dropped, never answered.
  refuseUnknownMessage({ type: 'count.noise' });
});
