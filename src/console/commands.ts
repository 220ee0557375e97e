// The `adm` command line's grammar (notes C.3): words → the JSON-RPC method they run and its params, so the command
// line and the RPC server share one implementation. Pure.

import { isPassphrase, shown } from './params.js';

/** What help shows for a command: its words, arguments, one line of summary and examples. */
export interface CommandHelp {
  /** The words that name the command, e.g. ['get', 'address']. */
  readonly words: readonly string[];
  /**
   * Argument names: `name` required, `name?` optional, `name...` one or more (the rest), `name...?` any number.
   */
  readonly args: readonly string[];
  readonly summary: string;
  /** Whole command lines, shown after `$ `; the first is the original's first example. */
  readonly examples: readonly string[];
  /** Notes on the arguments, printed under "Arguments:". */
  readonly notes?: readonly string[];
  /** What the query argument takes, printed under "Query:" (the original's section). */
  readonly query?: readonly string[];
  /** The command signs with an account: help mentions -p. */
  readonly signs?: boolean;
}

export interface CommandSpec extends CommandHelp {
  readonly method: string;
  /** How the arguments become params. */
  readonly params: (args: readonly string[], passphrase: string | undefined) => unknown[] | Record<string, unknown>;
  /** The field name the result is printed under (`{success: true, <field>: result}`); undefined: merged as is. */
  readonly field?: string;
  /**
   * The original's wording for a wrong argument (e.g. getDelegate: "Wrong 'name' parameter. Use username, publicKey,
   * or address"): a WrongParameterError of this command is reported as `Wrong '<parameter>' parameter. <hint>`.
   */
  readonly wrongParameter?: { readonly parameter: string; readonly hint: string };
}

const withPassphrase = (fields: Record<string, unknown>, passphrase: string | undefined) => (passphrase === undefined ? fields : { ...fields, passphrase });
const QUERY = ['URL-style k=v items of the node\'s query, separated by spaces, "," or "&";', '"and:" or "or:" before a key groups it (and:fromHeight=10).'];
/** The addresses of the original's examples. */
const U1 = 'U123456789';
const U2 = 'U987654321';

export const COMMANDS: readonly CommandSpec[] = [
  { words: ['account', 'new'], args: [], method: 'accountNew', params: () => [], summary: 'create a new account (passphrase, address, keys)', examples: ['adm account new'] },
  { words: ['client', 'version'], args: [], method: 'clientVersion', params: () => [], summary: 'console version, network, config file and account', examples: ['adm client version'] },
  {
    words: ['delegate', 'new'],
    args: ['username'],
    method: 'delegateNew',
    params: ([username], p) => (p === undefined ? [username] : [username, p]),
    field: 'transaction',
    summary: 'register the account as a delegate',
    notes: ['username: 1 to 20 of a-z 0-9 ! @ $ & _'],
    examples: ['adm delegate new mydelegate', 'adm -p "<passphrase>" delegate new mydelegate'],
    signs: true,
  },
  { words: ['get', 'address'], args: ['address'], method: 'getAddress', params: (args) => [...args], field: 'account', summary: 'account details (balance, public key)', examples: [`adm get address ${U1}`] },
  { words: ['get', 'block'], args: ['id'], method: 'getBlock', params: (args) => [...args], field: 'block', summary: 'a block by id', examples: ['adm get block 123456789'] },
  {
    words: ['get', 'blocks'],
    args: ['query...'],
    method: 'getBlocks',
    params: (args) => [...args],
    field: 'blocks',
    summary: 'blocks matching k=v filters, newest first',
    query: QUERY,
    examples: ['adm get blocks limit=10', 'adm get blocks orderBy=height:desc,limit=5'],
  },
  {
    words: ['get', 'delegate'],
    args: ['name'],
    method: 'getDelegate',
    params: (args) => [...args],
    field: 'delegate',
    summary: 'a delegate by username, public key or address',
    notes: ['name: a username, a public key (64 hex) or an ADAMANT address'],
    examples: ['adm get delegate lynx', `adm get delegate ${U1}`],
    wrongParameter: { parameter: 'name', hint: 'Use username, publicKey, or address' },
  },
  {
    words: ['get', 'message'],
    args: ['txid'],
    method: 'getMessage',
    params: ([id], p) => (p === undefined ? [id] : [id, p]),
    field: 'transaction',
    summary: 'a chat message, decrypted when it is yours',
    examples: ['adm get message 123456789'],
    signs: true,
  },
  {
    words: ['get', 'transaction'],
    args: ['txid', 'query...?'],
    method: 'getTransaction',
    params: (args) => [...args],
    field: 'transaction',
    summary: 'a transaction by id',
    query: QUERY,
    examples: ['adm get transaction 123456789', 'adm get transaction 123456789 returnUnconfirmed=1'],
  },
  {
    words: ['get', 'transactions'],
    args: ['query...'],
    method: 'getTransactions',
    params: (args) => [...args],
    field: 'transactions',
    summary: 'transactions matching k=v filters',
    query: QUERY,
    examples: [`adm get transactions senderId=${U1}`, `adm get transactions recipientId=${U1},limit=10`, `adm get transactions senderId=${U1},and:recipientId=${U2}`, "adm get transactions 'types=0&orderBy=timestamp:desc&returnUnconfirmed=1'"],
  },
  {
    words: ['get', 'chats'],
    args: ['address', 'query...?'],
    method: 'getChats',
    params: (args) => [...args],
    field: 'chats',
    summary: "an address's chats",
    query: QUERY,
    examples: [`adm get chats ${U1}`, `adm get chats ${U1} includeDirectTransfers=1`],
  },
  {
    words: ['get', 'chat'],
    args: ['own', 'partner', 'query...?'],
    method: 'getChatMessages',
    params: (args) => [...args],
    field: 'messages',
    summary: 'messages between two addresses',
    query: QUERY,
    examples: [`adm get chat ${U1} ${U2}`, `adm get chat ${U1} ${U2} returnUnconfirmed=1`],
  },
  { words: ['node', 'height'], args: [], method: 'nodeHeight', params: () => [], field: 'height', summary: 'the node height', examples: ['adm node height'] },
  { words: ['node', 'version'], args: [], method: 'nodeVersion', params: () => [], summary: 'the node version and commit', examples: ['adm node version'] },
  { words: ['node', 'status'], args: [], method: 'nodeStatus', params: () => [], summary: 'node, network, loader and WebSocket status', examples: ['adm node status'] },
  {
    words: ['send', 'tokens'],
    args: ['address', 'amount'],
    method: 'sendTokens',
    params: ([address, amount], p) => withPassphrase({ address, amount }, p),
    field: 'transactionId',
    summary: 'send ADM (amount in sats, or "1.5ADM")',
    notes: ['address: an ADAMANT address or a 64-hex public key', 'amount: an integer number of sats (1 ADM = 100000000), or ADM with the suffix ADM'],
    examples: [`adm send tokens ${U1} 1ADM`, `adm send tokens ${U1} 150000000`, `adm send tokens ${U1} 0.001ADM`],
    signs: true,
  },
  {
    words: ['send', 'message'],
    args: ['address', 'text', 'amount?'],
    method: 'sendMessage',
    params: ([address, message, amount], p) => withPassphrase({ address, message, ...(amount === undefined ? {} : { amount }) }, p),
    field: 'transactionId',
    summary: 'send an encrypted message (with ADM, optionally)',
    examples: [`adm send message ${U1} "hello"`, `adm send message ${U1} "here you are" 0.1ADM`],
    signs: true,
  },
  {
    words: ['send', 'rich'],
    args: ['address', 'json'],
    method: 'sendRich',
    params: ([address, data], p) => withPassphrase({ address, data }, p),
    field: 'transactionId',
    summary: 'send a rich message',
    examples: [`adm send rich ${U1} '{"type":"reply","text":"hello"}'`, `adm send rich ${U1} '{"type":"eth_transaction","amount":"0.1","hash":"0x12","comments":"thanks"}'`],
    signs: true,
  },
  {
    words: ['send', 'signal'],
    args: ['address', 'json'],
    method: 'sendSignal',
    params: ([address, data], p) => withPassphrase({ address, data }, p),
    field: 'transactionId',
    summary: 'send a signal message',
    examples: [`adm send signal ${U1} '{"type":"typing","value":true}'`],
    signs: true,
  },
  {
    words: ['vote', 'for'],
    args: ['delegates...'],
    method: 'voteFor',
    params: (votes, p) => withPassphrase({ votes: [...votes] }, p),
    field: 'transaction',
    summary: 'vote for (+name) or against (-name) delegates',
    notes: ['delegates: +/- (none: +) before a username, an address or a public key; at most 33'],
    examples: ['adm vote for +delegatePublicKey', `adm vote for lynx +lion -${U1}`],
    signs: true,
  },
];

/** Commands that run no JSON-RPC method. */
export const SPECIAL_COMMANDS: readonly (CommandHelp & { readonly name: 'rpc server' | 'init' | 'help' })[] = [
  { name: 'rpc server', words: ['rpc', 'server'], args: [], summary: 'run the JSON-RPC server (rpc.port, default 5080)', examples: ['adm rpc server'] },
  {
    name: 'init',
    words: ['init'],
    args: ['path?'],
    summary: 'write the default config.jsonc (never over an existing file)',
    notes: ['path: a folder (config.jsonc is written in it) or a file ending in .json or .jsonc; default: ~/.adm ($ADM_CONFIG_PATH)'],
    examples: ['adm init', 'adm init .', 'adm init ./adm-config'],
  },
  { name: 'help', words: ['help'], args: ['command...?'], summary: 'the commands, or the usage of one', examples: ['adm help', 'adm help send tokens'] },
];

export type ParsedCommand =
  | { readonly kind: 'run'; readonly spec: CommandSpec; readonly args: readonly string[] }
  | { readonly kind: 'special'; readonly name: 'rpc server' | 'init' | 'help' | 'version'; readonly args: readonly string[] }
  /** `--help` or `-h` after a command (or `help <command>`): its usage, exit 0. */
  | { readonly kind: 'usage'; readonly text: string }
  /** A usage mistake: the message, then `usage` (the command's, or where to find the commands); exit 1. */
  | { readonly kind: 'error'; readonly message: string; readonly usage: string }
  /** No such command: answered as every other failure, `{success: false, error: message}`; exit 1. */
  | { readonly kind: 'unknown'; readonly message: string };

const HELP_FLAGS = new Set(['--help', '-h']);
const ALL_COMMANDS: readonly CommandHelp[] = [...COMMANDS, ...SPECIAL_COMMANDS];
const GROUPS = [...new Set(ALL_COMMANDS.filter((command) => command.words.length > 1).map((command) => command.words[0]!))];
const SEE_HELP = 'Run `adm help` for the list of commands.';

const argCount = (args: readonly string[]) => ({
  needed: args.filter((arg) => !arg.endsWith('?')).length,
  unlimited: args.some((arg) => arg.includes('...')),
});
/** `<name>` or `[name]`; a query is one argument, as the original shows it, whose items may also be separate words. */
const showArg = (arg: string) => {
  const name = arg.replace(/\?$/, '').replace(/^query\.\.\.$/, 'query');
  return arg.endsWith('?') ? `[${name}]` : `<${name}>`;
};
const commandLine = (command: CommandHelp) => [...command.words, ...command.args.map(showArg)].join(' ');

/** Takes `-p <phrase>`, `--passphrase <phrase>` and `--passphrase=<phrase>` out of the words, wherever they stand. */
export function splitOptions(argv: readonly string[]): { passphrase: string | undefined; words: string[] } {
  let passphrase: string | undefined;
  const words: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '-p' || word === '--passphrase') passphrase = argv[++i];
    else if (word.startsWith('--passphrase=')) passphrase = word.slice('--passphrase='.length);
    else words.push(word);
  }
  return { passphrase, words };
}

/** Splits a prompt line into words: whitespace separates, double or single quotes group (no escapes inside). */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

export function parseCommand(words: readonly string[]): ParsedCommand {
  if (words.length === 0 || HELP_FLAGS.has(words[0]!)) return { kind: 'special', name: 'help', args: [] };
  if (words[0] === '--version' || words[0] === '-v') return { kind: 'special', name: 'version', args: [] };
  if (words[0] === 'help') return words.length === 1 ? { kind: 'special', name: 'help', args: [] } : helpFor(words.slice(1));
  const command = findCommand(words);
  if (!command) return unknown(words);
  const args = words.slice(command.words.length);
  // --help anywhere after the command asks for its usage; it is never an argument.
  if (args.some((arg) => HELP_FLAGS.has(arg))) return { kind: 'usage', text: usageText(command) };
  const { needed, unlimited } = argCount(command.args);
  if (args.length < needed) {
    const missing = command.args.filter((arg) => !arg.endsWith('?'))[args.length]!.replace('...', '');
    return { kind: 'error', message: `missing required argument '${missing}'`, usage: usageText(command) };
  }
  if (!unlimited && args.length > command.args.length) return { kind: 'error', message: `too many arguments for 'adm ${command.words.join(' ')}'`, usage: usageText(command) };
  if ('method' in command) return { kind: 'run', spec: command as CommandSpec, args };
  return { kind: 'special', name: (command as (typeof SPECIAL_COMMANDS)[number]).name, args };
}

function findCommand(words: readonly string[]): CommandHelp | undefined {
  return ALL_COMMANDS.find((command) => command.words.every((word, i) => words[i] === word));
}

/** `adm help get address`, `adm help get`. */
function helpFor(given: readonly string[]): ParsedCommand {
  const words = given.filter((word) => !HELP_FLAGS.has(word));
  if (words.length === 0) return { kind: 'usage', text: usageText(SPECIAL_COMMANDS.find((command) => command.name === 'help')!) };
  const command = findCommand(words);
  if (command && command.words.length === words.length) return { kind: 'usage', text: usageText(command) };
  if (words.length === 1 && GROUPS.includes(words[0]!)) return { kind: 'usage', text: groupText(words[0]!) };
  return unknown(words);
}

/**
 * An unknown command: the group's commands when only a group was typed; else the original's answer, `Unknown command
 * '<words>'. Did you mean '<name>'?`. The typed words are named only when neither they nor the whole line could be a
 * passphrase (one pasted at the prompt is not repeated, quoted or not): the passphrase rule wins over the wording.
 */
function unknown(words: readonly string[]): ParsedCommand {
  const group = GROUPS.includes(words[0]!) ? words[0]! : undefined;
  if (group && (words.length === 1 || HELP_FLAGS.has(words[1]!))) {
    return words.length === 1 ? { kind: 'error', message: `'adm ${group}' needs a command`, usage: groupText(group) } : { kind: 'usage', text: groupText(group) };
  }
  if (words[0]!.startsWith('-')) return { kind: 'error', message: `unknown option '${words[0]}'`, usage: SEE_HELP };
  const typed = words.slice(0, 2).filter((word) => !word.startsWith('-'));
  const near = suggestions(typed);
  const named = !isPassphrase(words.join(' ')) && typed.every((word) => shown(word) !== undefined) ? ` '${typed.join(' ')}'` : '';
  const hint = near.length > 0 ? `Did you mean ${near.map((name) => `'${name}'`).join(' or ')}?` : `Run 'adm ${group ? `${group} --help' for its commands` : "help' for the list of commands"}.`;
  return { kind: 'unknown', message: `Unknown command${named}. ${hint}` };
}

/**
 * The names the user probably meant, nearest first: an edit distance under 3 (the original's rule), or the same
 * last word under another group (`get height` → `node height`).
 */
export function suggestions(typed: readonly string[]): string[] {
  const text = typed.join(' ');
  const scored = ALL_COMMANDS.map((command) => {
    const name = command.words.join(' ');
    const last = command.words.at(-1)!;
    const distance = Math.min(levenshtein(name, text), typed.some((word) => word === last || (word.length > 3 && levenshtein(word, last) < 2)) ? 1 : Infinity);
    return { name, distance };
  });
  return scored
    .filter(({ distance }) => distance < 3)
    .sort((a, b) => a.distance - b.distance)
    .slice(0, 3)
    .map(({ name }) => name);
}

/**
 * One command's usage in the original's layout (commander's, with its added sections): the usage line, the
 * description, the options, then what the arguments and the query take, and examples.
 */
export function usageText(command: CommandHelp): string {
  const args = command.args.map(showArg).join(' ');
  const lines = [`Usage: adm ${command.words.join(' ')} [options]${args ? ` ${args}` : ''}`, '', `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`, '', 'Options:'];
  if (command.signs) lines.push('  -p, --passphrase <phrase>  the account that signs (else the config\'s passphrase)');
  lines.push('  -h, --help                 this usage');
  if (command.notes?.length) lines.push('', 'Arguments:', ...command.notes.map((note) => `  ${note}`));
  if (command.query?.length) lines.push('', 'Query:', ...command.query.map((line) => `  ${line}`));
  lines.push('', 'Examples:', ...command.examples.map((example) => `  $ ${example}`));
  return lines.join('\n');
}

function groupText(group: string): string {
  const commands = ALL_COMMANDS.filter((command) => command.words[0] === group && command.words.length > 1);
  return [`Usage: adm ${group} <command>`, '', 'Commands:', ...commands.map((command) => `  ${commandLine(command).padEnd(42)} ${command.summary}`), '', `Run \`adm ${group} <command> --help\` for a command's usage and examples.`].join('\n');
}

export function helpText(): string {
  const lines = ALL_COMMANDS.map((command) => `  ${commandLine(command).padEnd(42)} ${command.summary}`);
  return [
    'Usage: adm [-p <passphrase>] <command>   (no command: interactive prompt)',
    '',
    'Commands:',
    ...lines,
    '',
    'Options:',
    '  -p, --passphrase <phrase>   the account for send, vote and delegate commands (else the config)',
    '  -v, --version               the console version',
    '  -h, --help                  this list; after a command: its usage and examples',
    '',
    'Run `adm <command> --help` for a command\'s usage and examples.',
  ].join('\n');
}

/** Edit distance, for "Did you mean" (the original suggested names closer than 3). */
export function levenshtein(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0]!;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j]!;
      previous[j] = Math.min(previous[j]! + 1, previous[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return previous[b.length]!;
}
