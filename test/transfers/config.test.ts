// The transfers settings (src/transfers/config*.ts): the original's variable names and PostgREST's, file and
// environment, defaults, and every problem reported at once.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseTransfersConfig } from '../../src/transfers/config.js';
import { parseConnection } from '../../src/transfers/config-database.js';
import { DEFAULT_MAX_ROWS } from '../../src/transfers/config-defaults.js';

const ok = (file: unknown, env: Record<string, string> = {}) => {
  const result = parseTransfersConfig(file, env);
  if (!result.ok) assert.fail(result.problems.join('\n'));
  return result;
};
const problems = (file: unknown, env: Record<string, string> = {}) => {
  const result = parseTransfersConfig(file, env);
  assert.equal(result.ok, false);
  return (result as { problems: string[] }).problems;
};

describe('transfers config', () => {
  test('HTTP_ENGINE picks the gateway listener\'s HTTP engine (additive); another name is refused', () => {
    assert.equal(ok({}, { HTTP_ENGINE: 'node' }).config.gateway.engine, 'node');
    assert.equal(ok({}).config.gateway.engine, undefined);
    assert.ok(problems({}, { HTTP_ENGINE: 'apache' }).includes('HTTP_ENGINE: must be one of uws, node'));
  });

  test('embedded defaults: PGlite, gateway on 3000 with the 10,000 row cap, indexer off without ETH_URL', () => {
    const { config } = ok(undefined);
    assert.deepEqual(config.database, { kind: 'pglite', dataDir: 'data/transfers' });
    assert.equal(config.indexer.enabled, false);
    assert.equal(config.gateway.enabled, true);
    assert.equal(config.gateway.port, 3000);
    assert.equal(config.gateway.maxRows, DEFAULT_MAX_ROWS);
    assert.deepEqual(config.gateway.schemas, ['public']);
    assert.equal(config.gateway.anonRole, 'web_anon');
    assert.equal(config.indexer.startBlock, 1);
    assert.equal(config.indexer.confirmations, 0);
    assert.equal(config.indexer.periodMs, 20_000);
  });

  test("the original indexer's environment carries over; DB_NAME also serves the gateway", () => {
    const { config } = ok(undefined, { DB_NAME: 'ethtxs_db', ETH_URL: 'http://127.0.0.1:8545', START_BLOCK: '100', CONFIRMATIONS_BLOCK: '3', PERIOD: '5' });
    assert.equal(config.indexer.enabled, true);
    assert.equal(config.indexer.ethUrl, 'http://127.0.0.1:8545');
    assert.equal(config.indexer.startBlock, 100);
    assert.equal(config.indexer.confirmations, 3);
    assert.equal(config.indexer.periodMs, 5_000);
    assert.deepEqual(config.database, { kind: 'postgres', indexer: { database: 'ethtxs_db' }, gateway: { database: 'ethtxs_db' } });
  });

  test("PostgREST's settings by variable and by its config-file names; the environment wins over the file", () => {
    const fromFile = ok({ 'db-uri': 'postgres://authenticator@127.0.0.1/db', 'db-anon-role': 'api_user', 'server-port': 3100, 'db-max-rows': 50 });
    assert.deepEqual(fromFile.config.database, { kind: 'postgres', indexer: { connectionString: 'postgres://authenticator@127.0.0.1/db' }, gateway: { connectionString: 'postgres://authenticator@127.0.0.1/db' } });
    assert.equal(fromFile.config.gateway.anonRole, 'api_user');
    assert.equal(fromFile.config.gateway.port, 3100);
    assert.equal(fromFile.config.gateway.maxRows, 50);
    const overridden = ok({ PGRST_SERVER_PORT: 3100 }, { PGRST_SERVER_PORT: '3200', PGRST_SERVER_HOST: '127.0.0.1' });
    assert.equal(overridden.config.gateway.port, 3200);
    assert.equal(overridden.config.gateway.host, '127.0.0.1');
  });

  test('either part can be switched off so they run as separate processes', () => {
    const gatewayOnly = ok(undefined, { ETH_URL: 'http://127.0.0.1:8545', INDEXER: 'false' });
    assert.equal(gatewayOnly.config.indexer.enabled, false);
    const indexerOnly = ok(undefined, { ETH_URL: 'http://127.0.0.1:8545', GATEWAY: 'off' });
    assert.equal(indexerOnly.config.gateway.enabled, false);
    assert.equal(indexerOnly.config.indexer.enabled, true);
  });

  test('every problem at once: unknown keys in the file are refused', () => {
    assert.deepEqual(problems({ PERIODE: 5 }), ['PERIODE: unknown key (not part of the configuration format)']);
    const many = problems(undefined, { INDEXER: 'true', START_BLOCK: '-1', PERIOD: 'soon', PGRST_SERVER_PORT: '70000', PGRST_DB_ANON_ROLE: 'x"; drop' });
    assert.ok(many.some((p) => p.startsWith('ETH_URL: required')));
    assert.ok(many.some((p) => p.startsWith('START_BLOCK:')));
    assert.ok(many.some((p) => p.startsWith('PERIOD:')));
    assert.ok(many.some((p) => p.startsWith('PGRST_SERVER_PORT:')));
    assert.ok(many.some((p) => p.startsWith('PGRST_DB_ANON_ROLE:')));
    assert.ok(problems(undefined, { ETH_URL: 'ws://127.0.0.1:8546' }).some((p) => p.startsWith('ETH_URL: only http')));
    assert.ok(problems(undefined, { INDEXER: 'false', GATEWAY: 'false' }).some((p) => p.includes('at least one part')));
  });

  test('LOG_FILE is accepted with a warning; every schema of PGRST_DB_SCHEMAS is exposed, the first by default', () => {
    const result = ok(undefined, { LOG_FILE: '/var/log/ethsync.log', PGRST_DB_SCHEMAS: 'api, other,api' });
    assert.deepEqual(result.config.gateway.schemas, ['api', 'other']);
    assert.equal(result.warnings.length, 1);
    assert.ok(problems(undefined, { PGRST_DB_SCHEMAS: 'public,bad-name' }).some((p) => p.includes("'bad-name' is not a plain schema name")));
  });

  test('DB_NAME as a plain name, a libpq key=value string or a URI', () => {
    const found: string[] = [];
    assert.deepEqual(parseConnection('ethtxs', 'DB_NAME', found), { database: 'ethtxs' });
    assert.deepEqual(parseConnection("host=127.0.0.1 port=5433 dbname=eth user=indexer password='p w\\'d'", 'DB_NAME', found), {
      host: '127.0.0.1',
      port: 5433,
      user: 'indexer',
      password: "p w'd",
      database: 'eth',
    });
    assert.deepEqual(parseConnection('postgresql://u@h/db', 'DB_NAME', found), { connectionString: 'postgresql://u@h/db' });
    assert.deepEqual(found, []);
    parseConnection('host=a =oops', 'DB_NAME', found);
    assert.equal(found.length, 1);
  });
});
