// A pino logger whose NDJSON lines tests can read back.

import { Writable } from 'node:stream';
import { createLogger, type Logger } from '../../src/logger.js';

export interface CapturedLogger {
  readonly logger: Logger;
  readonly lines: Array<Record<string, unknown>>;
}

export function captureLogger(level: 'debug' | 'info' | 'warn' = 'debug'): CapturedLogger {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: createLogger({ level, destination: stream }), lines };
}
