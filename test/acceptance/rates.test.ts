// Black-box acceptance of the rates service (docs/notes/rates.md H): the built CLI as a real process,
// its upstream sources faked on 127.0.0.1, observed only through HTTP, its exit code and its stdout.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, test } from 'node:test';
import { addressFromPublicKey, keyPairFromPassphrase } from '../../src/console/crypto.js';
import { startFakeUpstreams, type FakeUpstreams } from '../rates/fakes/upstreams.js';
import { startFakeAdamantNode } from '../support/adamant-node.js';
import { freePort, startCli, type CliProcess } from '../support/cli.js';
import { waitFor } from '../support/wait.js';

const INTERVAL_MINUTES = 0.02; // 1.2 s between cycles
const ADMIN_KEY = 'operator-key-0123456789-abcdefghij';

function ratesConfig(fakes: FakeUpstreams, port: number, sqlitePath: string, extra: Record<string, unknown> = {}) {
  return {
    // Comments and trailing commas are part of the accepted format; the file is JSON here.
    name: 'Currencyinfo',
    decimals: 12,
    strategy: 'priority',
    rateDifferencePercentThreshold: 25,
    groupPercentage: 65,
    minSources: 2,
    priorities: ['CoinPaprika', 'CoinLore', 'Binance', 'ExchangeRateApi', 'CurrencyApi'],
    refreshInterval: INTERVAL_MINUTES,
    rateLifetime: 60,
    server: { port, sqlite: { path: sqlitePath } },
    log_level: 'log',
    base_coins: ['USD', 'EUR', 'BTC'],
    mappings: { CWIF: '$CWIF' },
    currency_api: { enabled: true, url: fakes.baseUrlFor('CurrencyApi'), codes: ['USD', 'EUR'] },
    exchange_rate_api: { enabled: true, url: fakes.baseUrlFor('ExchangeRateApi'), codes: ['USD', 'EUR'] },
    coinpaprika: { enabled: true, url: fakes.baseUrlFor('CoinPaprika'), coins: ['BTC', 'ADM', 'CWIF'] },
    coinlore: { enabled: true, url: fakes.baseUrlFor('CoinLore'), coins: ['BTC', 'ADM', 'DOGE'] },
    binance: { enabled: true, url: fakes.baseUrlFor('Binance'), coins: ['BTC'] },
    ...extra,
  };
}

interface Json {
  status: number;
  headers: Headers;
  body: any;
}

async function getJson(port: number, path: string): Promise<Json> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe('rates service as a process', () => {
  let fakes: FakeUpstreams;
  let dir: string;
  let port: number;
  let adminPort: number;
  let service: CliProcess;
  let startedAt: number;

  before(async () => {
    fakes = await startFakeUpstreams();
    fakes.setPrice('CoinPaprika', 'BTC', 60000);
    fakes.setPrice('CoinLore', 'BTC', 61000);
    fakes.setPrice('Binance', 'BTC', 60500);
    fakes.setPrice('CoinPaprika', 'ADM', 0.03);
    fakes.setPrice('CoinLore', 'ADM', 0.05);
    fakes.setPrice('CoinPaprika', 'CWIF', 0.5);
    fakes.setPrice('CoinLore', 'DOGE', 0.2);
    for (const fiat of ['CurrencyApi', 'ExchangeRateApi'] as const) {
      fakes.setPrice(fiat, 'USD', 1);
      fakes.setPrice(fiat, 'EUR', 1.25); // USD per EUR: the API answers 0.8 EUR per USD
    }
    // Hold every answer briefly so the state before the first snapshot is observable.
    for (const source of ['CurrencyApi', 'ExchangeRateApi', 'CoinPaprika', 'CoinLore', 'Binance'] as const) fakes.delaySource(source, 700);
    dir = mkdtempSync(join(tmpdir(), 'rates-acceptance-'));
    port = await freePort();
    adminPort = await freePort();
    writeFileSync(join(dir, 'config.jsonc'), JSON.stringify(ratesConfig(fakes, port, join(dir, 'history.sqlite')), null, 2));
    startedAt = Date.now();
    service = startCli(['rates', '--config', join(dir, 'config.jsonc'), '--host', '127.0.0.1'], {
      ADMIN_PORT: String(adminPort),
      ADMIN_API_KEY: ADMIN_KEY,
    });
    await service.waitForLine((line) => line.msg === 'listening' && line.listener === 'rates');
    assert.ok(service.lines.some((line) => line.msg === `InfoService successfully read the config-file '${join(dir, 'config.jsonc')}'.`), 'the original startup line');
  });

  after(async () => {
    await service?.stop();
    await fakes?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('H.1/A.3: before the first snapshot /status says ready false, updating true, next_update = start, last_updated null', async () => {
    const { status, body } = await getJson(port, '/status');
    assert.equal(status, 200);
    assert.deepEqual(Object.keys(body), ['success', 'date', 'ready', 'updating', 'next_update', 'last_updated', 'version']);
    assert.equal(body.ready, false);
    assert.equal(body.updating, true);
    assert.equal(body.last_updated, null);
    assert.ok(body.next_update >= startedAt - 1000 && body.next_update <= Date.now(), 'next_update is the process start time');
    assert.equal(body.version, '4.2.0');
  });

  it('H.3: after the first cycle ready is true and next_update = last_updated + refreshInterval', async () => {
    for (const source of ['CurrencyApi', 'ExchangeRateApi', 'CoinPaprika', 'CoinLore', 'Binance'] as const) fakes.delaySource(source, 0);
    const body = await waitFor(async () => {
      const { body: status } = await getJson(port, '/status');
      return status.ready ? status : undefined;
    }, { timeoutMs: 15_000, what: 'first snapshot' });
    assert.match(String(body.last_updated), /^\d{13}$/);
    assert.equal(body.next_update, body.last_updated + INTERVAL_MINUTES * 60_000);
  });

  it('H.5/H.6/H.9/H.12/H.13: /get serves the merged table in the documented envelope', async () => {
    const { status, headers, body } = await getJson(port, '/get');
    assert.equal(status, 200);
    assert.equal(headers.get('access-control-allow-origin'), '*');
    assert.deepEqual(Object.keys(body), ['success', 'date', 'result', 'last_updated', 'version']);
    assert.ok(Math.abs(body.date - Date.now()) < 5_000);
    const r = body.result;
    assert.equal(r['BTC/USD'], 60000, 'priority picks CoinPaprika inside the one group');
    assert.equal(r['ADM/USD'], undefined, 'equal-weight conflict: rejected');
    assert.equal(r['EUR/USD'], 1.25);
    assert.equal(r['BTC/EUR'], 48000);
    assert.equal(r['USD/BTC'], 0.000016666667);
    assert.equal(r['EUR/BTC'], 0.000020833333);
    assert.equal(r['BTC/BTC'], 1);
    assert.equal(r['DOGE/USD'], 0.2, 'a coin only one source advertises needs one quote');
  });

  it('H.14–H.17/H.19/H.22/H.23: /get filters and validation', async () => {
    const all = (await getJson(port, '/get')).body.result;
    const lower = await getJson(port, '/get?coin=btc');
    const upper = await getJson(port, '/get?coin=BTC');
    assert.deepEqual(lower.body.result, upper.body.result);
    assert.ok(Object.keys(upper.body.result).every((pair) => pair.split('/').includes('BTC')));
    const usd = (await getJson(port, '/get?coin=USD')).body.result;
    assert.ok(Object.keys(usd).every((pair) => pair.split('/').includes('USD')));
    assert.ok('BTC/USD' in usd && 'USD/EUR' in usd);
    assert.deepEqual((await getJson(port, '/get?coin=NOPE')).body.result, {});
    const pair = await getJson(port, '/get?coin=ADM/USD');
    assert.equal(pair.status, 400);
    assert.deepEqual(Object.keys(pair.body), ['success', 'date', 'msg']);
    assert.equal(pair.body.msg, 'Invalid coin name list');
    for (const value of ['0', '-5']) {
      const tooSmall = await getJson(port, `/get?rateLifetime=${value}`);
      assert.equal(tooSmall.status, 400);
      assert.equal(tooSmall.body.msg, 'Too small: expected number to be >0');
    }
    assert.equal((await getJson(port, '/get?rateLifetime=abc')).body.msg, 'Invalid input: expected number, received NaN');
    assert.equal((await getJson(port, '/get?foo=1')).body.msg, 'Unrecognized key: "foo"');
    assert.deepEqual((await getJson(port, '/get?rateLifetime=60')).body.result, all);
    const cwif = (await getJson(port, '/get?coin=%24CWIF')).body.result;
    assert.deepEqual(Object.keys(cwif).filter((key) => key.endsWith('/USD')), ['$CWIF/USD']);
    const shortWindow = await getJson(port, '/get?rateLifetime=0.0001');
    assert.equal(shortWindow.status, 200, 'a tiny window re-runs the pipeline: nothing is fresh enough');
    assert.deepEqual(shortWindow.body.result, {});
  });

  it('H.25: the startup log names a pair configured in fewer sources than minSources', () => {
    const warning = service.lines.find((line) => typeof line.msg === 'string' && line.msg.startsWith('The following pairs have fewer enabled sources than the configured minimum (minSources=2)'));
    assert.ok(warning, 'coverage warning logged');
    assert.match(String(warning!.msg), /DOGE\/USD \(1\)/);
    assert.match(String(warning!.msg), /\$CWIF\/USD \(1\)/);
  });

  it('H.26/H.49: a failing source is logged every cycle by name, its last quotes carry over, the service keeps serving', async () => {
    const { body: before } = await getJson(port, '/status');
    fakes.failSource('CoinLore', 500);
    const failuresBefore = service.lines.filter((l) => l.msg === 'source failed' && l.source === 'CoinLore').length;
    const warnings = () => service.lines.filter((l) => l.notice === true && typeof l.msg === 'string' && l.msg.startsWith('Unable to fetch valid data from CoinLore')).length;
    const warningsBefore = warnings();
    // The notice of a cycle is published by the notifier after the cycle's own 'source failed' line: wait for both.
    await waitFor(
      async () => {
        const failures = service.lines.filter((l) => l.msg === 'source failed' && l.source === 'CoinLore').length;
        const { body } = await getJson(port, '/status');
        return failures >= failuresBefore + 2 && warnings() >= warningsBefore + 2 && body.last_updated > before.last_updated ? true : undefined;
      },
      { timeoutMs: 15_000, what: 'two failing cycles, their warning notices and a new snapshot' },
    );
    const failed = service.lines.filter((l) => l.msg === 'source failed' && l.source === 'CoinLore').length - failuresBefore;
    // The newest cycle's notice may still be on its way; every cycle before it has its own.
    assert.ok(warnings() - warningsBefore >= failed - 1, `one warning notice per failed cycle (${failed} failed cycles, ${warnings() - warningsBefore} notices)`);
    const history = await getJson(port, '/getHistory?coin=DOGE&limit=1');
    assert.equal(history.status, 200);
    assert.equal(history.body.result[0].tickers['DOGE/USD'], 0.2, 'the failed source\'s last quote is still in the new snapshot');
    assert.ok(history.body.result[0].date > before.last_updated);
    assert.equal((await getJson(port, '/get')).body.result['BTC/USD'], 60000);
    fakes.failSource('CoinLore', null);
  });

  it('H.32/H.34–H.36: /getHistory validation messages', async () => {
    const cases: Array<[string, string]> = [
      ['/getHistory', 'At least one parameter is required'],
      ['/getHistory?coin=ADM-USD', 'Invalid input'],
      ['/getHistory?coin=/', 'Invalid input'],
      ['/getHistory?from=200&to=100', "Invalid time interval: 'to' timestamp must be greater than or equal to 'from'"],
      ['/getHistory?limit=0', 'Too small: expected number to be >0'],
      ['/getHistory?timestamp=9007199254740991', 'Timestamp is too large'],
      ['/getHistory?foo=1', 'Unrecognized key: "foo"'],
      ['/status?x=1', 'Unrecognized key: "x"'],
    ];
    for (const [path, msg] of cases) {
      const { status, body } = await getJson(port, path);
      assert.equal(status, 400, path);
      assert.equal(body.msg, msg, path);
      assert.equal(body.success, false);
    }
    const missing = await getJson(port, '/nothing-here');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.msg, 'Not found');
  });

  it('H.38/H.39/H.41/H.44/H.46: /getHistory reads the stored snapshots', async () => {
    await waitFor(async () => ((await getJson(port, '/getHistory?limit=100')).body.result.length >= 3 ? true : undefined), { timeoutMs: 15_000, what: 'three snapshots' });
    const two = (await getJson(port, '/getHistory?limit=2')).body.result;
    assert.equal(two.length, 2);
    assert.ok(two[0].date > two[1].date);
    for (const snapshot of two) {
      assert.deepEqual(Object.keys(snapshot), ['_id', 'date', 'tickers']);
      assert.match(snapshot._id, /^[0-9a-f]{24}$/);
      assert.match(String(snapshot.date), /^\d{13}$/);
    }
    const capped = (await getJson(port, '/getHistory?limit=500')).body.result;
    assert.ok(capped.length >= 3 && capped.length <= 100);
    const newest = capped[0];
    const oldest = capped[capped.length - 1];
    const at = (await getJson(port, `/getHistory?timestamp=${Math.ceil(newest.date / 1000)}`)).body.result;
    assert.equal(at.length, 1);
    assert.ok(at[0].date <= Math.ceil(newest.date / 1000) * 1000);
    assert.deepEqual((await getJson(port, `/getHistory?timestamp=${Math.floor(oldest.date / 1000) - 1}`)).body.result, []);
    const base = (await getJson(port, '/getHistory?coin=BTC/&limit=3')).body.result;
    assert.ok(base.every((s: any) => Object.keys(s.tickers).every((k) => k.startsWith('BTC/'))));
    const quote = (await getJson(port, '/getHistory?coin=/USD&limit=3')).body.result;
    assert.ok(quote.every((s: any) => Object.keys(s.tickers).every((k) => k.endsWith('/USD'))));
    const either = (await getJson(port, '/getHistory?coin=btc&limit=3')).body.result;
    assert.ok(either.every((s: any) => Object.keys(s.tickers).every((k) => k.split('/').includes('BTC'))));
    assert.ok(either.some((s: any) => 'USD/BTC' in s.tickers && 'BTC/USD' in s.tickers));
    const exact = (await getJson(port, '/getHistory?coin=EUR/BTC&limit=1')).body.result;
    assert.deepEqual(Object.keys(exact[0].tickers), ['EUR/BTC']);
    // H.46: `to` before the newest snapshot, `timestamp` after it → the newest snapshot at or before `to`.
    const toSeconds = Math.floor(newest.date / 1000) - 1;
    const expected = capped.find((s: any) => s.date <= toSeconds * 1000);
    const windowed = (await getJson(port, `/getHistory?from=0&to=${toSeconds}&timestamp=${Math.ceil(newest.date / 1000) + 100}`)).body.result;
    assert.equal(windowed.length, 1);
    assert.equal(windowed[0]._id, expected._id, 'the newest snapshot at or before `to`');
  });

  it('the operator listener shows the running supervision tree behind the admin key', async () => {
    const unauthorized = await fetch(`http://127.0.0.1:${adminPort}/actors`);
    assert.equal(unauthorized.status, 401);
    const response = await fetch(`http://127.0.0.1:${adminPort}/actors`, { headers: { 'x-api-key': ADMIN_KEY } });
    assert.equal(response.status, 200);
    const tree = (await response.json()) as any;
    const rates = tree.roots[0].children.find((child: any) => child.systemId === 'rates');
    assert.deepEqual(
      rates.children.map((child: any) => child.systemId),
      ['rates.history', 'rates.notifier', 'rates.refresh', 'rates.http'],
    );
    const refresh = rates.children.find((child: any) => child.systemId === 'rates.refresh');
    assert.equal(refresh.machineId, 'ratesRefreshCycle');
    assert.equal(refresh.status, 'running');
    assert.ok(['idle', 'fetching', 'deciding', 'storing'].includes(refresh.state));
  });

  it('SIGTERM shuts down gracefully and exits 0; the history survives a restart', async () => {
    const { body: before } = await getJson(port, '/getHistory?limit=100');
    const code = await service.stop();
    assert.equal(code, 0);
    assert.ok(service.lines.some((line) => line.msg === 'stopped'));
    await assert.rejects(fetch(`http://127.0.0.1:${port}/status`), 'the port is closed');

    service = startCli(['rates', '--config', join(dir, 'config.jsonc'), '--host', '127.0.0.1']);
    await service.waitForLine((line) => line.msg === 'listening' && line.listener === 'rates');
    const { body: afterRestart } = await getJson(port, `/getHistory?limit=100&to=${Math.floor(before.result[0].date / 1000) + 1}`);
    assert.deepEqual(afterRestart.result.slice(0, before.result.length).map((s: any) => s._id), before.result.map((s: any) => s._id));
  });
});

test('H.28: an unknown configuration key is reported and the process exits non-zero before opening the port', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rates-badconfig-'));
  try {
    const fakes = await startFakeUpstreams();
    const port = await freePort();
    const config = { ...ratesConfig(fakes, port, join(dir, 'h.sqlite')), foo: 1, coinpaprika: { enabled: true, coins: ['BTC'], typo: true } };
    await fakes.close();
    writeFileSync(join(dir, 'config.jsonc'), JSON.stringify(config));
    const service = startCli(['rates', '--config', join(dir, 'config.jsonc')]);
    const code = await service.exited();
    assert.notEqual(code, 0);
    assert.match(service.stderr(), /App configuration is invalid:/);
    assert.match(service.stderr(), /foo/);
    assert.match(service.stderr(), /coinpaprika\.typo/, 'every problem is reported at once');
    assert.match(service.stderr(), /Cannot start the app\./);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/status`), 'the port never opened');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('H.31 and --check-config: a disabled key-gated source needs no key; a valid file checks out', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rates-check-'));
  try {
    const fakes = await startFakeUpstreams();
    const config = { ...ratesConfig(fakes, 1, join(dir, 'h.sqlite')), coingecko: { enabled: false } };
    await fakes.close();
    writeFileSync(join(dir, 'config.jsonc'), `// a comment, as operators write them\n${JSON.stringify(config, null, 2).replace(/\n}$/, ',\n}')}`);
    const check = startCli(['rates', '--check-config', '--config', join(dir, 'config.jsonc')]);
    assert.equal(await check.exited(), 0, check.stderr());
    assert.match(check.stdout(), /Configuration is valid/);
    const gated = { ...config, coingecko: { coins: ['BTC'] } };
    writeFileSync(join(dir, 'gated.jsonc'), JSON.stringify(gated));
    const refused = startCli(['rates', '--check-config', '--config', join(dir, 'gated.jsonc')]);
    assert.equal(await refused.exited(), 1);
    assert.match(refused.stderr(), /Provide a free CoinGecko Demo API key when CoinGecko is enabled/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ADAMANT notifications: the startup notice reaches the configured address through notify.adamantNodes; the passphrase is never printed', async () => {
  // Public BIP-39 test mnemonics, no real funds: the sending account, and the recipient the fake node reads for.
  const sender = `${'abandon '.repeat(11)}about`;
  const recipient = `${'zoo '.repeat(11)}wrong`;
  const recipientAddress = addressFromPublicKey(keyPairFromPassphrase(recipient).publicKey);
  const dir = mkdtempSync(join(tmpdir(), 'rates-adamant-'));
  const fakes = await startFakeUpstreams();
  const node = await startFakeAdamantNode({ accounts: [recipient] });
  let service: CliProcess | undefined;
  try {
    const port = await freePort();
    const notify = { slack: [], discord: [], adamant: [recipientAddress], adamantPassphrase: sender, adamantNodes: [node.url] };
    writeFileSync(join(dir, 'config.jsonc'), JSON.stringify(ratesConfig(fakes, port, join(dir, 'h.sqlite'), { notify })));
    service = startCli(['rates', '--config', join(dir, 'config.jsonc'), '--host', '127.0.0.1']);
    const expected = `info| **Currencyinfo**# Infoservice v4.2.0 started on port ${port}`;
    const startup = await waitFor(() => node.received.find((message) => message.text === expected), { timeoutMs: 15_000, what: 'the startup notice' });
    assert.equal(startup.recipientId, recipientAddress);
    assert.equal(startup.senderId, addressFromPublicKey(keyPairFromPassphrase(sender).publicKey));
    assert.equal(startup.chatType, 1);
    assert.equal(await service.stop(), 0);
    for (const output of [service.stdout(), service.stderr()]) {
      assert.ok(!output.includes(sender) && !output.includes('abandon abandon'), 'the passphrase appears in no output');
    }
  } finally {
    await service?.stop();
    await node.close();
    await fakes.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ADAMANT notifications: listed addresses without a real passphrase stop the process before the port opens', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'rates-adamant-bad-'));
  try {
    const fakes = await startFakeUpstreams();
    const port = await freePort();
    const config = ratesConfig(fakes, port, join(dir, 'h.sqlite'), { notify: { adamant: ['U1234567890', 'U12'], adamantPassphrase: 'apple banana...' } });
    await fakes.close();
    writeFileSync(join(dir, 'config.jsonc'), JSON.stringify(config));
    const service = startCli(['rates', '--config', join(dir, 'config.jsonc')]);
    assert.notEqual(await service.exited(), 0);
    assert.match(service.stderr(), /notify\.adamantPassphrase: Provide passphrase to use ADAMANT notifier/);
    assert.match(service.stderr(), /notify\.adamant\[1\]: Invalid ADAMANT address/);
    await assert.rejects(fetch(`http://127.0.0.1:${port}/status`), 'the port never opened');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('command line: --help exits 0, an unknown service prints usage and exits 2', async () => {
  const help = startCli(['--help']);
  assert.equal(await help.exited(), 0);
  assert.match(help.stdout(), /Usage: adm-infra <service>/);
  const unknown = startCli(['nonsense']);
  assert.equal(await unknown.exited(), 2);
  assert.match(unknown.stderr(), /unknown service: nonsense/);
  assert.match(unknown.stderr(), /Usage: adm-infra/);
  const missing = startCli([]);
  assert.equal(await missing.exited(), 2);
});
