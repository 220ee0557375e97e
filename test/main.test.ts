import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../src/errors.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCommandLine } from '../src/command-line.js';
import { operatorSettings } from '../src/compose.js';
import { environmentProblems } from '../src/environment.js';
import { configCheckLine, configOriginLine } from '../src/config-lines.js';
import { loadConsoleConfig } from '../src/console/config-file.js';
import { loadFilesConfig } from '../src/files/config-file.js';
import { RATES_DEFAULT_CONFIG } from '../src/rates/config-defaults.js';
import { loadRatesConfig } from '../src/rates/config-file.js';
import { loadTransfersConfig } from '../src/transfers/config-file.js';

test('parseCommandLine: services, options, and the usage errors', () => {
  assert.deepEqual(parseCommandLine(['rates', '--config', 'c.jsonc']), {
    ok: true,
    command: { service: 'rates', configPath: 'c.jsonc', checkConfig: false, migrate: false, host: '0.0.0.0' },
  });
  assert.deepEqual(parseCommandLine(['all', '--host', '127.0.0.1']), {
    ok: true,
    command: { service: 'all', configPath: undefined, checkConfig: false, migrate: false, host: '127.0.0.1' },
  });
  assert.deepEqual(parseCommandLine(['--help']), { ok: false, help: true });
  assert.deepEqual(parseCommandLine(['nope']), { ok: false, help: false, message: 'unknown service: nope' });
  assert.deepEqual(parseCommandLine([]), { ok: false, help: false, message: 'missing service' });
  assert.deepEqual(parseCommandLine(['rates', 'extra']), { ok: false, help: false, message: 'unexpected argument: extra' });
  assert.equal(parseCommandLine(['all', '--config', 'x']).ok, false, '--config names one service');
  assert.equal(parseCommandLine(['rates', '--bogus']).ok, false);
  assert.deepEqual(parseCommandLine(['transfers', '--migrate', '--config', 't.json5']), {
    ok: true,
    command: { service: 'transfers', configPath: 't.json5', checkConfig: false, migrate: true, host: '0.0.0.0' },
  });
  assert.deepEqual(parseCommandLine(['rates', '--migrate']), { ok: false, help: false, message: '--migrate applies to the transfers service only' });
  assert.deepEqual(parseCommandLine(['all', '--migrate']), { ok: false, help: false, message: '--migrate applies to the transfers service only' });
  assert.equal(parseCommandLine(['transfers', '--migrate', '--check-config']).ok, false, 'one run does one thing');
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

test('loadRatesConfig: embedded defaults when no file is found, else ./config.jsonc, else the file from $CURRENCYINFO_CONFIG or --config', () => {
  const cwd = mkdtempSync(join(tmpdir(), 'rates-load-'));
  try {
    const loaded = loadRatesConfig(undefined, {}, { cwd });
    assert.equal(loaded.source, '(embedded defaults)');
    assert.deepEqual(loaded.origin, { file: undefined, lookup: '--config, $CURRENCYINFO_CONFIG, ./config.jsonc', defaults: 'the embedded defaults' });
    assert.equal(loaded.config.server.port, 36661);
    assert.ok(Object.isFrozen(loaded.config));
    assert.throws(() => loadRatesConfig(undefined, { CURRENCYINFO_CONFIG: '/nonexistent/config.jsonc' }, { cwd }), (error: unknown) => error instanceof ConfigError && /No config found/.test(error.message));

    const file = (name: string, port: number) => writeFileSync(join(cwd, name), `// JSONC\n${JSON.stringify({ ...structuredClone(RATES_DEFAULT_CONFIG), server: { port } })}`);
    file('config.jsonc', 40001);
    file('env.jsonc', 40002);
    file('flag.jsonc', 40003);
    assert.equal(loadRatesConfig(undefined, {}, { cwd }).config.server.port, 40001);
    assert.equal(loadRatesConfig(undefined, {}, { cwd }).origin.file, join(cwd, 'config.jsonc'));
    assert.equal(loadRatesConfig(undefined, { CURRENCYINFO_CONFIG: 'env.jsonc' }, { cwd }).config.server.port, 40002);
    assert.equal(loadRatesConfig('flag.jsonc', { CURRENCYINFO_CONFIG: 'env.jsonc' }, { cwd }).config.server.port, 40003);
    const all = loadRatesConfig(undefined, { CURRENCYINFO_CONFIG: 'env.jsonc' }, { cwd, useDefaults: true });
    assert.equal(all.config.server.port, 36661, 'adm-infra all reads no file');
    assert.equal(all.origin.lookup, undefined);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('every service loader has one shape: (path, env, {cwd, useDefaults}) → {config, source, origin, warnings}', () => {
  const loaders = { rates: loadRatesConfig, files: loadFilesConfig, transfers: loadTransfersConfig, console: loadConsoleConfig };
  for (const [service, load] of Object.entries(loaders)) {
    const all = load('/nonexistent/config', {}, { useDefaults: true });
    assert.ok(Object.isFrozen(all.config), service);
    assert.equal(all.origin.file, undefined, `${service}: adm-infra all reads no file`);
    assert.equal(all.origin.lookup, undefined, service);
    assert.equal(typeof all.source, 'string', service);
    assert.ok(Array.isArray(all.warnings), service);
  }

  const cwd = mkdtempSync(join(tmpdir(), 'service-load-'));
  try {
    writeFileSync(join(cwd, 'config.json5'), JSON.stringify({ uploadLimitSizeBytes: 1024, maxFileCount: 1, findFileTimeout: 1000, cors: { allowedOrigins: ['*'] }, serverPort: 40011 }));
    const files = loadFilesConfig(undefined, {}, { cwd });
    assert.equal(files.config.serverPort, 40011, 'files: ./config.json5 in cwd');
    assert.equal(files.origin.file, join(cwd, 'config.json5'));

    writeFileSync(join(cwd, 'transfers.json5'), JSON.stringify({ PGRST_SERVER_PORT: 40012 }));
    const transfers = loadTransfersConfig('transfers.json5', {}, { cwd });
    assert.equal(transfers.config.gateway.port, 40012, 'transfers: a relative --config path is read against cwd');
    assert.equal(transfers.source, join(cwd, 'transfers.json5'));
    assert.equal(loadTransfersConfig(undefined, {}, { cwd }).origin.lookup, '--config, $TRANSFERS_CONFIG');

    writeFileSync(join(cwd, 'config.jsonc'), JSON.stringify({ rpc: { port: 40013 } }));
    const consoleLoaded = loadConsoleConfig(undefined, { ADM_CONFIG_PATH: join(cwd, 'no-such-dir') }, { cwd });
    assert.equal(consoleLoaded.config.rpc.port, 40013, 'console: ./config.jsonc in cwd');
    assert.equal(consoleLoaded.origin.file, join(cwd, 'config.jsonc'));
    assert.deepEqual(consoleLoaded.warnings, []);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});

test('configOriginLine and configCheckLine: the file read, or the lookup that found none and the defaults used', () => {
  const none = { file: undefined, lookup: '--config, $CURRENCYINFO_CONFIG, ./config.jsonc', defaults: 'the embedded defaults' };
  assert.equal(configOriginLine('rates', { ...none, file: '/srv/config.jsonc' }), "InfoService successfully read the config-file '/srv/config.jsonc'.");
  assert.equal(configOriginLine('rates', none), 'no configuration file found (--config, $CURRENCYINFO_CONFIG, ./config.jsonc): the embedded defaults are used');
  assert.equal(configCheckLine(none), 'no configuration file found (--config, $CURRENCYINFO_CONFIG, ./config.jsonc): the embedded defaults are valid');
  assert.equal(configCheckLine({ ...none, file: '/srv/config.jsonc' }), 'Configuration is valid (/srv/config.jsonc)');
  assert.equal(configOriginLine('files', { ...none, file: '/srv/config.json5' }), 'Using config file: /srv/config.json5');
  assert.equal(configOriginLine('console', { ...none, file: '/srv/c.jsonc' }), "configuration read from '/srv/c.jsonc'");
  assert.equal(configOriginLine('console', { file: undefined, lookup: undefined, defaults: 'the packaged defaults' }), 'the packaged defaults are used (adm-infra all reads no configuration file)');
});

test('environmentProblems: unset and empty mean not set; every bad value is reported at once', () => {
  assert.deepEqual(environmentProblems({}), []);
  assert.deepEqual(environmentProblems({ ADM_HTTP_ENGINE: '', ADM_HTTP_UWS: '', LOG_LEVEL: '' }), []);
  assert.deepEqual(environmentProblems({ ADM_HTTP_ENGINE: 'node', ADM_HTTP_UWS: 'missing', LOG_LEVEL: 'debug' }), []);
  const problems = environmentProblems({ ADM_HTTP_ENGINE: 'nodee', ADM_HTTP_UWS: '1', LOG_LEVEL: 'INFO' });
  assert.equal(problems.length, 3);
  assert.match(problems[0]!, /^ADM_HTTP_ENGINE: must be one of uws, node \(.+\), got 'nodee'$/);
  assert.match(problems[1]!, /^ADM_HTTP_UWS: must be 'missing' \(.+\), got '1'$/);
  assert.match(problems[2]!, /^LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent \(.+\), got 'INFO'$/);
});
