// The console's HTTP client for ADAMANT nodes (spec B; notes C.3). Which node each request asks, and when it gives
// up, is the rpc-session machine's decision (machines/console/rpc-session.machine.ts): GETs fail over across the
// nodes in the health order, a POST moves on only when the failed node certainly never received it. This module
// performs the attempts and classifies their failures for it.

import http from 'node:http';
import https from 'node:https';
import { initialTransition, transition } from 'xstate';
import { AbortedError } from '../../src/errors.js';
import { queryString } from '../../src/console/query.js';
import { rpcSessionMachine, type RpcSessionSnapshot } from '../../machines/console/rpc-session.machine.js';

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

/**
 * Keep-alive agents shared by every client of the process (the health checks make a client per check). Idle
 * sockets do not keep the process alive; the per-origin limit bounds what a burst of requests opens.
 */
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 128, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 128, scheduling: 'lifo' }),
} as const;

/**
 * What waits on each caller's signal. A JSON-RPC batch runs all its calls under the one signal of its HTTP request,
 * so one 'abort' listener per node call put 11 or more on it and Node printed MaxListenersExceededWarning (a batch
 * may hold 100 calls, a vote resolves up to 33 names). Each signal gets one listener, added with its first waiting
 * exchange and removed with its last; that listener runs the callbacks of the exchanges still waiting.
 */
const waiting = new WeakMap<AbortSignal, { readonly callbacks: Set<() => void>; readonly listener: () => void }>();

/** Runs `callback` when `signal` aborts, through the signal's one listener; the returned function cancels it. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  if (signal.aborted) {
    // An aborted signal fires no more events: the callback runs on its own, unless cancelled first.
    let live = true;
    queueMicrotask(() => live && callback());
    return () => void (live = false);
  }
  let entry = waiting.get(signal);
  if (!entry) {
    const callbacks = new Set<() => void>();
    const listener = () => {
      waiting.delete(signal);
      for (const waiter of [...callbacks]) waiter();
    };
    entry = { callbacks, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const { callbacks, listener } = entry;
  const wrapped = () => callback();
  callbacks.add(wrapped);
  return () => {
    if (!callbacks.delete(wrapped) || callbacks.size > 0 || waiting.get(signal)?.callbacks !== callbacks) return;
    waiting.delete(signal);
    signal.removeEventListener('abort', listener);
  };
}

interface NodeAnswer {
  readonly status: number;
  readonly text: string;
}

/**
 * One HTTP exchange with a node over `node:http(s)` (a third of the cost of `fetch` per request here, which
 * shows at the console's request rates). Rejects with a TransportError for every failure of the node or the
 * network, and with AbortedError when the caller went away.
 */
function exchange(url: string, method: 'GET' | 'POST', body: string | undefined, signal: AbortSignal, timeoutMs: number): Promise<NodeAnswer> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new AbortedError());
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return reject(new TransportError(`'${url}' is not a URL`, true));
    }
    const agent = AGENTS[target.protocol as keyof typeof AGENTS];
    if (!agent) return reject(new TransportError(`unsupported protocol ${target.protocol}`, true));
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    const client = target.protocol === 'https:' ? https : http;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let stopWaiting = () => {};
    const finish = (error: Error | undefined, answer?: NodeAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stopWaiting();
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(answer!);
    };
    const req = client.request(target, { method, agent, headers }, (response) => {
      const length = Number(response.headers['content-length'] ?? 0);
      if (length > MAX_NODE_RESPONSE_BYTES) return finish(new TransportError(`answer of ${length} bytes is too large`, false));
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_NODE_RESPONSE_BYTES) finish(new TransportError('answer is too large', false));
        else chunks.push(chunk);
      });
      response.on('end', () => finish(undefined, { status: response.statusCode ?? 0, text: Buffer.concat(chunks, received).toString('utf8') }));
      response.on('error', (error) => finish(new TransportError(error.message, false)));
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      const code = error.code ?? '';
      finish(new TransportError(code || error.message, NEVER_SENT.has(code)));
    });
    timer = setTimeout(() => finish(new TransportError(`timed out after ${timeoutMs} ms`, false)), timeoutMs);
    stopWaiting = onAbort(signal, () => finish(new AbortedError()));
    req.end(body);
  });
}

export function nodeClient(options: NodeClientOptions): AdamantNodeClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;

  const request = async (url: string, method: 'GET' | 'POST', body: string | undefined, signal: AbortSignal): Promise<unknown> => {
    const { status, text } = await exchange(url, method, body, signal, timeoutMs);
    // ADAMANT nodes answer errors as JSON too (`{success:false, error}`) with 4xx; 5xx and non-JSON mean a sick node.
    if (status >= 500) throw new TransportError(`HTTP ${status}`, false);
    try {
      return JSON.parse(text);
    } catch {
      throw new TransportError(`HTTP ${status} with a body that is not JSON`, false);
    }
  };

  const hostOf = (url: string) => {
    try {
      return new URL(url).host;
    } catch {
      return 'node';
    }
  };

  // A session's first snapshot depends only on the method and the node order, which changes only when the health
  // machine reorders: computed once per order (snapshots are immutable; each transition makes a new one).
  let initial: { nodes: readonly string[]; byMethod: Partial<Record<'GET' | 'POST', RpcSessionSnapshot>> } | undefined;
  const firstSnapshot = (method: 'GET' | 'POST'): RpcSessionSnapshot => {
    const nodes = options.order();
    if (initial?.nodes !== nodes) initial = { nodes, byMethod: {} };
    return (initial.byMethod[method] ??= initialTransition(rpcSessionMachine, { method, nodes })[0]);
  };

  /**
   * Runs one request through the rpc-session machine: `attempt` asks one node; the machine picks the next. An
   * answer ends the session (`node.answered` leads to a final state nothing reads, so it is not computed).
   */
  const session = async (method: 'GET' | 'POST', path: string, attempt: (node: string) => Promise<unknown>): Promise<unknown> => {
    let snapshot = firstSnapshot(method);
    while (snapshot.value === 'requesting') {
      const node = snapshot.context.nodes[snapshot.context.attempt]!;
      try {
        return await attempt(node);
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
      const suffix = query && [...query].length > 0 ? `?${queryString(query)}` : '';
      return (await session('GET', path, (node) => request(`${node}/api/${path}${suffix}`, 'GET', undefined, signal))) as T;
    },
    async post<T>(path: string, body: unknown, signal: AbortSignal): Promise<T> {
      const json = JSON.stringify(body);
      return (await session('POST', path, (node) => request(`${node}/api/${path}`, 'POST', json, signal))) as T;
    },
  };
}
