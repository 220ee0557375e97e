// The console's rpc-session machine (machines/console/rpc-session.machine.ts), applied with the pure
// initialTransition()/transition() exactly as the node client applies it: which node each attempt asks, when a GET
// stops failing over, and that a POST the node may have received is never sent to another node.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialTransition, transition } from 'xstate';
import { GET_ATTEMPTS, rpcSessionMachine, type RpcSessionEvent, type RpcSessionInput } from '../../../machines/console/rpc-session.machine.js';

/** Replays `events` and returns every asked node, the final state and the recorded failures. */
function replay(input: RpcSessionInput, events: readonly RpcSessionEvent[]) {
  let [snapshot] = initialTransition(rpcSessionMachine, input);
  const asked: string[] = [];
  for (const event of events) {
    assert.equal(snapshot.value, 'requesting', `event ${event.type} arrived after the session ended`);
    asked.push(snapshot.context.nodes[snapshot.context.attempt]!);
    [snapshot] = transition(rpcSessionMachine, snapshot, event);
  }
  return { asked, state: snapshot.value, failures: snapshot.context.failures };
}

const refused = (host: string): RpcSessionEvent => ({ type: 'node.failed', reason: `${host}: ECONNREFUSED`, neverSent: true });
const timedOut = (host: string): RpcSessionEvent => ({ type: 'node.failed', reason: `${host}: timed out`, neverSent: false });
const FIVE = ['a', 'b', 'c', 'd', 'e'];

describe('rpc-session machine', () => {
  test('no node configured: exhausted at once', () => {
    const [snapshot] = initialTransition(rpcSessionMachine, { method: 'GET', nodes: [] });
    assert.equal(snapshot.value, 'exhausted');
    assert.equal(snapshot.status, 'done');
  });

  test('a GET fails over in order and stops after GET_ATTEMPTS nodes', () => {
    assert.equal(GET_ATTEMPTS, 3);
    const answered = replay({ method: 'GET', nodes: FIVE }, [timedOut('a'), refused('b'), { type: 'node.answered' }]);
    assert.deepEqual(answered, { asked: ['a', 'b', 'c'], state: 'answered', failures: ['a: timed out', 'b: ECONNREFUSED'] });
    const exhausted = replay({ method: 'GET', nodes: FIVE }, [timedOut('a'), timedOut('b'), timedOut('c')]);
    assert.deepEqual(exhausted.asked, ['a', 'b', 'c']);
    assert.equal(exhausted.state, 'exhausted');
    assert.equal(exhausted.failures.at(-1), 'c: timed out');
  });

  test('a GET with fewer nodes than attempts asks each node once', () => {
    const result = replay({ method: 'GET', nodes: ['a', 'b'] }, [timedOut('a'), timedOut('b')]);
    assert.deepEqual(result.asked, ['a', 'b']);
    assert.equal(result.state, 'exhausted');
  });

  test('a POST moves on only past nodes that never received it, across every node', () => {
    const delivered = replay({ method: 'POST', nodes: FIVE }, [refused('a'), refused('b'), refused('c'), { type: 'node.answered' }]);
    assert.deepEqual(delivered.asked, ['a', 'b', 'c', 'd'], 'POSTs are not limited to GET_ATTEMPTS: a refused connection delivered nothing');
    assert.equal(delivered.state, 'answered');
    const allRefused = replay({ method: 'POST', nodes: ['a', 'b'] }, [refused('a'), refused('b')]);
    assert.equal(allRefused.state, 'exhausted');
  });

  test('a POST the node may have received is never repeated: outcome unknown', () => {
    const result = replay({ method: 'POST', nodes: FIVE }, [refused('a'), timedOut('b')]);
    assert.deepEqual(result.asked, ['a', 'b']);
    assert.equal(result.state, 'outcomeUnknown');
    assert.deepEqual(result.failures, ['a: ECONNREFUSED', 'b: timed out']);
  });

  test('an answer ends the session on the first node', () => {
    assert.deepEqual(replay({ method: 'POST', nodes: FIVE }, [{ type: 'node.answered' }]), { asked: ['a'], state: 'answered', failures: [] });
  });
});
