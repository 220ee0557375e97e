// A small parser-combinator core with Parsec's semantics (consumed/empty replies, `try`, labels, error merging by
// position), so the query grammar (query-grammar.ts) fails with the very messages PostgREST's Parsec parsers give:
// `"failed to parse order (id.ac)" (line 1, column 4)` + `unexpected "c" expecting "asc", "desc", ...`
// (notes B.1, B.3 #12/#13/#22/#36). Those strings are a wire contract clients match on, and they fall out of how
// Parsec merges the errors of alternatives, so the core reproduces that algebra rather than imitating its output.
//
// Semantics (Parsec 3): a reply is consumed or empty, ok or error. `alt` tries its second branch only after an
// *empty* error of the first and merges both errors; `tryP` turns a consumed error into an empty one; `label`
// replaces the "expecting" part of an empty reply; errors at the same position concatenate, the later position
// wins otherwise. Input is a sequence of Unicode code points, like Haskell's String.

const SYS_UNEXPECT = 0;
const UNEXPECT = 1;
const EXPECT = 2;
const MESSAGE = 3;
type MessageKind = typeof SYS_UNEXPECT | typeof UNEXPECT | typeof EXPECT | typeof MESSAGE;

interface ErrorMessage {
  readonly kind: MessageKind;
  readonly text: string;
  /**
   * `text` is a character not yet shown: describeError applies showString. A successful parse builds an error at
   * every alternative that does not match and reads none of them, so showing each character eagerly was the
   * gateway's largest CPU item under load (bench: about 1 µs per query character).
   */
  readonly raw: boolean;
}

export interface SourcePos {
  readonly line: number;
  readonly column: number;
}

export interface ParseError {
  readonly pos: SourcePos;
  readonly messages: readonly ErrorMessage[];
}

interface State {
  /** Index into the code points. */
  readonly index: number;
  readonly pos: SourcePos;
}

type Reply<T> =
  | { readonly consumed: boolean; readonly ok: true; readonly value: T; readonly state: State; readonly error: ParseError }
  | { readonly consumed: boolean; readonly ok: false; readonly error: ParseError };

export type Parser<T> = (input: readonly string[], state: State) => Reply<T>;

// ---- errors ------------------------------------------------------------------------------------------------------

function unknownError(pos: SourcePos): ParseError {
  return { pos, messages: [] };
}

function newError(kind: MessageKind, text: string, pos: SourcePos, raw = false): ParseError {
  return { pos, messages: [{ kind, text, raw }] };
}

function comparePos(a: SourcePos, b: SourcePos): number {
  return a.line !== b.line ? a.line - b.line : a.column - b.column;
}

/** Parsec's mergeError: prefer the error that says something, then the one further into the input. */
function mergeError(first: ParseError, second: ParseError): ParseError {
  if (second.messages.length === 0 && first.messages.length > 0) return first;
  if (first.messages.length === 0 && second.messages.length > 0) return second;
  const order = comparePos(first.pos, second.pos);
  if (order === 0) return { pos: first.pos, messages: [...first.messages, ...second.messages] };
  return order > 0 ? first : second;
}

/** Parsec's setErrorMessage (Expect msg): drops every "expecting" and puts the label first. */
function setExpect(error: ParseError, label: string): ParseError {
  return { pos: error.pos, messages: [{ kind: EXPECT, text: label, raw: false }, ...error.messages.filter((m) => m.kind !== EXPECT)] };
}

// ---- Haskell `show`, which Parsec uses to name the tokens it met or wanted ------------------------------------

const ASCII_NAMES = ['NUL', 'SOH', 'STX', 'ETX', 'EOT', 'ENQ', 'ACK', 'BEL', 'BS', 'HT', 'LF', 'VT', 'FF', 'CR', 'SO', 'SI', 'DLE', 'DC1', 'DC2', 'DC3', 'DC4', 'NAK', 'SYN', 'ETB', 'CAN', 'EM', 'SUB', 'ESC', 'FS', 'GS', 'RS', 'US'];
const NAMED_ESCAPES: Readonly<Record<number, string>> = { 7: '\\a', 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r' };

/** Haskell's showLitChar; `next` is the following character, which decides the `\&` separators. */
function showLitChar(char: string, next: string | undefined): string {
  const code = char.codePointAt(0)!;
  if (code > 127) return `\\${code}${next !== undefined && /[0-9]/.test(next) ? '\\&' : ''}`;
  if (code === 127) return '\\DEL';
  if (char === '\\') return '\\\\';
  if (code >= 32) return char;
  if (NAMED_ESCAPES[code]) return NAMED_ESCAPES[code]!;
  if (code === 14) return `\\SO${next === 'H' ? '\\&' : ''}`;
  return `\\${ASCII_NAMES[code]}`;
}

/** `show` of a Haskell String: double quotes, escapes. */
export function showString(text: string): string {
  const chars = Array.from(text);
  return `"${chars.map((char, i) => (char === '"' ? '\\"' : showLitChar(char, chars[i + 1]))).join('')}"`;
}

/** `show` of a Haskell Char: single quotes, escapes. */
export function showChar(char: string): string {
  return char === "'" ? "'\\''" : `'${showLitChar(char, undefined)}'`;
}

/** Parsec's showErrorMessages with the English words, newlines folded into spaces as PostgREST does. */
export function describeError(error: ParseError): string {
  const messages = [...error.messages].sort((a, b) => a.kind - b.kind); // stable: keeps order within a kind
  if (messages.length === 0) return 'unknown parse error';
  const ofKind = (kind: MessageKind) => messages.filter((m) => m.kind === kind).map((m) => (m.raw ? showString(m.text) : m.text));
  const clean = (items: readonly string[]) => [...new Set(items.filter((item) => item !== ''))];
  const commasOr = (items: readonly string[]) =>
    items.length <= 1 ? (items[0] ?? '') : `${clean(items.slice(0, -1)).join(', ')} or ${items[items.length - 1]}`;
  const showMany = (prefix: string, items: readonly string[]) => {
    const cleaned = clean(items);
    if (cleaned.length === 0) return '';
    return prefix === '' ? commasOr(cleaned) : `${prefix} ${commasOr(cleaned)}`;
  };
  const sysUnexpected = ofKind(SYS_UNEXPECT);
  const unexpected = ofKind(UNEXPECT);
  let showSys = '';
  if (unexpected.length === 0 && sysUnexpected.length > 0) {
    showSys = sysUnexpected[0] === '' ? 'unexpected end of input' : `unexpected ${sysUnexpected[0]}`;
  }
  const parts = clean([showSys, showMany('unexpected', unexpected), showMany('expecting', ofKind(EXPECT)), showMany('', ofKind(MESSAGE))]);
  return parts.join(' ').trim();
}

/** Parsec's `show` of the error position with a source name: `"name" (line 1, column 4)`. */
export function describePosition(sourceName: string, pos: SourcePos): string {
  return `"${sourceName}" (line ${pos.line}, column ${pos.column})`;
}

// ---- running --------------------------------------------------------------------------------------------------

export type ParseResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: ParseError };

/** Runs a parser from the start of `text`; like Parsec's `parse`, trailing input is not an error by itself. */
export function runParser<T>(parser: Parser<T>, text: string): ParseResult<T> {
  const reply = parser(Array.from(text), { index: 0, pos: { line: 1, column: 1 } });
  return reply.ok ? { ok: true, value: reply.value } : { ok: false, error: reply.error };
}

/** Parsec's updatePosChar: newline starts a line, tab moves to the next multiple of 8 (+1). */
function advance(state: State, char: string): State {
  const { line, column } = state.pos;
  if (char === '\n') return { index: state.index + 1, pos: { line: line + 1, column: 1 } };
  if (char === '\t') return { index: state.index + 1, pos: { line, column: column + 8 - ((column - 1) % 8) } };
  return { index: state.index + 1, pos: { line, column: column + 1 } };
}

// ---- primitives -----------------------------------------------------------------------------------------------

export function pure<T>(value: T): Parser<T> {
  return (_input, state) => ({ consumed: false, ok: true, value, state, error: unknownError(state.pos) });
}

/** Parsec's mzero: fails without a message. */
export function failure<T>(): Parser<T> {
  return (_input, state) => ({ consumed: false, ok: false, error: unknownError(state.pos) });
}

export function satisfy(predicate: (char: string) => boolean): Parser<string> {
  return (input, state) => {
    const char = input[state.index];
    if (char === undefined) return { consumed: false, ok: false, error: newError(SYS_UNEXPECT, '', state.pos) };
    if (!predicate(char)) return { consumed: false, ok: false, error: newError(SYS_UNEXPECT, char, state.pos, true) };
    const next = advance(state, char);
    return { consumed: true, ok: true, value: char, state: next, error: unknownError(next.pos) };
  };
}

export function char(expected: string): Parser<string> {
  return label(satisfy((c) => c === expected), showString(expected));
}

/** Parsec's oneOf/noneOf carry no label: a failure only says what it met. */
export function oneOf(chars: string): Parser<string> {
  return satisfy((c) => chars.includes(c));
}

export function noneOf(chars: string): Parser<string> {
  return satisfy((c) => !chars.includes(c));
}

export const anyChar: Parser<string> = satisfy(() => true);

export const letter: Parser<string> = label(satisfy((c) => /^\p{L}$/u.test(c)), 'letter');

export const digit: Parser<string> = label(satisfy((c) => c >= '0' && c <= '9'), 'digit');

/** Parsec's `string` (tokens): errors are reported at the start of the literal, naming the character that differed. */
export function string(literal: string): Parser<string> {
  const expected = Array.from(literal);
  const shownLiteral = showString(literal);
  return (input, state) => {
    let index = state.index;
    for (let i = 0; i < expected.length; i++) {
      const found = input[index];
      if (found !== expected[i]) {
        const error: ParseError = {
          pos: state.pos,
          messages: [
            { kind: EXPECT, text: shownLiteral, raw: false },
            { kind: SYS_UNEXPECT, text: found ?? '', raw: found !== undefined },
          ],
        };
        return { consumed: i > 0, ok: false, error };
      }
      index++;
    }
    let next = state;
    for (const c of expected) next = advance(next, c);
    return { consumed: expected.length > 0, ok: true, value: literal, state: next, error: unknownError(next.pos) };
  };
}

/** Parsec's `unexpected`. */
export function unexpected<T>(message: string): Parser<T> {
  return (_input, state) => ({ consumed: false, ok: false, error: newError(UNEXPECT, message, state.pos) });
}

/** Parsec's anyToken: takes a character without moving the reported position (only `eof` uses it). */
const anyToken: Parser<string> = (input, state) => {
  const char = input[state.index];
  if (char === undefined) return { consumed: false, ok: false, error: newError(SYS_UNEXPECT, '', state.pos) };
  return { consumed: true, ok: true, value: char, state: { index: state.index + 1, pos: state.pos }, error: unknownError(state.pos) };
};

/** Parsec's notFollowedBy: succeeds, consuming nothing, when `parser` fails. */
export function notFollowedBy<T>(parser: Parser<T>, show: (value: T) => string): Parser<undefined> {
  return (input, state) => {
    const reply = parser(input, state);
    if (!reply.ok) return { consumed: false, ok: true, value: undefined, state, error: reply.error };
    const error = mergeError(reply.error, newError(UNEXPECT, show(reply.value), reply.state.pos));
    if (reply.consumed) return { consumed: false, ok: false, error };
    return { consumed: false, ok: true, value: undefined, state, error: mergeError(error, unknownError(state.pos)) };
  };
}

export const eof: Parser<undefined> = label(notFollowedBy(anyToken, showChar), 'end of input');

// ---- combinators ----------------------------------------------------------------------------------------------

/** Monadic bind with Parsec's error bookkeeping. */
export function bind<A, B>(parser: Parser<A>, next: (value: A) => Parser<B>): Parser<B> {
  return (input, state) => {
    const first = parser(input, state);
    if (!first.ok) return first;
    const second = next(first.value)(input, first.state);
    if (second.consumed) return second;
    const error = mergeError(first.error, second.error);
    const consumed = first.consumed;
    return second.ok ? { consumed, ok: true, value: second.value, state: second.state, error } : { consumed, ok: false, error };
  };
}

export function map<A, B>(parser: Parser<A>, f: (value: A) => B): Parser<B> {
  return bind(parser, (value) => pure(f(value)));
}

type Values<T extends readonly Parser<unknown>[]> = { -readonly [K in keyof T]: T[K] extends Parser<infer V> ? V : never };

/** Runs parsers one after the other (a chain of binds) and collects their values. */
export function seq<T extends readonly Parser<unknown>[]>(...parsers: T): Parser<Values<T>> {
  return (input, state) => {
    let current = state;
    let consumed = false;
    let error = unknownError(state.pos);
    const values: unknown[] = [];
    for (const parser of parsers) {
      const reply = parser(input, current);
      if (!reply.ok) return { consumed: consumed || reply.consumed, ok: false, error: reply.consumed ? reply.error : mergeError(error, reply.error) };
      error = reply.consumed ? reply.error : mergeError(error, reply.error);
      consumed ||= reply.consumed;
      current = reply.state;
      values.push(reply.value);
    }
    return { consumed, ok: true, value: values as Values<T>, state: current, error };
  };
}

/** `p *> q` */
export function right<B>(first: Parser<unknown>, second: Parser<B>): Parser<B> {
  return map(seq(first, second), ([, value]) => value);
}

/** `p <* q` */
export function left<A>(first: Parser<A>, second: Parser<unknown>): Parser<A> {
  return map(seq(first, second), ([value]) => value);
}

/** `p $> value` */
export function as<T>(parser: Parser<unknown>, value: T): Parser<T> {
  return map(parser, () => value);
}

/** Parsec's `<|>`, left-associated over the list. */
export function alt<T>(...parsers: readonly Parser<T>[]): Parser<T> {
  return (input, state) => {
    let error: ParseError | undefined;
    for (const parser of parsers) {
      const reply = parser(input, state);
      if (reply.consumed) return reply;
      const merged = error === undefined ? reply.error : mergeError(error, reply.error);
      if (reply.ok) return { ...reply, error: merged };
      error = merged;
    }
    return { consumed: false, ok: false, error: error ?? unknownError(state.pos) };
  };
}

export function tryP<T>(parser: Parser<T>): Parser<T> {
  return (input, state) => {
    const reply = parser(input, state);
    return !reply.ok && reply.consumed ? { consumed: false, ok: false, error: reply.error } : reply;
  };
}

/** Parsec's `<?>`: names what an empty reply expected. */
export function label<T>(parser: Parser<T>, name: string): Parser<T> {
  return (input, state) => {
    const reply = parser(input, state);
    if (reply.consumed) return reply;
    if (!reply.ok) return { consumed: false, ok: false, error: setExpect(reply.error, name) };
    return reply.error.messages.length === 0 ? reply : { ...reply, error: setExpect(reply.error, name) };
  };
}

export function lookAhead<T>(parser: Parser<T>): Parser<T> {
  return (input, state) => {
    const reply = parser(input, state);
    if (!reply.ok) return reply;
    return { consumed: false, ok: true, value: reply.value, state, error: unknownError(state.pos) };
  };
}

/** Iterative, so long values do not deepen the stack. */
export function many<T>(parser: Parser<T>): Parser<T[]> {
  return (input, state) => {
    const values: T[] = [];
    let current = state;
    let consumed = false;
    for (;;) {
      const reply = parser(input, current);
      if (!reply.ok) {
        if (reply.consumed) return reply;
        return { consumed, ok: true, value: values, state: current, error: reply.error };
      }
      if (!reply.consumed) throw new Error('many: the parser accepts the empty string');
      consumed = true;
      values.push(reply.value);
      current = reply.state;
    }
  };
}

export function many1<T>(parser: Parser<T>): Parser<T[]> {
  return map(seq(parser, many(parser)), ([head, tail]) => [head, ...tail]);
}

export function sepBy1<T>(parser: Parser<T>, separator: Parser<unknown>): Parser<T[]> {
  return map(seq(parser, many(right(separator, parser))), ([head, tail]) => [head, ...tail]);
}

export function sepBy<T>(parser: Parser<T>, separator: Parser<unknown>): Parser<T[]> {
  return alt(sepBy1(parser, separator), pure<T[]>([]));
}

export function between<T>(open: Parser<unknown>, close: Parser<unknown>, parser: Parser<T>): Parser<T> {
  return map(seq(open, parser, close), ([, value]) => value);
}

export function option<T>(fallback: T, parser: Parser<T>): Parser<T> {
  return alt(parser, pure(fallback));
}

export function optional<T>(parser: Parser<T>): Parser<T | undefined> {
  return alt<T | undefined>(parser, pure(undefined));
}

/** For recursive grammars: the parser is built on first use. */
export function lazy<T>(build: () => Parser<T>): Parser<T> {
  let parser: Parser<T> | undefined;
  return (input, state) => (parser ??= build())(input, state);
}
