// Query parameters → what a read asks for (notes B.1; PostgREST ApiRequest/QueryParams.hs `parse` and the checks
// of its Plan stage). Two steps, in PostgREST's order so that a request with several faults reports the same one:
//   parseQueryParams: classify every pair and run the grammar (PGRST100 parse errors: order, logic trees, columns,
//                     select, filters, on_conflict);
//   planRead:         refuse what this gateway does not serve (PGRST108 embed paths, PGRST100 embedding, JSON
//                     arrows, aggregates, unsafe casts) and flatten the rest into columns and conditions.
// The range/status step (read-range.ts) runs between the two, as PostgREST's getRanges does.

import { notEmbedded, queryParseError, unsupportedFeature } from './gateway-errors.js';
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

export type SelectColumn =
  | { readonly kind: 'all' }
  | { readonly kind: 'column'; readonly name: string; readonly alias?: string; readonly cast?: string };

export type Condition =
  | { readonly kind: 'filter'; readonly column: string; readonly expr: OpExpr }
  | { readonly kind: 'group'; readonly negated: boolean; readonly operator: 'and' | 'or'; readonly children: readonly Condition[] };

export interface OrderColumn {
  readonly column: string;
  readonly direction?: OrderDirection;
  readonly nulls?: OrderNulls;
}

export interface ReadPlan {
  readonly select: readonly SelectColumn[];
  /** ANDed: plain filters first, then logic trees, in query order. */
  readonly where: readonly Condition[];
  readonly order: readonly OrderColumn[];
}

/**
 * A cast is spliced into SQL as a type name (PostgREST does the same), so it must be a plain type name: words of
 * letters, digits and `_` separated by single spaces (`int4`, `double precision`). The grammar alone would let `$`
 * through, which could open a dollar-quoted string.
 */
const SAFE_TYPE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(?: [A-Za-z_][A-Za-z0-9_]*)*$/;

function describeField(field: Field): string {
  return field.name + field.jsonPath.map((op) => `${op.arrow}${'key' in op.operand ? op.operand.key : op.operand.index}`).join('');
}

function plainColumn(field: Field): string {
  if (field.jsonPath.length > 0) {
    throw unsupportedFeature('JSON path operators are not supported by this gateway', `'${describeField(field)}' uses -> or ->>`, 'Select the whole column and read the JSON on the client.');
  }
  return field.name;
}

function planSelect(items: readonly SelectItem[]): SelectColumn[] {
  return items.map((item): SelectColumn => {
    if (item.kind !== 'field') {
      throw unsupportedFeature('Resource embedding is not supported by this gateway', `'${item.relation}' in the select parameter embeds another relation`, 'Query each relation separately.');
    }
    if (item.aggregate !== undefined) {
      throw unsupportedFeature('Aggregate functions are not supported by this gateway', `'${item.aggregate}()' in the select parameter`, null);
    }
    if (item.field.name === '*' && item.field.jsonPath.length === 0) return { kind: 'all' };
    const name = plainColumn(item.field);
    if (item.cast !== undefined && !SAFE_TYPE_NAME.test(item.cast)) {
      throw unsupportedFeature('Invalid cast type', `'${item.cast}' is not a type name`, 'Use a type name such as text, int8 or numeric.');
    }
    return { kind: 'column', name, ...(item.alias === undefined ? {} : { alias: item.alias }), ...(item.cast === undefined ? {} : { cast: item.cast }) };
  });
}

function planTree(tree: LogicTree): Condition {
  if (tree.kind === 'filter') return { kind: 'filter', column: plainColumn(tree.filter.field), expr: tree.filter.expr };
  return { kind: 'group', negated: tree.negated, operator: tree.operator, children: tree.children.map(planTree) };
}

export function planRead(parsed: ParsedQuery): ReadPlan {
  const embedded = [...parsed.filters.map((f) => f.path), ...parsed.logic.map((l) => l.path), ...parsed.order.map((o) => o.path), ...parsed.rangePaths].find(
    (path) => path.length > 0,
  );
  if (embedded) throw notEmbedded(embedded[0]!);
  const select = planSelect(parsed.select);
  const where: Condition[] = [
    ...parsed.filters.map(({ filter }): Condition => ({ kind: 'filter', column: plainColumn(filter.field), expr: filter.expr })),
    ...parsed.logic.map(({ tree }) => planTree(tree)),
  ];
  // PostgREST applies its order parameters right to left, so the first root `order` wins.
  const terms = parsed.order[0]?.terms ?? [];
  const orderColumns = terms.map((term): OrderColumn => {
    if (term.kind === 'relation') {
      throw unsupportedFeature('Resource embedding is not supported by this gateway', `'${term.relation}(${describeField(term.field)})' in the order parameter orders by another relation`, null);
    }
    return { column: plainColumn(term.field), ...(term.direction ? { direction: term.direction } : {}), ...(term.nulls ? { nulls: term.nulls } : {}) };
  });
  return { select, where, order: orderColumns };
}
