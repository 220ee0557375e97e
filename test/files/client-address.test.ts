// The client key under exact proxy trust (docs/specs/files-node.md §5 last paragraph; notes A.9, A.10).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeAddress, ProxyTrust, trustEntryProblem } from '../../src/files/client-address.js';

describe('normalizeAddress', () => {
  it('maps IPv4-mapped IPv6 to IPv4, in every spelling (uWS writes the expanded one)', () => {
    assert.equal(normalizeAddress('0000:0000:0000:0000:0000:ffff:7f00:0001'), '127.0.0.1');
    assert.equal(normalizeAddress('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(normalizeAddress('::FFFF:7F00:1'), '127.0.0.1');
    assert.equal(normalizeAddress('203.0.113.7'), '203.0.113.7');
  });

  it('writes IPv6 per RFC 5952: lower case, no leading zeros, the longest zero run compressed', () => {
    assert.equal(normalizeAddress('0000:0000:0000:0000:0000:0000:0000:0001'), '::1');
    assert.equal(normalizeAddress('2001:0DB8:0000:0000:0000:0000:0000:0001'), '2001:db8::1');
    assert.equal(normalizeAddress('2001:db8:0:0:1:0:0:0'), '2001:db8:0:0:1::', 'the longer run wins');
    assert.equal(normalizeAddress('2001:db8:0:0:1:0:0:1'), '2001:db8::1:0:0:1', 'the first run wins a tie');
    assert.equal(normalizeAddress('2001:db8:1:1:1:1:0:1'), '2001:db8:1:1:1:1:0:1', 'a single zero word is not compressed');
    assert.equal(normalizeAddress('::'), '::');
    assert.equal(normalizeAddress('fe80::1%eth0'), 'fe80::1', 'the zone names an interface, not a client');
    assert.equal(normalizeAddress('64:ff9b::192.0.2.33'), '64:ff9b::c000:221', 'an embedded quad outside ::ffff:0:0/96 stays IPv6');
  });

  it('refuses what is not an address', () => {
    for (const text of ['', 'localhost', '1.2.3', '1.2.3.4.5', '256.1.1.1', '01.2.3.4', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', ':1::', '1.2.3.4::', 'g::1', '1:2:3:4:5:6:7']) {
      assert.equal(normalizeAddress(text), undefined, text);
    }
  });
});

describe('trust entries', () => {
  it('accepts addresses and ranges, refuses what would trust everyone', () => {
    for (const entry of ['10.0.0.1', '10.0.0.0/8', '192.0.2.7/32', '2001:db8::/32', '::1/128', '::ffff:10.0.0.0/104']) {
      assert.equal(trustEntryProblem(entry), undefined, entry);
    }
    for (const entry of ['0.0.0.0/0', '::/0', '::ffff:0:0/96', 'loopback', '10.0.0.0/33', '2001:db8::/129', '10.0.0.0/x']) {
      assert.notEqual(trustEntryProblem(entry), undefined, entry);
    }
    assert.throws(() => new ProxyTrust(['::ffff:0.0.0.0/96']), /covers every address/);
  });

  it('matches CIDR edges exactly', () => {
    const trust = new ProxyTrust(['192.0.2.0/25', '198.51.100.9/32', '2001:db8:a::/48', '2001:db8::7/128', '10.1.2.3/7']);
    assert.ok(trust.trusts('192.0.2.0'));
    assert.ok(trust.trusts('192.0.2.127'));
    assert.ok(!trust.trusts('192.0.2.128'), 'just past a /25');
    assert.ok(trust.trusts('198.51.100.9'));
    assert.ok(!trust.trusts('198.51.100.8'), '/32 is one address');
    assert.ok(trust.trusts('2001:db8:a:ffff:ffff:ffff:ffff:ffff'));
    assert.ok(!trust.trusts('2001:db8:b::'), 'just past a /48');
    assert.ok(trust.trusts('2001:0db8:0000:0000:0000:0000:0000:0007'), '/128 in its expanded spelling');
    assert.ok(!trust.trusts('2001:db8::8'));
    assert.ok(trust.trusts('11.255.255.255'), 'host bits of a range are ignored: 10.1.2.3/7 is 10.0.0.0/7');
    assert.ok(!trust.trusts('12.0.0.0'));
    assert.ok(!trust.trusts('not-an-address'));
  });

  it('treats an IPv4 address and its mapped IPv6 form as one address', () => {
    const v4 = new ProxyTrust(['127.0.0.1']);
    assert.ok(v4.trusts('0000:0000:0000:0000:0000:ffff:7f00:0001'));
    assert.ok(v4.trusts('::ffff:127.0.0.1'));
    const mapped = new ProxyTrust(['::ffff:10.0.0.0/104']);
    assert.ok(mapped.trusts('10.200.0.1'));
    assert.ok(!mapped.trusts('11.0.0.1'));
    const wide = new ProxyTrust(['::ffff:0:0/95']);
    assert.ok(wide.trusts('8.8.8.8'), 'a range wider than the mapped block holds every mapped address');
  });
});

describe('clientOf', () => {
  const proxy = new ProxyTrust(['127.0.0.1', '10.0.0.0/8']);

  it('with nothing trusted, the socket address is the client whatever the header says', () => {
    const none = new ProxyTrust([]);
    assert.equal(none.empty, true);
    assert.equal(none.clientOf('127.0.0.1', '203.0.113.7'), '127.0.0.1');
    assert.equal(none.clientOf('0000:0000:0000:0000:0000:ffff:7f00:0001', '203.0.113.7'), '127.0.0.1');
  });

  it('an untrusted peer is the client even when it sends X-Forwarded-For', () => {
    assert.equal(proxy.clientOf('198.51.100.20', '203.0.113.7'), '198.51.100.20');
  });

  it('a trusted peer without the header is the client itself', () => {
    assert.equal(proxy.clientOf('127.0.0.1', undefined), '127.0.0.1');
    assert.equal(proxy.clientOf('127.0.0.1', ''), '127.0.0.1', 'an empty header is malformed: the walk stops at the peer');
  });

  it('walks from the right, skipping trusted hops; what the client wrote on the left is never reached', () => {
    assert.equal(proxy.clientOf('127.0.0.1', '203.0.113.7'), '203.0.113.7');
    assert.equal(proxy.clientOf('127.0.0.1', '1.1.1.1, 203.0.113.7, 10.0.0.5'), '203.0.113.7');
    assert.equal(proxy.clientOf('127.0.0.1', '  203.0.113.7 ,10.9.9.9'), '203.0.113.7');
  });

  it('when every hop is trusted, the leftmost is the client', () => {
    assert.equal(proxy.clientOf('127.0.0.1', '10.0.0.9, 10.0.0.5'), '10.0.0.9');
  });

  it('a malformed entry stops the walk at the last address reached', () => {
    assert.equal(proxy.clientOf('127.0.0.1', 'garbage'), '127.0.0.1');
    assert.equal(proxy.clientOf('127.0.0.1', '203.0.113.7, unknown, 10.0.0.5'), '10.0.0.5');
    assert.equal(proxy.clientOf('127.0.0.1', '203.0.113.7,,10.0.0.5'), '10.0.0.5');
    assert.equal(proxy.clientOf('127.0.0.1', '203.0.113.7, 10.0.0.5:abc'), '127.0.0.1');
  });

  it('drops ports and brackets and normalizes what it returns', () => {
    assert.equal(proxy.clientOf('127.0.0.1', '203.0.113.7:51234'), '203.0.113.7');
    assert.equal(proxy.clientOf('127.0.0.1', '[2001:DB8::0:1]:443'), '2001:db8::1');
    assert.equal(proxy.clientOf('127.0.0.1', '[2001:db8::1]'), '2001:db8::1');
    assert.equal(proxy.clientOf('127.0.0.1', '::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(proxy.clientOf('127.0.0.1', '[1.2.3.4]'), '127.0.0.1', 'brackets hold IPv6 only');
  });

  it('IPv6 proxies and clients', () => {
    const v6 = new ProxyTrust(['::1', '2001:db8:ff::/48']);
    assert.equal(v6.clientOf('0000:0000:0000:0000:0000:0000:0000:0001', '2001:db8:1::5, 2001:db8:ff::2'), '2001:db8:1::5');
  });

  it('a socket address that is not an address is used as given and never trusted', () => {
    assert.equal(proxy.clientOf('', '203.0.113.7'), '');
  });

  it('stops after a bounded number of hops', () => {
    const chain = Array.from({ length: 100 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(',');
    const client = proxy.clientOf('127.0.0.1', chain);
    assert.equal(client, '10.0.0.68', 'the 32nd entry from the right');
  });
});
