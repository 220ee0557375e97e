// One ordered branch per disjunct: a page read whose WHERE has a top-level OR over different columns, rewritten so
// that each branch can walk its own composite index in ORDER BY order and stop after the page (spec A §4.1's native
// history, token history and keyset next page; storage/transfers/schema.ts migration 2).
//
// PostgreSQL plans `WHERE c AND (d1 OR d2) ORDER BY o LIMIT n` as a BitmapOr over one index per disjunct: every
// matching row is fetched and sorted before the first n are kept. Rewritten:
//
//   SELECT … FROM (
//     (SELECT rel.* FROM rel WHERE c AND d1 ORDER BY o LIMIT n + offset)
//     UNION ALL
//     (SELECT rel.* FROM rel WHERE c AND d2 AND (d1) IS NOT TRUE ORDER BY o LIMIT n + offset)
//   ) AS "<relation>" ORDER BY o LIMIT n OFFSET offset
//
// No outer WHERE: the branches hold every condition. (A copy of the plain WHERE there, even folded away with
// `OR TRUE`, cost PostgreSQL planning and execution time on every read; as a real filter its selectivity would make
// it expect a few rows per branch and sort a bitmap scan's result rather than walk the index.) The plain WHERE's
// parameters reach the main statement only with the counts or the more-rows probe that use them (read-sql.ts).
//
// Why it is the same read:
// - Rows: a row passes `c AND (d1 OR … OR dk)` iff c is TRUE and some dj is TRUE. It falls in branch j for the first
//   such j only (each branch excludes rows an earlier disjunct made TRUE with `IS NOT TRUE`, which is TRUE for FALSE
//   and NULL alike), so every matching row is in exactly one branch and no other row is in any: the three-valued
//   logic of SQL's OR is kept (a NULL disjunct followed by a TRUE one selects the row once, in the later branch).
// - Page: the first n + offset rows of the whole set under `o` are among the first n + offset rows of the branch
//   each belongs to, so ordering the union by the same `o` and applying the same LIMIT/OFFSET gives the same rows.
//   Where `o` has ties, both statements pick among the tied rows as PostgreSQL pleases (SQL leaves it open); the
//   sequence of sort keys on the page is the same.
// - Counts, the planned-count EXPLAIN and the more-rows probe keep the plain WHERE (src/transfers/read-sql.ts): only
//   the page's FROM changes.
//
// Only applied where it can pay off and the proof above holds without looking at the data: an ORDER BY and a
// positive LIMIT, a top-level (after flattening plain AND groups) non-negated OR of 2..MAX_BRANCHES disjuncts each
// of which pins some column with a plain `eq` (the shape an index serves; a disjunct such as `time.lt.T` would make
// its branch a range scan of most of the table). The conditions themselves are rendered by read-sql.ts's own
// renderer, so operators, parameters and quoting are exactly those of the plain statement.
//
// A keyset cursor (spec A §4.1 rule 5: `or=(time.lt.T,and(time.eq.T,txhash.lt.H))`) is an OR PostgreSQL cannot use
// as an index bound, so a branch would walk the address's rows from the newest and filter out every earlier page.
// When each disjunct of such a top-level OR bounds the same column by the same value from the same side (`lt`,
// `lte` or `eq` from above; `gt`, `gte` or `eq` from below), the branches also get the bound it implies (`time <=
// T`), which the index takes as its start. It adds no row: every row for which the OR is TRUE satisfies it, given
// that the column type's `<`, `=` and `<=` are one order (true of every built-in type that has them).
//
// The cursor of a keyset page over the ORDER BY's first two columns (`or(c1.lt.v1,and(c1.eq.v1,c2.lt.v2))` under
// `order=c1.desc,c2.desc`; `gt` under ascending order; `lte`/`gte` on the second column) is instead written as one
// row comparison, `ROW(c1, c2) < ROW(v1, v2)`, which is that OR by definition (SQL compares rows left to right and
// stops at the first unequal or NULL pair, as the OR's terms do: both are TRUE, FALSE or NULL for the same rows,
// NULLs included). The index takes it as
// its start directly. It matters for the plan PostgreSQL keeps: with the OR and the implied `c1 <= v1` as separate
// conditions, a generic plan estimates a third of a third of the address's rows (its default for a range against a
// parameter), so the page's LIMIT looks like a walk of most of them, while a custom plan sees the real values and a
// cheap LIMIT. On 10,000,000 rows the generic keyset plan cost 312.6 against 104.8 custom, `plan_cache_mode = auto`
// planned every execution afresh (~1 ms of planning each: 1.8–2.4 ms a read in pgbench against 1.3 ms with the
// generic plan), and the bench's keyset read was the one read that grew with the table (README "Scale"). The row
// comparison is one range condition (a third): generic 104.7 against custom 104.7, so the generic plan is kept, and
// it is the same walk. Only for the ORDER BY's own leading columns in its direction: ordering by them already needs
// the types' btree `<`, which is what a row comparison resolves its operators to.

import type { Condition, OrderColumn } from './query-params.js';

/** More branches than this: the plain statement (each branch is a separate index walk). */
export const MAX_BRANCHES = 8;

export interface BranchSplit {
  /** The other top-level conjuncts, in their order: every branch repeats them. */
  readonly common: readonly Condition[];
  /** Bounds implied by common ORs, added to every branch. */
  readonly implied: readonly Condition[];
  /** Common ORs that are keyset cursors over the ORDER BY's leading columns, each as one row comparison (not in `common`). */
  readonly cursors: readonly RowBound[];
  /** The disjuncts of the OR that is split, in their order. */
  readonly disjuncts: readonly Condition[];
}

/** Top-level conjuncts of a WHERE list: non-negated AND groups opened, recursively. */
export function conjuncts(conditions: readonly Condition[]): Condition[] {
  return conditions.flatMap((condition) => (condition.kind === 'group' && !condition.negated && condition.operator === 'and' ? conjuncts(condition.children) : [condition]));
}

/** True when the condition is TRUE only for rows where some column equals a bound value (`col.eq.v`, maybe ANDed). */
function pinsAColumn(condition: Condition): boolean {
  if (condition.kind === 'filter') {
    const { negated, operation } = condition.expr;
    return !negated && operation.kind === 'quant' && operation.operator === 'eq' && operation.quantifier === undefined;
  }
  return !condition.negated && condition.operator === 'and' && condition.children.some(pinsAColumn);
}

const splittable = (condition: Condition): condition is Extract<Condition, { kind: 'group' }> =>
  condition.kind === 'group' &&
  !condition.negated &&
  condition.operator === 'or' &&
  condition.children.length >= 2 &&
  condition.children.length <= MAX_BRANCHES &&
  condition.children.every(pinsAColumn);

/**
 * The OR to split, or undefined when the rewrite does not apply (no ORDER BY, no positive LIMIT, no top-level OR
 * whose every disjunct pins a column). The first such OR in query order is taken.
 */
export function planBranchSplit(where: readonly Condition[], order: readonly OrderColumn[], limit: bigint | undefined): BranchSplit | undefined {
  if (order.length === 0 || limit === undefined || limit <= 0n) return undefined;
  const all = conjuncts(where);
  const index = all.findIndex(splittable);
  if (index < 0) return undefined;
  const split = all[index] as Extract<Condition, { kind: 'group' }>;
  const common: Condition[] = [];
  const cursors: RowBound[] = [];
  for (const condition of all.filter((_, i) => i !== index)) {
    const cursor = keysetCursor(condition, order);
    if (cursor === undefined) common.push(condition);
    else cursors.push(cursor);
  }
  const implied = common.flatMap((condition) => (condition.kind === 'group' && !condition.negated && condition.operator === 'or' ? [...bounds(condition).values()] : [])).map(boundCondition);
  return { common, implied, cursors, disjuncts: split.children };
}

/** `(columns) operator (values)` compared as rows: the keyset cursor of the module comment. */
export interface RowBound {
  readonly columns: readonly [string, string];
  readonly operator: 'lt' | 'lte' | 'gt' | 'gte';
  readonly values: readonly [string, string];
}

/** A plain comparison of a column (no JSON path, no NOT, no quantifier). */
function comparison(condition: Condition): { column: string; operator: string; value: string } | undefined {
  if (condition.kind !== 'filter' || condition.jsonPath !== undefined || condition.expr.negated) return undefined;
  const { operation } = condition.expr;
  if (operation.kind !== 'quant' || operation.quantifier !== undefined) return undefined;
  return { column: condition.column, operator: operation.operator, value: operation.value };
}

const bothOrders = <T>(pair: readonly T[]): ReadonlyArray<readonly [T, T]> => [[pair[0]!, pair[1]!], [pair[1]!, pair[0]!]];

/** The row comparison an OR is, when it is a keyset cursor over the ORDER BY's two leading columns in its direction. */
function keysetCursor(condition: Condition, order: readonly OrderColumn[]): RowBound | undefined {
  if (condition.kind !== 'group' || condition.negated || condition.operator !== 'or' || condition.children.length !== 2) return undefined;
  const [first, second] = order;
  if (first === undefined || second === undefined || first.jsonPath !== undefined || second.jsonPath !== undefined || first.column === second.column) return undefined;
  const descending = first.direction === 'desc';
  if ((second.direction === 'desc') !== descending) return undefined;
  const strictly = descending ? 'lt' : 'gt';
  const onTies = descending ? ['lt', 'lte'] : ['gt', 'gte'];
  for (const [strictPart, tiePart] of bothOrders(condition.children)) {
    const strict = comparison(strictPart);
    if (strict?.column !== first.column || strict.operator !== strictly) continue;
    if (tiePart.kind !== 'group' || tiePart.negated || tiePart.operator !== 'and' || tiePart.children.length !== 2) continue;
    for (const [equalPart, nextPart] of bothOrders(tiePart.children)) {
      const equal = comparison(equalPart);
      const next = comparison(nextPart);
      if (equal?.column !== first.column || equal.operator !== 'eq' || equal.value !== strict.value) continue;
      if (next?.column !== second.column || !onTies.includes(next.operator)) continue;
      return { columns: [first.column, second.column], operator: next.operator as RowBound['operator'], values: [strict.value, next.value] };
    }
  }
  return undefined;
}

/** `column` is at most (`upper`) or at least (`lower`) `value` wherever the condition is TRUE. */
interface Bound {
  readonly column: string;
  readonly side: 'upper' | 'lower';
  readonly value: string;
}

const boundKey = (bound: Bound) => JSON.stringify([bound.column, bound.side, bound.value]);

/** The bounds a condition implies, by key (only plain comparisons, ANDs and ORs of them; nothing under NOT). */
function bounds(condition: Condition): Map<string, Bound> {
  const found = new Map<string, Bound>();
  if (condition.kind === 'filter') {
    const { negated, operation } = condition.expr;
    if (negated || operation.kind !== 'quant' || operation.quantifier !== undefined) return found;
    const add = (side: Bound['side']) => found.set(boundKey({ column: condition.column, side, value: operation.value }), { column: condition.column, side, value: operation.value });
    if (operation.operator === 'eq' || operation.operator === 'lt' || operation.operator === 'lte') add('upper');
    if (operation.operator === 'eq' || operation.operator === 'gt' || operation.operator === 'gte') add('lower');
    return found;
  }
  if (condition.negated || condition.children.length === 0) return found;
  const each = condition.children.map(bounds);
  if (condition.operator === 'and') {
    for (const map of each) for (const [key, bound] of map) found.set(key, bound);
    return found;
  }
  // OR: only what every disjunct implies.
  for (const [key, bound] of each[0]!) if (each.every((map) => map.has(key))) found.set(key, bound);
  return found;
}

function boundCondition(bound: Bound): Condition {
  return { kind: 'filter', column: bound.column, expr: { negated: false, operation: { kind: 'quant', operator: bound.side === 'upper' ? 'lte' : 'gte', value: bound.value } } };
}

export interface BranchSqlInput {
  readonly split: BranchSplit;
  /** `"schema"."relation"`: what the branches read. */
  readonly relation: string;
  /** Renders one condition as SQL (binding its values as parameters): read-sql.ts's own renderer. */
  readonly condition: (condition: Condition) => string;
  /** Renders a keyset cursor's row comparison the same way. */
  readonly rowBound: (bound: RowBound) => string;
  /** The ORDER BY list over `relation` (without the keywords). */
  readonly orderBy: string;
  /** The parameter placeholder holding each branch's row limit: the page's LIMIT + OFFSET. */
  readonly branchLimit: string;
  /** The alias the page reads the union as; the page's select list and ORDER BY refer to it. */
  readonly alias: string;
}

/** `FROM (branch UNION ALL branch …) AS alias`: the page's FROM in place of `FROM relation WHERE …`. */
export function branchesFromSql(input: BranchSqlInput): string {
  const { split } = input;
  const branches = split.disjuncts.map((disjunct, j) => {
    const parts = [
      ...split.common.map((condition) => input.condition(condition)),
      ...split.cursors.map((bound) => input.rowBound(bound)),
      ...split.implied.map((condition) => input.condition(condition)),
      input.condition(disjunct),
      ...split.disjuncts.slice(0, j).map((earlier) => `(${input.condition(earlier)}) IS NOT TRUE`),
    ];
    return `(SELECT ${input.relation}.* FROM ${input.relation} WHERE ${parts.join(' AND ')} ORDER BY ${input.orderBy} LIMIT ${input.branchLimit})`;
  });
  return `FROM (${branches.join(' UNION ALL ')}) AS ${input.alias}`;
}
