// The console's JSON-RPC method table (spec B §4.2; notes C.2, F.12): the read methods, clientVersion and (with the
// account's keys) the sending methods, over one node client.

import type { MethodTable, RpcMethod } from './jsonrpc.js';
import type { ConsoleConfig } from './config.js';
import type { AdamantNodeClient } from './node-api.js';
import { readMethods } from './read-methods.js';
import { sendMethods } from './send-methods.js';
import { addressFromPublicKey, keyPairFromPassphrase, newAccount } from './crypto.js';
import type { Clock } from '../clock.js';
import { setPassphrase } from './amount.js';

/** `clientVersion.version` (notes F.14): the console semver; 3.x matches the v3 method set. */
export const CONSOLE_VERSION = '3.0.0';

export interface ConsoleMethodsOptions {
  readonly node: AdamantNodeClient;
  readonly config: ConsoleConfig;
  readonly clock: Clock;
  /** The command line's -p (adm), which wins over the config's passphrase. */
  readonly passphrase?: string;
}

export function consoleMethods(options: ConsoleMethodsOptions): MethodTable {
  const methods = readMethods(options.node);
  // The template's placeholder passphrase counts as not set, from -p as from the config.
  const defaultPassphrase = setPassphrase(options.passphrase) ?? setPassphrase(options.config.passphrase);
  for (const [name, method] of sendMethods({ node: options.node, clock: options.clock, defaultPassphrase })) methods.set(name, method);
  // clientVersion shows the configured account's address, never its passphrase.
  const accountAddress = defaultPassphrase ? addressFromPublicKey(keyPairFromPassphrase(defaultPassphrase).publicKey) : undefined;
  // Params are ignored (notes C.2): 'object' style, so omitted params do not trip the array-style quirk.
  const clientVersion: RpcMethod = {
    style: 'object',
    call: async () => ({
      success: true,
      version: CONSOLE_VERSION,
      network: options.config.network,
      config: options.config.source,
      account: accountAddress ?? 'Not set',
    }),
  };
  methods.set('clientVersion', clientVersion);
  // Local: a new passphrase and its keys; nothing is sent or logged (the answer goes to the caller only).
  methods.set('accountNew', { style: 'array', call: async () => newAccount() });
  return methods;
}
