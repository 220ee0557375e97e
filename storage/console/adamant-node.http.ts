// One exchange with one ADAMANT node over HTTP(S) (spec B; notes C.3), and what its failure means for the session
// that asked: a NodeTransportError is a failure the next node may not have (a transport failure, a 5xx, a body that
// is not JSON), and says whether the node certainly never received the request. Which node to ask, and whether to
// ask another, is the rpc-session machine's decision, run by actors/console/ordered-node-client.ts.

import { HttpClient } from '../http-client.js';
import { HttpExchangeError, type HttpAnswer } from '../http-exchange.js';
import type { Cancellation } from '../../src/cancellation.js';

/** A node's answer larger than this is refused (a chat history page is well below it). */
export const MAX_NODE_RESPONSE_BYTES = 16 * 1024 * 1024;
/** An unused connection to a node is closed after this: below the 5 s keep-alive of Node servers (ADAMANT nodes). */
const IDLE_TIMEOUT_MS = 4_000;

/** One node failed the request: another node may answer it (a POST only when `neverSent`). */
export class NodeTransportError extends Error {
  override readonly name = 'NodeTransportError';
  constructor(
    message: string,
    readonly neverSent: boolean,
  ) {
    super(message);
  }
}

/**
 * One keep-alive client shared by every node client of the process (the health checks make a client per check).
 * Idle connections do not keep the process alive; the per-origin limit bounds what a burst of requests opens.
 */
const HTTP = new HttpClient({ maxSockets: 128, idleTimeoutMs: IDLE_TIMEOUT_MS, maxResponseBytes: MAX_NODE_RESPONSE_BYTES });

/** Asks `url` once: the parsed JSON body, or a NodeTransportError (or the caller's abort). */
export async function askNode(url: string, method: 'GET' | 'POST', body: string | undefined, signal: Cancellation, timeoutMs: number): Promise<unknown> {
  let answer: HttpAnswer;
  try {
    answer = await HTTP.request(method, url, body, signal, timeoutMs);
  } catch (error) {
    throw error instanceof HttpExchangeError ? new NodeTransportError(error.message, !error.written) : error;
  }
  const { status } = answer;
  const text = answer.body.toString('utf8');
  // ADAMANT nodes answer errors as JSON too (`{success:false, error}`) with 4xx; 5xx and non-JSON mean a sick node.
  if (status >= 500) throw new NodeTransportError(`HTTP ${status}`, false);
  try {
    return JSON.parse(text);
  } catch {
    throw new NodeTransportError(`HTTP ${status} with a body that is not JSON`, false);
  }
}
