// The query items of the console's list methods (getBlocks, getChats, getChatMessages, getChatTransactions,
// getTransaction, getTransactions; notes C.2) as the node receives them. Pure.
//
// Items are "key=value" strings; commas separate items too ('limit=10,orderBy=height:desc'). The original turned them
// into adamant-api's query object, which made three rewrites that a straight copy of the items misses:
//
// - An `and:` / `or:` prefix groups a *filter* (`and:fromHeight=10`) and is kept. Paging, ordering and output options
//   are not filters: their prefix is dropped (`and:limit=5` is sent as `limit=5`, `or:orderBy=timestamp:asc` as
//   `orderBy=timestamp:asc`).
// - A key given twice keeps its first place and its last value (the original assigned into an object).
// - The node 0.10 filter `includeDirectTransfers` replaced `withoutDirectTransfers`: the old one is sent inverted as
//   the new one (`withoutDirectTransfers=1` becomes `includeDirectTransfers=0`, `true`/`false` likewise) and never as
//   itself; a value it cannot invert is kept as it is (`withoutDirectTransfers=yes` → `includeDirectTransfers=yes`);
//   when both are given, `includeDirectTransfers` is the one that counts.
//
// Lenient where the original was: an item without `=` is a key with an empty value (`["U5450667915320866213"]` is
// sent as `U5450667915320866213=`), and the direct-transfer flags take any value. Every item is still checked before
// any node is asked, so that a passphrase typed where a query belongs is never sent: a key must be a name (a
// passphrase is words), the values of the known filters must have their shape (addresses, ids, heights, amounts,
// public keys, 0/1 flags, `field:asc|desc`), and other values must be printable ASCII without spaces. Errors repeat
// only what `shown` allows.

import { ADDRESS_PATTERN } from './crypto.js';
import { HEIGHT, NUMERIC_ID, PUBLIC_KEY, shown, WrongParameterError, wrongParameter } from './params.js';

/** Options that are never filters: sent without an `and:`/`or:` prefix (the original's list). */
export const CONTROL_KEYS: ReadonlySet<string> = new Set(['limit', 'offset', 'orderBy', 'returnUnconfirmed', 'returnAsset', 'includeDirectTransfers', 'withoutDirectTransfers', 'userId']);

/** `and:` or `or:`, then a name. */
const KEY = /^(and:|or:)?([A-Za-z][A-Za-z0-9_]*)$/;

const UNSIGNED = /^\d{1,20}$/;
const FLAG = /^(?:0|1|true|false)$/i;
const ORDER = /^[A-Za-z_][A-Za-z0-9_.]*(?::(?:asc|desc))?$/i;
/** Values of keys this table does not know: printable ASCII without spaces (or empty). */
const OTHER = /^[\x21-\x7e]*$/;

/** The shape of each known key's value (the node's transaction, block and chat filters). */
const VALUES: Readonly<Record<string, RegExp>> = {
  senderId: ADDRESS_PATTERN,
  recipientId: ADDRESS_PATTERN,
  inId: ADDRESS_PATTERN,
  userId: ADDRESS_PATTERN,
  generatorId: ADDRESS_PATTERN,
  id: NUMERIC_ID,
  blockId: NUMERIC_ID,
  previousBlock: NUMERIC_ID,
  height: HEIGHT,
  fromHeight: HEIGHT,
  toHeight: HEIGHT,
  minAmount: UNSIGNED,
  maxAmount: UNSIGNED,
  senderPublicKey: PUBLIC_KEY,
  recipientPublicKey: PUBLIC_KEY,
  generatorPublicKey: PUBLIC_KEY,
  type: UNSIGNED,
  types: UNSIGNED,
  limit: UNSIGNED,
  offset: UNSIGNED,
  fromTimestamp: UNSIGNED,
  toTimestamp: UNSIGNED,
  fromUnixTime: UNSIGNED,
  toUnixTime: UNSIGNED,
  returnAsset: FLAG,
  returnUnconfirmed: FLAG,
  orderBy: ORDER,
};

/** The node 0.10 value of a `withoutDirectTransfers` flag: 1/true → 0, 0/false → 1, anything else as it is. */
function inverted(flag: string): string {
  const lower = flag.toLowerCase();
  return lower === '1' || lower === 'true' ? '0' : lower === '0' || lower === 'false' ? '1' : flag;
}

/** The node's query for these items (see the header); throws WrongParameterError before anything is sent. */
export function nodeQuery(items: readonly unknown[]): URLSearchParams {
  const pieces: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string' && typeof item !== 'number') throw new WrongParameterError('query', 'items are "key=value" strings');
    for (const piece of String(item).split(/[&,]/)) {
      if (piece !== '') pieces.push(piece);
    }
  }
  const query = new Map<string, string>();
  // URLSearchParams decodes each piece as the original did (percent escapes, '+' for a space, no `=`: an empty value).
  for (const [raw, value] of new URLSearchParams(pieces.join('&'))) {
    const match = KEY.exec(raw);
    if (!match) throw wrongParameter('query', raw);
    const prefix = match[1] ?? '';
    const name = match[2]!;
    if (!(VALUES[name] ?? OTHER).test(value)) throw wrongParameter(shown(name) ?? 'query', value);
    // Map.set keeps a repeated key's first place and takes its last value.
    query.set(CONTROL_KEYS.has(name) ? name : `${prefix}${name}`, value);
  }
  const without = query.get('withoutDirectTransfers');
  if (without !== undefined) {
    query.delete('withoutDirectTransfers');
    if (!query.has('includeDirectTransfers')) query.set('includeDirectTransfers', inverted(without));
  }
  return new URLSearchParams([...query]);
}

/**
 * The query string as sent: every key and value percent-encoded, so `&`, `=`, `#` or `?` inside a value can never
 * start another parameter; `:` is left as it is, as the original's client (axios) sent `and:minAmount=1` and
 * `orderBy=timestamp:desc`.
 */
export function queryString(query: URLSearchParams): string {
  let text = '';
  for (const [key, value] of query) text += `${text === '' ? '' : '&'}${encode(key)}=${encode(value)}`;
  return text;
}

/** Characters encodeURIComponent leaves as they are, and `:`: such a piece (an address, a height) is sent as it is. */
const UNRESERVED = /^[A-Za-z0-9\-_.!~*'():]*$/;
const encode = (piece: string) => (UNRESERVED.test(piece) ? piece : encodeURIComponent(piece).replace(/%3A/gi, ':'));
