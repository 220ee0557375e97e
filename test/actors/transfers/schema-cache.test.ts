// The gateway's schema cache actor (actors/transfers/schema-cache.actor.ts) and the API the edge reads through
// (actors/transfers/api.ts), on PGlite: one load reads the relations and the common values of their columns'
// statistics as the anonymous role; a read of a relation with statistics is written with its common values as
// literals and may keep its plan (and runs with its generic plan when a selective column's equality bounds it), any
// other read is planned for its values; statistics that cannot be read leave
// the relations served and every read planned for its values, with a warning.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createActor } from 'xstate';
import { systemClock } from '../../../src/clock.js';
import { createRuntime } from '../../../actors/runtime.js';
import { DatabaseHolder } from '../../../actors/transfers/database.actor.js';
import { transfersApi, TRANSFERS_SCHEMA_ID } from '../../../actors/transfers/api.js';
import { schemaCacheLogic } from '../../../actors/transfers/schema-cache.actor.js';
import { setUpSchema } from '../../../storage/transfers/schema-setup.js';
import type { SchemaCacheContext } from '../../../machines/transfers/schema-cache.machine.js';
import { INDEXER_VERSION } from '../../../src/transfers/config.js';
import { anonymousReadInTransaction, type AnonymousRead } from '../../../storage/transfers/gateway-store.js';
import type { SqlClient } from '../../../storage/transfers/sql-client.js';
import { openPgliteClient } from '../../../storage/transfers/sql-client.pglite.js';
import { captureLogger } from '../../support/logger.js';
import { waitFor } from '../../support/wait.js';

let db: SqlClient;

before(async () => {
  db = await openPgliteClient(undefined);
  await setUpSchema(db, 'web_anon', INDEXER_VERSION);
  // 200 rows: 80% native (contract_to ''), the rest over 40 token recipients; txfrom a hot address half the time.
  await db.query(`INSERT INTO public.ethtxs (time, txfrom, txto, gas, gasprice, block, txhash, value, contract_to, contract_value)
    SELECT 1700000000 + n, CASE WHEN n % 2 = 0 THEN '0xHot' ELSE '0x' || n END, '0xbb', 21000, 1, n, '0x' || lpad(to_hex(n), 64, '0'), 0,
           CASE WHEN n % 5 = 0 THEN lpad(to_hex(n), 64, '0') ELSE '' END, '' FROM generate_series(1, 200) n`);
  await db.exec('ANALYZE public.ethtxs');
});
after(async () => {
  await db?.close();
});

/** The view over a started schema cache whose reads are recorded with the plan choice they were given. */
async function started(read: AnonymousRead) {
  const { logger, lines } = captureLogger('warn');
  const runtime = createRuntime(systemClock, logger);
  const holder = new DatabaseHolder();
  const plans: Array<{ text: string; reusePlan: boolean | undefined; genericPlan: boolean | undefined }> = [];
  holder.set({
    writer: undefined,
    catalog: db,
    read: (text, values, options) => {
      plans.push({ text, reusePlan: options?.reusePlan, genericPlan: options?.genericPlan });
      return read(text, values, options);
    },
  });
  const actor = createActor(schemaCacheLogic({ holder, schemas: ['public'], logger }), { input: { refreshMs: 60_000 } }).start();
  runtime.registry.register(TRANSFERS_SCHEMA_ID, actor);
  await waitFor(() => actor.getSnapshot().value === 'ready', { what: 'the schema cache loaded' });
  plans.length = 0;
  return { view: transfersApi(runtime, holder, {}), context: actor.getSnapshot().context as SchemaCacheContext, plans, lines, stop: () => actor.stop() };
}

test('one load reads the relations and the common values; reads of the table inline them and may keep their plan', async () => {
  const cache = await started(anonymousReadInTransaction(db, 'web_anon'));
  try {
    assert.ok(cache.context.relations?.public?.includes('ethtxs'));
    const columns = cache.context.commonValues.get('public')?.get('ethtxs');
    assert.ok(columns?.get('contract_to')?.has(''), 'the empty contract_to is common');
    assert.ok(columns?.get('txfrom')?.has('0xhot'), 'lowercased: 0xHot');
    const reply = await cache.view.read({ method: 'GET', schema: 'public', relation: 'ethtxs', query: 'contract_to=eq.&txfrom=eq.0xHOT&select=block&order=block&limit=2' });
    assert.equal(reply.status, 200);
    assert.deepEqual(JSON.parse(reply.body), [{ block: 2 }, { block: 4 }]);
    assert.equal(cache.plans.length, 1);
    assert.match(cache.plans[0]!.text, /"contract_to" = E'' AND "public"\."ethtxs"\."txfrom" = E'0xHOT'/);
    assert.equal(cache.plans[0]!.reusePlan, true);
    assert.equal(cache.plans[0]!.genericPlan, false, 'both values are common literals: nothing bounds the read whatever its value');
    // Selective columns: one value is at most 1% of the rows in PostgreSQL's generic estimate.
    const selective = cache.context.selectiveColumns.get('public')?.get('ethtxs');
    for (const column of ['txhash', 'block', 'txfrom']) assert.ok(selective?.has(column), `${column}: ${[...(selective?.keys() ?? [])]}`);
    assert.deepEqual([...selective!.get('txfrom')!], ['0xhot'], 'its heavy value (half of the rows), lowercased');
    for (const column of ['txto', 'gas', 'contract_to']) assert.ok(!selective?.has(column), column);
    cache.plans.length = 0;
    const byHash = await cache.view.read({ method: 'GET', schema: 'public', relation: 'ethtxs', query: `txhash=eq.0x${(7).toString(16).padStart(64, '0')}&select=block` });
    assert.deepEqual(JSON.parse(byHash.body), [{ block: 7 }]);
    assert.deepEqual([cache.plans[0]!.reusePlan, cache.plans[0]!.genericPlan], [true, true], 'a read bounded by one transaction hash');
    // A relation without statistics (a view PostgreSQL keeps none for) is planned for its values.
    await db.exec('CREATE VIEW public.native AS SELECT * FROM public.ethtxs WHERE contract_to = \'\'; GRANT SELECT ON public.native TO web_anon');
    cache.view.reload();
    await waitFor(() => cache.view.relations()?.public?.includes('native'), { what: 'the view listed' });
    cache.plans.length = 0;
    const viewReply = await cache.view.read({ method: 'GET', schema: 'public', relation: 'native', query: 'txfrom=eq.0xhot&select=block&order=block&limit=1' });
    assert.deepEqual(JSON.parse(viewReply.body), [{ block: 2 }]);
    assert.match(cache.plans[0]!.text, /"txfrom" = \$1/);
    assert.equal(cache.plans[0]!.reusePlan, false);
  } finally {
    cache.stop();
    await db.exec('DROP VIEW IF EXISTS public.native');
  }
});

test('statistics that cannot be read: the relations are served, every read is planned for its values, a warning says why', async () => {
  const anonymous = anonymousReadInTransaction(db, 'web_anon');
  const cache = await started((text, values, options) => (text.includes('pg_stats') ? Promise.reject(new Error('permission denied for view pg_stats')) : anonymous(text, values, options)));
  try {
    assert.ok(cache.context.relations?.public?.includes('ethtxs'));
    assert.equal(cache.context.commonValues.size, 0);
    assert.ok(cache.lines.some((line) => line.msg === 'column statistics not readable: every read is planned for its values' && line.reason === 'permission denied for view pg_stats'), JSON.stringify(cache.lines));
    const reply = await cache.view.read({ method: 'GET', schema: 'public', relation: 'ethtxs', query: 'contract_to=eq.&select=block&order=block&limit=1' });
    assert.deepEqual(JSON.parse(reply.body), [{ block: 1 }]);
    assert.match(cache.plans[0]!.text, /"contract_to" = \$1/);
    assert.equal(cache.plans[0]!.reusePlan, false);
  } finally {
    cache.stop();
  }
});

test('a hostile common value is written as an escaped literal and reads exactly its rows', async () => {
  const hostile = "it's \\ $1; -- E'x'";
  await db.exec('CREATE TABLE public.tags (id integer, tag text); GRANT SELECT ON public.tags TO web_anon');
  await db.query(`INSERT INTO public.tags SELECT n, CASE WHEN n % 4 = 0 THEN 'other' || n ELSE $1 END FROM generate_series(1, 200) n`, [hostile]);
  await db.exec('ANALYZE public.tags');
  const cache = await started(anonymousReadInTransaction(db, 'web_anon'));
  try {
    assert.ok(cache.context.commonValues.get('public')?.get('tags')?.get('tag')?.has(hostile.toLowerCase()), 'the statistics list it');
    const reply = await cache.view.read({ method: 'GET', schema: 'public', relation: 'tags', query: `tag=eq.${encodeURIComponent(hostile)}&select=id&order=id&limit=3`, prefer: 'count=exact' });
    assert.equal(reply.status, 206);
    assert.deepEqual(JSON.parse(reply.body), [{ id: 1 }, { id: 2 }, { id: 3 }]);
    assert.equal(reply.headers['Content-Range'], '0-2/150');
    assert.ok(cache.plans[0]!.text.includes(`"tag" = E'it''s \\\\ $1; -- E''x'''`), cache.plans[0]!.text);
  } finally {
    cache.stop();
    await db.exec('DROP TABLE public.tags');
  }
});
