// The console's HTTP client for ADAMANT nodes (spec B; notes C.3). Which node each request asks, and when it gives
// up, is the rpc-session machine's decision (machines/console/rpc-session.machine.ts): GETs fail over across the
// nodes in the health order, a POST moves on only when the failed node certainly never received it. This module
// performs the attempts and classifies their failures for it.

import { initialTransition, transition } from 'xstate';
import { AbortedError } from '../../src/errors.js';
import { rpcSessionMachine } from '../../machines/console/rpc-session.machine.js';

export { GET_ATTEMPTS } from '../../machines/console/rpc-session.machine.js';
export const DEFAULT_NODE_TIMEOUT_MS = 10_000;
/** A node's answer larger than this is refused (a chat history page is well below it). */
export const MAX_NODE_RESPONSE_BYTES = 16 * 1024 * 1024;

/** No node answered (every attempt failed at the transport or with a 5xx). */
export class NodeUnavailableError extends Error {
  override readonly name = 'NodeUnavailableError';
  constructor(what: string, reason: string) {
    super(`No ADAMANT node answered ${what}: ${reason}`);
  }
}

/** A POST reached a node that did not answer: the transaction may or may not have been accepted. */
export class NodeOutcomeUnknownError extends Error {
  override readonly name = 'NodeOutcomeUnknownError';
  constructor(what: string, reason: string) {
    super(`The ADAMANT node did not confirm ${what} (${reason}); it may or may not have been accepted: check before sending again`);
  }
}

export interface NodeClientOptions {
  /** The nodes in the order to try them (from the health machine); read per request. */
  readonly order: () => readonly string[];
  /** Told when a node failed a request, so the health check can run again. */
  readonly onNodeFailure?: (url: string) => void;
  readonly timeoutMs?: number;
}

export interface AdamantNodeClient {
  /** GET `<node>/api/<path>?<query>`; resolves with the parsed body of the first node that answers. */
  get<T = unknown>(path: string, query: URLSearchParams | undefined, signal: AbortSignal): Promise<T>;
  /** POST `<node>/api/<path>` with a JSON body. */
  post<T = unknown>(path: string, body: unknown, signal: AbortSignal): Promise<T>;
}

/** Connection failures where the request certainly never reached the node. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

class TransportError extends Error {
  constructor(
    message: string,
    readonly neverSent: boolean,
  ) {
    super(message);
  }
}

export function nodeClient(options: NodeClientOptions): AdamantNodeClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;

  const request = async (url: string, init: RequestInit, signal: AbortSignal): Promise<unknown> => {
    const timeout = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.any([signal, timeout]) });
    } catch (error) {
      if (signal.aborted) throw new AbortedError();
      const code = ((error as { cause?: { code?: string } }).cause?.code ?? '') as string;
      throw new TransportError(timeout.aborted ? `timed out after ${timeoutMs} ms` : code || (error as Error).message, NEVER_SENT.has(code));
    }
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_NODE_RESPONSE_BYTES) throw new TransportError(`answer of ${length} bytes is too large`, false);
    const text = await response.text();
    if (text.length > MAX_NODE_RESPONSE_BYTES) throw new TransportError('answer is too large', false);
    // ADAMANT nodes answer errors as JSON too (`{success:false, error}`) with 4xx; 5xx and non-JSON mean a sick node.
    if (response.status >= 500) throw new TransportError(`HTTP ${response.status}`, false);
    try {
      return JSON.parse(text);
    } catch {
      throw new TransportError(`HTTP ${response.status} with a body that is not JSON`, false);
    }
  };

  const hostOf = (url: string) => {
    try {
      return new URL(url).host;
    } catch {
      return 'node';
    }
  };

  /** Runs one request through the rpc-session machine: `attempt` asks one node; the machine picks the next. */
  const session = async (method: 'GET' | 'POST', path: string, attempt: (node: string) => Promise<unknown>, signal: AbortSignal): Promise<unknown> => {
    let [snapshot] = initialTransition(rpcSessionMachine, { method, nodes: options.order() });
    while (snapshot.value === 'requesting') {
      const node = snapshot.context.nodes[snapshot.context.attempt]!;
      try {
        const answer = await attempt(node);
        [snapshot] = transition(rpcSessionMachine, snapshot, { type: 'node.answered' });
        return answer;
      } catch (error) {
        if (!(error instanceof TransportError)) throw error;
        options.onNodeFailure?.(node);
        [snapshot] = transition(rpcSessionMachine, snapshot, { type: 'node.failed', reason: `${hostOf(node)}: ${error.message}`, neverSent: error.neverSent });
      }
    }
    const last = snapshot.context.failures.at(-1) ?? 'no node configured';
    if (snapshot.value === 'outcomeUnknown') throw new NodeOutcomeUnknownError(path, last);
    throw new NodeUnavailableError(path, last);
  };

  return {
    async get<T>(path: string, query: URLSearchParams | undefined, signal: AbortSignal): Promise<T> {
      const suffix = query && [...query].length > 0 ? `?${query.toString()}` : '';
      return (await session('GET', path, (node) => request(`${node}/api/${path}${suffix}`, { method: 'GET' }, signal), signal)) as T;
    },
    async post<T>(path: string, body: unknown, signal: AbortSignal): Promise<T> {
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
      return (await session('POST', path, (node) => request(`${node}/api/${path}`, init, signal), signal)) as T;
    },
  };
}
