// The operator listener: fail-closed auth and the supervision tree / statechart routes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refreshCycleMachine } from '../../machines/rates/refresh-cycle.machine.js';
import { ADMIN_TEST_KEY as KEY, withAdmin } from '../support/admin-listener.js';
import { rawRequest } from '../support/raw-http.js';

test('without a configured key every route answers 503 Service not configured', async () => {
  await withAdmin(undefined, async (_port, get) => {
    for (const path of ['/actors', '/machines', '/nope']) {
      const response = await get(path, KEY);
      assert.equal(response.status, 503, path);
      assert.deepEqual(response.body, { error: 'Service not configured' });
    }
  });
});

test('a missing or wrong key is 401; the right key is served', async () => {
  await withAdmin(KEY, async (_port, get) => {
    assert.equal((await get('/actors')).status, 401);
    assert.equal((await get('/actors', `${KEY}x`)).status, 401);
    assert.equal((await get('/actors', KEY.slice(1))).status, 401);
    assert.equal((await get('/actors', KEY)).status, 200);
    assert.equal((await get('/unknown', KEY)).status, 404);
    assert.equal((await get('/unknown')).status, 401, 'even 404s are behind the key');
  });
});

test('GET /actors draws the supervision tree with states, statuses and restart counts', async () => {
  await withAdmin(KEY, async (_port, get) => {
    const { body } = await get('/actors', KEY);
    const root = body.roots[0];
    assert.equal(root.systemId, 'root');
    const svc = root.children[0];
    assert.equal(svc.systemId, 'svc');
    assert.equal(svc.machineId, 'supervisor');
    assert.deepEqual(svc.children[0], {
      systemId: 'svc.worker',
      machineId: 'adminTestWorker',
      state: 'pinged',
      status: 'running',
      restarts: 0,
      asks: { inFlight: 0 },
      // What the page marks as the last transition taken.
      lastTransitions: [{ source: 'adminTestWorker.waiting', eventType: 'ping', targets: ['adminTestWorker.pinged'] }],
    });
  });
});

test('the tree shows the asks waiting on each actor: how many and the oldest one\'s age', async () => {
  await withAdmin(KEY, async (_port, get, runtime) => {
    const giveUp = new AbortController();
    const waiting = [runtime.ask('svc.worker', { type: 'hold' }, { signal: giveUp.signal }), runtime.ask('svc.worker', { type: 'hold' }, { signal: giveUp.signal })];
    const settled = Promise.allSettled(waiting);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const { body } = await get('/actors', KEY);
    const { asks } = body.roots[0].children[0].children[0];
    assert.equal(asks.inFlight, 2);
    assert.ok(asks.oldestMs >= 50 && asks.oldestMs < 5_000, `oldest ${asks.oldestMs} ms`);
    assert.equal((await get('/actors/svc.worker', KEY)).body.asks.inFlight, 2);
    giveUp.abort();
    await settled;
    assert.deepEqual((await get('/actors/svc.worker', KEY)).body.asks, { inFlight: 0 }, 'given-up asks are no longer counted');
  });
});

test('GET /actors/{systemId} gives the snapshot summary and recent events', async () => {
  await withAdmin(KEY, async (_port, get) => {
    const { status, body } = await get('/actors/svc.worker', KEY);
    assert.equal(status, 200);
    assert.equal(body.snapshot.status, 'active');
    assert.equal(body.snapshot.value, 'pinged');
    assert.ok(body.events.some((e: { type: string }) => e.type === 'ping'), JSON.stringify(body.events));
    assert.equal((await get('/actors/none', KEY)).status, 404);
  });
});

test('GET /machines lists machines; .json, .mmd and .svg give the definition, a Mermaid diagram and the drawing', async () => {
  await withAdmin(KEY, async (_port, get) => {
    const list = await get('/machines', KEY);
    assert.ok(list.body.machines.some((m: { id: string }) => m.id === refreshCycleMachine.id));
    const definition = await get(`/machines/${refreshCycleMachine.id}.json`, KEY);
    assert.equal(definition.status, 200);
    assert.equal(definition.body.id, refreshCycleMachine.id);
    assert.ok(definition.body.states.idle);
    // The config as written, guards by name (test/statecharts-export.test.ts gives it to createMachine).
    assert.deepEqual(definition.body.states.deciding.always, [{ guard: 'hasSnapshotToStore', target: 'storing' }, { target: 'idle' }]);
    const drawing = await get(`/machines/${refreshCycleMachine.id}.svg`, KEY);
    assert.equal(drawing.status, 200);
    assert.match(drawing.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    assert.match(drawing.text, /data-id="ratesRefreshCycle\.idle"/);
    assert.equal((await get('/machines/nope.svg', KEY)).status, 404);
    const mermaid = await get(`/machines/${refreshCycleMachine.id}.mmd`, KEY);
    assert.equal(mermaid.status, 200);
    assert.ok(mermaid.text.startsWith('stateDiagram-v2\n'));
    assert.match(mermaid.text, /ratesRefreshCycle_idle --> ratesRefreshCycle_fetching : after untilNextCycle/);
    assert.equal((await get('/machines/nope.mmd', KEY)).status, 404);
  });
});

test('GET /metrics reports the request counters per listener and route', async () => {
  await withAdmin(KEY, async (_port, get) => {
    await get('/actors', KEY);
    await get('/actors', KEY);
    await get('/actors');
    const { status, body } = await get('/metrics', KEY);
    assert.equal(status, 200);
    const actors = body.routes['admin /actors'];
    assert.equal(actors.requests, 3);
    assert.deepEqual(actors.byStatus, { '2xx': 2, '4xx': 1 });
    assert.ok(actors.totalMs >= 0);
  });
});

test('bad percent-encoding in the path or the query is a 4xx {error}, never a 500, and stays behind the key (issue 15)', async () => {
  await withAdmin(KEY, async (port) => {
    const key = { 'x-api-key': KEY };
    // Sent on a raw socket: fetch would re-encode some targets.
    const cases: ReadonlyArray<{ target: string; headers?: Record<string, string>; status: number; error?: string }> = [
      { target: '/actors/%zz', headers: key, status: 404, error: 'Unknown actor' },
      { target: '/actors/%FF%FE', headers: key, status: 404, error: 'Unknown actor' },
      { target: '/actors/svc.%E0%A4%A', headers: key, status: 404, error: 'Unknown actor' },
      { target: '/actors/%zz', status: 401 },
      { target: '/machines/%zz.json', headers: key, status: 404, error: 'Unknown machine' },
      { target: '/machines/%FF%FE.mmd', headers: key, status: 404, error: 'Unknown machine' },
      { target: '/%zz', headers: key, status: 404, error: 'Not found' },
      { target: '/%FF%FE?%zz', status: 401 },
      // A valid escape still names the actor; junk in a query no route reads changes nothing.
      { target: '/actors/svc%2Eworker', headers: key, status: 200 },
      { target: '/actors?%zz=%FF', headers: key, status: 200 },
      { target: '/metrics?%E0%A4%A', headers: key, status: 200 },
    ];
    for (const { target, headers, status, error } of cases) {
      const answer = await rawRequest(port, 'GET', target, headers);
      const label = `GET ${target}: ${answer.status} ${answer.body}`;
      assert.equal(answer.status, status, label);
      if (status === 200) continue;
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['error'], label);
      if (error !== undefined) assert.equal(body.error, error, label);
    }
  });
});

test('GET /actors.svg draws the supervision tree: each actor a box with its strategy or machine, state, status and restarts', async () => {
  await withAdmin(KEY, async (_port, get) => {
    assert.equal((await get('/actors.svg')).status, 401);
    const { status, text } = await get('/actors.svg', KEY);
    assert.equal(status, 200);
    for (const id of ['root', 'svc', 'svc.worker']) assert.match(text, new RegExp(`<g class="box actor [^"]*" data-id="${id.replace('.', '\\.')}"`), id);
    assert.match(text, /<text[^>]*>supervisor one_for_one<\/text>/);
    assert.match(text, /<text class="field-state"[^>]*>state pinged<\/text>/);
    assert.match(text, /<text class="field-status"[^>]*>running · restarts 0<\/text>/);
    assert.equal(text.match(/class="arrow supervises"/g)?.length, 2, 'root → svc → svc.worker');
  });
});

test('GET /inspect: the present as @xstate.actor and @xstate.snapshot, then a long poll delivers a state change', async () => {
  await withAdmin(KEY, async (_port, get, runtime) => {
    assert.equal((await get('/inspect')).status, 401);
    const first = await get('/inspect', KEY);
    assert.equal(first.status, 200);
    const session = runtime.inspector.get('svc.worker')!.sessionId!;
    assert.ok(session, 'the worker has an XState session');
    const actor = first.body.events.find((e: { type: string; name?: string }) => e.type === '@xstate.actor' && e.name === 'svc.worker');
    assert.equal(actor.sessionId, session);
    assert.equal(actor.parentId, 'svc', 'a supervisor is named by its systemId');
    assert.equal(actor.rootId, 'root');
    const present = first.body.events.find((e: { type: string; sessionId: string }) => e.type === '@xstate.snapshot' && e.sessionId === session);
    assert.deepEqual(present.snapshot, { status: 'active', value: 'pinged' });
    for (const event of first.body.events) assert.deepEqual(Object.keys(event).filter((k) => ['id', 'createdAt', '_version', 'rootId', 'sessionId'].includes(k)).length, 5);

    // The next poll waits: the state change arrives while it is open.
    const poll = get(`/inspect?after=${first.body.next}&wait=10000`, KEY);
    await new Promise((resolve) => setTimeout(resolve, 50));
    runtime.registry.lookup('svc.worker')!.send({ type: 'reset' });
    const { status, body } = await poll;
    assert.equal(status, 200);
    assert.equal(body.missed, 0);
    assert.ok(body.next > first.body.next);
    const event = body.events.find((e: { type: string }) => e.type === '@xstate.event');
    assert.deepEqual([event.sessionId, event.event], [session, { type: 'reset' }], 'the event type only, never a payload');
    const snapshot = body.events.find((e: { type: string }) => e.type === '@xstate.snapshot');
    assert.equal(snapshot.sessionId, session);
    assert.deepEqual(snapshot.event, { type: 'reset' });
    assert.equal(snapshot.snapshot.value, 'waiting');
    assert.equal(snapshot.snapshot.status, 'active');

    // Nothing new: the poll answers empty once its wait is over.
    const idle = await get(`/inspect?after=${body.next}&wait=100`, KEY);
    assert.deepEqual([idle.body.events, idle.body.next], [[], body.next]);
  });
});
