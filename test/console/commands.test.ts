// The adm command grammar (src/console/commands.ts; notes C.3): words → method and params, usage errors, "Did you
// mean", prompt-line splitting.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { helpText, levenshtein, parseCommand, splitWords } from '../../src/console/commands.js';

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
  assert.deepEqual(parseCommand(['get', 'address']), { kind: 'error', message: 'Usage: adm get address <address>' });
  assert.deepEqual(parseCommand(['node', 'height', 'extra']), { kind: 'error', message: 'Usage: adm node height' });
  assert.deepEqual(parseCommand(['get', 'adress', 'U1']), { kind: 'error', message: "Unknown command 'get adress'. Did you mean 'get address'?" });
  assert.deepEqual(parseCommand(['fly', 'away']), { kind: 'error', message: "Unknown command 'fly away'." });
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  assert.match(helpText(), /send tokens <address> <amount>/);
});
