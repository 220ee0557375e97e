import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Type } from '../src/typebox.js';
import { deepFreeze, formatPath, readConfigFile, schemaProblems } from '../src/config.js';
import { ConfigError } from '../src/errors.js';
import { repositoryRoot } from './support/fixtures.js';

test('readConfigFile reads JSON5/JSONC (comments, trailing commas, unquoted keys)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'config-'));
  try {
    writeFileSync(join(dir, 'a.jsonc'), '// comment\n{\n  /* block */ port: 1, "name": \'x\',\n}\n');
    assert.deepEqual(readConfigFile(join(dir, 'a.jsonc')), { port: 1, name: 'x' });
    writeFileSync(join(dir, 'bad.json'), '{ "port": }');
    assert.throws(() => readConfigFile(join(dir, 'bad.json')), (error: unknown) => error instanceof ConfigError && /not valid JSON5/.test(error.message));
    assert.throws(() => readConfigFile(join(dir, 'missing.json')), (error: unknown) => error instanceof ConfigError && /No config found/.test(error.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('schemaProblems reports every problem at once, beyond TypeBox default of 8, with readable paths', () => {
  const schema = Type.Object(
    Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, Type.Integer()])),
    { additionalProperties: false },
  );
  const value = { ...Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, 'x'])), extra: true };
  const problems = schemaProblems(schema, value);
  assert.equal(problems.length, 13, problems.join('\n'));
  assert.ok(problems.includes('extra: unknown key (not part of the configuration format)'));
  assert.ok(problems.includes('k11: must be integer'));
  assert.deepEqual(schemaProblems(schema, Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, i]))), []);
});

test('formatPath and deepFreeze', () => {
  assert.equal(formatPath(''), '(root)');
  assert.equal(formatPath('/a/b/0/c'), 'a.b[0].c');
  assert.equal(formatPath('/a~1b'), 'a/b');
  const frozen = deepFreeze({ a: { b: [1, { c: 2 }] } });
  assert.ok(Object.isFrozen(frozen.a.b[1]));
});

test('the build loads TypeBox as one module (src/typebox.ts: 681 files cost ~0.8 s of CPU on every start)', () => {
  // `npm run build` bundles dist/src/typebox.js with esbuild; a build that skipped it leaves TypeBox's own imports.
  const built = readFileSync(join(repositoryRoot(), 'dist', 'src', 'typebox.js'), 'utf8');
  assert.doesNotMatch(built, /^\s*(import|export)\b[^;]*from\s*["']typebox/m, 'dist/src/typebox.js still imports the typebox package: run `npm run build`, not a plain tsc');
  assert.match(built, /function Compile\b/, 'the bundle has TypeBox compile in it');
});

