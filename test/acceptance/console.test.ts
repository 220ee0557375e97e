// Black-box acceptance of the console server (notes H45–H52): the built CLI as a process with a config file in the
// original's JSONC format pointing at a fake ADAMANT node on loopback.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startFakeAdamantNode, type FakeAdamantNode } from '../support/adamant-node.js';
import { freePort, startCli } from '../support/cli.js';

let node: FakeAdamantNode;
let dir: string;

before(async () => {
  node = await startFakeAdamantNode({ height: 4242 });
  dir = mkdtempSync(join(tmpdir(), 'adm-console-acceptance-'));
});
after(async () => {
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('adm-infra console: the JSONC config, nodeHeight through the fake node, 405 for GET, exit 0 on SIGTERM', async () => {
  const port = await freePort();
  const file = join(dir, 'config.jsonc');
  // Comments are part of the format.
  writeFileSync(file, `{
    /* the node to ask */
    "network": "testnet",
    "rpc": { "port": ${port} },
    "networks": { "testnet": { "nodes": [ { "ip": "127.0.0.1", "protocol": "http", "port": ${new URL(node.url).port} } ] } }
  }`);
  const service = startCli(['console', '--config', file, '--host', '127.0.0.1'], { HOME: dir });
  try {
    await service.waitForLine((line) => line.msg === 'listening' && line.listener === 'console', 30_000);
    // The currencyinfo line belongs to the rates service; the console names its file plainly.
    assert.ok(service.lines.some((line) => line.msg === `configuration read from '${file}'` && line.service === 'console' && line.config === file));
    assert.ok(!service.lines.some((line) => typeof line.msg === 'string' && line.msg.startsWith('InfoService')));
    const response = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', method: 'nodeHeight', params: [], id: 1 }) });
    assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 1, result: 4242 });
    assert.equal((await fetch(`http://127.0.0.1:${port}/`)).status, 405);
    // A batch of 50 node calls under one request: answered whole, and (checked below) no warning on stderr.
    const batch = Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', method: i % 2 ? 'getBlock' : 'nodeHeight', params: i % 2 ? [String(i)] : [], id: i }));
    const answers = (await (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })).json()) as Array<{ id: number; result?: unknown }>;
    assert.equal(answers.filter((answer) => answer.result !== undefined).length, 50);
  } finally {
    assert.equal(await service.stop(), 0);
  }
  assert.doesNotMatch(service.stderr(), /MaxListenersExceededWarning|memory leak/);
});

test('an invalid console config is reported and exits 1', async () => {
  const file = join(dir, 'broken.jsonc');
  writeFileSync(file, '{ "rpc": { "port": "x" } }');
  const service = startCli(['console', '--config', file], { HOME: dir });
  assert.equal(await service.exited(), 1);
  assert.match(service.stderr(), /rpc\.port/);
});
