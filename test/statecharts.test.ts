// docs/statecharts/ must match the machines (docs/DESIGN.md, "Operators see the running system"): the generator
// behind `npm run statecharts` (src/statecharts.ts, run as the same process) writes into a temporary folder,
// and every file there (drawings, Mermaid, definitions) must equal the committed one, with none missing and none
// extra. The README's supervision trees must be the ones it draws from the composition code, and its statecharts
// block must show every machine's drawing.

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
const README = join(repositoryRoot(), 'README.md');

test('docs/statecharts/ is what `npm run statecharts` writes for the current machines', () => {
  const fresh = mkdtempSync(join(tmpdir(), 'statecharts-'));
  try {
    const output = execFileSync(process.execPath, [GENERATOR, fresh], { encoding: 'utf8', timeout: 60_000 });
    const generated = readdirSync(fresh).sort();
    assert.match(output, new RegExp(`wrote ${generated.filter((f) => f.endsWith('.mmd')).length} statecharts and the supervision trees`));
    assert.ok(generated.includes('README.md') && generated.some((f) => f.endsWith('.json')), `the generator wrote files (${generated.join(', ')})`);
    for (const id of generated.filter((f) => f.endsWith('.mmd')).map((f) => f.slice(0, -4))) assert.ok(generated.includes(`${id}.svg`), `${id} is drawn`);

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

test("the README's supervision trees are the ones drawn from the composition code", async () => {
  const { supervisionTrees, withTrees } = (await import(GENERATOR)) as typeof import('../src/statecharts.js');
  const trees = await supervisionTrees();
  // The services in composition order, each worker group inside its service's tree.
  for (const line of ['files (rest_for_one)', '├── files.workers (one_for_one)', '│   ├── files.content', '└── files.http', '│   └── transfers.schema', 'console (one_for_one)']) {
    assert.ok(trees.split('\n').includes(line), `${line} in:\n${trees}`);
  }
  const readme = readFileSync(README, 'utf8');
  assert.equal(withTrees(readme, trees), readme, 'the README block is out of date: run `npm run statecharts` and commit the result');
});

test("the README shows every machine's drawing", async () => {
  const { chartsBlock, withBlock, CHARTS_BEGIN, CHARTS_END } = (await import(GENERATOR)) as typeof import('../src/statecharts.js');
  const readme = readFileSync(README, 'utf8');
  const block = chartsBlock();
  assert.equal((block.match(/!\[\w+\]\(docs\/statecharts\/\w+\.svg\)/g) ?? []).length, readdirSync(COMMITTED).filter((f) => f.endsWith('.svg')).length);
  assert.equal(withBlock(readme, CHARTS_BEGIN, CHARTS_END, block), readme, 'the README statecharts block is out of date: run `npm run statecharts` and commit the result');
});
