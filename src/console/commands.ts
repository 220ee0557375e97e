// The `adm` command line's grammar (notes C.3): words → the JSON-RPC method they run and its params, so the command
// line and the RPC server share one implementation. Pure.

export interface CommandSpec {
  /** The words that name the command, e.g. ['get', 'address']. */
  readonly words: readonly string[];
  /** Argument names for help; a trailing `...` takes the rest. */
  readonly args: readonly string[];
  readonly method: string;
  /** How the arguments become params. */
  readonly params: (args: readonly string[], passphrase: string | undefined) => unknown[] | Record<string, unknown>;
  /** The field name the result is printed under (`{success: true, <field>: result}`); undefined: merged as is. */
  readonly field?: string;
  readonly summary: string;
}

const withPassphrase = (fields: Record<string, unknown>, passphrase: string | undefined) => (passphrase === undefined ? fields : { ...fields, passphrase });

export const COMMANDS: readonly CommandSpec[] = [
  { words: ['account', 'new'], args: [], method: 'accountNew', params: () => [], summary: 'create a new account (passphrase, address, keys)' },
  { words: ['client', 'version'], args: [], method: 'clientVersion', params: () => [], summary: 'console version and configuration' },
  { words: ['delegate', 'new'], args: ['username'], method: 'delegateNew', params: ([username], p) => (p === undefined ? [username] : [username, p]), field: 'transaction', summary: 'register the account as a delegate' },
  { words: ['get', 'address'], args: ['address'], method: 'getAddress', params: (args) => [...args], field: 'account', summary: 'account details' },
  { words: ['get', 'block'], args: ['id'], method: 'getBlock', params: (args) => [...args], field: 'block', summary: 'a block by id' },
  { words: ['get', 'blocks'], args: ['query...'], method: 'getBlocks', params: (args) => [...args], field: 'blocks', summary: 'blocks matching k=v filters' },
  { words: ['get', 'delegate'], args: ['name'], method: 'getDelegate', params: (args) => [...args], field: 'delegate', summary: 'a delegate by name, address or public key' },
  { words: ['get', 'message'], args: ['txid'], method: 'getMessage', params: ([id], p) => (p === undefined ? [id] : [id, p]), field: 'transaction', summary: 'a chat message, decrypted when it is yours' },
  { words: ['get', 'transaction'], args: ['txid'], method: 'getTransaction', params: (args) => [...args], field: 'transaction', summary: 'a transaction by id' },
  { words: ['get', 'transactions'], args: ['query...'], method: 'getTransactions', params: (args) => [...args], field: 'transactions', summary: 'transactions matching k=v filters' },
  { words: ['get', 'chats'], args: ['address'], method: 'getChats', params: (args) => [...args], field: 'chats', summary: "an address's chats" },
  { words: ['get', 'chat'], args: ['own', 'partner'], method: 'getChatMessages', params: (args) => [...args], field: 'messages', summary: 'messages between two addresses' },
  { words: ['node', 'height'], args: [], method: 'nodeHeight', params: () => [], field: 'height', summary: 'the node height' },
  { words: ['node', 'version'], args: [], method: 'nodeVersion', params: () => [], summary: 'the node version and commit' },
  { words: ['node', 'status'], args: [], method: 'nodeStatus', params: () => [], summary: 'node, network, loader and WebSocket status' },
  { words: ['send', 'tokens'], args: ['address', 'amount'], method: 'sendTokens', params: ([address, amount], p) => withPassphrase({ address, amount }, p), field: 'transactionId', summary: 'send ADM (amount in sats, or "1.5ADM")' },
  { words: ['send', 'message'], args: ['address', 'text', 'amount?'], method: 'sendMessage', params: ([address, message, amount], p) => withPassphrase({ address, message, ...(amount === undefined ? {} : { amount }) }, p), field: 'transactionId', summary: 'send an encrypted message' },
  { words: ['send', 'rich'], args: ['address', 'json'], method: 'sendRich', params: ([address, data], p) => withPassphrase({ address, data }, p), field: 'transactionId', summary: 'send a rich message' },
  { words: ['send', 'signal'], args: ['address', 'json'], method: 'sendSignal', params: ([address, data], p) => withPassphrase({ address, data }, p), field: 'transactionId', summary: 'send a signal message' },
  { words: ['vote', 'for'], args: ['delegates...'], method: 'voteFor', params: (votes, p) => withPassphrase({ votes: [...votes] }, p), field: 'transaction', summary: 'vote for (+name) or against (-name) delegates' },
];

export type ParsedCommand =
  | { readonly kind: 'run'; readonly spec: CommandSpec; readonly args: readonly string[] }
  | { readonly kind: 'special'; readonly name: 'rpc server' | 'init' | 'help'; readonly args: readonly string[] }
  | { readonly kind: 'error'; readonly message: string };

/** Splits a prompt line into words: whitespace separates, double or single quotes group (no escapes inside). */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}

export function parseCommand(words: readonly string[]): ParsedCommand {
  if (words.length === 0 || words[0] === 'help' || words[0] === '--help' || words[0] === '-h') return { kind: 'special', name: 'help', args: [] };
  if (words[0] === 'rpc' && words[1] === 'server') return { kind: 'special', name: 'rpc server', args: words.slice(2) };
  if (words[0] === 'init') return { kind: 'special', name: 'init', args: words.slice(1) };
  const spec = COMMANDS.find((command) => command.words.every((word, i) => words[i] === word));
  if (!spec) {
    const typed = words.slice(0, 2).join(' ');
    const near = COMMANDS.map((command) => command.words.join(' ')).filter((name) => levenshtein(name, typed) < 3);
    return { kind: 'error', message: `Unknown command '${typed}'.${near.length > 0 ? ` Did you mean ${near.map((name) => `'${name}'`).join(' or ')}?` : ''}` };
  }
  const args = words.slice(spec.words.length);
  const needed = spec.args.filter((arg) => !arg.endsWith('?') && !arg.endsWith('...')).length;
  const variadic = spec.args.some((arg) => arg.endsWith('...'));
  if (args.length < needed || (!variadic && args.length > spec.args.length)) {
    return { kind: 'error', message: `Usage: adm ${spec.words.join(' ')} ${spec.args.map((arg) => `<${arg}>`).join(' ')}`.trimEnd() };
  }
  return { kind: 'run', spec, args };
}

export function helpText(): string {
  const lines = COMMANDS.map((command) => `  ${[...command.words, ...command.args.map((arg) => `<${arg}>`)].join(' ').padEnd(42)} ${command.summary}`);
  return [
    'Usage: adm [-p <passphrase>] <command>   (no command: interactive prompt)',
    '',
    'Commands:',
    ...lines,
    `  ${'rpc server'.padEnd(42)} run the JSON-RPC server (rpc.port, default 5080)`,
    `  ${'init [path]'.padEnd(42)} write a default config.jsonc (never overwrites)`,
    '',
    'Options:',
    '  -p, --passphrase <phrase>   the account for send, vote and delegate commands (else the config)',
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
