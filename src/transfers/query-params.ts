// Query parameters → what a read asks for (notes B.1; PostgREST ApiRequest/QueryParams.hs `parse` and the checks
// of its Plan stage). Two steps, in PostgREST's order so that a request with several faults reports the same one:
//   parseQueryParams: classify every pair and run the grammar (PGRST100 parse errors: order, logic trees, columns,
//                     select, filters, on_conflict);
//   planRead:         refuse what this gateway does not serve, with PostgREST's own answers where it has one
//                     (PGRST108 embed paths, PGRST200 embedding: there are no relationships here) and PGRST100 for
//                     aggregates and unsafe casts, and flatten the rest into columns (JSON paths included) and
//                     conditions.
// The range/status step (read-range.ts) runs between the two, as PostgREST's getRanges does.

import { aggregatesNotAllowed, noRelationship, notEmbedded, queryParseError, unsupportedFeature } from './gateway-errors.js';
import {
  columns,
  logicPath,
  logicTree,
  opExpr,
  order,
  selectForest,
  singleValue,
  treePath,
  type Field,
  type Filter,
  type JsonOperation,
  type LogicTree,
  type OpExpr,
  type OrderDirection,
  type OrderNulls,
  type OrderTerm,
  type SelectItem,
} from './query-grammar.js';
import { describeError, describePosition, runParser, type Parser } from './query-parsec.js';
import type { QueryPair } from './query-string.js';

// ---- parsing ----------------------------------------------------------------------------------------------------

export interface ParsedQuery {
  readonly select: readonly SelectItem[];
  readonly filters: readonly { readonly path: readonly string[]; readonly filter: Filter }[];
  readonly logic: readonly { readonly path: readonly string[]; readonly tree: LogicTree }[];
  readonly order: readonly { readonly path: readonly string[]; readonly terms: readonly OrderTerm[] }[];
  /** Embed paths that carry a `limit` or `offset` (always refused: nothing is embedded). */
  readonly rangePaths: readonly (readonly string[])[];
  /** Root `limit`: undefined when absent or not an integer (PostgREST's readMaybe ignores it silently). */
  readonly limit?: bigint;
  readonly offset?: bigint;
}

const RESERVED = new Set(['select', 'columns', 'on_conflict']);
const RESERVED_LAST_SEGMENT = new Set(['order', 'limit', 'offset', 'and', 'or']);

function lastSegment(key: string): string {
  return key.slice(key.lastIndexOf('.') + 1);
}

/** Runs one grammar rule the way PostgREST's mapError reports it: Parsec's position and messages as PGRST100. */
function parseWith<T>(parser: Parser<T>, sourceName: string, text: string): T {
  let result;
  try {
    result = runParser(parser, text);
  } catch (error) {
    // Nesting deep enough to exhaust the stack is a client fault, not a server crash.
    if (error instanceof RangeError) throw queryParseError(`"${sourceName}"`, 'the expression is nested too deeply');
    throw error;
  }
  if (!result.ok) throw queryParseError(describePosition(sourceName, result.error.pos), describeError(result.error));
  return result.value;
}

/** Haskell's `readMaybe :: Integer`: optional spaces and parentheses, a sign, decimal, 0x hex or 0o octal digits. */
export function readInteger(text: string): bigint | undefined {
  const match = /^\s*(\(\s*)?(-\s*)?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|[0-9]+)\s*(\))?\s*$/.exec(text);
  if (!match || Boolean(match[1]) !== Boolean(match[4])) return undefined;
  const digits = match[3]!;
  const magnitude = /^0[oO]/.test(digits) ? BigInt(`0o${digits.slice(2)}`) : BigInt(digits);
  return match[2] ? -magnitude : magnitude;
}

export function parseQueryParams(pairs: readonly QueryPair[]): ParsedQuery {
  const withValue = pairs.filter((pair): pair is { key: string; value: string } => pair.value !== undefined);
  const lookup = (name: string) => pairs.find((pair) => pair.key === name)?.value;

  const orderParams = withValue.filter((pair) => lastSegment(pair.key) === 'order');
  const logicParams = withValue.filter((pair) => ['and', 'or'].includes(lastSegment(pair.key)));
  const filterParams = withValue.filter((pair) => !RESERVED.has(pair.key) && !RESERVED_LAST_SEGMENT.has(lastSegment(pair.key)));
  const rangeParams = withValue.filter((pair) => ['limit', 'offset'].includes(lastSegment(pair.key)));

  const orderParsed = orderParams.map(({ key, value }) => {
    const path = parseWith(treePath, `failed to parse tree path (${key})`, key).path;
    return { path, terms: parseWith(order, `failed to parse order (${value})`, value) };
  });
  const logicParsed = logicParams.map(({ key, value }) => {
    const { path, operator } = parseWith(logicPath, `failed to parse logic path (${key})`, key);
    // PostgREST parses `or=(...)` as `or(...)`: positions in its messages count the operator too.
    return { path, tree: parseWith(logicTree, `failed to parse logic tree (${value})`, operator + value) };
  });
  const columnsValue = lookup('columns');
  if (columnsValue !== undefined) parseWith(columns, `failed to parse columns parameter (${columnsValue})`, columnsValue);
  const selectValue = lookup('select') ?? '*';
  const select = parseWith(selectForest, `failed to parse select parameter (${selectValue})`, selectValue);
  const filters = filterParams.map(({ key, value }) => {
    const { path, field } = parseWith(treePath, `failed to parse tree path (${key})`, key);
    return { path, filter: { field, expr: parseWith(opExpr(singleValue), `failed to parse filter (${value})`, value) } };
  });
  const onConflict = lookup('on_conflict');
  if (onConflict !== undefined) parseWith(columns, `failed to parse on_conflict parameter (${onConflict})`, onConflict);

  // Later keys win, as in PostgREST's HashMap.fromList; only the root `limit`/`offset` shape this read.
  let limit: bigint | undefined;
  let offset: bigint | undefined;
  const rangePaths: string[][] = [];
  for (const { key, value } of rangeParams) {
    if (key === 'limit') limit = readInteger(value);
    else if (key === 'offset') offset = readInteger(value);
    else {
      const path = parseWith(treePath, `failed to parse tree path (${key})`, key).path;
      if (path.length > 0) rangePaths.push(path);
    }
  }
  return {
    select,
    filters,
    logic: logicParsed,
    order: orderParsed,
    rangePaths,
    ...(limit === undefined ? {} : { limit }),
    ...(offset === undefined ? {} : { offset }),
  };
}

// ---- planning ---------------------------------------------------------------------------------------------------

/** A column, possibly followed by JSON arrows (`data->a->>b`, `data->0`); the path is omitted when empty. */
export interface ColumnRef {
  readonly column: string;
  readonly jsonPath?: readonly JsonOperation[];
}

export type SelectColumn =
  | { readonly kind: 'all' }
  | (ColumnRef & { readonly kind: 'column'; readonly alias?: string; readonly cast?: string });

export type Condition =
  | (ColumnRef & { readonly kind: 'filter'; readonly expr: OpExpr })
  | { readonly kind: 'group'; readonly negated: boolean; readonly operator: 'and' | 'or'; readonly children: readonly Condition[] };

export interface OrderColumn extends ColumnRef {
  readonly direction?: OrderDirection;
  readonly nulls?: OrderNulls;
}

export interface ReadPlan {
  readonly select: readonly SelectColumn[];
  /** ANDed: plain filters first, then logic trees, in query order. */
  readonly where: readonly Condition[];
  readonly order: readonly OrderColumn[];
}

/** The relation being read: PostgREST names it (and its schema) in the PGRST200 it answers for an embed. */
export interface ReadTarget {
  readonly schema: string;
  readonly relation: string;
}

/**
 * A cast is spliced into SQL as a type name (PostgREST does the same), so it must be a plain type name: words of
 * letters, digits and `_` separated by single spaces (`int4`, `double precision`). The grammar alone would let `$`
 * through, which could open a dollar-quoted string.
 */
const SAFE_TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?: [A-Za-z_][A-Za-z0-9_]*)*$/;

function columnRef(field: Field): ColumnRef {
  return field.jsonPath.length === 0 ? { column: field.name } : { column: field.name, jsonPath: field.jsonPath };
}

/**
 * The key a selected JSON path gets without an alias (PostgREST Plan.hs addAliases/lastJsonKey): the last key of
 * the path; a path ending in an index takes the nearest key before it, else the column's name, so
 * `data->1->mycol->>2` is `mycol` and `data->3` is `data`.
 */
export function jsonPathKey(ref: ColumnRef): string | undefined {
  const path = ref.jsonPath ?? [];
  if (path.length === 0) return undefined;
  for (let i = path.length - 1; i >= 0; i--) {
    const operand = path[i]!.operand;
    if ('key' in operand) return operand.key;
  }
  return ref.column;
}

function planSelect(items: readonly SelectItem[]): SelectColumn[] {
  // PostgREST v11+ (QueryBuilder.hs readPlanToQuery, `defSelect`): an empty `select=` selects every column, as `*`.
  if (items.length === 0) return [{ kind: 'all' }];
  return items.map((item): SelectColumn => {
    // Embedded items were refused before (PGRST200 in planRead); this keeps the type narrow.
    if (item.kind !== 'field') throw new Error('planSelect: embedded item after the relationship check');
    if (item.aggregate !== undefined) throw aggregatesNotAllowed();
    if (item.field.name === '*' && item.field.jsonPath.length === 0) return { kind: 'all' };
    if (item.cast !== undefined && !SAFE_TYPE_NAME.test(item.cast)) {
      throw unsupportedFeature('Invalid cast type', `'${item.cast}' is not a type name`, 'Use a type name such as text, int8 or numeric.');
    }
    return {
      kind: 'column',
      ...columnRef(item.field),
      ...(item.alias === undefined ? {} : { alias: item.alias }),
      ...(item.cast === undefined ? {} : { cast: item.cast }),
    };
  });
}

function planTree(tree: LogicTree): Condition {
  if (tree.kind === 'filter') return { kind: 'filter', ...columnRef(tree.filter.field), expr: tree.filter.expr };
  return { kind: 'group', negated: tree.negated, operator: tree.operator, children: tree.children.map(planTree) };
}

type EmbedItem = Extract<SelectItem, { kind: 'relation' | 'spread' }>;

const embedsOf = (items: readonly SelectItem[]) => items.filter((item): item is EmbedItem => item.kind !== 'field');

/**
 * The first segment of an embed path that names no embedded resource (PostgREST Plan.hs updateNode), or undefined
 * when the whole path leads through the select tree. A segment matches a relation by its name or its alias, as with
 * PostgREST's default `db-url-use-legacy-target-names` (and every version before that setting).
 */
function missingEmbed(select: readonly SelectItem[], path: readonly string[]): string | undefined {
  let level = select;
  for (const name of path) {
    const node = embedsOf(level).find((item) => item.relation === name || ('alias' in item && item.alias === name));
    if (node === undefined) return name;
    level = node.children;
  }
  return undefined;
}

/**
 * PostgREST's readPlan stages that can refuse a request, in its order, so that a request with several faults gets
 * the same answer:
 *   1. addFilters, addOrders, addRanges, addLogicTrees: an embed path naming nothing in `select` is PGRST108. Each
 *      stage folds its parameters from the right, so of several such parameters the last one is reported.
 *   2. addRels: an embedded resource needs a relationship; this gateway has none, so the first one in `select` is
 *      PGRST200.
 *   3. addRelatedOrders: `order=other(col)` needs `other` embedded: PGRST108.
 */
export function planRead(parsed: ParsedQuery, target: ReadTarget): ReadPlan {
  const lastMissing = (paths: readonly (readonly string[])[]) => {
    for (let i = paths.length - 1; i >= 0; i--) {
      const missing = missingEmbed(parsed.select, paths[i]!);
      if (missing !== undefined) return missing;
    }
    return undefined;
  };
  for (const paths of [parsed.filters.map((f) => f.path), parsed.order.map((o) => o.path), parsed.rangePaths, parsed.logic.map((l) => l.path)]) {
    const missing = lastMissing(paths);
    if (missing !== undefined) throw notEmbedded(missing);
  }
  const embed = embedsOf(parsed.select)[0];
  if (embed !== undefined) throw noRelationship(target.schema, target.relation, embed.relation, embed.hint);

  // PostgREST applies its order parameters right to left, so the first root `order` wins (all paths are root here).
  const terms = parsed.order[0]?.terms ?? [];
  const related = terms.find((term) => term.kind === 'relation');
  if (related !== undefined) throw notEmbedded(related.relation);

  const select = planSelect(parsed.select);
  const where: Condition[] = [
    ...parsed.filters.map(({ filter }): Condition => ({ kind: 'filter', ...columnRef(filter.field), expr: filter.expr })),
    ...parsed.logic.map(({ tree }) => planTree(tree)),
  ];
  const orderColumns = terms.map(
    (term): OrderColumn => ({ ...columnRef(term.field), ...(term.direction ? { direction: term.direction } : {}), ...(term.nulls ? { nulls: term.nulls } : {}) }),
  );
  return { select, where, order: orderColumns };
}
