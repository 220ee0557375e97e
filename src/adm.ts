#!/usr/bin/env node
// `adm`: the ADAMANT console command line (notes C.3). One command per invocation, or an interactive prompt without
// arguments. Commands run the same JSON-RPC methods as the server (src/console/commands.ts maps words to methods),
// in-process against the configured nodes; output is pretty JSON `{success: true, …}` or `{success: false, error}`.
//
//   adm [-p|--passphrase <phrase>] <command> [args…]
//   adm rpc server            the JSON-RPC server (the same as `adm-infra console`)
//   adm init [path]           writes a default config.jsonc, never over an existing file
//   adm <command> --help      the command's usage and examples; adm --version

import './polyfill.js';
import { chmodSync, copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { systemClock } from './clock.js';
import { CONSOLE_VERSION, consoleMethods } from './console/methods.js';
import { nodeClient } from '../actors/console/ordered-node-client.js';
import { helpText, parseCommand, splitOptions, splitWords, type CommandSpec } from './console/commands.js';
import { PACKAGED_CONSOLE_CONFIG, type ConsoleConfig } from './console/config.js';
import { loadConsoleConfig } from './console/config-file.js';
import { answerBody, type MethodTable } from './console/jsonrpc.js';
import { ConfigError } from './errors.js';
import { isRecord } from './is-record.js';

const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
const say = (text: string) => process.stdout.write(`${text}\n`);
/** A failure answer, as every command's: one JSON document on stdout. */
const fail = (error: string) => print({ success: false, error });
/** Usage mistakes of a known command (a missing argument, an unknown option) are for people: plain text on stderr. */
const complain = (text: string) => process.stderr.write(`${text}\n`);

/** Runs one command through the method table exactly as a JSON-RPC call would, and prints its answer. */
async function runCommand(methods: MethodTable, spec: CommandSpec, args: readonly string[], passphrase: string | undefined): Promise<boolean> {
  const request = { jsonrpc: '2.0', method: spec.method, params: spec.params(args, passphrase), id: 1 };
  const answer = await answerBody(JSON.stringify(request), methods, new AbortController().signal, (error) => {
    // The original's wording where it differs from the server's (getDelegate's "Use username, publicKey, or address").
    if (spec.wrongParameter && error instanceof Error && error.name === 'WrongParameterError') return `Wrong '${spec.wrongParameter.parameter}' parameter. ${spec.wrongParameter.hint}`;
    const message = error instanceof Error ? error.message : String(error);
    return passphrase ? message.split(passphrase).join('***') : message;
  });
  const body = answer.kind === 'json' ? (answer.body as { result?: unknown; error?: { message: string } }) : {};
  if (body.error) {
    fail(body.error.message.replace(/^Error: /, ''));
    return false;
  }
  const result = body.result;
  if (result && typeof result === 'object' && (result as { success?: unknown }).success === false) {
    print(result);
    return false;
  }
  print(spec.field === undefined && isRecord(result) ? { success: true, ...result } : { success: true, [spec.field ?? 'result']: result });
  return true;
}

/**
 * `adm init [path]`: copies the packaged config.default.jsonc to `<folder>/config.jsonc` (the folder is made when
 * missing; default `~/.adm`, or $ADM_CONFIG_PATH), or to the named file when the path ends in .json or .jsonc.
 * An existing file is never replaced (the copy is exclusive, so a race cannot replace one either). A refusal is a
 * failure answer like any other (JSON on stdout).
 */
function writeDefaultConfig(path: string | undefined): boolean {
  const fileName = process.env.ADM_CONFIG_FILENAME || 'config.jsonc';
  const given = path === undefined ? process.env.ADM_CONFIG_PATH || join(homedir(), '.adm') : resolve(path);
  const isFolder = existsSync(given) ? statSync(given).isDirectory() : !/\.jsonc?$/.test(given);
  const target = isFolder ? join(given, fileName) : given;
  if (existsSync(target)) {
    fail(`${target} already exists; it was left as it is (remove or rename it to start again)`);
    return false;
  }
  try {
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(PACKAGED_CONSOLE_CONFIG, target, 1 /* COPYFILE_EXCL */);
    // It will hold a passphrase: readable by its owner only.
    chmodSync(target, 0o600);
  } catch (error) {
    fail(`could not write ${target}: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
  say(`Config written to ${target}\nPut your account's passphrase in it (until then the console has none), e.g.:\n    nano '${target}'`);
  return true;
}

/**
 * The interactive prompt: one command a line, in order. Ctrl-C clears the line being typed; on an empty line it asks
 * for a second Ctrl-C, which leaves (as the original did). Ctrl-D and `exit` leave too; leaving ends the line.
 */
function prompt(methods: MethodTable, passphrase: string | undefined): Promise<void> {
  const terminal = Boolean(process.stdin.isTTY && process.stdout.isTTY);
  const readline = createInterface({ input: process.stdin, output: process.stdout, prompt: 'adm > ', historySize: 100, terminal });
  say(`ADAMANT console ${CONSOLE_VERSION}. Type help for the commands; exit, Ctrl-D or Ctrl-C twice leaves.`);
  let leaving = false;
  let typedExit = false;
  let closed = false;
  // Whether the cursor stands after a prompt (nothing printed since): leaving then ends that line.
  let atPrompt = false;
  const showPrompt = () => {
    readline.prompt();
    atPrompt = true;
  };
  // Lines run one after another even when several arrive at once (pasted, or piped in).
  let queue = Promise.resolve();
  readline.on('SIGINT', () => {
    if (readline.line !== '') {
      leaving = false;
      process.stdout.write('\n');
      readline.write(null, { ctrl: true, name: 'e' });
      readline.write(null, { ctrl: true, name: 'u' });
      showPrompt();
    } else if (leaving) {
      readline.close();
    } else {
      leaving = true;
      process.stdout.write('\n(To leave, press Ctrl-C again)\n');
      showPrompt();
    }
  });
  readline.on('line', (line) => {
    leaving = false;
    atPrompt = false;
    queue = queue.then(async () => {
      if (typedExit) return;
      // -p on a line signs that line's command (the session's -p or config otherwise).
      const { passphrase: given, words } = splitOptions(splitWords(line));
      if (words[0] === 'exit' || words[0] === 'quit') {
        typedExit = true;
        readline.close();
        return;
      }
      if (words.length > 0) await dispatch(methods, words, given ?? passphrase, false);
      if (!closed) showPrompt();
    });
  });
  showPrompt();
  return new Promise((done) =>
    readline.once('close', () => {
      closed = true;
      // Lines already read still run; then, when Ctrl-C, Ctrl-D or the end of the input left the cursor after the
      // prompt, end that line.
      void queue.then(() => {
        if (atPrompt) process.stdout.write('\n');
        done();
      });
    }),
  );
}

async function dispatch(methods: MethodTable, words: readonly string[], passphrase: string | undefined, allowServer: boolean): Promise<number> {
  const parsed = parseCommand(words);
  if (parsed.kind === 'error') {
    complain(`error: ${parsed.message}\n\n${parsed.usage}`);
    return 1;
  }
  if (parsed.kind === 'unknown') return fail(parsed.message), 1;
  if (parsed.kind === 'usage') return say(parsed.text), 0;
  if (parsed.kind === 'special') {
    if (parsed.name === 'help') return say(helpText()), 0;
    if (parsed.name === 'version') return say(CONSOLE_VERSION), 0;
    if (parsed.name === 'init') return writeDefaultConfig(parsed.args[0]) ? 0 : 1;
    if (!allowServer) {
      complain('error: rpc server runs from the command line: adm rpc server');
      return 1;
    }
    // The service runtime is loaded only for the server: every other command starts without it.
    const { main } = await import('./main.js');
    return main(['console', ...parsed.args]);
  }
  return (await runCommand(methods, parsed.spec, parsed.args, passphrase)) ? 0 : 1;
}

async function run(argv: string[]): Promise<number> {
  const { passphrase, words } = splitOptions(argv);
  // Whatever needs no config or node runs before the config is read.
  const parsed = parseCommand(words);
  if (words.length > 0 && parsed.kind !== 'run') return dispatch(new Map(), words, passphrase, true);
  let config: ConsoleConfig;
  try {
    config = loadConsoleConfig(undefined, process.env).config;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    fail(`${error.message}: ${error.problems.join('; ')}`);
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
