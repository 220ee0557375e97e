// The process-wide environment variables the runtime reads outside any service configuration, validated with the
// configuration at startup (docs/DESIGN.md "Configuration and logs"): a value that is not one of the accepted ones is a
// startup error with the usual report, exit 1 before any port opens, never a silent default. Unset or empty means
// "not set". The services' own variables (TRANSFERS_CONFIG, PGRST_*, ADMIN_*, ...) are checked by their loaders.

import { HTTP_ENGINES } from './config.js';

/** pino's levels (src/logger.ts reads LOG_LEVEL when a service's configuration sets no level). */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Each variable with the values it accepts and what it does (the report names both). */
const VARIABLES: ReadonlyArray<{ readonly name: string; readonly accepts: readonly string[]; readonly meaning: string }> = [
  { name: 'ADM_HTTP_ENGINE', accepts: HTTP_ENGINES, meaning: "every listener's HTTP engine when its own configuration names none" },
  { name: 'ADM_HTTP_UWS', accepts: ['missing'], meaning: 'count the uWebSockets.js binary as missing (node:http everywhere)' },
  { name: 'LOG_LEVEL', accepts: LOG_LEVELS, meaning: 'the log threshold when the configuration sets none' },
];

/** One line per variable set to a value it does not accept. */
export function environmentProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  for (const { name, accepts, meaning } of VARIABLES) {
    const value = env[name];
    if (value === undefined || value === '' || accepts.includes(value)) continue;
    problems.push(`${name}: must be ${accepts.length === 1 ? `'${accepts[0]}'` : `one of ${accepts.join(', ')}`} (${meaning}), got '${value}'`);
  }
  return problems;
}
