// The gateway's pure read pipeline (src/transfers/read.ts and the modules under it): the PostgREST grammar and its
// error strings (notes B.1, QueryParams.hs doctests), the SQL it produces (values bound, identifiers quoted), the
// range/status rules (B.2, F.1–F.3), Prefer, and the error table (gateway-errors.ts). No database here: a recording
// executor stands in; postgrest-compat.test.ts runs the same pipeline on PGlite and PostgreSQL.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  closestName,
  GatewayError,
  gatewayErrorReply,
  methodNotAllowed,
  relationNotFound,
  statusOfSqlState,
} from '../../src/transfers/gateway-errors.js';
import { parseQueryParams, planRead, readInteger } from '../../src/transfers/query-params.js';
import { showChar, showString } from '../../src/transfers/query-parsec.js';
import { canonicalQuery, decodePathSegment, parseQueryString, urlDecode } from '../../src/transfers/query-string.js';
import { parsePrefer } from '../../src/transfers/read-prefer.js';
import { planWindow, rangeOutcome } from '../../src/transfers/read-range.js';
import type { RelationFacts } from '../../src/transfers/relation-facts.js';
import { plannedRows, runRead, type ReadRequest, type ReadSettings } from '../../src/transfers/read.js';

interface Recorded {
  readonly text: string;
  readonly values: readonly (string | null)[];
}

/** An executor that records every statement and answers like the main read statement would. */
function recorder(answer: Record<string, unknown> = { body: '[]', page_count: '0', total: '0', more_rows: 'false' }) {
  const statements: Recorded[] = [];
  const execute = async (text: string, values: readonly (string | null)[]) => {
    statements.push({ text, values: [...values] });
    if (text.startsWith('EXPLAIN')) return [{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': 42 } }] }];
    return [answer];
  };
  return { statements, execute };
}

async function sqlOf(query: string, request: Partial<ReadRequest> = {}, settings: ReadSettings = {}, facts: RelationFacts = {}): Promise<Recorded> {
  const { statements, execute } = recorder();
  await runRead({ method: 'GET', schema: 'public', relation: 'ethtxs', query, ...request }, settings, execute, facts);
  return statements[0]!;
}

/** The GatewayError a read throws before reaching the database. */
async function failureOf(query: string, request: Partial<ReadRequest> = {}, settings: ReadSettings = {}): Promise<GatewayError> {
  const { statements, execute } = recorder();
  try {
    await runRead({ method: 'GET', schema: 'public', relation: 'items', query, ...request }, settings, execute);
  } catch (error) {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    return error;
  }
  assert.fail(`no error for ?${query} (statements: ${statements.length})`);
}

/** Every $n in the text refers to a value, and every value is referenced. */
function assertPlaceholdersMatch({ text, values }: Recorded) {
  const used = new Set([...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
  assert.deepEqual([...used].sort((a, b) => a - b), values.map((_, i) => i + 1));
}

const COL = (name: string) => `"public"."ethtxs"."${name}"`;

describe('query string decoding (http-types semantics)', () => {
  test('`+` is a space, %XX a UTF-8 byte, a malformed escape stays literal', () => {
    assert.equal(urlDecode('a+b%20c'), 'a b c');
    assert.equal(urlDecode('%C3%A9t%C3%A9'), 'été');
    assert.equal(urlDecode('100%'), '100%');
    assert.equal(urlDecode('%zz%4'), '%zz%4');
  });

  test('undecodable input never throws: invalid UTF-8 is U+FFFD (issue 15)', () => {
    assert.equal(urlDecode('%FF%FE'), '\uFFFD\uFFFD');
    assert.equal(urlDecode('eq.%E0%A4%A'), 'eq.\uFFFD%A');
  });

  test('a path segment decodes like WAI pathInfo: `+` stays, malformed escapes stay, invalid UTF-8 is U+FFFD', () => {
    assert.equal(decodePathSegment('eth%74xs'), 'ethtxs');
    assert.equal(decodePathSegment('a+b%20c'), 'a+b c');
    assert.equal(decodePathSegment('%zz'), '%zz');
    assert.equal(decodePathSegment('%'), '%');
    assert.equal(decodePathSegment('%FF%FE'), '\uFFFD\uFFFD');
    assert.equal(decodePathSegment('%E0%A4%A'), '\uFFFD%A');
  });

  test('pairs split on & and ;, keys without = have no value, `key=` has the empty value', () => {
    assert.deepEqual(parseQueryString('a=1&b&c=&d=x=y;e=2&'), [
      { key: 'a', value: '1' },
      { key: 'b', value: undefined },
      { key: 'c', value: '' },
      { key: 'd', value: 'x=y' },
      { key: 'e', value: '2' },
    ]);
    assert.deepEqual(parseQueryString(''), []);
  });

  test('the canonical query sorts keys stably and joins repeated keys with commas (Content-Location)', () => {
    assert.equal(canonicalQuery(parseQueryString('b=eq.1&a=eq.1')), 'a=eq.1&b=eq.1');
    assert.equal(canonicalQuery(parseQueryString('block=lt.20&select=txhash&block=gte.10&d')), 'block=lt.20,gte.10&d=&select=txhash');
    assert.equal(canonicalQuery(parseQueryString('name=eq.entity%201')), 'name=eq.entity%201');
  });
});

describe('filters', () => {
  test('every comparison operator binds its value and qualifies the column', async () => {
    const cases: [string, string][] = [
      ['eq', '='],
      ['neq', '<>'],
      ['gt', '>'],
      ['gte', '>='],
      ['lt', '<'],
      ['lte', '<='],
      ['match', '~'],
      ['imatch', '~*'],
      ['cs', '@>'],
      ['cd', '<@'],
      ['ov', '&&'],
      ['sl', '<<'],
      ['sr', '>>'],
      ['nxr', '&<'],
      ['nxl', '&>'],
      ['adj', '-|-'],
    ];
    for (const [operator, sql] of cases) {
      const { text, values } = await sqlOf(`block=${operator}.42`);
      assert.ok(text.includes(`WHERE ${COL('block')} ${sql} $1`), `${operator}: ${text}`);
      assert.equal(values[0], '42');
    }
  });

  test('like/ilike take * for %, the value is everything after the operator dot', async () => {
    assert.deepEqual((await sqlOf('txhash=like.0x*ab*')).values[0], '0x%ab%');
    assert.ok((await sqlOf('txhash=ilike.*AB')).text.includes(`${COL('txhash')} ILIKE $1`));
    assert.equal((await sqlOf('txhash=eq.a.b.c')).values[0], 'a.b.c');
    const empty = await sqlOf('contract_to=eq.');
    assert.ok(empty.text.includes(`${COL('contract_to')} = $1`));
    assert.equal(empty.values[0], '');
  });

  test('in: quoted items keep commas and parentheses, backslash escapes, in.() matches nothing', async () => {
    const { text, values } = await sqlOf('txfrom=in.(a,"b,c)","d\\"e",f\\g)');
    assert.ok(text.includes(`${COL('txfrom')} = ANY ($1)`));
    assert.equal(values[0], '{"a","b,c)","d\\"e","f\\\\g"}');
    assert.equal((await sqlOf('txfrom=in.()')).values[0], '{}');
    assert.ok((await sqlOf('txfrom=not.in.(a)')).text.includes(`NOT (${COL('txfrom')} = ANY ($1))`));
  });

  test('is: null, not_null, true, false, unknown in any case; anything else is 400', async () => {
    assert.ok((await sqlOf('txto=is.null')).text.includes(`${COL('txto')} IS NULL`));
    assert.ok((await sqlOf('txto=is.NOT_NULL')).text.includes(`${COL('txto')} IS NOT NULL`));
    assert.ok((await sqlOf('done=is.TrUe')).text.includes('IS TRUE'));
    assert.ok((await sqlOf('done=is.FALSE')).text.includes('IS FALSE'));
    assert.ok((await sqlOf('done=is.UnKnOwN')).text.includes('IS UNKNOWN'));
    assert.ok((await sqlOf('txto=not.is.null')).text.includes(`NOT (${COL('txto')} IS NULL)`));
    const error = await failureOf('done=is.nil');
    assert.equal(error.status, 400);
    assert.equal(error.code, 'PGRST100');
    assert.equal(error.message, '"failed to parse filter (is.nil)" (line 1, column 5)');
    assert.equal(error.details, 'unexpected "i" expecting isVal: (null, not_null, true, false, unknown)');
  });

  test('isdistinct, quantifiers and full-text search', async () => {
    assert.ok((await sqlOf('txto=isdistinct.x')).text.includes(`${COL('txto')} IS DISTINCT FROM $1`));
    const any = await sqlOf('block=eq(any).{1,2}');
    assert.ok(any.text.includes(`${COL('block')} = ANY ($1)`));
    assert.equal(any.values[0], '{1,2}');
    assert.ok((await sqlOf('block=gte(all).{1,2}')).text.includes(`${COL('block')} >= ALL ($1)`));
    const likeAll = await sqlOf('txhash=like(all).{0x*,*ab}');
    assert.ok(likeAll.text.includes('LIKE ALL ($1)'));
    assert.equal(likeAll.values[0], '{0x%,%ab}');
    const fts = await sqlOf('body=fts(english).fat%20cats');
    assert.ok(fts.text.includes(`${COL('body')} @@ to_tsquery($1, $2)`));
    assert.deepEqual(fts.values.slice(0, 2), ['english', 'fat cats']);
    assert.ok((await sqlOf('body=plfts.a')).text.includes('plainto_tsquery($1)'));
    assert.ok((await sqlOf('body=phfts.a')).text.includes('phraseto_tsquery($1)'));
    assert.ok((await sqlOf('body=not.wfts.a')).text.includes('NOT ("public"."ethtxs"."body" @@ websearch_to_tsquery($1))'));
  });

  test('repeated keys are ANDed; keys without = are dropped', async () => {
    const { text, values } = await sqlOf('block=gte.10&block=lt.20&flag');
    assert.ok(text.includes(`WHERE ${COL('block')} >= $1 AND ${COL('block')} < $2`), text);
    assert.deepEqual(values.slice(0, 2), ['10', '20']);
    assert.ok(!text.includes('flag'));
  });

  test('logic trees nest, negate and combine with plain filters', async () => {
    const { text, values } = await sqlOf('and=(contract_to.eq.,or(txfrom.eq.A,txto.eq.A))&block=gt.5&not.or=(block.eq.1,not.and(block.eq.2,txto.is.null))');
    assert.ok(
      text.includes(
        `WHERE ${COL('block')} > $1 AND (${COL('contract_to')} = $2 AND (${COL('txfrom')} = $3 OR ${COL('txto')} = $4)) AND NOT (${COL('block')} = $5 OR NOT (${COL('block')} = $6 AND ${COL('txto')} IS NULL))`,
      ),
      text,
    );
    assert.deepEqual(values.slice(0, 6), ['5', '', 'A', 'A', '1', '2']);
  });

  test('inside trees, quoted values may hold , and ) and {…} array literals stay whole', async () => {
    const { values } = await sqlOf('or=(name.eq."(grandchild,entity,4)",arr.cs.{1,2},name.like."*ity,4*")');
    assert.deepEqual(values.slice(0, 3), ['(grandchild,entity,4)', '{1,2}', '%ity,4%']);
  });
});

describe('PostgREST parse errors, verbatim (QueryParams.hs doctests, QuerySpec.hs, AndOrParamsSpec.hs)', () => {
  const cases: [string, string, string][] = [
    ['id=0', '"failed to parse filter (0)" (line 1, column 1)', 'unexpected "0" expecting "not" or operator (eq, gt, ...)'],
    ['a=noop.0', '"failed to parse filter (noop.0)" (line 1, column 1)', 'unexpected "o" expecting "not" or operator (eq, gt, ...)'],
    ['id=fts().value', '"failed to parse filter (fts().value)" (line 1, column 5)', 'unexpected ")" expecting operator (eq, gt, ...)'],
    ['id=eq().value', '"failed to parse filter (eq().value)" (line 1, column 4)', 'unexpected ")" expecting operator (eq, gt, ...)'],
    ['id=in().value', '"failed to parse filter (in().value)" (line 1, column 3)', 'unexpected "(" expecting operator (eq, gt, ...)'],
    ['order=id.asc.nullslasttt', '"failed to parse order (id.asc.nullslasttt)" (line 1, column 17)', 'unexpected \'t\' expecting "," or end of input'],
    ['order=id.ac', '"failed to parse order (id.ac)" (line 1, column 4)', 'unexpected "c" expecting "asc", "desc", "nullsfirst" or "nullslast"'],
    ['order=id.descc', '"failed to parse order (id.descc)" (line 1, column 8)', 'unexpected \'c\' expecting delimiter (.), "," or end of input'],
    ['order=id.nulsfist', '"failed to parse order (id.nulsfist)" (line 1, column 4)', 'unexpected "n" expecting "asc", "desc", "nullsfirst" or "nullslast"'],
    ['order=id.nullslasttt', '"failed to parse order (id.nullslasttt)" (line 1, column 13)', 'unexpected \'t\' expecting "," or end of input'],
    ['order=id.smth34', '"failed to parse order (id.smth34)" (line 1, column 4)', 'unexpected "s" expecting "asc", "desc", "nullsfirst" or "nullslast"'],
    ['order=id.asc.nlsfst', '"failed to parse order (id.asc.nlsfst)" (line 1, column 8)', 'unexpected "l" expecting "nullsfirst" or "nullslast"'],
    ['order=id.asc.smth34', '"failed to parse order (id.asc.smth34)" (line 1, column 8)', 'unexpected "s" expecting "nullsfirst" or "nullslast"'],
    [
      'order=clients(name,id)',
      '"failed to parse order (clients(name,id))" (line 1, column 8)',
      'unexpected \'(\' expecting letter, digit, "-", "->>", "->", delimiter (.), "," or end of input',
    ],
    [
      'or=()',
      '"failed to parse logic tree (())" (line 1, column 4)',
      'unexpected ")" expecting field name (* or [a..z0..9_$]), negation operator (not) or logic operator (and, or)',
    ],
    ['or=(id.in.1,2,id.eq.3)', '"failed to parse logic tree ((id.in.1,2,id.eq.3))" (line 1, column 10)', 'unexpected "1" expecting "("'],
    ['and=(ord(id.eq.1,id.eq.1),id.eq.2)', '"failed to parse logic tree ((ord(id.eq.1,id.eq.1),id.eq.2))" (line 1, column 7)', 'unexpected "d" expecting "("'],
    ['or=(id.eq.1,not.xor(id.eq.2,id.eq.3))', '"failed to parse logic tree ((id.eq.1,not.xor(id.eq.2,id.eq.3)))" (line 1, column 16)', 'unexpected "x" expecting logic operator (and, or)'],
    [
      'select=id,clients(name[])',
      '"failed to parse select parameter (id,clients(name[]))" (line 1, column 16)',
      'unexpected \'[\' expecting letter, digit, "-", "->>", "->", "::", ".", ")", "," or end of input',
    ],
    ['select=data->>-78xy', '"failed to parse select parameter (data->>-78xy)" (line 1, column 11)', 'unexpected \'x\' expecting digit, "->", "::", ".", "," or end of input'],
    [
      'select=name!hint',
      '"failed to parse select parameter (name!hint)" (line 1, column 5)',
      'unexpected \'!\' expecting letter, digit, "-", "->>", "->", "::", ".", ")", "," or end of input',
    ],
    ['select=name::', '"failed to parse select parameter (name::)" (line 1, column 7)', 'unexpected end of input expecting letter or digit'],
  ];
  for (const [query, message, details] of cases) {
    test(`?${query}`, async () => {
      const error = await failureOf(query);
      assert.deepEqual(
        { status: error.status, code: error.code, message: error.message, details: error.details, hint: error.hint },
        { status: 400, code: 'PGRST100', message, details, hint: null },
      );
    });
  }

  test('the reply body carries the same fields in PostgREST key order', async () => {
    const reply = gatewayErrorReply(await failureOf('order=id.asc.nullslasttt'));
    assert.equal(reply.status, 400);
    assert.equal(reply.headers['Content-Type'], 'application/json; charset=utf-8');
    assert.equal(
      reply.body,
      '{"code":"PGRST100","details":"unexpected \'t\' expecting \\",\\" or end of input","hint":null,"message":"\\"failed to parse order (id.asc.nullslasttt)\\" (line 1, column 17)"}',
    );
  });

  test('errors are reported in PostgREST order: order before logic before select before filters', async () => {
    assert.match((await failureOf('id=0&select=a[&or=()&order=x.y')).message, /failed to parse order/);
    assert.match((await failureOf('id=0&select=a[&or=()')).message, /failed to parse logic tree/);
    assert.match((await failureOf('id=0&select=a,b[')).message, /failed to parse select parameter/);
  });

  test('Haskell show escapes what it names', () => {
    assert.equal(showString('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(showString('é1'), '"\\233\\&1"');
    assert.equal(showString('\n'), '"\\n"');
    assert.equal(showChar("'"), "'\\''");
    assert.equal(showChar('x'), "'x'");
  });

  test('absurd nesting is a 400, not a stack overflow', async () => {
    const deep = `or=(${'and('.repeat(20000)}id.eq.1${')'.repeat(20000)})`;
    const error = await failureOf(deep);
    assert.equal(error.status, 400);
    assert.equal(error.code, 'PGRST100');
  });
});

describe('order, select, limit and offset', () => {
  test('order: several terms, directions and nulls placement', async () => {
    const { text } = await sqlOf('order=block.desc,txhash,time.asc.nullsfirst,gas.nullslast');
    assert.ok(text.includes(`ORDER BY ${COL('block')} DESC, ${COL('txhash')}, ${COL('time')} ASC NULLS FIRST, ${COL('gas')} NULLS LAST`), text);
  });

  test('select: *, columns, alias:column, column::type (named after the column)', async () => {
    assert.ok((await sqlOf('')).text.includes('SELECT "public"."ethtxs".* FROM'));
    const { text } = await sqlOf('select=txhash,height:block,value::text,v:value::numeric,*');
    assert.ok(
      text.includes(`SELECT ${COL('txhash')}, ${COL('block')} AS "height", ${COL('value')}::text AS "value", ${COL('value')}::numeric AS "v", "public"."ethtxs".* FROM`),
      text,
    );
    assert.ok((await sqlOf('select=value::double precision')).text.includes('::double precision AS "value"'));
  });

  test('limit/offset: written as literals (digits of bigints the gateway read), non-numeric ignored, negative offset a no-op', async () => {
    const paged = await sqlOf('limit=25&offset=50');
    assert.ok(paged.text.includes(' LIMIT 25 OFFSET 50)'), paged.text);
    assert.deepEqual(paged.values, []);
    assert.ok((await sqlOf('limit=0x1F')).text.includes(' LIMIT 31)'));
    const ignored = await sqlOf('limit=abc&offset=-4');
    assert.ok(!/LIMIT|OFFSET/.test(ignored.text), ignored.text);
    assert.equal(readInteger(' 12 '), 12n);
    assert.equal(readInteger('0x1F'), 31n);
    assert.equal(readInteger('-3'), -3n);
    assert.equal(readInteger('(7)'), 7n);
    assert.equal(readInteger('1e3'), undefined);
    assert.equal(readInteger('+5'), undefined);
  });

  test('limit=-1 is 416 PGRST103; max-rows caps the limit; max-offset refuses deep offsets (F.3)', async () => {
    const negative = await failureOf('limit=-1');
    assert.deepEqual([negative.status, negative.code, negative.message, negative.details], [416, 'PGRST103', 'Requested range not satisfiable', 'Limit should be greater than or equal to zero.']);
    assert.ok((await sqlOf('limit=50', {}, { maxRows: 10 })).text.endsWith(' LIMIT 10) _pgrst_page'));
    assert.ok((await sqlOf('', {}, { maxRows: 10 })).text.endsWith(' LIMIT 10) _pgrst_page'));
    const deep = await failureOf('offset=1001', {}, { maxOffset: 1000 });
    assert.deepEqual(
      JSON.parse(gatewayErrorReply(deep).body),
      { code: 'PGRST100', details: 'max offset is 1000', hint: 'use keyset pagination', message: 'offset too large' },
    );
    assert.equal(deep.status, 400);
    await sqlOf('offset=1000', {}, { maxOffset: 1000 });
  });

  test("aggregates answer PostgREST's own refusal (PGRST123, db-aggregates-enabled is off by default)", async () => {
    for (const query of ['select=count()', 'select=gas.sum()', 'select=total:value.sum()::text', 'select=time.max(),block.min(),gas.avg()', 'select=txhash,count()']) {
      const error = await failureOf(query);
      assert.equal(error.status, 400, query);
      assert.deepEqual({ code: error.code, message: error.message, details: error.details, hint: error.hint }, { code: 'PGRST123', message: 'Use of aggregate functions is not allowed', details: null, hint: null }, query);
    }
  });

  test('an empty select= is every column, as * (PostgREST v11+, QueryBuilder.hs defSelect)', async () => {
    assert.ok((await sqlOf('select=')).text.includes('SELECT "public"."ethtxs".* FROM'));
    assert.deepEqual(planRead(parseQueryParams(parseQueryString('select=')), { schema: 'public', relation: 'ethtxs' }).select, [{ kind: 'all' }]);
  });
});

describe('JSON paths (PostgREST JsonOperatorSpec): -> and ->> with keys and indexes', () => {
  /** `data` is a json column here: its arrows apply to it as it is. */
  const jsonSqlOf = (query: string) => sqlOf(query, {}, {}, { jsonColumns: new Set(['data']) });

  test('arrows on a column that is not json/jsonb, or of a type the schema cache does not know, apply to to_jsonb() of it', async () => {
    const other = await sqlOf('select=k:block->a&txfrom->>0=eq.x&order=gas->b', {}, {}, { jsonColumns: new Set(['data']) });
    assert.ok(other.text.includes(`to_jsonb(${COL('block')})->$4 AS "k"`), other.text);
    assert.ok(other.text.includes(`to_jsonb(${COL('txfrom')})->>$1::int = $2`), other.text);
    assert.ok(other.text.includes(`ORDER BY to_jsonb(${COL('gas')})->$3`), other.text);
    assert.ok((await sqlOf('select=data->a')).text.includes(`to_jsonb(${COL('data')})->$1`), 'no facts: every column is wrapped');
    assert.ok(!(await jsonSqlOf('select=data->a,block')).text.includes('to_jsonb'), 'a json column, and a column without a path, as they are');
  });

  test('select: keys bound, the key of a path is its last key, aliases and casts', async () => {
    const { text, values } = await jsonSqlOf('select=data->>c,data->a->>b,x:data->>c,data->>c::int,y:data->a->>n::numeric');
    assert.ok(
      text.includes(
        `SELECT ${COL('data')}->>$1 AS "c", ${COL('data')}->$2->>$3 AS "b", ${COL('data')}->>$4 AS "x", (${COL('data')}->>$5)::int AS "c", (${COL('data')}->$6->>$7)::numeric AS "y" FROM`,
      ),
      text,
    );
    assert.deepEqual(values, ['c', 'a', 'b', 'c', 'c', 'a', 'n']);
    assertPlaceholdersMatch({ text, values });
  });

  test('indexes: bound and cast to int, negative too; a path ending in an index is named by its last key, else the column', async () => {
    const { text, values } = await jsonSqlOf('select=data->0,data->1->mycol->>2,data->>-1::int,i:data->-2');
    assert.ok(
      text.includes(
        `SELECT ${COL('data')}->$1::int AS "data", ${COL('data')}->$2::int->$3->>$4::int AS "mycol", (${COL('data')}->>$5::int)::int AS "data", ${COL('data')}->$6::int AS "i" FROM`,
      ),
      text,
    );
    assert.deepEqual(values, ['0', '1', 'mycol', '2', '-1', '-2']);
    // Only well formed numbers are indexes (JsonOperatorSpec "only treats well formed numbers as indexes").
    assert.deepEqual((await jsonSqlOf('select=data->0xy1->23-xy-45->>-7')).values, ['0xy1', '23-xy-45', '-7']);
  });

  test('filters, logic trees and order take JSON paths; keys come before the value they compare', async () => {
    const filter = await jsonSqlOf('data->a->>b=eq.x&data->>0=not.in.(1,2)');
    assert.ok(filter.text.includes(`WHERE ${COL('data')}->$1->>$2 = $3 AND NOT (${COL('data')}->>$4::int = ANY ($5))`), filter.text);
    assert.deepEqual(filter.values, ['a', 'b', 'x', '0', '{"1","2"}']);
    const tree = await jsonSqlOf('or=(data->a->>b.eq.foo, data->>b.like.ba*)');
    assert.ok(tree.text.includes(`WHERE (${COL('data')}->$1->>$2 = $3 OR ${COL('data')}->>$4 LIKE $5)`), tree.text);
    assert.deepEqual(tree.values, ['a', 'b', 'foo', 'b', 'ba%']);
    const order = await jsonSqlOf('order=data->>c.desc,data->a->1.nullsfirst&limit=5');
    assert.ok(order.text.includes(`ORDER BY ${COL('data')}->>$1 DESC, ${COL('data')}->$2->$3::int NULLS FIRST LIMIT 5`), order.text);
    assert.deepEqual(order.values, ['c', 'a', '1']);
    assertPlaceholdersMatch(order);
  });

  test('the plan keeps the path; a plain column has none', () => {
    const plan = planRead(parseQueryParams(parseQueryString('select=k:data->a->>0&data->>b=eq.1&order=data->c.desc,id')), { schema: 'public', relation: 'ethtxs' });
    assert.deepEqual(plan.select, [{ kind: 'column', column: 'data', jsonPath: [{ arrow: '->', operand: { key: 'a' } }, { arrow: '->>', operand: { index: '0' } }], alias: 'k' }]);
    assert.deepEqual(plan.where[0], { kind: 'filter', column: 'data', jsonPath: [{ arrow: '->>', operand: { key: 'b' } }], expr: { negated: false, operation: { kind: 'quant', operator: 'eq', value: '1' } } });
    assert.deepEqual(plan.order, [{ column: 'data', jsonPath: [{ arrow: '->', operand: { key: 'c' } }], direction: 'desc' }, { column: 'id' }]);
  });

  test('PostgREST parse errors on JSON paths, verbatim (JsonOperatorSpec)', async () => {
    const reserved = await failureOf('select=data->(!@%23$%^%26*_d->>!@%23$%^%26*_e::integer');
    assert.deepEqual([reserved.code, reserved.message, reserved.details], [
      'PGRST100',
      '"failed to parse select parameter (data->(!@#$%^&*_d->>!@#$%^&*_e::integer)" (line 1, column 7)',
      'unexpected "(" expecting "-", digit or any non reserved character different from: .,>()',
    ]);
    const badIndex = await failureOf('select=data->>--34');
    assert.deepEqual([badIndex.message, badIndex.details], ['"failed to parse select parameter (data->>--34)" (line 1, column 9)', 'unexpected "-" expecting digit']);
  });

  test('hostile keys are bound, never spliced: quotes, backslashes, dollars, semicolons', async () => {
    const keys = ["a'b", "'; DROP TABLE ethtxs; --", 'x\\y', '$1', '$$;SELECT 1;$$', 'e\\\'', 'a"b'];
    for (const key of keys) {
      // A quoted key (`"..."`, backslash escapes) is decoded and bound; the alias keeps it out of the output name.
      const quoted = `"${key.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
      const encoded = encodeURIComponent(quoted);
      for (const query of [`select=k:data->>${encoded}`, `data->${encoded}->>0=eq.1`, `order=data->>${encoded}`, `or=(data->>${encoded}.eq.1)`]) {
        const recorded = await jsonSqlOf(query);
        assert.ok(recorded.values.includes(key), `${query}: ${JSON.stringify(recorded.values)}`);
        if (key !== '$1') assert.ok(!recorded.text.includes(key), `${key} leaked into: ${recorded.text}`);
        assertPlaceholdersMatch(recorded);
      }
    }
    // The key of a selected path is an identifier: quoted with "" like any other.
    assert.ok((await jsonSqlOf(`select=data->>${encodeURIComponent('"a\\"b"')}`)).text.includes('AS "a""b"'));
  });
});

describe('embedding: the answers of PostgREST itself (PGRST108, PGRST200), no relationships here', () => {
  const body = async (query: string) => {
    const error = await failureOf(query);
    return { status: error.status, code: error.code, details: error.details, hint: error.hint, message: error.message };
  };
  const notEmbedded = (name: string) => ({
    status: 400,
    code: 'PGRST108',
    details: null,
    hint: `Verify that '${name}' is included in the 'select' query parameter.`,
    message: `'${name}' is not an embedded resource in this request`,
  });
  const noRelationship = (other: string, using = '') => ({
    status: 400,
    code: 'PGRST200',
    details: `Searched for a foreign key relationship between 'items' and '${other}${using}' in the schema 'public', but no matches were found.`,
    hint: null,
    message: `Could not find a relationship between 'items' and '${other}' in the schema cache`,
  });

  test('PGRST108 (Error.hs NotEmbedded): filters, limits, logic trees and orders on a resource not in select', async () => {
    for (const query of ['clients.name=eq.x', 'clients.limit=1', 'clients.offset=2', 'clients.or=(id.eq.1)', 'clients.order=id', 'order=clients(name)', 'order=id,clients(name).desc']) {
      assert.deepEqual(await body(query), notEmbedded('clients'), query);
    }
    const reply = gatewayErrorReply(await failureOf('clients.name=eq.x'));
    assert.equal(
      reply.body,
      '{"code":"PGRST108","details":null,"hint":"Verify that \'clients\' is included in the \'select\' query parameter.","message":"\'clients\' is not an embedded resource in this request"}',
    );
  });

  test('PGRST200 (Error.hs NoRelBetween): every embed, named by relation (not alias), with the embed hint', async () => {
    assert.deepEqual(await body('select=id,clients(*)'), noRelationship('clients'));
    assert.deepEqual(await body('select=*,...clients(name)'), noRelationship('clients'));
    assert.deepEqual(await body('select=c:clients!client_id(*)'), noRelationship('clients', "' using the hint 'client_id"));
    assert.deepEqual(await body('select=id,clients!inner(id),tasks(*)'), noRelationship('clients'));
    // The relation and schema read are named as the request gave them.
    const { statements, execute } = recorder();
    await assert.rejects(
      runRead({ method: 'GET', schema: 'test', relation: 'projects', query: 'select=*,clients(*)' }, {}, execute),
      (error: GatewayError) =>
        error.message === "Could not find a relationship between 'projects' and 'clients' in the schema cache" &&
        error.details === "Searched for a foreign key relationship between 'projects' and 'clients' in the schema 'test', but no matches were found.",
    );
    assert.equal(statements.length, 0);
  });

  test('the order of checks of PostgREST: paths first (the last failing one), then relationships, then related orders', async () => {
    // An embed path that leads through select passes the path check; the relationship check then fails.
    assert.deepEqual(await body('select=*,clients(*)&clients.name=eq.x&clients.order=id&clients.limit=1'), noRelationship('clients'));
    assert.deepEqual(await body('select=*,c:clients(*)&c.name=eq.x'), noRelationship('clients'));
    assert.deepEqual(await body('select=*,c:clients(*)&clients.name=eq.x'), noRelationship('clients'));
    assert.deepEqual(await body('select=*,clients(*)&order=clients(name)'), noRelationship('clients'));
    assert.deepEqual(await body('select=*,clients(*)&order=nope(name)'), noRelationship('clients'));
    assert.deepEqual(await body('select=*,clients(*,tasks(*))&clients.tasks.id=eq.1'), noRelationship('clients'));
    // A path that does not lead through select is PGRST108 for its first missing segment.
    assert.deepEqual(await body('select=*,clients(*)&nope.id=eq.1'), notEmbedded('nope'));
    assert.deepEqual(await body('select=*,clients(*)&clients.tasks.id=eq.1'), notEmbedded('tasks'));
    // Several: filters, then orders, then limits, then logic trees; within one kind the last one.
    assert.deepEqual(await body('a.x=eq.1&b.y=eq.2'), notEmbedded('b'));
    assert.deepEqual(await body('c.or=(id.eq.1)&b.order=id&a.x=eq.1'), notEmbedded('a'));
    assert.deepEqual(await body('c.or=(id.eq.1)&b.order=id'), notEmbedded('b'));
    assert.deepEqual(await body('c.or=(id.eq.1)&b.limit=1'), notEmbedded('b'));
    assert.deepEqual(await body('order=x(y)&a.x=eq.1'), notEmbedded('a'));
    // Parse errors (PGRST100) come before any of these.
    assert.equal((await failureOf('select=*,clients(*)&id=0')).code, 'PGRST100');
  });
});

describe('common values are written as literals, so a kept plan fits every other value (read-sql.ts, relation-facts.ts)', () => {
  const common = new Map([
    ['contract_to', new Set(['', '0xabc'])],
    ['txfrom', new Set(["o'brien\\x", '0xhot'])],
    ['data', new Set(['{"k": 1}'])],
  ]);
  async function withCommon(query: string, commonValues: typeof common | null = common) {
    const plans: boolean[] = [];
    const { statements, execute } = recorder();
    await runRead({ method: 'GET', schema: 'public', relation: 'ethtxs', query, prefer: 'count=planned' }, {}, (text, values, { reusePlan }) => {
      plans.push(reusePlan);
      return execute(text, values);
    }, commonValues ? { commonValues } : {});
    return { main: statements[0]!, explain: statements[1]!, plans };
  }

  test('eq, neq, isdistinct and in: a common value (any case) is a literal, any other a parameter', async () => {
    const { main, explain, plans } = await withCommon('contract_to=eq.&txfrom=eq.0xRare&txto=neq.0xabc&block=eq.5');
    assert.ok(main.text.includes(`${COL('contract_to')} = E'' AND ${COL('txfrom')} = $1 AND ${COL('txto')} <> $2 AND ${COL('block')} = $3`), main.text);
    assert.deepEqual(main.values, ['0xRare', '0xabc', '5']);
    assert.equal(explain.text, `EXPLAIN (FORMAT JSON) SELECT 1 FROM "public"."ethtxs" WHERE ${COL('contract_to')} = E'' AND ${COL('txfrom')} = $1 AND ${COL('txto')} <> $2 AND ${COL('block')} = $3`);
    assert.deepEqual(plans, [true, true], 'the relation has statistics: its plans may be kept');
    const others = await withCommon('contract_to=neq.0xABC&txfrom=isdistinct.0xHOT&contract_to=in.(0xdef,0xAbc)&txfrom=in.(a,b)');
    assert.ok(others.main.text.includes(`${COL('contract_to')} <> E'0xABC' AND ${COL('txfrom')} IS DISTINCT FROM E'0xHOT' AND ${COL('contract_to')} = ANY (E'{"0xdef","0xAbc"}') AND ${COL('txfrom')} = ANY ($1)`), others.main.text);
    assert.deepEqual(others.main.values, ['{"a","b"}']);
    assertPlaceholdersMatch(others.main);
  });

  test('only plain comparisons of the column itself: other operators, quantifiers and JSON paths stay parameters', async () => {
    const { main } = await withCommon('contract_to=like.&contract_to=gt.&contract_to=eq(any).{}&data->k=eq.{"k": 1}&contract_to=not.eq.');
    assert.equal([...main.text.matchAll(/E'/g)].length, 1, main.text);
    assert.ok(main.text.includes(`NOT (${COL('contract_to')} = E'')`), main.text);
    assertPlaceholdersMatch(main);
  });

  test('quotes and backslashes in a common value are escaped in an E-string', async () => {
    const { main } = await withCommon(`txfrom=eq.${encodeURIComponent("O'Brien\\x")}`);
    assert.ok(main.text.includes(`${COL('txfrom')} = E'O''Brien\\\\x'`), main.text);
    assert.deepEqual(main.values, []);
  });

  test('without statistics nothing is a literal and no plan is kept', async () => {
    const { main, plans } = await withCommon('contract_to=eq.&txfrom=eq.0xhot', null);
    assert.ok(main.text.includes(`${COL('contract_to')} = $1 AND ${COL('txfrom')} = $2`), main.text);
    assert.deepEqual(plans, [false, false]);
  });

  test('the branched spec read inlines the common value in every branch', async () => {
    const { main } = await withCommon('and=(contract_to.eq.,or(txfrom.eq.0xa,txto.eq.0xa))&order=time.desc,txhash.desc&limit=25');
    assert.match(main.text, /UNION ALL/);
    assert.equal([...main.text.matchAll(/"contract_to" = E''/g)].length, 2, main.text);
    assert.deepEqual(main.values, ['0xa', '0xa', '0xa']);
  });
});

describe('SQL injection: values are bound, identifiers quoted', () => {
  const hostile = [
    "'; DROP TABLE ethtxs; --",
    "x' OR '1'='1",
    '$1',
    '$$; SELECT pg_sleep(10); $$',
    '"; DELETE FROM ethtxs; --',
    ');SELECT 1;--',
    'E\'\\x27\'',
  ];

  test('hostile filter values end up in `values` only', async () => {
    for (const value of hostile) {
      for (const op of ['eq', 'like', 'neq', 'isdistinct', 'fts', 'eq(any)']) {
        const recorded = await sqlOf(`txfrom=${op}.${encodeURIComponent(value)}`);
        const expected = op === 'like' ? value.replaceAll('*', '%') : value;
        assert.ok(recorded.values.includes(expected), `${op} ${value}: ${JSON.stringify(recorded.values)}`);
        // `$1` is also the placeholder's spelling: there, every `$n` must be a placeholder with a value behind it.
        if (value !== '$1') assert.ok(!recorded.text.includes(value), `${op} ${value} leaked into: ${recorded.text}`);
        assertPlaceholdersMatch(recorded);
      }
      const inList = await sqlOf(`txfrom=in.(${encodeURIComponent(JSON.stringify(value))},b)`);
      if (value !== '$1') assert.ok(!inList.text.includes(value));
      assert.ok(String(inList.values[0]).includes(value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')));
      const tree = await sqlOf(`or=(txfrom.eq.${encodeURIComponent(JSON.stringify(value))},txto.eq.b)`);
      if (value !== '$1') assert.ok(!tree.text.includes(value));
      assert.ok(tree.values.includes(value), JSON.stringify(tree.values));
      assertPlaceholdersMatch(tree);
    }
  });

  test('a raw ; ends the pair, as in PostgREST (http-types); an encoded one is just data', async () => {
    const raw = await sqlOf('txfrom=eq.a;DROP TABLE ethtxs');
    assert.deepEqual(raw.values, ['a']);
    assert.ok(!raw.text.includes('DROP'));
    const encoded = await sqlOf('txfrom=eq.a%3BDROP%20TABLE%20ethtxs');
    assert.deepEqual(encoded.values, ['a;DROP TABLE ethtxs']);
  });

  test('identifiers with quotes are double-quoted with the quote doubled', async () => {
    // PostgREST quotes names with "…" and escapes with a backslash: "a\"b" is the column a"b.
    const { text } = await sqlOf('select=%22a%5C%22b%22,%22x%5C%22y%22:txhash&order=%22c%5C%22d%22.desc&%22e%5C%22f%22=eq.1');
    assert.ok(text.includes('"public"."ethtxs"."a""b"'), text);
    assert.ok(text.includes('AS "x""y"'), text);
    assert.ok(text.includes('"public"."ethtxs"."c""d" DESC'), text);
    assert.ok(text.includes('"public"."ethtxs"."e""f" = $1'), text);
    const relation = await (async () => {
      const { statements, execute } = recorder();
      await runRead({ method: 'GET', schema: 'my"schema', relation: 'a"; DROP TABLE x; --', query: '' }, {}, execute);
      return statements[0]!.text;
    })();
    assert.ok(relation.includes('FROM "my""schema"."a""; DROP TABLE x; --"'), relation);
  });

  test('casts must be plain type names: nothing that could open a string or a parameter', async () => {
    for (const query of ['select=id::int%20$1', 'select=id::$$', 'select=id::text%3Bdrop', 'select=id::a%20%20b']) {
      const error = await failureOf(query);
      assert.equal(error.status, 400, query);
    }
  });

  test('a NUL in an identifier never reaches the statement text', async () => {
    const error = await failureOf('select=a%00b');
    assert.equal(error.status, 400);
  });
});

describe('ranges, counts and status (notes B.2, F.1)', () => {
  test('Range: regex only, GET only, intersected with limit/offset, 1-0 is 416', () => {
    assert.deepEqual(planWindow({ method: 'GET', rangeHeader: '0-1', limit: 3n }), { first: 0n, sqlOffset: 0n, sqlLimit: 2n, ranged: true, limitZero: false });
    assert.deepEqual(planWindow({ method: 'HEAD', rangeHeader: '0-1' }), { first: 0n, sqlOffset: 0n, ranged: false, limitZero: false });
    assert.deepEqual(planWindow({ method: 'GET', rangeHeader: 'items=0-1' }), { first: 0n, sqlOffset: 0n, ranged: false, limitZero: false });
    assert.deepEqual(planWindow({ method: 'GET', rangeHeader: '5-', maxRows: 10 }), { first: 5n, sqlOffset: 5n, sqlLimit: 10n, ranged: true, limitZero: false });
    assert.deepEqual(planWindow({ method: 'GET', limit: 0n, offset: 5n }), { first: 0n, sqlOffset: 0n, sqlLimit: 0n, ranged: false, limitZero: true });
    assert.throws(() => planWindow({ method: 'GET', rangeHeader: '1-0' }), (e: GatewayError) => e.status === 416 && e.details === 'The lower boundary must be lower than or equal to the upper boundary in the Range header.');
    assert.throws(() => planWindow({ method: 'GET', rangeHeader: '0-1', offset: 3n }), (e: GatewayError) => e.status === 416);
  });

  test('Content-Range and status without a count, with a count, and with a Range header (F.1)', () => {
    const plain = planWindow({ method: 'GET' });
    assert.deepEqual(rangeOutcome(plain, 15n, undefined, false), { status: 200, contentRange: '0-14/*' });
    assert.deepEqual(rangeOutcome(plain, 0n, undefined, false), { status: 200, contentRange: '*/*' });
    assert.deepEqual(rangeOutcome(plain, 0n, 0n, false), { status: 200, contentRange: '*/0' });
    const limited = planWindow({ method: 'GET', limit: 2n, offset: 3n });
    assert.deepEqual(rangeOutcome(limited, 2n, 15n, false), { status: 206, contentRange: '3-4/15' });
    assert.deepEqual(rangeOutcome(limited, 2n, undefined, true), { status: 200, contentRange: '3-4/*' });
    assert.throws(() => rangeOutcome(planWindow({ method: 'GET', offset: 100n }), 0n, 15n, false), (e: GatewayError) => e.status === 416 && e.headers['Content-Range'] === '*/15' && e.details === 'An offset of 100 was requested, but there are only 15 rows.');
    const ranged = planWindow({ method: 'GET', rangeHeader: '0-1' });
    assert.deepEqual(rangeOutcome(ranged, 2n, undefined, true), { status: 206, contentRange: '0-1/*' });
    assert.deepEqual(rangeOutcome(ranged, 2n, undefined, false), { status: 200, contentRange: '0-1/*' });
    assert.deepEqual(rangeOutcome(planWindow({ method: 'GET', rangeHeader: '10-100' }), 5n, undefined, false), { status: 206, contentRange: '10-14/*' });
  });

  test('the F.1 probe is part of the read statement only for a bounded Range read', async () => {
    assert.ok((await sqlOf('', { range: '0-9' })).text.includes('EXISTS (SELECT 1 FROM "public"."ethtxs" OFFSET 10)'));
    assert.ok(!(await sqlOf('', { range: '0-' })).text.includes('EXISTS'));
    assert.ok(!(await sqlOf('limit=5')).text.includes('EXISTS'));
  });

  test('counts: exact counts the filtered set, estimated counts at most max-rows+1, planned asks EXPLAIN', async () => {
    const exact = await sqlOf('block=gt.1', { prefer: 'count=exact' });
    assert.ok(exact.text.includes('(SELECT count(*) FROM "public"."ethtxs" WHERE "public"."ethtxs"."block" > $1)::text AS total'), exact.text);
    const estimated = await sqlOf('', { prefer: 'count=estimated' }, { maxRows: 100 });
    assert.ok(estimated.text.includes('LIMIT 101) _pgrst_count'), estimated.text);
    assert.deepEqual(estimated.values, []);

    const { statements, execute } = recorder({ body: '[]', page_count: '0' });
    const reply = await runRead({ method: 'HEAD', schema: 'public', relation: 'ethtxs', query: 'block=gt.7', prefer: 'count=planned' }, {}, execute);
    assert.equal(statements[1]!.text, 'EXPLAIN (FORMAT JSON) SELECT 1 FROM "public"."ethtxs" WHERE "public"."ethtxs"."block" > $1');
    assert.deepEqual(statements[1]!.values, ['7']);
    assert.equal(reply.headers['Content-Range'], '*/42');
    assert.equal(reply.headers['Preference-Applied'], 'count=planned');
    assert.equal(reply.body, '');
  });

  test('EXPLAIN output is read whether the driver parsed the JSON or not', () => {
    assert.equal(plannedRows([{ 'QUERY PLAN': '[{"Plan": {"Plan Rows": 7}}]' }]), 7n);
    assert.equal(plannedRows([{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': 12.6 } }] }]), 13n);
    assert.throws(() => plannedRows([]));
  });
});

describe('Prefer', () => {
  test('the first count and handling preference win, unknown ones are ignored unless handling=strict', () => {
    assert.deepEqual(parsePrefer('count=exact,  count=planned, return=representation, foo'), { count: 'exact', applied: 'count=exact' });
    assert.deepEqual(parsePrefer(undefined), {});
    assert.deepEqual(parsePrefer('count=none'), {});
    assert.deepEqual(parsePrefer('handling=strict, count=planned'), { count: 'planned', handling: 'strict', applied: 'count=planned, handling=strict' });
    assert.throws(
      () => parsePrefer('handling=strict, foo, bar'),
      (e: GatewayError) => e.status === 400 && e.code === 'PGRST122' && e.message === 'Invalid preferences given with handling=strict' && e.details === 'Invalid preferences: foo, bar',
    );
  });
});

describe('the error table (gateway-errors.ts, notes B.2)', () => {
  test('PostgreSQL errors keep SQLSTATE, message, detail and hint, with PostgREST statuses', () => {
    const reply = gatewayErrorReply(Object.assign(new Error('column items.nope does not exist'), { code: '42703', hint: 'Perhaps you meant "items.id".' }));
    assert.equal(reply.status, 400);
    assert.deepEqual(JSON.parse(reply.body), { code: '42703', details: null, hint: 'Perhaps you meant "items.id".', message: 'column items.nope does not exist' });
    assert.deepEqual(Object.keys(JSON.parse(reply.body)), ['code', 'details', 'hint', 'message']);
    const statuses: [string, number][] = [['22P02', 400], ['42501', 401], ['42P01', 404], ['57014', 500], ['08006', 503], ['53300', 503], ['53400', 500], ['25006', 405], ['XX000', 500], ['PT402', 402], ['P0001', 400]];
    for (const [code, status] of statuses) assert.equal(statusOfSqlState(code), status, code);
    assert.equal(gatewayErrorReply({ code: '57014', message: 'canceling statement due to statement timeout', detail: 'd' }).status, 500);
  });

  test('connection failures are 503 PGRST000/001, a pool timeout 504 PGRST003, anything else 500 without internals', () => {
    const refused = gatewayErrorReply(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    assert.equal(refused.status, 503);
    assert.equal(JSON.parse(refused.body).code, 'PGRST000');
    const aggregate = gatewayErrorReply(Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], 'all failed')));
    assert.equal(aggregate.status, 503);
    assert.equal(JSON.parse(gatewayErrorReply(new Error('Connection terminated unexpectedly')).body).code, 'PGRST001');
    assert.equal(gatewayErrorReply(new Error('timeout exceeded when trying to connect')).status, 504);
    const epipe = gatewayErrorReply(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    assert.equal(JSON.parse(epipe.body).code, 'PGRST000');
    const bug = gatewayErrorReply(new TypeError('secret internals'));
    assert.equal(bug.status, 500);
    assert.ok(!bug.body.includes('secret'));
  });

  test('404 PGRST205 with a hint only when a close name exists; 405 PGRST117', () => {
    const hinted = JSON.parse(gatewayErrorReply(relationNotFound('public', 'ethtx', ['ethtxs', 'max_block', 'aval'])).body);
    assert.deepEqual(hinted, { code: 'PGRST205', details: null, hint: "Perhaps you meant the table 'public.ethtxs'", message: "Could not find the table 'public.ethtx' in the schema cache" });
    assert.equal(relationNotFound('public', 'zzz', ['ethtxs', 'max_block', 'aval']).hint, null);
    assert.equal(relationNotFound('public', 'nosuch', ['ethtxs']).status, 404);
    const method = gatewayErrorReply(methodNotAllowed('POST'));
    assert.equal(method.status, 405);
    assert.equal(method.body, '{"code":"PGRST117","details":null,"hint":null,"message":"Unsupported HTTP method: POST"}');
  });

  test('the PGRST205 hint needs a similarity of 0.75 (PostgREST #4675, ErrorSpec.hs): near names only', () => {
    const tables = ['projects', 'items', 'collision_test_table', 'clients', 'ghostBusters'];
    assert.equal(closestName('projectx', tables), 'projects'); // 0.875
    assert.equal(closestName('projecxx', tables), 'projects'); // 0.75 exactly
    assert.equal(closestName('itemz', tables), 'items'); // 0.8
    assert.equal(closestName('ghostbusters', tables), 'ghostBusters'); // case-insensitive: 1
    assert.equal(closestName('projxxxx', tables), undefined); // 0.5
    assert.equal(closestName('non_existent_table', tables), undefined); // 0.33 gave collision_test_table
    assert.equal(closestName('clientsxxxxxxxxxxxxxx', tables), undefined); // issue #4675's own example
    assert.equal(closestName('users', ['markers', 'employees']), undefined);
    // A schema of 500 or more relations gets no fuzzy index, so no hint (SchemaCache.hs maxDbTablesForFuzzySearch).
    const many = Array.from({ length: 499 }, (_, i) => `table_${i}`);
    assert.equal(closestName('itemz', [...many, 'items']), undefined);
    assert.equal(closestName('itemz', [...many.slice(1), 'items']), 'items');
  });
});

describe('planRead', () => {
  test('the first root order wins and conditions keep query order', () => {
    const plan = planRead(parseQueryParams(parseQueryString('order=a.desc&order=b&x=eq.1&or=(y.eq.2)&z=eq.3')), { schema: 'public', relation: 'items' });
    assert.deepEqual(plan.order, [{ column: 'a', direction: 'desc' }]);
    assert.deepEqual(
      plan.where.map((c) => (c.kind === 'filter' ? c.column : c.operator)),
      ['x', 'z', 'or'],
    );
  });
});
