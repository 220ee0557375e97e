// The contract every upstream rate connector implements (notes/rates.md D).
// Connectors are pure of transport: the HTTP client is injected (see actors/rates/http-json.ts),
// so the same code runs against the real APIs, fake servers on 127.0.0.1, and unit-test stubs.

import type { Quote, SourceName } from '../types.js';

export interface HttpJsonResponse {
  readonly status: number;
  /** Parsed JSON body, or undefined when the body was empty or not JSON. */
  readonly body: unknown;
}

export interface HttpJsonClient {
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
  /** One cycle's quotes, `COIN/USD` (MOEX also `X/RUB`). Throws SourceFetchError when the source failed. */
  fetch(ctx: SourceContext): Promise<Quote[]>;
}

/** A source failed this cycle. `message` is safe to notify: it never contains keys or credentialed URLs. */
export class SourceFetchError extends Error {
  static readonly code = 'SourceFetchError';
  override readonly name = 'SourceFetchError';
  constructor(
    readonly source: SourceName,
    message: string,
    readonly httpStatus?: number,
    /** The source must not be retried for the rest of the run (e.g. Binance HTTP 451). */
    readonly permanent = false,
  ) {
    super(message);
  }
}
