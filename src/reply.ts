// How an actor answers a request sent with `ask()` (actors/ask.ts). Lives in src/ because machines
// declare events that carry it, and machines may import only xstate and src/ (docs/DESIGN.md, layout).

export interface Reply<T> {
  resolve(value: T): void;
  reject(error: Error): void;
  /** Aborts when the asker gave up (timeout, client disconnect); long work should honour it. */
  readonly signal: AbortSignal;
}
