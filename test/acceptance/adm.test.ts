// The `adm` command line as a process (notes C.3): commands against a fake ADAMANT node, pretty JSON output,
// helpful errors, init, help in the original's layout and words (issue 28), the prompt in a pseudo-terminal.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { startFakeAdamantNode, type FakeAdamantNode } from '../support/adamant-node.js';
import { DIST, POLYFILL } from '../support/cli.js';
import { HAS_SCRIPT, startTerminal } from '../support/terminal.js';
import { addressFromPublicKey, keyPairFromPassphrase } from '../../src/console/crypto.js';
import { COMMANDS, SPECIAL_COMMANDS, usageText } from '../../src/console/commands.js';
import { TEMPLATE_PASSPHRASE } from '../../src/console/amount.js';
import { PACKAGED_CONSOLE_CONFIG } from '../../src/console/config.js';
import { CONSOLE_VERSION } from '../../src/console/methods.js';

const run = promisify(execFile);
const ADM = join(DIST, 'src', 'adm.js');

/** Public BIP-39 test mnemonics (notes D): the sender, and a test account the fake node reads messages for. */
const SENDER = `${'abandon '.repeat(11)}about`;
const RECIPIENT = `${'zoo '.repeat(11)}wrong`;
let node: FakeAdamantNode;
let dir: string;

/** Runs adm; by default HOME is the test folder and its .adm/config.jsonc names the fake node. */
async function adm(args: string[], options: { home?: string; cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const home = options.home ?? dir;
  const env = { PATH: process.env.PATH, HOME: home, ...(options.home === undefined ? { ADM_CONFIG_PATH: join(dir, '.adm') } : {}), ...options.env };
  try {
    const child = run(process.execPath, ['--import', POLYFILL, ADM, ...args], { env, cwd: options.cwd ?? home, timeout: 30_000 });
    if (options.input !== undefined) child.child.stdin!.end(options.input);
    const { stdout, stderr } = await child;
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
  assert.equal(typo.stderr, '');
  const help = await adm(['help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /get transactions <query> /);
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
  assert.match(JSON.parse(second.stdout).error, /already exists; it was left as it is/);
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

/** Node requests other than the health checks, since `from`. */
const asked = (from: number) => node.requests.slice(from).filter((request) => request.path !== 'node/status');

test('adm <command> --help and -h print the usage with examples and exit 0, for every command, without asking the node', async () => {
  const from = node.requests.length;
  const commands = [...COMMANDS, ...SPECIAL_COMMANDS];
  // A few at a time: the machine is shared.
  for (let i = 0; i < commands.length; i += 4) {
    await Promise.all(
      commands.slice(i, i + 4).map(async (command, j) => {
        // Required arguments given or not, --help wins; "-h" for every other command.
        const flag = (i + j) % 2 === 0 ? '--help' : '-h';
        const args = (i + j) % 3 === 0 ? command.args.filter((arg) => !arg.endsWith('?')).map(() => 'lynx') : [];
        const shown = await adm([...command.words, ...args, flag]);
        assert.equal(shown.code, 0, `${command.words.join(' ')} ${flag}: ${shown.stderr}`);
        assert.equal(shown.stdout, `${usageText(command)}\n`);
        assert.match(shown.stdout, /\nExamples:\n {2}\$ adm /);
        assert.equal(shown.stderr, '');
      }),
    );
  }
  const delegate = await adm(['delegate', 'new', '--help']);
  assert.match(delegate.stdout, /^Usage: adm delegate new \[options\] <username>\n/);
  assert.match(delegate.stdout, /\n {2}-p, --passphrase <phrase> /);
  const blocks = await adm(['get', 'blocks', '-h']);
  assert.match(blocks.stdout, /\$ adm get blocks limit=10\n/);
  assert.deepEqual(asked(from), [], 'no help asked the node');
});

test('a missing required argument exits 1 with the usage; nothing reaches the node', async () => {
  const from = node.requests.length;
  for (const words of [['get', 'transactions'], ['get', 'blocks'], ['get', 'address'], ['send', 'tokens', 'U1'], ['vote', 'for']]) {
    const missing = await adm(words);
    assert.equal(missing.code, 1, words.join(' '));
    assert.equal(missing.stdout, '');
    const command = COMMANDS.find((spec) => spec.words.every((word, i) => words[i] === word))!;
    assert.match(missing.stderr, /^error: missing required argument '[a-z]+'\n\n/);
    assert.ok(missing.stderr.endsWith(`${usageText(command)}\n`), missing.stderr);
  }
  const extra = await adm(['node', 'height', '42']);
  assert.equal(extra.code, 1);
  assert.match(extra.stderr, /^error: too many arguments for 'adm node height'\n\nUsage: adm node height \[options\]\n/);
  assert.deepEqual(asked(from), []);
});

test('adm --version and -v print the version', async () => {
  for (const flag of ['--version', '-v']) {
    const version = await adm([flag]);
    assert.equal(version.code, 0);
    assert.equal(version.stdout, `${CONSOLE_VERSION}\n`);
  }
});

test('adm init in a fresh HOME creates ~/.adm and its config; adm init . writes ./config.jsonc; neither overwrites', async () => {
  const home = mkdtempSync(join(tmpdir(), 'adm-home-'));
  try {
    const created = await adm(['init'], { home });
    assert.equal(created.code, 0, created.stderr);
    const target = join(home, '.adm', 'config.jsonc');
    assert.match(created.stdout, new RegExp(`^Config written to ${target}\n`));
    assert.equal(readFileSync(target, 'utf8'), readFileSync(PACKAGED_CONSOLE_CONFIG, 'utf8'));
    assert.equal(statSync(target).mode & 0o777, 0o600);
    writeFileSync(target, '{"network": "mainnet"}');
    const again = await adm(['init'], { home });
    assert.equal(again.code, 1);
    assert.deepEqual(JSON.parse(again.stdout), { success: false, error: `${target} already exists; it was left as it is (remove or rename it to start again)` });
    assert.equal(again.stderr, '');
    assert.equal(readFileSync(target, 'utf8'), '{"network": "mainnet"}');

    const folder = join(home, 'project');
    mkdirSync(folder);
    const here = await adm(['init', '.'], { home, cwd: folder });
    assert.equal(here.code, 0, here.stderr);
    assert.ok(existsSync(join(folder, 'config.jsonc')));
    assert.equal((await adm(['init', '.'], { home, cwd: folder })).code, 1);
    const named = await adm(['init', 'fresh/folder'], { home, cwd: folder });
    assert.equal(named.code, 0, named.stderr);
    assert.ok(existsSync(join(folder, 'fresh', 'folder', 'config.jsonc')));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('the template passphrase counts as not set; without a config, client version names the packaged config file', async () => {
  const home = mkdtempSync(join(tmpdir(), 'adm-home-'));
  try {
    const bare = await adm(['client', 'version'], { home });
    assert.equal(bare.code, 0, bare.stderr);
    assert.deepEqual(JSON.parse(bare.stdout), { success: true, version: CONSOLE_VERSION, network: 'testnet', config: PACKAGED_CONSOLE_CONFIG, account: 'Not set' });
    assert.ok(existsSync(PACKAGED_CONSOLE_CONFIG));

    // An init copy nobody edited, pointed at the fake node.
    assert.equal((await adm(['init'], { home })).code, 0);
    const target = join(home, '.adm', 'config.jsonc');
    const port = Number(new URL(node.url).port);
    writeFileSync(target, readFileSync(target, 'utf8').replace(/"nodes": \[[^\]]*\]/, `"nodes": [{ "ip": "127.0.0.1", "protocol": "http", "port": ${port} }]`));
    const copied = await adm(['client', 'version'], { home });
    assert.deepEqual(JSON.parse(copied.stdout), { success: true, version: CONSOLE_VERSION, network: 'testnet', config: target, account: 'Not set' });
    const given = await adm(['client', 'version', '-p', TEMPLATE_PASSPHRASE], { home });
    assert.equal(JSON.parse(given.stdout).account, 'Not set');
    const from = node.requests.length;
    const send = await adm(['send', 'tokens', 'U1234567890123456', '1'], { home });
    assert.equal(send.code, 1);
    assert.deepEqual(JSON.parse(send.stdout), { success: false, error: "Wrong 'passphrase' parameter" });
    assert.deepEqual(asked(from), [], 'nothing was signed or sent');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('near-miss commands suggest the right one; get delegate reads its parameter error like the original', async () => {
  const height = await adm(['get', 'height']);
  assert.equal(height.code, 1);
  assert.deepEqual(JSON.parse(height.stdout), { success: false, error: "Unknown command 'get height'. Did you mean 'node height'?" });
  const from = node.requests.length;
  const delegate = await adm(['get', 'delegate', 'Not A Name']);
  assert.equal(delegate.code, 1);
  assert.deepEqual(JSON.parse(delegate.stdout), { success: false, error: "Wrong 'name' parameter. Use username, publicKey, or address" });
  assert.deepEqual(asked(from), []);
});

test('the prompt reads piped lines in order and ends its last line when the input ends', async () => {
  const session = await adm([], { input: 'node height\nget height\n' });
  assert.equal(session.code, 0, session.stderr);
  assert.match(session.stdout, /"height": 9001/);
  assert.match(session.stdout, /"error": "Unknown command 'get height'\. Did you mean 'node height'\?"/);
  // Whether the input ended at a prompt or while a command ran, the output ends with a whole line.
  assert.ok(session.stdout.endsWith('\n') && !session.stdout.endsWith('adm > '), JSON.stringify(session.stdout.slice(-40)));
  // -p on a prompt line signs that line's command; the passphrase is never printed.
  const recipient = addressFromPublicKey(keyPairFromPassphrase(RECIPIENT).publicKey);
  const before = node.received.length;
  const signed = await adm([], { input: `send message ${recipient} "from the prompt" -p "${SENDER}"\n` });
  assert.equal(signed.code, 0, signed.stderr);
  assert.deepEqual(node.received.slice(before).map(({ text }) => text), ['from the prompt']);
  for (const output of [signed.stdout, signed.stderr]) assert.equal(output.includes(SENDER), false);
  const left = await adm([], { input: 'exit\n' });
  assert.equal(left.code, 0);
  assert.ok(left.stdout.endsWith('adm > '), 'exit typed on its line needs no newline from adm');
});

test('in a terminal, Ctrl-C clears the line, a second Ctrl-C on an empty line leaves with a newline', { skip: HAS_SCRIPT ? false : 'script (util-linux) is not installed' }, async () => {
  const terminal = startTerminal([process.execPath, '--import', POLYFILL, ADM], { PATH: process.env.PATH, HOME: dir, ADM_CONFIG_PATH: join(dir, '.adm') });
  const prompts = () => terminal.output().split('adm > ').length - 1;
  try {
    await terminal.waitFor(() => prompts() >= 1, 'first prompt');
    terminal.type('node hei');
    await terminal.waitFor((text) => text.includes('node hei'), 'echo');
    let mark = terminal.output().length;
    terminal.type('\x03');
    await terminal.waitFor((text) => text.slice(mark).includes('adm > '), 'a fresh prompt after Ctrl-C');
    terminal.type('help\r');
    await terminal.waitFor((text) => text.includes('Commands:') && text.slice(text.lastIndexOf('Commands:')).includes('adm > '), 'help and a prompt');
    assert.equal(terminal.output().includes('Unknown command'), false, 'the cleared text did not run');
    mark = terminal.output().length;
    terminal.type('\x03');
    await terminal.waitFor((text) => text.slice(mark).includes('(To leave, press Ctrl-C again)'), 'the hint');
    await terminal.waitFor((text) => text.slice(text.lastIndexOf('(To leave')).includes('adm > '), 'the prompt after the hint');
    mark = terminal.output().length;
    terminal.type('\x03');
    assert.equal(await terminal.exited(), 0, terminal.output());
    assert.ok(terminal.output().slice(mark).includes('\r\n'), `leaving ends the line: ${JSON.stringify(terminal.output().slice(mark))}`);
  } finally {
    terminal.close();
  }
});

test("issue 28: a command without its query exits 1 with the error, then the command's help in the original's layout", async () => {
  const missing = await adm(['get', 'transactions']);
  assert.equal(missing.code, 1);
  assert.equal(missing.stdout, '');
  const lines = missing.stderr.split('\n');
  assert.equal(lines[0], "error: missing required argument 'query'");
  assert.equal(lines[2], 'Usage: adm get transactions [options] <query>');
  // The sections in commander's order, with the original's examples.
  const sections = lines.filter((line) => /^[A-Z][a-z]+:$/.test(line));
  assert.deepEqual(sections, ['Options:', 'Query:', 'Examples:']);
  assert.ok(lines.includes('  $ adm get transactions senderId=U123456789'), missing.stderr);
  assert.ok(lines.includes("  $ adm get transactions 'types=0&orderBy=timestamp:desc&returnUnconfirmed=1'"), missing.stderr);
});

/** The first example of each of the original's leaf commands (its help texts and docs/reference/cli.md). */
const ORIGINAL_FIRST_EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['account new', 'adm account new'],
  ['client version', 'adm client version'],
  ['delegate new', 'adm delegate new mydelegate'],
  ['get address', 'adm get address U123456789'],
  ['get block', 'adm get block 123456789'],
  ['get blocks', 'adm get blocks limit=10'],
  ['get chat', 'adm get chat U123456789 U987654321'],
  ['get chats', 'adm get chats U123456789'],
  ['get delegate', 'adm get delegate lynx'],
  ['get message', 'adm get message 123456789'],
  ['get transaction', 'adm get transaction 123456789'],
  ['get transactions', 'adm get transactions senderId=U123456789'],
  ['init', 'adm init'],
  ['node height', 'adm node height'],
  ['node status', 'adm node status'],
  ['node version', 'adm node version'],
  ['rpc server', 'adm rpc server'],
  ['send message', 'adm send message U123456789 "hello"'],
  ['send rich', `adm send rich U123456789 '{"type":"reply","text":"hello"}'`],
  ['send signal', `adm send signal U123456789 '{"type":"typing","value":true}'`],
  ['send tokens', 'adm send tokens U123456789 1ADM'],
  ['vote for', 'adm vote for +delegatePublicKey'],
];

test("issue 28: every leaf command's --help has Examples: starting with the original's first example", async () => {
  assert.equal(ORIGINAL_FIRST_EXAMPLES.length, 22);
  // A few at a time: the machine is shared.
  for (let i = 0; i < ORIGINAL_FIRST_EXAMPLES.length; i += 4) {
    await Promise.all(
      ORIGINAL_FIRST_EXAMPLES.slice(i, i + 4).map(async ([command, example]) => {
        const help = await adm([...command.split(' '), '--help']);
        assert.equal(help.code, 0, command);
        const lines = help.stdout.split('\n');
        assert.equal(lines[lines.indexOf('Examples:') + 1], `  $ ${example}`, command);
      }),
    );
  }
  assert.match((await adm(['init', '--help'])).stdout, /\n {2}\$ adm init \.\/adm-config\n/);
});

test('issue 28: an unknown command is one JSON document on stdout and exit 1, in the original\'s words', async () => {
  const far = await adm(['fly', 'away']);
  assert.equal(far.code, 1);
  assert.deepEqual(JSON.parse(far.stdout), { success: false, error: "Unknown command 'fly away'. Run 'adm help' for the list of commands." });
  assert.equal(far.stderr, '');
  const typo = await adm(['node', 'hieght']);
  assert.deepEqual(JSON.parse(typo.stdout), { success: false, error: "Unknown command 'node hieght'. Did you mean 'node height'?" });
  // A passphrase typed as a command is not repeated, on the command line or pasted at the prompt.
  const pasted = await adm([SENDER]);
  assert.equal(pasted.code, 1);
  assert.deepEqual(JSON.parse(pasted.stdout), { success: false, error: "Unknown command. Run 'adm help' for the list of commands." });
  const prompted = await adm([], { input: `${SENDER}\n` });
  assert.match(prompted.stdout, /"error": "Unknown command\. Run 'adm help' for the list of commands\."/);
  for (const output of [prompted.stdout, prompted.stderr]) assert.equal(output.includes('abandon'), false);
});

test('issue 28: at the prompt in a terminal, an unknown command answers the same JSON and the prompt goes on', { skip: HAS_SCRIPT ? false : 'script (util-linux) is not installed' }, async () => {
  const terminal = startTerminal([process.execPath, '--import', POLYFILL, ADM], { PATH: process.env.PATH, HOME: dir, ADM_CONFIG_PATH: join(dir, '.adm') });
  try {
    await terminal.waitFor((text) => text.includes('adm > '), 'first prompt');
    terminal.type('get height\r');
    await terminal.waitFor((text) => text.includes('"error": "Unknown command \'get height\'. Did you mean \'node height\'?"'), 'the JSON answer');
    const answer = terminal.output().slice(terminal.output().indexOf('{'));
    await terminal.waitFor((text) => text.slice(text.lastIndexOf('}')).includes('adm > '), 'the prompt after the answer');
    assert.deepEqual(JSON.parse(answer.slice(0, answer.indexOf('}') + 1)), { success: false, error: "Unknown command 'get height'. Did you mean 'node height'?" });
    terminal.type('exit\r');
    assert.equal(await terminal.exited(), 0, terminal.output());
  } finally {
    terminal.close();
  }
});

test('issue 28: adm init over an existing file answers on stdout, exits 1 and leaves the file as it was', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'adm-init-'));
  try {
    writeFileSync(join(folder, 'config.jsonc'), '{"network": "mainnet"} // mine');
    const refused = await adm(['init', './config.jsonc'], { cwd: folder });
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, '');
    const answer = JSON.parse(refused.stdout) as { success: boolean; error: string };
    assert.equal(answer.success, false);
    assert.match(answer.error, new RegExp(`^${join(folder, 'config.jsonc')} already exists`));
    assert.equal(readFileSync(join(folder, 'config.jsonc'), 'utf8'), '{"network": "mainnet"} // mine');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('issue 28: a plain decimal amount is refused in the original\'s words, then says how to write it; nothing is sent', async () => {
  const from = node.requests.length;
  const sent = await adm(['send', 'tokens', 'U123456789', '0.001', '-p', SENDER]);
  assert.equal(sent.code, 1);
  assert.deepEqual(JSON.parse(sent.stdout), { success: false, error: "Wrong 'amount' parameter: 0.001. Write a whole number of 1/10^8 ADM units, or a value ending in ADM (0.001ADM)" });
  assert.deepEqual(asked(from), []);
  for (const output of [sent.stdout, sent.stderr]) assert.equal(output.includes(SENDER), false);
});
