// The console's client for the pool of ADAMANT nodes (spec B; notes C.3). Which node each request asks, and when it
// gives up, is the rpc-session machine's decision (machines/console/rpc-session.machine.ts): GETs fail over across
// the nodes in the health order, a POST moves on only when the failed node certainly never received it. This module
// runs the machine over the attempts; one attempt, and the classification of its failure, is
// storage/console/adamant-node.http.ts.

import { initialTransition, transition } from 'xstate';
import { askNode, NodeTransportError } from '../../storage/console/adamant-node.http.js';
import { queryString } from '../../src/console/query.js';
import type { Cancellation } from '../../src/cancellation.js';
import type { AdamantNodeClient } from '../../src/console/node-api.js';

export type { AdamantNodeClient };
import { rpcSessionMachine, type RpcSessionSnapshot } from '../../machines/console/rpc-session.machine.js';

export { GET_ATTEMPTS } from '../../machines/console/rpc-session.machine.js';
export const DEFAULT_NODE_TIMEOUT_MS = 10_000;

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

export function nodeClient(options: NodeClientOptions): AdamantNodeClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;


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
        if (!(error instanceof NodeTransportError)) throw error;
        options.onNodeFailure?.(node);
        [snapshot] = transition(rpcSessionMachine, snapshot, { type: 'node.failed', reason: `${hostOf(node)}: ${error.message}`, neverSent: error.neverSent });
      }
    }
    const last = snapshot.context.failures.at(-1) ?? 'no node configured';
    if (snapshot.value === 'outcomeUnknown') throw new NodeOutcomeUnknownError(path, last);
    throw new NodeUnavailableError(path, last);
  };

  return {
    async get<T>(path: string, query: URLSearchParams | undefined, signal: Cancellation): Promise<T> {
      const suffix = query && query.size > 0 ? `?${queryString(query)}` : '';
      return (await session('GET', path, (node) => askNode(`${node}/api/${path}${suffix}`, 'GET', undefined, signal, timeoutMs))) as T;
    },
    async post<T>(path: string, body: unknown, signal: Cancellation): Promise<T> {
      const json = JSON.stringify(body);
      return (await session('POST', path, (node) => askNode(`${node}/api/${path}`, 'POST', json, signal, timeoutMs))) as T;
    },
  };
}
