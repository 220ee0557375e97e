// pino NDJSON on stdout, one child logger per actor (`{actor: systemId}`), secrets redacted
// (docs/DESIGN.md, "Configuration and logs"). Redaction paths are compiled once, here.

import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Every place a secret can sit in a logged object. Keep in sync with the config formats of each service. */
export const REDACT_PATHS = [
  'apiKey',
  'api_key',
  'adminApiKey',
  'passphrase',
  'adamantPassphrase',
  'password',
  '*.apiKey',
  '*.api_key',
  '*.adminApiKey',
  '*.passphrase',
  '*.adamantPassphrase',
  '*.password',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  // pino wildcards match one level; configuration blocks nest one more (server.admin, sources.*).
  '*.*.apiKey',
  '*.*.api_key',
  '*.*.adminApiKey',
  '*.*.passphrase',
];

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Replaces CIDs, peer ids, multiaddrs and stacks in every line (the files service, spec §6). */
  scrub?: { log(object: Record<string, unknown>): Record<string, unknown>; value(value: unknown): unknown };
  /** Defaults to stdout; tests pass a stream to read the lines back. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? process.env.LOG_LEVEL ?? 'info',
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      formatters: { level: (label) => ({ level: label }), ...(options.scrub ? { log: options.scrub.log } : {}) },
      // pino never passes the message string through formatters.log: scrub it as a serializer too.
      ...(options.scrub ? { serializers: { msg: options.scrub.value as (value: unknown) => unknown } } : {}),
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    options.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Masks credentials that may hide inside free text (URLs with user:pass, bearer tokens, key params). */
export function scrubSecrets(text: string): string {
  return text
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s:]+:[^/@\s]+@/gi, '$1***:***@')
    .replace(/(bearer\s+)[a-z0-9._~+/=-]+/gi, '$1***')
    .replace(/([?&](?:access_key|api_key|apikey|key|token|x_cg_demo_api_key|password)=)[^&\s]+/gi, '$1***')
    .replace(/(password=)[^&\s]+/gi, '$1***')
    .replace(/(hooks\.slack\.com\/services\/)[^\s"']+/gi, '$1***')
    .replace(/(discord(?:app)?\.com\/api\/webhooks\/)[^\s"']+/gi, '$1***');
}
