// A list of strings packed in Buffers (src/packed-strings.ts): what goes in comes out, in order, across pages; the
// view without some strings; JSON as the array's; pages given back to a pool and lent to the next list.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PackedJsonValues, PackedStrings, PagePool, PAGE_BYTES } from '../src/packed-strings.js';
import { prng } from './support/random.js';

function randomStrings(seed: number, count: number): string[] {
  const random = prng(seed);
  const alphabet = ['a', 'Z', '0', '"', '\\', '\n', '\u0000', 'é', '€', '😀', 'bafkrei'];
  return Array.from({ length: count }, () => {
    let text = '';
    for (let i = Math.floor(random() * 20); i > 0; i--) text += alphabet[Math.floor(random() * alphabet.length)];
    return text;
  });
}

describe('PackedStrings', () => {
  it('gives back every string in order, the empty one and multi-byte ones too, across pages', () => {
    // ~40 bytes an entry: several pages.
    const strings = randomStrings(1, 80_000);
    const list = PackedStrings.from(strings);
    assert.equal(list.length, strings.length);
    assert.deepEqual([...list], strings);
    assert.deepEqual([...list], strings, 'read twice, the same');
    assert.deepEqual([...new PackedStrings()], []);
  });

  it('fills a page to its last byte and takes a string larger than a page', () => {
    const filler = 'x'.repeat(PAGE_BYTES / 2 - 4);
    const huge = 'é'.repeat(PAGE_BYTES);
    const strings = [filler, filler, 'next page', huge, 'after it'];
    assert.deepEqual([...PackedStrings.from(strings)], strings);
  });

  it('without: a view that leaves strings out, counted, over the same pages; the source is sealed', () => {
    const strings = Array.from({ length: 5_000 }, (_, index) => `bafkrei${index.toString(36)}`);
    const list = PackedStrings.from(strings);
    const excluded = new Set(['bafkrei0', 'bafkrei10', 'not in the list']);
    const view = list.without(excluded);
    const kept = strings.filter((text) => !excluded.has(text));
    assert.deepEqual([...view], kept);
    assert.equal(view.length, kept.length);
    assert.equal(list.length, strings.length, 'the source keeps its strings');
    const narrower = view.without(new Set(['bafkrei1']));
    assert.deepEqual([...narrower], kept.filter((text) => text !== 'bafkrei1'));
    assert.throws(() => list.push('more'), /no longer takes strings/);
    assert.throws(() => view.push('more'), /no longer takes strings/);
  });

  it('countInTurns: a view is counted a page at a time, awaiting a turn after each page; then its length is known', async () => {
    const strings = Array.from({ length: 100_000 }, (_, index) => `bafkrei${String(index).padStart(52, '0')}`);
    const view = PackedStrings.from(strings).without(new Set([strings[5]!, strings[99_999]!, 'not in the list']));
    let turns = 0;
    assert.equal(await view.countInTurns(async () => void turns++), strings.length - 2);
    // 100,000 entries of 4 + 59 bytes in pages of 1 MiB: 7 pages, a turn after each.
    assert.equal(turns, Math.ceil((100_000 * 63) / PAGE_BYTES));
    assert.equal(view.length, strings.length - 2);
    assert.equal(await view.countInTurns(async () => void turns++), strings.length - 2);
    assert.equal(turns, 7, 'counted once');
  });

  it('release: the pages go back to the pool and the next list takes them, not new ones; the released list and its views refuse reads', () => {
    const pool = new PagePool();
    const strings = Array.from({ length: 50_000 }, (_, index) => `bafkrei${String(index).padStart(52, '0')}`);
    const first = PackedStrings.from(strings, pool);
    const view = first.without(new Set([strings[0]!]));
    const pages = Math.ceil((50_000 * 63) / PAGE_BYTES);
    assert.equal(pool.size, 0, 'nothing to lend before a release');
    view.release();
    assert.equal(pool.size, pages, 'every page of the list, given back through a view');
    view.release();
    assert.equal(pool.size, pages, 'a second release gives nothing more');
    assert.throws(() => [...first], /released/);
    assert.throws(() => [...view], /released/);
    assert.throws(() => first.length + view.length, /released/);

    const others = strings.map((text) => text.replace('bafkrei', 'bafyrei'));
    const second = PackedStrings.from(others, pool);
    assert.equal(pool.size, 0, 'the second list took the pool\'s pages');
    assert.deepEqual([...second], others, 'written over, read back whole');
    second.release();
    assert.equal(pool.size, pages);
  });

  it('release while a reader is between two strings: its next read throws instead of reading a page lent to another list', () => {
    const pool = new PagePool();
    const list = PackedStrings.from(['a', 'b', 'c'], pool);
    const reader = list[Symbol.iterator]();
    assert.equal(reader.next().value, 'a');
    list.release();
    assert.throws(() => reader.next(), /released while it was read/);
  });

  it('release between two pages of countInTurns: the count throws rather than stop short', async () => {
    const strings = Array.from({ length: 50_000 }, (_, index) => `bafkrei${String(index).padStart(52, '0')}`);
    const view = PackedStrings.from(strings, new PagePool()).without(new Set([strings[1]!]));
    await assert.rejects(view.countInTurns(async () => view.release()), /released while it was read/);
  });

  it('PagePool keeps at most one list\'s worth, and no page larger than a page', () => {
    const pool = new PagePool();
    const text = 'x'.repeat(1_000);
    const big = PackedStrings.from(Array.from({ length: 3_000 }, () => text), pool);
    const small = PackedStrings.from(['one'], pool);
    const huge = PackedStrings.from(['y'.repeat(PAGE_BYTES)], pool);
    big.release();
    assert.equal(pool.size, 3);
    small.release();
    assert.equal(pool.size, 1, 'two lists alive at once leave the last one\'s worth, not both');
    huge.release();
    assert.equal(pool.size, 0, 'a page made for one large string is not kept');
  });

  it('refuses a lone surrogate (UTF-8 has no form for it) and stays usable', () => {
    const list = PackedStrings.from(['a']);
    assert.throws(() => list.push('lone \ud800'), TypeError);
    list.push('b');
    assert.deepEqual([...list], ['a', 'b']);
  });

  it('spans: each kept string\'s UTF-8 bytes where they lie, a view\'s with the text it decoded; jsonPlain until a string needs a JSON escape', () => {
    const strings = randomStrings(3, 20_000);
    const list = PackedStrings.from(strings);
    // The span moves along: each one is read before the next step.
    const read = (of: PackedStrings) => {
      const bytes: string[] = [];
      const texts: Array<string | undefined> = [];
      for (const span of of.spans()) {
        bytes.push(span.page.toString('utf8', span.start, span.end));
        texts.push(span.text);
      }
      return { bytes, texts };
    };
    const whole = read(list);
    assert.deepEqual(whole.bytes, strings);
    assert.ok(whole.texts.every((text) => text === undefined), 'a whole list decodes nothing');
    const excluded = new Set(strings.filter((_, index) => index % 3 === 0));
    const kept = strings.filter((text) => !excluded.has(text));
    const view = read(list.without(excluded));
    assert.deepEqual(view.bytes, kept);
    assert.deepEqual(view.texts, kept, 'a view gives the text it decoded to tell');
    assert.equal(list.jsonPlain, false, 'the random strings hold quotes and control characters');
    const cids = PackedStrings.from(['bafkreia', 'é€😀 / <tag>', '']);
    assert.equal(cids.jsonPlain, true);
    assert.equal(cids.without(new Set([''])).jsonPlain, true);
    for (const escaped of ['"', '\\', '\n', '\u0000', '\u001f']) {
      const mixed = PackedStrings.from(['bafkreia']);
      mixed.push(`a${escaped}b`);
      assert.equal(mixed.jsonPlain, false, JSON.stringify(escaped));
    }
    assert.equal(PackedStrings.from(['\u007f', '\u2028']).jsonPlain, true, 'JSON.stringify writes DEL and U+2028 as themselves');
  });

  it('JSON.stringify writes it as the array', () => {
    const strings = randomStrings(2, 300);
    assert.equal(JSON.stringify({ list: PackedStrings.from(strings) }), JSON.stringify({ list: strings }));
  });

  it('PackedJsonValues: JSON values kept as texts; JSON.stringify writes the list as the array of them', () => {
    const values = [
      { cid: 'bafkreia', depth: Number.POSITIVE_INFINITY, metadata: {} },
      { cid: 'bafkreib', depth: 1, metadata: { note: 'é "x"', n: 2, ok: true } },
      undefined,
      null,
      'text',
      [1, [2, { three: 3 }]],
    ];
    const list = new PackedJsonValues();
    for (const value of values) list.push(value);
    assert.equal(list.length, values.length);
    assert.equal(JSON.stringify({ pins: list }), JSON.stringify({ pins: values }));
    assert.deepEqual(list.toJSON()[0], { cid: 'bafkreia', depth: null, metadata: {} }, 'read back as JSON wrote it');
  });
});
