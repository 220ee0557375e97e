// Content negotiation and profiles of a read (src/transfers/negotiate.ts; PostgREST's MediaType.hs, Plan/Negotiate.hs,
// resource_representation.rst, MultipleSchemaSpec.hs): the Accept header's order, the representations built by
// PostgreSQL (object, stripped nulls, CSV) run through runRead on PGlite and on a real PostgreSQL 15, and the 406s.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { functionNotFound, gatewayErrorReply } from '../../src/transfers/gateway-errors.js';
import { negotiateMedia, negotiateSchema, parseAccept } from '../../src/transfers/negotiate.js';
import { runRead, type Execute, type GatewayReply, type ReadRequest } from '../../src/transfers/read.js';
import { startPostgres, type PostgresCluster } from '../support/postgres.js';
import { postgresServerPackage, skipWithout } from '../support/system-packages.js';

const refusal = (run: () => unknown): Record<string, unknown> => {
  try {
    run();
  } catch (error) {
    const reply = gatewayErrorReply(error);
    return { status: reply.status, ...(JSON.parse(reply.body) as Record<string, unknown>) };
  }
  assert.fail('expected a refusal');
};

describe('Accept → representation', () => {
  test('no Accept, */* and application/json are a JSON array; vendor array types too', () => {
    for (const accept of [undefined, '', '*/*', 'application/json', 'application/vnd.pgrst.array+json', 'application/vnd.pgrst.array', 'APPLICATION/JSON']) {
      assert.equal(negotiateMedia(accept).format, 'json', String(accept));
    }
    assert.equal(negotiateMedia('application/json').contentType, 'application/json; charset=utf-8');
  });

  test('the vendor parameters: object, stripped nulls (with or without spaces)', () => {
    assert.equal(negotiateMedia('application/vnd.pgrst.object+json').format, 'object');
    assert.equal(negotiateMedia('application/vnd.pgrst.object').format, 'object');
    assert.equal(negotiateMedia('application/vnd.pgrst.object+json;nulls=stripped').format, 'object-stripped');
    assert.equal(negotiateMedia('application/vnd.pgrst.object+json; nulls=stripped').format, 'object-stripped');
    assert.equal(negotiateMedia('application/vnd.pgrst.array+json;nulls=stripped').format, 'json-stripped');
    assert.equal(negotiateMedia('application/vnd.pgrst.array+json;nulls=stripped').contentType, 'application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8');
    // Another parameter value is the plain type, as in decodeMediaType.
    assert.equal(negotiateMedia('application/vnd.pgrst.array+json;nulls=kept').format, 'json');
    assert.equal(negotiateMedia('text/csv').contentType, 'text/csv; charset=utf-8');
  });

  test('order: quality first, then more parameters, then fewer stars; ties keep their order', () => {
    assert.deepEqual(parseAccept('text/csv;q=0.5, application/json').map((a) => a.type), ['application/json', 'text/csv']);
    assert.deepEqual(parseAccept('*/*, text/csv').map((a) => a.type), ['text/csv', '*/*']);
    assert.equal(negotiateMedia('application/xml, text/csv;q=0.2').format, 'csv');
    assert.equal(negotiateMedia('text/csv, application/json').format, 'csv');
    assert.equal(negotiateMedia('application/json;q=0.1, application/vnd.pgrst.object+json').format, 'object');
    // A type the gateway cannot produce is skipped for the next one.
    assert.equal(negotiateMedia('application/xml, */*').format, 'json');
  });

  test('nothing producible: 406 PGRST107 naming every type asked for, as sent', () => {
    assert.deepEqual(refusal(() => negotiateMedia('application/xml')), {
      status: 406,
      code: 'PGRST107',
      details: null,
      hint: null,
      message: 'None of these media types are available: application/xml',
    });
    assert.equal(refusal(() => negotiateMedia('text/plain;q=0.3, Image/PNG')).message, 'None of these media types are available: Image/PNG, text/plain');
    for (const accept of ['text/*', 'application/*', 'application/geo+json', 'application/openapi+json', 'garbage']) {
      assert.equal(refusal(() => negotiateMedia(accept)).status, 406, accept);
    }
  });
});

describe('profiles → schema', () => {
  const exposed = ['public', 'api'];
  test('GET and HEAD read Accept-Profile, other verbs Content-Profile; none is the first schema', () => {
    assert.equal(negotiateSchema('GET', {}, exposed), 'public');
    assert.equal(negotiateSchema('GET', { 'accept-profile': 'api' }, exposed), 'api');
    assert.equal(negotiateSchema('HEAD', { 'accept-profile': 'api', 'content-profile': 'public' }, exposed), 'api');
    assert.equal(negotiateSchema('OPTIONS', { 'accept-profile': 'api' }, exposed), 'public');
    assert.equal(negotiateSchema('POST', { 'content-profile': 'api' }, exposed), 'api');
  });
  test('a schema not exposed is 406 PGRST106 with the exposed list', () => {
    assert.deepEqual(refusal(() => negotiateSchema('GET', { 'accept-profile': 'private' }, exposed)), {
      status: 406,
      code: 'PGRST106',
      details: null,
      hint: 'Only the following schemas are exposed: public, api',
      message: 'Invalid schema: private',
    });
    assert.equal(refusal(() => negotiateSchema('GET', { 'accept-profile': 'API' }, exposed)).code, 'PGRST106');
  });
});

describe('PGRST202 texts (PostgREST Error.hs NoRpc)', () => {
  const body = (error: Error) => JSON.parse(gatewayErrorReply(error).body) as Record<string, unknown>;
  test('without parameters, from a JSON body, from the query, and one unnamed parameter', () => {
    assert.deepEqual(body(functionNotFound({ schema: 'public', name: 'fn', argumentKeys: [], body: 'application/json' })), {
      code: 'PGRST202',
      details: 'Searched for the function public.fn without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: null,
      message: 'Could not find the function public.fn without parameters in the schema cache',
    });
    const query = body(functionNotFound({ schema: 'api', name: 'fn', argumentKeys: ['b', 'a', 'b'], body: 'none' }));
    assert.equal(query.message, 'Could not find the function api.fn(a, b) in the schema cache');
    assert.equal(query.details, 'Searched for the function api.fn with parameters a, b, but no matches were found in the schema cache.');
    const one = body(functionNotFound({ schema: 'public', name: 'fn', argumentKeys: ['a'], body: 'application/json' }));
    assert.equal(one.details, 'Searched for the function public.fn with parameter a or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.');
    const text = body(functionNotFound({ schema: 'public', name: 'fn', argumentKeys: [], body: 'text/plain' }));
    assert.equal(text.message, 'Could not find the function public.fn in the schema cache');
    assert.equal(text.details, 'Searched for the function public.fn with a single unnamed text parameter, but no matches were found in the schema cache.');
  });
});

// ---- the representations, built by PostgreSQL ------------------------------------------------------------------

const FIXTURE = `
CREATE SCHEMA neg;
CREATE TABLE neg.things (id integer, name text, note text, amount numeric);
INSERT INTO neg.things VALUES
  (1, 'plain', NULL, 1000000000000000000000001),
  (2, 'with, comma', 'say "hi"', 2.5),
  (3, 'two words', '', NULL);
`;

interface Backend {
  readonly execute: Execute;
  close(): Promise<void>;
}

function representationCases(backend: () => Backend) {
  const read = async (query: string, accept?: string, request: Partial<ReadRequest> = {}): Promise<GatewayReply> => {
    try {
      return await runRead({ method: 'GET', schema: 'neg', relation: 'things', query, ...(accept === undefined ? {} : { accept }), ...request }, {}, backend().execute);
    } catch (error) {
      return gatewayErrorReply(error);
    }
  };

  test('object: exactly one row is the object itself, with every digit', async () => {
    const reply = await read('id=eq.1', 'application/vnd.pgrst.object+json');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['Content-Type'], 'application/vnd.pgrst.object+json; charset=utf-8');
    assert.equal(reply.headers['Content-Range'], '0-0/*');
    assert.equal(reply.body, '{"id":1,"name":"plain","note":null,"amount":1000000000000000000000001}');
  });

  test('object: zero or several rows are 406 PGRST116 counting them (after limit)', async () => {
    for (const [query, rows] of [['id=eq.9', 0], ['order=id', 3], ['order=id&limit=2', 2]] as const) {
      const reply = await read(query, 'application/vnd.pgrst.object+json');
      assert.equal(reply.status, 406, query);
      assert.deepEqual(JSON.parse(reply.body), { code: 'PGRST116', details: `The result contains ${rows} rows`, hint: null, message: 'Cannot coerce the result to a single JSON object' });
    }
    // HEAD is checked the same way, and answers without a body.
    assert.equal((await read('order=id', 'application/vnd.pgrst.object+json', { method: 'HEAD' })).status, 406);
    const head = await read('id=eq.2', 'application/vnd.pgrst.object+json', { method: 'HEAD' });
    assert.deepEqual([head.status, head.body], [200, '']);
  });

  test('stripped nulls: keys with null values are left out, empty strings kept', async () => {
    const array = await read('order=id', 'application/vnd.pgrst.array+json;nulls=stripped');
    assert.equal(array.status, 200);
    assert.deepEqual(JSON.parse(array.body), [
      { id: 1, name: 'plain', amount: 1000000000000000000000001 },
      { id: 2, name: 'with, comma', note: 'say "hi"', amount: 2.5 },
      { id: 3, name: 'two words', note: '' },
    ]);
    assert.ok(array.body.includes('1000000000000000000000001'), 'numeric digits kept');
    const object = await read('id=eq.3', 'application/vnd.pgrst.object+json;nulls=stripped');
    assert.equal(object.body, '{"id":3,"name":"two words","note":""}');
    assert.equal(object.headers['Content-Type'], 'application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8');
  });

  test('CSV: a header of the selected keys, one line per row, PostgreSQL record quoting', async () => {
    const reply = await read('order=id', 'text/csv');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['Content-Type'], 'text/csv; charset=utf-8');
    assert.equal(reply.body, ['id,name,note,amount', '1,plain,,1000000000000000000000001', '2,"with, comma","say ""hi""",2.5', '3,"two words","",'].join('\n'));
    const selected = await read('select=name,id&id=lt.3&order=id.desc', 'text/csv');
    assert.equal(selected.body, 'name,id\n"with, comma",2\nplain,1');
    // No rows: no keys to name, an empty header line (PostgREST reads the header off the first row).
    assert.equal((await read('id=eq.9', 'text/csv')).body, '\n');
  });

  test('a media type nothing produces is refused before the database is asked', async () => {
    const reply = await read('id=eq.1', 'application/xml');
    assert.equal(reply.status, 406);
    assert.equal(JSON.parse(reply.body).code, 'PGRST107');
  });
}

describe('representations on PGlite', () => {
  let db: PGlite;
  before(async () => {
    db = await PGlite.create();
    await db.exec(FIXTURE);
  });
  after(() => db?.close());
  representationCases(() => ({ execute: (text, values) => db.query<Record<string, unknown>>(text, [...values]).then((r) => r.rows), close: () => db.close() }));
});

const skip = skipWithout(postgresServerPackage(), 'the negotiation tests on PostgreSQL (test/transfers/negotiation.test.ts)');

describe('representations on PostgreSQL', { skip }, () => {
  let cluster: PostgresCluster;
  let pool: pg.Pool;
  before(async () => {
    cluster = await startPostgres();
    pool = new pg.Pool({ connectionString: cluster.url, max: 2 });
    await pool.query(FIXTURE);
  });
  after(async () => {
    await pool?.end();
    await cluster?.stop();
  });
  representationCases(() => ({ execute: (text, values) => pool.query(text, [...values]).then((r) => r.rows as Record<string, unknown>[]), close: async () => undefined }));
});
