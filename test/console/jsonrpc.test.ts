// The JSON-RPC envelope (src/console/jsonrpc.ts; notes C.1, F.11): validation, errors, batches, notifications and
// the original's two calling conventions, over a small method table.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answerBody, MAX_BATCH, type MethodTable, type RpcMethod } from '../../src/console/jsonrpc.js';

const calls: unknown[] = [];
const methods: MethodTable = new Map<string, RpcMethod>([
  ['nodeHeight', { style: 'array', call: async () => 42 }],
  ['echo', { style: 'array', call: async (params) => params }],
  ['getBlock', { style: 'array', call: async (params) => {
    if (!(params as unknown[])[0]) throw new Error("Missing parameter 'id'");
    return { id: (params as unknown[])[0] };
  } }],
  ['sendTokens', { style: 'object', call: async (params) => {
    calls.push(params);
    if (!(params as Record<string, unknown>).address) throw new Error("Missing parameter 'address'");
    return 'tx-1';
  } }],
  ['nothing', { style: 'array', call: async () => undefined }],
]);
const signal = new AbortController().signal;
const answer = (body: unknown) => answerBody(typeof body === 'string' ? body : JSON.stringify(body), methods, signal, (error) => (error as Error).message);

describe('JSON-RPC envelope', () => {
  test('a result echoes string and number ids; undefined becomes null', async () => {
    assert.deepEqual(await answer({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 1 }), { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: 1, result: 42 } });
    assert.deepEqual(await answer({ jsonrpc: '2.0', method: 'nothing', params: [], id: 'a' }), { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: 'a', result: null } });
  });

  test('array-style methods answer the params quirk as a result, omitted params included (spec B §7)', async () => {
    for (const params of [undefined, { a: 1 }]) {
      const got = await answer({ jsonrpc: '2.0', method: 'nodeHeight', params, id: 7 });
      assert.deepEqual(got, { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: 7, result: { success: false, error: '"params" parameter should be an array' } } });
    }
  });

  test('a thrown error is code 501 "Error: …"; object-style methods given an array miss their parameters', async () => {
    assert.deepEqual(await answer({ jsonrpc: '2.0', method: 'getBlock', params: [], id: 2 }), {
      kind: 'json',
      status: 200,
      body: { jsonrpc: '2.0', id: 2, error: { code: 501, message: "Error: Missing parameter 'id'" } },
    });
    const got = await answer({ jsonrpc: '2.0', method: 'sendTokens', params: ['U1', '5'], id: 3 });
    assert.deepEqual(got, { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: 3, error: { code: 501, message: "Error: Missing parameter 'address'" } } });
  });

  test('invalid requests are -32600 with id null; unknown methods -32601; unparsable bodies 400 -32700', async () => {
    for (const bad of [{ jsonrpc: '2.0', method: 'nodeHeight', params: 'x', id: 1 }, { method: 'nodeHeight', id: 1 }, { jsonrpc: '2.0', method: 5, id: 1 }, { jsonrpc: '2.0', method: 'x', id: {} }, 7]) {
      assert.deepEqual(await answer(bad), { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } } });
    }
    assert.deepEqual(await answer({ jsonrpc: '2.0', method: 'toString', id: 9 }), { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: 9, error: { code: -32601, message: 'Method not found' } } });
    assert.deepEqual(await answer('{"jsonrpc": '), { kind: 'json', status: 400, body: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } } });
  });

  test('notifications run without an answer; batches answer the others in order; empty and oversized batches are invalid', async () => {
    calls.length = 0;
    assert.deepEqual(await answer({ jsonrpc: '2.0', method: 'sendTokens', params: { address: 'U1' } }), { kind: 'empty' });
    assert.equal(calls.length, 1, 'the notification ran');
    const batch = await answer([
      { jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 1 },
      { jsonrpc: '2.0', method: 'nodeHeight', params: [], id: null },
      { jsonrpc: '2.0', method: 'echo', params: ['x'], id: 'b' },
    ]);
    assert.deepEqual(batch, { kind: 'json', status: 200, body: [{ jsonrpc: '2.0', id: 1, result: 42 }, { jsonrpc: '2.0', id: 'b', result: ['x'] }] });
    assert.deepEqual(await answer([{ jsonrpc: '2.0', method: 'nodeHeight', params: [] }]), { kind: 'empty' });
    for (const size of [0, MAX_BATCH + 1]) {
      const many = Array.from({ length: size }, (_, i) => ({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: i }));
      assert.deepEqual(await answer(many), { kind: 'json', status: 200, body: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } } });
    }
  });
});
