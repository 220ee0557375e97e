// What the console's HTTP client (storage/http-client.ts) promises its callers, apart from how it talks HTTP: its
// options, an answer, and the one failure class whose `written` drives the console's failover (a POST goes to another
// node only when it certainly never reached the first). Its own module so that another client can keep the same
// contract: the console bench runs the same server on both the client that ships and its alternative
// (bench/support/*-http-client.ts, swapped in for storage/http-client.js by a module hook).

import type { Clock } from '../src/clock.js';

/** The largest answer head accepted (status line and headers). */
export const MAX_HEAD_BYTES = 64 * 1024;

export interface HttpClientOptions {
  readonly maxSockets: number;
  readonly idleTimeoutMs: number;
  readonly maxResponseBytes: number;
  /** Extra trusted certificates for https origins (tests); the system's CAs otherwise. */
  readonly ca?: string | Buffer;
  /** The clock request deadlines run on (docs/DESIGN.md rule 2); the system clock when absent. Idle closes use the connections' own timers. */
  readonly clock?: Clock;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: Buffer;
}

/** Why an exchange failed at the transport; `written` says whether any of the request may have reached the node. */
export class HttpExchangeError extends Error {
  override readonly name = 'HttpExchangeError';
  constructor(
    message: string,
    readonly written: boolean,
  ) {
    super(message);
  }
}
