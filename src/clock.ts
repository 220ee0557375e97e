// The clock every part of the runtime takes instead of the wall clock (DESIGN.md rule 2). Its timer half is exactly
// XState's `Clock`, so the same object is passed to `createActor(…, { clock })`; tests use XState's SimulatedClock,
// which also has `now()`. The system clock and the helpers over it are in actors/clock.ts.

export interface Clock {
  now(): number;
  setTimeout(fn: (...args: unknown[]) => void, timeoutMs: number): unknown;
  clearTimeout(id: unknown): void;
}
