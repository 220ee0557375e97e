// Statechart exports for operators (docs/DESIGN.md, "Operators see the running system"): every machine's
// definition as JSON and as a Mermaid state diagram, optionally with the active states highlighted.
// Used by the operator routes and by `npm run statecharts`.

import type { AnyStateMachine } from 'xstate';
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

interface Node {
  id: string;
  key: string;
  type: string;
  initial?: { target: ReadonlyArray<{ id: string }> };
  states: Record<string, Node>;
  transitions: Map<string, ReadonlyArray<{ target?: ReadonlyArray<{ id: string }>; guard?: unknown; eventType: string }>>;
  always?: ReadonlyArray<{ target?: ReadonlyArray<{ id: string }>; guard?: unknown }>;
  invoke: ReadonlyArray<{ id: string; src: unknown }>;
}

const ident = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');

function guardName(guard: unknown): string | undefined {
  if (!guard) return undefined;
  if (typeof guard === 'string') return guard;
  const type = (guard as { type?: unknown }).type;
  return typeof type === 'string' ? type : 'guard';
}

function eventLabel(eventType: string, node: Node): string {
  const invoked = (kind: string, prefix: string) => {
    const id = eventType.slice(prefix.length);
    const src = node.invoke.find((i) => i.id === id)?.src;
    return `${kind} ${typeof src === 'string' ? src : id}`;
  };
  if (eventType.startsWith('xstate.done.actor.')) return invoked('done', 'xstate.done.actor.');
  if (eventType.startsWith('xstate.error.actor.')) return invoked('error', 'xstate.error.actor.');
  if (eventType.startsWith('xstate.after.')) return `after ${eventType.split('.')[2]}`;
  return eventType;
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
          const guard = guardName(t.guard);
          for (const target of t.target ?? []) {
            lines.push(`${indent}${ident(child.id)} --> ${ident(target.id)} : ${eventLabel(eventType, child)}${guard ? ` [${guard}]` : ''}`);
          }
        }
      }
      for (const t of child.always ?? []) {
        const guard = guardName(t.guard);
        for (const target of t.target ?? []) lines.push(`${indent}${ident(child.id)} --> ${ident(target.id)} : always${guard ? ` [${guard}]` : ''}`);
      }
      if (child.type === 'final') lines.push(`${indent}${ident(child.id)} --> [*]`);
    }
  };
  emit(root, '  ');

  // Transitions declared on the machine itself apply in every top-level state: draw them from each one.
  for (const [eventType, transitions] of root.transitions) {
    for (const t of transitions) {
      for (const target of t.target ?? []) {
        for (const state of topLevel) {
          if (state.type === 'final' || state.id === target.id || state.transitions.has(eventType)) continue;
          lines.push(`  ${ident(state.id)} --> ${ident(target.id)} : ${eventLabel(eventType, root)}`);
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

/**
 * The resolved definition (ids, targets, transitions) as plain JSON. XState's own `toJSON` leaves out
 * eventless (`always`) transitions, so each state node gets them added as `always`, shaped like its
 * `transitions` entries (`eventType` '', `#id` targets, the guard's name).
 */
export function toJson(machine: AnyStateMachine): unknown {
  const json = JSON.parse(JSON.stringify(machine.toJSON())) as JsonNode;
  const addAlways = (node: Node, out: JsonNode) => {
    if (node.always && node.always.length > 0) {
      out.always = node.always.map((t) => {
        const guard = guardName(t.guard);
        return { eventType: '', source: `#${node.id}`, target: (t.target ?? []).map((target) => `#${target.id}`), ...(guard ? { guard: { type: guard } } : {}) };
      });
    }
    for (const [key, child] of Object.entries(node.states)) addAlways(child, out.states[key]!);
  };
  addAlways(machine.root as unknown as Node, json);
  return json;
}

interface JsonNode {
  states: Record<string, JsonNode>;
  always?: unknown[];
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
