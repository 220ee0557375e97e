// The console's read methods (spec B §4.2; notes C.2, F.12): each an array-style JSON-RPC method that asks the node
// pool and returns the field the original extracted. Node failures (`{success:false, …}`) become 501 errors.
//
// Every parameter is checked before the node is asked (src/console/params.ts, src/console/query.ts): addresses,
// ids and heights must have their shape, getDelegate's lookup key must be one the node knows (its identifier, which
// the original never checked, plain text), and query items are rewritten as the original did (prefixes of paging
// options, withoutDirectTransfers). A value of the wrong shape (a passphrase pasted into the wrong field) is refused
// with 501 "Wrong '<name>' parameter" and never sent; fixed queries are built from checked values, never by joining
// strings.

import type { RpcMethod } from './jsonrpc.js';
import { addressParam, delegateLookup, field, heightParam, idParam, required, withoutEnvelope } from './params.js';
import { nodeQuery } from './query.js';
import type { AdamantNodeClient } from './node-api.js';
import type { Cancellation } from '../cancellation.js';

type Params = readonly unknown[];

export function readMethods(node: AdamantNodeClient): Map<string, RpcMethod> {
  const method = (call: (params: Params, signal: Cancellation) => Promise<unknown>): RpcMethod => ({
    style: 'array',
    call: (params, signal) => call(params as Params, signal),
  });
  const transactions = async (query: URLSearchParams, signal: Cancellation) => field(await node.get('transactions', query, signal), 'transactions');
  const newestFirst = (...filters: Array<[string, string]>) => new URLSearchParams([...filters, ['orderBy', 'timestamp:desc']]);

  return new Map<string, RpcMethod>([
    ['nodeHeight', method(async (_, signal) => field(await node.get('blocks/getHeight', undefined, signal), 'height'))],
    ['nodeVersion', method(async (_, signal) => withoutEnvelope(await node.get('peers/version', undefined, signal)))],
    ['nodeStatus', method(async (_, signal) => withoutEnvelope(await node.get('node/status', undefined, signal)))],
    ['getAddress', method(async ([address], signal) => field(await node.get('accounts', new URLSearchParams({ address: addressParam(address) }), signal), 'account'))],
    ['getBlock', method(async ([id], signal) => field(await node.get('blocks/get', new URLSearchParams({ id: idParam(id) }), signal), 'block'))],
    ['getBlocks', method(async (items, signal) => field(await node.get('blocks', nodeQuery(items), signal), 'blocks'))],
    [
      'getDelegate',
      method(async ([identifier, key], signal) => {
        const lookup = delegateLookup(required(identifier, 'username'), key);
        return field(await node.get('delegates/get', new URLSearchParams({ [lookup.key]: lookup.value }), signal), 'delegate');
      }),
    ],
    [
      'getChats',
      method(async ([address, ...items], signal) => {
        const own = addressParam(address);
        return field(await node.get(`chatrooms/${own}`, nodeQuery(items), signal), 'chats');
      }),
    ],
    [
      'getChatMessages',
      method(async ([own, partner, ...items], signal) => {
        const path = `chatrooms/${addressParam(own)}/${addressParam(partner, 'partnerAddress')}`;
        return field(await node.get(path, nodeQuery(items), signal), 'messages');
      }),
    ],
    ['getChatTransactions', method(async (items, signal) => field(await node.get('chats/get', nodeQuery(items), signal), 'transactions'))],
    [
      'getTransaction',
      method(async ([id, ...items], signal) => {
        const checked = idParam(id);
        // The positional id comes first and wins over an `id=` item (`id=…&returnUnconfirmed=1`, as the original sent it).
        const rest = [...nodeQuery(items)].filter(([key]) => key !== 'id');
        return field(await node.get('transactions/get', new URLSearchParams([['id', checked], ...rest]), signal), 'transaction');
      }),
    ],
    ['getTransactions', method(async (items, signal) => transactions(nodeQuery(items), signal))],
    ['getTransactionsInBlockById', method(async ([blockId], signal) => transactions(newestFirst(['blockId', idParam(blockId, 'blockId')]), signal))],
    [
      'getTransactionsInBlockByHeight',
      method(async ([height], signal) => {
        const h = heightParam(height);
        return transactions(newestFirst(['fromHeight', h], ['and:toHeight', h]), signal);
      }),
    ],
    [
      'getTransactionsReceivedByAddress',
      method(async ([address], signal) => transactions(newestFirst(['recipientId', addressParam(address)], ['and:minAmount', '1']), signal)),
    ],
  ]);
}
