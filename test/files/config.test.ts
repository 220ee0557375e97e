import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair } from '@libp2p/crypto/keys';
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id';
import { base32 } from 'multiformats/bases/base32';
import { parseFilesConfig, storeDirectory, type FilesConfig } from '../../src/files/config.js';
import { FILES_DEFAULT_CONFIG } from '../../src/files/config-defaults.js';
import { resolveFilesConfigPath } from '../../src/files/config-file.js';
import { peerIdOfNodeMultiaddr } from '../../src/files/config-peers.js';
import { FILES_VERSION } from '../../src/files/version.js';
import { CronSchedule, requireCron } from '../../src/cron.js';

/** A schedule as the configuration holds it: parsed once (src/cron.ts), equal to another parse of the same text. */
const cron = (expression: string) => requireCron('expected', expression);

/** The node identity of the original-store fixture (test/fixtures/original-ipfs-node-store). */
const FIXTURE_PEER = '12D3KooWDWSFJsqYGGNUuKzqBbJfiGiB8qkEPtu4MUYG1nUQwtUC';
const KEY = 'f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f'; // 64 hex, like `openssl rand -hex 32`

let peers: string[] = [];
before(async () => {
  peers = [FIXTURE_PEER];
  for (let index = 0; index < 3; index++) peers.push(peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString());
});

const addr = (index: number, peer = peers[index]!): string => `/ip4/127.0.0.${index + 1}/tcp/${4001 + index}/p2p/${peer}`;
const threeNodes = (): { name: string; multiAddr: string }[] => [0, 1, 2].map((index) => ({ name: `node-${index}`, multiAddr: addr(index) }));

/** The smallest valid file: only the required keys. */
const MINIMAL = { uploadLimitSizeBytes: 268_435_456, maxFileCount: 10, findFileTimeout: 20_000, cors: { allowedOrigins: ['https://app.example.org'] } };

function ok(raw: unknown): { config: FilesConfig; warnings: readonly string[] } {
  const result = parseFilesConfig(raw);
  assert.ok(result.ok, `expected a valid config, got: ${JSON.stringify(!result.ok && result.problems)}`);
  return result;
}

function problems(raw: unknown): readonly string[] {
  const result = parseFilesConfig(raw);
  assert.ok(!result.ok, 'expected problems');
  return result.problems;
}

/** Exactly one problem, and it is this one. */
function only(raw: unknown, expected: string | RegExp): void {
  const found = problems(raw);
  assert.equal(found.length, 1, `expected one problem, got ${JSON.stringify(found)}`);
  if (typeof expected === 'string') assert.equal(found[0], expected);
  else assert.match(found[0]!, expected);
}

test('FILES_VERSION is the package version', () => {
  let dir = dirname(fileURLToPath(import.meta.url));
  let version: string | undefined;
  while (version === undefined && dirname(dir) !== dir) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; version: string };
      if (pkg.name === 'adm-infra') version = pkg.version;
    } catch {
      // keep walking up
    }
    dir = dirname(dir);
  }
  assert.equal(FILES_VERSION, version);
});

test('defaults are filled for a minimal file (notes C-table)', () => {
  const { config, warnings } = ok(MINIMAL);
  assert.deepEqual(warnings, []);
  assert.deepEqual(config, {
    nodes: [],
    storeFolder: '.adm-ipfs',
    logLevel: 'info',
    prettyLogs: false,
    peerDiscovery: { bootstrap: [], listen: ['/ip4/0.0.0.0/tcp/4001'] },
    serverPort: 4000,
    peeringSchedule: cron('*/30 * * * * *'),
    diskUsageScanPeriod: cron('*/30 * * * * *'),
    uploadLimitSizeBytes: 268_435_456,
    maxFileCount: 10,
    findFileTimeout: 20_000,
    downloadIdleTimeout: 20_000,
    downloadMinBytesPerSecond: 32_768,
    // max(4 h, ceil(256 MiB / 32 KiB) s + idle) = max(14 400 000, 8 212 000)
    downloadMaxDurationMs: 14_400_000,
    // Upload body deadlines (additive keys): 30 s idle, 300 s whole request, at least 1 KiB per 20 s.
    uploadIdleTimeout: 30_000,
    uploadMaxDurationMs: 300_000,
    uploadMinBytes: 1024,
    uploadMinBytesWindowMs: 20_000,
    cors: { allowedOrigins: ['https://app.example.org'] },
    trustProxy: [],
    adminApiKey: '',
    enableDebugApi: false,
    rateLimits: {
      upload: { windowMs: 900_000, limit: 10 },
      pin: { windowMs: 900_000, limit: 10 },
      read: { windowMs: 60_000, limit: 100 },
    },
    storage: {
      maxRequestSizeBytes: 536_870_912,
      maxConcurrentUploads: 32,
      maxConcurrentDownloads: 64,
      maxConcurrentDownloadsPerClient: 8,
      maxConcurrentIncomingCopies: 8,
      diskReserveBytes: 5_368_709_120,
      confirmationRequired: false,
      temporaryTtlMs: 86_400_000,
      gc: { enabled: true, schedule: cron('0 */15 * * * *'), highWatermarkBytes: 53_687_091_200, lowWatermarkBytes: 42_949_672_960 },
    },
    replication: {
      enabled: true,
      placement: [
        { minAgeMs: 0, copies: 4 },
        { minAgeMs: 15_552_000_000, copies: 3 },
        { minAgeMs: 31_536_000_000, copies: 2 },
      ],
      ackQuorum: 1,
      requireQuorumOnUpload: false,
      requestTimeoutMs: 30_000,
      repairEnabled: true,
      repairSchedule: cron('0 */30 * * * *'),
      repairBatchDelayMs: 1_000,
      repairProbeConcurrency: 4,
      repairRecheckMs: 86_400_000,
    },
    health: {
      checkpointIntervalMs: 60_000,
      maxCheckpointAgeMs: 180_000,
      storageMaxAgeMs: 120_000,
      repairMaxAgeMs: 3_600_000,
      clockSkewToleranceMs: 10_000,
      peerAttestationTimeoutMs: 5_000,
      requiredPeerCount: 0,
    },
  });
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.storage.gc) && Object.isFrozen(config.replication.placement[0]));
});

test('derived defaults follow the values they derive from', () => {
  const { config } = ok({
    ...MINIMAL,
    nodes: threeNodes(),
    uploadLimitSizeBytes: 1_073_741_824,
    findFileTimeout: 5_000,
    storage: { maxRequestSizeBytes: 2_147_483_648, maxConcurrentUploads: 2 },
    health: { checkpointIntervalMs: 1_000 },
  });
  assert.equal(config.downloadIdleTimeout, 5_000);
  // ceil(1 GiB / 32 KiB) = 32 768 s → 32 768 000 ms + 5 000 idle, above the 4 h floor.
  assert.equal(config.downloadMaxDurationMs, 32_773_000);
  assert.equal(config.storage.maxConcurrentIncomingCopies, 1);
  assert.deepEqual(config.health, {
    checkpointIntervalMs: 1_000,
    maxCheckpointAgeMs: 3_000,
    storageMaxAgeMs: 2_000,
    repairMaxAgeMs: 3_600_000,
    clockSkewToleranceMs: 10_000,
    peerAttestationTimeoutMs: 5_000,
    requiredPeerCount: 1, // more than one node configured
  });
  // A checkpoint interval above an hour lifts the repair age default with it.
  assert.equal(ok({ ...MINIMAL, health: { checkpointIntervalMs: 7_200_000 } }).config.health.repairMaxAgeMs, 7_200_000);
});

test('nodes resolve to canonical peer ids from the last /p2p/ component', () => {
  const relay = `/ip4/10.0.0.1/tcp/4001/p2p/${peers[1]}/p2p-circuit/p2p/${peers[2]}`;
  const { config } = ok({ ...MINIMAL, nodes: [...threeNodes().slice(0, 2), { name: 'relayed', multiAddr: relay }] });
  assert.deepEqual(
    config.nodes.map((node) => node.peerId),
    [peers[0], peers[1], peers[2]],
  );
  assert.equal(config.nodes[2]!.multiAddr, relay);
  assert.equal(config.nodes[0]!.name, 'node-0');
  // The dns form and the CIDv1 (base32) spelling of a peer id are accepted too.
  const cidForm = peerIdFromString(peers[3]!).toCID().toString(base32);
  assert.deepEqual(peerIdOfNodeMultiaddr(`/dns4/node.example.org/tcp/4001/p2p/${cidForm}`), { peerId: peers[3] });
});

test('the embedded default is valid, standalone, loopback-only for libp2p and fails closed for admin routes', () => {
  const { config, warnings } = ok(FILES_DEFAULT_CONFIG);
  assert.deepEqual(warnings, []);
  assert.deepEqual(config.nodes, []);
  assert.deepEqual(config.peerDiscovery, { bootstrap: [], listen: ['/ip4/127.0.0.1/tcp/0'] });
  assert.equal(config.serverPort, 4000);
  assert.equal(config.adminApiKey, '');
  assert.equal(config.enableDebugApi, false);
  assert.equal(config.health.requiredPeerCount, 0);
  assert.deepEqual(config.cors.allowedOrigins, ['*']);
  assert.ok(Object.isFrozen(FILES_DEFAULT_CONFIG));
});

// ---------------------------------------------------------------------------------------------
// Spec §8 rejections (acceptance check E56), one at a time

test('rejects a placeholder admin key, in any case or padding', () => {
  const message = 'adminApiKey: is a documentation placeholder, not a secret; generate one with `openssl rand -hex 32` (or leave it empty)';
  for (const key of ['change-me-use-openssl-rand-hex-32', 'replace-with-output-of-openssl-rand-hex-32', 'your-generated-key-here', '  CHANGE-ME-use-openssl-rand-hex-32 ']) {
    only({ ...MINIMAL, adminApiKey: key }, message);
  }
});

test('rejects a 31-character admin key and never echoes a key', () => {
  const short = KEY.slice(0, 31);
  only({ ...MINIMAL, adminApiKey: short }, 'adminApiKey: must be an empty value or a unique secret of at least 32 characters');
  const lines = [
    ...problems({ ...MINIMAL, adminApiKey: short }),
    ...problems({ ...MINIMAL, adminApiKey: `${'a'.repeat(40)}` }),
    ...problems({ ...MINIMAL, adminApiKey: ` ${KEY} ` }),
  ];
  assert.equal(lines.length, 3);
  assert.match(lines[1]!, /^adminApiKey: is not a unique secret/);
  assert.match(lines[2]!, /^adminApiKey: must not start or end with whitespace/);
  for (const line of lines) assert.ok(!line.includes(short) && !line.includes('aaaa'), line);
  assert.equal(ok({ ...MINIMAL, adminApiKey: KEY }).config.adminApiKey, KEY);
  assert.equal(ok({ ...MINIMAL, adminApiKey: KEY.slice(0, 32) }).config.adminApiKey, KEY.slice(0, 32));
  assert.equal(ok({ ...MINIMAL, adminApiKey: '' }).config.adminApiKey, '');
});

test('rejects a GC low watermark that is not below the high one', () => {
  only(
    { ...MINIMAL, storage: { gc: { lowWatermarkBytes: 1_000, highWatermarkBytes: 1_000 } } },
    'storage.gc.lowWatermarkBytes: must be lower than storage.gc.highWatermarkBytes (low 1000, high 1000)',
  );
  only(
    { ...MINIMAL, storage: { gc: { highWatermarkBytes: 10_737_418_240 } } },
    'storage.gc.lowWatermarkBytes: must be lower than storage.gc.highWatermarkBytes (low 42949672960, the default, high 10737418240)',
  );
  assert.equal(ok({ ...MINIMAL, storage: { gc: { lowWatermarkBytes: 999, highWatermarkBytes: 1_000 } } }).config.storage.gc.lowWatermarkBytes, 999);
});

test('rejects a required peer count above nodes minus one', () => {
  only({ ...MINIMAL, health: { requiredPeerCount: 1 } }, 'health.requiredPeerCount: must not exceed the number of configured remote peers, nodes minus one (0: no nodes are configured)');
  only(
    { ...MINIMAL, nodes: threeNodes().slice(0, 1), health: { requiredPeerCount: 1 } },
    'health.requiredPeerCount: must not exceed the number of configured remote peers, nodes minus one (0)',
  );
  only(
    { ...MINIMAL, nodes: threeNodes(), health: { requiredPeerCount: 3 } },
    'health.requiredPeerCount: must not exceed the number of configured remote peers, nodes minus one (2)',
  );
  assert.equal(ok({ ...MINIMAL, nodes: threeNodes(), health: { requiredPeerCount: 2 } }).config.health.requiredPeerCount, 2);
  assert.equal(ok({ ...MINIMAL, nodes: threeNodes(), health: { requiredPeerCount: 0 } }).config.health.requiredPeerCount, 0);
});

test('rejects a node multiaddr without a trailing /p2p/<peer id>', () => {
  const nodes = threeNodes();
  nodes[1] = { name: 'node-1', multiAddr: '/ip4/127.0.0.2/tcp/4002' };
  only({ ...MINIMAL, nodes }, /^nodes\[1\]\.multiAddr: must be a full multiaddr ending in \/p2p\/<peer id>/);
  only({ ...MINIMAL, nodes: [{ name: 'a', multiAddr: `/ip4/1.2.3.4/tcp/1/p2p/${peers[0]}/p2p-circuit` }] }, /^nodes\[0\]\.multiAddr: must be a full multiaddr ending in/);
  only({ ...MINIMAL, nodes: [{ name: 'a', multiAddr: `/p2p/${peers[0]}` }] }, /^nodes\[0\]\.multiAddr: must be a full multiaddr: a dialable address before/);
  only({ ...MINIMAL, nodes: [{ name: 'a', multiAddr: '/ip4/1.2.3.4/tcp/1/p2p/12D3KooWnotapeer' }] }, 'nodes[0].multiAddr: ends in /p2p/ with a value that is not a valid peer id');
  only({ ...MINIMAL, nodes: [{ name: 'a', multiAddr: 'ip4/1.2.3.4' }] }, /^nodes\[0\]\.multiAddr: is not a valid multiaddr \(/);
  only({ ...MINIMAL, nodes: [{ name: 'a', multiAddr: `/ip4/1.2.3.4/tcp/99999/p2p/${peers[0]}` }] }, /^nodes\[0\]\.multiAddr: is not a valid multiaddr \(/);
  only({ ...MINIMAL, nodes: [{ name: 'a' }] }, 'nodes[0].multiAddr: required (a full multiaddr ending in /p2p/<peer id>)');
  only({ ...MINIMAL, nodes: [{ multiAddr: addr(0) }] }, 'nodes[0].name: required (a non-empty label used in logs)');
});

test('rejects two node entries that resolve to the same peer id', () => {
  // Two names, two addresses, one peer id.
  const nodes = [
    { name: 'alpha', multiAddr: addr(0) },
    { name: 'beta', multiAddr: addr(1) },
    { name: 'gamma', multiAddr: addr(2, peers[0]) },
  ];
  only({ ...MINIMAL, nodes }, 'nodes[2].multiAddr: resolves to the same peer id as nodes[0].multiAddr; each node may be listed once');
  // The same id spelled as a CIDv1 is still the same peer.
  const cidForm = peerIdFromString(peers[1]!).toCID().toString(base32);
  only(
    { ...MINIMAL, nodes: [{ name: 'a', multiAddr: addr(1) }, { name: 'b', multiAddr: `/dns4/b.example.org/tcp/4001/p2p/${cidForm}` }] },
    'nodes[1].multiAddr: resolves to the same peer id as nodes[0].multiAddr; each node may be listed once',
  );
});

test('rejects an empty allowed-origins list', () => {
  only({ ...MINIMAL, cors: { allowedOrigins: [] } }, 'cors.allowedOrigins: must be a non-empty array of origins');
  only({ ...MINIMAL, cors: { allowedOrigins: 'https://app.example.org' } }, 'cors.allowedOrigins: must be a non-empty array of origins');
});

test('rejects trustProxy: true', () => {
  only({ ...MINIMAL, trustProxy: true }, 'trustProxy: true is rejected: it would trust every forwarded address; list the exact proxy addresses or CIDR ranges');
});

test('rejects a trustProxy range that covers every IPv4 address through its IPv6-mapped form', () => {
  const result = parseFilesConfig({ ...MINIMAL, trustProxy: ['::ffff:0:0/96'] });
  assert.equal(result.ok, false);
  assert.match((result as { problems: readonly string[] }).problems.join('\n'), /^trustProxy\[0\]: '::ffff:0:0\/96' covers every address/m);
});

test('unknown keys are ignored at every level', () => {
  const { config, warnings } = ok({
    ...MINIMAL,
    someFutureKey: { anything: [1, 2, 3] },
    nodes: [{ ...threeNodes()[0]!, region: 'eu' }],
    peerDiscovery: { listen: ['/ip4/0.0.0.0/tcp/4001'], mdns: true },
    storage: { gc: { enabled: false, turbo: true }, tier: 'ssd' },
    replication: { strategy: 'random' },
    health: { verbose: true },
    rateLimits: { upload: { windowMs: 1_000, limit: 2, burst: 5 }, search: { limit: 1 } },
  });
  assert.deepEqual(warnings, []);
  assert.equal(config.storage.gc.enabled, false);
  assert.deepEqual(config.rateLimits.upload, { windowMs: 1_000, limit: 2 });
  assert.equal((config as unknown as Record<string, unknown>).someFutureKey, undefined, 'unknown keys are not carried into the config');
  assert.equal((config.nodes[0] as unknown as Record<string, unknown>).region, undefined);
});

test('legacy keys of the original format are accepted with a warning', () => {
  const { config, warnings } = ok({
    ...MINIMAL,
    autoPeeringPeriod: '*/10 * * * * *',
    cors: { origin: '*', credentials: true, allowedOrigins: ['*'] },
  });
  assert.equal(config.peeringSchedule.source, '*/30 * * * * *');
  assert.deepEqual(warnings, [
    "autoPeeringPeriod: ignored (legacy key); peeringSchedule (default '*/30 * * * * *') redials the configured nodes",
    'cors.origin: ignored (legacy key); cors.allowedOrigins lists the accepted origins',
    'cors.credentials: ignored (legacy key); cors.allowedOrigins lists the accepted origins',
  ]);
  // A file carrying only the old CORS keys must say what replaced them.
  only(
    { ...MINIMAL, cors: { origin: '*' } },
    "cors.allowedOrigins: required: a non-empty array of browser origins, e.g. ['https://app.example.org', 'https://*.example.org'], or ['*'] for every origin",
  );
});

test('every problem is reported at once, one line each, naming the field', () => {
  const nodes = [
    { name: 'a', multiAddr: addr(0) },
    { name: 'b', multiAddr: '/ip4/127.0.0.2/tcp/4002' },
    { name: 'c', multiAddr: addr(2, peers[0]) },
  ];
  const found = problems({
    nodes,
    adminApiKey: 'your-generated-key-here',
    storage: { gc: { lowWatermarkBytes: 5, highWatermarkBytes: 5 } },
    health: { requiredPeerCount: 3, checkpointIntervalMs: 10 },
    cors: { allowedOrigins: [] },
    trustProxy: true,
    maxFileCount: 0,
    logLevel: 'verbose',
    serverPort: 'http',
    peeringSchedule: 'every minute',
  });
  const fields = found.map((line) => line.slice(0, line.indexOf(':')));
  assert.deepEqual([...fields].sort(), [
    'adminApiKey',
    'cors.allowedOrigins',
    'findFileTimeout',
    'health.checkpointIntervalMs',
    'health.requiredPeerCount',
    'logLevel',
    'maxFileCount',
    'nodes[1].multiAddr',
    'nodes[2].multiAddr',
    'peeringSchedule',
    'serverPort',
    'storage.gc.lowWatermarkBytes',
    'trustProxy',
    'uploadLimitSizeBytes',
  ]);
  assert.ok(found.includes('maxFileCount: must be >= 1'));
  assert.ok(found.includes('health.checkpointIntervalMs: must be >= 1000'));
  assert.ok(found.includes('logLevel: must be one of fatal, error, warn, info, debug, trace, silent'));
  assert.ok(found.includes('serverPort: must be integer'));
  assert.ok(found.includes('peeringSchedule: invalid cron expression: Unknown alias: eve'));
  assert.equal(new Set(found).size, found.length, 'no duplicates');
});

test('a file that is not an object is refused', () => {
  assert.deepEqual(problems(null), ['(root): must be object']);
  assert.deepEqual(problems([]), ['(root): must be object']);
  assert.deepEqual(problems('config'), ['(root): must be object']);
});

// ---------------------------------------------------------------------------------------------
// Access settings

test('trustProxy takes false, addresses and CIDR ranges, normalized to a list', () => {
  assert.deepEqual(ok({ ...MINIMAL, trustProxy: false }).config.trustProxy, []);
  assert.deepEqual(ok({ ...MINIMAL, trustProxy: '10.0.0.1' }).config.trustProxy, ['10.0.0.1']);
  assert.deepEqual(ok({ ...MINIMAL, trustProxy: '10.0.0.0/8' }).config.trustProxy, ['10.0.0.0/8']);
  assert.deepEqual(ok({ ...MINIMAL, trustProxy: ['::1', '192.168.0.0/16', 'fd00::/8'] }).config.trustProxy, ['::1', '192.168.0.0/16', 'fd00::/8']);
  only({ ...MINIMAL, trustProxy: '*' }, "trustProxy: '*' would trust every forwarded address; list the exact proxy addresses");
  only({ ...MINIMAL, trustProxy: '0.0.0.0/0' }, /^trustProxy: '0\.0\.0\.0\/0' covers every address/);
  only({ ...MINIMAL, trustProxy: ['10.0.0.1', '::/0'] }, /^trustProxy\[1\]: '::\/0' covers every address/);
  only({ ...MINIMAL, trustProxy: 'loopback' }, /^trustProxy: must be an IP address or CIDR range/);
  only({ ...MINIMAL, trustProxy: '10.0.0.1,10.0.0.2' }, /^trustProxy: one address or range per entry/);
  only({ ...MINIMAL, trustProxy: ' 10.0.0.1' }, 'trustProxy: must not have surrounding whitespace');
  only({ ...MINIMAL, trustProxy: '10.0.0.0/33' }, 'trustProxy: has an invalid prefix length (0-32)');
  only({ ...MINIMAL, trustProxy: 1 }, /^trustProxy: a hop count is not accepted/);
  only({ ...MINIMAL, trustProxy: [] }, 'trustProxy: must be false, a proxy address or CIDR range, or a non-empty array of them');
});

test('allowed origins: exact origins, subdomain wildcards, or * alone', () => {
  const origins = ['https://app.example.org', 'http://localhost:8080', 'https://*.example.org', 'https://*.example.org:8443'];
  assert.deepEqual(ok({ ...MINIMAL, cors: { allowedOrigins: origins } }).config.cors.allowedOrigins, origins);
  assert.deepEqual(ok({ ...MINIMAL, cors: { allowedOrigins: ['*'] } }).config.cors.allowedOrigins, ['*']);
  only({ ...MINIMAL, cors: { allowedOrigins: ['https://app.example.org/'] } }, /^cors\.allowedOrigins\[0\]: .*write it as 'https:\/\/app\.example\.org'/);
  only({ ...MINIMAL, cors: { allowedOrigins: ['https://app.example.org/path'] } }, /^cors\.allowedOrigins\[0\]: must be an exact origin/);
  only({ ...MINIMAL, cors: { allowedOrigins: ['ftp://files.example.org'] } }, /^cors\.allowedOrigins\[0\]: must be an exact origin .*\(http or https\)$/);
  only({ ...MINIMAL, cors: { allowedOrigins: ['*.example.org'] } }, /^cors\.allowedOrigins\[0\]: must be an exact origin/);
  only({ ...MINIMAL, cors: { allowedOrigins: ['https://*.org'] } }, /^cors\.allowedOrigins\[0\]: '\*\.org' needs a registrable suffix/);
  only({ ...MINIMAL, cors: { allowedOrigins: ['https://a.example.org', '*'] } }, "cors.allowedOrigins[1]: '*' (every origin) must be the only entry");
  only({ ...MINIMAL, cors: { allowedOrigins: ['https://a.example.org', 7] } }, 'cors.allowedOrigins[1]: must be a non-empty string');
});

// ---------------------------------------------------------------------------------------------
// Upstream extras (notes A.10)

test('upstream cross-field rules', () => {
  only({ ...MINIMAL, storage: { maxRequestSizeBytes: 1_000 } }, /^storage\.maxRequestSizeBytes: must be at least uploadLimitSizeBytes \(268435456\)/);
  only({ ...MINIMAL, storage: { maxConcurrentDownloadsPerClient: 65 } }, 'storage.maxConcurrentDownloadsPerClient: must not exceed storage.maxConcurrentDownloads (64, the default)');
  only({ ...MINIMAL, downloadIdleTimeout: 30_000, downloadMaxDurationMs: 20_000 }, 'downloadMaxDurationMs: must be at least downloadIdleTimeout (30000)');
  only({ ...MINIMAL, downloadMaxDurationMs: 8_000_000 }, /^downloadMaxDurationMs: must be at least 8212000 \(ceil\(uploadLimitSizeBytes \/ downloadMinBytesPerSecond\)/);
  assert.equal(ok({ ...MINIMAL, downloadMaxDurationMs: 8_212_000 }).config.downloadMaxDurationMs, 8_212_000);

  only({ ...MINIMAL, replication: { placement: [{ minAgeMs: 10, copies: 2 }] } }, 'replication.placement[0].minAgeMs: must be 0, so every file matches a tier');
  only(
    { ...MINIMAL, replication: { placement: [{ minAgeMs: 0, copies: 3 }, { minAgeMs: 0, copies: 2 }] } },
    'replication.placement[1].minAgeMs: must be greater than replication.placement[0].minAgeMs (0)',
  );
  only(
    { ...MINIMAL, replication: { placement: [{ minAgeMs: 0, copies: 2 }, { minAgeMs: 5, copies: 3 }] } },
    'replication.placement[1].copies: must not exceed replication.placement[0].copies (2): copies shrink as a file ages',
  );
  only({ ...MINIMAL, replication: { placement: [] } }, 'replication.placement: must not have fewer than 1 items');
  only({ ...MINIMAL, replication: { ackQuorum: 5 } }, 'replication.ackQuorum: must not exceed the copies of the fresh tier, replication.placement[0].copies (4, the default)');
  only({ ...MINIMAL, replication: { requireQuorumOnUpload: true } }, /^replication\.requireQuorumOnUpload: needs replication\.ackQuorum of at least 2/);
  only(
    { ...MINIMAL, storage: { confirmationRequired: true }, replication: { requireQuorumOnUpload: true, ackQuorum: 2 } },
    /^replication\.requireQuorumOnUpload: cannot be true together with storage\.confirmationRequired/,
  );
  const strict = ok({ ...MINIMAL, replication: { requireQuorumOnUpload: true, ackQuorum: 2, placement: [{ minAgeMs: 0, copies: 3 }] } }).config;
  assert.deepEqual(strict.replication.placement, [{ minAgeMs: 0, copies: 3 }]);

  only({ ...MINIMAL, health: { checkpointIntervalMs: 999 } }, 'health.checkpointIntervalMs: must be >= 1000');
  only({ ...MINIMAL, health: { maxCheckpointAgeMs: 999 } }, 'health.maxCheckpointAgeMs: must be >= 1000');
  only({ ...MINIMAL, health: { checkpointIntervalMs: 10_000, storageMaxAgeMs: 5_000 } }, 'health.storageMaxAgeMs: must be at least health.checkpointIntervalMs (10000)');
  only({ ...MINIMAL, health: { repairMaxAgeMs: 30_000 } }, 'health.repairMaxAgeMs: must be at least health.checkpointIntervalMs (60000, the default)');
  only({ ...MINIMAL, health: { maxCheckpointAgeMs: 30_000 } }, 'health.maxCheckpointAgeMs: must be at least health.checkpointIntervalMs (60000, the default)');
});

test('simple value rules', () => {
  only({ ...MINIMAL, maxFileCount: 101 }, 'maxFileCount: must be <= 100');
  only({ ...MINIMAL, uploadLimitSizeBytes: 0 }, 'uploadLimitSizeBytes: must be >= 1');
  only({ ...MINIMAL, logLevel: 'log' }, 'logLevel: must be one of fatal, error, warn, info, debug, trace, silent');
  only({ ...MINIMAL, peerDiscovery: { listen: [] } }, 'peerDiscovery.listen: must not have fewer than 1 items');
  only({ ...MINIMAL, peerDiscovery: { bootstrap: ['not-a-multiaddr'] } }, /^peerDiscovery\.bootstrap\[0\]: is not a valid multiaddr/);
  only({ ...MINIMAL, storeFolder: '/var/lib/ipfs' }, /^storeFolder: must be a folder relative to the home directory/);
  only({ ...MINIMAL, storage: { maxConcurrentUploads: 0 } }, 'storage.maxConcurrentUploads: must be >= 1');
  only({ ...MINIMAL, rateLimits: { read: { limit: 0 } } }, 'rateLimits.read.limit: must be >= 1');
  for (const [key, path] of [
    ['diskUsageScanPeriod', 'diskUsageScanPeriod'],
    ['peeringSchedule', 'peeringSchedule'],
  ] as const) {
    only({ ...MINIMAL, [key]: '* * * * * 9' }, `${path}: invalid cron expression: Field value (9) is out of range`);
  }
  only({ ...MINIMAL, storage: { gc: { schedule: '0 0 0 30 2 *' } } }, 'storage.gc.schedule: invalid cron expression: it never fires (no run time within 8 years)');
  only({ ...MINIMAL, replication: { repairSchedule: '*/0 * * * *' } }, "replication.repairSchedule: invalid cron expression: Field (minute) has a step of zero");
  const { config } = ok({ ...MINIMAL, logLevel: 'silent', diskUsageScanPeriod: '*/5 * * * *', storage: { gc: { schedule: '@hourly' } } });
  assert.equal(config.logLevel, 'silent');
  assert.equal(config.diskUsageScanPeriod.source, '*/5 * * * *');
  assert.equal(config.storage.gc.schedule.source, '@hourly');
  assert.ok(config.storage.gc.schedule instanceof CronSchedule, 'parsed once here: the actors get a schedule, not text');
});

test('upload deadlines: additive keys, read when given, bounded', () => {
  const { config } = ok({ ...MINIMAL, uploadIdleTimeout: 5_000, uploadMaxDurationMs: 3_600_000, uploadMinBytes: 0, uploadMinBytesWindowMs: 60_000 });
  assert.equal(config.uploadIdleTimeout, 5_000);
  assert.equal(config.uploadMaxDurationMs, 3_600_000);
  assert.equal(config.uploadMinBytes, 0, '0 turns the floor off');
  assert.equal(config.uploadMinBytesWindowMs, 60_000);
  only({ ...MINIMAL, uploadIdleTimeout: 500 }, 'uploadIdleTimeout: must be >= 1000');
  only({ ...MINIMAL, uploadMaxDurationMs: 999 }, 'uploadMaxDurationMs: must be >= 1000');
  only({ ...MINIMAL, uploadMinBytes: -1 }, 'uploadMinBytes: must be >= 0');
  only({ ...MINIMAL, uploadMinBytesWindowMs: 0 }, 'uploadMinBytesWindowMs: must be >= 1000');
});

test("repair's recheck window: an additive key, 0 asks every copy on every cycle, negative refused", () => {
  assert.equal(ok({ ...MINIMAL, replication: { repairRecheckMs: 0 } }).config.replication.repairRecheckMs, 0);
  assert.equal(ok({ ...MINIMAL, replication: { repairRecheckMs: 3_600_000 } }).config.replication.repairRecheckMs, 3_600_000);
  only({ ...MINIMAL, replication: { repairRecheckMs: -1 } }, 'replication.repairRecheckMs: must be >= 0');
  only({ ...MINIMAL, replication: { repairRecheckMs: 1.5 } }, 'replication.repairRecheckMs: must be integer');
});

test('warnings for settings that do nothing', () => {
  const { warnings } = ok({ ...MINIMAL, enableDebugApi: true, nodes: [{ name: 'x', multiAddr: addr(0) }, { name: 'x', multiAddr: addr(1) }] });
  assert.deepEqual(warnings, [
    'nodes[1].name: same name as nodes[0]; logs will not tell them apart',
    'enableDebugApi: the debug routes still need adminApiKey, which is empty: they will answer 503',
  ]);
});

// ---------------------------------------------------------------------------------------------
// File location

test('config path: --config, else IPFS_NODE_CONFIG (name or path), else config.json5', () => {
  const cwd = '/srv/node';
  assert.equal(resolveFilesConfigPath(undefined, {}, cwd), '/srv/node/config.json5');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: '' }, cwd), '/srv/node/config.json5');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: '  ' }, cwd), '/srv/node/config.json5');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: 'test1' }, cwd), '/srv/node/config.test1.json5');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: 'eu.prod' }, cwd), '/srv/node/config.eu.prod.json5');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: 'node-a.json5' }, cwd), '/srv/node/node-a.json5');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: './conf/a' }, cwd), '/srv/node/conf/a');
  assert.equal(resolveFilesConfigPath(undefined, { IPFS_NODE_CONFIG: '/etc/adm/files.json5' }, cwd), '/etc/adm/files.json5');
  assert.equal(resolveFilesConfigPath('my.json5', { IPFS_NODE_CONFIG: 'test1' }, cwd), '/srv/node/my.json5', 'the flag wins');
  assert.equal(resolveFilesConfigPath('/abs/c.json5', {}, cwd), '/abs/c.json5');
  assert.equal(resolveFilesConfigPath('', { IPFS_NODE_CONFIG: 'test1' }, cwd), '/srv/node/config.test1.json5');
  assert.equal(resolveFilesConfigPath(undefined, {}, 'relative'), resolve('relative', 'config.json5'));
});

test('store directory is <home>/<storeFolder>', () => {
  assert.equal(storeDirectory({ storeFolder: '.adm-ipfs' }, '/home/node'), '/home/node/.adm-ipfs');
  assert.equal(storeDirectory(ok({ ...MINIMAL, storeFolder: 'data/ipfs' }).config, '/home/node'), '/home/node/data/ipfs');
});

test('httpEngine picks the listener HTTP engine (additive key); another name is refused', () => {
  assert.equal(ok({ ...MINIMAL, httpEngine: 'node' }).config.httpEngine, 'node');
  assert.equal(ok(MINIMAL).config.httpEngine, undefined);
  only({ ...MINIMAL, httpEngine: 'apache' }, 'httpEngine: must be one of uws, node');
});
