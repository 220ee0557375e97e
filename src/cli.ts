#!/usr/bin/env node
// `adm-infra <service> [--config FILE]`: the service runner (see src/main.ts).
import './polyfill.js';
import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`adm-infra: unexpected failure: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
