// Boxes and arrows laid out by the Eclipse Layout Kernel (elkjs, `layered` with hierarchy handling, the layout Stately's
// visualizer uses) and drawn as SVG. The one layout module of the statecharts (issue 31): `npm run statecharts` writes
// its SVGs to docs/statecharts/, and the operator listener serves the same SVGs to its page, which only lights states
// and pans (http/admin/page/operator.js). Layout runs in Node only, so the page needs no layout code and the two
// drawings cannot differ.
//
// The SVG carries no <style> and no inline `style`: the operator page's Content-Security-Policy (`style-src 'self'`)
// would refuse them when the page adopts the drawing. Colours are presentation attributes, which the page's stylesheet
// overrides (`.active > rect`); every element the page looks for has a class and `data-*` attributes.

import elkBundle from 'elkjs/lib/elk.bundled.js';
import type { ELK as Elk, ELKConstructorArguments, ElkExtendedEdge, ElkNode, ElkPoint } from 'elkjs/lib/elk-api.js';

// The bundle is CommonJS (`module.exports = ELK`, with `.default`): Node's default import is the constructor itself,
// which the package's types (written for bundlers) do not say under NodeNext.
const ELK = elkBundle as unknown as new (args?: ELKConstructorArguments) => Elk;

export interface DiagramText {
  readonly text: string;
  /** A class for the page to find the line by (a live field of the supervision tree). */
  readonly class?: string;
  readonly bold?: boolean;
}

export interface DiagramBox {
  /** Unique within the diagram; the SVG group carries it as `data-id`. */
  readonly id: string;
  /** The first line is the box's name; compound boxes show their lines above their children. */
  readonly lines: readonly DiagramText[];
  /** Classes of the box's SVG group (the page's stylesheet and tests select by them). */
  readonly classes: readonly string[];
  /** A box at least this many characters wide (live text that may grow after the layout). */
  readonly minChars?: number;
  /** The child an initial marker (a dot and an arrow) points at. */
  readonly initial?: string;
  /** A double border (final states). */
  readonly double?: boolean;
  /** A dashed border (the regions of a parallel state, the machine itself). */
  readonly dashed?: boolean;
  readonly children?: readonly DiagramBox[];
}

export interface DiagramArrow {
  readonly source: string;
  readonly target: string;
  readonly label?: string;
  readonly classes: readonly string[];
  /** `data-*` attributes of the arrow's SVG group (names without the prefix). */
  readonly data?: Readonly<Record<string, string>>;
}

export interface Diagram {
  /** Prefixes the SVG's own ids (its arrowhead), so two drawings can share a page. */
  readonly id: string;
  readonly title: string;
  readonly root: DiagramBox;
  readonly arrows: readonly DiagramArrow[];
  /** Left to right (statecharts, as Stately draws them) or top down (a tree). */
  readonly direction?: 'RIGHT' | 'DOWN';
}

interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface DiagramLayout {
  readonly width: number;
  readonly height: number;
  readonly boxes: ReadonlyMap<string, Rect>;
  /** Per arrow of the diagram, in order: its polyline and where its label goes. */
  readonly arrows: ReadonlyArray<{ readonly points: readonly ElkPoint[]; readonly label?: Rect }>;
}

/**
 * Text is measured without a font: the drawing uses a monospace font, whose advance is about 0.6 em in the
 * common families (DejaVu Sans Mono 0.602, Menlo 0.602, Consolas 0.55); a little more keeps the longest name inside.
 */
const FONT_SIZE = 12;
const CHAR_WIDTH = 7.3;
const LINE_HEIGHT = 16;
const PAD = 10;
/** The initial marker's dot. */
const DOT = 10;
const MARGIN = 8;
const FONT_FAMILY = 'ui-monospace, SFMono-Regular, Menlo, Consolas, DejaVu Sans Mono, monospace';
const INITIAL_SUFFIX = '\u0000initial';

const textWidth = (text: string) => text.length * CHAR_WIDTH;
const round = (value: number) => Math.round(value * 10) / 10;

function boxWidth(box: DiagramBox): number {
  const chars = Math.max(box.minChars ?? 0, ...box.lines.map((line) => line.text.length));
  return chars * CHAR_WIDTH + 2 * PAD;
}

const headerHeight = (box: DiagramBox) => box.lines.length * LINE_HEIGHT + PAD;

function elkNode(box: DiagramBox): ElkNode {
  const children = box.children ?? [];
  if (children.length === 0) return { id: box.id, width: boxWidth(box), height: headerHeight(box) + PAD / 2 };
  const nodes = children.map(elkNode);
  if (box.initial) nodes.unshift({ id: box.id + INITIAL_SUFFIX, width: DOT, height: DOT });
  return {
    id: box.id,
    layoutOptions: {
      'elk.padding': `[top=${headerHeight(box) + PAD},left=${PAD + 4},bottom=${PAD + 4},right=${PAD + 4}]`,
      'elk.nodeSize.constraints': 'MINIMUM_SIZE',
      'elk.nodeSize.minimum': `(${boxWidth(box)}, ${headerHeight(box) + 2 * PAD})`,
    },
    children: nodes,
  };
}

/** Every box, parents before their children (the order they are painted in). */
function allBoxes(root: DiagramBox): DiagramBox[] {
  const out: DiagramBox[] = [];
  const walk = (box: DiagramBox) => {
    out.push(box);
    for (const child of box.children ?? []) walk(child);
  };
  walk(root);
  return out;
}

const initialArrows = (root: DiagramBox): DiagramArrow[] =>
  allBoxes(root)
    .filter((box) => box.initial !== undefined)
    .map((box) => ({ source: box.id + INITIAL_SUFFIX, target: box.initial!, classes: ['initial-arrow'] }));

/** Lays the diagram out (elkjs, deterministic for the same input). */
export async function layoutDiagram(diagram: Diagram): Promise<DiagramLayout> {
  const arrows = [...diagram.arrows, ...initialArrows(diagram.root)];
  const edges: ElkExtendedEdge[] = arrows.map((arrow, index) => ({
    id: `e${index}`,
    sources: [arrow.source],
    targets: [arrow.target],
    labels: arrow.label ? [{ id: `l${index}`, text: arrow.label, width: textWidth(arrow.label) + 4, height: LINE_HEIGHT }] : [],
  }));
  const graph: ElkNode = {
    id: '\u0000root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': diagram.direction ?? 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      // Keep the definition's order where the layering allows it: states read in the order they were written.
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.layered.spacing.nodeNodeBetweenLayers': '36',
      'elk.layered.spacing.edgeNodeBetweenLayers': '14',
      'elk.spacing.nodeNode': '22',
      'elk.spacing.edgeNode': '12',
      'elk.spacing.edgeEdge': '8',
      'elk.spacing.edgeLabel': '3',
      'elk.padding': `[top=${MARGIN},left=${MARGIN},bottom=${MARGIN},right=${MARGIN}]`,
      // Every coordinate relative to the drawing, whatever box an edge ends up in.
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
    children: [elkNode(diagram.root)],
    edges,
  };
  // No worker: the bundled kernel runs in this thread (a layout takes milliseconds once the kernel is warm).
  const laid = await new ELK().layout(graph);

  const boxes = new Map<string, Rect>();
  const collect = (node: ElkNode) => {
    boxes.set(node.id, { x: round(node.x ?? 0), y: round(node.y ?? 0), width: round(node.width ?? 0), height: round(node.height ?? 0) });
    for (const child of node.children ?? []) collect(child);
  };
  for (const child of laid.children ?? []) collect(child);
  const byId = new Map((laid.edges ?? []).map((edge) => [edge.id, edge]));
  return {
    width: round(laid.width ?? 0),
    height: round(laid.height ?? 0),
    boxes,
    arrows: arrows.map((_arrow, index) => {
      const edge = byId.get(`e${index}`);
      const points = (edge?.sections ?? []).flatMap((section) => [section.startPoint, ...(section.bendPoints ?? []), section.endPoint]).map((p) => ({ x: round(p.x), y: round(p.y) }));
      const label = edge?.labels?.[0];
      return { points, label: label ? { x: round(label.x ?? 0), y: round(label.y ?? 0), width: round(label.width ?? 0), height: round(label.height ?? 0) } : undefined };
    }),
  };
}

const escapeXml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function attributes(values: Readonly<Record<string, string | number | undefined>>): string {
  return Object.entries(values)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}="${escapeXml(String(value))}"`)
    .join('');
}

function boxSvg(box: DiagramBox, parent: string | undefined, rect: Rect): string {
  const rectAttributes = { x: rect.x, y: rect.y, width: rect.width, height: rect.height, rx: 6, fill: '#ffffff', stroke: '#6b7480', 'stroke-width': 1.2 };
  const parts = [`<g${attributes({ class: ['box', ...box.classes].join(' '), 'data-id': box.id, 'data-parent': parent })}>`];
  parts.push(`<rect${attributes({ ...rectAttributes, ...(box.dashed ? { 'stroke-dasharray': '5 3' } : {}) })}/>`);
  if (box.double) parts.push(`<rect${attributes({ class: 'inner', x: rect.x + 3, y: rect.y + 3, width: rect.width - 6, height: rect.height - 6, rx: 4, fill: 'none', stroke: '#6b7480' })}/>`);
  box.lines.forEach((line, index) => {
    const y = rect.y + PAD / 2 + LINE_HEIGHT * (index + 1) - 4;
    parts.push(
      `<text${attributes({ class: line.class, x: rect.x + PAD, y: round(y), 'font-weight': line.bold || index === 0 ? 'bold' : undefined, fill: index === 0 ? '#1d232b' : '#4b525c' })}>${escapeXml(line.text)}</text>`,
    );
  });
  parts.push('</g>');
  return parts.join('');
}

/** The SVG of a laid-out diagram; `diagram` may carry newer texts than the one laid out, with the same boxes. */
export function renderSvg(diagram: Diagram, layout: DiagramLayout): string {
  const marker = `${diagram.id}-arrowhead`;
  const out = [
    `<svg${attributes({ xmlns: 'http://www.w3.org/2000/svg', class: 'diagram', 'data-diagram': diagram.id, viewBox: `0 0 ${layout.width} ${layout.height}`, width: layout.width, height: layout.height, 'font-family': FONT_FAMILY, 'font-size': FONT_SIZE })}>`,
    `<title>${escapeXml(diagram.title)}</title>`,
    `<defs><marker${attributes({ id: marker, viewBox: '0 0 10 10', refX: 10, refY: 5, markerUnits: 'userSpaceOnUse', markerWidth: 9, markerHeight: 9, orient: 'auto-start-reverse' })}><path d="M0,0 L10,5 L0,10 z" fill="#3d444d"/></marker></defs>`,
    `<rect${attributes({ class: 'background', width: layout.width, height: layout.height, fill: '#ffffff' })}/>`,
  ];
  const parents = new Map<string, string>();
  for (const box of allBoxes(diagram.root)) for (const child of box.children ?? []) parents.set(child.id, box.id);
  for (const box of allBoxes(diagram.root)) {
    const rect = layout.boxes.get(box.id);
    if (!rect) throw new Error(`diagram ${diagram.id}: box ${box.id} was not laid out`);
    out.push(boxSvg(box, parents.get(box.id), rect));
    if (box.initial) {
      const dot = layout.boxes.get(box.id + INITIAL_SUFFIX)!;
      out.push(`<circle${attributes({ class: 'initial-dot', 'data-parent': box.id, cx: dot.x + DOT / 2, cy: dot.y + DOT / 2, r: DOT / 2, fill: '#3d444d' })}/>`);
    }
  }
  const arrows = [...diagram.arrows, ...initialArrows(diagram.root)];
  arrows.forEach((arrow, index) => {
    const { points, label } = layout.arrows[index]!;
    const data = Object.fromEntries(Object.entries({ source: arrow.source, target: arrow.target, ...arrow.data }).map(([key, value]) => [`data-${key}`, value]));
    const initial = arrow.classes.includes('initial-arrow');
    out.push(`<g${attributes({ class: ['arrow', ...arrow.classes].join(' '), ...(initial ? { 'data-target': arrow.target } : data) })}>`);
    const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x},${p.y}`).join(' ');
    out.push(`<path${attributes({ d, fill: 'none', stroke: '#3d444d', 'stroke-width': 1.2, 'marker-end': `url(#${marker})` })}/>`);
    if (arrow.label && label) {
      out.push(`<rect${attributes({ class: 'label-background', x: label.x, y: label.y, width: label.width, height: label.height, fill: '#ffffff', 'fill-opacity': 0.85 })}/>`);
      out.push(`<text${attributes({ class: 'label', x: round(label.x + 2), y: round(label.y + label.height - 4), fill: '#1f4f8a' })}>${escapeXml(arrow.label)}</text>`);
    }
    out.push('</g>');
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Lays out and draws in one step. */
export async function drawDiagram(diagram: Diagram): Promise<string> {
  return renderSvg(diagram, await layoutDiagram(diagram));
}
