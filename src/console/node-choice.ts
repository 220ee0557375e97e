// Which ADAMANT node to ask (notes C.3): the original client health-checks the configured nodes through
// GET /api/node/status and prefers the highest `network.height`, grouping heights in buckets of 5 so nodes a block
// or two apart count as level (and the list order decides between them). Pure.

export interface NodeHealth {
  readonly url: string;
  /** The node's network height, or null when it did not answer a usable status. */
  readonly height: number | null;
  /** Round-trip time of the status request in ms (null when it failed). */
  readonly latencyMs: number | null;
}

/** Heights within the same bucket of this many blocks are treated as equal. */
export const HEIGHT_BUCKET = 5;

/**
 * The nodes in the order to try them: answering nodes by height bucket (highest first), then by configuration
 * order; nodes that did not answer last, still in configuration order (a failed check is no proof it is down).
 */
export function orderNodes(health: readonly NodeHealth[]): string[] {
  const indexed = health.map((node, index) => ({ ...node, index }));
  const up = indexed.filter((node) => node.height !== null);
  const down = indexed.filter((node) => node.height === null);
  up.sort((a, b) => Math.floor(b.height! / HEIGHT_BUCKET) - Math.floor(a.height! / HEIGHT_BUCKET) || a.index - b.index);
  return [...up, ...down].map((node) => node.url);
}
