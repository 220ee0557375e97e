// The operator listener: fail-closed auth and the supervision tree / statechart routes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setup } from 'xstate';
import { actorChild } from '../../actors/actor-child.js';
import { systemClock } from '../../src/clock.js';
import { createRuntime, type Runtime } from '../../actors/runtime.js';
import { supervisorSpec, Supervisor } from '../../actors/supervisor.js';
import { adminServer } from '../../http/admin/admin.routes.js';
import { refreshCycleMachine } from '../../machines/rates/refresh-cycle.machine.js';
import { captureLogger } from '../support/logger.js';
import { rawRequest } from '../support/raw-http.js';

const KEY = 'k'.repeat(40);
const worker = setup({ types: { events: {} as { type: 'system.shutdown' } | { type: 'ping' } | { type: 'hold' } } }).createMachine({
  id: 'adminTestWorker',
  initial: 'waiting',
  states: {
    waiting: { on: { ping: 'pinged', 'system.shutdown': 'done' } },
    // `hold` is taken and never answered: an ask that waits, for the operator view.
    pinged: { on: { hold: { actions: () => undefined }, 'system.shutdown': 'done' } },
    done: { type: 'final' },
  },
});

async function withAdmin(
  apiKey: string | undefined,
  run: (port: number, fetchJson: (path: string, key?: string) => Promise<{ status: number; body: any; text: string }>, runtime: Runtime) => Promise<void>,
) {
  const runtime = createRuntime(systemClock, captureLogger().logger);
  const root = new Supervisor(
    { id: 'root', strategy: 'one_for_one', intensity: 1, periodMs: 1_000, children: [supervisorSpec({ id: 'svc', strategy: 'one_for_one', intensity: 1, periodMs: 1_000, children: [actorChild({ systemId: 'svc.worker', logic: () => worker })] })] },
    runtime,
  );
  runtime.inspector.record('root').children = ['svc'];
  await root.start();
  runtime.registry.lookup('svc.worker')!.send({ type: 'ping' });
  const server = adminServer(runtime, { host: '127.0.0.1', port: 0, apiKey, roots: ['root'] });
  const port = await server.listen();
  const fetchJson = async (path: string, key?: string) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { connection: 'close', ...(key ? { 'x-api-key': key } : {}) } });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body, text };
  };
  try {
    await run(port, fetchJson, runtime);
  } finally {
    await server.close();
    root.shutdown();
    await root.exited;
  }
}

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
    assert.deepEqual(svc.children[0], { systemId: 'svc.worker', machineId: 'adminTestWorker', state: 'pinged', status: 'running', restarts: 0, asks: { inFlight: 0 } });
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

test('GET /machines lists machines; .json and .mmd give the definition and a Mermaid diagram', async () => {
  await withAdmin(KEY, async (_port, get) => {
    const list = await get('/machines', KEY);
    assert.ok(list.body.machines.some((m: { id: string }) => m.id === refreshCycleMachine.id));
    const definition = await get(`/machines/${refreshCycleMachine.id}.json`, KEY);
    assert.equal(definition.status, 200);
    assert.equal(definition.body.id, refreshCycleMachine.id);
    assert.ok(definition.body.states.idle);
    // Eventless transitions are part of the definition (XState's own toJSON leaves them out).
    assert.deepEqual(
      definition.body.states.deciding.always.map((t: { target: string[]; guard?: { type: string } }) => [t.target, t.guard?.type]),
      [
        [[`#${refreshCycleMachine.id}.storing`], 'hasSnapshotToStore'],
        [[`#${refreshCycleMachine.id}.idle`], undefined],
      ],
    );
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
