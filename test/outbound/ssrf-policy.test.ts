import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import ipaddr from 'ipaddr.js';
import {
  checkAddress,
  checkUrl,
  REFUSED_RANGES,
  type Cidr,
  type DestinationPolicy,
} from '../../src/outbound/ssrf-policy.js';

// Pure function calls only: nothing here resolves a name or opens a connection.
const HTTPS_ONLY: DestinationPolicy = { allowHttp: false, allowedCidrs: [] };
const WITH_HTTP: DestinationPolicy = { allowHttp: true, allowedCidrs: [] };
const cidrs = (...list: string[]): Cidr[] => list.map((c) => ipaddr.parseCIDR(c));

// [address, refused range (a substring of the verdict's range), or null when allowed]
const ADDRESSES: Array<[string, string | null]> = [
  // IPv4, every range of the table, at its edges where an edge is easy to get wrong
  ['0.0.0.0', 'unspecified, "this network" (0.0.0.0/8)'],
  ['0.1.2.3', 'unspecified, "this network" (0.0.0.0/8)'],
  ['10.0.0.1', 'private (10.0.0.0/8)'],
  ['10.255.255.255', 'private (10.0.0.0/8)'],
  ['100.64.0.1', 'carrier-grade NAT (100.64.0.0/10)'],
  ['100.127.255.254', 'carrier-grade NAT (100.64.0.0/10)'],
  ['127.0.0.1', 'loopback (127.0.0.0/8)'],
  ['127.255.0.9', 'loopback (127.0.0.0/8)'],
  ['169.254.169.254', 'link-local, cloud metadata (169.254.0.0/16)'],
  ['169.254.0.1', 'link-local, cloud metadata (169.254.0.0/16)'],
  ['172.16.0.1', 'private (172.16.0.0/12)'],
  ['172.31.255.255', 'private (172.16.0.0/12)'],
  ['192.0.0.8', 'reserved, IETF protocol assignments (192.0.0.0/24)'],
  ['192.0.2.10', 'documentation (192.0.2.0/24)'],
  ['192.88.99.1', 'reserved, 6to4 relay anycast (192.88.99.0/24)'],
  ['192.168.1.1', 'private (192.168.0.0/16)'],
  ['198.18.0.1', 'reserved, benchmarking (198.18.0.0/15)'],
  ['198.19.255.255', 'reserved, benchmarking (198.18.0.0/15)'],
  ['198.51.100.7', 'documentation (198.51.100.0/24)'],
  ['203.0.113.7', 'documentation (203.0.113.0/24)'],
  ['224.0.0.1', 'multicast (224.0.0.0/4)'],
  ['239.255.255.250', 'multicast (224.0.0.0/4)'],
  ['240.0.0.1', 'reserved (240.0.0.0/4)'],
  ['255.255.255.254', 'reserved (240.0.0.0/4)'],
  ['255.255.255.255', 'broadcast (255.255.255.255/32)'],
  // IPv4 public, including the neighbours of refused ranges
  ['8.8.8.8', null],
  ['1.1.1.1', null],
  ['93.184.215.14', null],
  ['9.255.255.255', null],
  ['11.0.0.0', null],
  ['100.63.255.255', null],
  ['100.128.0.1', null],
  ['126.255.255.255', null],
  ['128.0.0.0', null],
  ['172.15.255.255', null],
  ['172.32.0.1', null],
  ['192.0.3.1', null],
  ['198.17.255.255', null],
  ['198.20.0.0', null],
  ['223.255.255.255', null],
  // IPv6, every range of the table
  ['::', 'unspecified (::/128)'],
  ['::1', 'loopback (::1/128)'],
  ['[::1]', 'loopback (::1/128)'],
  ['0:0:0:0:0:0:0:1', 'loopback (::1/128)'],
  ['64:ff9b:1::1', 'private, local-use NAT64 (64:ff9b:1::/48)'],
  ['::7f00:1', 'reserved, deprecated IPv4-compatible (::/96)'],
  ['::808:808', 'reserved, deprecated IPv4-compatible (::/96)'],
  // RFC 4291 reads ::a.b.c.d as IPv4-compatible, not IPv4-mapped (ipaddr.js alone gets this wrong)
  ['::8.8.8.8', 'reserved, deprecated IPv4-compatible (::/96)'],
  ['::127.0.0.1', 'reserved, deprecated IPv4-compatible (::/96)'],
  ['100::1', 'reserved, discard-only (100::/64)'],
  ['2001:db8::1', 'documentation (2001:db8::/32)'],
  ['2001:db8:ffff::1', 'documentation (2001:db8::/32)'],
  ['3fff::1', 'documentation (3fff::/20)'],
  ['3fff:fff::1', 'documentation (3fff::/20)'],
  ['2001::1', 'reserved, IETF protocol assignments incl. Teredo (2001::/23)'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo (2001::/23)'],
  ['2001:1ff::1', 'reserved, IETF protocol assignments incl. Teredo (2001::/23)'],
  ['fc00::1', 'private, unique local (fc00::/7)'],
  ['fd12:3456::1', 'private, unique local (fc00::/7)'],
  ['fe80::1', 'link-local (fe80::/10)'],
  ['febf::1', 'link-local (fe80::/10)'],
  ['fec0::1', 'reserved, deprecated site-local (fec0::/10)'],
  ['ff02::1', 'multicast (ff00::/8)'],
  ['ff05::1:3', 'multicast (ff00::/8)'],
  ['1fff::1', 'reserved, outside global unicast 2000::/3 (::/3)'],
  ['4000::1', 'reserved, outside global unicast 2000::/3 (4000::/2)'],
  ['5f00::1', 'reserved, outside global unicast 2000::/3 (4000::/2)'],
  ['8000::1', 'reserved, outside global unicast 2000::/3 (8000::/1)'],
  ['::ffff:0:7f00:1', 'reserved, outside global unicast 2000::/3 (::/3)'],
  // IPv4-mapped: judged by the IPv4 address they carry, in every notation
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback (127.0.0.0/8)'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback (127.0.0.0/8)'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped loopback (127.0.0.0/8)'],
  ['::FFFF:A9FE:A9FE', 'IPv4-mapped link-local, cloud metadata (169.254.0.0/16)'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private (10.0.0.0/8)'],
  ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
  ['::ffff:255.255.255.255', 'IPv4-mapped broadcast'],
  ['::ffff:8.8.8.8', null],
  ['::ffff:808:808', null],
  // NAT64 (64:ff9b::/96): the IPv4 address is the last 32 bits
  ['64:ff9b::a9fe:a9fe', 'NAT64 link-local, cloud metadata (169.254.0.0/16)'],
  ['64:ff9b::127.0.0.1', 'NAT64 loopback (127.0.0.0/8)'],
  ['64:FF9B::C0A8:0101', 'NAT64 private (192.168.0.0/16)'],
  ['64:ff9b::808:808', null],
  ['64:ff9b::1.1.1.1', null],
  // 6to4 (2002::/16): the IPv4 address is bits 16-47
  ['2002:a9fe:a9fe::', '6to4 link-local, cloud metadata (169.254.0.0/16)'],
  ['2002:7f00:1::1', '6to4 loopback (127.0.0.0/8)'],
  ['2002:c0a8:101::', '6to4 private (192.168.0.0/16)'],
  ['2002:6440:1::', '6to4 carrier-grade NAT (100.64.0.0/10)'],
  ['2002:808:808::', null],
  ['2002:808:808:1:2:3:4:5', null],
  // IPv6 public
  ['2606:4700:4700::1111', null],
  ['2001:4860:4860::8888', null],
  ['[2001:4860:4860::8888]', null],
  ['2001:200::1', null],
  ['3ffe::1', null],
  // zone ids are ignored, whatever their spelling
  ['fe80::1%eth0', 'link-local (fe80::/10)'],
  ['fe80::1%eth0.5', 'link-local (fe80::/10)'],
  ['[fe80::1%25eth0]', 'link-local (fe80::/10)'],
  ['::1%lo', 'loopback (::1/128)'],
  // not addresses: refused, never guessed at
  ['not-an-address', 'not an IP address'],
  ['', 'not an IP address'],
  ['localhost', 'not an IP address'],
  ['2130706433', 'not an IP address'],
  ['0x7f.0.0.1', 'not an IP address'],
  ['0177.0.0.1', 'not an IP address'],
  ['127.1', 'not an IP address'],
  ['010.0.0.1', 'not an IP address'],
  ['256.1.1.1', 'not an IP address'],
  [' 8.8.8.8', 'not an IP address'],
  ['::ffff:0x7f.0.0.1', 'not an IP address'],
  ['::ffff:010.0.0.1', 'not an IP address'],
  ['1::2::3', 'not an IP address'],
  ['::12345', 'not an IP address'],
];

describe('checkAddress over a table of address vectors', () => {
  for (const [address, refused] of ADDRESSES) {
    test(`${JSON.stringify(address)} is ${refused === null ? 'allowed' : `refused: ${refused}`}`, () => {
      const verdict = checkAddress(address, []);
      if (refused === null) {
        assert.deepEqual(verdict, { allowed: true }, `${address} is refused though it is public`);
      } else {
        assert.ok(!verdict.allowed, `expected a refusal, got ${JSON.stringify(verdict)}`);
        assert.ok(verdict.range.includes(refused), `range ${JSON.stringify(verdict.range)}`);
      }
    });
  }
});

// [allowed CIDRs, address, allowed?]
const EXEMPTIONS: Array<[string[], string, boolean]> = [
  [['127.0.0.1/32'], '127.0.0.1', true],
  [['127.0.0.1/32'], '127.0.0.2', false],
  [['127.0.0.1/32'], '::ffff:127.0.0.1', true],
  [['127.0.0.1/32'], '::ffff:7f00:2', false],
  [['127.0.0.1/32'], '::1', false],
  [['10.0.0.0/8'], '10.20.30.40', true],
  [['10.0.0.0/8'], '11.0.0.1', true], // public anyway
  [['10.0.0.0/8'], '192.168.0.1', false],
  [['fd00:1::/32'], 'fd00:1::5', true],
  [['fd00:1::/32'], 'fd00:2::5', false],
  [['fd00:1::/32'], '10.0.0.1', false],
  [['::1/128'], '[::1]', true],
  [['::1/128'], '127.0.0.1', false],
  [['fe80::/10'], 'fe80::1%eth0', true],
  [['169.254.169.254/32', '::1/128'], '169.254.169.254', true],
  [['169.254.169.254/32', '::1/128'], '169.254.169.253', false],
];

describe('allowedCidrs exempts exactly the listed ranges', () => {
  for (const [allowed, address, expected] of EXEMPTIONS) {
    test(`${address} with allowed ${allowed.join(', ')} is ${expected ? 'allowed' : 'refused'}`, () => {
      assert.equal(
        checkAddress(address, cidrs(...allowed)).allowed,
        expected,
        `${address} with allowed ${allowed.join(', ')}: wrong verdict`,
      );
    });
  }

  test('an exemption does not make a string that is not an address acceptable', () => {
    assert.deepEqual(
      checkAddress('localhost', cidrs('0.0.0.0/0', '::/0')),
      {
        allowed: false,
        range: 'not an IP address',
      },
      'a name passes the address check once every range is exempted',
    );
  });
});

type Code = 'validation_failed' | 'destination_forbidden';
// [url, null when allowed, else [code, a substring of the message]]
const URLS: Array<[string, null | [Code, string]]> = [
  // allowed
  ['https://hooks.example.com/x', null],
  ['https://hooks.example.com:8443/x?a=1#f', null],
  ['https://hooks.example.com:1/', null],
  ['HTTPS://Hooks.Example.COM/', null],
  ['https://8.8.8.8/', null],
  ['https://[2606:4700:4700::1111]/', null],
  ['https://[::ffff:8.8.8.8]/', null],
  ['https://[64:ff9b::808:808]/', null],
  ['https://[2002:808:808::]/', null],
  ['https://localhost.example.com/', null],
  ['https://internal.example.com/', null],
  ['https://example.internal.com/', null],
  ['https://mylocalhost/', null],
  // IPv4 literals in every notation, normalised by URL parsing then checked
  [
    'https://127.0.0.1/',
    ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback (127.0.0.0/8)'],
  ],
  ['https://127.0.0.1:8443/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://127.0.0.1./', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://2130706433/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://0x7f000001/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://0X7F000001/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://0x7f.0.0.1/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://0x7f.1/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://0177.0.0.1/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://127.1/', ['destination_forbidden', 'address 127.0.0.1 is in a refused range: loopback']],
  ['https://0/', ['destination_forbidden', 'address 0.0.0.0 is in a refused range: unspecified']],
  ['https://0251.0376.0251.0376/', ['destination_forbidden', 'address 169.254.169.254 is in a refused']],
  ['https://169.254.169.254/latest/meta-data/', ['destination_forbidden', 'cloud metadata (169.254.0.0/16)']],
  ['https://10.1.2.3/', ['destination_forbidden', 'address 10.1.2.3 is in a refused range: private']],
  ['https://100.100.100.200/', ['destination_forbidden', 'carrier-grade NAT']],
  ['https://255.255.255.255/', ['destination_forbidden', 'broadcast']],
  ['https://203.0.113.9/', ['destination_forbidden', 'documentation (203.0.113.0/24)']],
  // IPv6 literals, including the transition forms of refused IPv4 addresses
  ['https://[::1]/', ['destination_forbidden', 'address ::1 is in a refused range: loopback (::1/128)']],
  ['https://[::]/', ['destination_forbidden', 'address :: is in a refused range: unspecified']],
  ['https://[::ffff:127.0.0.1]/', ['destination_forbidden', 'address ::ffff:7f00:1 is in a refused range']],
  ['https://[::ffff:7f00:1]:8080/', ['destination_forbidden', 'IPv4-mapped loopback (127.0.0.0/8)']],
  ['https://[::FFFF:A9FE:A9FE]/', ['destination_forbidden', 'IPv4-mapped link-local, cloud metadata']],
  ['https://[64:ff9b::a9fe:a9fe]/', ['destination_forbidden', 'NAT64 link-local, cloud metadata']],
  ['https://[64:ff9b::169.254.169.254]/', ['destination_forbidden', 'NAT64 link-local, cloud metadata']],
  ['https://[2002:a9fe:a9fe::]/', ['destination_forbidden', '6to4 link-local, cloud metadata']],
  ['https://[::127.0.0.1]/', ['destination_forbidden', 'deprecated IPv4-compatible']],
  ['https://[FE80::1]/', ['destination_forbidden', 'address fe80::1 is in a refused range: link-local']],
  ['https://[fd00:ec2::254]/', ['destination_forbidden', 'private, unique local (fc00::/7)']],
  ['https://[2001:db8::1]/', ['destination_forbidden', 'documentation (2001:db8::/32)']],
  ['https://[ff02::1]/', ['destination_forbidden', 'multicast']],
  ['https://[fe80::1%25eth0]/', ['validation_failed', 'must be an absolute URL']], // WHATWG URLs have no zone ids
  // local names, case-insensitive, trailing dots ignored
  ['https://localhost/', ['destination_forbidden', 'host localhost is not allowed (local name)']],
  ['https://LOCALHOST./', ['destination_forbidden', 'host localhost is not allowed (local name)']],
  ['https://localhost../', ['destination_forbidden', 'host localhost is not allowed (local name)']],
  ['https://localhost:8080/', ['destination_forbidden', 'local name']],
  ['https://a.b.localhost/', ['destination_forbidden', 'host a.b.localhost is not allowed (local name)']],
  ['https://api.LocalHost/', ['destination_forbidden', 'local name']],
  ['https://%6c%6fcalhost/', ['destination_forbidden', 'host localhost is not allowed (local name)']],
  ['https://metadata.google.internal/', ['destination_forbidden', 'host metadata.google.internal is not']],
  ['https://Metadata.Google.Internal./computeMetadata/v1/', ['destination_forbidden', 'local name']],
  ['https://foo.internal/', ['destination_forbidden', 'host foo.internal is not allowed (local name)']],
  ['https://db.corp.internal/', ['destination_forbidden', 'local name']],
  // schemes
  ['http://hooks.example.com/', ['destination_forbidden', 'must use https']],
  ['ftp://hooks.example.com/', ['destination_forbidden', 'must use https']],
  ['file:///etc/passwd', ['destination_forbidden', 'must use https']],
  ['javascript:alert(1)', ['destination_forbidden', 'must use https']],
  ['gopher://127.0.0.1:6379/_INFO', ['destination_forbidden', 'must use https']],
  ['ws://hooks.example.com/', ['destination_forbidden', 'must use https']],
  ['data:text/plain,hello', ['destination_forbidden', 'must use https']],
  // user info
  ['https://user@hooks.example.com/', ['destination_forbidden', 'must not contain user info']],
  ['https://:pw@hooks.example.com/', ['destination_forbidden', 'must not contain user info']],
  ['https://user:s3cretpass@hooks.example.com/', ['destination_forbidden', 'must not contain user info']],
  ['https://hooks.example.com@127.0.0.1/', ['destination_forbidden', 'must not contain user info']],
  // not absolute URLs
  ['/relative/path', ['validation_failed', 'must be an absolute URL']],
  ['hooks.example.com', ['validation_failed', 'must be an absolute URL']],
  ['//hooks.example.com/x', ['validation_failed', 'must be an absolute URL']],
  ['', ['validation_failed', 'must be an absolute URL']],
  ['https://', ['validation_failed', 'must be an absolute URL']],
  ['https://exa mple.com/', ['validation_failed', 'must be an absolute URL']],
  ['https://1.2.3.256/', ['validation_failed', 'must be an absolute URL']],
  ['not a url at all', ['validation_failed', 'must be an absolute URL']],
];

describe('checkUrl over a table of URL vectors (https only, no exemptions)', () => {
  for (const [raw, expected] of URLS) {
    const outcome = expected === null ? 'allowed' : `${expected[0]}: ${expected[1]}`;
    test(`${JSON.stringify(raw)} is ${outcome}`, () => {
      const verdict = checkUrl(raw, HTTPS_ONLY);
      if (expected === null) {
        assert.ok(verdict.allowed, `expected allowed, got ${JSON.stringify(verdict)}`);
      } else {
        assert.ok(!verdict.allowed, `expected a refusal, got ${JSON.stringify(verdict)}`);
        assert.equal(verdict.code, expected[0], `${raw}: refused with the wrong error code`);
        assert.ok(verdict.message.includes(expected[1]), `message ${JSON.stringify(verdict.message)}`);
      }
    });
  }
});

describe('checkUrl details', () => {
  test('an allowed name keeps address null and returns the parsed URL', () => {
    const verdict = checkUrl('https://Hooks.Example.com:8443/in?x=1', HTTPS_ONLY);
    assert.ok(verdict.allowed, 'an ordinary https URL is refused');
    assert.equal(
      verdict.address,
      null,
      'a URL with a host name carries an address as if it had been resolved',
    );
    assert.equal(
      verdict.url.href,
      'https://hooks.example.com:8443/in?x=1',
      'the allowed URL is not returned normalised',
    );
  });

  test('an allowed IP literal returns the normalised address without brackets', () => {
    const v4 = checkUrl('https://8.8.8.8/', HTTPS_ONLY);
    assert.ok(
      v4.allowed && v4.address === '8.8.8.8',
      'an IPv4 literal is refused or its address not returned as written',
    );
    const v6 = checkUrl('https://[2606:4700:4700:0:0:0:0:1111]/', HTTPS_ONLY);
    assert.ok(
      v6.allowed && v6.address === '2606:4700:4700::1111',
      'an IPv6 literal is refused or its address not returned compressed without brackets',
    );
  });

  test('a password or user name in the URL never appears in the verdict', () => {
    for (const raw of [
      'https://alice:s3cretpass@hooks.example.com/',
      'https://alice:s3cretpass@127.0.0.1/',
    ]) {
      const verdict = checkUrl(raw, WITH_HTTP);
      assert.ok(!verdict.allowed, 'a URL with user info is allowed');
      assert.equal(
        verdict.message,
        'must not contain user info',
        'a URL with user info is refused for some other reason',
      );
      assert.ok(
        !JSON.stringify(verdict).includes('s3cretpass'),
        'the refusal shows the password from the URL',
      );
      assert.ok(!JSON.stringify(verdict).includes('alice'), 'the refusal shows the user name from the URL');
    }
  });

  test('http is refused by default and allowed with allowHttp, still subject to the address check', () => {
    assert.equal(
      checkUrl('http://hooks.example.com/', WITH_HTTP).allowed,
      true,
      'plain http is refused although allowHttp is set',
    );
    assert.equal(
      checkUrl('https://hooks.example.com/', WITH_HTTP).allowed,
      true,
      'https is refused once allowHttp is set',
    );
    const ftp = checkUrl('ftp://hooks.example.com/', WITH_HTTP);
    assert.ok(
      !ftp.allowed && ftp.code === 'destination_forbidden' && ftp.message === 'must use http or https',
      'ftp is not refused for the scheme when http is allowed',
    );
    const decimal = checkUrl('http://2130706433/', WITH_HTTP);
    assert.ok(
      !decimal.allowed && decimal.code === 'destination_forbidden',
      'a decimal loopback address passes over http',
    );
    assert.match(
      decimal.message,
      /^address 127\.0\.0\.1 is in a refused range: loopback \(127\.0\.0\.0\/8\)$/,
      'the refusal of a decimal loopback address does not name 127.0.0.1 and its range',
    );
    const name = checkUrl('http://localhost:3000/', WITH_HTTP);
    assert.ok(!name.allowed && name.message.includes('local name'), 'localhost passes over http');
  });

  test('allowed CIDRs open listed literal addresses but never local names', () => {
    const policy: DestinationPolicy = { allowHttp: true, allowedCidrs: cidrs('127.0.0.1/32', 'fd00:1::/32') };
    const verdict = checkUrl('http://127.0.0.1:9000/hook', policy);
    assert.ok(
      verdict.allowed && verdict.address === '127.0.0.1',
      'an exempted loopback address is refused, or its address not returned',
    );
    assert.equal(
      checkUrl('http://2130706433:9000/', policy).allowed,
      true,
      'the exempted loopback address is refused when written in decimal',
    );
    assert.equal(
      checkUrl('http://[::ffff:127.0.0.1]:9000/', policy).allowed,
      true,
      'the exempted loopback address is refused when written IPv4-mapped',
    );
    assert.equal(
      checkUrl('http://127.0.0.2:9000/', policy).allowed,
      false,
      'a loopback address outside the exempted /32 is allowed',
    );
    assert.equal(
      checkUrl('http://[fd00:1::8]/', policy).allowed,
      true,
      'an address in the exempted IPv6 range is refused',
    );
    assert.equal(
      checkUrl('http://[fd00:2::8]/', policy).allowed,
      false,
      'an IPv6 address outside the exempted range is allowed',
    );
    assert.equal(
      checkUrl('http://localhost:9000/', policy).allowed,
      false,
      'localhost is allowed because 127.0.0.1 is exempted',
    );
  });
});

describe('REFUSED_RANGES', () => {
  test('every row is a parseable CIDR with a name, and the table covers every range of docs/api/connections.md', () => {
    for (const { cidr, name } of REFUSED_RANGES) {
      assert.doesNotThrow(() => ipaddr.parseCIDR(cidr), `${cidr}: a refused range that cannot be parsed`);
      assert.ok(name.length > 0, cidr);
    }
    const listed = new Set(REFUSED_RANGES.map((r) => r.cidr));
    for (const cidr of [
      '0.0.0.0/8',
      '10.0.0.0/8',
      '100.64.0.0/10',
      '127.0.0.0/8',
      '169.254.0.0/16',
      '172.16.0.0/12',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '192.88.99.0/24',
      '192.168.0.0/16',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '224.0.0.0/4',
      '240.0.0.0/4',
      '255.255.255.255/32',
      '::/128',
      '::1/128',
      '::ffff:0:0/96',
      '64:ff9b::/96',
      '64:ff9b:1::/48',
      '2002::/16',
      '::/96',
      '100::/64',
      '2001:db8::/32',
      '3fff::/20',
      '2001::/23',
      'fc00::/7',
      'fe80::/10',
      'fec0::/10',
      'ff00::/8',
    ]) {
      assert.ok(listed.has(cidr), `${cidr} is missing`);
    }
  });

  test('the network address of every row is refused (or judged by its IPv4 address)', () => {
    for (const { cidr } of REFUSED_RANGES) {
      const [network] = ipaddr.parseCIDR(cidr);
      const verdict = checkAddress(network.toString(), []);
      // 2002:: and 64:ff9b:: carry 0.0.0.0, and ::ffff:0:0 carries 0.0.0.0 too: all refused.
      assert.equal(verdict.allowed, false, `${cidr}: ${JSON.stringify(verdict)}`);
    }
  });
});
