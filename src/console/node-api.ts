// What the console's methods need of the ADAMANT node pool (actors/console/ordered-node-client.ts implements it over
// HTTP; tests and the benchmark pass stubs).

import type { Cancellation } from '../cancellation.js';

export interface AdamantNodeClient {
  /** GET `<node>/api/<path>?<query>`; resolves with the parsed body of the first node that answers. */
  get<T = unknown>(path: string, query: URLSearchParams | undefined, signal: Cancellation): Promise<T>;
  /** POST `<node>/api/<path>` with a JSON body. */
  post<T = unknown>(path: string, body: unknown, signal: Cancellation): Promise<T>;
}
