#!/usr/bin/env node
// `adm`: the ADAMANT console command line (notes C.3). One command per invocation, or an interactive prompt without
// arguments. Commands run the same JSON-RPC methods as the server (src/console/commands.ts maps words to methods),
// in-process against the configured nodes; output is pretty JSON `{success: true, …}` or `{success: false, error}`.
//
//   adm [-p|--passphrase <phrase>] <command> [args…]
//   adm rpc server            the JSON-RPC server (the same as `adm-infra console`)
//   adm init [path]           writes a default config.jsonc, never over an existing file

import './polyfill.js';
import { existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { systemClock } from '../actors/clock.js';
import { consoleMethods } from '../actors/console/methods.js';
import { nodeClient } from '../actors/console/node-client.js';
import { helpText, parseCommand, splitWords, type CommandSpec } from './console/commands.js';
import { CONSOLE_DEFAULT_CONFIG, loadConsoleConfig, type ConsoleConfig } from './console/config.js';
import { answerBody, type MethodTable } from './console/jsonrpc.js';
import { ConfigError } from './errors.js';

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** Runs one command through the method table exactly as a JSON-RPC call would, and prints its answer. */
async function runCommand(methods: MethodTable, spec: CommandSpec, args: readonly string[], passphrase: string | undefined): Promise<boolean> {
  const request = { jsonrpc: '2.0', method: spec.method, params: spec.params(args, passphrase), id: 1 };
  const answer = await answerBody(JSON.stringify(request), methods, new AbortController().signal, (error) => {
    const message = error instanceof Error ? error.message : String(error);
    return passphrase ? message.split(passphrase).join('***') : message;
  });
  const body = answer.kind === 'json' ? (answer.body as { result?: unknown; error?: { message: string } }) : {};
  if (body.error) {
    print({ success: false, error: body.error.message.replace(/^Error: /, '') });
    return false;
  }
  const result = body.result;
  if (result && typeof result === 'object' && (result as { success?: unknown }).success === false) {
    print(result);
    return false;
  }
  print(spec.field === undefined && result && typeof result === 'object' && !Array.isArray(result) ? { success: true, ...(result as object) } : { success: true, [spec.field ?? 'result']: result });
  return true;
}

function writeDefaultConfig(path: string | undefined): boolean {
  const target = path ?? join(process.env.ADM_CONFIG_PATH || join(homedir(), '.adm'), process.env.ADM_CONFIG_FILENAME || 'config.jsonc');
  if (existsSync(target)) {
    print({ success: false, error: `A config already exists at ${target}; it was left as it is` });
    return false;
  }
  const text = `{\n  /* The console uses this ADM passphrase by default (keep this file private). */\n${JSON.stringify(CONSOLE_DEFAULT_CONFIG, null, 2).slice(2)}\n`;
  writeFileSync(target, text, { mode: 0o600 });
  print({ success: true, config: target });
  return true;
}

async function prompt(methods: MethodTable, passphrase: string | undefined): Promise<void> {
  const readline = createInterface({ input: process.stdin, output: process.stdout, prompt: 'adm > ', historySize: 100 });
  process.stdout.write('ADAMANT console. Type help for the commands, exit to leave.\n');
  readline.prompt();
  for await (const line of readline) {
    const words = splitWords(line);
    if (words[0] === 'exit' || words[0] === 'quit') break;
    if (words.length > 0) await dispatch(methods, words, passphrase, false);
    readline.prompt();
  }
  readline.close();
}

async function dispatch(methods: MethodTable, words: readonly string[], passphrase: string | undefined, allowServer: boolean): Promise<number> {
  const parsed = parseCommand(words);
  if (parsed.kind === 'error') {
    print({ success: false, error: parsed.message });
    return 1;
  }
  if (parsed.kind === 'special') {
    if (parsed.name === 'help') return process.stdout.write(`${helpText()}\n`), 0;
    if (parsed.name === 'init') return writeDefaultConfig(parsed.args[0]) ? 0 : 1;
    if (!allowServer) {
      print({ success: false, error: 'rpc server runs from the command line: adm rpc server' });
      return 1;
    }
    // The service runtime is loaded only for the server: every other command starts without it.
    const { main } = await import('./main.js');
    return main(['console', ...parsed.args]);
  }
  return (await runCommand(methods, parsed.spec, parsed.args, passphrase)) ? 0 : 1;
}

async function run(argv: string[]): Promise<number> {
  let passphrase: string | undefined;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '-p' || word === '--passphrase') passphrase = argv[++i];
    else if (word.startsWith('--passphrase=')) passphrase = word.slice('--passphrase='.length);
    else words.push(word);
  }
  if (words[0] === 'init' || words[0] === 'help' || words[0] === '--help' || words[0] === '-h') return dispatch(new Map(), words, passphrase, true);
  if (words[0] === 'rpc') return dispatch(new Map(), words, passphrase, true);
  let config: ConsoleConfig;
  try {
    config = loadConsoleConfig(undefined, process.env, false).config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    print({ success: false, error: `${error.message}: ${error.problems.join('; ')}` });
    return 1;
  }
  const methods = consoleMethods({ node: nodeClient({ order: () => config.nodes }), config, clock: systemClock, passphrase });
  if (words.length === 0) {
    await prompt(methods, passphrase);
    return 0;
  }
  return dispatch(methods, words, passphrase, true);
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`adm: unexpected failure: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
