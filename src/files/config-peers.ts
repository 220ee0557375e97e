// The configured peer nodes and peer-discovery addresses of the files service (docs/notes/files-node.md B.4; specs/
// files-node.md §8): multiaddrs, the peer id each node entry names, and the checks of `nodes` and `peerDiscovery`.

import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr } from '@multiformats/multiaddr';
import { base32 } from 'multiformats/bases/base32';
import { base36 } from 'multiformats/bases/base36';
import { isRecord, textAt } from './config-accessors.js';

/** One entry of `nodes`: a configured node of the cluster. */
export interface FilesNode {
  readonly name: string;
  readonly multiAddr: string;
  /** The peer id of the last `/p2p/` component, in its canonical (base58btc) text form. */
  readonly peerId: string;
}

/**
 * CIDv1 peer ids (`bafz…`, `k51…`). @libp2p/peer-id types its parameter against its own multiformats copy;
 * a decoder only needs `decode(text)`, so the cast is structural.
 */
const PEER_ID_DECODER = base32.decoder.or(base36.decoder) as unknown as Parameters<typeof peerIdFromString>[1];

/** Canonical text of a peer id, or undefined when `text` is not one. */
export function canonicalPeerId(text: string): string | undefined {
  try {
    const first = text[0];
    return peerIdFromString(text, first === '1' || first === 'Q' ? undefined : PEER_ID_DECODER).toString();
  } catch {
    return undefined;
  }
}

function multiaddrProblem(text: string): string | undefined {
  try {
    multiaddr(text);
    return undefined;
  } catch (error) {
    return `is not a valid multiaddr (${(error as Error).message})`;
  }
}

/**
 * The peer id a node entry names: the value of its LAST `/p2p/` component (so `/p2p-circuit` relay addresses
 * resolve to the target), which must also be the final component: "a full multiaddr ending in a peer-id
 * component" (spec §8). A bare `/p2p/<id>` is not full: it cannot be dialled without peer routing, which
 * this node does not have.
 */
export function peerIdOfNodeMultiaddr(text: string): { peerId: string } | { error: string } {
  let components: ReturnType<ReturnType<typeof multiaddr>['getComponents']>;
  try {
    components = multiaddr(text).getComponents();
  } catch (error) {
    return { error: `is not a valid multiaddr (${(error as Error).message})` };
  }
  const last = components[components.length - 1];
  if (last === undefined || last.name !== 'p2p' || last.value === undefined) {
    return { error: 'must be a full multiaddr ending in /p2p/<peer id>, e.g. /ip4/203.0.113.5/tcp/4001/p2p/12D3KooW…' };
  }
  if (components.length < 2) {
    return { error: 'must be a full multiaddr: a dialable address before /p2p/<peer id>, e.g. /ip4/203.0.113.5/tcp/4001/p2p/12D3KooW…' };
  }
  const peerId = canonicalPeerId(last.value);
  if (peerId === undefined) return { error: 'ends in /p2p/ with a value that is not a valid peer id' };
  return { peerId };
}

/**
 * The `nodes` entries with their peer ids; each entry needs a name and a full multiaddr, and each peer may be
 * listed once. An entry with a problem is left out (the problem is reported).
 */
export function checkNodes(value: unknown, problems: string[], warnings: string[]): FilesNode[] {
  const nodes: FilesNode[] = [];
  if (!Array.isArray(value)) return nodes;
  const byPeer = new Map<string, number>();
  const byName = new Map<string, number>();
  value.forEach((entry, index) => {
    if (!isRecord(entry)) return; // the schema reports it
    const path = `nodes[${index}]`;
    if (entry.name === undefined) problems.push(`${path}.name: required (a non-empty label used in logs)`);
    if (entry.multiAddr === undefined) problems.push(`${path}.multiAddr: required (a full multiaddr ending in /p2p/<peer id>)`);
    const name = textAt(entry.name);
    const address = textAt(entry.multiAddr);
    if (name !== undefined) {
      const earlier = byName.get(name);
      if (earlier !== undefined) warnings.push(`${path}.name: same name as nodes[${earlier}]; logs will not tell them apart`);
      else byName.set(name, index);
    }
    if (address === undefined) return;
    const resolved = peerIdOfNodeMultiaddr(address);
    if ('error' in resolved) {
      problems.push(`${path}.multiAddr: ${resolved.error}`);
      return;
    }
    const earlier = byPeer.get(resolved.peerId);
    if (earlier !== undefined) {
      problems.push(`${path}.multiAddr: resolves to the same peer id as nodes[${earlier}].multiAddr; each node may be listed once`);
      return;
    }
    byPeer.set(resolved.peerId, index);
    if (name !== undefined) nodes.push({ name, multiAddr: address, peerId: resolved.peerId });
  });
  return nodes;
}

/** Each non-empty entry of a multiaddr list (`peerDiscovery.bootstrap`, `.listen`) must parse. */
export function checkMultiaddrList(path: string, value: unknown, problems: string[]): void {
  if (!Array.isArray(value)) return;
  value.forEach((entry, index) => {
    if (typeof entry !== 'string' || entry === '') return; // the schema reports it
    const problem = multiaddrProblem(entry);
    if (problem !== undefined) problems.push(`${path}[${index}]: ${problem}`);
  });
}
