// The `adm` command line as a process (notes C.3): commands against a fake ADAMANT node, pretty JSON output,
// helpful errors, init.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startFakeAdamantNode, type FakeAdamantNode } from '../support/adamant-node.js';
import { DIST, POLYFILL } from '../support/cli.js';
import { addressFromPublicKey, keyPairFromPassphrase } from '../../src/console/crypto.js';

const run = promisify(execFile);
const ADM = join(DIST, 'src', 'adm.js');

/** Public BIP-39 test mnemonics (notes D): the sender, and a test account the fake node reads messages for. */
const SENDER = `${'abandon '.repeat(11)}about`;
const RECIPIENT = `${'zoo '.repeat(11)}wrong`;
let node: FakeAdamantNode;
let dir: string;

async function adm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', POLYFILL, ADM, ...args], { env: { PATH: process.env.PATH, HOME: dir, ADM_CONFIG_PATH: join(dir, '.adm') }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

before(async () => {
  node = await startFakeAdamantNode({ height: 9001, accounts: [RECIPIENT] });
  dir = mkdtempSync(join(tmpdir(), 'adm-cli-'));
  mkdirSync(join(dir, '.adm'));
  writeFileSync(join(dir, '.adm', 'config.jsonc'), JSON.stringify({ networks: { testnet: { nodes: [{ ip: '127.0.0.1', protocol: 'http', port: Number(new URL(node.url).port) }] } } }));
});
after(async () => {
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('adm node height and get address print pretty JSON with success', async () => {
  const height = await adm(['node', 'height']);
  assert.equal(height.code, 0, height.stderr);
  assert.equal(height.stdout, '{\n  "success": true,\n  "height": 9001\n}\n');
  const address = await adm(['get', 'address', 'U777']);
  assert.equal(JSON.parse(address.stdout).account.address, 'U777');
});

test('a mistyped command suggests the right one and exits 1; help lists the commands', async () => {
  const typo = await adm(['get', 'adress', 'U1']);
  assert.equal(typo.code, 1);
  assert.deepEqual(JSON.parse(typo.stdout), { success: false, error: "Unknown command 'get adress'. Did you mean 'get address'?" });
  const help = await adm(['help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /get transactions <query\.\.\.>/);
  node.routes.set('blocks/get', () => [200, { success: false, errorMessage: 'Block not found' }]);
  try {
    const failing = await adm(['get', 'block', '404']);
    assert.equal(failing.code, 1);
    assert.deepEqual(JSON.parse(failing.stdout), { success: false, error: 'Block not found' });
  } finally {
    node.routes.delete('blocks/get');
  }
});

test('adm get transactions sends the rewritten query; a passphrase given as an address is refused, not sent, not printed', async () => {
  const from = node.requests.length;
  const listed = await adm(['get', 'transactions', 'senderId=U1,and:limit=5,or:orderBy=timestamp:asc,withoutDirectTransfers=1']);
  assert.equal(listed.code, 0, listed.stderr);
  const asked = node.requests.slice(from).filter((request) => request.path !== 'node/status');
  assert.deepEqual(asked.map((request) => request.url), ['/api/transactions?senderId=U1&limit=5&orderBy=timestamp:asc&includeDirectTransfers=0']);
  const pasted = await adm(['get', 'address', SENDER]);
  assert.equal(pasted.code, 1);
  assert.deepEqual(JSON.parse(pasted.stdout), { success: false, error: "Wrong 'address' parameter" });
  const missing = await adm(['get', 'block', 'missing']);
  assert.deepEqual(JSON.parse(missing.stdout), { success: false, error: "Wrong 'id' parameter: missing" });
  assert.equal(node.requests.slice(from).filter((request) => request.path !== 'node/status').length, 1, 'only the listing reached the node');
  for (const output of [pasted.stdout, pasted.stderr]) assert.equal(output.includes(SENDER), false);
});

test('adm init writes a default config once and never overwrites it', async () => {
  const target = join(dir, 'new-config.jsonc');
  const first = await adm(['init', target]);
  assert.equal(first.code, 0);
  assert.match(readFileSync(target, 'utf8'), /"rpc"/);
  const second = await adm(['init', target]);
  assert.equal(second.code, 1);
  assert.match(JSON.parse(second.stdout).error, /already exists/);
});

test('adm account new prints a new account; adm send message with -p delivers the text, never printing the passphrase', async () => {
  const account = await adm(['account', 'new']);
  assert.equal(account.code, 0, account.stderr);
  const created = JSON.parse(account.stdout) as { success: boolean; passphrase: string; address: string };
  assert.equal(created.success, true);
  assert.equal(created.passphrase.split(' ').length, 12);
  assert.equal(created.address, addressFromPublicKey(keyPairFromPassphrase(created.passphrase).publicKey));

  const recipient = addressFromPublicKey(keyPairFromPassphrase(RECIPIENT).publicKey);
  const sent = await adm(['send', 'message', recipient, 'hello from adm', '-p', SENDER]);
  assert.equal(sent.code, 0, sent.stderr);
  const { transactionId } = JSON.parse(sent.stdout) as { transactionId: string };
  assert.deepEqual(node.received.map(({ id, text }) => ({ id, text })), [{ id: transactionId, text: 'hello from adm' }]);
  const refused = await adm(['send', 'tokens', 'U1', '1.5', '-p', SENDER]);
  assert.equal(refused.code, 1);
  for (const output of [sent.stdout, sent.stderr, refused.stdout, refused.stderr]) assert.equal(output.includes(SENDER), false);
});
