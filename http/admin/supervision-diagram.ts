// The supervision tree drawn the way the statecharts are (issue 31): one box per supervisor and actor, an arrow from
// each supervisor to its children in start order, laid out by src/diagram.ts. A box shows the strategy (supervisors)
// or the machine and its state (workers), the status and the restart count. The layout depends only on the tree's
// shape, so it is kept until the shape changes; the live lines are redrawn on every request, cut to the box's width.

import { layoutDiagram, renderSvg, type Diagram, type DiagramBox, type DiagramLayout } from '../../src/diagram.js';
import type { PendingAsks } from '../../actors/inspector.js';

export interface TreeNode {
  systemId: string;
  machineId: string | undefined;
  state: unknown;
  status: string;
  restarts: number;
  /** Asks waiting on the actor: how many, and the oldest one's age (where requests wait). */
  asks: PendingAsks;
  children?: TreeNode[];
}

/** Live lines fit in this many characters (the widest state values of the services' machines do). */
const LIVE_CHARS = 34;

/** An XState state value as text: `idle`, `syncing.fetching`, `a.x, b.y` for parallel regions (as the page's list shows it). */
export function stateText(value: unknown): string {
  if (value === undefined || value === null) return '–';
  if (typeof value !== 'object') return String(value);
  return Object.entries(value)
    .map(([key, child]) => (child && typeof child === 'object' && Object.keys(child).length === 0 ? key : `${key}.${stateText(child)}`))
    .join(', ');
}

const fit = (text: string) => (text.length > LIVE_CHARS ? `${text.slice(0, LIVE_CHARS - 1)}…` : text);
const isSupervisor = (node: TreeNode) => node.machineId === 'supervisor';

function box(node: TreeNode): DiagramBox {
  const asks = node.asks.inFlight > 0 ? ` · asks ${node.asks.inFlight}` : '';
  return {
    id: node.systemId,
    lines: [
      { text: node.systemId, bold: true },
      { text: isSupervisor(node) ? `supervisor ${stateText(node.state)}` : (node.machineId ?? 'actor') },
      { text: fit(isSupervisor(node) ? `${node.children?.length ?? 0} children` : `state ${stateText(node.state)}`), class: 'field-state' },
      { text: fit(`${node.status} · restarts ${node.restarts}${asks}`), class: 'field-status' },
    ],
    classes: ['actor', isSupervisor(node) ? 'supervisor' : 'worker', `status-${node.status.replace(/[^a-z]/gi, '')}`],
    minChars: LIVE_CHARS,
  };
}

/** The roots (normally one) under an unnamed frame, supervisors pointing at their children. */
export function supervisionDiagram(roots: readonly TreeNode[]): Diagram {
  const boxes: DiagramBox[] = [];
  const arrows: Diagram['arrows'][number][] = [];
  const walk = (node: TreeNode) => {
    boxes.push(box(node));
    for (const child of node.children ?? []) {
      arrows.push({ source: node.systemId, target: child.systemId, classes: ['supervises'] });
      walk(child);
    }
  };
  roots.forEach(walk);
  return {
    id: 'supervision',
    title: 'supervision tree',
    root: { id: 'supervision', lines: [{ text: 'supervision tree' }], classes: ['frame'], dashed: true, children: boxes },
    arrows,
    direction: 'RIGHT',
  };
}

/** The tree's shape: the layout is reused while it stays the same. */
function shape(diagram: Diagram): string {
  return JSON.stringify([diagram.root.children?.map((b) => [b.id, b.lines[1]?.text]), diagram.arrows.map((a) => [a.source, a.target])]);
}

let cached: { shape: string; layout: Promise<DiagramLayout> } | undefined;

/** The SVG of the tree as it is now. */
export async function drawSupervisionTree(roots: readonly TreeNode[]): Promise<string> {
  const diagram = supervisionDiagram(roots);
  const key = shape(diagram);
  if (cached?.shape !== key) cached = { shape: key, layout: layoutDiagram(diagram) };
  const layout = cached.layout;
  try {
    return renderSvg(diagram, await layout);
  } catch (error) {
    if (cached?.layout === layout) cached = undefined;
    throw error;
  }
}
