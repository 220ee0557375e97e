// The read gateway as a black box (spec A §4.1 rules, §7; notes F, H checks 1–42): HTTP requests to the running
// gateway (real wiring, gateway-only process as an operator would run it beside the indexer) over a real
// PostgreSQL 15 database migrated and seeded by the test. Expected answers come from filtering the seed in JS.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { TransferRow } from '../../../src/transfers/rows.js';
import { startPostgres, type PostgresCluster } from '../../support/postgres.js';
import { openSocket, rawRequest } from '../../support/raw-http.js';
import { postgresServerPackage, skipWithout } from '../../support/system-packages.js';
import { startTransfersNode, type TestTransfersNode } from '../../support/transfers-node.js';
import { seedTransfers } from '../../support/transfers-seed.js';
import { waitFor } from '../../support/wait.js';

// Checksummed addresses as the indexer stores them; queries use other letter cases on purpose.
const A = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const B = '0x1111111111111111111111111111111111111111';
const C = '0x2222222222222222222222222222222222222222';
const TOKEN = '0xDeaDBeef00000000000000000000000000000001';
const word = (address: string) => `000000000000000000000000${address.slice(2).toLowerCase()}`;
const amount = (n: bigint) => n.toString(16).padStart(64, '0');

/** Blocks 10–19; two transactions share each block's time. */
function seed(): TransferRow[] {
  const rows: TransferRow[] = [];
  let tx = 0;
  const add = (block: number, fields: Partial<TransferRow>) =>
    rows.push({
      time: 1_600_000_000 + block * 15,
      txfrom: A,
      txto: B,
      gas: '21000',
      gasprice: '2000000000',
      block,
      txhash: `0x${(++tx).toString(16).padStart(64, 'a')}`,
      value: '0',
      contract_to: '',
      contract_value: '',
      ...fields,
    });
  for (let block = 10; block < 20; block++) {
    add(block, { txfrom: A, txto: B, value: `${block}000000000000000000000` });
    add(block, { txfrom: block % 2 ? B : C, txto: block % 2 ? A : B, value: '1' });
  }
  add(12, { txfrom: A, txto: TOKEN, gas: '51000', contract_to: word(C), contract_value: amount(5n) });
  add(13, { txfrom: B, txto: TOKEN, gas: '51000', contract_to: word(A), contract_value: amount(7n) });
  add(14, { txfrom: A, txto: null, gas: '90000', value: '3' });
  return rows;
}

const ROWS = seed();
const KEYS = ['time', 'txfrom', 'txto', 'gas', 'gasprice', 'block', 'txhash', 'value', 'contract_to', 'contract_value'];
const same = (x: string | null, y: string) => x !== null && x.toLowerCase() === y.toLowerCase();

let cluster: PostgresCluster;
let node: TestTransfersNode;

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${node.url}${path}`, { method, headers });
  const text = await response.text();
  const json = text !== '' && /json/.test(response.headers.get('content-type') ?? '');
  return { status: response.status, headers: response.headers, text, json: json ? (JSON.parse(text) as unknown) : undefined };
}
const rows = async (path: string) => {
  const answer = await get(path);
  assert.equal(answer.status, 200, answer.text);
  return answer.json as Array<Record<string, unknown>>;
};
const hashes = (list: Array<Record<string, unknown>>) => list.map((row) => row.txhash);

// Without the PostgreSQL server the suite skips (loudly; fails with CI set). Its hooks sit inside it, so a skipped
// suite starts nothing.
const skip = skipWithout(postgresServerPackage(), 'the transfers gateway tests (test/http/transfers/gateway.test.ts)');

describe('transfers gateway (black box, PostgreSQL)', { skip }, () => {
  before(async () => {
    cluster = await startPostgres();
    // Two empty blocks past the last row: max_block runs past it. A second schema for the profile tests: one view
    // over the transfers, readable by the anonymous role.
    await seedTransfers(cluster.url, ROWS, {
      emptyBlocks: [20, 21],
      extraSql: `CREATE SCHEMA api; CREATE VIEW api.transfers AS SELECT txhash, block FROM public.ethtxs;
        GRANT USAGE ON SCHEMA api TO web_anon; GRANT SELECT ON api.transfers TO web_anon;`,
    });
    node = await startTransfersNode({ DB_NAME: cluster.url, INDEXER: 'false' });
  });
  after(async () => {
    await node?.stop();
    await cluster?.stop();
  });

  test('/aval and /max_block (H1, spec 2.2–2.3)', async () => {
    const aval = await get('/aval');
    assert.equal(aval.status, 200);
    assert.equal(aval.text, '[{"status":true}]');
    assert.equal(aval.headers.get('content-type'), 'application/json; charset=utf-8');
    const max = await get('/max_block');
    assert.deepEqual(max.json, [{ max: 21, version: '3.0.0' }]);
  });

  test('txfrom filter: only that sender, ten keys in table order, any letter case (H5, H7, rule 1)', async () => {
    const list = await rows(`/ethtxs?txfrom=eq.${A.toUpperCase().replace('0X', '0x')}`);
    assert.equal(list.length, ROWS.filter((r) => same(r.txfrom, A)).length);
    for (const row of list) {
      assert.deepEqual(Object.keys(row), KEYS);
      assert.ok(same(row.txfrom as string, A));
    }
    const byHash = await rows(`/ethtxs?txhash=eq.${String(ROWS[3]!.txhash).toUpperCase().replace('0X', '0x')}`);
    assert.deepEqual(hashes(byHash), [ROWS[3]!.txhash]);
  });

  test('numbers come out with every digit; native rows have empty contract columns (H8, H9)', async () => {
    const [row] = await rows(`/ethtxs?block=eq.19&txto=eq.${B}`);
    assert.equal(row!.value, 19000000000000000000000);
    const raw = await get(`/ethtxs?block=eq.19&txto=eq.${B}&select=value`);
    assert.equal(raw.text, '[{"value":19000000000000000000000}]');
    assert.equal(row!.contract_to, '');
    assert.equal(row!.contract_value, '');
    const [token] = await rows(`/ethtxs?txto=eq.${TOKEN}&contract_to=eq.${word(C)}`);
    assert.equal(token!.value, 0);
    assert.equal(token!.contract_value, amount(5n));
  });

  test('contract_to padding catches incoming token transfers; contract_to=eq. selects native ones (rules 2–4, H11, H14)', async () => {
    const incoming = await rows(`/ethtxs?txto=eq.${TOKEN.toLowerCase()}&contract_to=eq.${word(A)}`);
    assert.deepEqual(hashes(incoming), ROWS.filter((r) => r.contract_to === word(A)).map((r) => r.txhash));
    const native = await rows('/ethtxs?contract_to=eq.&order=txhash');
    assert.equal(native.length, ROWS.filter((r) => r.contract_to === '').length);
    assert.ok(native.every((row) => row.contract_to === ''));
    const either = await rows(`/ethtxs?or=(txfrom.eq.${A},txto.eq.${A})`);
    assert.ok(!hashes(either).includes(incoming[0]!.txhash), 'txfrom/txto alone omit incoming token transfers');
  });

  test("the README query: native transfers of A, newest first (H12)", async () => {
    const list = await rows(`/ethtxs?and=(contract_to.eq.,or(txfrom.eq.${A},txto.eq.${A}))&order=time.desc&limit=25`);
    const expected = ROWS.filter((r) => r.contract_to === '' && (same(r.txfrom, A) || same(r.txto, A)));
    assert.equal(list.length, expected.length);
    const times = list.map((row) => row.time as number);
    assert.deepEqual(times, [...times].sort((x, y) => y - x));
  });

  test('repeated range keys are ANDed; time ranges are half-open (rule 2, H15, H16)', async () => {
    const blocks = await rows('/ethtxs?block=gte.12&block=lt.14&select=block');
    assert.deepEqual([...new Set(blocks.map((row) => row.block))].sort(), [12, 13]);
    const t2 = 1_600_000_000 + 15 * 15;
    const timed = await rows(`/ethtxs?time=gte.${1_600_000_000 + 13 * 15}&time=lt.${t2}&select=time`);
    assert.ok(timed.length > 0 && timed.every((row) => (row.time as number) < t2));
  });

  test('ordering, select, limit/offset with Content-Range (H17, H18, H20)', async () => {
    const ordered = await rows('/ethtxs?order=block.desc,txhash.asc&select=txhash,block');
    const expected = [...ROWS].sort((x, y) => y.block - x.block || (x.txhash < y.txhash ? -1 : 1)).map((r) => r.txhash);
    assert.deepEqual(hashes(ordered), expected);
    assert.deepEqual(Object.keys(ordered[0]!), ['txhash', 'block']);
    const page = await get('/ethtxs?order=txhash&limit=2&offset=2');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-range'), '2-3/*');
    assert.deepEqual(hashes(page.json as Array<Record<string, unknown>>), [...ROWS].map((r) => r.txhash).sort().slice(2, 4));
  });

  test('keyset pagination by (time, txhash) visits every row once; time alone skips rows sharing a time (rule 5, H22)', async () => {
    const filter = `or=(txfrom.eq.${A},txto.eq.${A})`;
    const all = ROWS.filter((r) => same(r.txfrom, A) || same(r.txto, A));
    const seen: unknown[] = [];
    let cursor: { time: number; txhash: string } | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const next = cursor ? `&and=(or(time.lt.${cursor.time},and(time.eq.${cursor.time},txhash.lt.${cursor.txhash})))` : '';
      const page = await rows(`/ethtxs?${filter}${next}&order=time.desc,txhash.desc&limit=3`);
      seen.push(...hashes(page));
      if (page.length < 3) break;
      const last = page[page.length - 1]!;
      cursor = { time: last.time as number, txhash: last.txhash as string };
    }
    assert.equal(seen.length, all.length);
    assert.equal(new Set(seen).size, all.length);
    // The naive cursor (time only) loses the rows that share the last row's time.
    // Four rows end inside block 17, whose two rows share one time.
    const first = await rows(`/ethtxs?${filter}&order=time.desc,txhash.desc&limit=4`);
    assert.equal(first[3]!.block, 17);
    const naive = await rows(`/ethtxs?${filter}&time=lt.${first[3]!.time}&order=time.desc,txhash.desc&limit=100`);
    assert.ok(first.length + naive.length < all.length);
  });

  test('the full-history recipe: native query plus one query per token, merged client-side (spec §4.1)', async () => {
    const native = await rows(`/ethtxs?and=(contract_to.eq.,or(txfrom.eq.${A},txto.eq.${A}))`);
    const token = await rows(`/ethtxs?txto=eq.${TOKEN}&or=(txfrom.eq.${A},contract_to.eq.${word(A)})`);
    const merged = new Set([...hashes(native), ...hashes(token)]);
    const expected = ROWS.filter((r) => (r.contract_to === '' && (same(r.txfrom, A) || same(r.txto, A))) || (same(r.txto, TOKEN) && (same(r.txfrom, A) || r.contract_to === word(A))));
    assert.deepEqual([...merged].sort(), expected.map((r) => r.txhash).sort());
  });

  test('Range and counts (rule 3, 6; F.1; H24, H25, H33)', async () => {
    const five = `/ethtxs?block=gte.10&block=lt.15&txfrom=eq.${A}&txto=eq.${B}`;
    assert.equal(ROWS.filter((r) => r.block >= 10 && r.block < 15 && same(r.txfrom, A) && same(r.txto, B)).length, 5);
    const partial = await get(five, { 'Range-Unit': 'items', Range: '0-1', Prefer: 'count=exact' });
    assert.equal(partial.status, 206);
    assert.equal(partial.headers.get('content-range'), '0-1/5');
    const whole = await get(five, { 'Range-Unit': 'items', Range: '0-99' });
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-range'), '0-4/*');
    const partialNoCount = await get(five, { Range: '0-1' });
    assert.equal(partialNoCount.status, 206, 'F.1: a Range that leaves rows out answers 206 without a count too');
    const planned = await get(five, { Prefer: 'count=planned' });
    assert.match(planned.headers.get('content-range') ?? '', /^0-4\/\d+$/);
  });

  test('limits: limit=-1 → 416, limit=0 and empty matches → [] with */* (H28–H30); the row cap (rule 7)', async () => {
    const negative = await get('/ethtxs?limit=-1');
    assert.equal(negative.status, 416);
    assert.equal((negative.json as { code: string }).code, 'PGRST103');
    assert.equal((negative.json as { details: string }).details, 'Limit should be greater than or equal to zero.');
    for (const path of ['/ethtxs?limit=0', `/ethtxs?txfrom=eq.0x${'9'.repeat(40)}`]) {
      const empty = await get(path);
      assert.equal(empty.status, 200);
      assert.equal(empty.text, '[]');
      assert.equal(empty.headers.get('content-range'), '*/*');
    }
  });

  test('HEAD, OPTIONS, write verbs, unknown relations and grammar errors (H34–H39, H41, H42)', async () => {
    const path = `/ethtxs?txfrom=eq.${A}`;
    const getAnswer = await get(path);
    const head = await get(path, {}, 'HEAD');
    assert.equal(head.status, getAnswer.status);
    assert.equal(head.headers.get('content-range'), getAnswer.headers.get('content-range'));
    assert.equal(head.text, '');
    const options = await get('/ethtxs', {}, 'OPTIONS');
    assert.equal(options.status, 200);
    assert.equal(options.text, '');
    assert.deepEqual(options.headers.get('allow')?.split(',').sort(), ['GET', 'HEAD', 'OPTIONS']);
    assert.equal((await get('/nosuch', {}, 'OPTIONS')).status, 404, 'OPTIONS on an unknown relation (B.3 #34)');
    for (const method of ['POST', 'DELETE', 'PATCH', 'PUT']) {
      const refused = await get('/ethtxs', { 'content-type': 'application/json' }, method);
      assert.equal(refused.status, 405, method);
      assert.equal((refused.json as { code: string }).code, 'PGRST117');
    }
    assert.equal((await rows('/ethtxs?select=txhash')).length, ROWS.length, 'nothing was written');
    const unknown = await get('/nosuch');
    assert.equal(unknown.status, 404);
    assert.deepEqual(Object.keys(unknown.json as object).sort(), ['code', 'details', 'hint', 'message']);
    assert.equal((unknown.json as { code: string }).code, 'PGRST205');
    const noOperator = await get('/ethtxs?txfrom=0xabc');
    assert.equal(noOperator.status, 400);
    assert.equal((noOperator.json as { code: string }).code, 'PGRST100');
    assert.match((noOperator.json as { message: string }).message, /^"failed to parse filter \(/);
    for (const bad of ['/ethtxs?or=()', '/ethtxs?order=time.sideways']) assert.equal((await get(bad)).status, 400, bad);
    const inList = await rows(`/ethtxs?txfrom=in.(${B},${C})&select=txfrom`);
    assert.equal(inList.length, ROWS.filter((r) => same(r.txfrom, B) || same(r.txfrom, C)).length);
    const notIn = await rows(`/ethtxs?txfrom=not.in.(${A})&select=txfrom`);
    assert.ok(notIn.every((row) => !same(row.txfrom as string, A)));
    const creation = await rows('/ethtxs?txto=is.null');
    assert.equal(creation.length, 1);
    assert.equal(creation[0]!.value, 3);
    const typed = await get('/ethtxs?block=eq.abc');
    assert.equal(typed.status, 400);
    assert.equal((typed.json as { code: string }).code, '22P02');
  });

  test('bad percent-encoding in the path or the query is never a 500: decoded leniently, as PostgREST does (issue 15)', async () => {
    // PostgREST (WAI pathInfo, http-types parseQuery) keeps a malformed escape literally and reads invalid UTF-8 as
    // U+FFFD, so these are ordinary requests: an unknown relation, a value matching nothing, a grammar error. Sent on a
    // raw socket: fetch would re-encode some targets.
    const cases: ReadonlyArray<{ target: string; method?: string; status: number; code?: string; message?: string }> = [
      { target: '/%zz', status: 404, code: 'PGRST205', message: "Could not find the table 'public.%zz' in the schema cache" },
      { target: '/%FF%FE', status: 404, code: 'PGRST205', message: "Could not find the table 'public.\uFFFD\uFFFD' in the schema cache" },
      { target: '/%E0%A4%A', status: 404, code: 'PGRST205' },
      { target: '/eth%zztxs', status: 404, code: 'PGRST205', message: "Could not find the table 'public.eth%zztxs' in the schema cache" },
      { target: '/%', status: 404, code: 'PGRST205' },
      { target: '/%zz?select=%zz', status: 404, code: 'PGRST205' },
      { target: '/%zz', method: 'HEAD', status: 404 },
      { target: '/%FF%FE', method: 'OPTIONS', status: 404, code: 'PGRST205' },
      { target: '/%zz', method: 'DELETE', status: 405, code: 'PGRST117' },
      { target: '/eth%74xs?select=txhash&limit=1', status: 200 },
      { target: '/ethtxs?txfrom=eq.%E0%A4%A', status: 200 },
      { target: '/ethtxs?txfrom=eq.%zz', status: 200 },
      { target: '/ethtxs?txfrom=eq.%FF%FE', status: 200 },
      { target: '/ethtxs?txfrom=in.(%zz,%FF)', status: 200 },
      { target: '/ethtxs?or=(txfrom.eq.%E0%A4%A,txto.eq.%)', status: 200 },
      { target: '/ethtxs?%zz=eq.1', status: 400, code: 'PGRST100' },
      { target: '/ethtxs?%FF=eq.1', status: 400, code: 'PGRST100' },
      { target: '/ethtxs?order=%zz', status: 400, code: 'PGRST100' },
      { target: '/ethtxs?select=txhash,%zz', status: 400, code: 'PGRST100' },
      { target: '/ethtxs?txfrom=%E0%A4%A', status: 400, code: 'PGRST100' },
      // A NUL byte decodes but PostgreSQL refuses it in text: its own 400 (22021), as behind PostgREST.
      { target: '/ethtxs?txfrom=eq.%00', status: 400, code: '22021' },
    ];
    for (const { target, method = 'GET', status, code, message } of cases) {
      const answer = await rawRequest(node.port, method, target);
      const label = `${method} ${target}: ${answer.status} ${answer.body}`;
      assert.equal(answer.status, status, label);
      if (status === 200 || method === 'HEAD') continue;
      assert.equal(answer.header('content-type'), 'application/json; charset=utf-8', label);
      const body = JSON.parse(answer.body) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body), ['code', 'details', 'hint', 'message'], label);
      if (code) assert.equal(body.code, code, label);
      if (message) assert.equal(body.message, message, label);
    }
    // Still serving.
    assert.equal((await get('/aval')).status, 200);
  });

  test('representations through HTTP: object, 406 PGRST116, CSV, stripped nulls, 406 PGRST107 (issue 16)', async () => {
    const hash = String(ROWS[0]!.txhash);
    const one = await get(`/ethtxs?txhash=eq.${hash}&select=txhash,block`, { accept: 'application/vnd.pgrst.object+json' });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.headers.get('content-type'), 'application/vnd.pgrst.object+json; charset=utf-8');
    assert.deepEqual(one.json, { txhash: hash, block: ROWS[0]!.block });
    const many = await get(`/ethtxs?txfrom=eq.${A}`, { accept: 'application/vnd.pgrst.object+json' });
    assert.equal(many.status, 406);
    assert.deepEqual(many.json, { code: 'PGRST116', details: `The result contains ${ROWS.filter((r) => same(r.txfrom, A)).length} rows`, hint: null, message: 'Cannot coerce the result to a single JSON object' });
    assert.equal((await get('/ethtxs?block=eq.99', { accept: 'application/vnd.pgrst.object+json' })).status, 406);
    const csv = await get('/ethtxs?block=eq.14&order=txhash&select=txhash,txto,value', { accept: 'text/csv' });
    assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
    const block14 = ROWS.filter((r) => r.block === 14).sort((x, y) => String(x.txhash).localeCompare(String(y.txhash)));
    assert.equal(csv.text, ['txhash,txto,value', ...block14.map((r) => `${r.txhash},${r.txto ?? ''},${r.value}`)].join('\n'));
    const stripped = await get('/ethtxs?txto=is.null&select=txhash,txto', { accept: 'application/vnd.pgrst.array+json;nulls=stripped' });
    assert.deepEqual(stripped.json, [{ txhash: ROWS.find((r) => r.txto === null)!.txhash }]);
    const xml = await get('/ethtxs?limit=1', { accept: 'application/xml' });
    assert.equal(xml.status, 406);
    assert.deepEqual(xml.json, { code: 'PGRST107', details: null, hint: null, message: 'None of these media types are available: application/xml' });
    assert.equal((await get('/ethtxs?limit=1', { accept: 'application/xml, */*;q=0.1' })).status, 200);
  });

  test('profiles, the root, nested paths and /rpc (issue 16)', async () => {
    const api = await get('/ethtxs', { 'accept-profile': 'api' });
    assert.equal(api.status, 406);
    assert.deepEqual(api.json, { code: 'PGRST106', details: null, hint: 'Only the following schemas are exposed: public', message: 'Invalid schema: api' });
    const publicProfile = await get('/aval', { 'accept-profile': 'public' });
    assert.equal(publicProfile.status, 200);
    assert.equal(publicProfile.headers.get('content-profile'), null, 'one schema: no Content-Profile');
    const root = await get('/', {}, 'OPTIONS');
    assert.deepEqual([root.status, root.text, root.headers.get('allow')], [200, '', 'OPTIONS,GET,HEAD']);
    const openApi = await get('/');
    assert.equal(openApi.status, 200);
    assert.deepEqual(Object.keys((openApi.json as { paths: object }).paths).sort(), ['/aval', '/ethtxs', '/max_block']);
    assert.equal((await get('/', { accept: 'text/csv' })).status, 406);
    for (const path of ['/ethtxs/1', '/invalid/nested/paths', '/ethtxs/']) {
      const nested = await get(path);
      assert.equal(nested.status, 404, path);
      assert.deepEqual(nested.json, { code: 'PGRST125', details: null, hint: null, message: 'Invalid path specified in request URL' }, path);
    }
    const call = await fetch(`${node.url}/rpc/get_balance`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"address":"x","at":1}' });
    assert.equal(call.status, 404);
    assert.deepEqual(await call.json(), {
      code: 'PGRST202',
      details: 'Searched for the function public.get_balance with parameters address, at or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: null,
      message: 'Could not find the function public.get_balance(address, at) in the schema cache',
    });
    const getCall = await get('/rpc/get_balance?address=x&select=a');
    assert.equal((getCall.json as { message: string }).message, 'Could not find the function public.get_balance(address) in the schema cache');
    const badJson = await fetch(`${node.url}/rpc/fn`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    assert.deepEqual([badJson.status, ((await badJson.json()) as { code: string }).code], [400, 'PGRST102']);
    const put = await get('/rpc/fn', {}, 'PUT');
    assert.deepEqual([put.status, (put.json as { code: string }).code], [405, 'PGRST101']);
  });

  test('several schemas: Accept-Profile picks one, every answer names it in Content-Profile (issue 16)', async () => {
    const multi = await startTransfersNode({ DB_NAME: cluster.url, INDEXER: 'false', PGRST_DB_SCHEMAS: 'public,api' });
    try {
      const base = await fetch(`${multi.url}/aval`);
      assert.equal(base.status, 200);
      assert.equal(base.headers.get('content-profile'), 'public');
      const view = await fetch(`${multi.url}/transfers?block=eq.10&order=txhash`, { headers: { 'accept-profile': 'api' } });
      assert.equal(view.status, 200);
      assert.equal(view.headers.get('content-profile'), 'api');
      assert.deepEqual(await view.json(), ROWS.filter((r) => r.block === 10).map((r) => ({ txhash: r.txhash, block: 10 })).sort((x, y) => String(x.txhash).localeCompare(String(y.txhash))));
      const notThere = await fetch(`${multi.url}/ethtxs`, { headers: { 'accept-profile': 'api' } });
      assert.equal(notThere.status, 404);
      assert.equal(((await notThere.json()) as { message: string }).message, "Could not find the table 'api.ethtxs' in the schema cache");
      const unknown = await fetch(`${multi.url}/aval`, { headers: { 'accept-profile': 'private' } });
      assert.equal(unknown.status, 406);
      assert.equal(((await unknown.json()) as { hint: string }).hint, 'Only the following schemas are exposed: public, api');
      const root = await fetch(`${multi.url}/`, { headers: { 'accept-profile': 'api' } });
      assert.deepEqual(Object.keys(((await root.json()) as { paths: object }).paths), ['/transfers']);
    } finally {
      await multi.stop();
    }
  });

  test('a client that goes away cancels its read on the server; the gateway keeps serving (issue 19)', async () => {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    try {
      await admin.query(`CREATE VIEW public.slow AS SELECT pg_sleep(30)::text AS slept; GRANT SELECT ON public.slow TO web_anon`);
      // The first request for an unknown relation reloads the schema cache.
      await waitFor(async () => (await get('/slow?limit=0')).status === 200, { what: 'the new view served', timeoutMs: 10_000 });
      const running = async () =>
        Number((await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%"public"."slow"%' AND pid <> pg_backend_pid()`)).rows[0].n);
      const socket = await openSocket(node.port);
      socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
      await waitFor(async () => (await running()) === 1, { what: 'the read running on the server', timeoutMs: 10_000 });
      socket.destroy();
      // Cancelled on the server well before pg_sleep's 30 s would end.
      await waitFor(async () => (await running()) === 0, { what: 'the read cancelled', timeoutMs: 10_000 });
      assert.equal((await get('/aval')).status, 200);
    } finally {
      await admin.query('DROP VIEW IF EXISTS public.slow');
      await admin.end();
    }
  });

  test('the anonymous role is read-only even for the indexer schema', async () => {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const [{ n }] = (await client.query('SELECT count(*)::int AS n FROM public.ethtxs')).rows as Array<{ n: number }>;
      assert.equal(n, ROWS.length);
    } finally {
      await client.end();
    }
    const internal = await get('/state');
    assert.equal(internal.status, 404, 'indexer.state is not exposed');
  });
});
