// The PostgREST query-parameter grammar (notes B.1; PostgREST src/.../ApiRequest/QueryParams.hs), written on the
// Parsec-compatible core so that malformed input fails with PostgREST's own messages. The grammar is kept complete
// (embedding, JSON arrows, aggregates, spreads parse) even where the gateway then refuses the feature: what a
// request *means* is decided in query-params.ts, and an input PostgREST would reject must be rejected with the
// same position and wording here.

import {
  alt,
  anyChar,
  as,
  between,
  bind,
  char,
  digit,
  eof,
  failure,
  label,
  lazy,
  left,
  letter,
  lookAhead,
  many,
  many1,
  map,
  noneOf,
  notFollowedBy,
  oneOf,
  option,
  optional,
  pure,
  right,
  sepBy,
  sepBy1,
  seq,
  showChar,
  string,
  tryP,
  type Parser,
} from './query-parsec.js';

// ---- the tree the grammar builds --------------------------------------------------------------------------------

export interface JsonOperation {
  readonly arrow: '->' | '->>';
  /** A key, or an array index: digits with an optional leading `-` (`1`, `-2`), as written. */
  readonly operand: { readonly key: string } | { readonly index: string };
}

export interface Field {
  readonly name: string;
  readonly jsonPath: readonly JsonOperation[];
}

export type QuantOperator = 'eq' | 'gte' | 'gt' | 'lte' | 'lt' | 'like' | 'ilike' | 'match' | 'imatch';
export type SimpleOperator = 'neq' | 'cs' | 'cd' | 'ov' | 'sl' | 'sr' | 'nxr' | 'nxl' | 'adj';
export type FtsOperator = 'fts' | 'plfts' | 'phfts' | 'wfts';
export type IsValue = 'null' | 'not_null' | 'true' | 'false' | 'unknown';

export type Operation =
  | { readonly kind: 'quant'; readonly operator: QuantOperator; readonly quantifier?: 'any' | 'all'; readonly value: string }
  | { readonly kind: 'simple'; readonly operator: SimpleOperator; readonly value: string }
  | { readonly kind: 'in'; readonly values: readonly string[] }
  | { readonly kind: 'is'; readonly value: IsValue }
  | { readonly kind: 'isdistinct'; readonly value: string }
  | { readonly kind: 'fts'; readonly operator: FtsOperator; readonly language?: string; readonly value: string };

export interface OpExpr {
  readonly negated: boolean;
  readonly operation: Operation;
}

export interface Filter {
  readonly field: Field;
  readonly expr: OpExpr;
}

export type LogicTree =
  | { readonly kind: 'filter'; readonly filter: Filter }
  | { readonly kind: 'expr'; readonly negated: boolean; readonly operator: 'and' | 'or'; readonly children: readonly LogicTree[] };

export type OrderDirection = 'asc' | 'desc';
export type OrderNulls = 'nullsfirst' | 'nullslast';

export type OrderTerm =
  | { readonly kind: 'field'; readonly field: Field; readonly direction?: OrderDirection; readonly nulls?: OrderNulls }
  | { readonly kind: 'relation'; readonly relation: string; readonly field: Field; readonly direction?: OrderDirection; readonly nulls?: OrderNulls };

export type AggregateFunction = 'sum' | 'avg' | 'count' | 'max' | 'min';

export type SelectItem =
  | {
      readonly kind: 'field';
      readonly field: Field;
      readonly alias?: string;
      readonly cast?: string;
      readonly aggregate?: AggregateFunction;
      readonly aggregateCast?: string;
    }
  | { readonly kind: 'relation'; readonly relation: string; readonly alias?: string; readonly hint?: string; readonly joinType?: 'left' | 'inner'; readonly children: readonly SelectItem[] }
  | { readonly kind: 'spread'; readonly relation: string; readonly hint?: string; readonly joinType?: 'left' | 'inner'; readonly children: readonly SelectItem[] };

// ---- lexical pieces ---------------------------------------------------------------------------------------------

const ws = many(oneOf(' \t'));

function lexeme<T>(parser: Parser<T>): Parser<T> {
  return map(seq(ws, parser, ws), ([, value]) => value);
}

const join = (chars: readonly string[]) => chars.join('');

/** `"..."` with backslash escaping any character. */
const quotedValue: Parser<string> = map(
  between(char('"'), char('"'), many(alt(noneOf('\\"'), right(char('\\'), anyChar)))),
  join,
);

const identifierChar = alt(letter, digit, oneOf('_ $'));

/** Letters, digits, `_`, `$` and spaces, trimmed at both ends (Haskell's T.strip). */
const identifier: Parser<string> = map(many1(identifierChar), (chars) => join(chars).trim());

/** A dash that does not start an arrow `->`. */
const dash: Parser<string> = as(tryP(seq(char('-'), notFollowedBy(char('>'), showChar))), '-');

function sepByDash(part: Parser<string>): Parser<string> {
  return map(sepBy1(part, dash), (parts) => parts.join('-'));
}

export const fieldName: Parser<string> = label(alt(quotedValue, sepByDash(identifier)), 'field name (* or [a..z0..9_$])');

const delimiter: Parser<string> = label(char('.'), 'delimiter (.)');

const jsonKeyName: Parser<string> = label(
  alt(quotedValue, sepByDash(map(many1(noneOf('(-:.,>)')), (chars) => join(chars).trim()))),
  'any non reserved character different from: .,>()',
);

const jsonPath: Parser<JsonOperation[]> = (() => {
  const arrow = alt(tryP(as(string('->>'), '->>' as const)), tryP(as(string('->'), '->' as const)));
  const end = alt<unknown>(
    tryP(lookAhead(string('->'))),
    tryP(lookAhead(string('::'))),
    tryP(lookAhead(string('.'))),
    tryP(lookAhead(string(','))),
    tryP(eof),
  );
  const index = left(
    map(seq(option('', char('-')), many1(digit)), ([sign, digits]) => ({ index: sign + join(digits) })),
    end,
  );
  const key = map(jsonKeyName, (name) => ({ key: name }));
  const operand = alt<JsonOperation['operand']>(tryP(index), tryP(key));
  return many(map(seq(arrow, operand), ([arrowKind, value]) => ({ arrow: arrowKind, operand: value })));
})();

export const field: Parser<Field> = lexeme(map(seq(fieldName, option<JsonOperation[]>([], jsonPath)), ([name, path]) => ({ name, jsonPath: path })));

const aliasSeparator = seq(char(':'), notFollowedBy(char(':'), showChar));

// ---- filters ----------------------------------------------------------------------------------------------------

const simpleOperator: Parser<SimpleOperator> = label(
  alt<SimpleOperator>(...(['neq', 'cs', 'cd', 'ov', 'sl', 'sr', 'nxr', 'nxl', 'adj'] as const).map((op) => tryP(as(string(op), op)))),
  'unknown single value operator',
);

const quantOperator: Parser<QuantOperator> = label(
  alt<QuantOperator>(...(['eq', 'gte', 'gt', 'lte', 'lt', 'like', 'ilike', 'match', 'imatch'] as const).map((op) => tryP(as(string(op), op)))),
  'unknown single value operator',
);

/** Case-insensitive literal (Haskell's `char c <|> char (toUpper c)` per character). */
function ciString(text: string): Parser<string> {
  return map(seq(...Array.from(text).map((c) => alt(char(c), char(c.toUpperCase())))), join);
}

/** Everything to the end: the value of a plain filter keeps dots and may be empty (notes B.1). */
export const singleValue: Parser<string> = map(many(anyChar), join);

const listElement: Parser<string> = alt(
  tryP(left(quotedValue, notFollowedBy(noneOf(',)'), showChar))),
  map(many(noneOf(',)')), join),
);

const listValue: Parser<string[]> = map(seq(lexeme(char('(')), sepBy1(listElement, char(',')), lexeme(char(')'))), ([, items]) => items);

const isValue: Parser<IsValue> = label(
  alt<IsValue>(...(['null', 'not_null', 'true', 'false', 'unknown'] as const).map((value) => tryP(as(ciString(value), value)))),
  'isVal: (null, not_null, true, false, unknown)',
);

export function opExpr(value: Parser<string>): Parser<OpExpr> {
  const keyword = (word: string) => tryP(seq(string(word), delimiter));
  const inOp = map(right(keyword('in'), listValue), (values): Operation => ({ kind: 'in', values }));
  const isOp = map(right(keyword('is'), isValue), (v): Operation => ({ kind: 'is', value: v }));
  const isDistinct = map(right(keyword('isdistinct'), value), (v): Operation => ({ kind: 'isdistinct', value: v }));
  const fts = map(
    seq(
      alt<FtsOperator>(...(['fts', 'plfts', 'phfts', 'wfts'] as const).map((op) => tryP(as(string(op), op)))),
      optional(tryP(between(char('('), char(')'), identifier))),
      delimiter,
      value,
    ),
    ([operator, language, , v]): Operation => (language === undefined ? { kind: 'fts', operator, value: v } : { kind: 'fts', operator, language, value: v }),
  );
  const simple = map(seq(simpleOperator, delimiter, value), ([operator, , v]): Operation => ({ kind: 'simple', operator, value: v }));
  const quantifier = alt(tryP(as(string('any'), 'any' as const)), as(string('all'), 'all' as const));
  const quant = map(
    seq(quantOperator, optional(tryP(between(char('('), char(')'), quantifier))), delimiter, value),
    ([operator, q, , v]): Operation => (q === undefined ? { kind: 'quant', operator, value: v } : { kind: 'quant', operator, quantifier: q, value: v }),
  );
  const operation = label(alt(inOp, isOp, isDistinct, tryP(fts), tryP(simple), tryP(quant)), 'operator (eq, gt, ...)');
  const negation = alt(as(tryP(seq(string('not'), delimiter)), true), pure(false));
  return map(seq(negation, operation), ([negated, op]) => ({ negated, operation: op }));
}

// ---- logic trees ------------------------------------------------------------------------------------------------

/** Inside `or=(...)` a value stops at `,` or `)` unless quoted or an `{...}` array literal (notes B.1). */
const logicSingleValue: Parser<string> = alt(
  tryP(left(quotedValue, notFollowedBy(noneOf(',)'), showChar))),
  tryP(map(seq(string('{'), many(noneOf('{}')), string('}')), ([open, body, close]) => open + join(body) + close)),
  map(many(noneOf(',)')), join),
);

export const logicTree: Parser<LogicTree> = lazy(() => {
  const logicFilter = map(seq(field, delimiter, opExpr(logicSingleValue)), ([f, , expr]): LogicTree => ({ kind: 'filter', filter: { field: f, expr } }));
  const not = label(alt(as(tryP(seq(string('not'), delimiter)), true), pure(false)), 'negation operator (not)');
  const operator = label(alt(tryP(as(string('and'), 'and' as const)), as(string('or'), 'or' as const)), 'logic operator (and, or)');
  const children = map(
    seq(lexeme(char('(')), sepBy1(logicTree, lexeme(char(','))), lexeme(char(')'))),
    ([, items]) => items,
  );
  const expression = map(seq(not, operator, children), ([negated, op, items]): LogicTree => ({ kind: 'expr', negated, operator: op, children: items }));
  return alt(tryP(logicFilter), expression);
});

// ---- order ------------------------------------------------------------------------------------------------------

export const order: Parser<OrderTerm[]> = (() => {
  const end = alt<unknown>(tryP(lookAhead(char(','))), tryP(eof));
  const direction = alt(
    tryP(right(delimiter, as(string('asc'), 'asc' as const))),
    tryP(right(delimiter, as(string('desc'), 'desc' as const))),
  );
  const nulls = alt(
    tryP(right(delimiter, as(string('nullsfirst'), 'nullsfirst' as const))),
    tryP(right(delimiter, as(string('nullslast'), 'nullslast' as const))),
  );
  const nullsThenEnd = alt(left(optional(nulls), end), as(end, undefined));
  const withOptions = <T extends object>(term: T, dir: OrderDirection | undefined, nl: OrderNulls | undefined) => ({
    ...term,
    ...(dir === undefined ? {} : { direction: dir }),
    ...(nl === undefined ? {} : { nulls: nl }),
  });
  const fieldTerm = map(seq(field, optional(direction), nullsThenEnd), ([f, dir, nl]): OrderTerm => withOptions({ kind: 'field' as const, field: f }, dir, nl));
  const relationTerm = map(
    seq(fieldName, between(char('('), char(')'), field), optional(direction), nullsThenEnd),
    ([relation, f, dir, nl]): OrderTerm => withOptions({ kind: 'relation' as const, relation, field: f }, dir, nl),
  );
  return sepBy1(lexeme(alt(tryP(relationTerm), fieldTerm)), char(','));
})();

// ---- select -----------------------------------------------------------------------------------------------------

export const selectForest: Parser<SelectItem[]> = lazy(() => {
  const embedParams = (() => {
    type EmbedParam = { readonly joinType: 'left' | 'inner' } | { readonly hint: string };
    const param: Parser<EmbedParam> = right(
      char('!'),
      alt<EmbedParam>(
        tryP(as(string('left'), { joinType: 'left' as const })),
        tryP(as(string('inner'), { joinType: 'inner' as const })),
        tryP(map(fieldName, (hint) => ({ hint }))),
      ),
    );
    return map(seq(optional(param), optional(param)), ([first, second]) => {
      const hint = (first && 'hint' in first ? first.hint : undefined) ?? (second && 'hint' in second ? second.hint : undefined);
      const joinType = (first && 'joinType' in first ? first.joinType : undefined) ?? (second && 'joinType' in second ? second.joinType : undefined);
      return { ...(hint === undefined ? {} : { hint }), ...(joinType === undefined ? {} : { joinType }) };
    });
  })();
  const openParenAhead = tryP(lookAhead(string('(')));
  const relationHead = lexeme(
    bind(seq(optional(tryP(left(fieldName, aliasSeparator))), fieldName), ([alias, relation]) =>
      // PostgREST keeps `count` for the aggregate `count()`.
      relation === 'count'
        ? failure<{ relation: string; alias?: string; hint?: string; joinType?: 'left' | 'inner' }>()
        : map(left(embedParams, openParenAhead), (params) => ({ relation, ...(alias === undefined ? {} : { alias }), ...params })),
    ),
  );
  const spreadHead = lexeme(map(seq(right(string('...'), fieldName), left(embedParams, openParenAhead)), ([relation, params]) => ({ relation, ...params })));
  const children = between(char('('), char(')'), selectForest);
  const end = alt<unknown>(tryP(lookAhead(string(')'))), tryP(lookAhead(string(','))), tryP(eof));
  const aggregation = alt<AggregateFunction>(
    as(string('sum'), 'sum'),
    as(string('avg'), 'avg'),
    as(string('count'), 'count'),
    tryP(as(string('max'), 'max')),
    tryP(as(string('min'), 'min')),
  );
  const cast = optional(right(string('::'), identifier));
  const star = map(seq(string('*'), end), (): SelectItem => ({ kind: 'field', field: { name: '*', jsonPath: [] } }));
  const countAll = map(
    seq(optional(tryP(left(fieldName, aliasSeparator))), string('count()'), cast, end),
    ([alias, , aggregateCast]): SelectItem => ({
      kind: 'field',
      field: { name: '*', jsonPath: [] },
      aggregate: 'count',
      ...(aggregateCast === undefined ? {} : { aggregateCast }),
      ...(alias === undefined ? {} : { alias }),
    }),
  );
  const plain = map(
    seq(optional(tryP(left(fieldName, aliasSeparator))), field, cast, optional(tryP(left(right(char('.'), aggregation), string('()')))), cast, end),
    ([alias, f, castType, aggregate, aggregateCast]): SelectItem => ({
      kind: 'field',
      field: f,
      ...(alias === undefined ? {} : { alias }),
      ...(castType === undefined ? {} : { cast: castType }),
      ...(aggregate === undefined ? {} : { aggregate }),
      ...(aggregateCast === undefined ? {} : { aggregateCast }),
    }),
  );
  const fieldSelect = lexeme(alt(tryP(star), tryP(countAll), plain));
  const tree = alt<SelectItem>(
    map(seq(tryP(spreadHead), children), ([head, items]): SelectItem => ({ kind: 'spread', ...head, children: items })),
    map(seq(tryP(relationHead), children), ([head, items]): SelectItem => ({ kind: 'relation', ...head, children: items })),
    fieldSelect,
  );
  return sepBy(tree, lexeme(char(',')));
});

// ---- keys -------------------------------------------------------------------------------------------------------

/** A filter or order key: `a.b.col` is the column `col` of the embedded resource path `a.b`. */
export const treePath: Parser<{ path: string[]; field: Field }> = map(
  seq(sepBy1(fieldName, delimiter), option<JsonOperation[]>([], jsonPath)),
  ([names, path]) => ({ path: names.slice(0, -1), field: { name: names[names.length - 1]!, jsonPath: path } }),
);

/** The key of a logic tree (`or`, `not.and`, `a.or`): its embed path and the operator with its negation. */
export const logicPath: Parser<{ path: string[]; operator: string }> = map(sepBy1(fieldName, delimiter), (names) => {
  const operator = names[names.length - 1]!;
  return { path: names.slice(0, -1).filter((name) => name !== 'not'), operator: names.includes('not') ? `not.${operator}` : operator };
});

/** `columns` and `on_conflict`: a comma list of names. */
export const columns: Parser<string[]> = sepBy1(fieldName, lexeme(char(',')));
