// The operator page's script (plain ES module, no build step, no library). It polls the operator
// listener's JSON routes with the admin key and draws: the supervision tree (state, status, restarts;
// an expanded actor shows its recent events), and one machine's statechart as nested boxes built from
// GET /machines/{id}.json with the running actor's current states marked `.active`.
// Every piece of data goes into the DOM as text (textContent / text nodes), never as HTML.

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
/** Machine definitions by id: fixed for the life of the process, fetched once per session. */
const definitions = new Map();
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

async function api(path) {
  // no-store and no credentials: the key header is the only authentication, and no answer is kept.
  const response = await fetch(path, { headers: { 'x-api-key': apiKey }, cache: 'no-store', credentials: 'omit' });
  if (response.status === 401) throw new ApiError('The admin key was refused (401 Unauthorized). Enter it again.', true);
  if (response.status === 503) {
    throw new ApiError('The operator listener has no admin key configured (503 Service not configured): set ADMIN_API_KEY and restart the process.', true);
  }
  if (!response.ok) throw new ApiError(`${path} answered ${response.status}`, false);
  return response.json();
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
    const [tree, list] = await Promise.all([api('/actors'), api('/machines')]);
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
    $('chart').replaceChildren(h('p', { class: 'hint' }, 'Choose a machine, or “statechart” on an actor of the tree.'));
    return;
  }
  let definition = definitions.get(id);
  if (!definition) {
    definition = await api(`/machines/${encodeURIComponent(id)}.json`);
    if (session !== generation) return;
    definitions.set(id, definition);
  }
  const actor = selected.actor ? findActor(roots, selected.actor) : undefined;
  const active = new Set(actor ? activeIds(id, actor.state) : []);
  $('chart').replaceChildren(
    h('p', { class: 'chart-caption' }, actor ? `${actor.systemId}: ${stateText(actor.state)} (${actor.status})` : 'No running actor selected: the definition only.'),
    stateBox(definition, definition.id, active, { root: true }),
  );
}

/** A transition's event as operators read it: `done: fetchSources`, `after refreshPeriod`, `always`. */
function eventLabel(transition, node) {
  const type = transition.eventType ?? '';
  const invoked = (prefix) => {
    const invokeId = type.slice(prefix.length);
    const src = (node.invoke ?? []).find((i) => i.id === invokeId)?.src;
    return typeof src === 'string' ? src : invokeId;
  };
  if (type === '') return 'always';
  if (type.startsWith('xstate.done.actor.')) return `done: ${invoked('xstate.done.actor.')}`;
  if (type.startsWith('xstate.error.actor.')) return `error: ${invoked('xstate.error.actor.')}`;
  if (type.startsWith('xstate.after.')) return `after ${transition.delay ?? type.split('.')[2]}`;
  return type;
}

function guardLabel(guard) {
  if (!guard) return '';
  return typeof guard === 'string' ? guard : typeof guard.type === 'string' ? guard.type : 'guard';
}

function transitionList(node, machineId) {
  // `always` is listed when the definition carries it (eventless transitions).
  const transitions = [...(node.transitions ?? []), ...(node.always ?? []).map((t) => ({ ...t, eventType: '' }))];
  if (transitions.length === 0) return null;
  const short = (target) => String(target).replace(/^#/, '').replace(`${machineId}.`, '');
  return h(
    'ul',
    { class: 'transitions' },
    transitions.map((t) => {
      const guard = guardLabel(t.guard);
      const targets = (t.target ?? []).map(short);
      return h(
        'li',
        {},
        h('span', { class: 'event' }, eventLabel(t, node)),
        guard ? h('span', { class: 'guard' }, ` [${guard}]`) : null,
        ' → ',
        h('span', { class: 'target' }, targets.length > 0 ? targets.join(', ') : '(stays)'),
      );
    }),
  );
}

/** One state node as a box: name, its transitions, its child states nested inside. */
function stateBox(node, machineId, active, { root = false, initial = false } = {}) {
  const children = Object.values(node.states ?? {});
  const initialIds = new Set((node.initial?.target ?? []).map((t) => String(t).replace(/^#/, '')));
  const type = String(node.type).replace(/[^a-z]/gi, '');
  const classes = ['state-node', `type-${type}`, root && 'root', initial && 'initial', active.has(node.id) && 'active'].filter(Boolean).join(' ');
  return h(
    'div',
    { class: classes, data: { stateId: node.id } },
    h('div', { class: 'state-name' }, root ? node.id : node.key, type === 'final' || type === 'parallel' ? h('span', { class: 'tag' }, type) : null),
    transitionList(node, machineId),
    children.length > 0
      ? h('div', { class: 'children' }, children.map((child) => stateBox(child, machineId, active, { initial: initialIds.has(child.id) })))
      : null,
  );
}

// ---------------------------------------------------------------------------------------------
// Session

function forget(message, kind = 'error') {
  apiKey = '';
  generation++;
  clearTimeout(timer);
  definitions.clear();
  $('tree').replaceChildren();
  $('chart').replaceChildren();
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
