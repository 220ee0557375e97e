// The read gateway as real apps drive it: through `@supabase/postgrest-js` (`new PostgrestClient(url)`), the
// client most PostgREST consumers use (spec A §4.1, §7; notes B). Every builder method a read app uses is sent to
// the running gateway (gateway-only process over a real PostgreSQL 15 database) and compared with the same query run
// directly in SQL through `pg` on the same database: the expected rows always come from PostgreSQL, never from
// answers written here. The error surface is PostgREST's own (src/PostgREST/Error.hs): codes, statuses, messages.
//
// Some of these tests describe PostgREST behaviour the gateway may not implement yet (content negotiation for
// single/csv/stripNulls, Accept-Profile schemas, /rpc, embedding); they are written to PostgREST's documented
// behaviour all the same, so they turn green when the gateway does.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PostgrestClient } from '@supabase/postgrest-js';
import pg from 'pg';
import type { TransferRow } from '../../src/transfers/rows.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../support/system-packages.js';
import { startTransfersNode, type TestTransfersNode } from '../support/transfers-node.js';
import { prng as random } from '../support/random.js';
import { seedTransfers } from '../support/transfers-seed.js';

// ---- the seed: a few hundred varied rows, deterministic ---------------------------------------------------------

// Stored as the indexer stores them (checksummed-looking mixed case); queries use other letter cases on purpose.
const A = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const B = '0x1111111111111111111111111111111111111111';
const C = '0x2222222222222222222222222222222222222222';
const D = '0xDdDd00000000000000000000000000000000dDdD';
const E = '0xe000000000000000000000000000000000000E0e';
const ADDRESSES = [A, B, C, D, E];
const TOKEN_1 = '0xDeaDBeef00000000000000000000000000000001';
const TOKEN_2 = '0xDeaDBeef00000000000000000000000000000002';
const FIRST_BLOCK = 1;
const LAST_BLOCK = 60;
const ROWS_PER_BLOCK = 5;
/** 2^53 + 1: a bigint a JS number cannot hold. */
const UNSAFE_GASPRICE = '9007199254740993';
/** A numeric with more digits than a double carries. */
const BIG_VALUE = '123456789012345678901234567890';
/**
 * PGRST116's message in PostgREST's current src/PostgREST/Error.hs (`message (SingularityError _)`), with details
 * "The result contains N rows". Releases before it said "JSON object requested, multiple (or no) rows returned" (the
 * wording postgrest-js still uses for its own client-side maybeSingle error, asserted below as the client's).
 */
const SINGULAR_MESSAGE = 'Cannot coerce the result to a single JSON object';
const word = (address: string) => `000000000000000000000000${address.slice(2).toLowerCase()}`;

/** 300 rows over blocks 1–60: native and token transfers, contract creations (null txto), huge values. */
function seed(): TransferRow[] {
  const next = random(20_240_917);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const hex = (length: number) => Array.from({ length }, () => Math.floor(next() * 16).toString(16)).join('');
  const rows: TransferRow[] = [];
  let counter = 0;
  for (let block = FIRST_BLOCK; block <= LAST_BLOCK; block++) {
    for (let i = 0; i < ROWS_PER_BLOCK; i++) {
      counter++;
      // A counter prefix keeps hashes unique and gives `like` a predictable prefix.
      const txhash = `0x${counter.toString(16).padStart(8, '0')}${hex(56)}`;
      const base = {
        time: 1_700_000_000 + block * 12, // every row of a block shares its time
        block,
        txhash,
        txfrom: pick(ADDRESSES),
        gas: pick(['21000', '21000', '51000', '90000', '4000000000']),
        gasprice: counter % 37 === 0 ? UNSAFE_GASPRICE : pick(['1000000000', '2000000000', '30000000000']),
      };
      const roll = next();
      if (roll < 0.25) {
        const to = pick(ADDRESSES.filter((address) => address !== base.txfrom));
        const amount = BigInt(Math.floor(next() * 1e9)) * 10n ** BigInt(Math.floor(next() * 12));
        rows.push({ ...base, txto: pick([TOKEN_1, TOKEN_2]), value: '0', contract_to: word(to), contract_value: amount.toString(16).padStart(64, '0') });
      } else if (roll < 0.31) {
        rows.push({ ...base, txto: null, value: pick(['0', '5']), contract_to: '', contract_value: '' });
      } else {
        const value = pick(['0', '1', '21000', '1000000000000000000', `${block}${'0'.repeat(21)}${i}`, BIG_VALUE, `${counter}${'0'.repeat(18)}`]);
        rows.push({ ...base, txto: pick(ADDRESSES.filter((address) => address !== base.txfrom)), value, contract_to: '', contract_value: '' });
      }
    }
  }
  return rows;
}

const ROWS = seed();

// ---- the harness ------------------------------------------------------------------------------------------------

let cluster: PostgresCluster;
let node: TestTransfersNode;
/** A second gateway exposing `public,api` (PGRST_DB_SCHEMAS). */
let apiNode: TestTransfersNode;
let sql: pg.Client;
let client: PostgrestClient;

type Row = Record<string, unknown>;

/** The rows of a SELECT, each as PostgreSQL's own JSON (to_json), parsed as the client parses the gateway's JSON. */
async function expectRows(query: string, params: unknown[] = []): Promise<Row[]> {
  const result = await sql.query<{ j: string }>(`SELECT to_json(_t)::text AS j FROM (${query}) _t`, params);
  return result.rows.map((row) => JSON.parse(row.j) as Row);
}
async function expectCount(query: string, params: unknown[] = []): Promise<number> {
  const result = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM (${query}) _t`, params);
  return result.rows[0]!.n;
}
const byHash = (list: readonly Row[]) => [...list].sort((x, y) => (String(x.txhash) < String(y.txhash) ? -1 : String(x.txhash) > String(y.txhash) ? 1 : 0));

/** The client's answer, checked for success; `data` as rows. */
function ok<T extends { error: unknown; status: number; data: unknown }>(answer: T, status = 200): Row[] {
  assert.equal(answer.error, null, `unexpected error: ${JSON.stringify(answer.error)}`);
  assert.equal(answer.status, status);
  assert.ok(Array.isArray(answer.data), `data is not an array: ${JSON.stringify(answer.data)}`);
  return answer.data as Row[];
}

/** A failed answer: status, code (and message/details/hint when given) as PostgREST sends them. */
function failed(
  answer: { error: unknown; status: number; data: unknown },
  expected: { status: number; code: string; message?: string; details?: string | null; hint?: string | null },
): void {
  assert.notEqual(answer.error, null, `expected error ${expected.code}, got status ${answer.status} data ${JSON.stringify(answer.data)?.slice(0, 200)}`);
  const error = answer.error as { code: string; message: string; details: unknown; hint: unknown };
  assert.equal(answer.status, expected.status, `status, error ${JSON.stringify(error)}`);
  assert.equal(error.code, expected.code, `code, error ${JSON.stringify(error)}`);
  if (expected.message !== undefined) assert.equal(error.message, expected.message);
  if (expected.details !== undefined) assert.equal(error.details, expected.details);
  if (expected.hint !== undefined) assert.equal(error.hint, expected.hint);
  assert.equal(answer.data, null);
}

// Without the PostgreSQL server the suite skips (loudly; fails with CI set). Its hooks sit inside it, so a skipped
// suite starts nothing.
const skip = skipWithout(postgresServerPackage(), 'the postgrest-js client tests (test/acceptance/transfers-postgrest-js.test.ts)');

describe('transfers gateway through @supabase/postgrest-js (PostgreSQL)', { skip }, () => {
  before(async () => {
    cluster = await startPostgres();
    // A second exposed schema for the Accept-Profile tests: a view over ethtxs, readable by the anonymous role.
    await seedTransfers(cluster.url, ROWS, {
      extraSql: `
        CREATE SCHEMA api;
        CREATE VIEW api.transfers AS SELECT txhash, block, txfrom, txto, value FROM public.ethtxs;
        GRANT USAGE ON SCHEMA api TO web_anon;
        GRANT SELECT ON api.transfers TO web_anon;
        ANALYZE public.ethtxs;`,
    });
    sql = new pg.Client({ connectionString: cluster.url });
    await sql.connect();
    node = await startTransfersNode({ DB_NAME: cluster.url, INDEXER: 'false' });
    apiNode = await startTransfersNode({ DB_NAME: cluster.url, INDEXER: 'false', PGRST_DB_SCHEMAS: 'public,api' });
    client = new PostgrestClient(node.url);
  });
  after(async () => {
    await sql?.end();
    await apiNode?.stop();
    await node?.stop();
    await cluster?.stop();
  });

  test('the seed is what the tests need: hundreds of rows, null txto, token rows, shared block times, huge numbers', async () => {
    assert.equal(await expectCount('SELECT 1 FROM public.ethtxs'), ROWS.length);
    assert.ok(ROWS.length >= 300);
    assert.ok((await expectCount('SELECT 1 FROM public.ethtxs WHERE txto IS NULL')) >= 5);
    assert.ok((await expectCount(`SELECT 1 FROM public.ethtxs WHERE contract_to <> ''`)) >= 30);
    assert.ok((await expectCount('SELECT 1 FROM public.ethtxs WHERE value = $1', [BIG_VALUE])) >= 2);
    assert.ok((await expectCount('SELECT 1 FROM public.ethtxs WHERE gasprice = $1', [UNSAFE_GASPRICE])) >= 2);
    assert.equal(await expectCount('SELECT DISTINCT "time" FROM public.ethtxs'), LAST_BLOCK - FIRST_BLOCK + 1);
  });

  test('eq, neq, gt, gte, lt, lte: the rows SQL returns', async () => {
    const cases: Array<[string, PromiseLike<{ error: unknown; status: number; data: unknown }>, string, unknown[]]> = [
      ['eq txfrom (other letter case)', client.from('ethtxs').select().eq('txfrom', A.toLowerCase()), 'txfrom = $1', [A]],
      ['eq value (huge numeric)', client.from('ethtxs').select().eq('value', BIG_VALUE), 'value = $1', [BIG_VALUE]],
      ['eq gasprice (bigint above 2^53)', client.from('ethtxs').select().eq('gasprice', UNSAFE_GASPRICE), 'gasprice = $1', [UNSAFE_GASPRICE]],
      ['eq contract_to empty', client.from('ethtxs').select().eq('txto', B).eq('contract_to', ''), `txto = $1 AND contract_to = ''`, [B]],
      ['neq contract_to', client.from('ethtxs').select().neq('contract_to', ''), `contract_to <> ''`, []],
      ['neq txfrom', client.from('ethtxs').select().eq('txto', C).neq('txfrom', A.toUpperCase().replace('0X', '0x')), 'txto = $1 AND txfrom <> $2', [C, A]],
      ['gt block', client.from('ethtxs').select().gt('block', 55), 'block > 55', []],
      ['gte + lt block (repeated column)', client.from('ethtxs').select().gte('block', 10).lt('block', 13), 'block >= 10 AND block < 13', []],
      ['lte time', client.from('ethtxs').select().lte('time', 1_700_000_000 + 4 * 12), '"time" <= $1', [1_700_000_000 + 4 * 12]],
      ['gt value (numeric)', client.from('ethtxs').select().gt('value', '1000000000000000000000'), 'value > $1', ['1000000000000000000000']],
      ['lt gas', client.from('ethtxs').select().lt('gas', 51000).eq('txfrom', D), 'gas < 51000 AND txfrom = $1', [D]],
    ];
    for (const [label, request, where, params] of cases) {
      const expected = await expectRows(`SELECT * FROM public.ethtxs WHERE ${where}`, params);
      assert.ok(expected.length > 0, `${label}: the seed has matching rows`);
      const data = ok(await request);
      assert.deepEqual(byHash(data), byHash(expected), label);
    }
  });

  test('in, like, ilike: the rows SQL returns', async () => {
    const cases: Array<[string, PromiseLike<{ error: unknown; status: number; data: unknown }>, string, unknown[]]> = [
      ['in txfrom', client.from('ethtxs').select().in('txfrom', [B, C.toUpperCase().replace('0X', '0x')]), 'txfrom IN ($1, $2)', [B, C]],
      ['in block', client.from('ethtxs').select().in('block', [3, 17, 42]), 'block IN (3, 17, 42)', []],
      ['in txto with tokens', client.from('ethtxs').select().in('txto', [TOKEN_1, TOKEN_2]).eq('txfrom', E), 'txto IN ($1, $2) AND txfrom = $3', [TOKEN_1, TOKEN_2, E]],
      ['like txhash prefix (* wildcard)', client.from('ethtxs').select().like('txhash', '0x0000001*'), `txhash LIKE '0x0000001%'`, []],
      ['like txhash (% wildcard)', client.from('ethtxs').select().like('txhash', '0x0000002%'), `txhash LIKE '0x0000002%'`, []],
      ['ilike txfrom', client.from('ethtxs').select().ilike('txfrom', '*DDDD*'), `txfrom ILIKE '%DDDD%'`, []],
      ['like contract_to', client.from('ethtxs').select().like('contract_to', `*${A.slice(2, 12).toLowerCase()}*`), 'contract_to LIKE $1', [`%${A.slice(2, 12).toLowerCase()}%`]],
    ];
    for (const [label, request, where, params] of cases) {
      const expected = await expectRows(`SELECT * FROM public.ethtxs WHERE ${where}`, params);
      assert.ok(expected.length > 0, `${label}: the seed has matching rows`);
      const data = ok(await request);
      assert.deepEqual(byHash(data), byHash(expected), label);
    }
  });

  test('is: null, not null, true, false', async () => {
    const nulls = ok(await client.from('ethtxs').select().is('txto', null));
    assert.deepEqual(byHash(nulls), byHash(await expectRows('SELECT * FROM public.ethtxs WHERE txto IS NULL')));
    assert.ok(nulls.length > 0 && nulls.every((row) => row.txto === null));
    const notNull = ok(await client.from('ethtxs').select('txhash,txto').not('txto', 'is', null));
    assert.deepEqual(byHash(notNull), byHash(await expectRows('SELECT txhash, txto FROM public.ethtxs WHERE txto IS NOT NULL')));
    const yes = ok(await client.from('aval').select().is('status', true));
    assert.deepEqual(yes, await expectRows('SELECT * FROM public.aval WHERE status IS TRUE'));
    assert.equal(yes.length, 1);
    const no = ok(await client.from('aval').select().is('status', false));
    assert.deepEqual(no, await expectRows('SELECT * FROM public.aval WHERE status IS FALSE'));
    assert.equal(no.length, 0);
  });

  test('not: negated eq, in, gt, like', async () => {
    const cases: Array<[string, PromiseLike<{ error: unknown; status: number; data: unknown }>, string, unknown[]]> = [
      ['not eq', client.from('ethtxs').select().eq('txto', B).not('txfrom', 'eq', A), 'txto = $1 AND NOT (txfrom = $2)', [B, A]],
      ['not in', client.from('ethtxs').select().not('txfrom', 'in', `(${A},${B},${C})`), 'NOT (txfrom IN ($1, $2, $3))', [A, B, C]],
      ['not gt', client.from('ethtxs').select().not('block', 'gt', 5), 'NOT (block > 5)', []],
      ['not like', client.from('ethtxs').select().lte('block', 20).not('txhash', 'like', '0x0000000*'), `block <= 20 AND NOT (txhash LIKE '0x0000000%')`, []],
    ];
    for (const [label, request, where, params] of cases) {
      const expected = await expectRows(`SELECT * FROM public.ethtxs WHERE ${where}`, params);
      assert.ok(expected.length > 0, `${label}: the seed has matching rows`);
      const data = ok(await request);
      assert.deepEqual(byHash(data), byHash(expected), label);
    }
  });

  test('or, with nested and(), combined with plain filters', async () => {
    const both = ok(await client.from('ethtxs').select().or(`txfrom.eq.${A},txto.eq.${A.toLowerCase()}`));
    assert.deepEqual(byHash(both), byHash(await expectRows('SELECT * FROM public.ethtxs WHERE txfrom = $1 OR txto = $1', [A])));
    const nested = ok(await client.from('ethtxs').select().or('block.lt.4,and(block.gte.50,txto.is.null),and(block.eq.30,value.gt.0)'));
    assert.deepEqual(
      byHash(nested),
      byHash(await expectRows('SELECT * FROM public.ethtxs WHERE block < 4 OR (block >= 50 AND txto IS NULL) OR (block = 30 AND value > 0)')),
    );
    // The README's native-history query, as an app writes it with the client: a plain filter ANDed with an or().
    const native = ok(await client.from('ethtxs').select().eq('contract_to', '').or(`txfrom.eq.${B},txto.eq.${B}`).order('time', { ascending: false }).order('txhash'));
    assert.deepEqual(native, await expectRows(`SELECT * FROM public.ethtxs WHERE contract_to = '' AND (txfrom = $1 OR txto = $1) ORDER BY "time" DESC, txhash`, [B]));
    // Keyset pagination's cursor condition (spec rule 5) as a nested or(and()).
    const [cursor] = await expectRows('SELECT "time", txhash FROM public.ethtxs ORDER BY "time" DESC, txhash DESC OFFSET 100 LIMIT 1');
    const page = ok(
      await client
        .from('ethtxs')
        .select('time,txhash')
        .or(`time.lt.${cursor!.time},and(time.eq.${cursor!.time},txhash.lt.${cursor!.txhash})`)
        .order('time', { ascending: false })
        .order('txhash', { ascending: false })
        .limit(7),
    );
    assert.deepEqual(page, await expectRows('SELECT "time", txhash FROM public.ethtxs ORDER BY "time" DESC, txhash DESC OFFSET 101 LIMIT 7'));
    for (const [label, list] of [['both', both], ['nested', nested], ['native', native], ['page', page]] as const) assert.ok(list.length > 0, label);
  });

  test('match (the object form) and filter (raw operator)', async () => {
    const matched = ok(await client.from('ethtxs').select().match({ txfrom: A, txto: TOKEN_1 }));
    assert.deepEqual(byHash(matched), byHash(await expectRows('SELECT * FROM public.ethtxs WHERE txfrom = $1 AND txto = $2', [A, TOKEN_1])));
    assert.ok(matched.length > 0);
    const numbers = ok(await client.from('ethtxs').select().match({ block: 7, contract_to: '' }));
    assert.deepEqual(byHash(numbers), byHash(await expectRows(`SELECT * FROM public.ethtxs WHERE block = 7 AND contract_to = ''`)));
    const filtered = ok(await client.from('ethtxs').select().filter('block', 'gte', 40).filter('txfrom', 'in', `(${D},${E})`));
    assert.deepEqual(byHash(filtered), byHash(await expectRows('SELECT * FROM public.ethtxs WHERE block >= 40 AND txfrom IN ($1, $2)', [D, E])));
    assert.ok(filtered.length > 0);
    const negated = ok(await client.from('ethtxs').select().filter('txto', 'not.is', null).filter('block', 'eq', 9));
    assert.deepEqual(byHash(negated), byHash(await expectRows('SELECT * FROM public.ethtxs WHERE txto IS NOT NULL AND block = 9')));
  });

  test('order: asc, desc, nullsFirst/nullsLast, several columns', async () => {
    const cases: Array<[string, PromiseLike<{ error: unknown; status: number; data: unknown }>, string]> = [
      ['txhash asc', client.from('ethtxs').select('txhash,block').order('txhash'), 'SELECT txhash, block FROM public.ethtxs ORDER BY txhash ASC'],
      ['txhash desc', client.from('ethtxs').select('txhash,block').order('txhash', { ascending: false }), 'SELECT txhash, block FROM public.ethtxs ORDER BY txhash DESC'],
      [
        'block desc, value asc, txhash desc',
        client.from('ethtxs').select('block,value,txhash').order('block', { ascending: false }).order('value').order('txhash', { ascending: false }),
        'SELECT block, value, txhash FROM public.ethtxs ORDER BY block DESC, value ASC, txhash DESC',
      ],
      [
        'txto asc nullsFirst',
        client.from('ethtxs').select('txto,txhash').order('txto', { nullsFirst: true }).order('txhash'),
        'SELECT txto, txhash FROM public.ethtxs ORDER BY txto ASC NULLS FIRST, txhash',
      ],
      [
        'txto desc nullsLast',
        client.from('ethtxs').select('txto,txhash').order('txto', { ascending: false, nullsFirst: false }).order('txhash'),
        'SELECT txto, txhash FROM public.ethtxs ORDER BY txto DESC NULLS LAST, txhash',
      ],
      [
        'txto asc (PostgreSQL default: nulls last)',
        client.from('ethtxs').select('txto,txhash').order('txto').order('txhash'),
        'SELECT txto, txhash FROM public.ethtxs ORDER BY txto ASC, txhash',
      ],
      [
        'time desc, txhash asc, filtered',
        client.from('ethtxs').select().eq('txfrom', C).order('time', { ascending: false }).order('txhash'),
        `SELECT * FROM public.ethtxs WHERE txfrom = '${C}' ORDER BY "time" DESC, txhash`,
      ],
    ];
    for (const [label, request, query] of cases) {
      const expected = await expectRows(query);
      const data = ok(await request);
      assert.ok(data.length > 0, label);
      assert.deepEqual(data, expected, label);
    }
    const first = ok(await client.from('ethtxs').select('txto').order('txto', { nullsFirst: true }).limit(1));
    assert.deepEqual(first, [{ txto: null }], 'nullsFirst puts a null row first');
  });

  test('range and limit: the window SQL returns', async () => {
    const windows: Array<[string, PromiseLike<{ error: unknown; status: number; data: unknown }>, string]> = [
      ['limit 10', client.from('ethtxs').select().order('txhash').limit(10), 'SELECT * FROM public.ethtxs ORDER BY txhash LIMIT 10'],
      ['range 0-4', client.from('ethtxs').select().order('txhash').range(0, 4), 'SELECT * FROM public.ethtxs ORDER BY txhash OFFSET 0 LIMIT 5'],
      ['range 37-61', client.from('ethtxs').select().order('txhash').range(37, 61), 'SELECT * FROM public.ethtxs ORDER BY txhash OFFSET 37 LIMIT 25'],
      [
        'range on a filtered, ordered set',
        client.from('ethtxs').select('txhash,time').or(`txfrom.eq.${A},txto.eq.${A}`).order('time', { ascending: false }).order('txhash').range(3, 9),
        `SELECT txhash, "time" FROM public.ethtxs WHERE txfrom = '${A}' OR txto = '${A}' ORDER BY "time" DESC, txhash OFFSET 3 LIMIT 7`,
      ],
      ['range past the end', client.from('ethtxs').select().order('txhash').range(ROWS.length - 2, ROWS.length + 10), `SELECT * FROM public.ethtxs ORDER BY txhash OFFSET ${ROWS.length - 2} LIMIT 13`],
      ['limit 0', client.from('ethtxs').select().order('txhash').limit(0), 'SELECT * FROM public.ethtxs LIMIT 0'],
    ];
    for (const [label, request, query] of windows) {
      const data = ok(await request);
      assert.deepEqual(data, await expectRows(query), label);
    }
    assert.equal(ok(await client.from('ethtxs').select().order('txhash').range(ROWS.length - 2, ROWS.length + 10)).length, 2);
  });

  test('select with columns: only those keys, in the order asked; alias and cast; every digit of numeric and bigint', async () => {
    const data = ok(await client.from('ethtxs').select('value, txhash,block').eq('txfrom', B).order('txhash'));
    assert.deepEqual(data, await expectRows('SELECT value, txhash, block FROM public.ethtxs WHERE txfrom = $1 ORDER BY txhash', [B]));
    assert.ok(data.length > 0);
    for (const row of data) assert.deepEqual(Object.keys(row), ['value', 'txhash', 'block']);
    const star = ok(await client.from('ethtxs').select('*').eq('block', 11).order('txhash'));
    assert.deepEqual(Object.keys(star[0]!), ['time', 'txfrom', 'txto', 'gas', 'gasprice', 'block', 'txhash', 'value', 'contract_to', 'contract_value']);
    // JSON numbers lose digits in JSON.parse; cast to text (PostgREST's `col::text`) to see the exact values.
    const exact = ok(await client.from('ethtxs').select('hash:txhash,value::text,gasprice::text').or(`value.eq.${BIG_VALUE},gasprice.eq.${UNSAFE_GASPRICE}`).order('txhash'));
    const expected = await expectRows('SELECT txhash AS hash, value::text AS value, gasprice::text AS gasprice FROM public.ethtxs WHERE value = $1 OR gasprice = $2 ORDER BY txhash', [BIG_VALUE, UNSAFE_GASPRICE]);
    assert.deepEqual(exact, expected);
    assert.ok(exact.some((row) => row.value === BIG_VALUE));
    assert.ok(exact.some((row) => row.gasprice === UNSAFE_GASPRICE));
    for (const row of exact) assert.deepEqual(Object.keys(row), ['hash', 'value', 'gasprice']);
  });

  test("JSON arrows on columns that are not json (select('k:block->a'), filter('txhash->>0', ...)): to_jsonb of the column, as PostgREST", async () => {
    const data = ok(await client.from('ethtxs').select('txhash, k:block->a, first:txhash->>0').eq('txfrom', B).order('txhash').limit(5));
    assert.deepEqual(data, await expectRows(`SELECT txhash, to_jsonb(block)->'a' AS k, to_jsonb(txhash)->>0 AS first FROM public.ethtxs WHERE txfrom = $1 ORDER BY txhash LIMIT 5`, [B]));
    assert.ok(data.length > 0 && data.every((row) => row.k === null));
    const one = ok(await client.from('ethtxs').select('txhash').filter('block->>0', 'eq', '11').order('txhash'));
    assert.deepEqual(one, await expectRows(`SELECT txhash FROM public.ethtxs WHERE to_jsonb(block)->>0 = '11' ORDER BY txhash`));
    assert.ok(one.length > 0);
  });

  test('count: exact, planned, estimated (exact under max-rows); head gives the count and no data', async () => {
    const total = await expectCount('SELECT 1 FROM public.ethtxs WHERE txfrom = $1', [A]);
    assert.ok(total > 5);
    const exact = await client.from('ethtxs').select('txhash', { count: 'exact' }).eq('txfrom', A).order('txhash');
    assert.deepEqual(ok(exact), await expectRows('SELECT txhash FROM public.ethtxs WHERE txfrom = $1 ORDER BY txhash', [A]));
    assert.equal(exact.count, total);
    // A window smaller than the counted total: 206 Partial Content with the exact total.
    const partial = await client.from('ethtxs').select('txhash', { count: 'exact' }).eq('txfrom', A).order('txhash').limit(3);
    assert.deepEqual(ok(partial, 206), await expectRows('SELECT txhash FROM public.ethtxs WHERE txfrom = $1 ORDER BY txhash LIMIT 3', [A]));
    assert.equal(partial.count, total);
    const planned = await client.from('ethtxs').select('txhash', { count: 'planned' }).eq('txfrom', A).order('txhash');
    assert.equal(planned.error, null);
    assert.deepEqual(planned.data, exact.data);
    assert.ok(Number.isInteger(planned.count) && planned.count! >= 0, `planned count: ${planned.count}`);
    // estimated: exact while the total is under max-rows (10,000 here), PostgREST's guarantee.
    const estimated = await client.from('ethtxs').select('txhash', { count: 'estimated' }).eq('txfrom', A).order('txhash');
    assert.deepEqual(ok(estimated), exact.data);
    assert.equal(estimated.count, total);
    const all = await client.from('ethtxs').select('*', { count: 'estimated', head: true });
    assert.equal(all.error, null);
    assert.equal(all.count, ROWS.length);

    const headTotal = await expectCount('SELECT 1 FROM public.ethtxs WHERE txto = $1', [B]);
    const head = await client.from('ethtxs').select('*', { count: 'exact', head: true }).eq('txto', B);
    assert.deepEqual({ error: head.error, status: head.status, data: head.data, count: head.count }, { error: null, status: 200, data: null, count: headTotal });
    const { error, data, count } = await client.from('ethtxs').select('*', { count: 'planned', head: true }).eq('txto', B);
    assert.equal(error, null);
    assert.equal(data, null);
    assert.ok(Number.isInteger(count) && count! >= 0, `planned head count: ${count}`);
    const noCount = await client.from('ethtxs').select('txhash').eq('txto', B);
    assert.equal(noCount.count, null, 'no count without a count option');
  });

  test('/max_block and /aval', async () => {
    const max = ok(await client.from('max_block').select());
    assert.deepEqual(max, await expectRows('SELECT * FROM public.max_block'));
    assert.deepEqual(max, [{ max: LAST_BLOCK, version: '3.0.0' }]);
    const version = ok(await client.from('max_block').select('version'));
    assert.deepEqual(version, await expectRows('SELECT version FROM public.max_block'));
    const aval = ok(await client.from('aval').select());
    assert.deepEqual(aval, await expectRows('SELECT * FROM public.aval'));
    assert.deepEqual(aval, [{ status: true }]);
  });

  test('maybeSingle: 0 rows → data null, no error; 1 row → the object; 2+ rows → PGRST116 (client-side)', async () => {
    const none = await client.from('ethtxs').select().eq('txhash', `0x${'f'.repeat(64)}`).maybeSingle();
    assert.equal(none.error, null);
    assert.equal(none.status, 200);
    assert.equal(none.data, null);
    const hash = ROWS[123]!.txhash;
    const one = await client.from('ethtxs').select().eq('txhash', hash.toUpperCase().replace('0X', '0x')).maybeSingle();
    assert.equal(one.error, null);
    assert.equal(one.status, 200);
    assert.deepEqual(one.data, (await expectRows('SELECT * FROM public.ethtxs WHERE txhash = $1', [hash]))[0]);
    const many = await client.from('ethtxs').select().eq('block', 8).maybeSingle();
    const n = await expectCount('SELECT 1 FROM public.ethtxs WHERE block = 8');
    failed(many, { status: 406, code: 'PGRST116', message: 'JSON object requested, multiple (or no) rows returned', details: `Results contain ${n} rows, application/vnd.pgrst.object+json requires 1 row` });
  });

  test('single: one row → the object itself', async () => {
    const hash = ROWS[77]!.txhash;
    const one = await client.from('ethtxs').select().eq('txhash', hash).single();
    assert.equal(one.error, null, JSON.stringify(one.error));
    assert.equal(one.status, 200);
    assert.deepEqual(one.data, (await expectRows('SELECT * FROM public.ethtxs WHERE txhash = $1', [hash]))[0]);
    const max = await client.from('max_block').select('max').single();
    assert.equal(max.error, null, JSON.stringify(max.error));
    assert.deepEqual(max.data, (await expectRows('SELECT max FROM public.max_block'))[0]);
  });

  test('single on 0 rows and on 2+ rows: 406 PGRST116 "The result contains N rows"', async () => {
    const none = await client.from('ethtxs').select().eq('txhash', `0x${'e'.repeat(64)}`).single();
    failed(none, { status: 406, code: 'PGRST116', message: SINGULAR_MESSAGE, details: 'The result contains 0 rows', hint: null });
    const n = await expectCount('SELECT 1 FROM public.ethtxs WHERE block = 12');
    assert.ok(n >= 2);
    const many = await client.from('ethtxs').select().eq('block', 12).single();
    failed(many, { status: 406, code: 'PGRST116', message: SINGULAR_MESSAGE, details: `The result contains ${n} rows`, hint: null });
  });

  test('csv: a header line of column names, then the rows as PostgreSQL writes them', async () => {
    const query = 'SELECT txhash, txto, value, block FROM public.ethtxs WHERE block IN (2, 3, 21) ORDER BY txhash';
    // PostgREST's CSV body (QueryBuilder asCsvF): the column names joined by commas, '\n', then each row's record
    // text without its parentheses, joined by '\n'.
    const lines = await sql.query<{ line: string }>(`SELECT substring(_t::text, 2, length(_t::text) - 2) AS line FROM (${query}) _t`);
    const expected = ['txhash,txto,value,block', ...lines.rows.map((row) => row.line)].join('\n');
    assert.ok(lines.rows.some((row) => row.line.includes(',,')), 'a null txto shows as an empty field');
    const answer = await client.from('ethtxs').select('txhash,txto,value,block').in('block', [2, 3, 21]).order('txhash').csv();
    assert.equal(answer.error, null, JSON.stringify(answer.error));
    assert.equal(answer.status, 200);
    assert.equal(typeof answer.data, 'string');
    assert.equal(answer.data, expected);
    // Huge numbers keep every digit in CSV.
    const big = await client.from('ethtxs').select('value').eq('value', BIG_VALUE).limit(1).csv();
    assert.equal(big.error, null, JSON.stringify(big.error));
    assert.equal(big.data, `value\n${BIG_VALUE}`);
  });

  test('stripNulls: keys with null values are left out', async () => {
    const query = 'SELECT txhash, txto, value FROM public.ethtxs WHERE block IN (2, 3, 21) ORDER BY txhash';
    const expected = (await sql.query<{ j: string }>(`SELECT json_strip_nulls(to_json(_t))::text AS j FROM (${query}) _t`)).rows.map((row) => JSON.parse(row.j) as Row);
    assert.ok(expected.some((row) => !('txto' in row)), 'the seed has a null txto in this set');
    const answer = await client.from('ethtxs').select('txhash,txto,value').in('block', [2, 3, 21]).order('txhash').stripNulls();
    assert.deepEqual(ok(answer), expected);
    const one = await client.from('ethtxs').select('txhash,txto').is('txto', null).order('txhash').limit(1).single().stripNulls();
    assert.equal(one.error, null, JSON.stringify(one.error));
    assert.deepEqual(one.data, (await sql.query<{ j: string }>(`SELECT json_strip_nulls(to_json(_t))::text AS j FROM (SELECT txhash, txto FROM public.ethtxs WHERE txto IS NULL ORDER BY txhash LIMIT 1) _t`)).rows.map((row) => JSON.parse(row.j) as Row)[0]);
  });

  test('an Accept the gateway cannot produce: 406 PGRST107', async () => {
    const answer = await client.from('ethtxs').select('txhash').limit(1).setHeader('Accept', 'application/xml');
    failed(answer, { status: 406, code: 'PGRST107', message: 'None of these media types are available: application/xml', details: null, hint: null });
  });

  test('errors: an unknown column is 42703, an unknown table PGRST205', async () => {
    failed(await client.from('ethtxs').select('txhash,nosuch'), { status: 400, code: '42703', message: 'column ethtxs.nosuch does not exist' });
    failed(await client.from('ethtxs').select().eq('nosuch', 1), { status: 400, code: '42703', message: 'column ethtxs.nosuch does not exist' });
    failed(await client.from('ethtxs').select().order('nosuch'), { status: 400, code: '42703', message: 'column ethtxs.nosuch does not exist' });
    failed(await client.from('nosuch').select(), { status: 404, code: 'PGRST205', message: "Could not find the table 'public.nosuch' in the schema cache", details: null });
    failed(await client.from('ethtxs').select().eq('block', 'abc'), { status: 400, code: '22P02', message: 'invalid input syntax for type integer: "abc"' });
  });

  test("a client built with { schema: 'api' }: 406 PGRST106 while only public is exposed; { schema: 'public' } works", async () => {
    const api = new PostgrestClient(node.url, { schema: 'api' });
    failed(await api.from('transfers').select(), { status: 406, code: 'PGRST106', message: 'Invalid schema: api', details: null, hint: 'Only the following schemas are exposed: public' });
    const pub = new PostgrestClient(node.url, { schema: 'public' });
    const data = ok(await pub.from('ethtxs').select('txhash').eq('block', 5).order('txhash'));
    assert.deepEqual(data, await expectRows('SELECT txhash FROM public.ethtxs WHERE block = 5 ORDER BY txhash'));
    assert.ok(data.length > 0);
  });

  test("PGRST_DB_SCHEMAS='public,api': { schema: 'api' } reads the api schema's rows; public stays the default", async () => {
    const api = new PostgrestClient(apiNode.url, { schema: 'api' });
    const all = ok(await api.from('transfers').select().order('txhash'));
    assert.deepEqual(all, await expectRows('SELECT * FROM api.transfers ORDER BY txhash'));
    assert.equal(all.length, ROWS.length);
    const filtered = ok(await api.from('transfers').select('txhash,value').eq('txfrom', E).gt('block', 30).order('txhash'));
    assert.deepEqual(filtered, await expectRows('SELECT txhash, value FROM api.transfers WHERE txfrom = $1 AND block > 30 ORDER BY txhash', [E]));
    assert.ok(filtered.length > 0);
    const switched = ok(await new PostgrestClient(apiNode.url).schema('api').from('transfers').select('txhash').eq('block', 6).order('txhash'));
    assert.deepEqual(switched, await expectRows('SELECT txhash FROM api.transfers WHERE block = 6 ORDER BY txhash'));
    failed(await api.from('ethtxs').select(), { status: 404, code: 'PGRST205', message: "Could not find the table 'api.ethtxs' in the schema cache" });
    // Without a profile the first schema (public) is served.
    const plain = ok(await new PostgrestClient(apiNode.url).from('ethtxs').select('txhash').eq('block', 6).order('txhash'));
    assert.deepEqual(plain, switched);
    failed(await new PostgrestClient(apiNode.url).from('transfers').select(), { status: 404, code: 'PGRST205', message: "Could not find the table 'public.transfers' in the schema cache" });
    failed(await new PostgrestClient(apiNode.url, { schema: 'other' }).from('transfers').select(), {
      status: 406,
      code: 'PGRST106',
      message: 'Invalid schema: other',
      hint: 'Only the following schemas are exposed: public, api',
    });
  });

  test(".rpc('fn') on a function that does not exist: 404 PGRST202", async () => {
    const post = await client.rpc('fn');
    failed(post, {
      status: 404,
      code: 'PGRST202',
      message: 'Could not find the function public.fn without parameters in the schema cache',
      details: 'Searched for the function public.fn without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
    });
    const get = await client.rpc('fn', {}, { get: true });
    failed(get, {
      status: 404,
      code: 'PGRST202',
      message: 'Could not find the function public.fn without parameters in the schema cache',
      details: 'Searched for the function public.fn without parameters, but no matches were found in the schema cache.',
    });
  });

  test("select('*, other(*)'): no relationship, 400 PGRST200", async () => {
    const answer = await client.from('ethtxs').select('*, other(*)');
    failed(answer, {
      status: 400,
      code: 'PGRST200',
      message: "Could not find a relationship between 'ethtxs' and 'other' in the schema cache",
      details: "Searched for a foreign key relationship between 'ethtxs' and 'other' in the schema 'public', but no matches were found.",
      hint: null,
    });
  });

  test("aggregates (select('gas.sum()'), select('count()')): 400 PGRST123, as a stock PostgREST answers", async () => {
    for (const columns of ['gas.sum()', 'count()', 'total:value.sum()::text', 'block.max(),block.min()']) {
      failed(await client.from('ethtxs').select(columns), { status: 400, code: 'PGRST123', message: 'Use of aggregate functions is not allowed', details: null, hint: null });
    }
  });
});
