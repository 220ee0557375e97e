// The dependency direction of docs/DESIGN.md ("Layout"), enforced on the TypeScript sources' import specifiers
// (type-only imports included: they couple layers just as much).

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

/** Every source line of `folders` (but the file `except`) that `matches`, as `path:line: text`; `read` counts the files. */
function linesMatching(folders: readonly string[], except: string, matches: (line: string) => boolean): { offenders: string[]; read: number } {
  const offenders: string[] = [];
  let read = 0;
  for (const folder of folders) {
    for (const file of sources(join(ROOT, folder))) {
      const rel = relative(ROOT, file).split(sep).join('/');
      if (rel === except) continue;
      read++;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (matches(line)) offenders.push(`${rel}:${index + 1}: ${line.trim()}`);
        });
    }
  }
  return { offenders, read };
}

function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/g)) found.push(match[1]!);
  for (const match of text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) found.push(match[1]!);
  for (const match of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(match[1]!);
  return found;
}

test('every layer imports only the layers docs/DESIGN.md allows', () => {
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

test('the files store has one owner: actors/files/store.actor.ts writes records, intents, acknowledgements and root pins', () => {
  // The registry's writes of records, pin intents and holder acknowledgements, and every change of a root pin. GC runs
  // and actor state are written by the actors they belong to, on purpose.
  const STORE_WRITES = [
    /\b(?:registry|#registry)\s*(?:\(\))?\s*\.\s*(?:put|putMany|delete|commitUpload|addIntent|removeIntent|removeSessionIntents|acknowledge|forgetAcknowledgements|noteHolders)\s*\(/,
    /\bpins\s*\.\s*(?:add|remove|rm)\s*\(/,
  ];
  const { offenders, read } = linesMatching(['actors', 'http', 'src'], 'actors/files/store.actor.ts', (line) => STORE_WRITES.some((pattern) => pattern.test(line)));
  assert.ok(read > 50, `the check read the sources (${read} files)`);
  for (const sample of ['node.registry.put(record);', 'node.registry.addIntent(cid, session, now);', 'registry.acknowledge(cid, held, at);', 'registry.noteHolders(notes, at);', 'await node.pins.add(cid, { signal });', 'node.helia.pins.rm(cid)']) {
    assert.ok(STORE_WRITES.some((pattern) => pattern.test(sample)), `the patterns find ${sample}`);
  }
  assert.deepEqual(offenders, []);
});

test('TypeBox is imported only through src/typebox.ts, the module the build bundles: one copy of it (and of its Settings) per process', () => {
  const direct = /from\s*'typebox(\/[a-z]+)?'/;
  const { offenders, read } = linesMatching(LAYERS, 'src/typebox.ts', (line) => direct.test(line));
  assert.ok(read > 50, `the check read the sources (${read} files)`);
  assert.ok(direct.test("import { Compile } from 'typebox/compile';"), 'the pattern finds a direct import');
  assert.deepEqual(offenders, [], 'import TypeBox from src/typebox.ts');
});

test('nothing reads outside the repository: no test, bench or service names a path beside or above it', () => {
  // A clone has nothing beside it: fixtures live in test/fixtures/, the design documents in docs/. A path is named
  // outside the repository by a `..` segment joined onto the repository root, a relative literal that climbs into a
  // sibling folder, or an absolute path to this machine's work folders. (The samples below are put together from
  // parts, so that this file names no such path either.)
  const OUTSIDE = [
    /repositoryRoot\(\)\s*,\s*['"`]\.\.['"`]/,
    /['"`]\.\.['"`]\s*,\s*['"`]shared['"`]/,
    /['"`](?:\.\.\/)+shared\b/,
    /\bshared\/fixtures\b/,
    /['"`]\/work\//,
  ];
  const { offenders, read } = linesMatching(['test', 'bench', ...LAYERS], 'test/layout.test.ts', (line) => OUTSIDE.some((pattern) => pattern.test(line)));
  assert.ok(read > 200, `the check read the sources (${read} files)`);
  // The forms this check exists for, as the fixtures helper once wrote them.
  const sibling = ['shared', 'fixtures', 'original-ipfs-node-store'];
  for (const line of [
    `join(repositoryRoot(), '..', ${sibling.map((part) => `'${part}'`).join(', ')})`,
    `readFileSync('${['..', ...sibling, 'manifest.json'].join('/')}')`,
    `const STORE = '${['', 'work', ...sibling].join('/')}';`,
  ]) {
    assert.ok(OUTSIDE.some((pattern) => pattern.test(line)), `the check finds: ${line}`);
  }
  assert.deepEqual(offenders, []);
  // The documents a clone carries (README, docs/, fixture notes) point inside it too.
  const climbing = new RegExp(`\\.\\./${sibling[0]}\\b`);
  const documents = ['README.md', 'test/fixtures/README.md', ...readdirSync(join(ROOT, 'docs'), { recursive: true }).map((name) => `docs/${String(name)}`)]
    .filter((path) => path.endsWith('.md'));
  assert.ok(documents.length >= 9, `the check read the documents (${documents.length})`);
  assert.deepEqual(
    documents.filter((path) => climbing.test(readFileSync(join(ROOT, path), 'utf8'))),
    [],
  );
});

test('the fixtures the tests read are in the repository', () => {
  for (const name of ['original-ipfs-node-store/store.tar.gz', 'original-ipfs-node-store/manifest.json', 'transfers/token.bytecode.json', 'README.md']) {
    const path = join(ROOT, 'test', 'fixtures', name);
    assert.ok(statSync(path).size > 0, `${relative(ROOT, path)} is in the repository`);
  }
});

test('every design document the sources cite is in the repository (docs/)', () => {
  const CITED = /\bdocs\/(?:DESIGN\.md|(?:specs|notes)\/[a-z-]+\.md)/g;
  const cited = new Set<string>();
  for (const folder of ['test', 'bench', ...LAYERS]) {
    for (const file of sources(join(ROOT, folder))) for (const match of readFileSync(file, 'utf8').matchAll(CITED)) cited.add(match[0]);
  }
  assert.ok(cited.size >= 5, `the check found the citations (${[...cited].join(', ')})`);
  const missing = [...cited].filter((path) => !existsSync(join(ROOT, path)));
  assert.deepEqual(missing, []);
});

/**
 * The packages the compiled `entries` load before any dynamic `import()` runs: the static import closure of the
 * emitted JavaScript (what Node really loads; type-only imports are gone there), each with a file that imports it.
 */
function eagerPackages(entries: readonly string[]): Map<string, string> {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const pending = entries.map((entry) => join(ROOT, 'dist', entry.replace(/\.ts$/, '.js')));
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const statics = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/g), ...text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)];
    for (const [, spec] of statics) {
      if (spec!.startsWith('.')) pending.push(resolve(dirname(file), spec!));
      else if (!spec!.startsWith('node:')) {
        const name = spec!.split('/').slice(0, spec!.startsWith('@') ? 2 : 1).join('/');
        if (!packages.has(name)) packages.set(name, relative(ROOT, file));
      }
    }
  }
  assert.ok(seen.size > 5, `the closure followed the imports (${seen.size} files from ${entries.join(', ')})`);
  return packages;
}

test("a process loads only the libraries of the services it runs: `adm-infra files` never loads MongoDB's, PostgreSQL's or the diagrams'", () => {
  // Each was measured in a files node's idle memory: the MongoDB driver alone keeps a 17 MiB serialisation buffer.
  const BY_SERVICE = { files: ['libp2p', '@helia/unixfs', 'blockstore-fs'], rates: ['mongodb'], transfers: ['pg', '@electric-sql/pglite'], operator: ['elkjs'] };
  const loadedBy = (entries: readonly string[], packages: readonly string[]) => {
    const eager = eagerPackages(entries);
    return packages.filter((name) => eager.has(name)).map((name) => `${name} (imported by ${eager.get(name)})`);
  };
  // The command line itself: src/compose.ts imports each service's modules only when that service runs.
  assert.deepEqual(loadedBy(['src/cli.ts'], Object.values(BY_SERVICE).flat()), []);
  // A files node: its tree and its routes.
  assert.deepEqual(loadedBy(['actors/files/tree.ts', 'http/files/files.routes.ts'], [...BY_SERVICE.rates, ...BY_SERVICE.transfers, ...BY_SERVICE.operator]), []);
  // The check can fail: the files tree does load the files libraries.
  assert.equal(loadedBy(['actors/files/tree.ts'], BY_SERVICE.files).length, BY_SERVICE.files.length);
});
