import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { type Cidr, checkAddress, checkUrl, type DestinationPolicy } from '../../src/outbound/ssrf-policy.js';

// Pure function calls only: nothing here resolves a name or opens a connection.
const HTTPS_ONLY: DestinationPolicy = { allowHttp: false, allowedCidrs: [] };
const cidrs = (...list: string[]): Cidr[] => list.map((c) => ipaddr.parseCIDR(c));

// [address, refused range (substring of the verdict), or null when allowed]
const ADDRESSES: Array<[string, string | null]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['10.0.0.1', 'private (10.0.0.0/8)'],
  ['10.255.255.255', 'private (10.0.0.0/8)'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.127.255.254', 'carrier-grade NAT'],
  ['127.0.0.1', 'loopback (127.0.0.0/8)'],
  ['127.255.0.9', 'loopback'],
  ['169.254.169.254', 'link-local (cloud metadata)'],
  ['169.254.0.1', 'link-local'],
  ['172.16.0.1', 'private (172.16.0.0/12)'],
  ['172.31.255.255', 'private (172.16.0.0/12)'],
  ['192.0.0.8', 'IETF protocol assignments'],
  ['192.0.2.10', 'documentation (192.0.2.0/24)'],
  ['192.88.99.1', '6to4 relay'],
  ['192.168.1.1', 'private (192.168.0.0/16)'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation (198.51.100.0/24)'],
  ['203.0.113.7', 'documentation (203.0.113.0/24)'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved (240.0.0.0/4)'],
  ['255.255.255.255', 'broadcast'],
  ['8.8.8.8', null],
  ['1.1.1.1', null],
  ['93.184.215.14', null],
  ['172.32.0.1', null],
  ['100.128.0.1', null],
  ['::', 'unspecified (::/128)'],
  ['::1', 'loopback (::1/128)'],
  ['[::1]', 'loopback (::1/128)'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback'],
  ['::FFFF:A9FE:A9FE', 'IPv4-mapped link-local'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:8.8.8.8', null],
  ['64:ff9b::a9fe:a9fe', 'NAT64 link-local'],
  ['64:ff9b::127.0.0.1', 'NAT64 loopback'],
  ['64:ff9b::808:808', null],
  ['64:ff9b:1::1', 'local-use NAT64'],
  ['2002:a9fe:a9fe::', '6to4 link-local'],
  ['2002:7f00:1::1', '6to4 loopback'],
  ['2002:c0a8:101::', '6to4 private'],
  ['2002:808:808::', null],
  // ipaddr.js reads a dotted tail as IPv4-mapped: refused either way.
  ['::127.0.0.1', 'loopback'],
  ['::7f00:1', 'IPv4-compatible'],
  ['::808:808', 'IPv4-compatible'],
  ['100::1', 'discard-only'],
  ['2001:db8::1', 'documentation (2001:db8::/32)'],
  ['3fff::1', 'documentation (3fff::/20)'],
  ['2001::1', 'Teredo'],
  ['2001:2::1', 'IETF protocol assignments'],
  ['fc00::1', 'unique local'],
  ['fd12:3456::1', 'unique local'],
  ['fe80::1', 'link-local (fe80::/10)'],
  ['fe80::1%eth0', 'link-local (fe80::/10)'],
  ['[fe80::1%25eth0]', 'link-local'],
  ['fec0::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['5f00::1', 'not globally routable'],
  ['4000::1', 'not globally routable'],
  ['2606:4700:4700::1111', null],
  ['2001:4860:4860::8888', null],
  ['not-an-address', 'not an IP address'],
  ['2130706433', 'not an IP address'],
];

describe('checkAddress over a table of addresses', () => {
  for (const [address, refused] of ADDRESSES) {
    test(`${address} → ${refused ?? 'allowed'}`, () => {
      const verdict = checkAddress(address, []);
      if (refused === null) {
        assert.deepEqual(verdict, { allowed: true });
      } else {
        assert.equal(verdict.allowed, false);
        assert.ok(!verdict.allowed && verdict.range.includes(refused), JSON.stringify(verdict));
      }
    });
  }

  test('DELIVERY_ALLOWED_CIDRS exempts exactly its ranges, IPv4-mapped forms included', () => {
    const allowed = cidrs('127.0.0.1/32', 'fd00:1::/32');
    assert.deepEqual(checkAddress('127.0.0.1', allowed), { allowed: true });
    assert.deepEqual(checkAddress('::ffff:127.0.0.1', allowed), { allowed: true });
    assert.equal(checkAddress('127.0.0.2', allowed).allowed, false);
    assert.deepEqual(checkAddress('fd00:1::5', allowed), { allowed: true });
    assert.equal(checkAddress('fd00:2::5', allowed).allowed, false);
    assert.equal(checkAddress('::1', allowed).allowed, false);
  });
});

// [url, code or null when allowed, substring of the message]
const URLS: Array<[string, 'validation_failed' | 'destination_forbidden' | null, string]> = [
  ['https://hooks.example.com/x', null, ''],
  ['https://hooks.example.com:8443/x?a=1', null, ''],
  ['https://8.8.8.8/', null, ''],
  ['https://[2606:4700:4700::1111]/', null, ''],
  ['https://127.0.0.1/', 'destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback'],
  ['https://2130706433/', 'destination_forbidden', 'loopback'],
  ['https://0x7f000001/', 'destination_forbidden', 'loopback'],
  ['https://0x7f.0.0.1/', 'destination_forbidden', 'loopback'],
  ['https://0177.0.0.1/', 'destination_forbidden', 'loopback'],
  ['https://127.1/', 'destination_forbidden', 'loopback'],
  ['https://0/', 'destination_forbidden', 'unspecified'],
  ['https://0251.0376.0251.0376/', 'destination_forbidden', 'link-local'],
  ['https://[::ffff:127.0.0.1]/', 'destination_forbidden', 'IPv4-mapped loopback'],
  ['https://[::ffff:7f00:1]:8080/', 'destination_forbidden', 'IPv4-mapped loopback'],
  ['https://[64:ff9b::a9fe:a9fe]/', 'destination_forbidden', 'NAT64 link-local'],
  ['https://[2002:a9fe:a9fe::]/', 'destination_forbidden', '6to4 link-local'],
  ['https://[::1]/', 'destination_forbidden', 'loopback'],
  ['https://[FE80::1]/', 'destination_forbidden', 'link-local'],
  ['https://169.254.169.254/latest/meta-data/', 'destination_forbidden', 'cloud metadata'],
  ['https://localhost/', 'destination_forbidden', 'local name'],
  ['https://LOCALHOST./', 'destination_forbidden', 'local name'],
  ['https://a.b.localhost/', 'destination_forbidden', 'local name'],
  ['https://metadata.google.internal/', 'destination_forbidden', 'local name'],
  ['https://foo.internal/', 'destination_forbidden', 'local name'],
  ['https://localhost.example.com/', null, ''],
  ['http://hooks.example.com/', 'destination_forbidden', 'must use https'],
  ['ftp://hooks.example.com/', 'destination_forbidden', 'must use https'],
  ['file:///etc/passwd', 'destination_forbidden', 'must use https'],
  ['javascript:alert(1)', 'destination_forbidden', 'must use https'],
  ['https://user@hooks.example.com/', 'destination_forbidden', 'user info'],
  ['https://user:s3cretpass@hooks.example.com/', 'destination_forbidden', 'user info'],
  ['/relative/path', 'validation_failed', 'absolute URL'],
  ['hooks.example.com', 'validation_failed', 'absolute URL'],
  ['', 'validation_failed', 'absolute URL'],
  ['https://', 'validation_failed', 'absolute URL'],
];

describe('checkUrl over a table of URLs', () => {
  for (const [raw, code, message] of URLS) {
    test(`${JSON.stringify(raw)} → ${code ?? 'allowed'}`, () => {
      const verdict = checkUrl(raw, HTTPS_ONLY);
      if (code === null) {
        assert.equal(verdict.allowed, true, JSON.stringify(verdict));
      } else {
        assert.equal(verdict.allowed, false);
        assert.ok(!verdict.allowed && verdict.code === code, JSON.stringify(verdict));
        assert.ok(!verdict.allowed && verdict.message.includes(message), JSON.stringify(verdict));
      }
    });
  }

  test('a password in the URL never appears in the message', () => {
    const verdict = checkUrl('https://user:s3cretpass@hooks.example.com/', HTTPS_ONLY);
    assert.ok(!JSON.stringify(verdict).includes('s3cretpass'));
  });

  test('http is allowed only with DELIVERY_ALLOW_HTTP, and still passes the address check', () => {
    const policy: DestinationPolicy = { allowHttp: true, allowedCidrs: [] };
    assert.equal(checkUrl('http://hooks.example.com/', policy).allowed, true);
    assert.equal(checkUrl('ftp://hooks.example.com/', policy).allowed, false);
    const local = checkUrl('http://127.0.0.1:9000/', policy);
    assert.ok(!local.allowed && local.code === 'destination_forbidden');
  });

  test('allowed CIDRs open literal addresses but not local names', () => {
    const policy: DestinationPolicy = { allowHttp: true, allowedCidrs: cidrs('127.0.0.1/32') };
    const verdict = checkUrl('http://127.0.0.1:9000/hook', policy);
    assert.ok(verdict.allowed && verdict.address === '127.0.0.1');
    assert.equal(checkUrl('http://127.0.0.2:9000/', policy).allowed, false);
    assert.equal(checkUrl('http://localhost:9000/', policy).allowed, false);
  });
});
