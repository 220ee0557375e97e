// The OR-to-ordered-branches rewrite of a page read (src/transfers/read-sql-branches.ts, hooked into read-sql.ts):
// when it applies (pure), that it answers exactly what the plain statement answers (randomized queries over random
// rows with NULLs and ties, real PostgreSQL), and that the plans of spec A §4.1's three reads walk the composite
// indexes of migration 2 and stop after the page (EXPLAIN ANALYZE on a generated table).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseQueryParams, planRead, type Condition } from '../../src/transfers/query-params.js';
import { parseQueryString } from '../../src/transfers/query-string.js';
import { parsePrefer } from '../../src/transfers/read-prefer.js';
import { planWindow } from '../../src/transfers/read-range.js';
import { MAX_BRANCHES, planBranchSplit } from '../../src/transfers/read-sql-branches.js';
import { buildReadStatements, type ReadStatements } from '../../src/transfers/read-sql.js';
import type { ColumnCommonValues } from '../../src/transfers/relation-facts.js';
import { anonymousSessionSetup, listCommonValues, listSelectiveColumns } from '../../storage/transfers/gateway-store.js';
import { ensureAnonRole, migrate } from '../../storage/transfers/schema.js';
import type { SqlClient } from '../../storage/transfers/sql-client.js';
import { openPgClient, statementName } from '../../storage/transfers/sql-client.pg.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../support/system-packages.js';
import { prng } from '../support/random.js';

const MAX_ROWS = 10_000;

/** The statements the gateway builds for a query string (read.ts's pipeline), with or without the rewrite. */
function statementsFor(query: string, options: { orBranches?: boolean; prefer?: string; commonValues?: ColumnCommonValues; selectiveColumns?: ColumnCommonValues } = {}): ReadStatements {
  const parsed = parseQueryParams(parseQueryString(query));
  const window = planWindow({
    method: 'GET',
    ...(parsed.limit === undefined ? {} : { limit: parsed.limit }),
    ...(parsed.offset === undefined ? {} : { offset: parsed.offset }),
    maxRows: MAX_ROWS,
  });
  const count = parsePrefer(options.prefer).count;
  return buildReadStatements({
    schema: 'public',
    relation: 'ethtxs',
    plan: planRead(parsed, { schema: 'public', relation: 'ethtxs' }),
    window,
    ...(count === undefined ? {} : { count }),
    maxRows: MAX_ROWS,
    withBody: true,
    probeMoreRows: false,
    ...(options.orBranches === undefined ? {} : { orBranches: options.orBranches }),
    ...(options.commonValues === undefined ? {} : { commonValues: options.commonValues }),
    ...(options.selectiveColumns === undefined ? {} : { selectiveColumns: options.selectiveColumns }),
  });
}

/** `limit` null: no LIMIT at all. */
const splitOf = (query: string, limit: bigint | null = 25n) => {
  const plan = planRead(parseQueryParams(parseQueryString(query)), { schema: 'public', relation: 'ethtxs' });
  return planBranchSplit(plan.where, plan.order, limit ?? undefined);
};
const render = (condition: Condition): string =>
  condition.kind === 'filter'
    ? `${condition.column}.${condition.expr.negated ? 'not.' : ''}${condition.expr.operation.kind === 'quant' ? condition.expr.operation.operator : condition.expr.operation.kind}`
    : `${condition.negated ? 'not.' : ''}${condition.operator}(${condition.children.map(render).join(',')})`;

const A = '0x6b9247b2bb9a3e2c6d1d6e0d9bb5b4e6ab3e4d8f';
const WORD = `${'0'.repeat(24)}${A.slice(2)}`;
const TOKEN = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const SPEC = {
  native: `and=(contract_to.eq.,or(txfrom.eq.${A},txto.eq.${A}))&order=time.desc,txhash.desc&limit=25`,
  token: `txto=eq.${TOKEN}&or=(txfrom.eq.${A},contract_to.eq.${WORD})&order=time.desc,txhash.desc&limit=25`,
  keyset: `or=(txfrom.eq.${A},txto.eq.${A})&and=(or(time.lt.1650000000,and(time.eq.1650000000,txhash.lt.0x77)))&order=time.desc,txhash.desc&limit=25`,
};

describe('read-sql-branches: when the rewrite applies', () => {
  test("spec A §4.1's three reads are split on their address OR; the keyset cursor becomes one row comparison (time, txhash) < (T, H)", () => {
    const native = splitOf(SPEC.native)!;
    assert.deepEqual(native.disjuncts.map(render), ['txfrom.eq', 'txto.eq']);
    assert.deepEqual(native.common.map(render), ['contract_to.eq']);
    assert.deepEqual(native.implied, []);
    const token = splitOf(SPEC.token)!;
    assert.deepEqual([token.common.map(render), token.disjuncts.map(render)], [['txto.eq'], ['txfrom.eq', 'contract_to.eq']]);
    const keyset = splitOf(SPEC.keyset)!;
    assert.deepEqual(keyset.disjuncts.map(render), ['txfrom.eq', 'txto.eq']);
    assert.deepEqual(keyset.common, []);
    assert.deepEqual(keyset.cursors, [{ columns: ['time', 'txhash'], operator: 'lt', values: ['1650000000', '0x77'] }]);
    assert.deepEqual(keyset.implied, []);
    const cursorOf = (query: string) => splitOf(`or=(txfrom.eq.a,txto.eq.a)&${query}&limit=5`)!;
    // An ascending cursor, `lte`/`gte` on the second column, and the parts in either order.
    assert.deepEqual(cursorOf('and=(or(time.gt.5,and(time.eq.5,txhash.gt.x)))&order=time,txhash').cursors, [{ columns: ['time', 'txhash'], operator: 'gt', values: ['5', 'x'] }]);
    assert.deepEqual(cursorOf('and=(or(and(txhash.lte.x,time.eq.5),time.lt.5))&order=time.desc,txhash.desc').cursors, [{ columns: ['time', 'txhash'], operator: 'lte', values: ['5', 'x'] }]);
    assert.deepEqual(cursorOf('and=(or(time.gt.5,and(time.eq.5,txhash.gte.x)))&order=time.asc.nullsfirst,txhash.asc').cursors, [{ columns: ['time', 'txhash'], operator: 'gte', values: ['5', 'x'] }]);
    // Not a cursor of the ORDER BY (other columns, mixed directions, the wrong side, values that differ, a NOT, a
    // JSON path): kept as the OR, with the bound it implies where every disjunct implies one.
    for (const query of [
      'and=(or(time.lt.5,and(time.eq.5,block.lt.3)))&order=time.desc,txhash.desc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.lt.x)))&order=time.desc,txhash.asc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.lt.x)))&order=time.desc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.gt.x)))&order=time.desc,txhash.desc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.lt.x)))&order=txhash.desc,time.desc',
      'and=(or(time.lt.5,and(time.eq.6,txhash.lt.x)))&order=time.desc,txhash.desc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.not.lt.x)))&order=time.desc,txhash.desc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.lt.x,block.eq.1)))&order=time.desc,txhash.desc',
      'and=(or(time.lt.5,and(time.eq.5,txhash.lt.x)))&order=time->a.desc,txhash.desc',
    ]) {
      assert.deepEqual(cursorOf(query).cursors, [], query);
      assert.equal(cursorOf(query).common.length, 1, query);
    }
    assert.deepEqual(cursorOf('and=(or(time.lt.5,and(time.eq.5,block.lt.3)))&order=time.desc,txhash.desc').implied.map(render), ['time.lte']);
    // Disjuncts bounding by different values imply nothing.
    assert.deepEqual(cursorOf('and=(or(time.lt.5,time.eq.6))&order=time').implied, []);
    assert.deepEqual(cursorOf('and=(or(time.lt.5,time.not.eq.5))&order=time').implied, []);
  });

  test('the keyset cursor is rendered as ROW(…) < ROW($n, $m) in every branch, its values bound as parameters', () => {
    const { main } = statementsFor(SPEC.keyset);
    const rows = [...main.text.matchAll(/ROW\("public"\."ethtxs"\."time", "public"\."ethtxs"\."txhash"\) < ROW\((\$\d+), (\$\d+)\)/g)];
    assert.equal(rows.length, 2, main.text);
    for (const [, time, hash] of rows) assert.deepEqual([main.values[Number(time!.slice(1)) - 1], main.values[Number(hash!.slice(1)) - 1]], ['1650000000', '0x77']);
    assert.doesNotMatch(main.text, /"time" <=|"time" < \$/);
  });

  test('it does not apply without ORDER BY or a positive LIMIT, to a negated OR, to an OR nested under NOT, or when a disjunct pins no column', () => {
    assert.equal(splitOf('or=(txfrom.eq.a,txto.eq.a)&limit=5'), undefined);
    assert.equal(splitOf('or=(txfrom.eq.a,txto.eq.a)&order=time', null), undefined);
    assert.equal(splitOf('or=(txfrom.eq.a,txto.eq.a)&order=time', 0n), undefined);
    assert.equal(splitOf('not.or=(txfrom.eq.a,txto.eq.a)&order=time'), undefined);
    assert.equal(splitOf('not.and=(block.eq.1,or(txfrom.eq.a,txto.eq.a))&order=time'), undefined);
    assert.equal(splitOf('or=(txfrom.eq.a,time.lt.5)&order=time'), undefined);
    assert.equal(splitOf('or=(txfrom.eq.a,txto.not.eq.a)&order=time'), undefined);
    assert.equal(splitOf('or=(txfrom.eq(any).{a,b},txto.eq.a)&order=time'), undefined);
    assert.equal(splitOf('or=(txfrom.eq.a,or(txto.eq.a,block.eq.1))&order=time'), undefined);
    const many = Array.from({ length: MAX_BRANCHES + 1 }, (_, i) => `block.eq.${i}`).join(',');
    assert.equal(splitOf(`or=(${many})&order=time`), undefined);
    // A disjunct that pins a column inside an AND qualifies; the first qualifying OR is split.
    assert.deepEqual(splitOf('or=(time.lt.5,block.eq.1)&and=(or(and(txfrom.eq.a,time.gt.1),txto.eq.a))&order=time')!.disjuncts.map(render), ['and(txfrom.eq,time.gt)', 'txto.eq']);
  });

  test('the page reads the union as "<relation>"; counts and the planned-count EXPLAIN keep the plain WHERE', () => {
    const rewritten = statementsFor(`${SPEC.native}&select=txhash,t:time,gas::text`, { prefer: 'count=exact' });
    const plain = statementsFor(`${SPEC.native}&select=txhash,t:time,gas::text`, { prefer: 'count=exact', orBranches: false });
    assert.match(rewritten.main.text, /UNION ALL/);
    assert.doesNotMatch(plain.main.text, /UNION ALL/);
    assert.match(rewritten.main.text, /SELECT "ethtxs"\."txhash", "ethtxs"\."time" AS "t", "ethtxs"\."gas"::text AS "gas" FROM \(\(SELECT "public"\."ethtxs"\.\* FROM "public"\."ethtxs" WHERE/);
    // No outer WHERE: the union is ordered and limited as it is. The count keeps the plain WHERE with its own
    // placeholders $1..$3; the branches number theirs after them.
    assert.match(rewritten.main.text, /\) AS "ethtxs" ORDER BY "ethtxs"\."time" DESC, "ethtxs"\."txhash" DESC LIMIT 25\) _pgrst_page$/);
    assert.match(rewritten.main.text, /WHERE "public"\."ethtxs"\."contract_to" = \$4 AND "public"\."ethtxs"\."txfrom" = \$5 ORDER BY/);
    assert.deepEqual(rewritten.explain, plain.explain);
    const total = (text: string) => /, \(SELECT count\(\*\) FROM .*::text AS total/.exec(text)?.[0];
    assert.ok(total(plain.main.text));
    assert.equal(total(rewritten.main.text), total(plain.main.text));
    // Without a count (or the more-rows probe) the plain WHERE's values are not sent: the branches start at $1.
    const uncounted = statementsFor(SPEC.native);
    assert.doesNotMatch(uncounted.main.text, /WHERE \(\(|OR TRUE/);
    assert.match(uncounted.main.text, /WHERE "public"\."ethtxs"\."contract_to" = \$1 AND "public"\."ethtxs"\."txfrom" = \$2 ORDER BY/);
    assert.equal(uncounted.main.values.length, Math.max(...[...uncounted.main.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]))));
  });
});

describe('read-sql: when the main statement may run with a forced generic plan (anchoredByEquality)', () => {
  const HOT = '0x28c6c06298d514db089934071355e5743bf21d60';
  const common: ColumnCommonValues = new Map([['contract_to', new Set([''])], ['txto', new Set([TOKEN, HOT])], ['txfrom', new Set([HOT, A])]]);
  // Selective columns with their heavy values: the empty contract_to and the token are heavy, HOT and A are common but light.
  const selective: ColumnCommonValues = new Map([['txfrom', new Set([HOT])], ['txto', new Set([TOKEN, HOT])], ['contract_to', new Set([''])], ['txhash', new Set()], ['block', new Set()]]);
  const generic = (query: string, options: { prefer?: string; commonValues?: ColumnCommonValues; selectiveColumns?: ColumnCommonValues } = {}) =>
    statementsFor(query, { commonValues: common, selectiveColumns: selective, ...options }).genericPlan;

  test("spec A §4.1's three reads: every branch is bounded by its address (or its contract word), a parameter or a light common value", () => {
    for (const [name, query] of Object.entries(SPEC)) assert.equal(generic(query), true, name);
    // A is common in txfrom (a literal there) but light: it still bounds the first branch.
    assert.match(statementsFor(SPEC.native, { commonValues: common }).main.text, new RegExp(`"txfrom" = E'${A}'`));
    for (const [name, query] of Object.entries(SPEC)) assert.equal(generic(query.replaceAll(A, '0x00000000000000000000000000000000000000aa')), true, `${name}, an uncommon address`);
    // A page read on one address, and a block's rows: one plain scan, bounded by its equality.
    assert.equal(generic(`txfrom=eq.${A}&order=time.desc&limit=25`), true);
    assert.equal(generic('block=eq.15000000&time=gt.5'), true);
  });

  test('not without the statistics, nor when a scan is bounded only by ranges, by a common value, or by a column that is not selective', () => {
    assert.equal(statementsFor(SPEC.native, { commonValues: common }).genericPlan, false, 'no selective columns known');
    assert.equal(statementsFor(SPEC.native, { selectiveColumns: selective }).genericPlan, false, 'no common values known: the statement is not kept at all');
    // A heavy value is more than 1% of the rows: it bounds nothing.
    assert.equal(generic(`txto=eq.${TOKEN}&order=time.desc&limit=25`), false);
    assert.equal(generic(`txto=eq.${TOKEN.toUpperCase()}&time=lt.5&order=time.desc&limit=25`), false, 'heavy values compare ignoring case');
    assert.equal(generic(`or=(txfrom.eq.${HOT},txto.eq.${HOT})&order=time.desc&limit=25`), false, 'heavy in one branch');
    assert.equal(generic(`or=(txfrom.eq.${HOT},txto.eq.${A})&order=time.desc&limit=25`), false, 'heavy in txfrom');
    assert.equal(generic('time=gt.1650000000&order=time.desc&limit=25'), false, 'a range alone');
    assert.equal(generic('gas=eq.21000&order=time.desc&limit=25'), false, 'gas is not selective here');
    assert.equal(generic(`txfrom=not.eq.${A}&order=time.desc&limit=25`), false, 'a negated equality');
    assert.equal(generic(`txfrom=eq(any).{${A}}&order=time.desc&limit=25`), false, 'a quantified equality');
    assert.equal(generic(`txfrom->>a=eq.${A}&order=time.desc&limit=25`), false, 'a JSON path');
    assert.equal(generic(`or=(txfrom.eq.${A},time.lt.5)&order=time.desc&limit=25`), false, 'an OR that is not split: not one equality');
    assert.equal(generic(`or=(txfrom.eq.${A},gas.eq.21000)&order=time.desc&limit=25`), false, 'a branch bounded only by a column that is not selective');
    // A count (or the more-rows probe) reads the plain WHERE too, where the address is an OR: not bounded by one equality.
    assert.equal(generic(SPEC.native, { prefer: 'count=exact' }), false);
    assert.equal(generic(SPEC.token, { prefer: 'count=estimated' }), false, 'its plain WHERE is bounded only by the common token');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Real PostgreSQL.

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly 'Rows Removed by Filter'?: number;
  readonly Plans?: readonly PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

describe('read-sql-branches on PostgreSQL', { skip: skipWithout(postgresServerPackage(), 'the PostgreSQL half of the OR-branches tests') }, () => {
  let cluster: PostgresCluster;
  let db: SqlClient;
  before(async () => {
    cluster = await startPostgres();
    db = openPgClient({ connection: { connectionString: cluster.url }, maxConnections: 2, applicationName: 'test branches' });
  });
  after(async () => {
    await db?.close();
    await cluster?.stop();
  });

  const run = async (statement: ReadStatements['main']) => {
    const [row] = await db.query(statement.text, statement.values as unknown[]);
    return { body: JSON.parse(String(row!.body)) as Array<Record<string, unknown>>, pageCount: String(row!.page_count), total: row!.total };
  };

  test('randomized: 400 reads over 700 random rows (NULLs, ties, mixed case) answer what the plain statement answers', async () => {
    await migrate(db, '3.0.0');
    const random = prng(20_240_617);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const maybe = <T>(p: number, value: () => T): T | null => (random() < p ? null : value());
    const addresses = ['0xAa01', '0xaa01', '0xBB02', '0xcc03', '0xDd04', '0xee05'];
    const words = ['', '', '', 'w1', 'W1', 'w2'];
    const rows: unknown[][] = [];
    for (let i = 0; i < 700; i++) {
      rows.push([
        maybe(0.05, () => 1 + Math.floor(random() * 12)),
        maybe(0.05, () => pick(addresses)),
        maybe(0.05, () => pick(addresses)),
        String(Math.floor(random() * 3)),
        '1',
        maybe(0.05, () => 1 + Math.floor(random() * 20)),
        `0x${i.toString(16).padStart(4, '0')}`,
        String(Math.floor(random() * 5)),
        maybe(0.05, () => pick(words)),
        '',
      ]);
    }
    const columns = rows[0]!.map((_, c) => rows.map((r) => r[c]));
    await db.query(
      `INSERT INTO public.ethtxs SELECT * FROM unnest($1::int[], $2::citext[], $3::citext[], $4::bigint[], $5::bigint[], $6::int[], $7::citext[], $8::numeric[], $9::citext[], $10::citext[])`,
      columns,
    );
    await db.query('ANALYZE public.ethtxs');

    const value = (column: string) =>
      column === 'time' ? String(1 + Math.floor(random() * 12)) : column === 'block' ? String(1 + Math.floor(random() * 20)) : column === 'contract_to' ? pick(words) : pick(addresses);
    const eqAtom = () => {
      const column = pick(['txfrom', 'txto', 'txfrom', 'txto', 'contract_to', 'time', 'block']);
      return `${column}.eq.${value(column)}`;
    };
    const otherAtom = () =>
      pick([
        () => `time.lt.${value('time')}`,
        () => `time.gte.${value('time')}`,
        () => `txhash.lt.0x${Math.floor(random() * 700).toString(16).padStart(4, '0')}`,
        () => 'txfrom.is.null',
        () => 'contract_to.is.null',
        () => `txto.not.eq.${value('txto')}`,
        () => `block.in.(1,2,3,${value('block')})`,
        () => `contract_to.neq.`,
      ])();
    const disjunct = () => (random() < 0.6 ? eqAtom() : random() < 0.85 ? `and(${eqAtom()},${otherAtom()})` : otherAtom());
    const orTree = () => `or(${Array.from({ length: 2 + Math.floor(random() * 2) }, disjunct).join(',')})`;
    // Cursors in every form the row comparison takes (either order of the parts, `lte`/`gte` on ties), and forms it
    // does not (a tie on another column, values that differ), all checked against the plain OR.
    const keyset = (desc: boolean) => {
      const t = value('time');
      const h = `0x${Math.floor(random() * 700).toString(16).padStart(4, '0')}`;
      const strict = `time.${desc ? 'lt' : 'gt'}.${t}`;
      const tieColumn = random() < 0.85 ? 'txhash' : 'block';
      const tieValue = tieColumn === 'txhash' ? h : value('block');
      const tie = `${tieColumn}.${desc ? pick(['lt', 'lt', 'lte']) : pick(['gt', 'gt', 'gte'])}.${tieValue}`;
      const equal = `time.eq.${random() < 0.9 ? t : value('time')}`;
      const and = random() < 0.5 ? `and(${equal},${tie})` : `and(${tie},${equal})`;
      return random() < 0.5 ? `or(${strict},${and})` : `or(${and},${strict})`;
    };
    const orders = [
      { order: 'time.desc,txhash.desc', total: true, desc: true },
      { order: 'time.asc,txhash.asc', total: true, desc: false },
      { order: 'time.desc.nullslast,txhash.desc', total: true, desc: true },
      { order: 'txfrom.asc.nullsfirst,txhash.asc', total: true, desc: false },
      { order: 'time.desc', total: false, desc: true },
      { order: 'block.desc.nullslast,time.asc', total: false, desc: true },
      { order: 'txto', total: false, desc: false },
    ];

    let rewritten = 0;
    for (let n = 0; n < 400; n++) {
      const o = pick(orders);
      const parts: string[] = [];
      const tree = orTree();
      const shape = random();
      if (shape < 0.4) parts.push(`or=${tree.slice(2)}`);
      else if (shape < 0.7) parts.push(`and=(${eqAtom()},${tree})`);
      else parts.push(`${pick(['contract_to=eq.', `time=lte.${value('time')}`, `txto=eq.${value('txto')}`, 'block=not.is.null'])}`, `or=${tree.slice(2)}`);
      if (random() < 0.3) parts.push(`and=(${keyset(o.desc)})`);
      if (random() < 0.15) parts.push(`or=${orTree().slice(2)}`);
      parts.push(`order=${o.order}`, `limit=${1 + Math.floor(random() * 30)}`);
      if (random() < 0.4) parts.push(`offset=${1 + Math.floor(random() * 25)}`);
      if (o.total && random() < 0.3) parts.push(pick(['select=txhash,t:time', 'select=txhash,gas::text,txfrom']));
      const query = parts.join('&');
      const prefer = random() < 0.3 ? 'count=exact' : undefined;
      const withRewrite = statementsFor(query, prefer === undefined ? {} : { prefer });
      const plain = statementsFor(query, { orBranches: false, ...(prefer === undefined ? {} : { prefer }) });
      if (withRewrite.main.text.includes('UNION ALL')) rewritten++;
      const [got, want] = [await run(withRewrite.main), await run(plain.main)];
      assert.equal(got.pageCount, want.pageCount, query);
      assert.equal(got.total, want.total, query);
      if (o.total) {
        assert.deepEqual(got.body, want.body, query);
      } else {
        // Ties: either statement may pick any of the tied rows; the sort keys along the page are the same.
        const columns = o.order.split(',').map((term) => term.split('.')[0]!);
        const keys = (body: Array<Record<string, unknown>>) => body.map((row) => columns.map((c) => (typeof row[c] === 'string' ? String(row[c]).toLowerCase() : row[c])));
        assert.deepEqual(keys(got.body), keys(want.body), query);
      }
    }
    assert.ok(rewritten >= 200, `only ${rewritten} of 400 reads were rewritten`);
  });

  /** 200,000 generated rows with migration 2's indexes, analyzed, and the three spec reads of its subject. */
  let plansDatabase: Promise<{ url: string; queries: Record<string, string> }> | undefined;
  const loadPlansDatabase = () =>
    (plansDatabase ??= (async () => {
      const url = await cluster.createDatabase('plans');
      const big = openPgClient({ connection: { connectionString: url }, maxConnections: 2, applicationName: 'test plans' });
      try {
        await migrate(big, '3.0.0', { upTo: 1 });
        // 200 addresses (~1,000 rows each as sender, ~700 as native recipient), 30% token transfers over 2 tokens (~150
        // of each address's sent and received token transfers per token), 20 rows a block sharing a time, each drawn
        // from its own hash of the row number; the subject is address 0. (With a few dozen rows a branch matches,
        // PostgreSQL may rightly prefer an exact bitmap on the original (txto, contract_to) index and a sort of those.)
        const address = (expression: string) => `'0x' || lpad(to_hex(${expression}), 40, '0')`;
        await big.query(
          `INSERT INTO public.ethtxs
           SELECT 1600000000 + (i / 20) * 12, ${address('sender')}, CASE WHEN token THEN ${address('100000 + contract')} ELSE ${address('recipient')} END,
                  21000, 1, i / 20, '0x' || md5(i::text) || md5((i + 1)::text), CASE WHEN token THEN 0 ELSE i END,
                  CASE WHEN token THEN lpad(to_hex(recipient), 64, '0') ELSE '' END, CASE WHEN token THEN lpad(to_hex(i), 64, '0') ELSE '' END
             FROM (SELECT i, (hashint4(i) & 2147483647) % 200 AS sender, (hashint4(i + 1000000) & 2147483647) % 200 AS recipient,
                          (hashint4(i + 2000000) & 2147483647) % 10 < 3 AS token, (hashint4(i + 3000000) & 2147483647) % 2 AS contract
                     FROM generate_series(1, 200000) AS i) AS r`,
        );
        await migrate(big, '3.0.0');
        await big.query('VACUUM ANALYZE public.ethtxs');
        assert.deepEqual((await ensureAnonRole(big, 'web_anon')).problems, []);
        const subject = `0x${'0'.repeat(40)}`;
        const word = '0'.repeat(64);
        const token = `0x${(100000 + 1).toString(16).padStart(40, '0')}`;
        const [cursor] = await big.query(`SELECT "time", txhash::text AS txhash FROM public.ethtxs WHERE txfrom = $1 OR txto = $1 ORDER BY "time" DESC, txhash DESC OFFSET 24 LIMIT 1`, [subject]);
        const queries = {
          native: `and=(contract_to.eq.,or(txfrom.eq.${subject},txto.eq.${subject}))&order=time.desc,txhash.desc&limit=25`,
          token: `txto=eq.${token}&or=(txfrom.eq.${subject},contract_to.eq.${word})&order=time.desc,txhash.desc&limit=25`,
          keyset: `or=(txfrom.eq.${subject},txto.eq.${subject})&and=(or(time.lt.${cursor!.time},and(time.eq.${cursor!.time},txhash.lt.${cursor!.txhash})))&order=time.desc,txhash.desc&limit=25`,
        };
        return { url, queries };
      } finally {
        await big.close();
      }
    })());

  const COMPOSITE = new Set(['txfrom_time_txhash_index', 'txto_time_txhash_index', 'txto_txfrom_time_txhash_index', 'txto_contract_to_time_txhash_index']);
  /** The plan walks two composite indexes and stops after the page: no bitmap, no seq scan, no sort of the match. */
  const assertPageWalk = (name: string, explained: readonly Record<string, unknown>[]) => {
    const plan = (explained[0]!['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan;
    const all = nodes(plan);
    const shape = all.map((node) => `${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''} (${node['Actual Rows']} rows)`).join(' / ');
    const scans = all.filter((node) => node['Relation Name'] === 'ethtxs');
    assert.ok(!all.some((node) => /Bitmap|Seq Scan/.test(node['Node Type'])), `${name}: ${shape}`);
    assert.equal(scans.length, 2, `${name}: two branches: ${shape}`);
    for (const scan of scans) {
      assert.equal(scan['Node Type'], 'Index Scan', `${name}: ${shape}`);
      assert.ok(COMPOSITE.has(scan['Index Name']!), `${name}: ${scan['Index Name']} is not a composite index: ${shape}`);
      // The walk stops after the page: the rows it read (kept or filtered out) are a page's worth, not the match.
      const read = scan['Actual Rows'] + (scan['Rows Removed by Filter'] ?? 0);
      assert.ok(read <= 3 * 25, `${name}: ${scan['Index Name']} read ${read} rows: ${shape}`);
    }
    for (const sort of all.filter((node) => node['Node Type'] === 'Sort')) assert.ok(sort['Actual Rows'] <= 2 * 25, `${name}: a sort of ${sort['Actual Rows']} rows: ${shape}`);
  };

  test("plans on 200,000 rows: spec A §4.1's three reads walk the composite indexes and stop after the page (no bitmap scan, no sort of the whole match)", async () => {
    const { url, queries } = await loadPlansDatabase();
    const big = openPgClient({ connection: { connectionString: url }, maxConnections: 2, applicationName: 'test plans' });
    try {
      for (const [name, query] of Object.entries(queries)) {
        const statements = statementsFor(query);
        assertPageWalk(name, await big.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${statements.main.text}`, statements.main.values as unknown[]));
        const counted = statementsFor(query, { orBranches: false, prefer: 'count=exact' }).main;
        const matching = Number((await big.query(counted.text, counted.values as unknown[]))[0]!.total);
        assert.ok(matching > 3 * 25, `${name}: ${matching} rows match: too few to tell a walk that stops from one that reads them all`);
        // And the page is the plain statement's.
        const plain = statementsFor(query, { orBranches: false }).main;
        const [got, want] = [await big.query(statements.main.text, statements.main.values as unknown[]), await big.query(plain.text, plain.values as unknown[])];
        assert.equal(got[0]!.body, want[0]!.body, name);
        assert.equal(got[0]!.page_count, '25', name);
      }
    } finally {
      await big.close();
    }
  });

  test('kept plans: with the common values inlined and the addresses selective, the spec reads run with their generic plan from the first execution, and it still walks the composite indexes', async () => {
    const { url, queries } = await loadPlansDatabase();
    // As the gateway reads: the anonymous role's session (plan_cache_mode auto), named statements, one connection.
    const reader = openPgClient({ connection: { connectionString: url }, maxConnections: 1, applicationName: 'test kept plans', sessionSetup: anonymousSessionSetup('web_anon'), namedStatementsPerConnection: 16 });
    try {
      const listed = (await listCommonValues((text, values) => reader.query(text, values), ['public'])).get('public')?.get('ethtxs');
      assert.ok(listed?.get('contract_to')?.has(''), 'the statistics list the empty contract_to as common');
      // ANALYZE samples 30,000 of the 200,000 rows, and an address of the 200 (each ~0.5% of a column) is sometimes
      // sampled often enough to be listed among the most common values. The subject is then written into the
      // statement as a literal (a text of its own, with no parameter left for EXECUTE), which is not the case this
      // test is about: its parameter, shared by every subject, is.
      const subject = `0x${'0'.repeat(40)}`;
      const common = new Map([...listed!].map(([column, values]) => [column, new Set([...values].filter((value) => value !== subject))]));
      const selective = (await listSelectiveColumns((text, values) => reader.query(text, values), ['public'])).get('public')?.get('ethtxs');
      // 200 addresses of ~0.5% each; gas is one value, time one per 20 rows (0.01%).
      for (const column of ['txfrom', 'txto', 'contract_to', 'txhash', 'time']) assert.ok(selective?.has(column), `${column} is selective: ${[...(selective?.keys() ?? [])]}`);
      assert.ok(!selective?.has('gas'), 'a column of one value is not selective');
      // Heavy values: the empty contract_to (70%) and each of the two tokens as txto (15% each); no address.
      assert.deepEqual([...selective!.get('contract_to')!], ['']);
      assert.equal(selective!.get('txto')!.size, 2);
      assert.deepEqual([...selective!.get('txfrom')!], []);
      for (const [name, query] of Object.entries(queries)) {
        const statements = statementsFor(query, { commonValues: common, selectiveColumns: selective! });
        assert.equal(statements.genericPlan, true, name);
        if (name === 'native') assert.equal([...statements.main.text.matchAll(/"contract_to" = E''/g)].length, 2, statements.main.text);
        // Other subjects first (addresses 1…8, with their own first pages), then the subject: one statement text.
        for (let other = 1; other <= 8; other += 1) {
          const address = `0x${other.toString(16).padStart(40, '0')}`;
          const values = statements.main.values.map((value) => (value === subject ? address : value));
          await reader.queryPrepared(statements.main.text, values, undefined, statements.genericPlan);
        }
        const rows = await reader.queryPrepared(statements.main.text, statements.main.values, undefined, statements.genericPlan);
        assert.equal(rows[0]!.page_count, '25', name);
        const name_ = statementName(statements.main.text);
        const [kept] = await reader.query('SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1', [name_]);
        // Under auto PostgreSQL keeps the generic plan only when it costs no more than the custom ones: the token read's
        // did not on 1,000,000 rows (read-sql.ts anchoredByEquality), nor the keyset read's before its cursor became
        // one row comparison (read-sql-branches.ts). Forced, no execution is planned for its values.
        assert.deepEqual([Number(kept?.generic), Number(kept?.custom)], [9, 0], `${name}: ${JSON.stringify(kept)}`);
        // EXECUTE takes its arguments as SQL (a utility statement has no parameters): quoted literals.
        const literals = statements.main.values.map((value) => `'${String(value).replaceAll("'", "''")}'`).join(', ');
        // EXPLAIN runs under the session's auto (reader.query switches back): the generic plan is the one kept.
        const explained = await reader.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE "${name_}"(${literals})`);
        assertPageWalk(`${name} (generic plan)`, explained);
      }
    } finally {
      await reader.close();
    }
  });
});
