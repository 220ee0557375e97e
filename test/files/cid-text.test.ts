// src/files/cid-text.ts against multiformats itself: for every CIDv1 written in base36 the fast conversion must give
// exactly `CID.parse(name, base36).toString()`, the registry's key, and every other shape must be left to multiformats.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base36 } from 'multiformats/bases/base36';
import { CID } from 'multiformats/cid';
import * as Digest from 'multiformats/hashes/digest';
import { base36CidV1ToText } from '../../src/files/cid-text.js';
import { prng } from '../support/random.js';

describe('a pin name to the registry key (base36 CIDv1 to its text)', () => {
  it('gives exactly what multiformats gives, for 20,000 random CIDv1 of every codec and digest the node meets', () => {
    const next = prng(30);
    // [codec, hash code, digest length]: raw and dag-pb; sha2-256, sha2-512, identity of 0 to 127 bytes; and codecs
    // and hashes whose varints take two bytes, which the node refuses to serve but a pin folder may still hold.
    const shapes: Array<[number, number, () => number]> = [
      [0x55, 0x12, () => 32],
      [0x70, 0x12, () => 32],
      [0x55, 0x13, () => 64],
      [0x70, 0x00, () => Math.floor(next() * 128)],
      [0x0129, 0xb220, () => 32],
    ];
    for (let i = 0; i < 20_000; i++) {
      const [codec, hash, length] = shapes[i % shapes.length]!;
      const bytes = new Uint8Array(length());
      // Digests with runs of zero and 0xff bytes too: the carries of the conversion meet their edges there.
      const fill = i % 7 === 0 ? 0 : i % 7 === 1 ? 0xff : -1;
      for (let b = 0; b < bytes.length; b++) bytes[b] = fill >= 0 ? fill : Math.floor(next() * 256);
      const cid = CID.createV1(codec, Digest.create(hash, bytes));
      const name = cid.toString(base36);
      assert.equal(base36CidV1ToText(name), CID.parse(name, base36).toString(), name);
    }
  });

  it('leaves every other shape to multiformats: another base, a CIDv0, a character outside base36, upper case, empty', () => {
    const cid = CID.parse('bafkreibplogzsbxtgzxw4meorjolhtt4yalvrujlagczxxxsnokfxi5cj4');
    assert.equal(base36CidV1ToText(cid.toString()), undefined, 'base32 text');
    const v0 = CID.parse('QmPZ9gcCEpqKTo6aq61g2nXGUhM4iCL3ewB6LDXZCtioEB');
    // A CIDv0's bytes (0x12 0x20 …) written in base36: multiformats refuses them (helia names a CIDv0's pin after its
    // CIDv1), so the walk passes over such a name.
    const v0Name = base36.encode(v0.bytes);
    assert.equal(base36CidV1ToText(v0Name), undefined);
    assert.throws(() => CID.parse(v0Name, base36), /Version 0 CID string must not include multibase prefix/);
    const name = cid.toString(base36);
    assert.equal(base36CidV1ToText(name.toUpperCase()), undefined, 'upper case');
    assert.equal(base36CidV1ToText(`${name.slice(0, 10)}_${name.slice(11)}`), undefined, 'an underscore');
    assert.equal(base36CidV1ToText(`${name.slice(0, 10)}é${name.slice(11)}`), undefined, 'a non-ASCII character');
    assert.equal(base36CidV1ToText('k'), undefined);
    assert.equal(base36CidV1ToText(''), undefined);
    assert.equal(base36CidV1ToText(`k0${name.slice(1)}`), undefined, 'a leading zero byte');
    assert.equal(base36CidV1ToText(`k${'z'.repeat(257)}`), undefined, 'longer than any CID the node can hold');
  });
});
