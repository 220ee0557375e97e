// docs/DESIGN.md rule 4: exceeding the intensity at the root exits non-zero after logging.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CRASHING_ROOT_ENV } from '../support/crashing-root.js';

test('when the root supervisor gives up, the process logs the reason and exits 1', async () => {
  const script = join(dirname(fileURLToPath(import.meta.url)), '..', 'support', 'crashing-root.js');
  const child = spawn(process.execPath, [script], { env: { ...process.env, [CRASHING_ROOT_ENV]: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(timer);
  assert.equal(code, 1, out);
  const lines = out.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  const crashes = lines.filter((line) => line.msg === 'child crashed' && line.child === 'test.crashing');
  assert.equal(crashes.length, 4, 'intensity 3: three restarts, the fourth crash escalates');
  const fatal = lines.find((line) => line.msg === 'supervision gave up; exiting');
  assert.ok(fatal, 'the reason is logged before exiting');
  assert.equal(fatal!.level, 'fatal');
  assert.match(JSON.stringify(fatal!.err), /RestartIntensityError/);
});
