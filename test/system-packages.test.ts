// test/support/system-packages.ts: suites that need Chromium or the PostgreSQL server skip loudly without them, unless
// CI is set, where they fail. Nothing is uninstalled: the packages' paths are parameters, pointed at a folder that
// does not exist. The last two tests run a small node:test file in a child `node --test` the way the real suites use
// the helper (the operator page's Chromium assertion, startPostgres), once without CI and once with CI=1.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { repositoryRoot } from './support/fixtures.js';
import { startPostgres } from './support/postgres.js';
import { chromiumPackage, netnsPackage, nftablesPackage, postgresServerPackage, skipWithout, type SystemPackage } from './support/system-packages.js';

const NOWHERE = join(tmpdir(), 'adm-infra-no-such-folder', 'really-not-here');
const CHROMIUM_INSTALL = 'apt-get install -y --no-install-recommends chromium';
const POSTGRES_INSTALL = 'apt-get install -y postgresql';

const fake = (present: boolean): SystemPackage => ({ name: 'Fakeware', present: () => present, install: 'apt-get install -y fakeware' });

describe('skipWithout', () => {
  test('an installed package: the suite runs and nothing is printed', () => {
    const notices: string[] = [];
    assert.equal(skipWithout(fake(true), 'the fake suite', { env: {}, notify: (n) => notices.push(n) }), false);
    assert.deepEqual(notices, []);
  });

  test('a missing package without CI: skip with a reason naming the install command, and one loud notice', () => {
    const notices: string[] = [];
    const skip = skipWithout(fake(false), 'the fake suite (test/fake.test.ts)', { env: {}, notify: (n) => notices.push(n) });
    assert.equal(typeof skip, 'string');
    assert.match(skip as string, /^SKIPPED: Fakeware is not installed; install it with `apt-get install -y fakeware`/);
    assert.equal(notices.length, 1);
    assert.match(notices[0], /Fakeware is not installed: SKIPPING the fake suite \(test\/fake\.test\.ts\)/);
    assert.match(notices[0], /Install it \(as root\) with: {2}apt-get install -y fakeware\n/);
  });

  test('an empty CI counts as not set', () => {
    assert.equal(typeof skipWithout(fake(false), 'the fake suite', { env: { CI: '' }, notify: () => {} }), 'string');
  });

  test('a missing package with CI set (any value): the suite runs, so it fails on its own check; no notice', () => {
    for (const CI of ['1', 'true', 'yes']) {
      const notices: string[] = [];
      assert.equal(skipWithout(fake(false), 'the fake suite', { env: { CI }, notify: (n) => notices.push(n) }), false);
      assert.deepEqual(notices, []);
    }
  });

  test('the packages: probes follow their path; the install commands are the documented ones', async () => {
    const chromium = chromiumPackage(join(NOWHERE, 'chromium'));
    assert.equal(chromium.present(), false);
    assert.equal(chromium.install, CHROMIUM_INSTALL);
    const postgres = postgresServerPackage(NOWHERE);
    assert.equal(postgres.present(), false);
    assert.equal(postgres.install, POSTGRES_INSTALL);
    // What the PostgreSQL suites then hit with CI set: the message they always gave.
    await assert.rejects(startPostgres({ root: NOWHERE }), { message: `PostgreSQL ≥ 15 server binaries not found under ${NOWHERE} (apt-get install postgresql-15)` });
  });

  test('network namespaces: a capability, so the skip says why they are unusable (probed once); nftables', () => {
    let probes = 0;
    const netns = netnsPackage(() => (probes++, 'network namespaces need root (this process is not uid 0)'));
    const notices: string[] = [];
    const skip = skipWithout(netns, 'the files fault suite', { env: {}, notify: (n) => notices.push(n) });
    assert.equal(
      skip,
      'SKIPPED: network namespaces (root and iproute2) are not usable here: network namespaces need root (this process is not uid 0); ' +
        'install it with `apt-get install -y iproute2 (and run the tests as root)` (with CI set this fails instead)',
    );
    assert.match(notices[0]!, /!!! network namespaces \(root and iproute2\) are not usable here: .*: SKIPPING the files fault suite\./);
    assert.equal(probes, 1);
    assert.equal(skipWithout(netnsPackage(() => undefined), 'the files fault suite', { env: {}, notify: () => assert.fail('no notice') }), false);
    const nft = nftablesPackage(() => false);
    assert.equal(nft.install, 'apt-get install -y nftables');
    assert.match(skipWithout(nft, 'the one-way cut', { env: {}, notify: () => {} }) as string, /^SKIPPED: nftables \(nft\) is not installed; install it with `apt-get install -y nftables`/);
    assert.equal(skipWithout(nft, 'the one-way cut', { env: { CI: '1' }, notify: () => {} }), false);
  });
});

/** A test file shaped like the real suites, with both packages pointed at nothing. */
const fixture = (support: string) => `
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { before, describe, it } from 'node:test';
import { startPostgres } from '${support}/postgres.js';
import { chromiumPackage, postgresServerPackage, skipWithout } from '${support}/system-packages.js';

const CHROMIUM = ${JSON.stringify(join(NOWHERE, 'chromium'))};
describe('browser suite', { skip: skipWithout(chromiumPackage(CHROMIUM), 'the browser suite') }, () => {
  before(() => {
    assert.ok(existsSync(CHROMIUM), \`Chromium is not installed at \${CHROMIUM}: run '${CHROMIUM_INSTALL}' (.ci/run does this on CI)\`);
  });
  it('uses the browser', () => {});
});
for (const half of ['first', 'second']) {
  describe(\`PostgreSQL suite, \${half}\`, { skip: skipWithout(postgresServerPackage(${JSON.stringify(NOWHERE)}), 'the PostgreSQL suites') }, () => {
    before(async () => {
      await startPostgres({ root: ${JSON.stringify(NOWHERE)} });
    });
    it('uses the database', () => {});
  });
}
`;

describe('a test file using the helper, in a child node --test', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'system-packages-'));
    file = join(dir, 'needs-packages.test.mjs');
    writeFileSync(file, fixture(pathToFileURL(join(repositoryRoot(), 'dist', 'test', 'support')).href));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const runChild = (ci: string | undefined) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const env = { ...process.env };
      // The parent runner's protocol marker would make the child report in it instead of TAP.
      delete env.NODE_TEST_CONTEXT;
      delete env.CI;
      if (ci !== undefined) env.CI = ci;
      const polyfill = join(repositoryRoot(), 'dist', 'src', 'polyfill.js');
      execFile(process.execPath, ['--import', pathToFileURL(polyfill).href, '--test', '--test-reporter=tap', file], { env, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
      });
    });
  const count = (text: string, part: string) => text.split(part).length - 1;

  test('without CI: it passes, each suite skipped with the install command, one notice per package', async () => {
    const { code, stdout, stderr } = await runChild(undefined);
    const output = stdout + stderr;
    assert.equal(code, 0, output);
    assert.match(stdout, /ok 1 - browser suite # SKIP SKIPPED: Chromium \(.*\) is not installed; install it with `apt-get install -y --no-install-recommends chromium`/);
    assert.match(stdout, /ok 2 - PostgreSQL suite, first # SKIP SKIPPED: the PostgreSQL ≥ 15 server .* install it with `apt-get install -y postgresql`/);
    assert.match(stdout, /ok 3 - PostgreSQL suite, second # SKIP/);
    assert.equal(count(output, `Install it (as root) with:  ${CHROMIUM_INSTALL}`), 1, output);
    assert.equal(count(output, `Install it (as root) with:  ${POSTGRES_INSTALL}`), 1, output);
    assert.match(output, /is not installed: SKIPPING the browser suite/);
    assert.doesNotMatch(output, /^not ok/m);
  });

  test('with CI=1: the suites run and fail with their own messages; no skip, no notice', async () => {
    const { code, stdout, stderr } = await runChild('1');
    const output = stdout + stderr;
    assert.equal(code, 1, output);
    assert.doesNotMatch(output, /# SKIP|SKIPPING/);
    assert.match(output, /Chromium is not installed at .*: run 'apt-get install -y --no-install-recommends chromium'/);
    assert.match(output, /PostgreSQL ≥ 15 server binaries not found under .* \(apt-get install postgresql-15\)/);
    // A failing `before` fails its suite; node 20 counts the suite's tests as cancelled.
    for (const suite of ['browser suite', 'PostgreSQL suite, first', 'PostgreSQL suite, second']) assert.match(stdout, new RegExp(`^not ok \\d+ - ${suite}$`, 'm'));
    assert.match(stdout, /^# pass 0$/m);
    assert.match(stdout, /^# skipped 0$/m);
  });
});
