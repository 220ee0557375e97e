// What every connector does the same way: one GET through the injected HttpJsonClient with its failures turned
// into a SourceFetchError, the usual status and JSON checks, upstream text made fit for a notification, the
// rounding of a price to `decimals`, and the per-coin warnings of an answer served in part.
// Messages built here are notified to operators, so none of them ever quotes a URL, a header or a key
// (docs/notes/rates.md E.3, F.1).

import type { Quote, SourceName } from '../types.js';
import { isServable, roundTo } from '../triangulate.js';
import {
  SourceFetchError,
  UpstreamRequestError,
  UpstreamTimeoutError,
  type HttpJsonResponse,
  type SourceContext,
} from './source.js';

/** Per-request timeout of a cycle: "a 10 s per-source timeout" (docs/notes/rates.md F.21). */
export const SOURCE_TIMEOUT_MS = 10_000;

export interface UpstreamRequestOptions {
  /** Longer only for the once-per-start directory downloads; default SOURCE_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * GET `url` as `source`. Every HTTP status resolves (judging it is the connector's job, some APIs put their
 * error in a 200 body); a transport failure rejects with a SourceFetchError that names its kind only.
 */
export async function upstreamRequest(
  source: SourceName,
  ctx: SourceContext,
  url: string,
  { timeoutMs = SOURCE_TIMEOUT_MS, headers }: UpstreamRequestOptions = {},
): Promise<HttpJsonResponse> {
  try {
    return await ctx.http.getJson(url, { ...(headers ? { headers: { ...headers } } : {}), timeoutMs, signal: ctx.signal });
  } catch (error) {
    throw new SourceFetchError(source, transportFailure(error, ctx.signal));
  }
}

function transportFailure(error: unknown, signal: AbortSignal): string {
  // The cycle was cancelled: whatever the client threw after that is a consequence, not the cause.
  if (signal.aborted) return 'request aborted';
  // The contract's classes build their messages from their fields alone (source.ts), so the text is safe as is.
  if (error instanceof UpstreamTimeoutError || error instanceof UpstreamRequestError) return error.message;
  // A client outside the contract: described by kind only, since its own text may quote the request.
  const loose = error as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = loose?.cause?.code ?? loose?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]+$/.test(code)) return `request failed (${code})`;
  const name = error instanceof Error && /^\w+$/.test(error.name) ? error.name : 'Error';
  return `request failed (${name})`;
}

export const isOk = (response: HttpJsonResponse): boolean => response.status >= 200 && response.status <= 299;

/** `HTTP 503`, or with `context` `HTTP 503 from the asset directory`. */
export function httpStatusError(source: SourceName, response: HttpJsonResponse, context?: string): SourceFetchError {
  return new SourceFetchError(source, `HTTP ${response.status}${context ? ` ${context}` : ''}`, response.status);
}

/** Throws `httpStatusError` unless the status is 2xx. */
export function requireOk(source: SourceName, response: HttpJsonResponse, context?: string): void {
  if (!isOk(response)) throw httpStatusError(source, response, context);
}

/** The parsed body; an empty or unparsable one (the client hands both over as `undefined`) fails the source. */
export function requireJson(source: SourceName, response: HttpJsonResponse): unknown {
  if (response.body === undefined) throw new SourceFetchError(source, 'the response is not JSON', response.status);
  return response.body;
}

/** `price` rounded to `decimals` places, or undefined when that is not a positive finite number (nothing to serve). */
export function roundPrice(price: number, decimals: number): number | undefined {
  const value = roundTo(price, decimals);
  return isServable(value) ? value : undefined;
}

/** The quote of `pair` at `price` rounded to `decimals`, or undefined when the rounded price is unusable. */
export function roundedQuote(pair: string, price: number, decimals: number): Quote | undefined {
  const value = roundPrice(price, decimals);
  return value === undefined ? undefined : { pair, price: value };
}

/**
 * Upstream text bound for a notification: one printable ASCII line of at most `maxLength` characters, with
 * `secret` (the configured key, which some APIs echo back) masked before anything is cut.
 */
export function printableUpstreamText(text: string, maxLength: number, secret?: string): string {
  const masked = secret ? text.split(secret).join('***') : text;
  return masked.replace(/[^\x20-\x7e]/g, '?').slice(0, maxLength);
}

/** `: <printable message>` to append to a SourceFetchError message, or '' when the upstream gave no text. */
export function upstreamDetail(message: unknown, maxLength: number, secret?: string): string {
  return typeof message === 'string' && message !== '' ? `: ${printableUpstreamText(message, maxLength, secret)}` : '';
}

/**
 * One connector's per-coin warnings: a configured coin missing from an answer, a price that is not a positive finite
 * number, a row carrying another symbol. Such a coin is dropped and the rest of the answer is served (issue 17); only
 * a whole answer of the wrong shape fails the source. Each text is raised on every cycle it holds, as the original
 * raises it: its notifier has no throttling and no deduplication (notes E.3), and issue 17 asks for its cadence.
 */
export function coinWarnings(): (ctx: SourceContext, messages: readonly string[]) => void {
  return (ctx, messages) => {
    for (const message of new Set(messages)) ctx.warn(message);
  };
}

/** A symbol (or other short value) an upstream returned, fit to quote in a warning: `undefined` stays `undefined`. */
export function upstreamValue(value: unknown): string {
  return printableUpstreamText(typeof value === 'string' ? value : String(value), 40);
}
