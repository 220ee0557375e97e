import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFilesConfig } from '../../src/files/config.js';
import { FILES_DEFAULT_CONFIG } from '../../src/files/config-defaults.js';
import { storagePolicy } from '../../src/files/policy.js';

test('E49: with replication disabled the durability mode is best-effort with one copy', () => {
  const parsed = parseFilesConfig({ ...structuredClone(FILES_DEFAULT_CONFIG), replication: { enabled: false } });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('\n'));
  const policy = storagePolicy(parsed.config);
  assert.deepEqual(policy.durability, { mode: 'best-effort', placement: [{ minAgeMs: 0, copies: 1 }], ackQuorum: 1 });
  assert.equal(policy.maxConcurrentUploads, parsed.config.storage.maxConcurrentUploads);
  assert.equal(policy.maxConcurrentDownloadsPerClient, parsed.config.storage.maxConcurrentDownloadsPerClient);
});
