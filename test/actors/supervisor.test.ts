// The supervisor's OTP semantics (docs/DESIGN.md rule 4; issue 2, foundation item 3).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setup } from 'xstate';
import { actorChild } from '../../actors/actor-child.js';
import { systemClock } from '../../src/clock.js';
import { createRuntime, type Runtime } from '../../actors/runtime.js';
import {
  ChildStartError,
  drawSupervisionTree,
  RestartIntensityError,
  Supervisor,
  supervisorSpec,
  type ChildHandle,
  type ChildSpec,
  type ExitReason,
  type SupervisorOptions,
} from '../../actors/supervisor.js';
import { captureLogger } from '../support/logger.js';
import { waitFor } from '../support/wait.js';

type WorkerEvent = { type: 'boom' } | { type: 'finish' } | { type: 'system.shutdown' };

/** A worker that crashes on `boom`, exits normally on `finish`, and honours the shutdown protocol. */
const workerMachine = setup({ types: { events: {} as WorkerEvent } }).createMachine({
  id: 'testWorker',
  initial: 'running',
  states: {
    running: {
      on: {
        boom: {
          actions: () => {
            throw new Error('boom');
          },
        },
        finish: 'done',
        'system.shutdown': 'done',
      },
    },
    done: { type: 'final' },
  },
});

/** Ignores `system.shutdown`: the supervisor must kill it at its timeout. */
const stubbornMachine = setup({}).createMachine({ id: 'stubborn', initial: 'running', states: { running: {} } });

function worker(systemId: string, extra: Partial<Pick<ChildSpec, 'restart' | 'shutdownTimeoutMs'>> = {}): ChildSpec {
  return actorChild({ systemId, logic: () => workerMachine, ...extra });
}

function newRuntime(): { runtime: Runtime; lines: Array<Record<string, unknown>> } {
  const { logger, lines } = captureLogger();
  return { runtime: createRuntime(systemClock, logger), lines };
}

function options(children: ChildSpec[], overrides: Partial<SupervisorOptions> = {}): SupervisorOptions {
  return { id: 'sup', strategy: 'one_for_one', intensity: 3, periodMs: 10_000, backoff: { initialMs: 1, maxMs: 5 }, children, ...overrides };
}

const ref = (runtime: Runtime, id: string) => runtime.registry.lookup(id);
const restarts = (runtime: Runtime, id: string) => runtime.inspector.get(id)?.restarts ?? 0;

test('one_for_one: a crashing worker is restarted and its siblings keep running', async () => {
  const { runtime, lines } = newRuntime();
  const sup = new Supervisor(options([worker('t.a'), worker('t.b'), worker('t.c')]), runtime);
  await sup.start();
  const [a, b, c] = ['t.a', 't.b', 't.c'].map((id) => ref(runtime, id)!);
  b!.send({ type: 'boom' });
  await waitFor(() => restarts(runtime, 't.b') === 1, { what: 't.b restart' });
  const newB = ref(runtime, 't.b')!;
  assert.notEqual(newB, b, 'a new incarnation is registered under the same systemId');
  assert.equal(newB.getSnapshot().status, 'active');
  assert.equal(ref(runtime, 't.a'), a, 'sibling before is untouched');
  assert.equal(ref(runtime, 't.c'), c, 'sibling after is untouched');
  assert.equal(a!.getSnapshot().status, 'active');
  assert.equal(c!.getSnapshot().status, 'active');
  assert.ok(lines.some((l) => l.msg === 'child crashed' && l.child === 't.b'), 'the crash is logged');
  assert.equal(runtime.inspector.get('t.b')?.lastError, 'Error: boom');
  sup.shutdown();
  assert.deepEqual(await sup.exited, { kind: 'normal' });
});

test('rest_for_one: the crashed child and the ones started after it are restarted', async () => {
  const { runtime } = newRuntime();
  const sup = new Supervisor(options([worker('r.a'), worker('r.b'), worker('r.c')], { strategy: 'rest_for_one' }), runtime);
  await sup.start();
  const [a, b, c] = ['r.a', 'r.b', 'r.c'].map((id) => ref(runtime, id)!);
  b!.send({ type: 'boom' });
  await waitFor(() => restarts(runtime, 'r.c') === 1, { what: 'r.c restart' });
  assert.equal(ref(runtime, 'r.a'), a);
  assert.notEqual(ref(runtime, 'r.b'), b);
  assert.notEqual(ref(runtime, 'r.c'), c);
  assert.equal(c!.getSnapshot().status, 'done', 'the old r.c was shut down gracefully');
  sup.shutdown();
  await sup.exited;
});

test('one_for_all: every child is restarted', async () => {
  const { runtime } = newRuntime();
  const sup = new Supervisor(options([worker('o.a'), worker('o.b'), worker('o.c')], { strategy: 'one_for_all' }), runtime);
  await sup.start();
  const before = ['o.a', 'o.b', 'o.c'].map((id) => ref(runtime, id));
  ref(runtime, 'o.c')!.send({ type: 'boom' });
  await waitFor(() => ['o.a', 'o.b', 'o.c'].every((id) => restarts(runtime, id) === 1), { what: 'all restarted' });
  ['o.a', 'o.b', 'o.c'].forEach((id, i) => assert.notEqual(ref(runtime, id), before[i]));
  sup.shutdown();
  await sup.exited;
});

test('restart types: transient is not restarted after a normal exit, temporary never, permanent always', async () => {
  const { runtime } = newRuntime();
  const sup = new Supervisor(
    options([worker('k.perm'), worker('k.trans', { restart: 'transient' }), worker('k.temp', { restart: 'temporary' })]),
    runtime,
  );
  await sup.start();
  ref(runtime, 'k.perm')!.send({ type: 'finish' });
  ref(runtime, 'k.trans')!.send({ type: 'finish' });
  ref(runtime, 'k.temp')!.send({ type: 'boom' });
  await waitFor(() => restarts(runtime, 'k.perm') === 1, { what: 'permanent restart' });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(restarts(runtime, 'k.trans'), 0);
  assert.equal(restarts(runtime, 'k.temp'), 0);
  assert.equal(ref(runtime, 'k.trans'), undefined);
  assert.deepEqual(
    sup.children().map((c) => c.id),
    ['k.perm', 'k.trans'],
    'a temporary child is removed once it exits',
  );
  sup.shutdown();
  await sup.exited;
});

test('a transient child that crashes is restarted', async () => {
  const { runtime } = newRuntime();
  const sup = new Supervisor(options([worker('tc.a', { restart: 'transient' })]), runtime);
  await sup.start();
  ref(runtime, 'tc.a')!.send({ type: 'boom' });
  await waitFor(() => restarts(runtime, 'tc.a') === 1, { what: 'transient restart' });
  sup.shutdown();
  await sup.exited;
});

test('exceeding the restart intensity stops every child and escalates with RestartIntensityError', async () => {
  const { runtime, lines } = newRuntime();
  const sup = new Supervisor(options([worker('i.a'), worker('i.b')], { intensity: 2 }), runtime);
  await sup.start();
  for (let i = 0; i < 3; i++) {
    const current = ref(runtime, 'i.a')!;
    current.send({ type: 'boom' });
    if (i < 2) await waitFor(() => restarts(runtime, 'i.a') === i + 1, { what: `restart ${i + 1}` });
  }
  const reason = await sup.exited;
  assert.equal(reason.kind, 'error');
  const error = (reason as { error: unknown }).error;
  assert.ok(error instanceof RestartIntensityError);
  assert.equal(error.childId, 'i.a');
  assert.equal(ref(runtime, 'i.b'), undefined, 'siblings are stopped when the supervisor gives up');
  assert.ok(lines.some((l) => l.msg === 'restart intensity exceeded; escalating'));
});

test('restarts older than the period do not count towards the intensity', async () => {
  const { runtime } = newRuntime();
  const sup = new Supervisor(options([worker('p.a')], { intensity: 1, periodMs: 30 }), runtime);
  await sup.start();
  for (let i = 1; i <= 3; i++) {
    ref(runtime, 'p.a')!.send({ type: 'boom' });
    await waitFor(() => restarts(runtime, 'p.a') === i, { what: `restart ${i}` });
    await new Promise((resolve) => setTimeout(resolve, 40));
  }
  sup.shutdown();
  assert.deepEqual(await sup.exited, { kind: 'normal' });
});

test('escalation: a nested supervisor that gives up is restarted by its parent', async () => {
  const { runtime } = newRuntime();
  const inner = supervisorSpec(options([worker('n.w')], { id: 'inner', intensity: 0 }));
  const outer = new Supervisor(options([inner, worker('n.sibling')], { id: 'outer' }), runtime);
  await outer.start();
  const sibling = ref(runtime, 'n.sibling');
  ref(runtime, 'n.w')!.send({ type: 'boom' });
  await waitFor(() => restarts(runtime, 'inner') === 1, { what: 'inner supervisor restart' });
  await waitFor(() => ref(runtime, 'n.w')?.getSnapshot().status === 'active', { what: 'worker back' });
  assert.equal(ref(runtime, 'n.sibling'), sibling, 'the outer sibling kept running');
  outer.shutdown();
  assert.deepEqual(await outer.exited, { kind: 'normal' });
});

/** A hand-written child that records when it is asked to stop, and can ignore the request. */
function recordingChild(id: string, log: string[], { ignoreShutdown = false, shutdownTimeoutMs = 1_000 } = {}): ChildSpec {
  return {
    id,
    shutdownTimeoutMs,
    start(): ChildHandle {
      let settle!: (reason: ExitReason) => void;
      const exited = new Promise<ExitReason>((resolve) => (settle = resolve));
      log.push(`start ${id}`);
      return {
        exited,
        shutdown() {
          log.push(`shutdown ${id}`);
          if (!ignoreShutdown) setTimeout(() => settle({ kind: 'normal' }), 5);
        },
        kill() {
          log.push(`kill ${id}`);
          settle({ kind: 'killed' });
        },
      };
    },
  };
}

test('children start in spec order and shut down in reverse order, each finishing before the next', async () => {
  const { runtime } = newRuntime();
  const log: string[] = [];
  const sup = new Supervisor(options(['a', 'b', 'c'].map((id) => recordingChild(id, log))), runtime);
  await sup.start();
  sup.shutdown();
  await sup.exited;
  assert.deepEqual(log, ['start a', 'start b', 'start c', 'shutdown c', 'shutdown b', 'shutdown a']);
});

test('a child that ignores shutdown is killed at its timeout, and shutdown goes on', async () => {
  const { runtime, lines } = newRuntime();
  const log: string[] = [];
  const sup = new Supervisor(
    options([recordingChild('a', log), recordingChild('slow', log, { ignoreShutdown: true, shutdownTimeoutMs: 30 }), recordingChild('c', log)]),
    runtime,
  );
  await sup.start();
  const started = Date.now();
  sup.shutdown();
  await sup.exited;
  assert.deepEqual(log.slice(3), ['shutdown c', 'shutdown slow', 'kill slow', 'shutdown a']);
  assert.ok(Date.now() - started >= 30, 'waited for the timeout');
  assert.ok(lines.some((l) => l.msg === 'child ignored shutdown; killing it' && l.child === 'slow'));
});

test('an XState worker that ignores system.shutdown is stopped at its timeout', async () => {
  const { runtime } = newRuntime();
  const sup = new Supervisor(options([actorChild({ systemId: 's.stubborn', logic: () => stubbornMachine, shutdownTimeoutMs: 20 })]), runtime);
  await sup.start();
  const actor = ref(runtime, 's.stubborn')!;
  sup.shutdown();
  await sup.exited;
  assert.equal(actor.getSnapshot().status, 'stopped');
  assert.equal(ref(runtime, 's.stubborn'), undefined);
});

test('a child that fails to start stops the ones already started, and start() rejects', async () => {
  const { runtime } = newRuntime();
  const log: string[] = [];
  const failing: ChildSpec = {
    id: 'bad',
    start() {
      throw new Error('cannot bind');
    },
  };
  const sup = new Supervisor(options([recordingChild('a', log), failing, recordingChild('c', log)]), runtime);
  await assert.rejects(sup.start(), (error: unknown) => error instanceof ChildStartError && error.childId === 'bad');
  assert.deepEqual(log, ['start a', 'shutdown a']);
  assert.equal((await sup.exited).kind, 'error');
});

test('duplicate child ids are refused', () => {
  const { runtime } = newRuntime();
  assert.throws(() => new Supervisor(options([worker('d.a'), worker('d.a')]), runtime), /duplicate child id d.a/);
});

test('a child that crashes while a later sibling is still starting is logged and restarted once start finishes', async () => {
  const { runtime, lines } = newRuntime();
  let release!: () => void;
  const slowStart: ChildSpec = {
    id: 'slow',
    async start() {
      await new Promise<void>((resolve) => (release = resolve));
      return { exited: new Promise<ExitReason>(() => {}), shutdown() {}, kill() {} } as ChildHandle;
    },
  };
  const sup = new Supervisor(options([worker('st.a'), slowStart]), runtime);
  const starting = sup.start();
  ref(runtime, 'st.a')!.send({ type: 'boom' });
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(lines.some((l) => l.msg === 'child crashed' && l.child === 'st.a'), 'the crash is logged at once');
  release();
  await starting;
  await waitFor(() => restarts(runtime, 'st.a') === 1, { what: 'deferred restart' });
  assert.equal(ref(runtime, 'st.a')?.getSnapshot().status, 'active');
});

test('a shutdown during a restart backoff cancels the restart instead of waiting it out', async () => {
  const { runtime } = newRuntime();
  const log: string[] = [];
  const sup = new Supervisor(options([worker('b.a'), recordingChild('b.z', log)], { backoff: { initialMs: 5_000, maxMs: 5_000 } }), runtime);
  await sup.start();
  ref(runtime, 'b.a')!.send({ type: 'boom' });
  await new Promise((resolve) => setTimeout(resolve, 10));
  const started = Date.now();
  sup.shutdown();
  assert.deepEqual(await sup.exited, { kind: 'normal' });
  assert.ok(Date.now() - started < 1_000, 'did not wait for the 5 s backoff');
  assert.equal(restarts(runtime, 'b.a'), 0, 'the crashed child was not started again');
  assert.deepEqual(log, ['start b.z', 'shutdown b.z']);
});

test('drawSupervisionTree draws children in start order, strategies, non-permanent restarts, and nesting under a last child', () => {
  const leaf = (id: string, restart?: 'transient' | 'temporary'): ChildSpec => ({ id, ...(restart ? { restart } : {}), start: () => ({ exited: new Promise<never>(() => undefined), shutdown() {}, kill() {} }) });
  const tree = supervisorSpec({
    id: 'svc',
    strategy: 'rest_for_one',
    intensity: 1,
    periodMs: 1_000,
    children: [leaf('svc.a'), supervisorSpec({ id: 'svc.group', strategy: 'one_for_one', intensity: 1, periodMs: 1_000, children: [leaf('svc.b', 'transient'), leaf('svc.c')] })],
  });
  assert.equal(drawSupervisionTree(tree), ['svc (rest_for_one)', '├── svc.a', '└── svc.group (one_for_one)', '    ├── svc.b [transient]', '    └── svc.c'].join('\n'));
});
