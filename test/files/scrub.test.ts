import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { CID } from 'multiformats/cid';
import { pino } from 'pino';
import { SCRUB_MAX_DEPTH, scrubLogObject, scrubText, scrubValue } from '../../src/files/scrub.js';

const CID_V1_RAW = 'bafkreif7v2d2wdyh6pz5y2pwmrpegfpdgh5u7n5vomxnbofraqhuk2wapm';
const CID_V1_DAG = 'bafybeicj4t7q6xw7h7bzrpdpj7rffwlnqqdlzeyrgtseg2p3zarf33ghna';
const CID_V0 = 'QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N';
const PEER_ED25519 = '12D3KooWDWSFJsqYGGNUuKzqBbJfiGiB8qkEPtu4MUYG1nUQwtUC';
const PEER_SECP = '16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY';
const KEY_BASE36 = 'k51qzi5uqu5dlvj2baxnqndepeb86cbk3ng7n3i46uzyxzyqj2xjonzllnv0v8';
const BLOCK_KEY = 'CIQBED3K6YA5I3QQWLJOCHWXDRK5EXZQILBCKAPEDUJENZ5B5HJ5R3A';

test('content identifiers become <cid>', () => {
  assert.equal(scrubText(`stored ${CID_V1_RAW}`), 'stored <cid>');
  assert.equal(scrubText(`root ${CID_V1_DAG}.`), 'root <cid>.');
  assert.equal(scrubText(`legacy ${CID_V0} pinned`), 'legacy <cid> pinned');
  assert.equal(scrubText(`ipns ${KEY_BASE36}`), 'ipns <cid>');
  assert.equal(scrubText(`/blockstore/3A/${BLOCK_KEY}.data`), '/blockstore/3A/<cid>.data');
  assert.equal(scrubText(`GET /api/file/${CID_V1_RAW}/status`), 'GET /api/file/<cid>/status');
  assert.equal(scrubText(`"${CID_V0}","${CID_V1_RAW}"`), '"<cid>","<cid>"');
  assert.equal(scrubText(`/ipfs/${CID_V1_RAW}`), '/ipfs/<cid>');
});

test('peer ids become <peer-id>; RSA (Qm…) peer ids are CIDv0-shaped and become <cid>', () => {
  assert.equal(scrubText(`dialled ${PEER_ED25519} ok`), 'dialled <peer-id> ok');
  assert.equal(scrubText(`peer=${PEER_SECP}`), 'peer=<peer-id>');
  assert.equal(scrubText(`peer ${CID_V0}`), 'peer <cid>');
});

test('multiaddrs become <multiaddr>, their peer id included', () => {
  assert.equal(scrubText(`listening on /ip4/0.0.0.0/tcp/4001`), 'listening on <multiaddr>');
  assert.equal(scrubText(`dial /ip4/127.0.0.1/tcp/4001/p2p/${PEER_ED25519} failed`), 'dial <multiaddr> failed');
  assert.equal(scrubText(`/ip6/::1/tcp/4001/ws`), '<multiaddr>');
  assert.equal(scrubText(`/dns4/node.example.org/tcp/443/wss/p2p/${PEER_ED25519}`), '<multiaddr>');
  assert.equal(scrubText(`/dnsaddr/bootstrap.example.org`), '<multiaddr>');
  assert.equal(scrubText(`/ip4/1.2.3.4/udp/4001/quic-v1/webtransport`), '<multiaddr>');
  assert.equal(scrubText(`/ip4/1.2.3.4/udp/9090/webrtc-direct/certhash/uEiA`), '<multiaddr>');
  assert.equal(scrubText(`/ip4/1.2.3.4/tcp/1/p2p/${CID_V0}/p2p-circuit/p2p/${PEER_ED25519}`), '<multiaddr>');
  assert.equal(scrubText(`/p2p/${PEER_ED25519}`), '<multiaddr>');
  assert.equal(scrubText(`addrs: ["/ip4/10.0.0.1/tcp/4001", "/ip4/10.0.0.2/tcp/4001"]`), 'addrs: ["<multiaddr>", "<multiaddr>"]');
  assert.equal(scrubText(`(/ip4/10.0.0.1/tcp/4001)`), '(<multiaddr>)');
});

test('stack frames collapse into <stack>', () => {
  const error = new Error('boom');
  const scrubbed = scrubText(error.stack!);
  assert.equal(scrubbed, 'Error: boom\n<stack>');
  assert.equal(scrubText('Error: x\n    at a (/home/u/a.js:1:2)\n    at async b (node:internal/x:3:4)\nnext line'), 'Error: x\n<stack>\nnext line');
  assert.equal(scrubText('first\r\n\tat f (file.js:1:1)'), 'first\n<stack>');
});

test('ordinary text is left untouched', () => {
  const texts = [
    '',
    'a',
    'upload finished',
    'GET /api/file/:cid 200',
    'POST /api/storage/gc?force=true',
    'http://127.0.0.1:4000/api/node/health',
    'https://example.org/ws/chat',
    '/home/user/.adm-ipfs/blockstore',
    '/tmp/p2p-test/tcp',
    '2024-05-05T10:07:12.345Z',
    'took 12.5 ms, 3 files, 1048576 bytes',
    '{"state":"ready","height":1714903620000}',
    'Garbage collection is already running',
    'bafkrei-too-short',
    'Qm-not-a-cid',
    'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
    'the word at the start: at home',
    'Invalid config: "storage.gc.lowWatermarkBytes" must be lower than storage.gc.highWatermarkBytes',
  ];
  for (const text of texts) assert.equal(scrubText(text), text, text);
});

test('scrubValue walks plain objects and arrays, copying only what changes', () => {
  const unchanged = { a: 1, b: ['x', { c: true, d: null }], e: undefined };
  assert.equal(scrubValue(unchanged), unchanged);
  assert.equal(scrubValue('plain'), 'plain');
  assert.equal(scrubValue(42), 42);
  assert.equal(scrubValue(null), null);
  assert.equal(scrubValue(undefined), undefined);

  const input = { msg: 'x', file: { cid: CID_V1_RAW, peers: [PEER_ED25519, 'ok'], n: 3 }, other: { untouched: true } };
  const output = scrubValue(input) as typeof input;
  assert.deepEqual(output, { msg: 'x', file: { cid: '<cid>', peers: ['<peer-id>', 'ok'], n: 3 }, other: { untouched: true } });
  assert.equal(output.other, input.other, 'unchanged branches are shared, not copied');
  assert.equal(input.file.cid, CID_V1_RAW, 'the input is never mutated');
  assert.equal(input.file.peers[0], PEER_ED25519);
});

test('scrubValue keeps errors as errors of the same class, with scrubbed message, stack and fields', () => {
  class StoreError extends Error {
    override readonly name = 'StoreError';
    readonly code = 'E_STORE';
    readonly cid = CID_V0;
  }
  const error = new StoreError(`cannot find ${CID_V1_RAW}`, { cause: new Error(`via /ip4/1.2.3.4/tcp/1`) });
  const scrubbed = scrubValue({ err: error }) as { err: StoreError & { cause: Error } };
  assert.ok(scrubbed.err instanceof StoreError);
  assert.equal(scrubbed.err.constructor.name, 'StoreError');
  assert.equal(scrubbed.err.message, 'cannot find <cid>');
  assert.equal(scrubbed.err.stack, 'StoreError: cannot find <cid>\n<stack>');
  assert.equal(scrubbed.err.code, 'E_STORE');
  assert.equal(scrubbed.err.cid, '<cid>');
  assert.equal(scrubbed.err.cause.message, 'via <multiaddr>');
  assert.equal(error.message, `cannot find ${CID_V1_RAW}`, 'the original error is untouched');
});

test('scrubValue scrubs what toJSON would write (CID objects) and leaves dates and bytes alone', () => {
  const cid = CID.parse(CID_V1_RAW);
  assert.deepEqual(scrubValue({ cid }), { cid: { '/': '<cid>' } });
  const date = new Date(0);
  const bytes = new Uint8Array([1, 2, 3]);
  const input = { date, bytes };
  assert.equal(scrubValue(input), input);
});

test('scrubValue is bounded: cycles, depth, throwing getters', () => {
  const cyclic: Record<string, unknown> = { cid: CID_V0 };
  cyclic.self = cyclic;
  assert.deepEqual(scrubValue(cyclic), { cid: '<cid>', self: '[Circular]' });

  const shared = { cid: CID_V0 };
  assert.deepEqual(scrubValue([shared, shared]), [{ cid: '<cid>' }, { cid: '<cid>' }], 'a shared object is not a cycle');

  let deep: unknown = CID_V0;
  for (let level = 0; level < SCRUB_MAX_DEPTH + 3; level++) deep = { next: deep };
  const text = JSON.stringify(scrubValue(deep));
  assert.ok(!text.includes(CID_V0), 'nothing below the depth bound leaks');
  assert.match(text, /\[Truncated\]/);

  const hostile = {
    ok: CID_V0,
    get bad(): string {
      throw new Error('getter');
    },
  };
  assert.deepEqual(scrubValue(hostile), { ok: '<cid>', bad: '[Unreadable]' });
});

test('scrubLogObject plugs into pino: objects, errors and the message are scrubbed', () => {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ base: undefined, formatters: { log: scrubLogObject }, serializers: { msg: scrubValue } }, destination);
  logger.info({ cid: CID_V1_RAW, peer: { addr: `/ip4/1.2.3.4/tcp/4001/p2p/${PEER_ED25519}` } }, `pinned ${CID_V0}`);
  logger.error({ err: new Error(`lost ${CID_V1_DAG}`) }, 'failed');
  logger.info('plain message');
  const [first, second, third] = lines.map((line) => JSON.parse(line) as Record<string, any>);
  assert.equal(first!.cid, '<cid>');
  assert.equal(first!.peer.addr, '<multiaddr>');
  assert.equal(first!.msg, 'pinned <cid>');
  assert.equal(second!.err.type, 'Error');
  assert.equal(second!.err.message, 'lost <cid>');
  assert.equal(second!.err.stack, 'Error: lost <cid>\n<stack>');
  assert.equal(third!.msg, 'plain message');
  assert.ok(!lines.join('').includes('Qm'), 'no CIDv0 anywhere');
});

test('scrubText never throws on odd input and is fast on large text', () => {
  assert.equal(scrubText(undefined as unknown as string), undefined);
  assert.equal(scrubText(12 as unknown as string), 12);
  const big = `${'lorem ipsum /api/file/x '.repeat(20_000)}${CID_V0}`;
  const scrubbed = scrubText(big);
  assert.ok(scrubbed.endsWith('<cid>'));
  assert.equal(scrubbed.length, big.length - CID_V0.length + '<cid>'.length);
});
