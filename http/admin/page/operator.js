// The operator page's script (plain ES module, no build step, no library). It polls the operator
// listener's routes with the admin key and shows: the supervision tree drawn as boxes and arrows (GET /actors.svg)
// and as a list (state, status, restarts; an expanded actor shows its recent events), and one machine's statechart
// (GET /machines/{id}.svg) with the running actor's active states lit and its last transitions marked. The drawings
// are laid out by the listener (src/diagram.ts, the layout `npm run statecharts` uses too); this script only adopts
// them, lights them and pans and zooms them.
// Every piece of data goes into the DOM as text (textContent / text nodes), never as HTML; the drawings are parsed
// as XML (no script runs from them; the Content-Security-Policy forbids inline code and style as well).

/** Polling is enough here: a handful of small JSON answers every two seconds on a loopback listener. */
const POLL_MS = 2_000;

/** The admin key lives in this variable only: nothing is cached in the page beyond the session. */
let apiKey = '';
/** Bumped on every connect/forget so answers of an older session are dropped. */
let generation = 0;
let timer;
let running = false;
let pending = false;
/** systemIds whose details (GET /actors/{systemId}) are open. */
const expanded = new Set();
/** Machine drawings (SVG text) by id: fixed for the life of the process, fetched once per session. */
const drawings = new Map();
/** Pan and zoom of each drawing (its viewBox), kept across redraws. */
const views = new Map();
/** GET /machines: ids and the actors running each. */
let machines = [];
let machinesShown = '';
const selected = { machine: '', actor: '' };

const $ = (id) => document.getElementById(id);

/** Builds an element; string children become text nodes, so data is never parsed as markup. */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false || value === null) continue;
    if (key === 'class') el.className = value;
    else if (key === 'data') Object.assign(el.dataset, value);
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** A refusal that ends the session (wrong or missing key, listener without a key). */
class ApiError extends Error {
  constructor(message, fatal) {
    super(message);
    this.fatal = fatal;
  }
}

async function api(path, as = 'json') {
  // no-store and no credentials: the key header is the only authentication, and no answer is kept.
  const response = await fetch(path, { headers: { 'x-api-key': apiKey }, cache: 'no-store', credentials: 'omit' });
  if (response.status === 401) throw new ApiError('The admin key was refused (401 Unauthorized). Enter it again.', true);
  if (response.status === 503) {
    throw new ApiError('The operator listener has no admin key configured (503 Service not configured): set ADMIN_API_KEY and restart the process.', true);
  }
  if (!response.ok) throw new ApiError(`${path} answered ${response.status}`, false);
  return as === 'text' ? response.text() : response.json();
}

function showMessage(text, kind = '') {
  $('message').textContent = text;
  $('message').className = kind;
}

const time = (ms) => new Date(ms).toISOString().slice(11, 23);

/** An XState state value as text: `idle`, `syncing.fetching`, `a.x, b.y` for parallel regions. */
function stateText(value) {
  if (value === undefined || value === null) return '–';
  if (typeof value !== 'object') return String(value);
  return Object.entries(value)
    .map(([key, child]) => (child && typeof child === 'object' && Object.keys(child).length === 0 ? key : `${key}.${stateText(child)}`))
    .join(', ');
}

/** State node ids active in a state value (the same walk as activeStateIds in actors/statechart.ts). */
function activeIds(machineId, value) {
  const ids = [];
  const walk = (prefix, v) => {
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

// ---------------------------------------------------------------------------------------------
// Polling

function schedule(delay) {
  clearTimeout(timer);
  timer = setTimeout(tick, delay);
}

/** One refresh at a time; a request for another while one runs is served right after it. */
async function tick() {
  if (running) {
    pending = true;
    return;
  }
  running = true;
  pending = false;
  await refresh(generation);
  running = false;
  if (apiKey) schedule(pending ? 0 : POLL_MS);
}

function refreshSoon() {
  if (!apiKey) return;
  if (running) pending = true;
  else schedule(0);
}

async function refresh(session) {
  try {
    const [tree, list, treeDrawing] = await Promise.all([api('/actors'), api('/machines'), api('/actors.svg', 'text')]);
    const details = new Map(
      await Promise.all(
        [...expanded].map(async (id) => {
          try {
            return [id, await api(`/actors/${encodeURIComponent(id)}`)];
          } catch (error) {
            if (error.fatal) throw error;
            return [id, { error: error.message }]; // e.g. the actor is gone (404)
          }
        }),
      ),
    );
    if (session !== generation) return;
    machines = list.machines;
    showDrawing($('tree-drawing'), 'supervision', treeDrawing);
    renderTree(tree.roots, details);
    renderMachineChoice();
    await renderChart(session, tree.roots);
    if (session !== generation) return;
    $('updated').textContent = `· updated ${time(Date.now())} UTC`;
    showMessage('');
  } catch (error) {
    if (session !== generation) return;
    if (error instanceof ApiError && error.fatal) forget(error.message);
    else showMessage(error instanceof ApiError ? error.message : `Cannot reach the operator listener (${error.message}); retrying.`, 'error');
  }
}

// ---------------------------------------------------------------------------------------------
// Supervision tree

function renderTree(roots, details) {
  $('tree').replaceChildren(...roots.map((node) => actorItem(node, details)));
}

function actorItem(node, details) {
  const open = expanded.has(node.systemId);
  const hasChart = machines.some((m) => m.id === node.machineId);
  // Status values are a fixed set; the class is still reduced to letters so data never shapes the CSS.
  const status = String(node.status).replace(/[^a-z]/gi, '');
  return h(
    'li',
    { class: `actor status-${status}`, data: { systemId: node.systemId } },
    h(
      'div',
      { class: 'row' },
      h('button', { type: 'button', class: 'toggle', 'aria-expanded': String(open), title: 'details and recent events', onclick: () => toggle(node.systemId) }, open ? '▾' : '▸'),
      h('span', { class: 'id' }, node.systemId),
      h('span', { class: 'machine' }, node.machineId ?? ''),
      h('span', { class: 'state', title: 'state' }, stateText(node.state)),
      h('span', { class: 'status', title: 'status' }, node.status),
      h('span', { class: 'restarts', title: 'restarts' }, `restarts ${node.restarts}`),
      node.asks?.inFlight > 0 && h('span', { class: 'asks', title: 'asks waiting on this actor (the oldest one\'s age)' }, `asks ${node.asks.inFlight}, oldest ${node.asks.oldestMs} ms`),
      hasChart && h('button', { type: 'button', class: 'open-chart', onclick: () => selectChart(node.machineId, node.systemId) }, 'statechart'),
    ),
    open && detailsBlock(details.get(node.systemId)),
    node.children?.length ? h('ul', {}, node.children.map((child) => actorItem(child, details))) : null,
  );
}

function toggle(systemId) {
  if (expanded.has(systemId)) expanded.delete(systemId);
  else expanded.add(systemId);
  refreshSoon();
}

/** Context values come summarized by the listener: scalars, or collections by size. */
function contextText(value) {
  if (value && typeof value === 'object') {
    if ('items' in value) return `${value.items} items`;
    if ('keys' in value) return `${value.keys} keys`;
    return JSON.stringify(value);
  }
  return String(value);
}

function detailsBlock(d) {
  if (!d) return h('div', { class: 'details' }, 'loading…');
  if (d.error) return h('div', { class: 'details error' }, d.error);
  const context = d.snapshot?.context;
  const events = d.events ?? [];
  return h(
    'div',
    { class: 'details' },
    d.lastError ? h('p', { class: 'last-error' }, `last error: ${d.lastError}`) : null,
    context && typeof context === 'object'
      ? h('dl', { class: 'context' }, Object.entries(context).map(([key, value]) => [h('dt', {}, key), h('dd', {}, contextText(value))]))
      : null,
    events.length === 0
      ? h('p', { class: 'events-empty' }, 'no events recorded')
      : h('ol', { class: 'events', reversed: true }, [...events].reverse().map((e) => h('li', {}, h('time', {}, time(e.at)), ' ', e.type))),
  );
}

// ---------------------------------------------------------------------------------------------
// Statechart

function selectChart(machineId, systemId) {
  selected.machine = machineId;
  selected.actor = systemId ?? machines.find((m) => m.id === machineId)?.actors[0] ?? '';
  machinesShown = ''; // redraw the selects with the new choice
  renderMachineChoice();
  refreshSoon();
}

/** Rebuilds the selects only when the list changed, so polling does not close an open dropdown. */
function renderMachineChoice() {
  const shown = JSON.stringify([machines, selected]);
  if (shown === machinesShown) return;
  machinesShown = shown;
  const option = (value, label, isSelected) => h('option', { value, selected: isSelected }, label);
  $('machine').replaceChildren(
    option('', 'choose…', !selected.machine),
    ...machines.map((m) => option(m.id, `${m.id} (${m.actors.length} running)`, m.id === selected.machine)),
  );
  const actors = machines.find((m) => m.id === selected.machine)?.actors ?? [];
  $('actor').replaceChildren(option('', 'none (definition only)', !selected.actor), ...actors.map((a) => option(a, a, a === selected.actor)));
}

function findActor(nodes, systemId) {
  for (const node of nodes) {
    if (node.systemId === systemId) return node;
    const found = findActor(node.children ?? [], systemId);
    if (found) return found;
  }
  return undefined;
}

async function renderChart(session, roots) {
  const id = selected.machine;
  if (!id) {
    $('chart-caption').textContent = 'Choose a machine, or “statechart” on an actor of the tree.';
    $('chart').replaceChildren();
    return;
  }
  let drawing = drawings.get(id);
  if (!drawing) {
    drawing = await api(`/machines/${encodeURIComponent(id)}.svg`, 'text');
    if (session !== generation) return;
    drawings.set(id, drawing);
  }
  const actor = selected.actor ? findActor(roots, selected.actor) : undefined;
  if ($('chart').dataset.machine !== id) {
    showDrawing($('chart'), id, drawing);
    $('chart').dataset.machine = id;
  }
  $('chart-caption').textContent = actor ? `${actor.systemId}: ${stateText(actor.state)} (${actor.status})` : 'No running actor selected: the definition only.';
  light($('chart').querySelector('svg'), actor ? new Set(activeIds(id, actor.state)) : new Set(), actor?.lastTransitions ?? []);
}

/** Lights the active states and marks the arrows of the last transitions taken. */
function light(svg, active, transitions) {
  if (!svg) return;
  for (const box of svg.querySelectorAll('.box[data-id]')) box.classList.toggle('active', active.has(box.dataset.id));
  for (const arrow of svg.querySelectorAll('.arrow.transition')) {
    const { source, target, event } = arrow.dataset;
    const taken = transitions.some((t) => t.source === source && t.eventType === event && (t.targets.length === 0 ? target === source : t.targets.includes(target)));
    arrow.classList.toggle('last', taken);
  }
}

// ---------------------------------------------------------------------------------------------
// Drawings: adopted from the listener's SVG, panned by dragging, zoomed by the wheel (around the pointer)

/** Parses a drawing as XML; anything but one <svg> is refused. */
function parseSvg(text) {
  const parsed = new DOMParser().parseFromString(text, 'image/svg+xml');
  const root = parsed.documentElement;
  if (root.namespaceURI !== 'http://www.w3.org/2000/svg' || root.localName !== 'svg' || parsed.querySelector('parsererror')) throw new Error('the drawing is not an SVG');
  return document.importNode(root, true);
}

/** The drawing each container shows, as text: an unchanged drawing is not swapped (a drag goes on undisturbed). */
const shown = new Map();

/** Shows `text` in `container`, keeping the pan and zoom of the drawing called `key`. */
function showDrawing(container, key, text) {
  if (shown.get(container) === text && container.dataset.view === key && container.firstChild) return;
  shown.set(container, text);
  const svg = parseSvg(text);
  const full = svg.getAttribute('viewBox');
  svg.dataset.fullView = full;
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  const view = views.get(key);
  if (view) svg.setAttribute('viewBox', view);
  container.replaceChildren(svg);
  container.dataset.view = key;
}

function viewBox(svg) {
  return svg.getAttribute('viewBox').split(/[\s,]+/).map(Number);
}

function setView(container, svg, [x, y, w, h]) {
  const text = `${x} ${y} ${w} ${h}`;
  svg.setAttribute('viewBox', text);
  views.set(container.dataset.view, text);
}

/** The drawing's own coordinates of a point on screen. */
function drawingPoint(svg, clientX, clientY) {
  return new DOMPoint(clientX, clientY).matrixTransform(svg.getScreenCTM().inverse());
}

function zoom(container, factor, clientX, clientY) {
  const svg = container.querySelector('svg');
  if (!svg) return;
  const [x, y, w, h] = viewBox(svg);
  const rect = svg.getBoundingClientRect();
  const at = drawingPoint(svg, clientX ?? rect.left + rect.width / 2, clientY ?? rect.top + rect.height / 2);
  setView(container, svg, [at.x - (at.x - x) * factor, at.y - (at.y - y) * factor, w * factor, h * factor]);
}

function fit(container) {
  const svg = container.querySelector('svg');
  if (!svg) return;
  svg.setAttribute('viewBox', svg.dataset.fullView);
  views.delete(container.dataset.view);
}

/** A press that moves less than this (px) is a click, not a drag. */
const DRAG_PX = 3;

function panZoom(container) {
  let drag;
  container.addEventListener('wheel', (event) => {
    event.preventDefault();
    zoom(container, event.deltaY > 0 ? 1.15 : 1 / 1.15, event.clientX, event.clientY);
  }, { passive: false });
  container.addEventListener('pointerdown', (event) => {
    const svg = container.querySelector('svg');
    if (!svg || event.button !== 0) return;
    drag = { svg, pointerId: event.pointerId, x: event.clientX, y: event.clientY, from: drawingPoint(svg, event.clientX, event.clientY), moved: false };
  });
  container.addEventListener('pointermove', (event) => {
    if (!drag || event.pointerId !== drag.pointerId) return;
    if (!drag.moved) {
      if (Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < DRAG_PX) return;
      // Captured only once it is a drag: a click keeps its target (an actor's box).
      drag.moved = true;
      container.setPointerCapture(event.pointerId);
    }
    const at = drawingPoint(drag.svg, event.clientX, event.clientY);
    const [x, y, w, h] = viewBox(drag.svg);
    setView(container, drag.svg, [x - (at.x - drag.from.x), y - (at.y - drag.from.y), w, h]);
  });
  const end = () => {
    if (drag?.moved) container.dataset.dragged = '1';
    drag = undefined;
  };
  container.addEventListener('pointerup', end);
  container.addEventListener('pointercancel', end);
}

for (const [container, controls] of [[$('tree-drawing'), $('tree-controls')], [$('chart'), $('chart-controls')]]) {
  panZoom(container);
  controls.querySelector('.zoom-in').addEventListener('click', () => zoom(container, 1 / 1.25));
  controls.querySelector('.zoom-out').addEventListener('click', () => zoom(container, 1.25));
  controls.querySelector('.zoom-fit').addEventListener('click', () => fit(container));
}

// A click (not the end of a drag) on an actor of the drawn tree opens its statechart.
$('tree-drawing').addEventListener('click', (event) => {
  if ($('tree-drawing').dataset.dragged) {
    delete $('tree-drawing').dataset.dragged;
    return;
  }
  const id = event.target.closest?.('.box.actor')?.dataset.id;
  const node = id && machines.find((m) => m.actors.includes(id));
  if (node) selectChart(node.id, id);
});

// ---------------------------------------------------------------------------------------------
// Session

function forget(message, kind = 'error') {
  apiKey = '';
  generation++;
  clearTimeout(timer);
  drawings.clear();
  $('tree').replaceChildren();
  $('tree-drawing').replaceChildren();
  $('chart').replaceChildren();
  delete $('chart').dataset.machine;
  $('chart-caption').textContent = '';
  $('updated').textContent = '';
  $('key-form').hidden = false;
  $('disconnect').hidden = true;
  showMessage(message, kind);
  $('key').focus();
}

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault(); // never a form post: the key goes only into the x-api-key header
  apiKey = $('key').value;
  $('key').value = '';
  generation++;
  $('key-form').hidden = true;
  $('disconnect').hidden = false;
  showMessage('Connecting…');
  refreshSoon();
});

$('disconnect').addEventListener('click', () => forget('Key forgotten.', ''));

$('machine').addEventListener('change', (event) => selectChart(event.target.value, undefined));
$('actor').addEventListener('change', (event) => {
  selected.actor = event.target.value;
  refreshSoon();
});
