// Checks of a drawn statechart or tree (issue 31), shared by the layout's own test (numbers from the layout) and the
// headless-Chromium tests (numbers measured in the page): what a reviewer would see wrong in a drawing. The expected
// counts come from the machine's definition through @xstate/graph, never from the drawing code.
// Inert on import (node --test runs every module under dist/test/).

import { toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import type { AnyStateMachine, AnyStateNode } from 'xstate';

export interface DrawnBox {
  readonly id: string;
  readonly parent?: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface Point {
  readonly x: number;
  readonly y: number;
}

export interface DrawnArrow {
  readonly source: string;
  readonly target: string;
  readonly start: Point;
  readonly end: Point;
}

/** How far (px) an arrow's end may lie from its box's border: coordinates are rounded to 0.1 px. */
const ON_BORDER = 1.5;

function overlap(a: DrawnBox, b: DrawnBox): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

function distanceToBorder(p: Point, box: DrawnBox): number {
  const inside = p.x >= box.x && p.x <= box.x + box.width && p.y >= box.y && p.y <= box.y + box.height;
  const dx = Math.max(box.x - p.x, 0, p.x - (box.x + box.width));
  const dy = Math.max(box.y - p.y, 0, p.y - (box.y + box.height));
  if (!inside) return Math.hypot(dx, dy);
  return Math.min(p.x - box.x, box.x + box.width - p.x, p.y - box.y, box.y + box.height - p.y);
}

/** Sibling boxes that overlap, arrows that do not start and end on their boxes' borders; [] when the drawing is sound. */
export function drawingProblems(boxes: readonly DrawnBox[], arrows: readonly DrawnArrow[]): string[] {
  const problems: string[] = [];
  const byId = new Map(boxes.map((box) => [box.id, box]));
  const siblings = new Map<string, DrawnBox[]>();
  for (const box of boxes) siblings.set(box.parent ?? '', [...(siblings.get(box.parent ?? '') ?? []), box]);
  for (const group of siblings.values()) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) if (overlap(group[i]!, group[j]!)) problems.push(`boxes ${group[i]!.id} and ${group[j]!.id} overlap`);
    }
  }
  for (const box of boxes) {
    const parent = box.parent === undefined ? undefined : byId.get(box.parent);
    if (parent && !(box.x >= parent.x && box.y >= parent.y && box.x + box.width <= parent.x + parent.width && box.y + box.height <= parent.y + parent.height)) {
      problems.push(`box ${box.id} is not inside its parent ${parent.id}`);
    }
  }
  for (const arrow of arrows) {
    const name = `arrow ${arrow.source} → ${arrow.target}`;
    for (const [end, id, point] of [['starts', arrow.source, arrow.start], ['ends', arrow.target, arrow.end]] as const) {
      const box = byId.get(id);
      if (!box) problems.push(`${name}: no box ${id}`);
      else if (distanceToBorder(point, box) > ON_BORDER) problems.push(`${name} ${end} at (${point.x}, ${point.y}), off the border of ${id} (${box.x}, ${box.y}, ${box.width}×${box.height})`);
    }
  }
  return problems;
}

export interface ExpectedChart {
  /** Every state node id, the machine's own included. */
  readonly states: readonly string[];
  /** One per transition and target (a targetless transition loops on its state), eventless ones included. */
  readonly transitions: number;
}

/** The states and transitions of `machine`'s definition, counted through @xstate/graph (`always` from the state nodes). */
export function expectedChart(machine: AnyStateMachine): ExpectedChart {
  const states: string[] = [];
  let transitions = 0;
  const walk = (node: DirectedGraphNode) => {
    states.push(node.id);
    transitions += node.edges.length;
    const stateNode = node.stateNode as AnyStateNode;
    for (const t of stateNode.always ?? []) transitions += Math.max(1, t.target?.length ?? 0);
    for (const child of node.children) walk(child);
  };
  walk(toDirectedGraph(machine));
  return { states, transitions };
}
