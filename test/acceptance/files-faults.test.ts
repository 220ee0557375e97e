// The files cluster under real network faults (issue 29): three built-CLI nodes, each in its own network namespace,
// with faults from a seeded plan (test/support/faults/): a partition, a 1+2 split, a one-way cut (nftables), latency,
// stalls and resets through a TCP fault proxy, kill -9 during an upload, a copy, a repair batch or a GC run, a
// graceful restart with the store, a node at its disk reserve. After each run the network heals, repair and GC run,
// and fault-run.ts checks the invariants it lists. `npm run faults -- --seeds N` runs random seeds outside npm test.
//
// Replay a seed here with ADM_FAULT_SEEDS (comma-separated; those runs take every fault kind at random):
//   ADM_FAULT_SEEDS=1234 node --import ./dist/src/polyfill.js --test dist/test/acceptance/files-faults.test.js
//
// Needs root and network namespaces: skipped loudly without them unless CI is set (test/support/system-packages.ts).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { FAULT_KINDS, planRun, describePlan, type FaultKind } from '../support/faults/fault-plan.js';
import { FaultProxy } from '../support/faults/fault-proxy.js';
import { abortActiveRuns, runFaultPlan } from '../support/faults/fault-run.js';
import { FAULT_PREFIX, FaultNetwork, ipBinary, nftBinary, sweepLeftovers } from '../support/faults/network.js';
import { netnsPackage, nftablesPackage, skipWithout } from '../support/system-packages.js';

/**
 * The fixed runs of `npm test`: each seed takes its three kinds in order, so together they inject every kind once
 * (checked below); the seed decides the targets, timings, cluster variant and workload.
 */
const FIXED_RUNS: ReadonlyArray<{ seed: number; kinds: readonly FaultKind[] }> = [
  { seed: 2, kinds: ['partition', 'kill', 'latency'] },
  { seed: 1121, kinds: ['split', 'reserve', 'stall'] },
  { seed: 7, kinds: ['one-way', 'restart', 'reset'] },
];
/**
 * Random seeds of `npm run faults` that found a bug, replayed as the script ran them (every kind at random) once the
 * bug was fixed. 637360666: a download whose file's only peers were cut off answered 500 after 9 s instead of 408
 * after its 4 s discovery deadline (helia noticed the deadline's signal seconds late; actors/files/content.actor.ts).
 */
const REPLAYED_SEEDS: readonly number[] = [637360666];
/** A run takes about a minute on two loaded cores; the bound only stops a run that hangs. */
const RUN_TIMEOUT_MS = 240_000;

const requested = process.env.ADM_FAULT_SEEDS?.split(',').map((seed) => Number(seed.trim())).filter((seed) => Number.isSafeInteger(seed));

describe('the fault proxy (no namespaces needed)', () => {
  const servers: Array<{ close(): void }> = [];
  after(() => {
    for (const server of servers) server.close();
  });

  /** An echo server on loopback and a proxy in front of it. */
  async function echoBehindProxy(): Promise<{ proxy: FaultProxy; open(): Promise<Socket> }> {
    // The proxy resets the echo's side too: its sockets' ECONNRESET is expected, not a failure.
    const echo = createServer((socket) => socket.on('error', () => {}).pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    servers.push(echo);
    const proxy = await FaultProxy.start('127.0.0.1', { host: '127.0.0.1', port: (echo.address() as AddressInfo).port });
    servers.push({ close: () => void proxy.close() });
    const open = () =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(proxy.port, '127.0.0.1', () => resolve(socket));
        socket.once('error', reject);
        // A reset socket may report more than one error (the read and a write after it): the tests await the first.
        socket.on('error', () => {});
      });
    return { proxy, open };
  }

  const roundTrip = (socket: Socket, text: string) =>
    new Promise<{ text: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      let got = '';
      const onData = (chunk: Buffer) => {
        got += chunk.toString();
        if (got.length >= text.length) {
          socket.off('data', onData);
          resolve({ text: got, ms: Date.now() - started });
        }
      };
      socket.on('data', onData);
      socket.once('error', reject);
      socket.write(text);
    });

  it('passes bytes through, adds latency each way, holds them in a stall and lets them go after it', async () => {
    const { proxy, open } = await echoBehindProxy();
    const socket = await open();
    assert.equal((await roundTrip(socket, 'hello')).text, 'hello');
    proxy.setMode({ kind: 'latency', ms: 150 });
    const slow = await roundTrip(socket, 'slow');
    assert.equal(slow.text, 'slow');
    assert.ok(slow.ms >= 280, `two delayed hops take at least 2 × 150 ms (took ${slow.ms} ms)`);
    proxy.setMode({ kind: 'stall' });
    const stalled = roundTrip(socket, 'held');
    const early = await Promise.race([stalled.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('held'), 400))]);
    assert.equal(early, 'held', 'nothing passes while stalled');
    proxy.setMode({ kind: 'pass' });
    assert.equal((await stalled).text, 'held', 'the held bytes arrive once the stall ends, nothing lost');
    socket.destroy();
  });

  it('resets a connection mid-transfer after the given bytes (an RST, not a FIN), and every open one at once', async () => {
    const { proxy, open } = await echoBehindProxy();
    const idle = await open();
    const busy = await open();
    proxy.setMode({ kind: 'reset', afterBytes: 10_000 });
    const failure = new Promise<string>((resolve) => busy.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message)));
    busy.write(Buffer.alloc(50_000, 1));
    assert.equal(await failure, 'ECONNRESET');
    assert.ok(!idle.destroyed, 'a connection that carried nothing is still open');
    const idleFailure = new Promise<string>((resolve) => idle.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message)));
    proxy.setMode({ kind: 'reset', afterBytes: 0 });
    assert.equal(await idleFailure, 'ECONNRESET');
    assert.equal(proxy.open, 0);
    assert.ok(proxy.stats.resets >= 2);
  });
});

const netns = skipWithout(netnsPackage(), 'the files fault suite (test/acceptance/files-faults.test.ts)');

describe('files cluster under network faults (real processes in network namespaces)', { skip: netns }, () => {
  // A run that outlived its test (a timeout) is ended here: its nodes killed by pid, its network and mounts deleted.
  after(() => abortActiveRuns());

  // nftables only serves the one-way cut: without it that fault is skipped loudly; with CI set it is required.
  const nftSkip = skipWithout(nftablesPackage(), 'the one-way cut of the files fault suite (the other faults run)');
  const usable = (kinds: readonly FaultKind[]) => (nftSkip ? kinds.filter((kind) => kind !== 'one-way') : kinds);

  it('can cut one direction of a path (nftables)', { skip: nftSkip }, () => {
    // Reached without nft only when CI is set: the one-way cut must then run, so this fails.
    assert.ok(nftBinary(), 'nft is not installed: apt-get install -y nftables (.ci/run does this on CI)');
  });

  it('creates its namespaces, links and bridges and deletes every one; a dead run’s leftovers are swept', () => {
    const network = FaultNetwork.create(['one', 'two']);
    let destroyed = false;
    try {
      assert.equal(network.leftovers().length, 2 + 2 * 3, 'two bridges, and per node a namespace and two links');
      assert.match(network.nodes[0]!.namespace, new RegExp(`^${FAULT_PREFIX}-`));
    } finally {
      network.destroy();
      destroyed = true;
    }
    assert.ok(destroyed);
    assert.deepEqual(network.leftovers(), []);

    // A namespace named for a process that is gone, as a harness killed mid-run would leave it.
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    const stale = `${FAULT_PREFIX}-${gone.toString(36)}-left`;
    assert.equal(spawnSync(ipBinary()!, ['netns', 'add', stale]).status, 0);
    assert.ok(sweepLeftovers().includes(`netns ${stale}`));
    assert.ok(!String(spawnSync(ipBinary()!, ['netns', 'list']).stdout).includes(stale));
  });

  if (requested?.length) {
    for (const seed of requested) {
      it(`seed ${seed} (ADM_FAULT_SEEDS)`, { timeout: RUN_TIMEOUT_MS }, async () => {
        const result = await runFaultPlan(planRun(seed, { kinds: usable(FAULT_KINDS) }), { log: (line) => process.stderr.write(`[faults ${seed}] ${line}\n`) });
        assert.deepEqual(result.violations, [], `${result.plan}\n${result.summary}\nlogs: ${result.keptDir}`);
      });
    }
    return;
  }

  it('the fixed runs inject every fault kind', () => {
    assert.deepEqual(new Set(FIXED_RUNS.flatMap((run) => run.kinds)), new Set(FAULT_KINDS));
    for (const run of FIXED_RUNS) {
      const plan = planRun(run.seed, { kinds: run.kinds, ordered: true });
      assert.deepEqual(plan.faults.map((fault) => fault.kind).slice(0, run.kinds.length), run.kinds, describePlan(plan));
    }
  });

  for (const run of FIXED_RUNS) {
    it(`seed ${run.seed}: ${run.kinds.join(', ')}`, { timeout: RUN_TIMEOUT_MS }, async () => {
      const plan = planRun(run.seed, { kinds: usable(run.kinds), ordered: true });
      const lines: string[] = [];
      const result = await runFaultPlan(plan, { log: (line) => lines.push(line) });
      assert.deepEqual(
        result.violations,
        [],
        [
          result.plan,
          result.summary,
          ...lines,
          `node logs: ${result.keptDir}`,
          `replay: npm run faults -- --seed ${run.seed} --kinds ${run.kinds.join(',')} --ordered`,
        ].join('\n'),
      );
    });
  }

  for (const seed of REPLAYED_SEEDS) {
    it(`seed ${seed} (found by npm run faults, replayed)`, { timeout: RUN_TIMEOUT_MS }, async () => {
      const lines: string[] = [];
      const result = await runFaultPlan(planRun(seed, { kinds: usable(FAULT_KINDS) }), { log: (line) => lines.push(line) });
      assert.deepEqual(result.violations, [], [result.plan, result.summary, ...lines, `node logs: ${result.keptDir}`, `replay: npm run faults -- --seed ${seed}`].join('\n'));
    });
  }
});
