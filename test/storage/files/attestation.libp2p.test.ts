// The health attestation protocol `/adamant/health/1.0.0` between real libp2p nodes on 127.0.0.1
// (storage/files/attestation.libp2p.ts; docs/specs/files-node.md §2.3 rules 5-7; docs/notes/files-node.md A.6 "Attestation
// protocol", C24), and `files.health` counting it.
//
// Peer ids come from a first boot of each store (the identity is kept in the store), and libp2p listens on ports
// picked before the start, so one `nodes` list names A (the asker), B (the responder), C (booted once, then never
// again: a stopped peer whose port refuses) and a silent peer (a local TCP server that accepts and never answers,
// so a dial to it hangs until the attestation timeout).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { createActor, SimulatedClock } from 'xstate';
import { systemClock, type Clock } from '../../../src/clock.js';
import {
  attestRound,
  registerAttestationResponder,
  unregisterAttestationResponder,
  type AttestationPeer,
  type ResponderOptions,
} from '../../../storage/files/attestation.libp2p.js';
import { healthLogic } from '../../../actors/files/health.actor.js';
import { NodeHolder, type FilesNode } from '../../../actors/files/node.js';
import { askPeer, readFrame } from '../../../storage/files/protocol-stream.libp2p.js';
import { startFilesNode, stopFilesNode } from '../../../actors/files/runtime.actor.js';
import { StartupSignal } from '../../../actors/files/startup.js';
import { membershipVersion, roundStart, type HealthObject, type HealthSettings } from '../../../src/files/health.js';
import { HEALTH_MAX_FRAME_BYTES, HEALTH_PROTOCOL, type AttestationMessage } from '../../../src/files/wire.js';
import { freePort } from '../../support/cli.js';
import { captureLogger, type CapturedLogger } from '../../support/logger.js';
import { watchPromise, waitFor } from '../../support/wait.js';
import { firstBootPeerId } from '../../support/files-cluster.js';

const INTERVAL = 1_000;
const SKEW = 10_000;
/** Short, so the silent peer's hang stays quick; loopback answers take milliseconds. */
const TIMEOUT = 1_500;
/** Every test's own bound, well above one attestation round. */
const TEST_TIMEOUT = 20_000;
/** For the SimulatedClock tests: a minute on the wall clock, so only the simulated clock can end a wait in a test. */
const SIMULATED_TIMEOUT = 60_000;

/** A SimulatedClock that also lists the delays of the timers set on it, so a test sees when a deadline is armed. */
function observedClock(): { clock: Clock; simulated: SimulatedClock; armed: number[] } {
  const simulated = new SimulatedClock();
  simulated.set(Date.now());
  const armed: number[] = [];
  const clock: Clock = {
    now: () => simulated.now(),
    setTimeout: (fn, ms) => {
      armed.push(ms);
      return simulated.setTimeout(fn, ms);
    },
    clearTimeout: (id) => simulated.clearTimeout(id as number),
  };
  return { clock, simulated, armed };
}

describe('health attestations between real libp2p nodes', { timeout: 120_000 }, () => {
  let home: string;
  let silent: Server;
  const sockets = new Set<Socket>();
  /** Connections the silent peer has accepted so far: a dial to it is in flight once this grows. */
  let silentConnections = 0;
  let a: FilesNode | undefined;
  let b: FilesNode | undefined;
  let peers: { a: AttestationPeer; b: AttestationPeer; c: AttestationPeer; silent: AttestationPeer };
  /** The cluster's membership: A and B. */
  let mv: string;
  let bLog: CapturedLogger;

  const responder = (overrides: Partial<ResponderOptions> = {}): ResponderOptions => ({
    nodes: [peers.a, peers.b],
    clockSkewToleranceMs: SKEW,
    timeoutMs: TIMEOUT,
    membershipVersion: mv,
    intervalMs: INTERVAL,
    clock: systemClock,
    logger: bLog.logger,
    ...overrides,
  });
  const requestNow = (membership = mv): AttestationMessage => {
    const now = Date.now();
    return { round: roundStart(now, INTERVAL), timestamp: now, membershipVersion: membership };
  };
  const askFromA = (nodes: readonly AttestationPeer[], request = requestNow(), signal = AbortSignal.timeout(TEST_TIMEOUT)) =>
    attestRound({ libp2p: a!.libp2p, self: a!.peerId, nodes, request, clockSkewToleranceMs: SKEW, timeoutMs: TIMEOUT, clock: systemClock }, signal);

  before(async () => {
    home = mkdtempSync(join(tmpdir(), 'files-attest-'));
    silent = createServer((socket) => {
      silentConnections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as { port: number }).port;
    const silentId = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString();

    const aId = await firstBootPeerId(join(home, 'a'));
    const bId = await firstBootPeerId(join(home, 'b'));
    const cId = await firstBootPeerId(join(home, 'c'));
    const [aPort, bPort, cPort] = [await freePort(), await freePort(), await freePort()];
    peers = {
      a: { peerId: aId, multiAddr: `/ip4/127.0.0.1/tcp/${aPort}/p2p/${aId}` },
      b: { peerId: bId, multiAddr: `/ip4/127.0.0.1/tcp/${bPort}/p2p/${bId}` },
      c: { peerId: cId, multiAddr: `/ip4/127.0.0.1/tcp/${cPort}/p2p/${cId}` },
      silent: { peerId: silentId, multiAddr: `/ip4/127.0.0.1/tcp/${silentPort}/p2p/${silentId}` },
    };
    mv = membershipVersion([aId, bId]);
    bLog = captureLogger('debug');
    const allow = Object.values(peers).map((peer) => peer.multiAddr);
    a = await startFilesNode({ storeDirectory: join(home, 'a'), listen: [`/ip4/127.0.0.1/tcp/${aPort}`], allow, holder: new NodeHolder(), logger: captureLogger('warn').logger });
    b = await startFilesNode({ storeDirectory: join(home, 'b'), listen: [`/ip4/127.0.0.1/tcp/${bPort}`], allow, holder: new NodeHolder(), logger: bLog.logger });
    assert.equal(a.peerId, aId, 'the identity kept in the store');
    assert.equal(b.peerId, bId);
  });

  after(async () => {
    if (b) await stopFilesNode(b);
    if (a) await stopFilesNode(a);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    rmSync(home, { recursive: true, force: true });
  });

  it('a peer of the same membership attests the round; the asker never asks itself', { timeout: TEST_TIMEOUT }, async () => {
    await registerAttestationResponder(b!.libp2p, responder());
    assert.equal(await askFromA([peers.a, peers.b]), 1);
    // The answer itself: the round echoed, B's clock, the shared membership.
    const request = requestNow();
    const raw = (await askPeer(a!.libp2p, multiaddr(peers.b.multiAddr), HEALTH_PROTOCOL, request, HEALTH_MAX_FRAME_BYTES, AbortSignal.timeout(TIMEOUT))) as AttestationMessage;
    assert.equal(raw.round, request.round);
    assert.equal(raw.membershipVersion, mv);
    assert.ok(Math.abs(raw.timestamp - Date.now()) < SKEW);
    // Only A's own entry: nothing to ask.
    assert.equal(await askFromA([peers.a]), 0);
  });

  it('a responder under another membership version does not attest (nor does an asker under another one)', { timeout: TEST_TIMEOUT }, async () => {
    try {
      await registerAttestationResponder(b!.libp2p, responder({ membershipVersion: membershipVersion([peers.a.peerId, peers.b.peerId, peers.c.peerId]) }));
      assert.equal(await askFromA([peers.a, peers.b]), 0);
      // Its refusal is an answer, not a hang.
      const refusal = await askPeer(a!.libp2p, multiaddr(peers.b.multiAddr), HEALTH_PROTOCOL, requestNow(), HEALTH_MAX_FRAME_BYTES, AbortSignal.timeout(TIMEOUT));
      assert.deepEqual(refusal, { ok: false, error: 'not attested' });
    } finally {
      await registerAttestationResponder(b!.libp2p, responder());
    }
    assert.equal(await askFromA([peers.a, peers.b], requestNow(membershipVersion([peers.a.peerId]))), 0);
    assert.equal(await askFromA([peers.a, peers.b]), 1, 'the same membership attests again');
  });

  it('a responder whose nodes list does not contain the asker does not attest', { timeout: TEST_TIMEOUT }, async () => {
    try {
      await registerAttestationResponder(b!.libp2p, responder({ nodes: [peers.b, peers.c] }));
      assert.equal(await askFromA([peers.a, peers.b]), 0);
    } finally {
      await registerAttestationResponder(b!.libp2p, responder());
    }
  });

  it('a malformed request aborts the stream; the responder logs an error name, never a peer id or an address', { timeout: TEST_TIMEOUT }, async () => {
    const before = bLog.lines.length;
    await assert.rejects(askPeer(a!.libp2p, multiaddr(peers.b.multiAddr), HEALTH_PROTOCOL, { round: 'now' }, HEALTH_MAX_FRAME_BYTES, AbortSignal.timeout(TIMEOUT)));
    const line = await waitFor(() => bLog.lines.slice(before).find((l) => l['msg'] === 'attestation request dropped'), { timeoutMs: TIMEOUT, what: 'the dropped-request line' });
    assert.equal(line['error'], 'ProtocolMessageError');
    const text = JSON.stringify(bLog.lines);
    for (const secret of [peers.a.peerId, peers.b.peerId, '/ip4/']) assert.ok(!text.includes(secret), `no ${secret} in B's log`);
  });

  it('a stopped peer and a silent peer are not counted, and the round ends within the timeout', { timeout: TEST_TIMEOUT }, async () => {
    const started = Date.now();
    assert.equal(await askFromA([peers.a, peers.b, peers.c, peers.silent]), 1, 'only B');
    const elapsed = Date.now() - started;
    // The silent peer holds the round until the timeout, and no longer (the asks run in parallel).
    assert.ok(elapsed >= TIMEOUT - 50, `the silent peer was waited for (${elapsed} ms)`);
    assert.ok(elapsed < TIMEOUT + 1_500, `bounded by the attestation timeout (${elapsed} ms)`);
  });

  it('an unregistered responder is not counted; the caller\'s signal ends a round early', { timeout: TEST_TIMEOUT }, async () => {
    await unregisterAttestationResponder(b!.libp2p);
    try {
      assert.equal(await askFromA([peers.a, peers.b]), 0);
    } finally {
      await registerAttestationResponder(b!.libp2p, responder());
    }
    const started = Date.now();
    assert.equal(await askFromA([peers.a, peers.silent], requestNow(), AbortSignal.timeout(200)), 0);
    assert.ok(Date.now() - started < TIMEOUT, 'the signal, not the timeout, ended it');
  });

  it("the asker's timeout runs on its clock: a silent peer holds the round until that clock passes it", { timeout: TEST_TIMEOUT }, async () => {
    const { clock, simulated } = observedClock();
    const before = silentConnections;
    const round = watchPromise(
      attestRound(
        { libp2p: a!.libp2p, self: a!.peerId, nodes: [peers.a, peers.silent], request: requestNow(), clockSkewToleranceMs: SKEW, timeoutMs: SIMULATED_TIMEOUT, clock },
        AbortSignal.timeout(TEST_TIMEOUT),
      ),
      'the round',
    );
    await waitFor(() => silentConnections > before, { what: 'the dial to reach the silent peer' });
    simulated.increment(SIMULATED_TIMEOUT - 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(round.settled, false, 'the round waits for the silent peer short of the timeout');
    simulated.increment(1);
    assert.equal(await round.settle(), 0, 'the silent peer is not counted');
  });

  it("the responder's timeout runs on its clock: a request that never arrives is dropped once that clock passes it", { timeout: TEST_TIMEOUT }, async () => {
    const { clock, simulated, armed } = observedClock();
    await registerAttestationResponder(b!.libp2p, responder({ clock, timeoutMs: SIMULATED_TIMEOUT }));
    const before = bLog.lines.length;
    const dropped = () => bLog.lines.slice(before).filter((line) => line['msg'] === 'attestation request dropped');
    // A's stream is open and says nothing: B's handler waits for a request frame.
    const stream = await a!.libp2p.dialProtocol(multiaddr(peers.b.multiAddr), HEALTH_PROTOCOL, { signal: AbortSignal.timeout(TEST_TIMEOUT) });
    try {
      const answer = watchPromise(readFrame(stream, HEALTH_MAX_FRAME_BYTES, AbortSignal.timeout(TEST_TIMEOUT)), "A's read of an answer");
      await waitFor(() => armed.includes(SIMULATED_TIMEOUT), { what: "B's handler to arm its deadline" });
      simulated.increment(SIMULATED_TIMEOUT - 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(answer.settled, false, 'the stream is still open short of the timeout');
      assert.deepEqual(dropped(), []);
      simulated.increment(1);
      await assert.rejects(answer.settle(), 'B aborted the stream');
      const [line] = await waitFor(() => dropped().length > 0 && dropped(), { timeoutMs: 2_000, what: 'the dropped-request line' });
      assert.equal(line!['error'], 'TimeoutError');
    } finally {
      stream.abort(new Error('test over'));
      await registerAttestationResponder(b!.libp2p, responder());
    }
  });

  describe('files.health on node A', () => {
    const SETTINGS: HealthSettings = { intervalMs: INTERVAL, maxCheckpointAgeMs: 3 * INTERVAL, storageMaxAgeMs: 60_000, repairMaxAgeMs: 3_600_000, requiredPeerCount: 1, diskReserveBytes: 0 };

    function startHealth(settings: HealthSettings) {
      const holder = new NodeHolder();
      holder.set(a!);
      const startup = new StartupSignal();
      startup.complete({ intentsResolved: 0, backfilled: 0, skipped: 0 });
      const actor = createActor(
        healthLogic({
          settings,
          membershipVersion: mv,
          network: holder.network,
          state: holder.actorState,
          startup,
          readStorage: async () => ({ measuredAt: Date.now(), blockstoreBytes: 0, datastoreBytes: 0, availableBytes: 1e12, pinnedBytes: 0, reclaimableBytes: 0, files: { temporary: 0, confirmed: 0, expired: 0 }, stagedReplicas: 0 }),
          clock: systemClock,
          logger: captureLogger('warn').logger,
          meta: { version: '0.0.0-test', startedAt: Date.now() },
          attestation: { nodes: [peers.a, peers.b], clockSkewToleranceMs: SKEW, timeoutMs: TIMEOUT },
        }),
        { clock: systemClock },
      );
      actor.start();
      const read = () => new Promise<HealthObject>((resolve, reject) => actor.send({ type: 'health.read', reply: { resolve, reject, signal: AbortSignal.timeout(TIMEOUT) } }));
      return { actor, read };
    }

    it('with one peer required, B\'s attestation makes A ready with attestedPeers 1; A answers B while its actor runs', { timeout: TEST_TIMEOUT }, async () => {
      const h = startHealth(SETTINGS);
      try {
        const ready = await waitFor(async () => {
          const health = await h.read();
          return health.state === 'ready' ? health : undefined;
        }, { timeoutMs: 10_000, intervalMs: 50, what: 'A ready on B\'s attestation' });
        assert.equal(ready.checks.peerAttestations, true);
        assert.deepEqual(ready.membership, { version: mv, requiredPeers: 1, attestedPeers: 1 });
        // The actor registered A's responder: B's round is attested by A.
        const fromB = await attestRound(
          { libp2p: b!.libp2p, self: b!.peerId, nodes: [peers.a, peers.b], request: requestNow(), clockSkewToleranceMs: SKEW, timeoutMs: TIMEOUT, clock: systemClock },
          AbortSignal.timeout(TEST_TIMEOUT),
        );
        assert.equal(fromB, 1);
      } finally {
        h.actor.stop();
      }
      // Stopping the actor took the responder down with it.
      const afterStop = await attestRound(
        { libp2p: b!.libp2p, self: b!.peerId, nodes: [peers.a, peers.b], request: requestNow(), clockSkewToleranceMs: SKEW, timeoutMs: TIMEOUT, clock: systemClock },
        AbortSignal.timeout(TEST_TIMEOUT),
      );
      assert.equal(afterStop, 0);
    });

    it('with no peer required, no peer is asked and attestedPeers is 0 (peerAttestations passes)', { timeout: TEST_TIMEOUT }, async () => {
      const libp2p = a!.libp2p;
      const original = libp2p.dialProtocol;
      let dials = 0;
      libp2p.dialProtocol = ((...args: Parameters<typeof original>) => {
        dials++;
        return original.apply(libp2p, args);
      }) as typeof original;
      const h = startHealth({ ...SETTINGS, requiredPeerCount: 0 });
      try {
        const ready = await waitFor(async () => {
          const health = await h.read();
          return health.state === 'ready' ? health : undefined;
        }, { timeoutMs: 10_000, intervalMs: 50, what: 'A ready without peers' });
        // Another attempt or two on the interval: still nothing asked.
        await new Promise((resolve) => setTimeout(resolve, INTERVAL + 200));
        assert.equal(ready.checks.peerAttestations, true);
        assert.deepEqual(ready.membership, { version: mv, requiredPeers: 0, attestedPeers: 0 });
        assert.equal(dials, 0, 'no attestation call');
      } finally {
        h.actor.stop();
        libp2p.dialProtocol = original;
      }
    });
  });
});
