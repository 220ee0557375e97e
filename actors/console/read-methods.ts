// The console's read methods (spec B §4.2; notes C.2, F.12): each an array-style JSON-RPC method that asks the node
// pool and returns the field the original extracted. Node failures (`{success:false, …}`) become 501 errors.

import type { RpcMethod } from '../../src/console/jsonrpc.js';
import { delegateLookup, field, queryItems, required, withoutEnvelope } from '../../src/console/params.js';
import type { AdamantNodeClient } from './node-client.js';

type Params = readonly unknown[];

export function readMethods(node: AdamantNodeClient): Map<string, RpcMethod> {
  const method = (call: (params: Params, signal: AbortSignal) => Promise<unknown>): RpcMethod => ({
    style: 'array',
    call: (params, signal) => call(params as Params, signal),
  });
  const transactions = async (items: readonly unknown[], signal: AbortSignal) => field(await node.get('transactions', queryItems(items), signal), 'transactions');

  return new Map<string, RpcMethod>([
    ['nodeHeight', method(async (_, signal) => field(await node.get('blocks/getHeight', undefined, signal), 'height'))],
    ['nodeVersion', method(async (_, signal) => withoutEnvelope(await node.get('peers/version', undefined, signal)))],
    ['nodeStatus', method(async (_, signal) => withoutEnvelope(await node.get('node/status', undefined, signal)))],
    ['getAddress', method(async ([address], signal) => field(await node.get('accounts', new URLSearchParams({ address: required(address, 'address') }), signal), 'account'))],
    ['getBlock', method(async ([id], signal) => field(await node.get('blocks/get', new URLSearchParams({ id: required(id, 'id') }), signal), 'block'))],
    ['getBlocks', method(async (items, signal) => field(await node.get('blocks', queryItems(items), signal), 'blocks'))],
    [
      'getDelegate',
      method(async ([identifier, key], signal) => {
        const lookup = delegateLookup(required(identifier, 'username'), key);
        return field(await node.get('delegates/get', new URLSearchParams({ [lookup.key]: lookup.value }), signal), 'delegate');
      }),
    ],
    [
      'getChats',
      method(async ([address, ...items], signal) => field(await node.get(`chatrooms/${encodeURIComponent(required(address, 'address'))}`, queryItems(items), signal), 'chats')),
    ],
    [
      'getChatMessages',
      method(async ([own, partner, ...items], signal) => {
        const path = `chatrooms/${encodeURIComponent(required(own, 'address'))}/${encodeURIComponent(required(partner, 'partnerAddress'))}`;
        return field(await node.get(path, queryItems(items), signal), 'messages');
      }),
    ],
    ['getChatTransactions', method(async (items, signal) => field(await node.get('chats/get', queryItems(items), signal), 'transactions'))],
    [
      'getTransaction',
      method(async ([id, ...items], signal) => {
        const query = queryItems(items);
        query.set('id', required(id, 'id'));
        return field(await node.get('transactions/get', reorder(query, 'id'), signal), 'transaction');
      }),
    ],
    ['getTransactions', method(async (items, signal) => transactions(items, signal))],
    ['getTransactionsInBlockById', method(async ([blockId], signal) => transactions([`blockId=${required(blockId, 'blockId')}`, 'orderBy=timestamp:desc'], signal))],
    [
      'getTransactionsInBlockByHeight',
      method(async ([height], signal) => {
        const h = required(height, 'height');
        return transactions([`fromHeight=${h}`, `and:toHeight=${h}`, 'orderBy=timestamp:desc'], signal);
      }),
    ],
    [
      'getTransactionsReceivedByAddress',
      method(async ([address], signal) => transactions([`recipientId=${required(address, 'address')}`, 'and:minAmount=1', 'orderBy=timestamp:desc'], signal)),
    ],
  ]);
}

/** `key` first, then the rest in their order (`id=…&returnUnconfirmed=1`, as the original built the URL). */
function reorder(query: URLSearchParams, key: string): URLSearchParams {
  const first = query.get(key)!;
  const rest = [...query].filter(([name]) => name !== key);
  return new URLSearchParams([[key, first], ...rest]);
}
