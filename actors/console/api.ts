// The console service's API for its edge (docs/DESIGN.md rule 5): one JSON-RPC body in, its answer out. Each method runs
// over the node client, whose requests follow the rpc-session machine (which node next, when to stop), applied as
// data per request (rule 3: no live actor per call on a proxy answering thousands a second), in the node order the
// `console.nodes` actor keeps; a caller that goes away cancels the node requests in flight.

import type { Cancellation } from '../../src/cancellation.js';
import type { ConsoleConfig } from '../../src/console/config.js';
import { answerBody, type BodyAnswer } from '../../src/console/jsonrpc.js';
import { consoleMethods } from '../../src/console/methods.js';
import type { AdamantNodeClient } from '../../src/console/node-api.js';
import type { NodeHealthContext } from '../../machines/console/node-health.machine.js';
import type { Runtime } from '../runtime.js';
import { nodeClient } from './ordered-node-client.js';

export const CONSOLE_NODES_ID = 'console.nodes';

export interface ConsoleApi {
  /**
   * Parses and runs one HTTP body of JSON-RPC requests. `describeError` turns a method's failure into its message,
   * with the body's secrets removed (called only when a method failed).
   */
  answer(body: string, cancellation: Cancellation, describeError: (error: unknown, body: unknown) => string): Promise<BodyAnswer>;
}

/** The node client of a running console: ordered by the health machine, which is told about failures. */
function consoleNodeClient(runtime: Runtime, config: ConsoleConfig): AdamantNodeClient {
  return nodeClient({
    order: () => {
      const snapshot = runtime.registry.lookup(CONSOLE_NODES_ID)?.getSnapshot() as { context?: NodeHealthContext } | undefined;
      return snapshot?.context?.order ?? config.nodes;
    },
    onNodeFailure: (url) => void runtime.registry.send(CONSOLE_NODES_ID, { type: 'node.failed', url }),
  });
}

export function consoleApi(runtime: Runtime, config: ConsoleConfig): ConsoleApi {
  const methods = consoleMethods({ node: consoleNodeClient(runtime, config), config, clock: runtime.clock });
  return { answer: (body, cancellation, describeError) => answerBody(body, methods, cancellation, describeError) };
}
