// A planned read → parameterized SQL (notes B.1 "Case-insensitivity comes from the column type", B.2 "Numbers").
//
// - Every value is a bound parameter ($1, $2, ...) sent untyped, so PostgreSQL infers the column's type: citext
//   compares case-insensitively, `block=eq.abc` fails with 22P02 like PostgREST's unknown literals do.
// - Identifiers are double-quoted ("" inside), columns qualified "schema"."relation"."column", so an unknown column
//   is PostgreSQL's own 42703 `column <relation>.<column> does not exist`.
// - JSON path keys are bound too, as PostgREST binds them (SqlFragment.hs pgFmtJsonPath: unknown-typed parameters,
//   indexes cast to int), so `->`/`->>` take their text-key or integer-index form. The arrows apply to a json/jsonb
//   column as it is and to any other column through to_jsonb(), as PostgREST does (Plan.hs resolveTypeOrUnknown);
//   the schema cache lists each relation's json/jsonb columns (ReadStatementInput.jsonColumns).
// - PostgreSQL builds the JSON (json_agg over the page) and every returned value is text, so numeric/int8 keep all
//   their digits and both drivers (pg, PGlite) read the same strings.
// - Parameters used by the WHERE clause come first, so the EXPLAIN for a planned count can reuse them alone.
// - Except the values the table's statistics list as common (ReadStatementInput.commonValues): an `eq`, `neq`,
//   `in` or `isdistinct` value among a column's most common values is written into the statement as a literal, and
//   LIMIT/OFFSET digits always are. PostgreSQL may then keep one generic plan per statement text (plan_cache_mode
//   auto, storage/transfers/gateway-store.ts), and that plan is the one a custom plan would be: for a value outside
//   the most common ones both estimate a column's average selectivity, while a common value (`contract_to = ''`,
//   ~70% of the rows) gets its own text and a plan that knows it is common. A literal of an unknown-typed string
//   resolves to the column's type exactly as the unknown-typed parameter does.

import type { ReadFormat } from './negotiate.js';
import type { CountPreference } from './read-prefer.js';
import type { RowWindow } from './read-range.js';
import { jsonPathKey, type ColumnRef, type Condition, type OrderColumn, type ReadPlan, type SelectColumn } from './query-params.js';
import type { Operation, QuantOperator, SimpleOperator } from './query-grammar.js';
import { unsupportedFeature } from './gateway-errors.js';
import { branchesFromSql, conjuncts, planBranchSplit } from './read-sql-branches.js';
import type { ColumnCommonValues } from './relation-facts.js';

export interface SqlStatement {
  readonly text: string;
  readonly values: readonly (string | null)[];
}

export interface ReadStatements {
  /** One row: body (text, when a body is wanted), page_count, total (with a count), more_rows (F.1 probe). */
  readonly main: SqlStatement;
  /** EXPLAIN (FORMAT JSON) of the filtered relation, for count=planned (and count=estimated above max-rows). */
  readonly explain: SqlStatement;
  /** How the main statement's `total` column was counted. */
  readonly totalKind: 'none' | 'exact' | 'bounded';
  /**
   * The main statement may run with PostgreSQL's generic plan whatever the plan cache's cost comparison says
   * (anchoredByEquality): every read of the relation in it is bounded by an equality whose generic estimate is small.
   */
  readonly genericPlan: boolean;
}

export interface ReadStatementInput {
  readonly schema: string;
  readonly relation: string;
  readonly plan: ReadPlan;
  readonly window: RowWindow;
  readonly count?: CountPreference;
  readonly maxRows?: number;
  readonly withBody: boolean;
  /** The body's representation (negotiate.ts); JSON array when absent. */
  readonly format?: ReadFormat;
  readonly probeMoreRows: boolean;
  /** false: never split a top-level OR into ordered branches (read-sql-branches.ts); for comparisons in tests. */
  readonly orBranches?: boolean;
  /** The relation's common values per column, lowercased (relation-facts.ts); written as literals, not parameters. */
  readonly commonValues?: ColumnCommonValues;
  /** The relation's json/jsonb columns; absent: none known (relation-facts.ts). */
  readonly jsonColumns?: ReadonlySet<string>;
  /** Its selective columns, each with its heavy values (relation-facts.ts). */
  readonly selectiveColumns?: ColumnCommonValues;
}

/**
 * The body of the page `_pgrst_page` as text, built by PostgreSQL as PostgREST builds it: json_agg keeps numeric and
 * int8 digits; `nulls=stripped` is json_strip_nulls per row; the object form is the first row (the caller refuses
 * any other count); CSV is the first row's keys (none without rows), a newline, then each row's record text without
 * its parentheses (NULL empty, values with separators double-quoted), newline-separated.
 */
function bodySql(format: ReadFormat): string {
  switch (format) {
    case 'json':
      return `coalesce(json_agg(_pgrst_page.*), '[]')::text`;
    case 'json-stripped':
      return `coalesce(json_agg(json_strip_nulls(to_json(_pgrst_page.*))), '[]')::text`;
    case 'object':
      return `coalesce((json_agg(_pgrst_page.*) -> 0)::text, 'null')`;
    case 'object-stripped':
      return `coalesce(json_strip_nulls(json_agg(_pgrst_page.*) -> 0)::text, 'null')`;
    case 'csv':
      return (
        `coalesce((SELECT string_agg(_pgrst_key, ',') FROM json_object_keys((array_agg(to_json(_pgrst_page.*)))[1]) _pgrst_key), '')` +
        ` || chr(10) || coalesce(string_agg(substring(_pgrst_page::text, 2, length(_pgrst_page::text) - 2), chr(10)), '')`
      );
  }
}

export function quoteIdentifier(name: string): string {
  // PostgreSQL's protocol carries statement text as a C string: a NUL would cut it, so it never reaches the server.
  if (name.includes('\u0000')) throw unsupportedFeature('Invalid identifier', 'identifiers cannot contain the NUL character');
  return `"${name.replaceAll('"', '""')}"`;
}

class Parameters {
  readonly values: string[] = [];
  constructor(
    private readonly commonValues?: ColumnCommonValues,
    /** Read by columnSql; carried here since every fragment builder gets the parameters. */
    readonly jsonColumns?: ReadonlySet<string>,
  ) {}
  add(value: string): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** A value compared with a column: a literal when the column's statistics list it as common, else a parameter. */
  compared(ref: ColumnRef, value: string, common: (values: ReadonlySet<string>) => boolean = (values) => values.has(value.toLowerCase())): string {
    const values = ref.jsonPath === undefined ? this.commonValues?.get(ref.column) : undefined;
    return values !== undefined && common(values) ? stringLiteral(value) : this.add(value);
  }
}

/**
 * An escape string literal (E'…', so its meaning does not depend on standard_conforming_strings). Only values the
 * statistics list reach it: PostgreSQL text, so never a NUL.
 */
function stringLiteral(value: string): string {
  return `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

const QUANT_SQL: Readonly<Record<QuantOperator, string>> = { eq: '=', gte: '>=', gt: '>', lte: '<=', lt: '<', like: 'LIKE', ilike: 'ILIKE', match: '~', imatch: '~*' };
const SIMPLE_SQL: Readonly<Record<SimpleOperator, string>> = { neq: '<>', cs: '@>', cd: '<@', ov: '&&', sl: '<<', sr: '>>', nxr: '&<', nxl: '&>', adj: '-|-' };
const FTS_FUNCTION = { fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery' } as const;
const IS_SQL = { null: 'IS NULL', not_null: 'IS NOT NULL', true: 'IS TRUE', false: 'IS FALSE', unknown: 'IS UNKNOWN' } as const;

/** PostgREST's pgBuildArrayLiteral: every element quoted, `\` and `"` escaped; `in.()` is the empty array. */
export function arrayLiteral(items: readonly string[]): string {
  if (items.length === 1 && items[0] === '') return '{}';
  return `{${items.map((item) => `"${item.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
}

/** like/ilike take `*` as an alias of `%` (URLs mangle `%`). */
const likePattern = (operator: QuantOperator, value: string) => (operator === 'like' || operator === 'ilike' ? value.replaceAll('*', '%') : value);

function operationSql(ref: ColumnRef, column: string, operation: Operation, params: Parameters): string {
  switch (operation.kind) {
    case 'quant': {
      const operator = QUANT_SQL[operation.operator];
      if (operation.quantifier === undefined && operation.operator === 'eq') return `${column} = ${params.compared(ref, operation.value)}`;
      const value = params.add(likePattern(operation.operator, operation.value));
      return operation.quantifier === undefined ? `${column} ${operator} ${value}` : `${column} ${operator} ${operation.quantifier.toUpperCase()} (${value})`;
    }
    case 'simple':
      return `${column} ${SIMPLE_SQL[operation.operator]} ${operation.operator === 'neq' ? params.compared(ref, operation.value) : params.add(operation.value)}`;
    case 'in': {
      const items = operation.values;
      return `${column} = ANY (${params.compared(ref, arrayLiteral(items), (common) => items.some((item) => common.has(item.toLowerCase())))})`;
    }
    case 'is':
      return `${column} ${IS_SQL[operation.value]}`;
    case 'isdistinct':
      return `${column} IS DISTINCT FROM ${params.compared(ref, operation.value)}`;
    case 'fts': {
      const language = operation.language === undefined ? '' : `${params.add(operation.language)}, `;
      return `${column} @@ ${FTS_FUNCTION[operation.operator]}(${language}${params.add(operation.value)})`;
    }
  }
}

/**
 * A column with its JSON arrows: `"s"."r"."data"->$1->>$2::int`. Arrows on a column that is not json/jsonb (or of a
 * type the schema cache does not know) apply to `to_jsonb(column)`, as in PostgREST.
 */
function columnSql(relation: string, ref: ColumnRef, params: Parameters): string {
  const column = `${relation}.${quoteIdentifier(ref.column)}`;
  const path = ref.jsonPath ?? [];
  let sql = path.length > 0 && !params.jsonColumns?.has(ref.column) ? `to_jsonb(${column})` : column;
  for (const { arrow, operand } of path) {
    sql += 'key' in operand ? `${arrow}${params.add(operand.key)}` : `${arrow}${params.add(operand.index)}::int`;
  }
  return sql;
}

function conditionSql(relation: string, condition: Condition, params: Parameters): string {
  if (condition.kind === 'filter') {
    const sql = operationSql(condition, columnSql(relation, condition, params), condition.expr.operation, params);
    return condition.expr.negated ? `NOT (${sql})` : sql;
  }
  const inner = condition.children.map((child) => conditionSql(relation, child, params)).join(condition.operator === 'and' ? ' AND ' : ' OR ');
  return `${condition.negated ? 'NOT ' : ''}(${inner})`;
}

function selectSql(relation: string, column: SelectColumn, params: Parameters): string {
  if (column.kind === 'all') return `${relation}.*`;
  const reference = columnSql(relation, column, params);
  // `::` binds tighter than `->>`: a JSON path is parenthesized before its cast.
  const expression = column.cast === undefined ? reference : column.jsonPath === undefined ? `${reference}::${column.cast}` : `(${reference})::${column.cast}`;
  // The key: the alias; else a JSON path's key (PostgREST's lastJsonKey); else a cast column keeps the column's name.
  const name = column.alias ?? jsonPathKey(column) ?? (column.cast === undefined ? undefined : column.column);
  return name === undefined ? expression : `${expression} AS ${quoteIdentifier(name)}`;
}

function orderSql(relation: string, term: OrderColumn, params: Parameters): string {
  const direction = term.direction === undefined ? '' : ` ${term.direction.toUpperCase()}`;
  const nulls = term.nulls === undefined ? '' : term.nulls === 'nullsfirst' ? ' NULLS FIRST' : ' NULLS LAST';
  return `${columnSql(relation, term, params)}${direction}${nulls}`;
}

/**
 * Whether a scan with these conditions is bounded by an equality that PostgreSQL estimates as a small share of the rows
 * whatever its value: a top-level `column = value` on a selective column, with any value but its heavy ones. Why that
 * makes a generic plan safe to force (plan_cache_mode auto plans every execution afresh while the generic plan's
 * estimate costs more than the custom plans', as it did for the token read, below):
 * - A value the statistics list as common is a literal, estimated as what it is in both plans; only a heavy one (more
 *   than SELECTIVE_SHARE of the rows, storage/transfers/gateway-store.ts) does not bound the scan.
 * - Any other value is a parameter, and a custom plan estimates every such value as the same average share of the
 *   uncommon rows, so planning it again for each value buys nothing (0.3–0.4 ms a read on 1,000,000 rows). The generic
 *   plan estimates `column = $n` as the column's average over all its values, heavy ones included: more rows than a
 *   custom plan expects, but on a selective column at most SELECTIVE_SHARE of the table.
 * So the plan stays driven by that equality (an index walk or a small bitmap), never a scan of the table; other
 * conditions (a range a custom plan would see as narrow) only filter those rows.
 * The token history's second branch is the case: `txto = <token> AND contract_to = $2`, where 70% of contract_to is
 * the heavy `''`, so the generic estimate of `contract_to = $2` was ~4x a custom plan's; the generic plan (the same
 * index walks) then cost more in the planner's units, and on 1,000,000 rows every execution was planned afresh.
 */
function anchoredByEquality(conditions: readonly Condition[], selective: ColumnCommonValues): boolean {
  return conjuncts(conditions).some((condition) => {
    if (condition.kind !== 'filter' || condition.jsonPath !== undefined || condition.expr.negated) return false;
    const { operation } = condition.expr;
    if (operation.kind !== 'quant' || operation.operator !== 'eq' || operation.quantifier !== undefined) return false;
    const heavy = selective.get(condition.column);
    return heavy !== undefined && !heavy.has(operation.value.toLowerCase());
  });
}

export function buildReadStatements(input: ReadStatementInput): ReadStatements {
  const relation = `${quoteIdentifier(input.schema)}.${quoteIdentifier(input.relation)}`;
  const params = new Parameters(input.commonValues, input.jsonColumns);
  const where = input.plan.where.map((condition) => conditionSql(relation, condition, params));
  const whereSql = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
  const filtered = `FROM ${relation}${whereSql}`;
  const explain: SqlStatement = { text: `EXPLAIN (FORMAT JSON) SELECT 1 ${filtered}`, values: [...params.values] };

  const { window } = input;
  // A top-level OR with ORDER BY and LIMIT: the page reads a union of ordered branches (read-sql-branches.ts), named
  // like the relation so the select list and ORDER BY resolve (and fail) as they do on the relation itself.
  const split = input.orBranches === false ? undefined : planBranchSplit(input.plan.where, input.plan.order, window.sqlLimit);
  const source = split === undefined ? relation : quoteIdentifier(input.relation);
  const counted = input.count === 'exact' || input.count === 'estimated';
  const probed = input.probeMoreRows === true && window.sqlLimit !== undefined;
  // The plain WHERE's values ($1…) go into the main statement only where it uses them (a count or the more-rows
  // probe): a branched page that does neither numbers its own parameters from $1, since PostgreSQL must be able to
  // type every parameter it is sent.
  const pageParams = split !== undefined && !counted && !probed ? new Parameters(input.commonValues, input.jsonColumns) : params;
  const from = split === undefined
    ? filtered
    : branchesFromSql({
        split,
        relation,
        condition: (condition) => conditionSql(relation, condition, pageParams),
        rowBound: (bound) => {
          const columns = bound.columns.map((column) => columnSql(relation, { column }, pageParams));
          return `ROW(${columns.join(', ')}) ${QUANT_SQL[bound.operator]} ROW(${bound.values.map((value) => pageParams.add(value)).join(', ')})`;
        },
        orderBy: input.plan.order.map((term) => orderSql(relation, term, pageParams)).join(', '),
        // A literal (digits of a bigint we computed): PostgreSQL plans a branch for its LIMIT only when it sees it.
        branchLimit: String(window.sqlLimit! + window.sqlOffset),
        alias: source,
      });
  const orderBy = input.plan.order.length === 0 ? '' : ` ORDER BY ${input.plan.order.map((term) => orderSql(source, term, pageParams)).join(', ')}`;
  // Digits of bigints computed here, as literals: a generic plan of `LIMIT $n` would be planned for a tenth of the rows.
  const limit = window.sqlLimit === undefined ? '' : ` LIMIT ${window.sqlLimit}`;
  const offset = window.sqlOffset === 0n ? '' : ` OFFSET ${window.sqlOffset}`;
  const page = `SELECT ${input.plan.select.map((column) => selectSql(source, column, pageParams)).join(', ')} ${from}${orderBy}${limit}${offset}`;

  const columns = [`${input.withBody ? bodySql(input.format ?? 'json') : 'NULL::text'} AS body`, 'count(*)::text AS page_count'];
  let totalKind: ReadStatements['totalKind'] = 'none';
  if (input.count === 'exact' || (input.count === 'estimated' && input.maxRows === undefined)) {
    columns.push(`(SELECT count(*) ${filtered})::text AS total`);
    totalKind = 'exact';
  } else if (input.count === 'estimated') {
    // PostgREST counts at most max-rows + 1 rows for `estimated`; past that the planner's guess takes over.
    columns.push(`(SELECT count(*) FROM (SELECT 1 ${filtered} LIMIT ${BigInt(input.maxRows!) + 1n}) _pgrst_count)::text AS total`);
    totalKind = 'bounded';
  }
  if (probed) {
    columns.push(`(EXISTS (SELECT 1 ${filtered} OFFSET ${window.sqlOffset + window.sqlLimit!}))::text AS more_rows`);
  }
  const main: SqlStatement = { text: `SELECT ${columns.join(', ')} FROM (${page}) _pgrst_page`, values: pageParams.values };
  // Every read of the relation in the main statement: each branch, and the plain WHERE where a count or the probe uses it.
  const { commonValues, selectiveColumns } = input;
  const anchored = (conditions: readonly Condition[]) => commonValues !== undefined && selectiveColumns !== undefined && anchoredByEquality(conditions, selectiveColumns);
  const branchesAnchored = split === undefined || split.disjuncts.every((disjunct) => anchored([...split.common, disjunct]));
  const plainWhereUsed = split === undefined || counted || probed;
  const genericPlan = branchesAnchored && (!plainWhereUsed || anchored(input.plan.where));
  return { main, explain, totalKind, genericPlan };
}
