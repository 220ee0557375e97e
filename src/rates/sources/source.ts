// The contract every upstream rate connector implements (docs/notes/rates.md D).
// Connectors are pure of transport: the HTTP client is injected (see storage/rates/http-json.fetch.ts),
// so the same code runs against the real APIs, fake servers on 127.0.0.1, and unit-test stubs.

import type { Quote, SourceName } from '../types.js';

export interface HttpJsonResponse {
  readonly status: number;
  /** Parsed JSON body, or undefined when the body was empty or not JSON. */
  readonly body: unknown;
}

export interface HttpJsonClient {
  /**
   * GET `url` and parse the body as JSON. Any HTTP status resolves: judging it is the connector's job.
   * Rejects only with a transport failure, one class per kind, so callers match on the class, never on text:
   * - `UpstreamTimeoutError`: no complete answer within `timeoutMs` (headers and body together);
   * - `UpstreamRequestError`: `signal` aborted, the connection failed (refused, reset, DNS) or broke mid-body,
   *   or the body exceeded the client's size bound.
   * Neither message ever contains the URL: query strings carry access keys (notes E.3).
   */
  getJson(
    url: string,
    options: { headers?: Record<string, string>; timeoutMs: number; signal: AbortSignal },
  ): Promise<HttpJsonResponse>;
}

export interface SourceContext {
  readonly http: HttpJsonClient;
  readonly signal: AbortSignal;
  /** Operator-facing warning (logged and sent to notification channels). Never pass secrets. */
  readonly warn: (message: string) => void;
}

export interface SourceConnector {
  readonly name: SourceName;
  /** Voting weight in group selection (configured `weight`, default 10). */
  readonly weight: number;
  /** Coins this source is configured to quote against USD (before `mappings`), for the coverage map. */
  advertisedCoins(): string[];
  /** One-time setup before the first cycle (coin-id discovery). Throws SourceFetchError on failure. */
  discover?(ctx: SourceContext): Promise<void>;
  /**
   * One cycle's quotes, `COIN/USD` (MOEX also `X/RUB`). Throws SourceFetchError when the source failed: a transport
   * failure, an HTTP error, or an answer that is not the expected shape as a whole. A single coin the answer lacks,
   * prices badly (not a positive finite number) or labels with another symbol is dropped with a `ctx.warn` naming
   * the source and the coin, and the rest is returned (issue 17; `coinWarnings` in upstream-request.ts).
   */
  fetch(ctx: SourceContext): Promise<Quote[]>;
}

/** A source failed this cycle. `message` is safe to notify: it never contains keys or credentialed URLs. */
export class SourceFetchError extends Error {
  override readonly name = 'SourceFetchError';
  constructor(
    readonly source: SourceName,
    message: string,
    readonly httpStatus?: number,
    /** The source must not be retried for the rest of the run (e.g. Binance HTTP 451). */
    readonly permanent = false,
    /** The level its `Unable to fetch valid data` notice goes out at: the original sends a few failures as errors. */
    readonly severity: 'warn' | 'error' = 'warn',
  ) {
    super(message);
  }
}

/** An HttpJsonClient gave up waiting: no complete answer within `timeoutMs`. */
export class UpstreamTimeoutError extends Error {
  override readonly name = 'UpstreamTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/** Why an HttpJsonClient request produced no usable answer, short of a timeout. */
export type UpstreamRequestReason =
  /** The caller's signal fired. */
  | 'aborted'
  /** Refused, reset, unresolvable host, or the connection broke while the body was arriving. */
  | 'connection'
  /** The body grew past the client's bound (`limitBytes`). */
  | 'body-too-large';

/**
 * An HttpJsonClient request failed in transport. The message is built from the fields alone, never from the
 * URL or a lower layer's text, so it is safe to forward to operators as is.
 */
export class UpstreamRequestError extends Error {
  override readonly name = 'UpstreamRequestError';
  /** The system error code (`ECONNREFUSED`, `ECONNRESET`, `ENOTFOUND`…) when one was given. */
  readonly code: string | undefined;
  readonly limitBytes: number | undefined;
  constructor(
    readonly reason: UpstreamRequestReason,
    details: { code?: unknown; limitBytes?: number } = {},
  ) {
    // Only an identifier-shaped code is kept: anything else could be free text quoting the request.
    const code = typeof details.code === 'string' && /^[A-Z0-9_]+$/.test(details.code) ? details.code : undefined;
    super(
      reason === 'aborted' ? 'request aborted'
      : reason === 'body-too-large' ? (details.limitBytes === undefined ? 'response body too large' : `response body larger than ${details.limitBytes} bytes`)
      : `request failed (${code ?? 'connection error'})`,
    );
    this.code = code;
    this.limitBytes = details.limitBytes;
  }
}
