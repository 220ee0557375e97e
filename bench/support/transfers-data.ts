// 1,000,000 generated `public.ethtxs` rows for the transfers benchmark, shaped like a real chain as the indexer
// stores it (docs/notes/transfers-console.md A.1–A.2):
//
// - blocks ascending, 2–100 transfers each, every row of a block sharing its `time` (12 s apart);
// - addresses EIP-55 mixed case (toChecksumAddress, as the indexer writes them), drawn from three populations:
//   a dozen hot addresses (exchanges: Zipf-weighted, up to ~100k rows each), a few hundred of medium popularity
//   (~1,000 rows each: what the benchmark queries), and a long tail of 250,000 addresses with a few rows each;
// - ~30% ERC-20 transfers over 20 token contracts (Zipf: the first carries about a quarter of them): `txto` the
//   contract, `contract_to` 24 zeros + the 40-hex recipient (lowercase, as sliced from calldata), `contract_value`
//   the 64-hex amount, `value` 0; native rows have both contract columns ''.
//
// Deterministic (seeded PRNG): every run loads the same rows. Loaded in batches with one INSERT … SELECT FROM
// unnest(…) each (the indexer's statement), with the table's indexes dropped during the load and created again from
// their own definitions (same names), then VACUUM ANALYZE.

import { toChecksumAddress } from '../../src/transfers/rows.js';
import type { SqlClient } from '../../storage/transfers/sql-client.js';
import { prng } from '../../test/support/random.js';
import { randomHex } from './transfers-chain.js';

export interface DataPlan {
  readonly rows: number;
  readonly seed: number;
  /** Rows per INSERT statement. */
  readonly batchRows: number;
}

/** Populations and their shares of the address slots (sender, recipient). */
const HOT_ADDRESSES = 12;
const MEDIUM_ADDRESSES = 400;
const TAIL_ADDRESSES = 250_000;
const HOT_SHARE = 0.2;
const MEDIUM_SHARE = 0.2;
const TOKENS = 20;
const TOKEN_SHARE = 0.3;
const FIRST_BLOCK = 15_000_000;
const FIRST_TIME = 1_650_000_000;
const BLOCK_SECONDS = 12;
const MIN_BLOCK_TXS = 2;
const MAX_BLOCK_TXS = 100;
/** Connections building the indexes at once (the client passed in must allow this many). */
export const INDEX_BUILDERS = 2;

export interface GeneratedWorld {
  readonly hot: readonly string[];
  /** Medium-popularity addresses, checksummed: the benchmark's query subjects. */
  readonly medium: readonly string[];
  /** Token contracts, most used first. */
  readonly tokens: readonly string[];
}

export interface LoadReport {
  readonly rows: number;
  readonly blocks: number;
  readonly tokenRows: number;
  readonly generateMs: number;
  readonly insertMs: number;
  readonly indexMs: number;
  readonly vacuumMs: number;
  readonly indexes: readonly string[];
  readonly tableBytes: number;
  readonly indexBytes: number;
}

/** Cumulative weights of a Zipf(1) distribution over n ranks. */
function zipfCumulative(n: number): Float64Array {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cumulative[i] = sum += 1 / (i + 1);
  for (let i = 0; i < n; i++) cumulative[i]! /= sum;
  return cumulative;
}

function pickCumulative(cumulative: Float64Array, r: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < r) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Columns {
  time: number[];
  txfrom: string[];
  txto: string[];
  gas: string[];
  gasprice: string[];
  block: number[];
  txhash: string[];
  value: string[];
  contract_to: string[];
  contract_value: string[];
}

const emptyColumns = (): Columns => ({ time: [], txfrom: [], txto: [], gas: [], gasprice: [], block: [], txhash: [], value: [], contract_to: [], contract_value: [] });

/**
 * Generates and loads `plan.rows` rows into an empty, migrated `public.ethtxs`. `progress` gets a line now and then.
 */
export async function loadTransfers(db: SqlClient, plan: DataPlan, progress: (text: string) => void): Promise<{ world: GeneratedWorld; report: LoadReport }> {
  const random = prng(plan.seed);
  const generateStarted = Date.now();
  const address = () => toChecksumAddress(`0x${randomHex(random, 40)}`);
  const hot = Array.from({ length: HOT_ADDRESSES }, address);
  const medium = Array.from({ length: MEDIUM_ADDRESSES }, address);
  const tail = Array.from({ length: TAIL_ADDRESSES }, address);
  const tokens = Array.from({ length: TOKENS }, address);
  const hotWeights = zipfCumulative(HOT_ADDRESSES);
  const tokenWeights = zipfCumulative(TOKENS);
  let generateMs = Date.now() - generateStarted;

  const pickAddress = (): string => {
    const r = random();
    if (r < HOT_SHARE) return hot[pickCumulative(hotWeights, random())]!;
    if (r < HOT_SHARE + MEDIUM_SHARE) return medium[Math.floor(random() * MEDIUM_ADDRESSES)]!;
    return tail[Math.floor(random() * TAIL_ADDRESSES)]!;
  };

  // The indexes go during the load (a sorted build is far cheaper than 1M random citext inserts into 8 btrees).
  const indexes = (await db.query(`SELECT indexname::text AS name, indexdef::text AS def FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'ethtxs' ORDER BY indexname`)).map(
    (row) => ({ name: String(row.name), def: String(row.def) }),
  );
  for (const index of indexes) await db.query(`DROP INDEX public."${index.name}"`);

  let insertMs = 0;
  let produced = 0;
  let blocks = 0;
  let tokenRows = 0;
  let block = FIRST_BLOCK;
  let lastReport = Date.now();
  while (produced < plan.rows) {
    const g0 = Date.now();
    const columns = emptyColumns();
    while (columns.time.length < plan.batchRows && produced + columns.time.length < plan.rows) {
      const count = Math.min(MIN_BLOCK_TXS + Math.floor(random() * (MAX_BLOCK_TXS - MIN_BLOCK_TXS + 1)), plan.rows - produced - columns.time.length);
      const time = FIRST_TIME + (block - FIRST_BLOCK) * BLOCK_SECONDS;
      // Gas prices move slowly from block to block: one base per block, a tip per tx.
      const baseGwei = 5 + Math.floor(random() * 60);
      for (let i = 0; i < count; i++) {
        const isToken = random() < TOKEN_SHARE;
        const from = pickAddress();
        const to = pickAddress();
        columns.time.push(time);
        columns.txfrom.push(from);
        columns.block.push(block);
        columns.txhash.push(`0x${randomHex(random, 64)}`);
        columns.gasprice.push(((BigInt(baseGwei) * 1_000_000_000n) + BigInt(Math.floor(random() * 3_000_000_000))).toString());
        if (isToken) {
          columns.txto.push(tokens[pickCumulative(tokenWeights, random())]!);
          columns.gas.push(String(34_000 + Math.floor(random() * 30_000)));
          columns.value.push('0');
          columns.contract_to.push(`000000000000000000000000${to.slice(2).toLowerCase()}`);
          // Amounts from 10^-6 to 10^6 tokens of 18 decimals: up to ~2^80, zero-padded to one word.
          columns.contract_value.push(randomHex(random, 4 + Math.floor(random() * 16)).padStart(64, '0'));
          tokenRows++;
        } else {
          columns.txto.push(to);
          columns.gas.push(random() < 0.9 ? '21000' : String(21_000 + Math.floor(random() * 40_000)));
          // Wei amounts spanning 10^12 … 10^22 (beyond 2^53: numeric, not a JS number).
          columns.value.push((BigInt(Math.floor(random() * 1_000_000_000)) * 10n ** BigInt(3 + Math.floor(random() * 11))).toString());
          columns.contract_to.push('');
          columns.contract_value.push('');
        }
      }
      block++;
      blocks++;
    }
    generateMs += Date.now() - g0;
    const i0 = Date.now();
    await db.query(
      `INSERT INTO public.ethtxs ("time", txfrom, txto, gas, gasprice, block, txhash, value, contract_to, contract_value)
       SELECT * FROM unnest($1::integer[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::integer[], $7::text[],
                            $8::numeric[], $9::text[], $10::text[])`,
      [columns.time, columns.txfrom, columns.txto, columns.gas, columns.gasprice, columns.block, columns.txhash, columns.value, columns.contract_to, columns.contract_value],
    );
    insertMs += Date.now() - i0;
    produced += columns.time.length;
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      progress(`  … ${produced.toLocaleString('en-US')} rows loaded`);
    }
  }

  // The builds are CPU-bound (citext comparisons): one per connection on `INDEX_BUILDERS` connections, each
  // single-threaded, keeps every core busy with less overhead than PostgreSQL's parallel build workers.
  progress(`  … ${produced.toLocaleString('en-US')} rows loaded; building ${indexes.length} indexes`);
  const x0 = Date.now();
  const queue = [...indexes];
  await Promise.all(
    Array.from({ length: Math.min(INDEX_BUILDERS, queue.length) }, () =>
      db.transaction(async (tx) => {
        // Settings for the builds only (SET LOCAL ends with the transaction).
        await tx.query(`SET LOCAL maintenance_work_mem = '256MB'`);
        await tx.query('SET LOCAL max_parallel_maintenance_workers = 0');
        for (let index = queue.shift(); index !== undefined; index = queue.shift()) await tx.query(index.def);
      }),
    ),
  );
  const indexMs = Date.now() - x0;
  progress(`  … indexes built in ${((Date.now() - x0) / 1000).toFixed(1)} s; VACUUM ANALYZE`);
  const v0 = Date.now();
  await db.exec('VACUUM (ANALYZE) public.ethtxs');
  const vacuumMs = Date.now() - v0;
  const [size] = await db.query(`SELECT pg_table_size('public.ethtxs')::text AS t, pg_indexes_size('public.ethtxs')::text AS i`);
  return {
    world: { hot, medium, tokens },
    report: {
      rows: produced,
      blocks,
      tokenRows,
      generateMs,
      insertMs,
      indexMs,
      vacuumMs,
      indexes: indexes.map((index) => index.name),
      tableBytes: Number(size?.t ?? NaN),
      indexBytes: Number(size?.i ?? NaN),
    },
  };
}
