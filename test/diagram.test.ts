// The statechart layout (src/diagram.ts over actors/statechart.ts `machineDiagram`, issue 31) on a machine with every
// kind of transition the services' machines have and more (parallel regions, a self-loop, a targetless transition, a
// transition to an ancestor, one declared on the machine itself, numeric and named delays, invoked actors' outcomes,
// a compound state's completion): one box per state and one arrow per transition counted from the definition, the
// labels reviewers read, sound geometry, and an SVG the operator page's CSP accepts. The page test measures the same
// in Chromium for the real machines (test/acceptance/statecharts-page.test.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fromPromise, setup } from 'xstate';
import { machineDiagram } from '../actors/statechart.js';
import { layoutDiagram, renderSvg, type DiagramBox } from '../src/diagram.js';
import { drawingProblems, expectedChart, type DrawnArrow, type DrawnBox } from './support/drawing-checks.js';

const machine = setup({
  actors: { fetchThing: fromPromise(async () => 1) },
  guards: { isReady: () => true, hasMore: () => false },
  delays: { retryDelay: 2_000 },
}).createMachine({
  id: 'sample',
  initial: 'working',
  on: { 'sample.stop': '.stopped' },
  states: {
    working: {
      type: 'parallel',
      on: { 'sample.poke': { actions: () => {} } },
      states: {
        fetch: {
          initial: 'loading',
          states: {
            loading: { invoke: { src: 'fetchThing', onDone: 'loaded', onError: 'failed' } },
            failed: { after: { retryDelay: 'loading' }, on: { 'sample.up': '#sample.working' } },
            loaded: { always: [{ guard: 'hasMore', target: 'loading' }, { target: 'done' }] },
            done: { type: 'final' },
          },
        },
        watch: {
          initial: 'idle',
          states: {
            idle: { after: { 5000: 'idle' }, on: { 'sample.check': { target: 'idle', guard: 'isReady', reenter: true } } },
          },
        },
      },
    },
    stopped: { type: 'final' },
  },
});

test('one box per state, one arrow per transition, the labels reviewers read, sound geometry', async () => {
  const diagram = machineDiagram(machine);
  const layout = await layoutDiagram(diagram);
  const expected = expectedChart(machine);

  const parents = new Map<string, string>();
  const boxes: DiagramBox[] = [];
  const walk = (box: DiagramBox) => {
    boxes.push(box);
    for (const child of box.children ?? []) (parents.set(child.id, box.id), walk(child));
  };
  walk(diagram.root);
  assert.deepEqual(boxes.map((b) => b.id).sort(), [...expected.states].sort());
  assert.equal(diagram.arrows.length, expected.transitions);

  const labels = diagram.arrows.map((a) => `${a.source} -${a.label}-> ${a.target}`);
  for (const expectedLabel of [
    'sample -sample.stop-> sample.stopped',
    'sample.working -sample.poke-> sample.working',
    'sample.working.fetch.loading -done: fetchThing-> sample.working.fetch.loaded',
    'sample.working.fetch.loading -error: fetchThing-> sample.working.fetch.failed',
    'sample.working.fetch.failed -after retryDelay-> sample.working.fetch.loading',
    'sample.working.fetch.failed -sample.up-> sample.working',
    'sample.working.fetch.loaded -always [hasMore]-> sample.working.fetch.loading',
    'sample.working.fetch.loaded -always-> sample.working.fetch.done',
    'sample.working.watch.idle -after 5 s-> sample.working.watch.idle',
    'sample.working.watch.idle -sample.check [isReady]-> sample.working.watch.idle',
  ]) {
    assert.ok(labels.includes(expectedLabel), `${expectedLabel} in\n${labels.join('\n')}`);
  }
  const byId = new Map(boxes.map((b) => [b.id, b]));
  assert.ok(byId.get('sample.working.fetch')!.dashed && byId.get('sample.working.watch')!.dashed, 'parallel regions are dashed');
  assert.ok(!byId.get('sample.working.fetch.loading')!.dashed);
  assert.ok(byId.get('sample.stopped')!.double && byId.get('sample.working.fetch.done')!.double, 'final states have a double border');
  assert.equal(byId.get('sample.working.fetch')!.initial, 'sample.working.fetch.loading');
  assert.deepEqual(byId.get('sample.working.fetch.loading')!.lines.map((l) => l.text), ['loading', 'invoke fetchThing']);
  assert.deepEqual(byId.get('sample.working')!.lines.map((l) => l.text), ['working', '(parallel)']);

  const drawn: DrawnBox[] = boxes.map((b) => ({ id: b.id, parent: parents.get(b.id), ...layout.boxes.get(b.id)! }));
  const arrows: DrawnArrow[] = diagram.arrows.map((a, i) => {
    const points = layout.arrows[i]!.points;
    return { source: a.source, target: a.target, start: points[0]!, end: points.at(-1)! };
  });
  assert.deepEqual(drawingProblems(drawn, arrows), []);

  const svg = renderSvg(diagram, layout);
  assert.equal((svg.match(/<g class="arrow transition/g) ?? []).length, expected.transitions);
  assert.equal((svg.match(/<g class="arrow initial-arrow/g) ?? []).length, 3, 'the initial markers of the machine and of both regions (a parallel state has none)');
  assert.doesNotMatch(svg, /<style|style=|<script|javascript:/i, 'nothing the page CSP (style-src/script-src self) refuses');
});

test('the layout is deterministic: the same machine draws the same SVG', async () => {
  const [a, b] = await Promise.all([layoutDiagram(machineDiagram(machine)), layoutDiagram(machineDiagram(machine))]);
  assert.equal(renderSvg(machineDiagram(machine), a), renderSvg(machineDiagram(machine), b));
});

test('text is escaped in the SVG', async () => {
  const diagram = {
    id: 'x',
    title: 'a <b> & "c"',
    root: { id: 'r', lines: [{ text: '<script>' }], classes: ['c'], children: [{ id: 's', lines: [{ text: 'x"y' }], classes: [] }] },
    arrows: [{ source: 's', target: 's', label: '</text><script>', classes: ['transition'] }],
  };
  const svg = renderSvg(diagram, await layoutDiagram(diagram));
  assert.doesNotMatch(svg, /<script|<b>/);
  assert.match(svg, /&#60;script&#62;/);
});
