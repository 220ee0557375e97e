// Every machine the runtime runs (actors/statechart.ts MACHINES) has a model-based test: for the machine defined in
// machines/<service>/<name>.machine.ts, test/machines/<service>/<name>.model.test.ts exists and hands that machine to
// the harness (test/support/model.ts `modelTest`). A machine added to the registry without one fails here.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { MACHINES } from '../../actors/statechart.js';

const root = new URL('../../', import.meta.url); // the compiled tree: machines/ and test/ side by side

test('every registered machine has a model test', async () => {
  const found = new Map<string, string>(); // machine id → machines/<service>/<name>
  for (const service of readdirSync(new URL('machines/', root))) {
    for (const file of readdirSync(new URL(`machines/${service}/`, root)).filter((f) => f.endsWith('.machine.js'))) {
      const module = (await import(new URL(`machines/${service}/${file}`, root).href)) as Record<string, unknown>;
      for (const [id, machine] of MACHINES) if (Object.values(module).includes(machine)) found.set(id, `${service}/${file.replace(/\.machine\.js$/, '')}`);
    }
  }
  assert.deepEqual([...MACHINES.keys()].filter((id) => !found.has(id)), [], 'every registered machine is defined in machines/');
  const missing: string[] = [];
  for (const [id, path] of found) {
    const testFile = new URL(`test/machines/${path}.model.test.js`, root);
    const text = existsSync(testFile) ? readFileSync(testFile, 'utf8') : '';
    const ok = text.includes(`machines/${path}.machine.js`) && /\bmodelTest\(/.test(text);
    if (!ok) missing.push(`${id}: test/machines/${path}.model.test.ts`);
  }
  assert.deepEqual(missing, [], 'a model test per registered machine');
  assert.equal(found.size, MACHINES.size);
});
