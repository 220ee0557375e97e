// The rates service as a benchmark's own process, its fake upstream world and a generated history: shared by
// `npm run bench -- rates` and `npm run bench -- scale` (the rates part).

import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeUpstreams } from '../../test/rates/fakes/upstreams.js';
import { prng } from '../../test/support/random.js';
import { openSqliteHistory } from '../../storage/rates/history.sqlite.js';
import type { SourceName } from '../../src/rates/types.js';
import { freePort } from './files-node.js';
import { getJson } from './http-json.js';
import { memoryOf, spawnTracked, type ManagedProcess } from './processes.js';
import { fmt, fmtInt } from './stats.js';

/** The history of `npm run bench -- rates`: 100,000 snapshots. */
export const HISTORY_SNAPSHOTS = 100_000;
export const HISTORY_BATCH = 1_000;
/** 10 minutes between generated snapshots: the default refreshInterval of the original. */
export const HISTORY_STEP_MS = 10 * 60_000;
const READY_TIMEOUT_MS = 60_000;
/** How long a setup check or a sample request (not a measurement) may wait for its answer. */
export const JSON_TIMEOUT_MS = 30_000;

const DIST = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(DIST, 'src', 'cli.js');
const POLYFILL = join(DIST, 'src', 'polyfill.js');

// ---------------------------------------------------------------------------------------------
// A realistic upstream world: ~30 coins over three crypto sources, fiat over two.

/** USD per unit. */
export const CRYPTO: ReadonlyArray<readonly [string, number]> = [
  ['BTC', 64_250], ['ETH', 3_150], ['USDT', 1], ['BNB', 580], ['SOL', 145], ['XRP', 0.52], ['USDC', 1], ['ADA', 0.38],
  ['DOGE', 0.12], ['TRX', 0.16], ['TON', 5.4], ['DOT', 4.3], ['MATIC', 0.41], ['LTC', 66], ['SHIB', 0.0000142],
  ['AVAX', 26], ['LINK', 11.5], ['BCH', 330], ['XLM', 0.095], ['ATOM', 4.6], ['XMR', 165], ['ETC', 19], ['FIL', 3.6],
  ['APT', 6.8], ['NEAR', 4.9], ['ARB', 0.55], ['OP', 1.6], ['DASH', 24], ['ZEC', 35], ['ADM', 0.031],
];
/** USD per unit. */
export const FIAT: ReadonlyArray<readonly [string, number]> = [
  ['USD', 1], ['EUR', 1.09], ['RUB', 0.0108], ['GBP', 1.28], ['JPY', 0.0067], ['CNY', 0.138], ['CHF', 1.13], ['CAD', 0.73],
  ['AUD', 0.66], ['INR', 0.012], ['KRW', 0.00073], ['TRY', 0.029], ['BRL', 0.18], ['AED', 0.272], ['SGD', 0.74],
];
export const BASE_COINS = ['USD', 'EUR', 'RUB', 'BTC', 'ETH'];
const CRYPTO_SOURCES: readonly SourceName[] = ['CoinPaprika', 'CoinLore', 'Binance'];
const FIAT_SOURCES: readonly SourceName[] = ['CurrencyApi', 'ExchangeRateApi'];

/** Coins each crypto source advertises: CoinPaprika all, CoinLore 25, Binance 20 (no USDT market on Binance). */
export function coinsOf(source: SourceName): string[] {
  const symbols = CRYPTO.map(([symbol]) => symbol);
  if (source === 'CoinLore') return symbols.slice(0, 25);
  if (source === 'Binance') return symbols.filter((s) => s !== 'USDT').slice(0, 20);
  return symbols;
}

export function seedUpstreams(fakes: FakeUpstreams): void {
  const random = prng(42);
  for (const source of CRYPTO_SOURCES) {
    // Sources disagree by up to ±0.5%: one price group per pair, as on a quiet market.
    for (const [symbol, usd] of CRYPTO.filter(([s]) => coinsOf(source).includes(s))) fakes.setPrice(source, symbol, usd * (1 + (random() - 0.5) / 100));
  }
  for (const source of FIAT_SOURCES) for (const [symbol, usd] of FIAT) fakes.setPrice(source, symbol, usd * (1 + (random() - 0.5) / 1000));
}

export function ratesConfig(fakes: FakeUpstreams, port: number, sqlitePath: string): Record<string, unknown> {
  return {
    name: 'Currencyinfo',
    decimals: 12,
    strategy: 'priority',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 2,
    priorities: ['CoinPaprika', 'CoinLore', 'Binance', 'ExchangeRateApi', 'CurrencyApi'],
    // One cycle at startup, then none for an hour: no refresh runs during the measurements.
    refreshInterval: 60,
    rateLifetime: 120,
    server: { port, sqlite: { path: sqlitePath } },
    log_level: 'warn',
    base_coins: BASE_COINS,
    currency_api: { enabled: true, url: fakes.baseUrlFor('CurrencyApi'), codes: FIAT.map(([s]) => s) },
    exchange_rate_api: { enabled: true, url: fakes.baseUrlFor('ExchangeRateApi'), codes: FIAT.map(([s]) => s) },
    coinpaprika: { enabled: true, url: fakes.baseUrlFor('CoinPaprika'), coins: coinsOf('CoinPaprika') },
    coinlore: { enabled: true, url: fakes.baseUrlFor('CoinLore'), coins: coinsOf('CoinLore') },
    binance: { enabled: true, url: fakes.baseUrlFor('Binance'), coins: coinsOf('Binance') },
  };
}

// ---------------------------------------------------------------------------------------------
// The service as a process.

export interface Service {
  readonly process: ManagedProcess;
  readonly port: number;
  readonly startupMs: number;
}

export async function startService(name: string, dir: string, fakes: FakeUpstreams, sqlitePath: string): Promise<Service> {
  const port = await freePort();
  const configPath = join(dir, `${name}.config.json`);
  writeFileSync(configPath, JSON.stringify(ratesConfig(fakes, port, sqlitePath), null, 2));
  const started = Date.now();
  // A minimal environment: no ADMIN_PORT (operator listener off), no CURRENCYINFO_CONFIG.
  const managed = spawnTracked(name, process.execPath, ['--import', POLYFILL, CLI, 'rates', '--config', configPath, '--host', '127.0.0.1'], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (managed.exited()) throw new Error(`${name} exited before its first snapshot:\n${managed.tail()}`);
    if (Date.now() > deadline) throw new Error(`${name} not ready within ${READY_TIMEOUT_MS} ms:\n${managed.tail()}`);
    try {
      const { body } = await getJson(port, '/status', JSON_TIMEOUT_MS);
      if (body?.ready === true && body?.updating === false) break;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { process: managed, port, startupMs: Date.now() - started };
}

export function memoryLine(service: Service): string {
  const memory = memoryOf(service.process.pid);
  return memory ? `peak RSS (VmHWM) ${fmt(memory.peakMiB, 1)} MiB, current RSS ${fmt(memory.rssMiB, 1)} MiB` : 'RSS not available (no /proc)';
}

// ---------------------------------------------------------------------------------------------
// A generated history.

/** 30 pairs: the 25 largest coins against USD, and BTC against 5 fiat. */
export function historyPairs(): string[] {
  const pairs = CRYPTO.slice(0, 25).map(([s]) => `${s}/USD`);
  for (const fiat of ['EUR', 'RUB', 'GBP', 'JPY', 'CNY']) pairs.push(`BTC/${fiat}`);
  return pairs;
}

export async function generateHistory(
  path: string,
  endMs: number,
  snapshots = HISTORY_SNAPSHOTS,
  say: (line: string) => void = () => {},
): Promise<{ firstMs: number; lastMs: number; seconds: number; bytes: number }> {
  const pairs = historyPairs();
  const random = prng(7);
  const start = CRYPTO.map(([, usd]) => usd);
  const price = pairs.map((pair, i) => (i < 25 ? start[i]! : 60_000 * (1 + i / 10)));
  const firstMs = endMs - (snapshots - 1) * HISTORY_STEP_MS;
  const store = openSqliteHistory(path);
  const started = Date.now();
  try {
    for (let batchStart = 0; batchStart < snapshots; batchStart += HISTORY_BATCH) {
      const batch: Array<{ date: number; tickers: Record<string, number> }> = [];
      for (let i = batchStart; i < Math.min(snapshots, batchStart + HISTORY_BATCH); i++) {
        const tickers: Record<string, number> = {};
        for (let p = 0; p < pairs.length; p++) {
          price[p] = price[p]! * (1 + (random() - 0.5) / 200); // a random walk, ±0.25% a step
          tickers[pairs[p]!] = Number(price[p]!.toPrecision(12));
        }
        batch.push({ date: firstMs + i * HISTORY_STEP_MS, tickers });
      }
      store.appendMany(batch);
      const done = batchStart + batch.length;
      if (Math.floor((done * 10) / snapshots) > Math.floor(((done - batch.length) * 10) / snapshots)) say(`  ${fmtInt(done)} / ${fmtInt(snapshots)} snapshots, ${fmt((Date.now() - started) / 1000, 1)} s`);
    }
  } finally {
    await store.close();
  }
  let bytes = 0;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      bytes += statSync(path + suffix).size;
    } catch {
      // No such side file.
    }
  }
  return { firstMs, lastMs: endMs, seconds: (Date.now() - started) / 1000, bytes };
}
