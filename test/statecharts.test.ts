// docs/statecharts/ must match the machines (DESIGN.md, "Operators see the running system"): the generator
// behind `npm run statecharts` (src/statecharts.ts, run as the same process) writes into a temporary folder,
// and every file there must equal the committed one, with none missing and none extra.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DIST } from './support/cli.js';
import { repositoryRoot } from './support/fixtures.js';

const COMMITTED = join(repositoryRoot(), 'docs', 'statecharts');
const GENERATOR = join(DIST, 'src', 'statecharts.js');
const FIX = 'docs/statecharts/ is out of date with the machines: run `npm run statecharts` and commit the result';

test('docs/statecharts/ is what `npm run statecharts` writes for the current machines', () => {
  const fresh = mkdtempSync(join(tmpdir(), 'statecharts-'));
  try {
    const output = execFileSync(process.execPath, [GENERATOR, fresh], { encoding: 'utf8', timeout: 60_000 });
    const generated = readdirSync(fresh).sort();
    assert.match(output, new RegExp(`wrote ${generated.filter((f) => f.endsWith('.mmd')).length} statecharts`));
    assert.ok(generated.includes('README.md') && generated.some((f) => f.endsWith('.json')), `the generator wrote files (${generated.join(', ')})`);

    const committed = readdirSync(COMMITTED).sort();
    const missing = generated.filter((f) => !committed.includes(f));
    const extra = committed.filter((f) => !generated.includes(f));
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, `${FIX} (missing: generated but not committed; extra: committed but no longer generated)`);

    const differing = generated.filter((f) => readFileSync(join(fresh, f), 'utf8') !== readFileSync(join(COMMITTED, f), 'utf8'));
    assert.deepEqual(differing, [], `${FIX} (these files differ)`);
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
});
