// The adm command grammar (src/console/commands.ts; notes C.3): words → method and params, usage errors, "Did you
// mean", prompt-line splitting.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COMMANDS, helpText, splitOptions, levenshtein, parseCommand, SPECIAL_COMMANDS, splitWords, suggestions, usageText } from '../../src/console/commands.js';

const run = (line: string, passphrase?: string) => {
  const parsed = parseCommand(splitWords(line));
  assert.equal(parsed.kind, 'run', JSON.stringify(parsed));
  if (parsed.kind !== 'run') throw new Error('unreachable');
  return { method: parsed.spec.method, params: parsed.spec.params(parsed.args, passphrase), field: parsed.spec.field };
};

test('commands map to the JSON-RPC methods and params', () => {
  assert.deepEqual(run('get address U123'), { method: 'getAddress', params: ['U123'], field: 'account' });
  assert.deepEqual(run('get transactions senderId=U1 limit=5').params, ['senderId=U1', 'limit=5']);
  assert.deepEqual(run('get chat U1 U2'), { method: 'getChatMessages', params: ['U1', 'U2'], field: 'messages' });
  assert.deepEqual(run('node height'), { method: 'nodeHeight', params: [], field: 'height' });
  assert.deepEqual(run('send tokens U9 1.5ADM', 'secret words'), { method: 'sendTokens', params: { address: 'U9', amount: '1.5ADM', passphrase: 'secret words' }, field: 'transactionId' });
  assert.deepEqual(run('send message U9 "hello there"').params, { address: 'U9', message: 'hello there' });
  assert.deepEqual(run('send message U9 hi 100').params, { address: 'U9', message: 'hi', amount: '100' });
  assert.deepEqual(run('vote for +lion -U12345678').params, { votes: ['+lion', '-U12345678'] });
  assert.deepEqual(run("send rich U9 '{\"amount\":\"1\"}'").params, { address: 'U9', data: '{"amount":"1"}' });
});

test('special commands, usage errors and suggestions', () => {
  assert.deepEqual(parseCommand([]), { kind: 'special', name: 'help', args: [] });
  assert.deepEqual(parseCommand(['rpc', 'server']), { kind: 'special', name: 'rpc server', args: [] });
  assert.deepEqual(parseCommand(['init', '/tmp/x.jsonc']), { kind: 'special', name: 'init', args: ['/tmp/x.jsonc'] });
  assert.deepEqual(parseCommand(['init']), { kind: 'special', name: 'init', args: [] });
  assert.deepEqual(parseCommand(['--version']), { kind: 'special', name: 'version', args: [] });
  assert.deepEqual(parseCommand(['-v']), { kind: 'special', name: 'version', args: [] });
  const address = COMMANDS.find((command) => command.method === 'getAddress')!;
  assert.deepEqual(parseCommand(['get', 'address']), { kind: 'error', message: "missing required argument 'address'", usage: usageText(address) });
  const height = COMMANDS.find((command) => command.method === 'nodeHeight')!;
  assert.deepEqual(parseCommand(['node', 'height', 'extra']), { kind: 'error', message: "too many arguments for 'adm node height'", usage: usageText(height) });
  assert.deepEqual(parseCommand(['get', 'adress', 'U1']), { kind: 'unknown', message: "Unknown command 'get adress'. Did you mean 'get address'?" });
  assert.deepEqual(parseCommand(['fly', 'away']), { kind: 'unknown', message: "Unknown command 'fly away'. Run 'adm help' for the list of commands." });
  assert.deepEqual(parseCommand(['get', 'xyzzy']), { kind: 'unknown', message: "Unknown command 'get xyzzy'. Run 'adm get --help' for its commands." });
  // The passphrase rule wins over naming what was typed: a passphrase typed as a command is not repeated.
  const typedPassphrase = `${'abandon '.repeat(11)}about`;
  assert.deepEqual(parseCommand([typedPassphrase]), { kind: 'unknown', message: "Unknown command. Run 'adm help' for the list of commands." });
  assert.deepEqual(parseCommand(splitWords(typedPassphrase)), { kind: 'unknown', message: "Unknown command. Run 'adm help' for the list of commands." });
  assert.deepEqual(parseCommand(['send', 'tokns', 'U1234567890123456', '1.5ADM']), { kind: 'unknown', message: "Unknown command. Did you mean 'send tokens'?" });
  assert.deepEqual(parseCommand(['--verbose', 'node', 'height']), { kind: 'error', message: "unknown option '--verbose'", usage: 'Run `adm help` for the list of commands.' });
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  assert.match(helpText(), /send tokens <address> <amount>/);
  assert.match(helpText(), /init \[path\]/);
});

test('--help or -h after any command is its usage, never an argument; help <command> too', () => {
  for (const command of [...COMMANDS, ...SPECIAL_COMMANDS]) {
    for (const flag of ['--help', '-h']) {
      const words = [...command.words, ...command.args.filter((arg) => !arg.endsWith('?')).map(() => 'x'), flag];
      assert.deepEqual(parseCommand(words), { kind: 'usage', text: usageText(command) }, words.join(' '));
      assert.deepEqual(parseCommand([...command.words, flag]), { kind: 'usage', text: usageText(command) });
    }
    const text = usageText(command);
    assert.match(text, new RegExp(`^Usage: adm ${command.words.join(' ')} \\[options\\]`));
    assert.match(text, /\nExamples:\n {2}\$ adm /);
    for (const example of command.examples) assert.ok(example.startsWith(`adm ${command.words.join(' ')}`) || example.startsWith('adm -p'), example);
  }
  assert.deepEqual(parseCommand(['help', 'send', 'tokens']), { kind: 'usage', text: usageText(COMMANDS.find((command) => command.method === 'sendTokens')!) });
  assert.equal(parseCommand(['get', '--help']).kind, 'usage');
  assert.equal(parseCommand(['help', 'get']).kind, 'usage');
  assert.equal(parseCommand(['get']).kind, 'error');
});

test('required and optional arguments: queries are required where the original required them', () => {
  assert.equal(parseCommand(['get', 'transactions']).kind, 'error');
  assert.equal(parseCommand(['get', 'blocks']).kind, 'error');
  assert.equal(parseCommand(['vote', 'for']).kind, 'error');
  assert.equal(parseCommand(['get', 'chats', 'U1']).kind, 'run');
  assert.deepEqual(run('get chats U1 includeDirectTransfers=1').params, ['U1', 'includeDirectTransfers=1']);
  assert.deepEqual(run('get transaction 1 returnUnconfirmed=1').params, ['1', 'returnUnconfirmed=1']);
  assert.equal(parseCommand(['send', 'message', 'U1']).kind, 'error');
  assert.equal(parseCommand(['send', 'message', 'U1', 'hi', '1', 'extra']).kind, 'error');
});

test('near-miss commands suggest the nearest names, nearest first', () => {
  assert.deepEqual(suggestions(['get', 'height']), ['node height']);
  assert.deepEqual(suggestions(['height']), ['node height']);
  assert.deepEqual(suggestions(['send', 'token']), ['send tokens']);
  assert.deepEqual(suggestions(['node', 'versoin']), ['node version']);
  assert.deepEqual(suggestions(['inti']), ['init']);
  assert.deepEqual(suggestions(['fly', 'away']), []);
  assert.equal((parseCommand(['get', 'height']) as { message: string }).message, "Unknown command 'get height'. Did you mean 'node height'?");
});

test('-p and --passphrase are options wherever they stand, on the command line and on a prompt line', () => {
  assert.deepEqual(splitOptions(['send', 'tokens', '-p', 'a b', 'U1', '1']), { passphrase: 'a b', words: ['send', 'tokens', 'U1', '1'] });
  assert.deepEqual(splitOptions(['--passphrase=x y', 'node', 'height']), { passphrase: 'x y', words: ['node', 'height'] });
  assert.deepEqual(splitOptions(splitWords('vote for lynx --passphrase "w o r d s"')), { passphrase: 'w o r d s', words: ['vote', 'for', 'lynx'] });
  assert.deepEqual(splitOptions(['get', 'address', 'U1']), { passphrase: undefined, words: ['get', 'address', 'U1'] });
});

test("a command's help in the original's layout: usage with [options], description, options, arguments or query, examples", () => {
  const transactions = COMMANDS.find((command) => command.method === 'getTransactions')!;
  const text = usageText(transactions);
  assert.match(text, /^Usage: adm get transactions \[options\] <query>\n\nTransactions matching k=v filters\.\n\nOptions:\n {2}-h, --help {17}this usage\n\nQuery:\n/);
  assert.match(text, /\n\nExamples:\n {2}\$ adm get transactions senderId=U123456789\n/);
  assert.match(usageText(COMMANDS.find((command) => command.method === 'getChats')!), /^Usage: adm get chats \[options\] <address> \[query\]\n/);
  const tokens = usageText(COMMANDS.find((command) => command.method === 'sendTokens')!);
  assert.match(tokens, /^Usage: adm send tokens \[options\] <address> <amount>\n\n.*\n\nOptions:\n {2}-p, --passphrase <phrase> .*\n {2}-h, --help .*\n\nArguments:\n/);
  assert.match(usageText(COMMANDS.find((command) => command.method === 'voteFor')!), /^Usage: adm vote for \[options\] <delegates\.\.\.>\n/);
});
