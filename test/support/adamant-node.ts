// A fake ADAMANT node on loopback for the console's tests (notes E.2 "Recommendation"): the node endpoints the
// console calls, with canned answers and a record of every request. Posted transactions are checked as a node
// would: the Ed25519 signature over their bytes (refused with the node's error when it does not verify), and the
// id the node gives them is computed from the signed bytes. Chat messages sent to the node's test accounts are
// decrypted with those accounts' keys, as the recipient's client would. Importing this module does nothing.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import { decryptMessage } from '../../src/console/chat-crypto.js';
import { addressFromPublicKey, keyPairFromPassphrase, transactionId, verifyTransaction, type KeyPair, type UnsignedTransaction } from '../../src/console/crypto.js';

export interface RecordedRequest {
  readonly method: string;
  /** Path with the query string, as received. */
  readonly url: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: unknown;
}

export interface AcceptedTransaction {
  readonly path: string;
  readonly transaction: UnsignedTransaction & { readonly senderId: string; readonly signature: string; readonly [key: string]: unknown };
  readonly id: string;
}

/** A chat message to one of the node's test accounts, as that account reads it. */
export interface ReceivedMessage {
  readonly id: string;
  readonly senderId: string;
  readonly recipientId: string;
  readonly chatType: number;
  readonly nonceHex: string;
  readonly text: string;
}

export interface FakeAdamantNode {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Posted transactions whose signature verified, with the id the node gave them. */
  readonly accepted: AcceptedTransaction[];
  /** Decrypted chat messages addressed to the test accounts. */
  readonly received: ReceivedMessage[];
  /** The test accounts' keys by address (from the `accounts` option). */
  readonly accounts: ReadonlyMap<string, KeyPair>;
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

export interface FakeAdamantNodeOptions {
  readonly height?: number;
  /** Passphrases of accounts the node knows (their public keys are on its chain) and reads chat messages for. */
  readonly accounts?: readonly string[];
}

export async function startFakeAdamantNode(options: FakeAdamantNodeOptions = {}): Promise<FakeAdamantNode> {
  const requests: RecordedRequest[] = [];
  const accepted: AcceptedTransaction[] = [];
  const received: ReceivedMessage[] = [];
  const accounts = new Map((options.accounts ?? []).map((passphrase) => {
    const keys = keyPairFromPassphrase(passphrase);
    return [addressFromPublicKey(keys.publicKey), keys] as const;
  }));
  /** Public keys on this node's chain: the test accounts and every account that sent a transaction here. */
  const publicKeys = new Map([...accounts].map(([address, keys]) => [address, keys.publicKey.toString('hex')]));
  /** A chat message to a test account, decrypted as its recipient would (a failure here is a test failure). */
  const readChat = (transaction: AcceptedTransaction['transaction'], id: string) => {
    const chat = (transaction.asset as { chat?: { message: string; own_message: string; type: number } }).chat;
    const recipient = transaction.recipientId ? accounts.get(transaction.recipientId) : undefined;
    if (transaction.type !== 8 || !chat || !recipient) return;
    const text = decryptMessage(chat.message, chat.own_message, Buffer.from(transaction.senderPublicKey, 'hex'), recipient.privateKey);
    received.push({ id, senderId: transaction.senderId, recipientId: transaction.recipientId!, chatType: chat.type, nonceHex: chat.own_message, text });
  };
  /** The node's side of a post: verify, then answer as the endpoint does (notes D "Transaction objects as posted"). */
  const receive = (path: string, transaction: AcceptedTransaction['transaction'] | undefined): [number, unknown] => {
    if (!transaction || typeof transaction.signature !== 'string' || !verifyTransaction(transaction, transaction.signature)) {
      return [200, { success: false, nodeTimestamp: 1, error: 'Failed to verify signature' }];
    }
    const id = transactionId(transaction, transaction.signature);
    accepted.push({ path, transaction, id });
    publicKeys.set(transaction.senderId, transaction.senderPublicKey);
    readChat(transaction, id);
    return path === 'transactions/process' ? [200, { success: true, nodeTimestamp: 1, transactionId: id }] : [200, { success: true, nodeTimestamp: 1, transaction: { ...transaction, id } }];
  };
  const routes = new Map<string, (request: RecordedRequest) => [number, unknown]>();
  const node = { height: options.height ?? 1_000_000 };
  const defaults = (request: RecordedRequest): [number, unknown] => {
    const id = request.query.get('id');
    if (request.method === 'POST') {
      const body = request.body as { transaction?: AcceptedTransaction['transaction'] } | AcceptedTransaction['transaction'] | undefined;
      if (request.path === 'transactions/process') return receive(request.path, (body as { transaction?: AcceptedTransaction['transaction'] } | undefined)?.transaction);
      if (request.path === 'accounts/delegates' || request.path === 'delegates') return receive(request.path, body as AcceptedTransaction['transaction'] | undefined);
    }
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
      case 'transactions/get': {
        const known = accepted.find((entry) => entry.id === id);
        return [200, { success: true, nodeTimestamp: 1, transaction: known ? { ...known.transaction, id } : { id, type: 0 } }];
      }
      case 'accounts/getPublicKey': {
        const publicKey = publicKeys.get(request.query.get('address') ?? '');
        return publicKey ? [200, { success: true, nodeTimestamp: 1, publicKey }] : [200, { success: false, nodeTimestamp: 1, error: 'Account not found' }];
      }
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
    accepted,
    received,
    accounts,
    routes,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}
