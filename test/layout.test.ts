// The dependency direction of DESIGN.md ("Layout"), enforced on the TypeScript sources' import specifiers
// (type-only imports included: they couple layers just as much).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { repositoryRoot } from './support/fixtures.js';

const ROOT = repositoryRoot();
const LAYERS = ['src', 'machines', 'actors', 'http', 'storage'] as const;
type Layer = (typeof LAYERS)[number];

/** Which layers each layer may import (its own included). */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  machines: ['machines', 'src'],
  storage: ['storage', 'src'],
  actors: ['actors', 'machines', 'storage', 'src'],
  http: ['http', 'actors', 'src'],
  src: ['src'],
};
/** Entry points compose every layer. */
const ENTRY_FILES = new Set([
  'src/main.ts',
  'src/cli.ts',
  'src/adm.ts',
  'src/statecharts.ts',
  'src/compose.ts',
  'src/lifecycle.ts',
  // `adm-infra transfers --migrate`: a one-off command over the transfers storage (src/main.ts runs it).
  'src/transfers-migrate.ts',
]);
/** Packages a pure layer may use. */
const MACHINE_PACKAGES = new Set(['xstate']);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/g)) found.push(match[1]!);
  for (const match of text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) found.push(match[1]!);
  for (const match of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1]!);
  return found;
}

test('every layer imports only the layers DESIGN.md allows', () => {
  const violations: string[] = [];
  let checked = 0;
  for (const layer of LAYERS) {
    for (const file of sources(join(ROOT, layer))) {
      const rel = relative(ROOT, file).split(sep).join('/');
      if (ENTRY_FILES.has(rel)) continue;
      for (const spec of specifiers(file)) {
        checked++;
        if (spec.startsWith('.')) {
          const target = relative(ROOT, resolve(dirname(file), spec)).split(sep)[0] as Layer;
          if (!ALLOWED[layer].includes(target)) violations.push(`${rel} imports ${spec} (${layer} → ${target})`);
        } else if (layer === 'machines' && !MACHINE_PACKAGES.has(spec)) {
          violations.push(`${rel} imports package ${spec} (machines are pure: xstate and src/ only)`);
        }
      }
    }
  }
  assert.ok(checked > 20, `the check read the sources (${checked} imports)`);
  assert.deepEqual(violations, []);
});

test('file records have one writer: actors/files/file-records.ts', () => {
  // The registry's record writes; intents, acknowledgements, GC runs and actor state are written elsewhere on purpose.
  const RECORD_WRITES = /\b(?:registry|#registry)\s*(?:\(\))?\s*\.\s*(?:put|putMany|delete|commitUpload)\s*\(/;
  const offenders: string[] = [];
  let read = 0;
  for (const layer of ['actors', 'http', 'src'] as const) {
    for (const file of sources(join(ROOT, layer))) {
      const rel = relative(ROOT, file).split(sep).join('/');
      if (rel === 'actors/files/file-records.ts') continue;
      read++;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (RECORD_WRITES.test(line)) offenders.push(`${rel}:${index + 1}: ${line.trim()}`);
        });
    }
  }
  assert.ok(read > 50, `the check read the sources (${read} files)`);
  assert.match('node.registry.put(record);', RECORD_WRITES, 'the pattern finds a direct write');
  assert.deepEqual(offenders, []);
});
