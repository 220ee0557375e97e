// The console's configuration (spec B; notes C.3): the original's JSONC file, merged SHALLOWLY over the packaged
// defaults (a top-level key in the file replaces the default wholesale), validated like its Joi schema (unknown keys
// allowed), then frozen. Which file is read, in the original's lookup order: config-file.ts.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '../typebox.js';
import { deepFreeze, HTTP_ENGINES, isRecord, schemaProblems, type HttpEngineName } from '../config.js';
import { setPassphrase } from './amount.js';

/**
 * The packaged default config (the project root's config.default.jsonc; this file runs as dist/src/console/config.js):
 * what `adm init` copies, and what clientVersion names when no config file was found. CONSOLE_DEFAULT_CONFIG holds
 * the same settings (a test keeps them equal), minus the placeholder passphrase.
 */
export const PACKAGED_CONSOLE_CONFIG = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'config.default.jsonc');

/** The packaged config.default.jsonc of the original (its public node lists), minus its placeholder passphrase. */
export const CONSOLE_DEFAULT_CONFIG = {
  passphrase: '',
  network: 'testnet',
  rpc: { port: 5080 },
  networks: {
    testnet: {
      nodes: [
        { ip: 'testnode1.adamant.im', protocol: 'https', port: '' },
        { ip: '81.0.247.181', protocol: 'http', port: 36667 },
        { ip: 'testnode3.adm.im', protocol: 'https', port: '' },
      ],
    },
    mainnet: {
      nodes: [
        { ip: 'clown.adamant.im', protocol: 'https', port: '' },
        { ip: 'lake.adamant.im', protocol: 'https', port: '' },
        { ip: 'endless.adamant.im', protocol: 'https', port: '' },
        { ip: 'bid.adamant.im', protocol: 'https', port: '' },
        { ip: '184.94.215.92', protocol: 'http', port: 45555 },
      ],
    },
  },
} as const;

export const DEFAULT_RPC_PORT = 5080;

export interface ConsoleConfig {
  /** The configured account's passphrase; undefined when empty (send methods then need one per call or `-p`). */
  readonly passphrase: string | undefined;
  readonly network: string;
  /** `engine`: the HTTP engine of the JSON-RPC listener (additive key; http/engine.ts). */
  readonly rpc: { readonly port: number; readonly host: string | undefined; readonly engine?: HttpEngineName };
  /** Node base URLs of the selected network, `protocol://ip[:port]`. */
  readonly nodes: readonly string[];
  /** The file the settings came from, for clientVersion (the packaged config.default.jsonc without one). */
  readonly source: string;
}

const NodeSchema = Type.Object({
  ip: Type.String({ minLength: 1 }),
  protocol: Type.Union([Type.Literal('http'), Type.Literal('https')]),
  port: Type.Union([Type.Integer({ minimum: 1, maximum: 65_535 }), Type.Literal('')]),
});
const FileSchema = Type.Object({
  passphrase: Type.Optional(Type.String()),
  network: Type.Optional(Type.String({ minLength: 1 })),
  rpc: Type.Optional(
    Type.Object({
      port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65_535 })),
      host: Type.Optional(Type.String({ minLength: 1 })),
      engine: Type.Optional(Type.Enum([...HTTP_ENGINES])),
    }),
  ),
  networks: Type.Optional(Type.Record(Type.String(), Type.Object({ nodes: Type.Array(NodeSchema) }))),
});

export type ParsedConsoleConfig = { ok: true; config: ConsoleConfig } | { ok: false; problems: string[] };

/** Shallow merge over the defaults (notes C.3), then validation; every problem at once. */
export function parseConsoleConfig(file: unknown, source: string): ParsedConsoleConfig {
  if (file !== undefined && !isRecord(file)) return { ok: false, problems: ['(root): must be an object'] };
  const merged = { ...CONSOLE_DEFAULT_CONFIG, ...(file as Record<string, unknown> | undefined) } as Record<string, unknown>;
  const problems = schemaProblems(FileSchema, merged);
  if (problems.length > 0) return { ok: false, problems };
  const shaped = merged as Type.Static<typeof FileSchema>;
  const network = shaped.network ?? 'testnet';
  const nodes = shaped.networks?.[network]?.nodes;
  if (!nodes) return { ok: false, problems: [`networks.${network}: required (the nodes of the selected network)`] };
  if (nodes.length === 0) return { ok: false, problems: [`networks.${network}.nodes: at least one node is needed`] };
  return {
    ok: true,
    config: deepFreeze({
      // The template's placeholder counts as not set (an `adm init` copy nobody edited yet).
      passphrase: setPassphrase(shaped.passphrase),
      network,
      rpc: { port: shaped.rpc?.port ?? DEFAULT_RPC_PORT, host: shaped.rpc?.host, ...(shaped.rpc?.engine ? { engine: shaped.rpc.engine } : {}) },
      nodes: nodes.map((node) => `${node.protocol}://${node.ip}${node.port === '' ? '' : `:${node.port}`}`),
      source,
    }),
  };
}
