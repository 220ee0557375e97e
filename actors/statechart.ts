// Statechart exports for operators and reviewers (docs/DESIGN.md, "Operators see the running system"; issue 31): every
// machine's definition as a config XState's `createMachine` accepts, as a Mermaid state diagram, and as boxes and
// arrows for the drawn diagram (src/diagram.ts lays it out). Used by the operator routes and `npm run statecharts`.

import type { AnyStateMachine } from 'xstate';
import type { Diagram, DiagramBox } from '../src/diagram.js';
import { fileLifecycleMachine } from '../machines/files/file-lifecycle.machine.js';
import { repairRunMachine } from '../machines/files/repair-run.machine.js';
import { gcRunMachine } from '../machines/files/gc-run.machine.js';
import { healthCheckpointMachine } from '../machines/files/health-checkpoint.machine.js';
import { runtimeMachine } from '../machines/files/runtime.machine.js';
import { historyStoreMachine } from '../machines/rates/history-store.machine.js';
import { refreshCycleMachine } from '../machines/rates/refresh-cycle.machine.js';
import { nodeHealthMachine } from '../machines/console/node-health.machine.js';
import { rpcSessionMachine } from '../machines/console/rpc-session.machine.js';
import { databaseMachine } from '../machines/transfers/database.machine.js';
import { indexerSyncMachine } from '../machines/transfers/indexer-sync.machine.js';
import { schemaCacheMachine } from '../machines/transfers/schema-cache.machine.js';

/** Every machine the runtime runs, by machine id. */
export const MACHINES: ReadonlyMap<string, AnyStateMachine> = new Map(
  [refreshCycleMachine, historyStoreMachine, runtimeMachine, fileLifecycleMachine, healthCheckpointMachine, gcRunMachine, repairRunMachine, databaseMachine, indexerSyncMachine, schemaCacheMachine, nodeHealthMachine, rpcSessionMachine].map((machine) => [machine.id, machine as AnyStateMachine]),
);

interface Transition {
  readonly target?: ReadonlyArray<{ id: string }>;
  readonly guard?: unknown;
  readonly eventType: string;
}

interface Node {
  id: string;
  key: string;
  type: string;
  initial?: { target: ReadonlyArray<{ id: string }> };
  states: Record<string, Node>;
  transitions: Map<string, readonly Transition[]>;
  always?: readonly Transition[];
  after: ReadonlyArray<{ eventType: string; delay: string | number }>;
  invoke: ReadonlyArray<{ id: string; src: unknown }>;
}

const ident = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');

/** A guard by name: `isDryRun`, `{ type: 'isDryRun' }`, or XState's higher-order guards as `and(a, not(b))`. */
function guardName(guard: unknown): string | undefined {
  if (!guard) return undefined;
  if (typeof guard === 'string') return guard;
  const { type, guards } = guard as { type?: unknown; guards?: unknown };
  if (typeof type === 'string') return type;
  if (typeof guard === 'function' && Array.isArray(guards)) return `${guard.name}(${guards.map((g) => guardName(g) ?? 'guard').join(', ')})`;
  return 'guard';
}

/** `5 s`, `250 ms`; a named delay (`setup({ delays })`) as its name. */
function delayText(delay: string | number | undefined): string {
  if (typeof delay !== 'number') return String(delay);
  return delay >= 1000 && delay % 100 === 0 ? `${delay / 1000} s` : `${delay} ms`;
}

/**
 * A transition as reviewers read it (issue 31): `event [guard]`, `after 5 s`, `always [guard]`, `done: actor` /
 * `error: actor` for an invoked actor's outcome (by its `src`), `done` for a compound state's completion.
 */
export function transitionLabel(eventType: string, node: Node, guard: unknown): string {
  const invoked = (prefix: string) => {
    const id = eventType.slice(prefix.length);
    const src = node.invoke.find((i) => i.id === id)?.src;
    return typeof src === 'string' ? src : id;
  };
  let event: string;
  if (eventType === '') event = 'always';
  else if (eventType.startsWith('xstate.done.actor.')) event = `done: ${invoked('xstate.done.actor.')}`;
  else if (eventType.startsWith('xstate.error.actor.')) event = `error: ${invoked('xstate.error.actor.')}`;
  else if (eventType.startsWith('xstate.done.state.')) event = 'done';
  else if (eventType.startsWith('xstate.after.')) event = `after ${delayText(node.after.find((a) => a.eventType === eventType)?.delay ?? eventType.split('.')[2])}`;
  else event = eventType;
  const name = guardName(guard);
  return name ? `${event} [${name}]` : event;
}

/** One arrow per transition and target: a targetless transition (it stays, running its actions) loops on its state. */
export interface ChartArrow {
  readonly source: string;
  readonly target: string;
  /** XState's event type ('' for `always`), as the page matches the last transition taken. */
  readonly eventType: string;
  readonly label: string;
}

/** Every transition of every state node (the machine's own included), `always` last, in definition order. */
export function chartArrows(machine: AnyStateMachine): ChartArrow[] {
  const arrows: ChartArrow[] = [];
  const walk = (node: Node) => {
    const all: Transition[] = [...[...node.transitions.values()].flat(), ...(node.always ?? []).map((t) => ({ ...t, eventType: '' }))];
    for (const t of all) {
      const targets = t.target && t.target.length > 0 ? t.target : [node];
      for (const target of targets) arrows.push({ source: node.id, target: target.id, eventType: t.eventType, label: transitionLabel(t.eventType, node, t.guard) });
    }
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root as unknown as Node);
  return arrows;
}

/** A Mermaid `stateDiagram-v2` of `machine`; `active` lists state node ids (e.g. `ratesRefreshCycle.idle`) to highlight. */
export function toMermaid(machine: AnyStateMachine, active: readonly string[] = []): string {
  const root = machine.root as unknown as Node;
  const lines = ['stateDiagram-v2'];
  const topLevel = Object.values(root.states);

  const emit = (node: Node, indent: string) => {
    const children = Object.values(node.states);
    if (node.initial) for (const t of node.initial.target) lines.push(`${indent}[*] --> ${ident(t.id)}`);
    for (const child of children) {
      if (Object.keys(child.states).length > 0) {
        lines.push(`${indent}state "${child.key}" as ${ident(child.id)} {`);
        emit(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}state "${child.key}" as ${ident(child.id)}`);
      }
      for (const [eventType, transitions] of child.transitions) {
        for (const t of transitions) {
          for (const target of t.target ?? []) lines.push(`${indent}${ident(child.id)} --> ${ident(target.id)} : ${transitionLabel(eventType, child, t.guard)}`);
        }
      }
      for (const t of child.always ?? []) {
        for (const target of t.target ?? []) lines.push(`${indent}${ident(child.id)} --> ${ident(target.id)} : ${transitionLabel('', child, t.guard)}`);
      }
      if (child.type === 'final') lines.push(`${indent}${ident(child.id)} --> [*]`);
    }
  };
  emit(root, '  ');

  // Transitions declared on the machine itself apply in every top-level state: Mermaid has no arrow from the
  // diagram's border, so they are drawn from each one (the SVG draws them once, from the machine's box).
  for (const [eventType, transitions] of root.transitions) {
    for (const t of transitions) {
      for (const target of t.target ?? []) {
        for (const state of topLevel) {
          if (state.type === 'final' || state.id === target.id || state.transitions.has(eventType)) continue;
          lines.push(`  ${ident(state.id)} --> ${ident(target.id)} : ${transitionLabel(eventType, root, t.guard)}`);
        }
      }
    }
  }
  if (active.length > 0) {
    lines.push('  classDef active fill:#f9d71c,stroke:#333,stroke-width:2px');
    for (const id of active) lines.push(`  class ${ident(id)} active`);
  }
  return `${lines.join('\n')}\n`;
}

/** Config keys left out of the exported definition: code and data, not structure (context may hold anything). */
const NOT_EXPORTED = new Set(['context', 'output', 'schemas']);
/** Keys whose value is dropped when it is code: an invoked actor's input, an action's or guard's parameters. */
const CODE_ONLY = new Set(['input', 'params']);

/**
 * The machine's definition as a config XState's `createMachine` accepts (issue 31), and so Stately's tools: the
 * config as written (targets as written, resolved again by XState), with every action, guard, actor and delay by
 * name. Inline code has no name, so it is exported as a reference for an implementation to supply: an inline
 * `assign` as `{ type: 'xstate.assign' }`, `and(['a', 'b'])` as `{ type: 'and(a, b)' }`. Computed parameters and
 * inputs (code) are left out, and so are context, output and the type schemas.
 */
export function toDefinition(machine: AnyStateMachine): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(machine.config, (key, value: unknown) => {
      if (NOT_EXPORTED.has(key)) return undefined;
      if (typeof value !== 'function') return value;
      if (CODE_ONLY.has(key)) return undefined;
      if (key === 'guard') return { type: guardName(value) };
      const type = (value as { type?: unknown }).type;
      return { type: typeof type === 'string' ? type : value.name || 'inline' };
    }),
  ) as Record<string, unknown>;
}

/**
 * The machine as boxes and arrows for src/diagram.ts: one box per state node (the machine's own outermost, dashed),
 * named by key, with its invoked actors; the initial state marked, final states double, parallel regions dashed.
 * Boxes carry `data-id` = the state node id and arrows `data-event`, so the operator page lights them.
 */
export function machineDiagram(machine: AnyStateMachine): Diagram {
  const box = (node: Node, parent: Node | undefined): DiagramBox => ({
    id: node.id,
    lines: [
      { text: parent ? node.key : node.id },
      ...(node.type === 'final' || node.type === 'parallel' || node.type === 'history' ? [{ text: `(${node.type})` }] : []),
      ...node.invoke.map((i) => ({ text: `invoke ${typeof i.src === 'string' ? i.src : i.id}` })),
    ],
    classes: ['state', `type-${node.type}`, ...(parent ? [] : ['machine'])],
    initial: node.initial?.target[0]?.id,
    double: node.type === 'final',
    dashed: !parent || parent.type === 'parallel',
    children: Object.values(node.states).map((child) => box(child, node)),
  });
  return {
    id: machine.id,
    title: `statechart ${machine.id}`,
    root: box(machine.root as unknown as Node, undefined),
    arrows: chartArrows(machine).map((arrow) => ({
      source: arrow.source,
      target: arrow.target,
      label: arrow.label,
      classes: ['transition', ...(arrow.source === arrow.target ? ['self'] : [])],
      data: { event: arrow.eventType },
    })),
  };
}

/** State node ids active in a snapshot value, e.g. `{ a: 'b' }` → [`m.a`, `m.a.b`]. */
export function activeStateIds(machineId: string, value: unknown): string[] {
  const ids: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === 'string') ids.push(`${prefix}.${v}`);
    else if (v && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        ids.push(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, child);
      }
    }
  };
  walk(machineId, value);
  return ids;
}
