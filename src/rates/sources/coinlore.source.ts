// CoinLore: keyless crypto quotes in USD, docs/notes/rates.md D.9.
// Startup, only for symbols without an explicit id: `GET {base}/api/assets/` → `{"data":[{"id":"90","symbol":"BTC","rank":1,…}]}`.
// Each cycle: `GET {base}/api/ticker/?id=90,80,33250` (at most 100 ids per request) → a bare array whose
// numbers arrive as strings: `[{"id":"90","symbol":"BTC","price_usd":"81520.59",…}]`.

import type { CoinLoreBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type SourceConnector } from './source.js';
import { coinWarnings, requireOk, roundPrice, upstreamRequest, upstreamValue } from './upstream-request.js';

const NAME = 'CoinLore';
export const COINLORE_DEFAULT_URL = 'https://api.coinlore.net';
/** The asset directory (~15k rows) is read once per start, so it gets longer. */
const DIRECTORY_TIMEOUT_MS = 20_000;
/** Ids per `/api/ticker/` request (notes D.9). */
export const COINLORE_IDS_PER_REQUEST = 100;

interface Asset {
  id: string | number;
  symbol: string;
  rank?: unknown;
}

interface TickerRow {
  id?: unknown;
  symbol?: unknown;
  price_usd?: unknown;
}

const rankOrder = (rank: unknown): number => {
  const value = Number(rank);
  return Number.isFinite(value) && value > 0 ? value : Number.POSITIVE_INFINITY;
};

export function createCoinLoreConnector(block: CoinLoreBlock, options: ConnectorOptions): SourceConnector {
  const base = (block.url ?? COINLORE_DEFAULT_URL).replace(/\/+$/, '');
  const explicit = new Map(Object.entries(block.ids).map(([symbol, id]) => [symbol, String(id)]));
  const pending = block.coins.filter((symbol) => !explicit.has(symbol));
  /** Symbol → CoinLore id. */
  let coins: Map<string, string> | undefined = pending.length === 0 ? explicit : undefined;
  const report = coinWarnings();

  const connector: SourceConnector = {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => (coins ? [...coins.keys()] : [...new Set([...explicit.keys(), ...pending])]),
    async discover(ctx) {
      const resolved = new Map(explicit);
      // A fully populated `ids` map costs no directory request at all (notes D.9).
      if (pending.length > 0) {
        const response = await upstreamRequest(NAME, ctx, `${base}/api/assets/`, { timeoutMs: DIRECTORY_TIMEOUT_MS, headers: { 'Accept-Encoding': 'gzip' } });
        requireOk(NAME, response, 'from the asset directory');
        const data = (response.body as { data?: unknown } | undefined)?.data;
        if (!Array.isArray(data)) throw new SourceFetchError(NAME, "the asset directory has no 'data' array", response.status);
        const assets = data.filter(
          (item): item is Asset => typeof item?.symbol === 'string' && (typeof item?.id === 'string' || typeof item?.id === 'number'),
        );
        const unresolved: string[] = [];
        for (const symbol of pending) {
          const candidates = assets
            .filter((asset) => asset.symbol.toUpperCase() === symbol)
            .sort((a, b) => rankOrder(a.rank) - rankOrder(b.rank) || String(a.id).localeCompare(String(b.id)));
          if (candidates.length === 0) {
            unresolved.push(symbol);
            continue;
          }
          if (candidates.length > 1) {
            const list = candidates.map((asset) => `${asset.id} (rank ${rankOrder(asset.rank) === Infinity ? 'unranked' : Number(asset.rank)})`).join(', ');
            ctx.warn(`Ambiguous ${NAME} symbol '${symbol}' matches ${candidates.length} coins: ${list}. Picking the best ranked one; use 'coinlore.ids' to choose explicitly.`);
          }
          resolved.set(symbol, String(candidates[0]!.id));
        }
        if (unresolved.length > 0) ctx.warn(`Unable to resolve ${NAME} ids for ${unresolved.join(', ')}. Check if the coins exist, or set explicit ids in 'coinlore.ids'.`);
      }
      if (resolved.size === 0) throw new SourceFetchError(NAME, 'none of the configured coins has a CoinLore id');
      coins = resolved;
    },
    async fetch(ctx) {
      if (!coins) await connector.discover!(ctx);
      const entries = [...coins!];
      const ids = [...new Set(entries.map(([, id]) => id))];
      const rows = new Map<string, TickerRow>();
      for (let offset = 0; offset < ids.length; offset += COINLORE_IDS_PER_REQUEST) {
        const chunk = ids.slice(offset, offset + COINLORE_IDS_PER_REQUEST);
        const response = await upstreamRequest(NAME, ctx, `${base}/api/ticker/?id=${chunk.map(encodeURIComponent).join(',')}`);
        requireOk(NAME, response);
        if (!Array.isArray(response.body)) throw new SourceFetchError(NAME, 'the ticker answer is not an array', response.status);
        for (const row of response.body as TickerRow[]) {
          // A malformed row (null, no id) names no coin: it can only leave its own coin missing.
          if (row && typeof row === 'object' && row.id !== undefined) rows.set(String(row.id), row);
        }
      }

      const quotes: Quote[] = [];
      const missing: string[] = [];
      const problems: string[] = [];
      for (const [symbol, id] of entries) {
        const row = rows.get(id);
        // CoinLore reassigns ids between listings: a row is trusted only while it still carries the symbol.
        if (row && (typeof row.symbol !== 'string' || row.symbol.toUpperCase() !== symbol)) {
          problems.push(
            `${NAME} id ${id} returned symbol '${upstreamValue(row.symbol)}' instead of the configured '${symbol}'. Skipping the rate, check 'coinlore.ids'.`,
          );
          missing.push(symbol);
          continue;
        }
        // Prices arrive as strings ("81520.59"); an absent, empty or non-numeric one becomes NaN or 0 and is dropped.
        const price = row?.price_usd;
        const value = typeof price === 'string' || typeof price === 'number' ? roundPrice(Number(price), options.decimals) : undefined;
        if (value !== undefined) quotes.push({ pair: `${symbol}/USD`, price: value });
        else missing.push(symbol);
      }
      // The original's texts (4.2 coinlore.ts): one per stale id, then one naming every coin left out.
      if (missing.length > 0) problems.push(`Unable to get rates from ${NAME} for ${missing.join(', ')}.`);
      report(ctx, problems);
      return quotes;
    },
  };
  return connector;
}
