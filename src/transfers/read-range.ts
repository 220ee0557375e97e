// Which rows a read returns and how its answer is labelled (notes B.2, F.1–F.3; PostgREST RangeQuery.hs and the
// getRanges/rangeStatusHeader logic). All positions are bigint: offsets are unbounded integers in PostgREST and
// PostgreSQL itself rejects what does not fit int8.

import { negativeLimit, offsetBeyondTotal, offsetTooLarge, rangeLowerAboveUpper } from './gateway-errors.js';

export interface WindowRequest {
  readonly method: 'GET' | 'HEAD';
  readonly rangeHeader?: string;
  readonly limit?: bigint;
  readonly offset?: bigint;
  readonly maxRows?: number;
  readonly maxOffset?: number;
}

export interface RowWindow {
  /** The first row position asked for: the lower bound of Content-Range. */
  readonly first: bigint;
  readonly sqlOffset: bigint;
  /** undefined: no LIMIT at all. */
  readonly sqlLimit?: bigint;
  /** A Range header shaped this read, so decision F.1 (206 when partial) applies. */
  readonly ranged: boolean;
  /** `limit=0`: always an empty page, whatever else was asked (PostgREST's limitZeroRange). */
  readonly limitZero: boolean;
}

/** Inclusive bounds; `last` undefined is unbounded; empty when last < first. */
interface Span {
  readonly first: bigint;
  readonly last?: bigint;
}

const isEmpty = (span: Span) => span.last !== undefined && span.last < span.first;
const minLast = (a?: bigint, b?: bigint) => (a === undefined ? b : b === undefined ? a : a < b ? a : b);

function intersect(a: Span, b: Span): Span {
  if (isEmpty(a) || isEmpty(b)) return { first: 0n, last: -1n };
  const first = a.first > b.first ? a.first : b.first;
  const last = minLast(a.last, b.last);
  return last === undefined ? { first } : { first, last };
}

/** PostgREST's rangeParse: anything but `^([0-9]+)-([0-9]*)$` is ignored (notes B.2). */
export function parseRangeHeader(header: string | undefined): Span | undefined {
  const match = header === undefined ? null : /^([0-9]+)-([0-9]*)$/.exec(header);
  if (!match) return undefined;
  return { first: BigInt(match[1]!), ...(match[2] === '' ? {} : { last: BigInt(match[2]!) }) };
}

/**
 * The window a read covers: the Range header (GET only, RFC 9110) intersected with limit/offset, then capped by
 * max-rows (F.2) — Content-Range keeps the uncapped start.
 * @throws GatewayError 416 PGRST103 for `Range: 1-0`, a negative limit or an otherwise empty window; 400 for F.3.
 */
export function planWindow(request: WindowRequest): RowWindow {
  const header = request.method === 'GET' ? parseRangeHeader(request.rangeHeader) : undefined;
  const headerSpan: Span = header ?? { first: 0n };
  // A negative offset is a no-op (notes B.1, RangeSpec.hs:253). PostgREST's range algebra would make
  // `limit=3&offset=-4` a 416; here the negative offset is simply absent, with or without a limit.
  const offset = request.offset !== undefined && request.offset > 0n ? request.offset : 0n;
  const paramSpan: Span = request.limit === undefined ? { first: offset } : { first: offset, last: offset + request.limit - 1n };
  const limitZero = request.limit === 0n;
  if (limitZero) return { first: 0n, sqlOffset: 0n, sqlLimit: 0n, ranged: header !== undefined, limitZero };

  const top = intersect(headerSpan, paramSpan);
  // PostgREST's isInvalidRange: any empty window but limit=0; the details name the header when it was the cause.
  if (isEmpty(top)) throw isEmpty(headerSpan) ? rangeLowerAboveUpper() : negativeLimit();
  if (request.maxOffset !== undefined && top.first > BigInt(request.maxOffset)) throw offsetTooLarge(request.maxOffset);

  const requested = top.last === undefined ? undefined : top.last - top.first + 1n;
  const cap = request.maxRows === undefined ? undefined : BigInt(request.maxRows);
  const sqlLimit = minLast(requested, cap);
  return { first: top.first, sqlOffset: top.first, ...(sqlLimit === undefined ? {} : { sqlLimit }), ranged: header !== undefined, limitZero };
}

/** Whether the answer must find out if rows follow the page (F.1 needs it only for a bounded, ranged read). */
export function needsMoreRowsProbe(window: RowWindow): boolean {
  return window.ranged && !window.limitZero && window.sqlLimit !== undefined;
}

export interface RangeOutcome {
  readonly status: number;
  readonly contentRange: string;
}

/**
 * Status and Content-Range of a read that returned `pageCount` rows (notes B.2, F.1).
 * @throws GatewayError 416 (Content-Range star/total) when a count shows the start is past the end.
 */
export function rangeOutcome(window: RowWindow, pageCount: bigint, total: bigint | undefined, moreRows: boolean): RangeOutcome {
  const lower = window.first;
  const upper = lower + pageCount - 1n;
  if (total !== undefined && lower > total) throw offsetBeyondTotal(lower, total);
  const span = total !== 0n && lower <= upper ? `${lower}-${upper}` : '*';
  const contentRange = `${span}/${total === undefined ? '*' : total}`;
  let status: number;
  if (window.ranged && !window.limitZero) {
    // F.1 (a deliberate divergence from PostgREST, which answers 200 without a count): a Range read is partial
    // when it starts after the first row or rows follow it.
    status = lower > 0n || moreRows ? 206 : 200;
  } else {
    status = total !== undefined && pageCount < total ? 206 : 200;
  }
  return { status, contentRange };
}
