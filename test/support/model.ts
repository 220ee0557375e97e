// Model-based tests for machines (docs/DESIGN.md "Testing": paths from `xstate/graph` replayed on a real actor with a
// SimulatedClock). `modelTest(spec)` registers, for one machine:
//   - one test per path, replayed step by step on a REAL actor. The paths come from @xstate/graph over the machine
//     itself with the spec's event samples: the shortest path to every state of the graph, simple paths too when the
//     graph is small, and then, for every edge of the graph that takes a transition no path took yet (a guarded
//     alternative, a self-loop that shortest and simple paths never contain), the shortest path to it plus that edge;
//   - a last test that reports the coverage (states and transitions the real actors took) and asserts 100%.
// Graph states are the state value plus the context (or the spec's `abstract` of it, for counters that grow on every
// loop: the graph must be finite); a final state is one vertex. Samples may depend on the snapshot, to prune the graph.
//
// How a path step is replayed on the real actor (the graph's steps use XState's internal event types):
//   xstate.done.actor.<id> / xstate.error.actor.<id>: every actor the machine declares is replaced by a controllable
//     fake promise; the fake of that invoke id is resolved with the step's output / rejected with its error, and the
//     machine receives the done/error event the way it does in production, from its child;
//   xstate.after.<delay>.<stateId>: the SimulatedClock is advanced by the delay the machine's own delay
//     implementation gives, in two moves (delay − 1 ms: nothing may happen; then 1 ms);
//   anything else: `actor.send(event)`.
// After every step it asserts, against the graph's expected state and against the model (XState's pure transition of
// the same event from the expected state before, see `modelStep`): state value, status, context, output; the exact
// transitions taken (guarded alternatives by their guard, eventless ones included); the machine's named non-assign
// actions the real actor executed, with their params (each is a spy); the invoked children and their inputs; that
// every child left behind had its AbortSignal aborted (docs/DESIGN.md rule 6). Then the spec's `effect` hook checks the
// domain-specific effect of the step. Coverage is read from the real actor's `@xstate.microstep` inspection events.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { getAdjacencyMap, getShortestPaths, getSimplePaths, type StatePath } from '@xstate/graph';
import { createActor, createEmptyActor, fromPromise, SimulatedClock, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine, type AnyStateNode, type EventObject, type InspectionEvent, type StateValue } from 'xstate';

/** Events and snapshots are read by the specs' hooks with their machine's own field names. */
export type ModelEvent = EventObject & Record<string, any>;
type Samples<T> = readonly T[] | ((snapshot: AnyMachineSnapshot) => readonly T[]);

export interface ModelScenario {
  readonly name: string;
  /** The machine's input for this scenario (each scenario gets its own graph). */
  readonly input?: unknown;
  /** Start from this state instead of the initial one (a restored snapshot, as `machine.resolveState` makes it). */
  readonly from?: { readonly value: StateValue; readonly context: unknown };
}

export interface ModelSpec {
  readonly machine: AnyStateMachine;
  readonly scenarios: readonly ModelScenario[];
  /** Samples of the external events per type; payloads that drive guards need one sample per branch. Default `{ type }`. */
  readonly events?: Readonly<Record<string, Samples<ModelEvent>>>;
  /** What each fake invoked actor may resolve with, per actor name (`src`); one done event per sample. */
  readonly outputs?: Readonly<Record<string, Samples<unknown>>>;
  /** What each fake invoked actor may reject with, per actor name; default one `Error('<src> failed')`. */
  readonly errors?: Readonly<Record<string, Samples<unknown>>>;
  /** The part of the context that tells graph states apart (default: all of it); must keep the graph finite. */
  readonly abstract?: (snapshot: AnyMachineSnapshot) => unknown;
  /** Simple paths too when the graph has at most `maxStates` states; at most `maxPaths` of them. */
  readonly simplePaths?: { readonly maxStates: number; readonly maxPaths: number };
  /** The SimulatedClock's start time. */
  readonly startAt?: number;
  /** A short name for an event sample in test names (default: `#n` among the samples of its type). */
  readonly describe?: (event: ModelEvent) => string | undefined;
  /** Domain-specific assertions on one replayed step (the generic ones already passed). */
  readonly effect?: (step: ReplayStep) => void;
}

export interface ActionCall { readonly type: string; readonly params: any }
export interface FakeActor {
  readonly id: string;
  readonly src: string;
  readonly input: any;
  readonly signal: AbortSignal;
  readonly self: AnyActorRef;
  settled: boolean;
  resolve(output: unknown): void;
  reject(error: unknown): void;
}

export interface ReplayStep {
  readonly scenario: string;
  /** 0 is the start of the actor (event `xstate.init`). */
  readonly index: number;
  readonly event: ModelEvent;
  readonly before: AnyMachineSnapshot | undefined;
  readonly after: AnyMachineSnapshot;
  /** Named non-assign actions the real actor executed in this step, in order. */
  readonly actions: readonly ActionCall[];
  /** Fake actors the real actor invoked in this step. */
  readonly invoked: readonly FakeActor[];
  /** Every fake actor the real actor invoked so far, oldest first. */
  readonly fakes: readonly FakeActor[];
  /** Keys (see `transitionKey`) of the transitions the real actor took, in order. */
  readonly transitions: readonly string[];
  /** The SimulatedClock after the step, and how far the step advanced it (a delayed transition's delay). */
  readonly now: number;
  readonly elapsed: number;
}

/** Every state node id of the machine (the root excluded: it is always active). */
export function stateIds(machine: AnyStateMachine): string[] {
  const walk = (node: AnyStateNode): string[] => Object.values(node.states as Record<string, AnyStateNode>).flatMap((child) => [child.id, ...walk(child)]);
  return walk(machine.root);
}

type Transition = { source: AnyStateNode; eventType: string; guard?: unknown; target?: readonly AnyStateNode[] };

function guardLabel(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') {
    const inner = (guard as { guards?: unknown[] }).guards; // and() / or() / not() keep their operands here
    return Array.isArray(inner) ? `${guard.name}(${inner.map(guardLabel).join(', ')})` : guard.name || 'inline';
  }
  return String((guard as { type?: unknown }).type ?? 'guard');
}

/** `<sourceStateId> --<eventType>[guard]--> <targetIds>`; `always` when eventless; `#n` when two would collide. */
export function transitionKey(t: Transition): string {
  const list: readonly Transition[] = t.eventType === '' ? (t.source.always ?? []) : (t.source.transitions.get(t.eventType) ?? []);
  const label = (x: Transition) => `${x.source.id} --${x.eventType === '' ? 'always' : x.eventType}${x.guard === undefined ? '' : `[${guardLabel(x.guard)}]`}--> ${x.target?.map((n) => n.id).join(',') ?? '(stays)'}`;
  const twins = list.filter((x) => label(x) === label(t));
  return twins.length > 1 ? `${label(t)} #${twins.indexOf(t)}` : label(t);
}

/** Every transition of the machine: `on`, `after`, invoke done/error and `always`, guarded alternatives apart. */
export function transitionKeys(machine: AnyStateMachine): string[] {
  const nodes = [machine.root, ...stateIds(machine).map((id) => machine.getStateNodeById(id))];
  return nodes.flatMap((node) => [...[...node.transitions.values()].flat(), ...(node.always ?? [])].map((t) => transitionKey(t as Transition)));
}

interface ModelResult {
  readonly snapshot: AnyMachineSnapshot;
  readonly actions: ReadonlyArray<{ type: string; params: unknown }>;
  readonly transitions: readonly string[];
}

/**
 * The model's step: XState's own pure transition (what `transition()` / `initialTransition()` do), with an inert actor
 * scope whose system is inspected, so the transition definitions of every microstep are known, not guessed.
 */
export function modelStep(machine: AnyStateMachine, from: AnyMachineSnapshot | { input: unknown }, event?: EventObject): ModelResult {
  const self = createEmptyActor();
  const actions: Array<{ type: string; params: unknown }> = [];
  const transitions: string[] = [];
  self.system.inspect((ev: InspectionEvent) => {
    if (ev.type === '@xstate.microstep') transitions.push(...(ev as unknown as { _transitions: Transition[] })._transitions.map(transitionKey));
  });
  const scope = { self, system: self.system, id: '', sessionId: '', logger: () => {}, defer: () => {}, stopChild: () => {}, emit: () => {}, actionExecutor: (a: { type: string; params: unknown }) => void actions.push(a) };
  const snapshot = 'machine' in from ? machine.transition(from, event!, scope as never) : machine.getInitialSnapshot(scope as never, from.input);
  return { snapshot: snapshot as AnyMachineSnapshot, actions, transitions };
}

const serializeEvent = (event: EventObject) =>
  JSON.stringify(event, (_, value) => (value instanceof Error ? `${value.name}: ${value.message}` : typeof value === 'function' ? `fn ${value.name}` : value));
const samples = <T>(s: Samples<T> | undefined, snapshot: AnyMachineSnapshot, fallback: readonly T[]) => (s === undefined ? fallback : typeof s === 'function' ? s(snapshot) : s);
const invokeSrc = (snapshot: AnyMachineSnapshot, id: string) => String(snapshot._nodes.flatMap((n) => n.invoke).find((i) => i.id === id)?.src ?? id);
const flush = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** The events the graph tries in `snapshot`: every event type a transition of an active state listens to. */
function eventsFor(spec: ModelSpec, snapshot: AnyMachineSnapshot): ModelEvent[] {
  if (snapshot.status !== 'active') return [];
  // `xstate.done.state.*` is raised by the machine itself (covered through the microsteps), never sent.
  const types = new Set(snapshot._nodes.flatMap((node) => [...node.transitions.keys()]).filter((t) => t !== '*' && !t.startsWith('xstate.done.state.')));
  return [...types].flatMap((type): ModelEvent[] => {
    const [, kind, id] = /^xstate\.(done|error)\.actor\.(.*)$/.exec(type) ?? [];
    if (kind === 'done') return samples(spec.outputs?.[invokeSrc(snapshot, id!)], snapshot, [undefined]).map((output) => ({ type, output }));
    if (kind === 'error') return samples(spec.errors?.[invokeSrc(snapshot, id!)], snapshot, [new Error(`${invokeSrc(snapshot, id!)} failed`)]).map((error) => ({ type, error }));
    return [...samples(spec.events?.[type], snapshot, [{ type }])];
  });
}

type Path = StatePath<AnyMachineSnapshot, ModelEvent>;

/** The paths to replay for one scenario (see the top of this file), without any that is a prefix of another. */
export function modelPaths(spec: ModelSpec, scenario: ModelScenario): Path[] {
  // A final state is one vertex whatever the context it ends with: paths lead to it, never through it.
  const serializeState = (s: AnyMachineSnapshot) =>
    JSON.stringify({ value: s.value, status: s.status, context: s.status !== 'active' ? null : spec.abstract ? spec.abstract(s) : s.context });
  // Each (snapshot, event) is computed once by `modelStep`, for the graph's traversals and for the edge coverage.
  const memo = new WeakMap<AnyMachineSnapshot, Map<string, ModelResult>>();
  const step = (state: AnyMachineSnapshot, event: ModelEvent): ModelResult => {
    const byEvent = memo.get(state) ?? new Map<string, ModelResult>();
    memo.set(state, byEvent);
    const key = serializeEvent(event);
    if (!byEvent.has(key)) byEvent.set(key, modelStep(spec.machine, state, event));
    return byEvent.get(key)!;
  };
  const logic = Object.create(spec.machine, { transition: { value: (state: AnyMachineSnapshot, event: ModelEvent) => step(state, event).snapshot } }) as AnyStateMachine;
  const initial: ModelResult = scenario.from
    ? { snapshot: spec.machine.resolveState(scenario.from as never) as AnyMachineSnapshot, actions: [], transitions: [] }
    : modelStep(spec.machine, { input: scenario.input });
  const options = {
    fromState: initial.snapshot,
    events: (snapshot: AnyMachineSnapshot) => eventsFor(spec, snapshot),
    serializeEvent: serializeEvent as never,
    serializeState,
  };
  const shortest = getShortestPaths(logic, options) as Path[];
  const adjacency = getAdjacencyMap(logic, options);
  const paths = [...shortest];
  if (spec.simplePaths && Object.keys(adjacency).length <= spec.simplePaths.maxStates) paths.push(...(getSimplePaths(logic, options) as Path[]).slice(0, spec.simplePaths.maxPaths));
  // The transitions the paths take so far, by the model; then one more path per edge that takes a new one.
  const covered = new Set<string>(initial.transitions);
  for (const path of paths) path.steps.slice(1).forEach((s, i) => step(path.steps[i]!.state, s.event).transitions.forEach((k) => covered.add(k)));
  const to = new Map(shortest.map((p) => [serializeState(p.state), p]));
  for (const [vertex, { state, transitions }] of Object.entries(adjacency)) {
    for (const { event, state: next } of Object.values(transitions as Record<string, { event: ModelEvent; state: unknown }>)) {
      const taken = step(state as AnyMachineSnapshot, event).transitions;
      const head = to.get(vertex);
      if (!head || taken.every((k) => covered.has(k))) continue;
      taken.forEach((k) => covered.add(k));
      paths.push({ state: next as AnyMachineSnapshot, weight: head.weight + 1, steps: [...head.steps, { state: next as AnyMachineSnapshot, event: event as ModelEvent }] });
    }
  }
  const sequences = paths.map((p) => p.steps.slice(1).map((s) => serializeEvent(s.event)));
  const isPrefix = (a: string[], b: string[]) => a.length < b.length && a.every((e, i) => e === b[i]);
  const seen = new Set<string>();
  return paths.filter((_, i) => {
    const key = sequences[i]!.join('|');
    if (seen.has(key)) return false;
    seen.add(key);
    return !sequences.some((other) => isPrefix(sequences[i]!, other));
  });
}

/** A SimulatedClock that also knows when its pending timers are due. */
class ModelClock extends SimulatedClock {
  readonly due = new Map<number, number>();
  override setTimeout(fn: (...args: unknown[]) => void, timeout: number): number {
    const id: number = super.setTimeout((...args: unknown[]) => (this.due.delete(id), fn(...args)), timeout);
    this.due.set(id, this.now() + timeout);
    return id;
  }
  override clearTimeout(id: number): void {
    this.due.delete(id);
    super.clearTimeout(id);
  }
}

/** A readable step name: `done(<actor>)`, `error(<actor>)`, `after(<delay>)` or the event type, then which sample. */
function label(spec: ModelSpec, event: ModelEvent, from: AnyMachineSnapshot | undefined): string {
  const [, kind, , rest] = /^xstate\.(done|error|after)\.(actor\.)?(.*)$/.exec(event.type) ?? [];
  const name = !kind ? event.type : `${kind}(${kind === 'after' ? rest!.split('.')[0] : from ? invokeSrc(from, rest!) : rest})`;
  const named = spec.describe?.(event);
  if (named !== undefined) return `${name}[${named}]`;
  const twins = from ? eventsFor(spec, from).filter((e) => e.type === event.type).map(serializeEvent) : [];
  return twins.length > 1 ? `${name}#${twins.indexOf(serializeEvent(event)) + 1}` : name;
}

/** Replays one path on a real actor (see the top of this file); adds what it took to `coverage`. */
async function replay(spec: ModelSpec, scenario: ModelScenario, path: Path, coverage: { states: Set<string>; transitions: Set<string> }) {
  const calls: ActionCall[] = [];
  const fakes: FakeActor[] = [];
  let taken: string[] = [];
  const actions = Object.fromEntries(
    Object.entries(spec.machine.implementations.actions)
      .filter(([, impl]) => typeof impl === 'function' && !('resolve' in impl)) // assign() and other built-ins stay real
      .map(([type]) => [type, (_: unknown, params: unknown) => void calls.push({ type, params })]),
  );
  const actors = Object.fromEntries(
    Object.keys(spec.machine.implementations.actors).map((src) => [
      src,
      fromPromise<unknown, unknown>(({ input, self, signal }) => new Promise((resolve, reject) => {
        const fake: FakeActor = { id: self.id, src, input, signal, self, settled: false, resolve: (v) => ((fake.settled = true), resolve(v)), reject: (e) => ((fake.settled = true), reject(e)) };
        fakes.push(fake);
      })),
    ]),
  );
  const machine = spec.machine.provide({ actions, actors } as never);
  const clock = new ModelClock();
  clock.set(spec.startAt ?? 0);
  const actor = createActor(machine, {
    clock,
    input: scenario.input,
    ...(scenario.from ? { snapshot: machine.resolveState(scenario.from as never) } : {}),
    inspect: (ev) => {
      if (ev.type !== '@xstate.microstep' || ev.actorRef.sessionId !== ev.rootId) return; // the machine's own steps
      const mstep = ev as unknown as { snapshot: AnyMachineSnapshot; _transitions: Transition[] };
      for (const t of mstep._transitions) {
        taken.push(transitionKey(t));
        for (let n: AnyStateNode | undefined = t.source; n?.parent; n = n.parent) coverage.states.add(n.id);
      }
      for (const n of mstep.snapshot._nodes) if (n.parent) coverage.states.add(n.id);
    },
  });
  // A step that leaves the actor in status 'error' (an invoke error no transition handles: a crash) is compared with the
  // model like any other; observed here so XState does not also rethrow it as an unhandled error.
  actor.subscribe({ error: () => undefined });
  let model: ModelResult = scenario.from ? { snapshot: path.steps[0]!.state, actions: [], transitions: [] } : modelStep(spec.machine, { input: scenario.input });
  let before: AnyMachineSnapshot | undefined;
  for (const [index, { event, state: expected }] of path.steps.entries()) {
    const at = `${scenario.name}, step ${index} (${label(spec, event, before)})`;
    calls.length = 0;
    const known = fakes.length;
    const then = clock.now();
    if (index === 0) {
      actor.start();
      for (const n of (actor.getSnapshot() as AnyMachineSnapshot)._nodes) if (n.parent) coverage.states.add(n.id);
    } else {
      model = modelStep(spec.machine, model.snapshot, event);
      taken = [];
      const [, kind, id] = /^xstate\.(done|error)\.actor\.(.*)$/.exec(event.type) ?? [];
      if (kind) {
        const fake = [...fakes].reverse().find((f) => f.id === id);
        assert.ok(fake && !fake.settled, `${at}: the actor has a running invoked actor '${id}'`);
        if (kind === 'done') fake.resolve(event.output);
        else fake.reject(event.error);
      } else if (event.type.startsWith('xstate.after.')) {
        const ref = event.type.slice('xstate.after.'.length).split('.')[0]!;
        const impl = (spec.machine.implementations.delays as Record<string, unknown>)[ref] ?? Number(ref);
        const ms = typeof impl === 'function' ? impl({ context: before!.context, event }, undefined) : (impl as number);
        assert.ok([...clock.due.values()].includes(clock.now() + ms), `${at}: a timer is due in ${ms} ms`);
        if (ms > 0) {
          clock.increment(ms - 1);
          assert.deepEqual(actor.getSnapshot().value, before!.value, `${at}: nothing fires before ${ms} ms`);
        }
        clock.increment(ms > 0 ? 1 : 0);
      } else {
        actor.send(event);
      }
    }
    await flush();
    const after = actor.getSnapshot() as AnyMachineSnapshot;
    const expect = model.snapshot;
    assert.deepEqual(after.value, expected.value, `${at}: state value (graph)`);
    assert.deepEqual(after.value, expect.value, `${at}: state value (model)`);
    assert.equal(after.status, expect.status, `${at}: status`);
    assert.deepEqual(after.context, expect.context, `${at}: context`);
    assert.deepEqual(after.output, expect.output, `${at}: output`);
    if (index > 0 || !scenario.from) assert.deepEqual(taken, model.transitions, `${at}: transitions taken`);
    const named = model.actions.filter((a) => a.type in actions).map((a) => ({ type: a.type, params: a.params }));
    assert.deepEqual(calls, named, `${at}: named actions and their params`);
    assert.deepEqual(Object.keys(after.children).sort(), Object.keys(expect.children).sort(), `${at}: invoked actors`);
    const invoked = fakes.slice(known);
    for (const fake of invoked) assert.deepEqual(fake.input, expect.children[fake.id]?.getSnapshot().input, `${at}: input of '${fake.src}'`);
    for (const fake of fakes) {
      if (!fake.settled && after.children[fake.id] !== fake.self) assert.ok(fake.signal.aborted, `${at}: '${fake.src}' left behind is aborted`);
    }
    for (const key of taken) coverage.transitions.add(key);
    spec.effect?.({ scenario: scenario.name, index, event, before, after, actions: [...calls], invoked, fakes: [...fakes], transitions: [...taken], now: clock.now(), elapsed: clock.now() - then });
    before = after;
  }
  actor.stop();
}

/** Registers the model tests of `spec.machine` (see the top of this file). */
export function modelTest(spec: ModelSpec): void {
  const machine = spec.machine;
  const coverage = { states: new Set<string>(), transitions: new Set<string>() };
  describe(`${machine.id} (model)`, () => {
    for (const scenario of spec.scenarios) {
      for (const path of modelPaths(spec, scenario)) {
        const name = path.steps.slice(1).map((s, i) => label(spec, s.event, path.steps[i]!.state)).join(' → ') || '(start)';
        it(`${scenario.name}: ${name}`, () => replay(spec, scenario, path, coverage));
      }
    }
    it('covers every state and every transition', (t) => {
      const states = stateIds(machine);
      const transitions = transitionKeys(machine);
      const missing = { states: states.filter((s) => !coverage.states.has(s)), transitions: transitions.filter((k) => !coverage.transitions.has(k)) };
      const report = [
        `coverage ${machine.id}: states ${states.length - missing.states.length}/${states.length}, transitions ${transitions.length - missing.transitions.length}/${transitions.length}`,
        ...states.map((s) => `  ${coverage.states.has(s) ? 'covered  ' : 'UNCOVERED'} state ${s}`),
        ...transitions.map((k) => `  ${coverage.transitions.has(k) ? 'covered  ' : 'UNCOVERED'} transition ${k}`),
      ];
      for (const line of report) t.diagnostic(line);
      assert.deepEqual([...coverage.transitions].filter((k) => !transitions.includes(k)), [], 'every transition taken is one of the definition');
      assert.deepEqual(missing, { states: [], transitions: [] }, report.join('\n'));
    });
  });
}
