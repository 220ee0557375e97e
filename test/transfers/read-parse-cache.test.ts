// The parsed query strings runRead keeps (src/transfers/read.ts ParsedQueryCache): a repeated query string gives the
// same statements and reply as its first parse, what does not come from the query string (method, Prefer, Accept,
// Range, relation) still shapes each read, a string that does not parse is refused every time, and strings past
// the cache's size still parse.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GatewayError } from '../../src/transfers/gateway-errors.js';
import { runRead, type ReadRequest } from '../../src/transfers/read.js';

function recorder() {
  const statements: string[] = [];
  const execute = async (text: string, values: readonly (string | null)[]) => {
    statements.push(`${text} -- ${JSON.stringify(values)}`);
    if (text.startsWith('EXPLAIN')) return [{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': 42 } }] }];
    return [{ body: '[{"a":1}]', page_count: '1', total: '7', more_rows: 'false' }];
  };
  return { statements, execute };
}

async function read(query: string, request: Partial<ReadRequest> = {}) {
  const { statements, execute } = recorder();
  const reply = await runRead({ method: 'GET', schema: 'public', relation: 'ethtxs', query, ...request }, {}, execute);
  return { reply, statements };
}

const QUERY = 'or=(txfrom.eq.0xAbC,txto.eq.0xAbC)&order=time.desc,txhash.desc&limit=25&select=time,txhash';

test('a repeated query string reads the same statements and gives the same reply', async () => {
  const first = await read(QUERY);
  for (let k = 0; k < 3; k++) assert.deepEqual(await read(QUERY), first);
  assert.match(first.statements[0]!, /LIMIT/);
  assert.equal(first.reply.headers['Content-Location'], '/ethtxs?limit=25&or=%28txfrom.eq.0xAbC%2Ctxto.eq.0xAbC%29&order=time.desc%2Ctxhash.desc&select=time%2Ctxhash');
});

test('the same query string with another method, Prefer, Range or relation is read as that request asks', async () => {
  const plain = await read(QUERY);
  const counted = await read(QUERY, { prefer: 'count=exact' });
  assert.match(counted.statements[0]!, /AS total/);
  assert.doesNotMatch(plain.statements[0]!, /AS total/);
  assert.equal(counted.reply.headers['Content-Range'], '0-0/7');
  const head = await read(QUERY, { method: 'HEAD' });
  assert.match(head.statements[0]!, /NULL::text AS body/);
  assert.equal(head.reply.body, '');
  const ranged = await read(QUERY, { range: '5-9' });
  assert.notEqual(ranged.statements[0], plain.statements[0]);
  const other = await read(QUERY, { relation: 'other' });
  assert.match(other.statements[0]!, /"public"\."other"/);
  assert.equal(other.reply.headers['Content-Location']!.startsWith('/other?'), true);
});

test('a query string that does not parse is refused every time', async () => {
  for (let k = 0; k < 3; k++) {
    await assert.rejects(read('order=time.sideways'), (error: unknown) => error instanceof GatewayError && error.code === 'PGRST100');
  }
});

test('more distinct strings than the cache holds, and long strings, still read correctly', async () => {
  for (let k = 0; k < 1_200; k += 1) {
    const { statements } = await read(`block=eq.${k}&limit=1`);
    assert.ok(statements[0]!.includes(`"block" = $1 LIMIT 1)`) && statements[0]!.endsWith(` -- ["${k}"]`), statements[0]);
  }
  const long = `txhash=in.(${Array.from({ length: 400 }, (_, k) => `0x${k}`).join(',')})`;
  assert.ok(long.length > 2048);
  for (let k = 0; k < 2; k++) assert.match((await read(long)).statements[0]!, /= ANY \(\$1\)/);
});
