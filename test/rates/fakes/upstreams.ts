// Fake upstream rate APIs for tests: one node:http server on 127.0.0.1 (port 0) serving the ten sources'
// request paths under distinct prefixes, with an in-process control API. Shapes follow docs/notes/rates.md D.1–D.10.
// Also exports a recording wrapper around the service's real HttpJsonClient, with a timeout cap for fast tests.
//
// Importing this module starts nothing (node --test runs every .js under a test/ folder).

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../../src/clock.js';
import { fetchJsonClient } from '../../../storage/rates/http-json.fetch.js';
import type { HttpJsonClient, SourceContext } from '../../../src/rates/sources/source.js';
import type { SourceName } from '../../../src/rates/types.js';

/** Upper bound of every hold: a 'timeout' never outlives this, nor does any delay. */
export const MAX_HOLD_MS = 30_000;

export interface FakeCoin {
  /** Upstream id: CoinPaprika `btc-bitcoin`, CoinLore `90`, CoinGecko `bitcoin`, CMC `1`, Binance market `BTCUSDT`, MOEX SHORTNAME. */
  readonly id: string;
  /** Upper-case symbol (MOEX: the SHORTNAME again). */
  readonly symbol: string;
  /** Directory rank; 0 = unranked (CoinPaprika, CoinLore). */
  rank: number;
  /** CoinPaprika `is_active`. */
  active: boolean;
  /** Binance market status. */
  status: string;
  /** USD per 1 unit (fiat sources serve the inverse); MOEX: RUB per unit (PREVPRICE). Absent: listed without a price. */
  price?: number | null;
  /** MOEX PREVWAPRICE; defaults to `price`. */
  weightedPrice?: number | null;
}

export type FailMode = number | 'timeout' | 'badjson' | null;

export interface RecordedRequest {
  readonly method: string;
  /** Path after the source prefix, without the query. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
}

export interface FakeUpstreams {
  readonly origin: string;
  /** The `url` to put in the source's config block. */
  baseUrlFor(source: SourceName): string;
  /** Sets (or with `null`, clears) the price of every coin with this symbol, creating one with default ids if none. */
  setPrice(source: SourceName, symbol: string, price: number | null): void;
  /** Adds a directory entry explicitly (ids, ranks, ambiguous symbols, stale ids). */
  addCoin(source: SourceName, coin: Partial<FakeCoin> & { id: string; symbol: string }): void;
  /** Answer every request of the source with this HTTP status, hang ('timeout'), or non-JSON; `null` heals. */
  failSource(source: SourceName, mode: FailMode): void;
  /** Delay every answer of the source (bounded by MAX_HOLD_MS); 0 removes it. */
  delaySource(source: SourceName, ms: number): void;
  /** Require this API key (header or query, as the source expects); `null` accepts anything. */
  setApiKey(source: SourceName, key: string | null): void;
  /** Override one path's answer verbatim (`path` after the prefix, no query); `null` removes the override. */
  setResponse(source: SourceName, path: string, response: { status: number; body: unknown } | null): void;
  requests(source: SourceName): readonly RecordedRequest[];
  clearRequests(): void;
  close(): Promise<void>;
}

const PREFIX: Readonly<Record<SourceName, string>> = {
  CurrencyApi: '/currency-api',
  ExchangeRateApi: '/exchange-rate-api',
  ExchangeRateHost: '/exchange-rate-host',
  MOEX: '/moex',
  Coinmarketcap: '/coinmarketcap',
  CryptoCompare: '/cryptocompare',
  Coingecko: '/coingecko',
  CoinPaprika: '/coinpaprika',
  CoinLore: '/coinlore',
  Binance: '/binance',
};

/** For the three sources whose `url` is the full endpoint (as in the original config). */
const ENDPOINT: Partial<Record<SourceName, string>> = {
  CurrencyApi: '/v1/currencies/usd.json',
  ExchangeRateApi: '/v6/latest/USD',
  MOEX: '/securities.jsonp',
};

const MOEX_COLUMNS = [
  'SECID', 'BOARDID', 'SHORTNAME', 'LOTSIZE', 'SETTLEDATE', 'DECIMALS', 'FACEVALUE', 'MARKETCODE', 'MINSTEP', 'PREVDATE',
  'SECNAME', 'REMARKS', 'STATUS', 'FACEUNIT', 'PREVPRICE', 'PREVWAPRICE', 'CURRENCYID', 'LATNAME', 'LOTDIVIDER',
];

interface SourceState {
  coins: FakeCoin[];
  fail: FailMode;
  delayMs: number;
  apiKey: string | null;
  overrides: Map<string, { status: number; body: unknown }>;
  log: RecordedRequest[];
}

interface Answer {
  status: number;
  body: unknown;
}

const json = (status: number, body: unknown): Answer => ({ status, body });
const notFound = (): Answer => json(404, { error: 'not found' });
const list = (value: string | undefined): string[] => (value ? value.split(',').filter((part) => part !== '') : []);
const priced = (coin: FakeCoin): coin is FakeCoin & { price: number } => typeof coin.price === 'number';

export async function startFakeUpstreams(): Promise<FakeUpstreams> {
  const states = new Map<SourceName, SourceState>();
  const state = (source: SourceName): SourceState => {
    let existing = states.get(source);
    if (!existing) {
      existing = { coins: [], fail: null, delayMs: 0, apiKey: null, overrides: new Map(), log: [] };
      states.set(source, existing);
    }
    return existing;
  };
  const timers = new Set<NodeJS.Timeout>();

  const defaultCoin = (source: SourceName, symbol: string, index: number): FakeCoin => {
    const lower = symbol.toLowerCase();
    const id =
      source === 'CoinPaprika' ? `${lower}-${lower}`
      : source === 'CoinLore' ? String(1000 + index)
      : source === 'Coingecko' ? `${lower}-coin`
      : source === 'Coinmarketcap' ? String(5000 + index)
      : source === 'Binance' ? `${symbol}USDT`
      : symbol;
    return { id, symbol, rank: index, active: true, status: 'TRADING' };
  };

  const answer = (source: SourceName, path: string, query: Record<string, string>, headers: Record<string, string>): Answer => {
    const s = state(source);
    const coins = s.coins;
    switch (source) {
      case 'CurrencyApi': {
        if (path !== ENDPOINT.CurrencyApi) return notFound();
        const usd: Record<string, number> = { usd: 1 };
        for (const coin of coins.filter(priced)) usd[coin.symbol.toLowerCase()] = 1 / coin.price;
        return json(200, { date: '2024-09-20', usd });
      }
      case 'ExchangeRateApi': {
        const match = /^\/v6\/latest\/([A-Za-z]+)$/.exec(path);
        if (!match) return notFound();
        if (match[1] !== 'USD') return json(200, { result: 'error', 'error-type': 'unsupported-code' });
        const rates: Record<string, number> = { USD: 1 };
        for (const coin of coins.filter(priced)) rates[coin.symbol] = 1 / coin.price;
        return json(200, {
          result: 'success',
          provider: 'https://www.exchangerate-api.com',
          time_last_update_unix: 1727049751,
          base_code: 'USD',
          rates,
        });
      }
      case 'ExchangeRateHost': {
        if (path !== '/live') return notFound();
        if (!query.access_key) {
          return json(200, { success: false, error: { code: 101, type: 'missing_access_key', info: 'You have not supplied an API Access Key. [Required format: access_key=YOUR_ACCESS_KEY]' } });
        }
        if (s.apiKey !== null && query.access_key !== s.apiKey) {
          return json(200, { success: false, error: { code: 101, type: 'invalid_access_key', info: 'You have not supplied a valid API Access Key.' } });
        }
        const quotes: Record<string, number> = { USDUSD: 1 };
        for (const coin of coins.filter(priced)) quotes[`USD${coin.symbol}`] = 1 / coin.price;
        return json(200, { success: true, terms: 'https://exchangerate.host/terms', privacy: 'https://exchangerate.host/privacy', timestamp: 1430401802, source: 'USD', quotes });
      }
      case 'MOEX': {
        if (path !== ENDPOINT.MOEX) return notFound();
        const row = (coin: FakeCoin, board: string, factor: number) => [
          coin.id.slice(0, 6) + '000UTSTOM', board, coin.id, 1000, '2024-09-23', 4, 1, 'FNDT', 0.0025, '2024-09-20',
          coin.id, '', 'A', 'RUB',
          typeof coin.price === 'number' ? coin.price * factor : coin.price ?? null,
          coin.weightedPrice === undefined ? (typeof coin.price === 'number' ? coin.price * factor : null) : coin.weightedPrice === null ? null : coin.weightedPrice * factor,
          'RUB', coin.id, 1,
        ];
        // A decoy row on another board comes first: only CETS rows may be used (notes D.4).
        const data = coins.flatMap((coin) => [row(coin, 'CNGD', 2), row(coin, 'CETS', 1)]);
        return json(200, { securities: { metadata: {}, columns: MOEX_COLUMNS, data }, marketdata: { metadata: {}, columns: [], data: [] } });
      }
      case 'Coinmarketcap': {
        if (path !== '/v1/cryptocurrency/quotes/latest') return notFound();
        const key = headers['x-cmc_pro_api_key'];
        const status = (code: number, message: string | null) => ({ timestamp: '2024-09-20T00:00:00.000Z', error_code: code, error_message: message, elapsed: 1, credit_count: code ? 0 : 1 });
        if (!key) return json(401, { status: status(1002, 'API key missing.') });
        if (s.apiKey !== null && key !== s.apiKey) return json(401, { status: status(1001, 'This API Key is invalid.') });
        const row = (coin: FakeCoin) => ({
          id: Number(coin.id),
          name: coin.symbol,
          symbol: coin.symbol,
          slug: coin.symbol.toLowerCase(),
          quote: { USD: { price: coin.price ?? null, last_updated: '2024-09-20T00:00:00.000Z' } },
        });
        const data: Record<string, unknown> = {};
        if (query.symbol !== undefined) {
          for (const symbol of list(query.symbol)) {
            const coin = coins.find((candidate) => candidate.symbol === symbol);
            if (coin) data[symbol] = row(coin);
          }
        } else {
          for (const id of list(query.id)) {
            const coin = coins.find((candidate) => candidate.id === id);
            if (coin) data[id] = row(coin);
          }
        }
        return json(200, { status: status(0, null), data });
      }
      case 'CryptoCompare': {
        if (path !== '/data/pricemulti') return notFound();
        if (s.apiKey !== null && query.api_key !== s.apiKey) {
          return json(401, { Err: { message: 'API key required, please refer to the documentation at https://developers.coindesk.com/' } });
        }
        const result: Record<string, { USD: number }> = {};
        for (const symbol of list(query.fsyms)) {
          if (symbol === 'USD') result.USD = { USD: 1 };
          const coin = coins.find((candidate) => candidate.symbol === symbol && priced(candidate));
          if (coin) result[symbol] = { USD: coin.price as number };
        }
        if (Object.keys(result).length === 0) {
          return json(200, { Response: 'Error', Message: `cccagg_or_exchange market does not exist for this coin pair (${query.fsyms}-USD)`, HasWarning: false, Type: 2, RateLimit: {}, Data: {} });
        }
        return json(200, result);
      }
      case 'Coingecko': {
        const key = headers['x-cg-demo-api-key'];
        if (s.apiKey !== null && key !== s.apiKey) {
          return json(401, { status: { error_code: 10002, error_message: 'API Key Missing' } });
        }
        if (path === '/api/v3/coins/list') return json(200, coins.map((coin) => ({ id: coin.id, symbol: coin.symbol.toLowerCase(), name: coin.symbol })));
        if (path === '/api/v3/simple/price') {
          const vs = (query.vs_currencies ?? '').toLowerCase();
          const result: Record<string, Record<string, number>> = {};
          for (const id of list(query.ids)) {
            const coin = coins.find((candidate) => candidate.id === id && priced(candidate));
            if (coin && vs === 'usd') result[id] = { usd: coin.price as number };
          }
          return json(200, result);
        }
        return notFound();
      }
      case 'CoinPaprika': {
        const ticker = (coin: FakeCoin) => ({
          id: coin.id,
          name: coin.symbol,
          symbol: coin.symbol,
          rank: coin.rank,
          quotes: { USD: { price: coin.price ?? null } },
        });
        if (path === '/v1/coins') {
          return json(200, coins.map((coin) => ({ id: coin.id, name: coin.symbol, symbol: coin.symbol, rank: coin.rank, is_new: false, is_active: coin.active, type: 'coin' })));
        }
        if (path === '/v1/tickers') {
          const limit = Math.min(Number(query.limit ?? 2000) || 2000, 2000);
          // Real ranks are dense, so "the first `limit` rows" is "rank <= limit"; a sparse fake directory must not widen it.
          const rows = coins.filter((coin) => coin.rank > 0 && coin.rank <= limit && priced(coin)).sort((a, b) => a.rank - b.rank);
          return json(200, rows.map(ticker));
        }
        const single = /^\/v1\/tickers\/([^/]+)$/.exec(path);
        if (single) {
          const coin = coins.find((candidate) => candidate.id === decodeURIComponent(single[1]!));
          return coin ? json(200, ticker(coin)) : json(404, { error: 'id not found' });
        }
        return notFound();
      }
      case 'CoinLore': {
        if (path === '/api/assets/') {
          return json(200, { data: coins.map((coin) => ({ id: coin.id, symbol: coin.symbol, name: coin.symbol, nameid: coin.symbol.toLowerCase(), rank: coin.rank })) });
        }
        if (path === '/api/ticker/') {
          const rows = list(query.id).flatMap((id) => {
            const coin = coins.find((candidate) => candidate.id === id);
            if (!coin || coin.price === undefined) return [];
            return [{ id: coin.id, symbol: coin.symbol, name: coin.symbol, nameid: coin.symbol.toLowerCase(), rank: coin.rank, price_usd: String(coin.price) }];
          });
          return json(200, rows);
        }
        return notFound();
      }
      case 'Binance': {
        const markets = (): string[] | undefined => {
          try {
            if (query.symbols !== undefined) {
              const parsed: unknown = JSON.parse(query.symbols);
              return Array.isArray(parsed) ? parsed.map(String) : undefined;
            }
            return query.symbol !== undefined ? [query.symbol] : coins.map((coin) => coin.id);
          } catch {
            return undefined;
          }
        };
        const wanted = markets();
        // One unlisted market fails the whole request (notes D.10).
        if (!wanted || wanted.some((market) => !coins.some((coin) => coin.id === market))) return json(400, { code: -1121, msg: 'Invalid symbol.' });
        const selected = wanted.map((market) => coins.find((coin) => coin.id === market)!);
        if (path === '/api/v3/exchangeInfo') {
          return json(200, {
            timezone: 'UTC',
            serverTime: 1727049751000,
            rateLimits: [],
            exchangeFilters: [],
            symbols: selected.map((coin) => ({ symbol: coin.id, status: coin.status, baseAsset: coin.symbol, quoteAsset: coin.id.slice(coin.symbol.length) })),
          });
        }
        if (path === '/api/v3/ticker/price') {
          return json(200, selected.filter(priced).map((coin) => ({ symbol: coin.id, price: coin.price.toFixed(8) })));
        }
        return notFound();
      }
    }
  };

  /** A realistic error body for a forced status. */
  const failureBody = (source: SourceName, status: number): unknown => {
    if (source === 'Binance' && status === 451) {
      return { code: 0, msg: "Service unavailable from a restricted location according to 'b. Eligibility' in https://www.binance.com/en/terms." };
    }
    if (source === 'Coinmarketcap') {
      const code = status === 429 ? 1008 : status === 401 ? 1001 : status;
      return { status: { error_code: code, error_message: status === 429 ? "You've exceeded your API Key's HTTP request rate limit." : 'Fake failure.' } };
    }
    if (source === 'Coingecko' && status === 429) {
      return { status: { error_code: 429, error_message: "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits." } };
    }
    if (source === 'CryptoCompare' && status === 401) {
      return { Err: { message: 'API key required, please refer to the documentation at https://developers.coindesk.com/' } };
    }
    return { error: `fake ${source} failure` };
  };

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, Math.max(0, Math.min(ms, MAX_HOLD_MS)));
    // A forgotten close() must not keep the test process alive for the whole hold.
    timer.unref();
    timers.add(timer);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const source = (Object.keys(PREFIX) as SourceName[]).find(
      (name) => url.pathname === PREFIX[name] || url.pathname.startsWith(`${PREFIX[name]}/`),
    );
    const send = (status: number, text: string, type = 'application/json'): void => {
      if (res.writableEnded || res.destroyed) return;
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (!source) {
      send(404, JSON.stringify({ error: 'unknown source prefix' }));
      return;
    }
    const s = state(source);
    const path = url.pathname.slice(PREFIX[source].length) || '/';
    const query = Object.fromEntries(url.searchParams);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name.toLowerCase()] = value;
    s.log.push({ method: req.method ?? 'GET', path, query, headers });

    const respond = (): void => {
      if (s.fail === 'timeout') {
        // Hang until the client gives up (its socket closes) or the bound passes.
        later(MAX_HOLD_MS, () => send(504, JSON.stringify({ error: 'fake timeout' })));
        return;
      }
      if (s.fail === 'badjson') {
        send(200, '{"this is": not json', 'application/json');
        return;
      }
      if (typeof s.fail === 'number') {
        send(s.fail, JSON.stringify(failureBody(source, s.fail)));
        return;
      }
      const override = s.overrides.get(path);
      const result = override ?? answer(source, path, query, headers);
      send(result.status, typeof result.body === 'string' ? result.body : JSON.stringify(result.body));
    };
    if (s.delayMs > 0) later(s.delayMs, respond);
    else respond();
  };

  const server = createServer(handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  return {
    origin,
    baseUrlFor: (source) => `${origin}${PREFIX[source]}${ENDPOINT[source] ?? ''}`,
    setPrice(source, symbol, price) {
      const s = state(source);
      const upper = symbol.toUpperCase();
      const matching = s.coins.filter((coin) => coin.symbol === upper);
      if (matching.length === 0) {
        if (price === null) return;
        s.coins.push({ ...defaultCoin(source, upper, s.coins.length + 1), price });
        return;
      }
      for (const coin of matching) coin.price = price;
    },
    addCoin(source, coin) {
      const s = state(source);
      s.coins = s.coins.filter((existing) => existing.id !== coin.id);
      s.coins.push({ ...defaultCoin(source, coin.symbol, s.coins.length + 1), ...coin });
    },
    failSource: (source, mode) => {
      state(source).fail = mode;
    },
    delaySource: (source, ms) => {
      state(source).delayMs = Math.max(0, Math.min(ms, MAX_HOLD_MS));
    },
    setApiKey: (source, key) => {
      state(source).apiKey = key;
    },
    setResponse(source, path, response) {
      if (response === null) state(source).overrides.delete(path);
      else state(source).overrides.set(path, response);
    },
    requests: (source) => [...state(source).log],
    clearRequests() {
      for (const s of states.values()) s.log = [];
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------------------------------------

export interface RecordedCall {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/**
 * The service's own HttpJsonClient (storage/rates/http-json.fetch.ts), so tests exercise the production transport and
 * its error contract (UpstreamTimeoutError, UpstreamRequestError). `maxTimeoutMs` shortens the connectors' 10–20 s
 * timeouts so timeout tests stay fast; `calls` records what the connector asked for, before shortening.
 */
export function createFetchJsonClient(options: { maxTimeoutMs?: number } = {}): HttpJsonClient & { readonly calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const client = fetchJsonClient(systemClock);
  return {
    calls,
    getJson(url, request) {
      calls.push({ url, headers: { ...request.headers }, timeoutMs: request.timeoutMs });
      return client.getJson(url, { ...request, timeoutMs: Math.min(request.timeoutMs, options.maxTimeoutMs ?? request.timeoutMs) });
    },
  };
}

/** A SourceContext over a fresh fetch client, collecting the warnings a connector raises. */
export function createTestContext(options: { maxTimeoutMs?: number; signal?: AbortSignal } = {}): {
  readonly ctx: SourceContext;
  readonly warnings: string[];
  readonly client: ReturnType<typeof createFetchJsonClient>;
} {
  const warnings: string[] = [];
  const client = createFetchJsonClient(options.maxTimeoutMs === undefined ? {} : { maxTimeoutMs: options.maxTimeoutMs });
  const ctx: SourceContext = { http: client, signal: options.signal ?? new AbortController().signal, warn: (message) => warnings.push(message) };
  return { ctx, warnings, client };
}
