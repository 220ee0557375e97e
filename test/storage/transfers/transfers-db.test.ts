// The transfers database contract (storage/transfers/): migrations, the indexer's writes and cursor, the drop-in on a
// database the original indexer filled, and the anonymous read-only role, run against each backend: PGlite in
// memory and a throwaway PostgreSQL 15 cluster (test/support/postgres.ts).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TransferRow } from '../../../src/transfers/rows.js';
import { anonymousReadInTransaction, anonymousSessionSetup, listRelations, type AnonymousRead } from '../../../storage/transfers/gateway-store.js';
import { readCursor, recentBlocks, rewindTo, writeBlocks } from '../../../storage/transfers/indexer-store.js';
import { ensureAnonRole, migrate, SCHEMA_VERSION } from '../../../storage/transfers/schema.js';
import type { SqlClient } from '../../../storage/transfers/sql-client.js';
import { openPgClient } from '../../../storage/transfers/sql-client.pg.js';
import { openPgliteClient } from '../../../storage/transfers/sql-client.pglite.js';
import { startPostgres, type PostgresCluster } from '../../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../../support/system-packages.js';

const ADDRESS_A = '0x6B9247b2bB9a3E2C6d1D6e0D9bB5b4E6aB3E4D8F';
const ADDRESS_B = '0x00000000000000000000000000000000000000bB';

function row(block: number, index: number, overrides: Partial<TransferRow> = {}): TransferRow {
  return {
    time: 1_700_000_000 + block * 12,
    txfrom: ADDRESS_A,
    txto: ADDRESS_B,
    gas: '21000',
    gasprice: '1000000000',
    block,
    txhash: `0x${block.toString(16).padStart(32, '0')}${index.toString(16).padStart(32, '0')}`,
    value: '1000000000000000000000000',
    contract_to: '',
    contract_value: '',
    ...overrides,
  };
}
const hash = (n: number, fork = 'a') => `0x${fork}${n.toString(16).padStart(63, '0')}`;
const block = (n: number, rows: TransferRow[], fork = 'a') => ({ number: n, hash: hash(n, fork), parentHash: hash(n - 1, fork), rows });

interface Backend {
  readonly name: string;
  /** node:test's `skip` for this backend's suites (PostgreSQL: test/support/system-packages.ts). */
  readonly skip?: string | false;
  /** A fresh, empty database. */
  open(): Promise<{ db: SqlClient; anonymous(role: string): AnonymousRead; close(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'PGlite',
    async open() {
      const db = await openPgliteClient(undefined);
      return { db, anonymous: (role) => anonymousReadInTransaction(db, role), close: () => db.close() };
    },
  },
];
let cluster: PostgresCluster | undefined;
let databases = 0;
backends.push({
  name: 'PostgreSQL',
  skip: skipWithout(postgresServerPackage(), 'the PostgreSQL half of the transfers database contract (test/storage/transfers/transfers-db.test.ts)'),
  async open() {
    cluster ??= await startPostgres();
    const url = await cluster.createDatabase(`contract_${++databases}`);
    const db = openPgClient({ connection: { connectionString: url }, maxConnections: 2, applicationName: 'test' });
    const readers: SqlClient[] = [];
    return {
      db,
      anonymous: (role) => {
        const reader = openPgClient({ connection: { connectionString: url }, maxConnections: 1, applicationName: 'test gateway', sessionSetup: anonymousSessionSetup(role) });
        readers.push(reader);
        return (text, values) => reader.query(text, values);
      },
      close: async () => {
        await Promise.all(readers.map((reader) => reader.close()));
        await db.close();
      },
    };
  },
});
after(async () => cluster?.stop());

for (const backend of backends) {
  describe(`transfers database contract: ${backend.name}`, { skip: backend.skip ?? false }, () => {
    let opened: Awaited<ReturnType<Backend['open']>>;
    before(async () => {
      opened = await backend.open();
    });
    after(async () => opened.close());

    test('a fresh database: the ten columns in order with their types, the original index names, aval, max_block null', async () => {
      const { db } = opened;
      const report = await migrate(db, '3.0.0');
      assert.equal(report.from, 0);
      assert.equal(report.to, SCHEMA_VERSION);
      const columns = await db.query(
        `SELECT column_name::text AS name, data_type::text AS type, udt_name::text AS udt FROM information_schema.columns
          WHERE table_schema = 'public' AND table_name = 'ethtxs' ORDER BY ordinal_position`,
      );
      assert.deepEqual(
        columns.map((c) => `${c.name}:${c.type === 'USER-DEFINED' ? c.udt : c.type}`),
        ['time:integer', 'txfrom:citext', 'txto:citext', 'gas:bigint', 'gasprice:bigint', 'block:integer', 'txhash:citext', 'value:numeric', 'contract_to:citext', 'contract_value:citext'],
      );
      const indexes = (await db.query(`SELECT indexname::text AS name FROM pg_indexes WHERE schemaname = 'public' AND tablename = 'ethtxs' ORDER BY 1`)).map((r) => r.name);
      assert.deepEqual(indexes, [
        'block_index',
        'contract_to_index',
        'time_index',
        'txfrom_index',
        'txfrom_time_txhash_index',
        'txto_contract_to_index',
        'txto_contract_to_time_txhash_index',
        'txto_index',
        'txto_time_txhash_index',
        'txto_txfrom_index',
        'txto_txfrom_time_txhash_index',
        'txto_w_empty_contract_to_index',
      ]);
      assert.deepEqual(await db.query('SELECT status FROM public.aval'), [{ status: true }]);
      assert.deepEqual(await db.query('SELECT max, version FROM public.max_block'), [{ max: null, version: '3.0.0' }]);
      assert.deepEqual(await readCursor(db), { lastBlock: null, lastHash: null });
      // The gateway's schema cache sees the three public relations, never the indexer's state.
      assert.deepEqual(await listRelations(db, ['public', 'nosuch']), { public: ['aval', 'ethtxs', 'max_block'], nosuch: [] });
    });

    test('migrating again changes nothing; a new version string is taken by the view', async () => {
      const { db } = opened;
      const report = await migrate(db, '3.0.1');
      assert.deepEqual(report.applied, []);
      assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM public.aval'), [{ n: 1 }]);
      assert.deepEqual(await db.query('SELECT version FROM public.max_block'), [{ version: '3.0.1' }]);
    });

    test('blocks and the cursor are written together; max_block advances through empty blocks; numbers keep every digit', async () => {
      const { db } = opened;
      await writeBlocks(db, [block(10, [row(10, 0), row(10, 1)]), block(11, []), block(12, [row(12, 0, { txto: null })])], 256);
      assert.deepEqual(await readCursor(db), { lastBlock: 12, lastHash: hash(12) });
      await writeBlocks(db, [block(13, []), block(14, [])], 256);
      assert.deepEqual(await db.query('SELECT max FROM public.max_block'), [{ max: 14 }]);
      const [big] = await db.query('SELECT value::text AS value, txfrom::text AS txfrom FROM public.ethtxs WHERE block = 10 LIMIT 1');
      assert.equal(big?.value, '1000000000000000000000000');
      // citext: any letter case finds the row.
      const [found] = await db.query('SELECT count(*)::int AS n FROM public.ethtxs WHERE txfrom = $1', [ADDRESS_A.toLowerCase()]);
      assert.equal(found?.n, 3);
      // Writing a block again replaces its rows: never stored twice.
      await writeBlocks(db, [block(12, [row(12, 0, { txto: null })])], 256);
      assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM public.ethtxs'), [{ n: 3 }]);
      assert.deepEqual((await recentBlocks(db, 2)).map((b) => b.number), [14, 13]);
    });

    test('a rewind deletes rows and hashes above the ancestor and moves the cursor back', async () => {
      const { db } = opened;
      const { deletedRows } = await rewindTo(db, 11);
      assert.equal(deletedRows, 1);
      assert.deepEqual(await readCursor(db), { lastBlock: 11, lastHash: hash(11) });
      assert.deepEqual(await db.query('SELECT max FROM public.max_block'), [{ max: 11 }]);
      assert.deepEqual((await recentBlocks(db, 10)).map((b) => b.number), [11, 10]);
      // Only the last `keepHashes` blocks are remembered.
      await writeBlocks(db, [block(12, [], 'b'), block(13, [], 'b'), block(14, [], 'b')], 2);
      assert.deepEqual((await recentBlocks(db, 10)).map((b) => b.number), [14, 13]);
    });

    test('the anonymous role reads the public relations and nothing else, and cannot write', async () => {
      const { db } = opened;
      const role = await ensureAnonRole(db, 'web_anon');
      assert.deepEqual(role.problems, []);
      const read = opened.anonymous('web_anon');
      assert.deepEqual(await read('SELECT count(*)::int AS n FROM public.ethtxs', []), [{ n: 2 }]);
      assert.deepEqual(await read('SELECT max FROM public.max_block', []), [{ max: 14 }]);
      await assert.rejects(read('SELECT * FROM indexer.state', []), (error: { code?: string }) => error.code === '42501');
      await assert.rejects(read(`DELETE FROM public.ethtxs`, []), (error: { code?: string }) => error.code === '25006' || error.code === '42501');
      assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM public.ethtxs'), [{ n: 2 }]);
    });
  });

  describe(`drop-in on a database the original indexer wrote: ${backend.name}`, { skip: backend.skip ?? false }, () => {
    test("its rows and index stay; the possibly partial last block is deleted once and indexing resumes after it; aval becomes boolean", async () => {
      const opened = await backend.open();
      try {
        const { db } = opened;
        // The original's create_tables.sql (with the status column of the older releases), aval(status integer) and
        // its max_block view, filled with blocks 10 and 11.
        await db.exec(`
          CREATE EXTENSION IF NOT EXISTS citext;
          CREATE TABLE public.ethtxs ("time" integer, txfrom citext, txto citext, gas bigint, gasprice bigint, block integer,
            txhash citext, value numeric, contract_to citext, contract_value citext, status boolean);
          CREATE INDEX block_index ON public.ethtxs (block);
          CREATE TABLE public.aval (status integer);
          INSERT INTO public.aval VALUES (1);
          CREATE VIEW public.max_block AS SELECT MAX(block) AS max, '2.4.1' AS version FROM public.ethtxs;
          INSERT INTO public.ethtxs VALUES
            (1, '0xA', '0xB', 21000, 1, 10, '0x01', 5, '', '', true),
            (2, '0xA', '0xB', 21000, 1, 11, '0x02', 6, '', '', true),
            (2, '0xA', '0xB', 21000, 1, 11, '0x03', 7, '', '', true);`);
        await migrate(db, '3.0.0');
        assert.deepEqual(await readCursor(db), { lastBlock: 10, lastHash: null });
        assert.deepEqual(await db.query('SELECT block, txhash::text AS txhash FROM public.ethtxs ORDER BY block'), [{ block: 10, txhash: '0x01' }]);
        assert.deepEqual(await db.query('SELECT max, version FROM public.max_block'), [{ max: 10, version: '3.0.0' }]);
        assert.deepEqual(await db.query('SELECT status FROM public.aval'), [{ status: true }]);
        // New rows go in by column name, so the old extra column is simply left null.
        await writeBlocks(db, [block(11, [row(11, 0)])], 256);
        assert.deepEqual(await db.query('SELECT count(*)::int AS n FROM public.ethtxs WHERE status IS NULL'), [{ n: 1 }]);
      } finally {
        await opened.close();
      }
    });
  });
}
