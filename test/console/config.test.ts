// The console's configuration (src/console/config.ts, src/console/config-file.ts; notes C.3): shallow merge over the
// defaults, validation, node URLs and the original's lookup order.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONSOLE_DEFAULT_CONFIG, PACKAGED_CONSOLE_CONFIG, parseConsoleConfig } from '../../src/console/config.js';
import { resolveConsoleConfigPath } from '../../src/console/config-file.js';
import { TEMPLATE_PASSPHRASE, validatePassphrase } from '../../src/console/amount.js';
import { readConfigFile } from '../../src/config.js';

test('the defaults: testnet nodes, port 5080, no passphrase', () => {
  const result = parseConsoleConfig(undefined, '(defaults)');
  assert.ok(result.ok);
  assert.equal(result.config.network, 'testnet');
  assert.equal(result.config.rpc.port, 5080);
  assert.equal(result.config.passphrase, undefined);
  assert.deepEqual(result.config.nodes, ['https://testnode1.adamant.im', 'http://81.0.247.181:36667', 'https://testnode3.adm.im']);
});

test('top-level keys replace the defaults wholesale; unknown keys are allowed', () => {
  const result = parseConsoleConfig({ network: 'mainnet', networks: { mainnet: { nodes: [{ ip: '127.0.0.1', protocol: 'http', port: 36666 }] } }, rpc: { port: 6000 }, extra: true }, 'x.jsonc');
  assert.ok(result.ok);
  assert.deepEqual(result.config.nodes, ['http://127.0.0.1:36666']);
  assert.equal(result.config.rpc.port, 6000);
  // networks was replaced as a whole: the default testnet list is gone.
  assert.equal(parseConsoleConfig({ networks: { mainnet: { nodes: [{ ip: 'a', protocol: 'http', port: '' }] } } }, 'x').ok, false);
});

test('every problem of the file at once', () => {
  const result = parseConsoleConfig({ rpc: { port: 'x' }, networks: { testnet: { nodes: [{ ip: '', protocol: 'ftp', port: 70000 }] } } }, 'x');
  assert.equal(result.ok, false);
  assert.ok(!result.ok && result.problems.length >= 3, JSON.stringify(result));
});

test('lookup order: --config, then $ADM_CONFIG_PATH/$ADM_CONFIG_FILENAME, then ./config.jsonc; .json finds .jsonc', () => {
  const dir = mkdtempSync(join(tmpdir(), 'adm-console-config-'));
  try {
    const home = join(dir, 'home');
    const cwd = join(dir, 'cwd');
    mkdirSync(join(home, '.adm'), { recursive: true });
    mkdirSync(cwd);
    assert.equal(resolveConsoleConfigPath(undefined, {}, home, cwd), undefined);
    writeFileSync(join(cwd, 'config.jsonc'), '{}');
    assert.equal(resolveConsoleConfigPath(undefined, {}, home, cwd), join(cwd, 'config.jsonc'));
    writeFileSync(join(home, '.adm', 'config.jsonc'), '{}');
    assert.equal(resolveConsoleConfigPath(undefined, {}, home, cwd), join(home, '.adm', 'config.jsonc'));
    const other = join(dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'my.jsonc'), '{}');
    assert.equal(resolveConsoleConfigPath(undefined, { ADM_CONFIG_PATH: other, ADM_CONFIG_FILENAME: 'my.jsonc' }, home, cwd), join(other, 'my.jsonc'));
    assert.equal(resolveConsoleConfigPath(undefined, { ADM_CONFIG_PATH: other }, home, join(dir, 'nowhere')), undefined);
    writeFileSync(join(other, 'config.jsonc'), '{}');
    assert.equal(resolveConsoleConfigPath(undefined, { ADM_CONFIG_PATH: other, ADM_CONFIG_FILENAME: 'config.json' }, home, join(dir, 'nowhere')), undefined, 'an explicit file name is taken literally');
    assert.equal(resolveConsoleConfigPath('/explicit.jsonc', {}, home, cwd), '/explicit.jsonc');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('rpc.engine picks the HTTP engine of the JSON-RPC listener (additive key)', () => {
  const result = parseConsoleConfig({ rpc: { port: 6000, engine: 'node' } }, 'x.jsonc');
  assert.ok(result.ok);
  assert.equal(result.config.rpc.engine, 'node');
  assert.equal(parseConsoleConfig({ rpc: { engine: 'apache' } }, 'x').ok, false);
});

test('the packaged config.default.jsonc holds the defaults and the template passphrase, which counts as not set', () => {
  const packaged = readConfigFile(PACKAGED_CONSOLE_CONFIG) as Record<string, unknown>;
  assert.equal(packaged.passphrase, TEMPLATE_PASSPHRASE);
  assert.deepEqual({ ...packaged, passphrase: '' }, CONSOLE_DEFAULT_CONFIG);
  const copied = parseConsoleConfig(packaged, '/home/x/.adm/config.jsonc');
  assert.ok(copied.ok);
  assert.equal(copied.config.passphrase, undefined);
  // Given with a call, it is no passphrase either (it is public: an account derived from it is anybody's).
  assert.throws(() => validatePassphrase(TEMPLATE_PASSPHRASE), { name: 'WrongParameterError', message: "Wrong 'passphrase' parameter" });
  const own = parseConsoleConfig({ passphrase: `${'abandon '.repeat(11)}about` }, 'x');
  assert.ok(own.ok);
  assert.equal(own.config.passphrase, `${'abandon '.repeat(11)}about`);
});
