// The three reads of spec A §4.1 the transfers benchmark measures, in both forms: the gateway's PostgREST query
// string, and the same read as plain SQL with bound parameters for the baseline (bench/support/transfers-server.ts).
// The SQL keeps the gateway's semantics: the same predicates on the same citext columns (a parameter compared with
// a citext column is typed citext by PostgreSQL, so comparisons ignore case exactly as PostgREST's untyped literals
// do), the same ORDER BY and LIMIT, every column in table order.
//
// Every read orders by `time DESC, txhash DESC` (spec A §4.1 rule 5: `time` alone is not a total order, and a page
// a client will continue with a keyset must be ordered the way the cursor is). The baseline's statements are the
// same shape the gateway sends (src/transfers/read-sql-branches.ts): one ordered, limited branch per side of the
// address OR, so the comparison measures the gateway, not a different plan; PLAIN_OR_SQL keeps the single-OR form
// for the plan table (what PostgreSQL does with the OR itself).

export const PAGE_ROWS = 25;

export type QueryName = 'native' | 'token' | 'keyset';
export const QUERY_NAMES: readonly QueryName[] = ['native', 'token', 'keyset'];

export const QUERY_TITLES: Readonly<Record<QueryName, string>> = {
  native: 'native history of an address',
  token: 'token history of an address',
  keyset: 'keyset next page',
};

/** The 24 zero hex digits before a 40-hex address in the `contract_to` calldata word (spec A 2.1 rule 2). */
const WORD_PAD = '0'.repeat(24);

export function contractWord(address: string): string {
  return `${WORD_PAD}${address.slice(2).toLowerCase()}`;
}

const COLUMNS = '"time", txfrom, txto, gas, gasprice, block, txhash, value, contract_to, contract_value';

/** One request of a case: the subject address (lowercase, as clients often send it) and what the case needs. */
export interface QuerySubject {
  readonly address: string;
  readonly token: string;
  /** The last row of the address's first page (order time.desc,txhash.desc): the keyset cursor. */
  readonly cursorTime: number;
  readonly cursorHash: string;
}

export function gatewayPath(name: QueryName, s: QuerySubject): string {
  const a = s.address;
  switch (name) {
    case 'native':
      return `/ethtxs?and=(contract_to.eq.,or(txfrom.eq.${a},txto.eq.${a}))&order=time.desc,txhash.desc&limit=${PAGE_ROWS}`;
    case 'token':
      return `/ethtxs?txto=eq.${s.token}&or=(txfrom.eq.${a},contract_to.eq.${contractWord(a)})&order=time.desc,txhash.desc&limit=${PAGE_ROWS}`;
    case 'keyset':
      return `/ethtxs?or=(txfrom.eq.${a},txto.eq.${a})&and=(or(time.lt.${s.cursorTime},and(time.eq.${s.cursorTime},txhash.lt.${s.cursorHash})))&order=time.desc,txhash.desc&limit=${PAGE_ROWS}`;
  }
}

export function baselinePath(name: QueryName, s: QuerySubject): string {
  switch (name) {
    case 'native':
      return `/native?a=${s.address}`;
    case 'token':
      return `/token?t=${s.token}&a=${s.address}`;
    case 'keyset':
      return `/keyset?a=${s.address}&t=${s.cursorTime}&h=${s.cursorHash}`;
  }
}

export interface BaselineStatement {
  readonly text: string;
  readonly values: readonly (string | number)[];
}

const ORDER = `ORDER BY "time" DESC, txhash DESC LIMIT ${PAGE_ROWS}`;
const CURSOR = '("time" < $2 OR ("time" = $2 AND txhash < $3))';
/** One ordered, limited branch per condition; rows an earlier branch took are excluded by the later ones. */
const branches = (where: readonly string[]) =>
  `SELECT ${COLUMNS} FROM (${where.map((w) => `(SELECT * FROM public.ethtxs WHERE ${w} ${ORDER})`).join(' UNION ALL ')}) page ${ORDER}`;

/** What the baseline runs: the gateway's statement shape written by hand (the module comment). */
export const BASELINE_SQL: Readonly<Record<QueryName, string>> = {
  native: branches(['contract_to = $1 AND txfrom = $2', 'contract_to = $1 AND txto = $2 AND (txfrom = $2) IS NOT TRUE']),
  token: branches(['txto = $1 AND txfrom = $2', 'txto = $1 AND contract_to = $3 AND (txfrom = $2) IS NOT TRUE']),
  // The cursor bounds `time` from above (`time <= $2`), which the index takes as where its walk starts.
  keyset: branches([`txfrom = $1 AND ${CURSOR} AND "time" <= $2`, `txto = $1 AND (txfrom = $1) IS NOT TRUE AND ${CURSOR} AND "time" <= $2`]),
};

/** The same reads with the OR itself (same parameters): what PostgreSQL plans for the query as a client writes it. */
export const PLAIN_OR_SQL: Readonly<Record<QueryName, string>> = {
  native: `SELECT ${COLUMNS} FROM public.ethtxs WHERE contract_to = $1 AND (txfrom = $2 OR txto = $2) ${ORDER}`,
  token: `SELECT ${COLUMNS} FROM public.ethtxs WHERE txto = $1 AND (txfrom = $2 OR contract_to = $3) ${ORDER}`,
  keyset: `SELECT ${COLUMNS} FROM public.ethtxs WHERE (txfrom = $1 OR txto = $1) AND ${CURSOR} ${ORDER}`,
};

/** The baseline's statement for a baseline path (undefined for anything else). */
export function baselineStatement(pathAndQuery: string): BaselineStatement | undefined {
  const mark = pathAndQuery.indexOf('?');
  if (mark < 0) return undefined;
  const path = pathAndQuery.slice(0, mark);
  const query = new URLSearchParams(pathAndQuery.slice(mark + 1));
  const a = query.get('a');
  if (a === null) return undefined;
  switch (path) {
    case '/native':
      return { text: BASELINE_SQL.native, values: ['', a] };
    case '/token': {
      const t = query.get('t');
      return t === null ? undefined : { text: BASELINE_SQL.token, values: [t, a, contractWord(a)] };
    }
    case '/keyset': {
      const t = query.get('t');
      const h = query.get('h');
      return t === null || h === null ? undefined : { text: BASELINE_SQL.keyset, values: [a, t, h] };
    }
    default:
      return undefined;
  }
}

/** The first page of an address for the keyset case (and the cursor it ends with). */
export const FIRST_PAGE_SQL = `SELECT "time", txhash FROM public.ethtxs WHERE (txfrom = $1 OR txto = $1) ORDER BY "time" DESC, txhash DESC LIMIT ${PAGE_ROWS}`;

/** How many rows each case chooses its page from (the rows matching before ORDER BY / LIMIT). */
export function matchingStatement(name: QueryName, s: QuerySubject): BaselineStatement {
  switch (name) {
    case 'native':
      return { text: `SELECT count(*)::int AS n FROM public.ethtxs WHERE contract_to = '' AND (txfrom = $1 OR txto = $1)`, values: [s.address] };
    case 'token':
      return { text: 'SELECT count(*)::int AS n FROM public.ethtxs WHERE txto = $1 AND (txfrom = $2 OR contract_to = $3)', values: [s.token, s.address, contractWord(s.address)] };
    case 'keyset':
      return {
        text: 'SELECT count(*)::int AS n FROM public.ethtxs WHERE (txfrom = $1 OR txto = $1) AND ("time" < $2 OR ("time" = $2 AND txhash < $3))',
        values: [s.address, s.cursorTime, s.cursorHash],
      };
  }
}
