// The node's yamux muxer with guarded outbound streams (storage/files/stream-muxer.libp2p.ts), over libp2p's in-memory
// connection pair: a connection that starts closing in the same tick as a stream is opened on it no longer ends the
// process, and streams on a healthy connection still carry data both ways.
//
// The crash itself is an uncaught exception, which node:test would report against whichever test runs at the time, so
// the race runs in a child process, once with the guard and once with plain yamux (the check that the race is real).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { multiaddrConnectionPair } from '@libp2p/utils';
import type { Stream } from '@libp2p/interface';
import { guardedYamux } from '../../../storage/files/stream-muxer.libp2p.js';

const DIST = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const run = promisify(execFile);

/** Opens a stream and starts closing its connection in the same tick, then reports what the opener saw. */
const RACE = `
const [{ yamux }, { guardedYamux }, { multiaddrConnectionPair }] = await Promise.all([
  import('@chainsafe/libp2p-yamux'),
  import(${JSON.stringify(join(DIST, 'storage/files/stream-muxer.libp2p.js'))}),
  import('@libp2p/utils'),
]);
const makeFactory = process.argv[1] === 'guarded' ? guardedYamux() : yamux();
const [outbound] = multiaddrConnectionPair();
const muxer = makeFactory().createStreamMuxer(outbound);
const opening = muxer.createStream();
void outbound.close();
const stream = await opening;
await new Promise((resolve) => setTimeout(resolve, 50));
let write = 'accepted';
try { stream.send(new Uint8Array([1])); } catch (error) { write = error.name; }
console.log(JSON.stringify({ status: stream.status, write }));
`;

async function raceIn(mode: 'guarded' | 'plain'): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', join(DIST, 'src/polyfill.js'), '--input-type=module', '-e', RACE, mode], {
      cwd: join(DIST, '..'),
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('yamux with guarded outbound streams', () => {
  it('a stream opened as its connection closes is aborted, and the process lives on', async () => {
    const guarded = await raceIn('guarded');
    assert.equal(guarded.code, 0, `the guarded race exited ${guarded.code}: ${guarded.stderr}`);
    assert.deepEqual(JSON.parse(guarded.stdout.trim()), { status: 'aborted', write: 'StreamStateError' });
  });

  it('the same race with plain yamux ends the process with an uncaught StreamStateError (the race is real)', async () => {
    const plain = await raceIn('plain');
    assert.equal(plain.code, 1, `plain yamux survived the race: ${plain.stdout}`);
    assert.match(plain.stderr, /StreamStateError: Cannot write to a stream that is closing/);
    assert.match(plain.stderr, /sendWindowUpdate/);
  });

  it('on a healthy connection, a guarded stream opens and carries data both ways', async () => {
    const [outbound, inbound] = multiaddrConnectionPair();
    const makeFactory = guardedYamux();
    const dialer = makeFactory().createStreamMuxer(outbound);
    const listener = makeFactory().createStreamMuxer(inbound);
    const accepted = new Promise<Stream>((resolve) => listener.addEventListener('stream', (event) => resolve(event.detail), { once: true }));

    const local = await dialer.createStream();
    const remote = await accepted;
    const received = new Promise<number[]>((resolve) => remote.addEventListener('message', (event) => resolve([...event.data.subarray()]), { once: true }));
    local.send(new Uint8Array([1, 2, 3]));
    assert.deepEqual(await received, [1, 2, 3]);

    const echoed = new Promise<number[]>((resolve) => local.addEventListener('message', (event) => resolve([...event.data.subarray()]), { once: true }));
    remote.send(new Uint8Array([4, 5]));
    assert.deepEqual(await echoed, [4, 5]);
    assert.deepEqual([local.status, remote.status], ['open', 'open']);
    // The first window update gave the stream its own method back: later updates are yamux's own.
    assert.equal(Object.hasOwn(local, 'sendWindowUpdate'), false);

    await dialer.close();
    await listener.close();
  });
});
