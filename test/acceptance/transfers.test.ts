// Black-box acceptance of the transfers service (notes H): the built CLI as a real process, observed through HTTP,
// its exit code and its output. The embedded default (PGlite in DATA_DIR, no server), a restart on the same data,
// and the configuration report.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort, startCli, type CliProcess } from '../support/cli.js';

const listening = (line: Record<string, unknown>) => line.msg === 'listening' && line.listener === 'transfers';

describe('transfers service as a process (embedded PGlite)', () => {
  let dir: string;
  let port: number;
  let service: CliProcess | undefined;
  const env = () => ({ DATA_DIR: join(dir, 'pglite'), PGRST_SERVER_PORT: String(port), PGRST_SERVER_HOST: '127.0.0.1' });
  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'adm-transfers-acceptance-'));
    port = await freePort();
  });
  after(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a fresh data folder: /aval, /max_block null, read-only verbs, exit 0 on SIGTERM (H1, H2, H35, H36)', async () => {
    service = startCli(['transfers'], env());
    await service.waitForLine(listening, 60_000);
    const aval = await fetch(url('/aval'));
    assert.equal(aval.status, 200);
    assert.equal(aval.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(await aval.text(), '[{"status":true}]');
    assert.equal(await (await fetch(url('/max_block'))).text(), '[{"max":null,"version":"3.0.0"}]');
    const empty = await fetch(url('/ethtxs?limit=5'));
    assert.equal(await empty.text(), '[]');
    assert.equal(empty.headers.get('content-range'), '*/*');
    const post = await fetch(url('/ethtxs'), { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(post.status, 405);
    assert.equal((await post.json()).code, 'PGRST117');
    assert.equal(service.lines.some((line) => line.msg === 'indexer step failed; retrying'), false, 'no indexer without ETH_URL');
    assert.equal(await service.stop(), 0);
    service = undefined;
  });

  test('a restart opens the same data folder (citext reloaded) and serves again', async () => {
    service = startCli(['transfers'], env());
    await service.waitForLine(listening, 60_000);
    assert.equal(await (await fetch(url('/aval'))).text(), '[{"status":true}]');
    assert.equal((await fetch(url('/ethtxs?txfrom=eq.0xABC'))).status, 200);
    assert.equal(await service.stop(), 0);
    service = undefined;
  });
});

test('an invalid configuration is reported at once and exits 1 before any port opens', async () => {
  const port = await freePort();
  const service = startCli(['transfers'], { INDEXER: 'true', START_BLOCK: 'x', PGRST_SERVER_PORT: String(port) });
  assert.equal(await service.exited(), 1);
  assert.match(service.stderr(), /ETH_URL: required/);
  assert.match(service.stderr(), /START_BLOCK: must be an integer/);
  await assert.rejects(fetch(`http://127.0.0.1:${port}/aval`));
});
