// Rounding and cross-rate triangulation of the rates merge pipeline (docs/notes/rates.md B.8, F.17, F.18).

import type { RateTable } from './types.js';

/**
 * Round to `decimals` places the way the original does (`+value.toFixed(decimals)`, notes B.8),
 * so stored values match what a 4.1 instance would have written. `decimals` is 0–100 (config E.1).
 * Non-finite input stays non-finite (NaN / ±Infinity); callers drop those.
 */
export function roundTo(value: number, decimals: number): number {
  return Number(value.toFixed(decimals));
}

/** A value worth serving: finite and not rounded away to 0 (notes F.17, later upstream documentation). */
export function isServable(value: number): boolean {
  return Number.isFinite(value) && value > 0;
}

/**
 * The original's `normalizeTickers` (notes B.8), returning a new table. For each base in config
 * order, USD-in-BASE is `USD/BASE` when present, else `1 / BASE/USD`; then every coin of
 * `baseCoins` followed by `allCoins` that has `COIN/USD` gets `COIN/BASE` unless the table already
 * holds it (direct quotes such as MOEX `EUR/RUB` win). Consequences kept on purpose for
 * compatibility (F.17): self-pairs (`BTC/BTC = 1`), `USD/BASE` only when some source quoted
 * `USD/USD`, inverse pairs rounded independently. Derived values that round to 0 or are not
 * finite are dropped. Derived pairs are appended after the direct ones (key order, F.19).
 */
export function triangulate(
  table: Readonly<RateTable>,
  baseCoins: readonly string[],
  allCoins: readonly string[],
  decimals: number,
): RateTable {
  const out: RateTable = { ...table };
  // Pair keys always contain '/', so plain indexing never hits an Object.prototype member.
  const at = (pair: string): number | undefined => out[pair];
  const coins = baseCoins.length === 0 ? allCoins : [...baseCoins, ...allCoins];
  // `COIN/USD` never changes below (the USD base can only derive pairs it already has), so read it once.
  const coinUsd = coins.map((coin) => at(`${coin}/USD`));
  for (const base of baseCoins) {
    const baseUsd = at(`${base}/USD`);
    const usdInBase = at(`USD/${base}`) || (baseUsd === undefined ? NaN : 1 / baseUsd);
    if (!usdInBase || !Number.isFinite(usdInBase)) continue;
    for (let i = 0; i < coins.length; i++) {
      const usdPrice = coinUsd[i];
      if (!usdPrice) continue;
      const key = `${coins[i]}/${base}`;
      if (at(key)) continue;
      const value = roundTo(usdInBase * usdPrice, decimals);
      if (isServable(value)) out[key] = value;
    }
  }
  return out;
}
