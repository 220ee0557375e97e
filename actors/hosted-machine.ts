// A machine run by an actor that hosts it (docs/DESIGN.md rule 2: one injected clock): the files GC runs one GC-run
// machine per collection, health and repair keep theirs for their lifetime, each inside the callback actor that owns
// the I/O and answers the asks. Written once here so every hosted machine gets the runtime's clock (its delays then
// follow a SimulatedClock in tests) and reports to the operator view under its host's systemId.

import { createActor, type Actor, type AnyStateMachine, type InputFrom, type InspectionEvent } from 'xstate';
import type { Clock } from '../src/clock.js';

/** An inspector observer for the actor whose session id it is given (actors/inspector.ts `observer`). */
export type HostedInspect = (rootSessionId: () => string | undefined) => (event: InspectionEvent) => void;

/** Creates (does not start) `machine`'s actor on `clock`, inspected by `inspect` when given. */
export function hostedActor<TMachine extends AnyStateMachine>(machine: TMachine, options: { readonly clock: Clock; readonly input: InputFrom<TMachine>; readonly inspect?: HostedInspect }): Actor<TMachine> {
  let sessionId: string | undefined;
  const actor = createActor(machine, {
    clock: options.clock,
    input: options.input,
    ...(options.inspect ? { inspect: options.inspect(() => sessionId) } : {}),
  } as Parameters<typeof createActor<TMachine>>[1]);
  sessionId = actor.sessionId;
  return actor;
}
