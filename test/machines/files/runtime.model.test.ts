// Model-based test of the files runtime machine (machines/files/runtime.machine.ts): every path of its graph replayed
// on a real actor (test/support/model.ts). Effects: the peer id is adopted from the started node; the node is stopped
// on every way out, and a start still in flight when shutdown arrives is aborted.

import assert from 'node:assert/strict';
import { runtimeMachine } from '../../../machines/files/runtime.machine.js';
import { modelTest } from '../../support/model.js';

const PEER = '12D3KooWExamplePeer';

modelTest({
  machine: runtimeMachine,
  scenarios: [{ name: 'node' }],
  outputs: { startNode: [{ peerId: PEER }] },
  simplePaths: { maxStates: 10, maxPaths: 20 },
  effect: ({ index, after, invoked, before }) => {
    const srcs = invoked.map((f) => f.src);
    if (index === 0) assert.deepEqual(srcs, ['startNode'], 'the node is started at once');
    if (after.value === 'stopping') assert.deepEqual(srcs, ['stopNode'], 'entering stopping stops the node');
    if (before?.value === 'starting' && after.value === 'running') assert.equal(after.context.peerId, PEER, 'the started node’s peer id');
    else assert.equal(after.context.peerId, before?.context.peerId ?? null, 'only a finished start sets the peer id');
  },
});
