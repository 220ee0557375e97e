// A fake ADAMANT node on loopback for the console's tests (notes E.2 "Recommendation"): the node endpoints the
// console calls, with canned answers, a record of every request, and a hook that checks posted transactions
// (signature and id verification is plugged in by the tests that post). Importing this module does nothing.

import { createServer, type IncomingMessage, type Server } from 'node:http';

export interface RecordedRequest {
  readonly method: string;
  /** Path with the query string, as received. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

export interface FakeAdamantNode {
  readonly url: string;
  readonly requests: RecordedRequest[];
  height: number;
  /** Overrides by path (without /api/): a function of the request returning [status, body]. */
  readonly routes: Map<string, (request: RecordedRequest) => [number, unknown]>;
  close(): Promise<void>;
}

export const FAKE_NODE_VERSION = { build: '', commit: 'c0ffee', version: '0.10.3' };

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > 1024 * 1024) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startFakeAdamantNode(options: { height?: number } = {}): Promise<FakeAdamantNode> {
  const requests: RecordedRequest[] = [];
  const routes = new Map<string, (request: RecordedRequest) => [number, unknown]>();
  const node = { height: options.height ?? 1_000_000 };
  const defaults = (request: RecordedRequest): [number, unknown] => {
    const id = request.query.get('id');
    switch (request.path) {
      case 'node/status':
        return [200, { success: true, nodeTimestamp: 1, loader: { loaded: true, now: node.height, blocksCount: 0 }, network: { broadhash: 'b'.repeat(64), epoch: '2017-09-02T17:00:00.000Z', height: node.height, fee: 50000000, nethash: 'n'.repeat(64), nonce: 'x', milestone: 0, reward: 0, supply: 0 }, version: FAKE_NODE_VERSION, wsClient: { enabled: true, port: 36668 } }];
      case 'blocks/getHeight':
        return [200, { success: true, nodeTimestamp: 1, height: node.height }];
      case 'peers/version':
        return [200, { success: true, nodeTimestamp: 1, ...FAKE_NODE_VERSION }];
      case 'accounts':
        return [200, { success: true, nodeTimestamp: 1, account: { address: request.query.get('address'), unconfirmedBalance: '100', balance: '100', publicKey: 'a'.repeat(64), unconfirmedSignature: 0, secondSignature: 0, secondPublicKey: null, multisignatures: [], u_multisignatures: [] } }];
      case 'blocks/get':
        return id === 'missing' ? [200, { success: false, errorMessage: 'Block not found' }] : [200, { success: true, nodeTimestamp: 1, block: { id, height: 10 } }];
      case 'blocks':
        return [200, { success: true, nodeTimestamp: 1, blocks: [{ id: '1', height: node.height }] }];
      case 'delegates/get':
        return [200, { success: true, nodeTimestamp: 1, delegate: { username: request.query.get('username') ?? 'found', address: request.query.get('address') ?? 'U1', publicKey: request.query.get('publicKey') ?? 'b'.repeat(64) } }];
      case 'chats/get':
      case 'transactions':
        return [200, { success: true, nodeTimestamp: 1, count: '1', transactions: [{ id: '5', type: 0 }] }];
      case 'transactions/get':
        return [200, { success: true, nodeTimestamp: 1, transaction: { id, type: 0 } }];
      default:
        if (request.path.startsWith('chatrooms/')) {
          const parts = request.path.split('/');
          return parts.length === 2 ? [200, { success: true, nodeTimestamp: 1, count: 1, chats: [{ participants: [] }] }] : [200, { success: true, nodeTimestamp: 1, count: 1, participants: [], messages: [{ id: '6' }] }];
        }
        return [404, { success: false, error: `API endpoint not found` }];
    }
  };
  const server: Server = createServer((request, response) => {
    readBody(request).then(
      (body) => {
        const url = new URL(request.url ?? '/', 'http://node');
        const recorded: RecordedRequest = { method: request.method ?? 'GET', url: request.url ?? '/', path: url.pathname.replace(/^\/api\//, ''), query: url.searchParams, body };
        requests.push(recorded);
        const [status, answer] = (routes.get(recorded.path) ?? defaults)(recorded);
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      },
      () => response.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return Object.assign(node, {
    url: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
