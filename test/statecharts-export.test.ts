// The exported definition (GET /machines/{id}.json, docs/statecharts/<id>.json) is a config XState's createMachine
// accepts (issue 31): for every machine, the export given to createMachine with stub implementations of every action,
// guard, actor and delay it names has the same states and the same transitions as the machine itself, compared
// through @xstate/graph's directed graph (eventless transitions from the state nodes, which that graph leaves out).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import { createMachine, fromPromise, setup, type AnyStateMachine, type AnyStateNode } from 'xstate';
import { MACHINES, toDefinition } from '../actors/statechart.js';

type Json = unknown;

/** The names a definition refers to, by kind: what an implementation must supply. */
function namesIn(definition: Json) {
  const names = { actions: new Set<string>(), guards: new Set<string>(), actors: new Set<string>(), delays: new Set<string>() };
  const name = (ref: Json) => (typeof ref === 'string' ? ref : (ref as { type?: string } | undefined)?.type);
  const add = (set: Set<string>, refs: Json) => {
    for (const ref of [refs].flat()) {
      const n = name(ref);
      if (n) set.add(n);
    }
  };
  const transitions = (value: Json) => {
    for (const t of [value].flat()) {
      if (t && typeof t === 'object') {
        add(names.actions, (t as { actions?: Json }).actions ?? []);
        add(names.guards, (t as { guard?: Json }).guard ?? []);
      }
    }
  };
  const walk = (node: Record<string, any>) => {
    add(names.actions, node.entry ?? []);
    add(names.actions, node.exit ?? []);
    for (const value of Object.values(node.on ?? {})) transitions(value);
    for (const [delay, value] of Object.entries(node.after ?? {})) {
      if (!/^\d+$/.test(delay)) names.delays.add(delay);
      transitions(value);
    }
    transitions(node.always ?? []);
    transitions(node.onDone ?? []);
    for (const invoke of [node.invoke ?? []].flat()) {
      add(names.actors, invoke.src);
      transitions(invoke.onDone ?? []);
      transitions(invoke.onError ?? []);
    }
    for (const child of Object.values(node.states ?? {})) walk(child as Record<string, any>);
  };
  walk(definition as Record<string, any>);
  return names;
}

/** The definition through createMachine, every named implementation a stub. */
function fromDefinition(definition: Json): AnyStateMachine {
  const names = namesIn(definition);
  const stubs = <T>(set: Set<string>, stub: () => T) => Object.fromEntries([...set].map((n) => [n, stub()]));
  return createMachine(definition as never, {
    actions: stubs(names.actions, () => () => {}),
    guards: stubs(names.guards, () => () => true),
    actors: stubs(names.actors, () => fromPromise(async () => undefined)),
    delays: stubs(names.delays, () => 1_000),
  } as never) as unknown as AnyStateMachine;
}

/** States (id, type, initial) and transitions (source, event, targets, guard) as @xstate/graph sees them. */
function structure(machine: AnyStateMachine): { states: string[]; transitions: string[] } {
  const states: string[] = [];
  const transitions: string[] = [];
  const guard = (g: unknown) => (typeof g === 'string' ? g : ((g as { type?: string } | undefined)?.type ?? (typeof g === 'function' ? 'inline' : '')));
  const walk = (node: DirectedGraphNode) => {
    const stateNode = node.stateNode as AnyStateNode;
    states.push(`${node.id} ${stateNode.type} initial=${stateNode.initial?.target.map((t) => t.id).join(',') ?? ''}`);
    for (const edge of node.edges) transitions.push(`${edge.source.id} --${edge.label.text} [${guard(edge.transition.guard)}]--> ${edge.target.id}`);
    for (const t of stateNode.always ?? []) transitions.push(`${stateNode.id} --always [${guard(t.guard)}]--> ${(t.target ?? []).map((n) => n.id).join(',')}`);
    for (const child of node.children) walk(child);
  };
  walk(toDirectedGraph(machine));
  return { states: states.sort(), transitions: transitions.sort() };
}

describe('exported definitions through createMachine', () => {
  for (const [id, machine] of MACHINES) {
    it(`${id}: the same states and transitions as the machine`, () => {
      const definition = JSON.parse(JSON.stringify(toDefinition(machine))) as Json;
      const original = structure(machine);
      const copy = structure(fromDefinition(definition));
      assert.ok(original.transitions.length > 0);
      // Inline guards have no name in the machine; the export names them (`and(a, b)`): compare by position.
      const inline = (list: string[]) => list.map((t) => t.replace(/\[(?:inline|and\([^\]]*\))\]/, '[inline]'));
      assert.deepEqual(copy.states, original.states);
      assert.deepEqual(inline(copy.transitions), inline(original.transitions));
    });
  }

  it('a parallel machine with actions, guards, delays and invokes round-trips too', () => {
    const machine = setup({
      actors: { load: fromPromise(async () => 1) },
      guards: { ready: () => true },
      actions: { note: () => {} },
      delays: { later: 500 },
    }).createMachine({
      id: 'roundTrip',
      type: 'parallel',
      on: { reset: { target: '.left.a', actions: 'note' } },
      states: {
        left: { initial: 'a', states: { a: { on: { go: { target: 'b', guard: 'ready' } }, after: { 5000: 'b' } }, b: { after: { later: 'a' }, entry: 'note' } } },
        right: {
          initial: 'x',
          states: {
            x: { invoke: { src: 'load', onDone: 'y', onError: { target: 'z', actions: ['note'] } } },
            y: { always: { target: 'z', guard: 'ready' }, on: { stay: { actions: 'note' } } },
            z: { type: 'final' },
          },
          onDone: { target: '.x' },
        },
      },
    });
    const definition = toDefinition(machine);
    assert.deepEqual(structure(fromDefinition(definition)), structure(machine));
    assert.deepEqual((definition.states as any).left.states.a.on.go, { target: 'b', guard: 'ready' });
  });
});
