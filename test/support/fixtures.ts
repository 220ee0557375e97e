// Data written by the original services, kept in test/fixtures/ (test/fixtures/README.md says what wrote each and how it
// was checked), copied into temporary folders for drop-in tests (never used in place: a running node writes into its
// store). Nothing here reads outside the repository: a clone with nothing beside it runs every test.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder above the compiled test that holds package.json. */
export function repositoryRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8 && !existsSync(join(dir, 'package.json')); i++) dir = dirname(dir);
  return dir;
}

export const ORIGINAL_STORE_DIR = join(repositoryRoot(), 'test', 'fixtures', 'original-ipfs-node-store');

export interface OriginalStoreManifest {
  readonly storeFolder: string;
  readonly peerId: string;
  readonly files: ReadonlyArray<{ name: string; size: number; sha256: string; cid: string }>;
}

export function originalStoreManifest(): OriginalStoreManifest {
  return JSON.parse(readFileSync(join(ORIGINAL_STORE_DIR, 'manifest.json'), 'utf8')) as OriginalStoreManifest;
}

/** A new temporary HOME holding a copy of the original `.adm-ipfs` store folder. */
export function homeWithOriginalStore(): string {
  const home = mkdtempSync(join(tmpdir(), 'files-home-'));
  const result = spawnSync('tar', ['-C', home, '-xzf', join(ORIGINAL_STORE_DIR, 'store.tar.gz')], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cannot extract the original store: ${result.stderr}`);
  return home;
}
