// Peer-network operator routes (docs/specs/files-node.md §4.4, §5; docs/notes/files-node.md A.5, B.8, C13): all behind
// the admin key, answered by the `files.p2p` actor. Payloads are the original's; statuses are real ones:
// 400 invalid or missing peer id / multiaddr, 408 a dial or ping ran out of time, 502 a dial or ping failed,
// 500 anything else (the shared table in files.http.ts).
//
// Served under /api/p2p (the spec's name) and /api/libp2p (the original's prefix, for existing tooling, notes A.1).
// GET /api/debug/autopeering is mounted only with `enableDebugApi`: unmounted, the not-found handler answers
// 404 even with the key; mounted, it still needs the key (spec §5 table).

import { multiaddr } from '@multiformats/multiaddr';
import type { AskFor } from '../../actors/ask.js';
import type { P2pEvent } from '../../actors/files/p2p.actor.js';
import { canonicalPeerId } from '../../src/files/config-peers.js';
import { PEERING_DEFAULTS, passBoundMs } from '../../src/files/peering.js';
import type { HttpRequest } from '../server.js';
import { adminJson, FilesHttpError, type FilesRouteContext } from './files.http.js';

export const P2P_PREFIXES = ['/api/p2p', '/api/libp2p'] as const;

/** The ask of a dial or ping outlives the actor's own bound, so the actor's 408 is what the client sees. */
const PEER_ASK_MARGIN_MS = 2_000;

/** The actor's failure kinds (src/files/peering.ts), matched by name, as statuses (notes C13). */
const STATUS_BY_NAME: Readonly<Record<string, number>> = {
  InvalidPeerInputError: 400,
  PeerTimeoutError: 408,
  PeerDialError: 502,
};

function asHttpError(error: unknown): never {
  const status = STATUS_BY_NAME[(error as Error | undefined)?.name ?? ''];
  if (status !== undefined) throw new FilesHttpError(status, (error as Error).message);
  throw error;
}

interface PeerQuery {
  readonly peerId?: string;
  readonly multiAddr?: string;
}

/**
 * `peerId` and `multiAddr` from the query string, URL-decoded; an empty value counts as absent. A value that
 * does not parse is refused here (400) before the actor is asked.
 */
function peerQuery(request: HttpRequest): PeerQuery {
  const params = new URLSearchParams(request.query);
  const peerId = params.get('peerId') || undefined;
  const multiAddr = params.get('multiAddr') || undefined;
  if (peerId !== undefined && canonicalPeerId(peerId) === undefined) throw new FilesHttpError(400, 'Invalid peerId');
  if (multiAddr !== undefined) {
    let valid = false;
    try {
      valid = multiaddr(multiAddr).getComponents().length > 0;
    } catch {
      valid = false;
    }
    if (!valid) throw new FilesHttpError(400, 'Invalid multiAddr');
  }
  return { peerId, multiAddr };
}

function requirePeerId(query: PeerQuery): string {
  if (query.peerId === undefined) throw new FilesHttpError(400, 'peerId is required');
  return query.peerId;
}

export function registerP2pRoutes(context: FilesRouteContext): void {
  const { server, admin, config } = context;
  const ask: AskFor<P2pEvent> = (message, options) => context.api.p2p(message, options).catch(asHttpError);
  const peerAskMs = PEERING_DEFAULTS.dialTimeoutMs + PEER_ASK_MARGIN_MS;

  for (const prefix of P2P_PREFIXES) {
    server.route('get', `${prefix}/status`, admin(async (_request, { signal }) => adminJson(200, await ask({ type: 'p2p.status' }, { signal }))));
    server.route('get', `${prefix}/peers`, admin(async (_request, { signal }) => adminJson(200, await ask({ type: 'p2p.peers' }, { signal }))));
    server.route(
      'get',
      `${prefix}/connections`,
      admin(async (request, { signal }) => adminJson(200, await ask({ type: 'p2p.connections', peerId: peerQuery(request).peerId }, { signal }))),
    );
    server.route(
      'get',
      `${prefix}/peerStore`,
      admin(async (request, { signal }) => adminJson(200, await ask({ type: 'p2p.peerStore', peerId: peerQuery(request).peerId }, { signal }))),
    );
    server.route(
      'get',
      `${prefix}/peerInfo`,
      admin(async (request, { signal }) => adminJson(200, await ask({ type: 'p2p.peerInfo', peerId: requirePeerId(peerQuery(request)) }, { signal }))),
    );
    server.route(
      'get',
      `${prefix}/dial`,
      admin(async (request, { signal }) => {
        const query = peerQuery(request);
        if (query.peerId === undefined && query.multiAddr === undefined) throw new FilesHttpError(400, 'peerId or multiAddr is required');
        return adminJson(200, await ask({ type: 'p2p.dial', ...query }, { signal, timeoutMs: peerAskMs }));
      }),
    );
    server.route(
      'get',
      `${prefix}/services/ping`,
      admin(async (request, { signal }) => adminJson(200, await ask({ type: 'p2p.ping', peerId: requirePeerId(peerQuery(request)) }, { signal, timeoutMs: peerAskMs }))),
    );
  }

  if (config.enableDebugApi) {
    // One pass dials the configured nodes in waves; the ask lasts as long as the slowest possible pass.
    const passAskMs = passBoundMs(config.nodes.length) + PEER_ASK_MARGIN_MS;
    server.route(
      'get',
      '/api/debug/autopeering',
      admin(async (_request, { signal }) => {
        const result = await ask({ type: 'p2p.autopeer' }, { signal, timeoutMs: passAskMs });
        return adminJson(200, { peeredSuccessfullyTo: result.connected });
      }),
    );
  }
}
