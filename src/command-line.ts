// The command line of `adm-infra`: the services, usage text, exit codes and the parsed arguments.

import { parseArgs } from 'node:util';

export const SERVICES = ['files', 'rates', 'transfers', 'console'] as const;
export type ServiceName = (typeof SERVICES)[number];

export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

export interface CommandLine {
  readonly service: ServiceName | 'all';
  readonly configPath: string | undefined;
  readonly checkConfig: boolean;
  /** `transfers --migrate`: run the schema migrations and the anonymous role setup, then exit. */
  readonly migrate: boolean;
  readonly host: string;
}

export type ParsedCommandLine = { ok: true; command: CommandLine } | { ok: false; help: boolean; message?: string };

export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        config: { type: 'string' },
        'check-config': { type: 'boolean' },
        migrate: { type: 'boolean' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { ok: false, help: false, message: (error as Error).message };
  }
  if (parsed.values.help) return { ok: false, help: true };
  const [service, ...rest] = parsed.positionals;
  if (!service) return { ok: false, help: false, message: 'missing service' };
  if (rest.length > 0) return { ok: false, help: false, message: `unexpected argument: ${rest[0]}` };
  if (service !== 'all' && !(SERVICES as readonly string[]).includes(service)) {
    return { ok: false, help: false, message: `unknown service: ${service}` };
  }
  if (service === 'all' && parsed.values.config) return { ok: false, help: false, message: '--config applies to one service, not to all' };
  const migrate = parsed.values.migrate ?? false;
  if (migrate && service !== 'transfers') return { ok: false, help: false, message: '--migrate applies to the transfers service only' };
  if (migrate && parsed.values['check-config']) return { ok: false, help: false, message: '--migrate and --check-config are separate runs' };
  return {
    ok: true,
    command: {
      service: service as ServiceName | 'all',
      configPath: parsed.values.config,
      checkConfig: parsed.values['check-config'] ?? false,
      migrate,
      host: parsed.values.host ?? '0.0.0.0',
    },
  };
}
