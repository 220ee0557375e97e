// systemId → the live actor (docs/DESIGN.md rule 5). Supervisors re-register a restarted child under the
// same systemId, so callers that resolve the id at send time always reach the current incarnation.

import type { AnyActorRef, EventObject } from 'xstate';
import { ActorUnavailableError } from '../src/errors.js';

export class ActorRegistry {
  readonly #refs = new Map<string, AnyActorRef>();

  register(systemId: string, ref: AnyActorRef): void {
    this.#refs.set(systemId, ref);
  }

  /** Removes the entry only if it still points at `ref` (a newer incarnation may have replaced it). */
  unregister(systemId: string, ref: AnyActorRef): void {
    if (this.#refs.get(systemId) === ref) this.#refs.delete(systemId);
  }

  lookup(systemId: string): AnyActorRef | undefined {
    return this.#refs.get(systemId);
  }

  require(systemId: string): AnyActorRef {
    const ref = this.#refs.get(systemId);
    if (!ref || ref.getSnapshot().status !== 'active') throw new ActorUnavailableError(systemId);
    return ref;
  }

  /** Fire-and-forget delivery; returns false when the actor is not running (the event is dropped). */
  send(systemId: string, event: EventObject & Record<string, unknown>): boolean {
    const ref = this.#refs.get(systemId);
    if (!ref || ref.getSnapshot().status !== 'active') return false;
    ref.send(event);
    return true;
  }

}
