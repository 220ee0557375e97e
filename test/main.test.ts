import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../src/errors.js';
import { loadRatesConfig, operatorSettings, parseCommandLine } from '../src/main.js';

test('parseCommandLine: services, options, and the usage errors', () => {
  assert.deepEqual(parseCommandLine(['rates', '--config', 'c.jsonc']), {
    ok: true,
    command: { service: 'rates', configPath: 'c.jsonc', checkConfig: false, host: '0.0.0.0' },
  });
  assert.deepEqual(parseCommandLine(['all', '--host', '127.0.0.1']), {
    ok: true,
    command: { service: 'all', configPath: undefined, checkConfig: false, host: '127.0.0.1' },
  });
  assert.deepEqual(parseCommandLine(['--help']), { ok: false, help: true });
  assert.deepEqual(parseCommandLine(['nope']), { ok: false, help: false, message: 'unknown service: nope' });
  assert.deepEqual(parseCommandLine([]), { ok: false, help: false, message: 'missing service' });
  assert.deepEqual(parseCommandLine(['rates', 'extra']), { ok: false, help: false, message: 'unexpected argument: extra' });
  assert.equal(parseCommandLine(['all', '--config', 'x']).ok, false, '--config names one service');
  assert.equal(parseCommandLine(['rates', '--bogus']).ok, false);
});

test('operatorSettings: off without a port; the environment overrides the config block; short keys refused', () => {
  assert.equal(operatorSettings({}), undefined);
  assert.equal(operatorSettings({ ADMIN_API_KEY: 'k'.repeat(40) }), undefined, 'a key alone does not open a port');
  const key = 'c'.repeat(32);
  assert.deepEqual(operatorSettings({}, { port: 9901, apiKey: key }), { port: 9901, host: '127.0.0.1', apiKey: key });
  assert.deepEqual(operatorSettings({ ADMIN_PORT: '9902', ADMIN_HOST: '::1' }, { port: 9901, apiKey: key }), { port: 9902, host: '::1', apiKey: key });
  assert.deepEqual(operatorSettings({ ADMIN_PORT: '9900' }), { port: 9900, host: '127.0.0.1', apiKey: undefined });
  assert.throws(() => operatorSettings({ ADMIN_PORT: '9900', ADMIN_API_KEY: 'short' }), (error: unknown) => error instanceof ConfigError && /at least 32/.test(error.problems[0]!));
  assert.throws(() => operatorSettings({ ADMIN_PORT: 'x' }), ConfigError);
});

test('loadRatesConfig: embedded defaults when no file is named, else the file from $CURRENCYINFO_CONFIG', () => {
  const loaded = loadRatesConfig(undefined, {});
  assert.equal(loaded.source, '(embedded defaults)');
  assert.equal(loaded.config.server.port, 36661);
  assert.ok(Object.isFrozen(loaded.config));
  assert.throws(() => loadRatesConfig(undefined, { CURRENCYINFO_CONFIG: '/nonexistent/config.jsonc' }), (error: unknown) => error instanceof ConfigError && /No config found/.test(error.message));
});
