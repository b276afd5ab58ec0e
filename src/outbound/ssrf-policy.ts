import ipaddr from 'ipaddr.js';

/**
 * The SSRF policy of contract §8, as pure functions: which URLs may be configured and which
 * addresses may be connected to. Configuration checks the URL (scheme, user info, names and literal
 * addresses); sending resolves the name, checks every address with `checkAddress`, and connects to a
 * checked one, so DNS is never trusted twice. The ranges are an explicit table rather than ipaddr's
 * `range()` names, so every refused range can be read here and named in an error.
 */

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface DestinationPolicy {
  allowHttp: boolean;
  allowedCidrs: Cidr[];
}

export type AddressVerdict = { allowed: true } | { allowed: false; range: string };

export type UrlVerdict =
  | { allowed: true; url: URL; /** set when the host is an IP literal */ address: string | null }
  | { allowed: false; code: 'validation_failed' | 'destination_forbidden'; message: string };

/** Refused ranges, most specific first; `embedded` ranges are judged by the IPv4 address they carry. */
const TABLE: ReadonlyArray<{ cidr: string; name: string; embedded?: (ip: ipaddr.IPv6) => ipaddr.IPv4 }> = [
  { cidr: '0.0.0.0/8', name: 'unspecified ("this network")' },
  { cidr: '10.0.0.0/8', name: 'private' },
  { cidr: '100.64.0.0/10', name: 'carrier-grade NAT' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local (cloud metadata)' },
  { cidr: '172.16.0.0/12', name: 'private' },
  { cidr: '192.0.0.0/24', name: 'IETF protocol assignments (reserved)' },
  { cidr: '192.0.2.0/24', name: 'documentation' },
  { cidr: '192.88.99.0/24', name: '6to4 relay anycast (reserved)' },
  { cidr: '192.168.0.0/16', name: 'private' },
  { cidr: '198.18.0.0/15', name: 'benchmarking (reserved)' },
  { cidr: '198.51.100.0/24', name: 'documentation' },
  { cidr: '203.0.113.0/24', name: 'documentation' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '255.255.255.255/32', name: 'broadcast' },
  { cidr: '240.0.0.0/4', name: 'reserved' },
  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped', embedded: (ip) => lastFour(ip) },
  { cidr: '64:ff9b::/96', name: 'NAT64', embedded: (ip) => lastFour(ip) },
  { cidr: '2002::/16', name: '6to4', embedded: (ip) => bytesToIPv4(ip.toByteArray().slice(2, 6)) },
  { cidr: '64:ff9b:1::/48', name: 'local-use NAT64 (private)' },
  { cidr: '::/96', name: 'IPv4-compatible (deprecated, reserved)' },
  { cidr: '100::/64', name: 'discard-only (reserved)' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '2001::/23', name: 'IETF protocol assignments incl. Teredo (reserved)' },
  { cidr: 'fc00::/7', name: 'unique local (private)' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'site-local (deprecated)' },
  { cidr: 'ff00::/8', name: 'multicast' },
];

const bytesToIPv4 = (bytes: number[]): ipaddr.IPv4 => new ipaddr.IPv4(bytes);
const lastFour = (ip: ipaddr.IPv6): ipaddr.IPv4 => bytesToIPv4(ip.toByteArray().slice(12, 16));

const PARSED = TABLE.map((entry) => ({ ...entry, range: ipaddr.parseCIDR(entry.cidr) }));
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

export const REFUSED_RANGES: ReadonlyArray<{ cidr: string; name: string }> = [
  ...TABLE.map(({ cidr, name }) => ({ cidr, name })),
  { cidr: '(outside 2000::/3)', name: 'not globally routable (reserved)' },
];

function exempted(ip: ipaddr.IPv4 | ipaddr.IPv6, allowedCidrs: Cidr[]): boolean {
  const forms: Array<ipaddr.IPv4 | ipaddr.IPv6> = [ip];
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) {
    forms.push((ip as ipaddr.IPv6).toIPv4Address());
  }
  return allowedCidrs.some(([range, bits]) =>
    forms.some((form) => form.kind() === range.kind() && form.match(range, bits)),
  );
}

function judge(ip: ipaddr.IPv4 | ipaddr.IPv6): AddressVerdict {
  for (const entry of PARSED) {
    const [range, bits] = entry.range;
    if (ip.kind() !== range.kind() || !ip.match(range, bits)) continue;
    if (entry.embedded) {
      const inner = entry.embedded(ip as ipaddr.IPv6);
      const verdict = judge(inner);
      return verdict.allowed ? verdict : { allowed: false, range: `${entry.name} ${verdict.range}` };
    }
    return { allowed: false, range: `${entry.name} (${entry.cidr})` };
  }
  if (ip.kind() === 'ipv6' && !ip.match(GLOBAL_UNICAST_V6)) {
    return { allowed: false, range: 'not globally routable (outside 2000::/3)' };
  }
  return { allowed: true };
}

/** Verdict for one IP address literal (dotted IPv4, or IPv6 with or without brackets and zone). */
export function checkAddress(address: string, allowedCidrs: Cidr[]): AddressVerdict {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // Only canonical dotted quads: other IPv4 notations reach here already normalised by URL parsing.
    if (!ipaddr.IPv6.isValid(bare) && !ipaddr.IPv4.isValidFourPartDecimal(bare)) throw new Error('not an IP');
    ip = ipaddr.parse(bare);
  } catch {
    return { allowed: false, range: 'not an IP address' };
  }
  if (exempted(ip, allowedCidrs)) return { allowed: true };
  return judge(ip);
}

const LOCAL_NAMES = [/^localhost$/, /\.localhost$/, /^metadata\.google\.internal$/, /\.internal$/];

/** Verdict for a URL a user configures. */
export function checkUrl(raw: string, policy: DestinationPolicy): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { allowed: false, code: 'validation_failed', message: 'must be an absolute URL' };
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    const message = policy.allowHttp ? 'must use http or https' : 'must use https';
    return { allowed: false, code: 'destination_forbidden', message };
  }
  if (url.username || url.password) {
    return { allowed: false, code: 'destination_forbidden', message: 'must not contain user info' };
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, '');
  if (host === '') return { allowed: false, code: 'validation_failed', message: 'must be an absolute URL' };
  const literal = host.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(host);
  if (!literal) {
    if (LOCAL_NAMES.some((pattern) => pattern.test(host))) {
      return { allowed: false, code: 'destination_forbidden', message: `host ${host} is a local name` };
    }
    return { allowed: true, url, address: null };
  }
  const address = host.replace(/^\[(.*)\]$/, '$1');
  const verdict = checkAddress(address, policy.allowedCidrs);
  if (!verdict.allowed) {
    return {
      allowed: false,
      code: 'destination_forbidden',
      message: `address ${address} is in a refused range: ${verdict.range}`,
    };
  }
  return { allowed: true, url, address };
}
