// JSON answers written in pieces (http/json-body.ts): the same bytes as JSON.stringify, the byte count the edge
// announces, and the answer through a real HTTP edge with Content-Length.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonByteLength, jsonChunks, streamedJson } from '../../http/json-body.js';
import { HttpServer } from '../../http/server.js';
import { PackedJsonValues, PackedStrings } from '../../src/packed-strings.js';
import { captureLogger } from '../support/logger.js';
import { waitFor } from '../support/wait.js';
import { prng } from '../support/random.js';

async function text(value: unknown, chunkChars?: number): Promise<{ text: string; chunks: number; bytes: number }> {
  const parts: Buffer[] = [];
  for await (const chunk of jsonChunks(value, chunkChars)) parts.push(Buffer.from(chunk));
  const body = Buffer.concat(parts);
  return { text: body.toString('utf8'), chunks: parts.length, bytes: body.length };
}

function packedValues(values: readonly unknown[]): PackedJsonValues {
  const list = new PackedJsonValues();
  for (const value of values) list.push(value);
  return list;
}

/** Random plain data: nested arrays and objects of strings (multi-byte and escapes too), numbers, booleans, null. */
function randomValue(random: () => number, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 3 ? 6 : 9));
  const randomString = () => {
    const alphabet = ['a', 'Z', '0', ' ', '"', '\\', '\n', '\u0001', 'é', '€', '😀', '\ud800', '/', '<'];
    let out = '';
    for (let i = Math.floor(random() * 12); i > 0; i--) out += alphabet[Math.floor(random() * alphabet.length)];
    return out;
  };
  switch (pick) {
    case 0:
      return randomString();
    case 1:
      return Math.round((random() - 0.5) * 1e6) / 7;
    case 2:
      return random() < 0.5;
    case 3:
      return null;
    case 4:
      return [Number.NaN, Number.POSITIVE_INFINITY, -0, undefined][Math.floor(random() * 4)];
    case 5:
      return `bafkrei${Math.floor(random() * 1e12).toString(32)}`;
    case 6:
      if (random() < 0.3) {
        // A packed list (its bytes copied, or the slow way for entries to escape), a view that skips some, or JSON texts.
        const strings = Array.from({ length: Math.floor(random() * 5) }, () => randomString().replace(/\ud800/g, ''));
        const kind = random();
        if (kind < 0.5) return PackedStrings.from(strings);
        if (kind < 0.8) return PackedStrings.from(new Set(strings)).without(new Set(strings.filter(() => random() < 0.4)));
        return packedValues(strings.map((text) => (random() < 0.5 ? text : { text, n: strings.length })));
      }
    // falls through: an array
    case 7: {
      const items: unknown[] = [];
      for (let i = Math.floor(random() * 6); i > 0; i--) items.push(randomValue(random, depth + 1));
      return items;
    }
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 6); i > 0; i--) object[randomString()] = randomValue(random, depth + 1);
      return object;
    }
  }
}

describe('JSON answers in pieces (http/json-body.ts)', () => {
  it('gives JSON.stringify\'s bytes for plain data and what it leaves out, with the byte count announced', async () => {
    const samples: unknown[] = [
      { trigger: 'none', releasedCids: [], retainedCids: ['bafy1', 'bafy2'], errors: [{ cid: 'x', error: 'gone' }] },
      [],
      {},
      [undefined, () => 1, Symbol('s'), null, Number.NaN],
      { left: undefined, out: () => 1, kept: 0, nested: { empty: {}, list: [[], [{}]] } },
      Object.assign(Object.create(null), { 'no prototype': true }),
      { date: new Date(0), withToJson: { toJSON: () => ({ replaced: ['é'] }) }, map: new Map([[1, 2]]), boxed: new String('s') },
      { 'key "quoted"\n': '€ and 😀 and a lone \ud800' },
      { retainedCids: PackedStrings.from(['bafy1', 'é "quoted"\n', '']), empty: new PackedStrings(), view: PackedStrings.from(['a', 'b', 'c']).without(new Set(['b'])) },
      { pins: packedValues([{ cid: 'bafy1', depth: Number.POSITIVE_INFINITY, metadata: { a: 'é' } }, undefined, [1, 'x']]), none: new PackedJsonValues() },
      'a string alone',
      42,
      null,
    ];
    for (const sample of samples) {
      const expected = JSON.stringify(sample);
      for (const chunkChars of [1, 5, 64 * 1024]) assert.equal((await text(sample, chunkChars)).text, expected, `${expected} in chunks of ${chunkChars}`);
      assert.equal(await jsonByteLength(sample), Buffer.byteLength(expected), expected);
    }
  });

  it('matches JSON.stringify on 500 random values, in chunks of random sizes', async () => {
    const random = prng(30);
    for (let round = 0; round < 500; round++) {
      const value = { round, value: randomValue(random) };
      const expected = JSON.stringify(value);
      const chunkChars = 1 + Math.floor(random() * 40);
      const got = await text(value, chunkChars);
      assert.equal(got.text, expected, `round ${round}`);
      assert.equal(await jsonByteLength(value), got.bytes, `round ${round}: the count is the bytes sent`);
    }
  });

  it('refuses what JSON.stringify refuses: a cycle, a BigInt, a value with no JSON form', async () => {
    const cyclic: Record<string, unknown> = { a: [] };
    (cyclic.a as unknown[]).push(cyclic);
    await assert.rejects(jsonByteLength(cyclic), TypeError);
    await assert.rejects(jsonByteLength({ big: 1n }), TypeError);
    await assert.rejects(jsonByteLength(undefined), TypeError);
    // The same object twice, not inside itself, is no cycle.
    const shared = { same: true };
    assert.equal(await jsonByteLength([shared, shared]), JSON.stringify([shared, shared]).length);
  });

  it('a packed entry larger than a chunk goes out whole, between the chunks before and after it', async () => {
    const big = 'b'.repeat(100_000);
    const escaped = `"${'\n'.repeat(40_000)}é`;
    const value = { before: 'x', list: PackedStrings.from(['a', big, 'c', escaped, 'd']), values: packedValues([{ big }, 1]) };
    const expected = JSON.stringify(value);
    for (const chunkBytes of [1, 7, 64 * 1024]) {
      const got = await text(value, chunkBytes);
      assert.equal(got.text, expected, `in chunks of ${chunkBytes}`);
      assert.equal(await jsonByteLength(value), got.bytes);
    }
  });

  it('counts and writes a large list in slices, letting the event loop turn between them even for a reader that never waits', async () => {
    const list = PackedStrings.from(Array.from({ length: 200_000 }, (_, i) => `bafkrei${String(i).padStart(52, '0')}`));
    const value = { retainedCids: list };
    const expected = Buffer.byteLength(JSON.stringify({ retainedCids: [...list] }));
    // 12 MB of JSON in slices of 256 Ki characters: ~46 slices each way; a timer gets a turn between them.
    const turnsWhile = async (work: () => Promise<number>) => {
      let turns = 0;
      const ticking = setInterval(() => turns++, 0);
      try {
        assert.equal(await work(), expected);
      } finally {
        clearInterval(ticking);
      }
      return turns;
    };
    const counting = await turnsWhile(() => jsonByteLength(value));
    assert.ok(counting >= 10, `the timer ran ${counting} times while 12 MB were counted`);
    const writing = await turnsWhile(async () => {
      let bytes = 0;
      for await (const chunk of jsonChunks(value)) bytes += chunk.length;
      return bytes;
    });
    assert.ok(writing >= 10, `the timer ran ${writing} times while 12 MB were written`);
  });

  it('a large list goes out in chunks of about the asked size, never one string of the whole', async () => {
    const cids = Array.from({ length: 20_000 }, (_, index) => `bafkreiexample${index.toString().padStart(8, '0')}`);
    const value = { retainedCids: cids };
    const got = await text(value, 64 * 1024);
    assert.equal(got.text, JSON.stringify(value));
    assert.ok(got.chunks >= Math.floor(got.bytes / (64 * 1024)) && got.chunks > 1, `${got.chunks} chunks for ${got.bytes} bytes`);
  });

  it('ended: called once when the body is read whole, when its reader returns early, and when it was never started', async () => {
    const value = { list: Array.from({ length: 50_000 }, (_, index) => `bafkrei${index}`) };
    const endedAfter = async (read: (chunks: AsyncIterator<Uint8Array>) => Promise<void>): Promise<number> => {
      let ended = 0;
      const reply = await streamedJson(200, value, {}, () => void ended++);
      const chunks = reply.stream!.chunks[Symbol.asyncIterator]();
      assert.equal(ended, 0, 'not before the edge reads');
      await read(chunks);
      await chunks.return?.();
      return ended;
    };
    assert.equal(
      await endedAfter(async (chunks) => {
        while (!(await chunks.next()).done);
      }),
      1,
      'read whole, then returned as the edge does',
    );
    assert.equal(await endedAfter(async (chunks) => void (await chunks.next())), 1, 'a client gone after the first chunk');
    assert.equal(await endedAfter(async () => {}), 1, 'returned before the first chunk');
  });

  it('through the HTTP edge: Content-Length is the count and the body parses to the value', async () => {
    const value = { retainedCids: Array.from({ length: 30_000 }, (_, index) => `bafkrei${index}`), note: 'é€😀' };
    const server = new HttpServer({
      name: 'json-body-test',
      host: '127.0.0.1',
      port: 0,
      logger: captureLogger('warn').logger,
      mapError: () => ({ status: 500, body: 'failed' }),
      notFound: () => ({ status: 404, body: 'no' }),
    });
    let ended = 0;
    server.route('get', '/report', () => streamedJson(200, value, { 'content-type': 'application/json; charset=utf-8' }, () => void ended++));
    const port = await server.listen();
    try {
      const response = await fetch(`http://127.0.0.1:${port}/report`, { headers: { connection: 'close' } });
      assert.equal(response.status, 200);
      assert.equal(Number(response.headers.get('content-length')), Buffer.byteLength(JSON.stringify(value)));
      assert.deepEqual(await response.json(), value);
      // The client may hold the last byte before the edge's loop asks the source for more and finds it done.
      await waitFor(() => ended === 1, { what: 'the edge done with the body once it is sent' });
      assert.equal(ended, 1, 'once');
    } finally {
      await server.close();
    }
  });
});
