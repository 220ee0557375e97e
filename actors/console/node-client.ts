// The console's HTTP client for ADAMANT nodes (spec B; notes C.3): GETs fail over across the nodes in the
// health order (up to GET_ATTEMPTS nodes, as the original client retried 3× while rotating nodes); a POST goes to
// one node and is tried on the next only when the first certainly never received it (the connection was refused
// or the name did not resolve): a transaction posted twice is not harmful, but a POST whose fate is unknown is
// reported as such, never repeated blindly.

import { AbortedError } from '../../src/errors.js';

/** GETs try at most this many nodes (the original: 3 attempts, rotating nodes). */
export const GET_ATTEMPTS = 3;
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

  return {
    async get<T>(path: string, query: URLSearchParams | undefined, signal: AbortSignal): Promise<T> {
      const nodes = options.order();
      const suffix = query && [...query].length > 0 ? `?${query.toString()}` : '';
      let last = 'no node configured';
      for (const node of nodes.slice(0, GET_ATTEMPTS)) {
        try {
          return (await request(`${node}/api/${path}${suffix}`, { method: 'GET' }, signal)) as T;
        } catch (error) {
          if (!(error instanceof TransportError)) throw error;
          last = `${hostOf(node)}: ${error.message}`;
          options.onNodeFailure?.(node);
        }
      }
      throw new NodeUnavailableError(path, last);
    },
    async post<T>(path: string, body: unknown, signal: AbortSignal): Promise<T> {
      const nodes = options.order();
      let last = 'no node configured';
      for (const node of nodes) {
        try {
          return (await request(`${node}/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }, signal)) as T;
        } catch (error) {
          if (!(error instanceof TransportError)) throw error;
          options.onNodeFailure?.(node);
          if (!error.neverSent) throw new NodeOutcomeUnknownError(path, `${hostOf(node)}: ${error.message}`);
          last = `${hostOf(node)}: ${error.message}`;
        }
      }
      throw new NodeUnavailableError(path, last);
    },
  };
}
