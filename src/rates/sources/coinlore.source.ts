// CoinLore: keyless crypto quotes in USD, notes/rates.md D.9.
// Startup, only for symbols without an explicit id: `GET {base}/api/assets/` → `{"data":[{"id":"90","symbol":"BTC","rank":1,…}]}`.
// Each cycle: `GET {base}/api/ticker/?id=90,80,33250` (at most 100 ids per request) → a bare array whose
// numbers arrive as strings: `[{"id":"90","symbol":"BTC","price_usd":"81520.59",…}]`.

import type { CoinLoreBlock, ConnectorOptions } from '../config.js';
import type { Quote } from '../types.js';
import { SourceFetchError, type HttpJsonResponse, type SourceConnector, type SourceContext } from './source.js';

const NAME = 'CoinLore';
export const COINLORE_DEFAULT_URL = 'https://api.coinlore.net';
/** Per-request timeout of a cycle (notes F.21). */
const TIMEOUT_MS = 10_000;
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
  let lastMissing = '';

  const connector: SourceConnector = {
    name: NAME,
    weight: block.weight,
    advertisedCoins: () => (coins ? [...coins.keys()] : [...new Set([...explicit.keys(), ...pending])]),
    async discover(ctx) {
      const resolved = new Map(explicit);
      // A fully populated `ids` map costs no directory request at all (notes D.9).
      if (pending.length > 0) {
        const response = await request(ctx, `${base}/api/assets/`, DIRECTORY_TIMEOUT_MS, { 'Accept-Encoding': 'gzip' });
        if (response.status < 200 || response.status > 299) throw new SourceFetchError(NAME, `HTTP ${response.status} from the asset directory`, response.status);
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
        const response = await request(ctx, `${base}/api/ticker/?id=${chunk.map(encodeURIComponent).join(',')}`, TIMEOUT_MS);
        if (response.status < 200 || response.status > 299) throw new SourceFetchError(NAME, `HTTP ${response.status}`, response.status);
        if (!Array.isArray(response.body)) throw new SourceFetchError(NAME, 'the ticker answer is not an array', response.status);
        for (const row of response.body as TickerRow[]) {
          if (row && typeof row === 'object' && row.id !== undefined) rows.set(String(row.id), row);
        }
      }

      const quotes: Quote[] = [];
      const missing: string[] = [];
      for (const [symbol, id] of entries) {
        const row = rows.get(id);
        // CoinLore reassigns ids between listings: a row is trusted only while it still carries the symbol.
        if (row && (typeof row.symbol !== 'string' || row.symbol.toUpperCase() !== symbol)) {
          missing.push(`${symbol} (id ${id} answered another symbol; check 'coinlore.ids')`);
          continue;
        }
        const price = Number(row?.price_usd);
        const value = Number.isFinite(price) && price > 0 ? Number(price.toFixed(options.decimals)) : NaN;
        if (value > 0) quotes.push({ pair: `${symbol}/USD`, price: value });
        else missing.push(symbol);
      }
      // Warn when the set of missing coins changes, not every cycle: notifications are not throttled elsewhere.
      const key = missing.join(',');
      if (key !== '' && key !== lastMissing) ctx.warn(`${NAME} has no rate for: ${missing.join(', ')}.`);
      lastMissing = key;
      return quotes;
    },
  };
  return connector;
}

async function request(ctx: SourceContext, url: string, timeoutMs: number, headers?: Record<string, string>): Promise<HttpJsonResponse> {
  try {
    return await ctx.http.getJson(url, { ...(headers ? { headers } : {}), timeoutMs, signal: ctx.signal });
  } catch (error) {
    throw new SourceFetchError(NAME, transportFailure(error, ctx.signal, timeoutMs));
  }
}

/** Described by kind only: a client's own error text may quote the request. */
function transportFailure(error: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return 'request aborted';
  const name = error instanceof Error ? error.name : 'Error';
  if (/timeout/i.test(name)) return `no answer within ${timeoutMs} ms`;
  const loose = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = loose?.cause?.code ?? loose?.code;
  return `request failed (${typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : name})`;
}
