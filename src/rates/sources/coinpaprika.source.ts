// CoinPaprika: keyless crypto quotes, docs/notes/rates.md D.8.
// Startup: `GET {base}/v1/coins` (the whole directory) resolves ids and ranks. Each cycle: one ranked bulk call
// `GET {base}/v1/tickers?quotes=USD&limit=<bulk_limit>` plus `GET {base}/v1/tickers/{id}?quotes=USD` per coin
// outside the bulk range, because CoinPaprika has no batch-by-ids ticker endpoint.

import type { CoinPaprikaBlock, ConnectorOptions } from '../config.js';
import { isRecord } from '../../is-record.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, httpStatusError, isOk, requireOk, roundPrice, upstreamRequest, upstreamValue } from './upstream-request.js';

const NAME = 'CoinPaprika';
export const COINPAPRIKA_DEFAULT_URL = 'https://api.coinpaprika.com';
/** The directory is ~7 MB uncompressed and read once per start, so it gets longer. */
const DIRECTORY_TIMEOUT_MS = 20_000;
/** Both large payloads are asked for compressed (notes D.8). */
const GZIP = { 'Accept-Encoding': 'gzip' };

interface DirectoryEntry {
  id: string;
  symbol: string;
  rank: number;
  is_active: boolean;
}

interface PaprikaCoin {
  readonly symbol: string;
  readonly id: string;
  /** Inside the ranked bulk window: priced by the bulk call. */
  readonly bulk: boolean;
}

interface TickerRow {
  id?: unknown;
  symbol?: unknown;
  quotes?: { USD?: { price?: unknown } };
}

/** CoinPaprika reports unranked coins as rank 0. */
const rankOrder = (rank: number): number => (Number.isFinite(rank) && rank > 0 ? rank : Number.POSITIVE_INFINITY);

export function createCoinPaprikaConnector(block: CoinPaprikaBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? COINPAPRIKA_DEFAULT_URL).replace(/\/+$/, '');
  let coins: PaprikaCoin[] | undefined;
  const report = coinWarnings();

  const connector: SourceConnector = {
    name: NAME,
    weight: block.weight,
    // Ids name no symbol until the directory has been read.
    advertisedCoins: () => (coins ? coins.map((coin) => coin.symbol) : [...block.coins]),
    async discover(ctx) {
      const response = await upstreamRequest(NAME, ctx, `${base}/v1/coins`, { timeoutMs: DIRECTORY_TIMEOUT_MS, headers: GZIP });
      requireOk(NAME, response, 'from the coin directory');
      if (!Array.isArray(response.body)) throw new SourceFetchError(NAME, 'the coin directory is not an array', response.status);
      const directory = (response.body as unknown[]).filter(
        (item): item is DirectoryEntry =>
          typeof (item as DirectoryEntry)?.id === 'string' && typeof (item as DirectoryEntry)?.symbol === 'string',
      );
      const byId = new Map(directory.map((entry) => [entry.id, entry]));
      const chosen = new Map<string, DirectoryEntry>(); // symbol → entry

      // Explicit ids win over symbols: symbols are ambiguous (ADM matches two active coins).
      for (const id of block.ids) {
        const entry = byId.get(id);
        if (!entry) {
          ctx.warn(`Unable to get ticker for ${NAME} id '${id}'. Check if the coin exists.`);
          continue;
        }
        const symbol = entry.symbol.toUpperCase();
        const taken = chosen.get(symbol);
        if (taken) {
          // Both would emit the same pair and the later price would silently win: keep the first.
          if (taken.id !== id) ctx.warn(`Skipping ${NAME} id '${id}': symbol ${symbol} is already served by '${taken.id}'. Remove one of them from 'coinpaprika.ids'.`);
          continue;
        }
        chosen.set(symbol, entry);
      }
      for (const symbol of block.coins) {
        if (chosen.has(symbol)) continue;
        // Delisted coins keep their symbol forever, so only active ones are candidates.
        const candidates = directory
          .filter((entry) => entry.symbol.toUpperCase() === symbol && entry.is_active === true)
          .sort((a, b) => rankOrder(a.rank) - rankOrder(b.rank) || a.id.localeCompare(b.id));
        if (candidates.length === 0) {
          ctx.warn(`Unable to get ticker for ${NAME} symbol '${symbol}'. Check if the coin exists.`);
          continue;
        }
        if (candidates.length > 1) {
          const list = candidates.map((entry) => `${entry.id} (rank ${rankOrder(entry.rank) === Infinity ? 'unranked' : entry.rank})`).join(', ');
          ctx.warn(`Ambiguous ${NAME} symbol '${symbol}' matches ${candidates.length} active coins: ${list}. Picking the best ranked one; use 'coinpaprika.ids' to choose explicitly.`);
        }
        chosen.set(symbol, candidates[0]!);
      }

      // Admission: the bulk window is free, each coin outside it costs one call per cycle.
      const admitted: PaprikaCoin[] = [];
      const excluded: string[] = [];
      let individual = 0;
      for (const [symbol, entry] of chosen) {
        const bulk = rankOrder(entry.rank) <= block.bulk_limit;
        if (!bulk) {
          if (individual >= block.max_individual_requests) {
            excluded.push(symbol);
            continue;
          }
          individual += 1;
        }
        admitted.push({ symbol, id: entry.id, bulk });
      }
      if (excluded.length > 0) {
        ctx.warn(
          `${NAME} coins ranked outside 'coinpaprika.bulk_limit' (${block.bulk_limit}) exceed 'coinpaprika.max_individual_requests' (${block.max_individual_requests}); excluded: ${excluded.join(', ')}.`,
        );
      }
      if (admitted.length === 0) throw new SourceFetchError(NAME, 'none of the configured coins or ids could be admitted');
      coins = admitted;
    },
    async fetch(ctx) {
      if (!coins) await connector.discover!(ctx);
      const admitted = coins!;
      const prices = new Map<string, number>(); // id → price
      const rejected = new Set<string>(); // ids whose row carried another symbol
      /** This cycle's per-coin warnings, in the original's texts (4.2 coinpaprika.ts). */
      const problems: string[] = [];

      const take = (row: TickerRow | undefined, coin: PaprikaCoin): void => {
        if (!row) return;
        // A row for another coin (a renamed or recycled id) must never be emitted under this symbol.
        if (typeof row.symbol !== 'string' || row.symbol.toUpperCase() !== coin.symbol) {
          rejected.add(coin.id);
          problems.push(`Skipping ${NAME} ticker '${upstreamValue(row.id)}': expected symbol ${coin.symbol}, got '${upstreamValue(row.symbol)}'.`);
          return;
        }
        const price = row.quotes?.USD?.price;
        if (typeof price === 'number' && Number.isFinite(price) && price > 0) prices.set(coin.id, price);
      };

      const bulkCoins = admitted.filter((coin) => coin.bulk);
      if (bulkCoins.length > 0) {
        const response = await upstreamRequest(NAME, ctx, `${base}/v1/tickers?quotes=USD&limit=${block.bulk_limit}`, { headers: GZIP });
        requireOk(NAME, response);
        if (!Array.isArray(response.body)) throw new SourceFetchError(NAME, 'the ticker list is not an array', response.status);
        const rows = new Map<unknown, TickerRow>();
        // A malformed row (null, a bare value) names no coin: it can only leave its own coin missing.
        for (const row of response.body as TickerRow[]) if (isRow(row)) rows.set(row.id, row);
        // Every admitted coin is looked up: a rank can drift into the window since startup.
        for (const coin of admitted) take(rows.get(coin.id), coin);
      }

      // Coins outside the window first, then bulk coins the bulk answer lacked; never more calls than allowed.
      const pending = [...admitted.filter((coin) => !coin.bulk), ...bulkCoins].filter((coin) => !prices.has(coin.id) && !rejected.has(coin.id));
      if (pending.length > block.max_individual_requests) {
        const skipped = pending.slice(block.max_individual_requests).map((coin) => coin.symbol);
        problems.push(
          `${NAME} needs ${pending.length} individual ticker requests, which exceeds the 'coinpaprika.max_individual_requests' limit of ${block.max_individual_requests}. Skipping: ${skipped.join(', ')}.`,
        );
      }
      let answered = 0;
      let lastFailure: SourceFetchError | undefined;
      for (const coin of pending.slice(0, block.max_individual_requests)) {
        // Each call stands alone: one dead id must not take the whole source down (notes D.8).
        let failure: SourceFetchError;
        try {
          const response = await upstreamRequest(NAME, ctx, `${base}/v1/tickers/${encodeURIComponent(coin.id)}?quotes=USD`);
          if (isOk(response)) {
            answered += 1;
            take(isRow(response.body) ? response.body : undefined, coin);
            continue;
          }
          failure = httpStatusError(NAME, response, `for id '${coin.id}'`);
          problems.push(`Unable to get ${NAME} ticker for id '${coin.id}'. Error: HTTP ${response.status}.`);
        } catch (error) {
          if (ctx.signal.aborted) throw error;
          // upstreamRequest rejects only with a SourceFetchError, whose message names the failure's kind, never the URL.
          failure = error as SourceFetchError;
          problems.push(`Unable to get ${NAME} ticker for id '${coin.id}'. Error: ${failure.message}.`);
        }
        lastFailure = failure;
      }
      // Nothing answered at all: that is a source failure, not a partial one.
      if (bulkCoins.length === 0 && answered === 0 && lastFailure) throw lastFailure;

      const quotes: Quote[] = [];
      const missing: string[] = [];
      for (const coin of admitted) {
        const price = prices.get(coin.id);
        const value = price === undefined ? undefined : roundPrice(price, options.decimals);
        if (value !== undefined) quotes.push({ pair: `${coin.symbol}/USD`, price: value });
        else missing.push(coin.symbol);
      }
      if (missing.length > 0) problems.push(`Unable to get ${NAME} rates against USD for: ${missing.join(', ')}.`);
      report(ctx, problems);
      return quotes;
    },
  };
  return connector;
}

const isRow = (value: unknown): value is TickerRow => isRecord(value);
