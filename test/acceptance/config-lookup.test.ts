// Black-box acceptance of where each service finds its configuration (README "Where each service reads its
// configuration"): the built CLI started in a temporary working directory, with and without --config and the
// services' environment variables. Rates reads from fake upstream sources and the console from a fake ADAMANT
// node, both on loopback; where no file is found the case runs --check-config, so no internet source is contacted.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startFakeUpstreams, type FakeUpstreams } from '../rates/fakes/upstreams.js';
import { startFakeAdamantNode, type FakeAdamantNode } from '../support/adamant-node.js';
import { freePort, startCli } from '../support/cli.js';
import { filesCliConfig } from '../support/files-config.js';

/** A rates file whose only sources are the fakes; the port is what tells the files apart. */
function ratesConfig(fakes: FakeUpstreams, port: number, sqlitePath: string) {
  return {
    strategy: 'priority',
    groupPercentage: 65,
    minSources: 1,
    priorities: ['CoinPaprika'],
    rateLifetime: 60,
    refreshInterval: 10,
    server: { port, sqlite: { path: sqlitePath } },
    base_coins: ['USD'],
    coingecko: { enabled: false },
    coinlore: { enabled: false },
    binance: { enabled: false },
    coinpaprika: { enabled: true, url: fakes.baseUrlFor('CoinPaprika'), coins: ['BTC'] },
    currency_api: { enabled: true, url: fakes.baseUrlFor('CurrencyApi'), codes: ['USD'] },
    exchange_rate_api: { enabled: false, url: fakes.baseUrlFor('ExchangeRateApi') },
  };
}

/** Starts the rates CLI, checks its one config line names `file` and that the port from that file answers /status. */
async function ratesReads(args: string[], env: Record<string, string>, cwd: string, file: string, port: number): Promise<void> {
  const service = startCli(['rates', '--host', '127.0.0.1', ...args], env, cwd);
  try {
    await service.waitForLine((line) => line.msg === 'listening' && line.listener === 'rates');
    const configLines = service.lines.filter((line) => line.service === 'rates' && (line.msg as string).includes('config'));
    assert.deepEqual(
      configLines.map((line) => [line.msg, line.config]),
      [[`InfoService successfully read the config-file '${file}'.`, file]],
      'one line naming the file read',
    );
    const response = await fetch(`http://127.0.0.1:${port}/status`);
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { version: string }).version, '4.2.0');
  } finally {
    assert.equal(await service.stop(), 0, service.stderr());
  }
}

describe('rates: --config, then $CURRENCYINFO_CONFIG, then ./config.jsonc, then the embedded defaults', () => {
  let fakes: FakeUpstreams;
  let dir: string;
  const ports = { local: 0, env: 0, flag: 0 };

  before(async () => {
    fakes = await startFakeUpstreams();
    fakes.setPrice('CoinPaprika', 'BTC', 60000);
    fakes.setPrice('CurrencyApi', 'USD', 1);
    dir = mkdtempSync(join(tmpdir(), 'rates-lookup-'));
    for (const name of ['local', 'env', 'flag'] as const) {
      ports[name] = await freePort();
      // The working directory's file is JSONC with a comment, as the original's config.jsonc.
      const text = `// ${name}\n${JSON.stringify(ratesConfig(fakes, ports[name], join(dir, `${name}.sqlite`)), null, 2)}`;
      writeFileSync(join(dir, name === 'local' ? 'config.jsonc' : `${name}.jsonc`), text);
    }
  });
  after(async () => {
    await fakes?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('started in a folder holding config.jsonc, without --config or $CURRENCYINFO_CONFIG, it reads ./config.jsonc', async () => {
    await ratesReads([], {}, dir, join(dir, 'config.jsonc'), ports.local);
  });

  it('$CURRENCYINFO_CONFIG wins over ./config.jsonc', async () => {
    await ratesReads([], { CURRENCYINFO_CONFIG: join(dir, 'env.jsonc') }, dir, join(dir, 'env.jsonc'), ports.env);
  });

  it('--config wins over both (a relative path resolves against the working directory)', async () => {
    await ratesReads(['--config', 'flag.jsonc'], { CURRENCYINFO_CONFIG: join(dir, 'env.jsonc') }, dir, join(dir, 'flag.jsonc'), ports.flag);
  });

  it('--check-config names the file it validated', async () => {
    const check = startCli(['rates', '--check-config'], {}, dir);
    assert.equal(await check.exited(), 0, check.stderr());
    assert.equal(check.stdout(), `Configuration is valid (${join(dir, 'config.jsonc')})\n`);
  });

  it('with none of them, --check-config says the embedded defaults are what it validated', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'rates-lookup-none-'));
    try {
      const check = startCli(['rates', '--check-config'], {}, empty);
      assert.equal(await check.exited(), 0, check.stderr());
      assert.equal(check.stdout(), 'no configuration file found (--config, $CURRENCYINFO_CONFIG, ./config.jsonc): the embedded defaults are valid\n');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('an invalid ./config.jsonc found by the lookup is named in the report (a console config.jsonc in the same folder, say)', async () => {
    const other = mkdtempSync(join(tmpdir(), 'rates-lookup-invalid-'));
    try {
      writeFileSync(join(other, 'config.jsonc'), '{ "rpc": { "port": 5080 } }');
      const check = startCli(['rates', '--check-config'], {}, other);
      assert.equal(await check.exited(), 1);
      assert.match(check.stderr(), /^App configuration is invalid:\n/);
      assert.match(check.stderr(), new RegExp(`\nConfiguration file: ${join(other, 'config.jsonc')}\nCannot start the app\.\n$`));
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('a file named by $CURRENCYINFO_CONFIG that does not exist is an error, not a fall-through to ./config.jsonc', async () => {
    const check = startCli(['rates', '--check-config'], { CURRENCYINFO_CONFIG: join(dir, 'missing.jsonc') }, dir);
    assert.equal(await check.exited(), 1);
    assert.match(check.stderr(), /No config found at '.*missing\.jsonc'/);
  });
});

describe('files: --config, then $IPFS_NODE_CONFIG (a path, or a name selecting config.<name>.json5), then ./config.json5', () => {
  let dir: string;
  let port: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'files-lookup-'));
    port = await freePort();
    for (const name of ['config.json5', 'config.test1.json5', 'flag.json5']) writeFileSync(join(dir, name), JSON.stringify(filesCliConfig(port)));
  });
  after(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }));

  it('started in a folder holding config.json5, it reads it: the later upstream line names the file and the port answers', async () => {
    const node = startCli(['files', '--host', '127.0.0.1'], { HOME: dir }, dir);
    try {
      await node.waitForLine((line) => line.msg === 'listening' && line.listener === 'files', 30_000);
      const configLines = node.lines.filter((line) => line.service === 'files' && (line.msg as string).toLowerCase().includes('config'));
      assert.deepEqual(configLines.map((line) => line.msg), [`Using config file: ${join(dir, 'config.json5')}`]);
      const response = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(await response.text(), 'IPFS node');
    } finally {
      assert.equal(await node.stop(), 0, node.stderr());
    }
  });

  it('$IPFS_NODE_CONFIG selects config.<name>.json5 over ./config.json5; --config wins over the variable', async () => {
    const byName = startCli(['files', '--check-config'], { HOME: dir, IPFS_NODE_CONFIG: 'test1' }, dir);
    assert.equal(await byName.exited(), 0, byName.stderr());
    assert.equal(byName.stdout(), `Configuration is valid (${join(dir, 'config.test1.json5')})\n`);
    const byFlag = startCli(['files', '--check-config', '--config', 'flag.json5'], { HOME: dir, IPFS_NODE_CONFIG: 'test1' }, dir);
    assert.equal(await byFlag.exited(), 0, byFlag.stderr());
    assert.equal(byFlag.stdout(), `Configuration is valid (${join(dir, 'flag.json5')})\n`);
  });

  it('with no file, the files service does not start (the original needs its config.json5)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'files-lookup-none-'));
    try {
      const check = startCli(['files', '--check-config'], { HOME: empty }, empty);
      assert.equal(await check.exited(), 1);
      assert.match(check.stderr(), new RegExp(`No config found at '${join(empty, 'config.json5')}'`));
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('console: --config, then $ADM_CONFIG_PATH/$ADM_CONFIG_FILENAME (~/.adm/config.jsonc), then ./config.jsonc, then the packaged defaults', () => {
  let node: FakeAdamantNode;
  let dir: string;
  let home: string;

  before(async () => {
    node = await startFakeAdamantNode({ height: 777 });
    dir = mkdtempSync(join(tmpdir(), 'console-lookup-'));
    home = join(dir, 'home');
    mkdirSync(home);
  });
  after(async () => {
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const consoleFile = (port: number) => `{
    // the fake node
    "rpc": { "port": ${port} },
    "networks": { "testnet": { "nodes": [ { "ip": "127.0.0.1", "protocol": "http", "port": ${new URL(node.url).port} } ] } }
  }`;

  it('started in a folder holding config.jsonc and an empty home, it reads ./config.jsonc: one line names it, its rpc.port answers', async () => {
    const port = await freePort();
    const cwd = join(dir, 'cwd');
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'config.jsonc'), consoleFile(port));
    const service = startCli(['console', '--host', '127.0.0.1'], { HOME: home }, cwd);
    try {
      await service.waitForLine((line) => line.msg === 'listening' && line.listener === 'console', 30_000);
      const configLines = service.lines.filter((line) => line.service === 'console' && (line.msg as string).includes('config'));
      assert.deepEqual(configLines.map((line) => line.msg), [`configuration read from '${join(cwd, 'config.jsonc')}'`]);
      const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 1 }) });
      assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 1, result: 777 });
    } finally {
      assert.equal(await service.stop(), 0, service.stderr());
    }
  });

  it('~/.adm/config.jsonc wins over ./config.jsonc, $ADM_CONFIG_PATH replaces ~/.adm, --config wins over all', async () => {
    const cwd = join(dir, 'cwd');
    mkdirSync(join(home, '.adm'), { recursive: true });
    writeFileSync(join(home, '.adm', 'config.jsonc'), consoleFile(1));
    const fromHome = startCli(['console', '--check-config'], { HOME: home }, cwd);
    assert.equal(await fromHome.exited(), 0, fromHome.stderr());
    assert.equal(fromHome.stdout(), `Configuration is valid (${join(home, '.adm', 'config.jsonc')})\n`);
    const other = join(dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'config.jsonc'), consoleFile(2));
    const fromEnv = startCli(['console', '--check-config'], { HOME: home, ADM_CONFIG_PATH: other }, cwd);
    assert.equal(await fromEnv.exited(), 0, fromEnv.stderr());
    assert.equal(fromEnv.stdout(), `Configuration is valid (${join(other, 'config.jsonc')})\n`);
    writeFileSync(join(cwd, 'flag.jsonc'), consoleFile(3));
    const fromFlag = startCli(['console', '--check-config', '--config', join(cwd, 'flag.jsonc')], { HOME: home, ADM_CONFIG_PATH: other }, cwd);
    assert.equal(await fromFlag.exited(), 0, fromFlag.stderr());
    assert.equal(fromFlag.stdout(), `Configuration is valid (${join(cwd, 'flag.jsonc')})\n`);
  });

  it('with none of them, --check-config names the places looked at and the packaged defaults', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    const check = startCli(['console', '--check-config'], { HOME: empty }, empty);
    assert.equal(await check.exited(), 0, check.stderr());
    assert.equal(
      check.stdout(),
      `no configuration file found (--config, ${join(empty, '.adm', 'config.jsonc')} ($ADM_CONFIG_PATH/$ADM_CONFIG_FILENAME), ./config.jsonc): the packaged defaults are valid\n`,
    );
  });
});
