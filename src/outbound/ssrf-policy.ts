import ipaddr from 'ipaddr.js';

/**
 * The SSRF policy of docs/api/connections.md, the only one in the service, as pure functions: no DNS, no
 * network. Configuration time calls `checkUrl` on every URL a user gives (scheme, user info, local
 * names, literal addresses). Send time resolves the name itself, checks every resolved address
 * with `checkAddress` and connects to one it checked (pinning), so no DNS answer is trusted twice
 * and a rebinding name cannot slip past. Resolving here would be useless for that reason (the
 * answer may change before the send) and would make configuration depend on the network.
 *
 * The refused ranges are an explicit table rather than ipaddr.js `range()` names: every range the policy
 * refuses (docs/api/connections.md) can be read (and reviewed) below, errors name the exact CIDR that matched, and a change
 * in a library's classification cannot quietly open a range. IPv6 outside global unicast
 * (2000::/3) is refused too, as the three CIDRs that make up the rest of the address space.
 */

export type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

export interface DestinationPolicy {
  allowHttp: boolean;
  allowedCidrs: Cidr[];
}

/** Verdict for one IP address literal (IPv4 in dotted decimal, or IPv6, with or without brackets). */
export type AddressVerdict = { allowed: true } | { allowed: false; range: string };

/** Verdict for a URL given by a user. */
export type UrlVerdict =
  | { allowed: true; url: URL; /** set when the host is an IP literal */ address: string | null }
  | { allowed: false; code: 'validation_failed' | 'destination_forbidden'; message: string };

interface Row {
  cidr: string;
  name: string;
  /** Transition forms: judged by the IPv4 address they carry, refused iff that one is. */
  embedded?: { label: string; ipv4: (bytes: number[]) => number[] };
}

const embedded = (label: string, ipv4: (bytes: number[]) => number[]): Row['embedded'] => ({ label, ipv4 });
const NOT_GLOBAL = 'reserved, outside global unicast 2000::/3';

/** First match wins, so a range comes before any wider range that contains it. */
const TABLE: readonly Row[] = [
  { cidr: '0.0.0.0/8', name: 'unspecified, "this network"' },
  { cidr: '10.0.0.0/8', name: 'private' },
  { cidr: '100.64.0.0/10', name: 'carrier-grade NAT' },
  { cidr: '127.0.0.0/8', name: 'loopback' },
  { cidr: '169.254.0.0/16', name: 'link-local, cloud metadata' },
  { cidr: '172.16.0.0/12', name: 'private' },
  { cidr: '192.0.0.0/24', name: 'reserved, IETF protocol assignments' },
  { cidr: '192.0.2.0/24', name: 'documentation' },
  { cidr: '192.88.99.0/24', name: 'reserved, 6to4 relay anycast' },
  { cidr: '192.168.0.0/16', name: 'private' },
  { cidr: '198.18.0.0/15', name: 'reserved, benchmarking' },
  { cidr: '198.51.100.0/24', name: 'documentation' },
  { cidr: '203.0.113.0/24', name: 'documentation' },
  { cidr: '224.0.0.0/4', name: 'multicast' },
  { cidr: '255.255.255.255/32', name: 'broadcast' },
  { cidr: '240.0.0.0/4', name: 'reserved' },

  { cidr: '::/128', name: 'unspecified' },
  { cidr: '::1/128', name: 'loopback' },
  {
    cidr: '::ffff:0:0/96',
    name: 'IPv4-mapped, refused when its IPv4 address is',
    embedded: embedded('IPv4-mapped', (bytes) => bytes.slice(12, 16)),
  },
  {
    cidr: '64:ff9b::/96',
    name: 'NAT64, refused when its IPv4 address is',
    embedded: embedded('NAT64', (bytes) => bytes.slice(12, 16)),
  },
  {
    cidr: '2002::/16',
    name: '6to4, refused when its IPv4 address is',
    embedded: embedded('6to4', (bytes) => bytes.slice(2, 6)),
  },
  { cidr: '64:ff9b:1::/48', name: 'private, local-use NAT64' },
  { cidr: '::/96', name: 'reserved, deprecated IPv4-compatible' },
  { cidr: '100::/64', name: 'reserved, discard-only' },
  { cidr: '2001:db8::/32', name: 'documentation' },
  { cidr: '3fff::/20', name: 'documentation' },
  { cidr: '2001::/23', name: 'reserved, IETF protocol assignments incl. Teredo' },
  { cidr: 'fc00::/7', name: 'private, unique local' },
  { cidr: 'fe80::/10', name: 'link-local' },
  { cidr: 'fec0::/10', name: 'reserved, deprecated site-local' },
  { cidr: 'ff00::/8', name: 'multicast' },
  // Everything that is not 2000::/3 global unicast.
  { cidr: '::/3', name: NOT_GLOBAL },
  { cidr: '4000::/2', name: NOT_GLOBAL },
  { cidr: '8000::/1', name: NOT_GLOBAL },
];

/** The explicit range table, for docs and error details. */
export const REFUSED_RANGES: ReadonlyArray<{ cidr: string; name: string }> = TABLE.map(({ cidr, name }) => ({
  cidr,
  name,
}));

type Address = ipaddr.IPv4 | ipaddr.IPv6;

const PARSED = TABLE.map((row) => ({ row, range: ipaddr.parseCIDR(row.cidr) }));

function inRange(ip: Address, [range, bits]: Cidr): boolean {
  if (ip instanceof ipaddr.IPv4) return range instanceof ipaddr.IPv4 && ip.match(range, bits);
  return range instanceof ipaddr.IPv6 && ip.match(range, bits);
}

function judge(ip: Address): AddressVerdict {
  for (const { row, range } of PARSED) {
    if (!inRange(ip, range)) continue;
    if (row.embedded && ip instanceof ipaddr.IPv6) {
      const inner = judge(new ipaddr.IPv4(row.embedded.ipv4(ip.toByteArray())));
      return inner.allowed ? inner : { allowed: false, range: `${row.embedded.label} ${inner.range}` };
    }
    return { allowed: false, range: `${row.name} (${row.cidr})` };
  }
  return { allowed: true };
}

function exempted(ip: Address, allowedCidrs: Cidr[]): boolean {
  const forms: Address[] = [ip];
  if (ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress()) forms.push(ip.toIPv4Address());
  return allowedCidrs.some((cidr) => forms.some((form) => inRange(form, cidr)));
}

const DOTTED_TAIL = /^(.*:)([^:]*\.[^:]*)$/;

/**
 * Parses dotted-decimal IPv4 and IPv6 only. Other IPv4 notations (`0x7f.1`, `0177.0.0.1`,
 * `2130706433`) are read differently by different parsers, so they are not addresses here (URL
 * parsing has already normalised them). An IPv6 dotted tail is rewritten to hex first: ipaddr.js
 * would read `::a.b.c.d` (IPv4-compatible, deprecated) as `::ffff:a.b.c.d` (IPv4-mapped).
 * Also the parser of client addresses and TRUST_PROXY, so every address is read one way.
 */
export function parseIpLiteral(address: string): Address | null {
  const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  let v6 = bare;
  const tail = DOTTED_TAIL.exec(bare);
  if (tail) {
    const [, head = '', dotted = ''] = tail;
    if (!ipaddr.IPv4.isValidFourPartDecimal(dotted)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(dotted).octets;
    v6 = `${head}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  return ipaddr.IPv6.isValid(v6) ? ipaddr.IPv6.parse(v6) : null;
}

/** Verdict for one IP address literal (IPv4 in dotted decimal, or IPv6, with or without brackets). */
export function checkAddress(address: string, allowedCidrs: Cidr[]): AddressVerdict {
  const ip = parseIpLiteral(address);
  if (ip === null) return { allowed: false, range: 'not an IP address' };
  if (exempted(ip, allowedCidrs)) return { allowed: true };
  return judge(ip);
}

const LOCAL_NAMES = [/^localhost$/, /\.localhost$/, /^metadata\.google\.internal$/, /\.internal$/];

const refuse = (code: 'validation_failed' | 'destination_forbidden', message: string): UrlVerdict => ({
  allowed: false,
  code,
  message,
});

/** Verdict for a URL given by a user. Messages never quote the URL, so never its user info. */
export function checkUrl(raw: string, policy: DestinationPolicy): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('validation_failed', 'must be an absolute URL');
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return refuse('destination_forbidden', policy.allowHttp ? 'must use http or https' : 'must use https');
  }
  if (url.username !== '' || url.password !== '') {
    return refuse('destination_forbidden', 'must not contain user info');
  }
  // http(s) URLs always have a host; WHATWG parsing has lower-cased it and normalised every IPv4
  // notation to dotted decimal and IPv6 to its bracketed compressed form.
  if (url.hostname.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(url.hostname)) {
    const address = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const verdict = checkAddress(address, policy.allowedCidrs);
    if (!verdict.allowed) {
      return refuse('destination_forbidden', `address ${address} is in a refused range: ${verdict.range}`);
    }
    return { allowed: true, url, address };
  }
  const name = url.hostname.toLowerCase().replace(/\.+$/, '');
  if (name === '' || LOCAL_NAMES.some((pattern) => pattern.test(name))) {
    return refuse('destination_forbidden', `host ${name || url.hostname} is not allowed (local name)`);
  }
  return { allowed: true, url, address: null };
}

/**
 * Verdict for a broker's URL (contract §21) when a connection is created or edited: a scheme without
 * TLS (`plaintextSchemes`) only with DELIVERY_ALLOW_HTTP=true, and its host judged as a URL's host is
 * (`checkHost`: address ranges, other IPv4 notations, local names). The destination judges the resolved
 * address again at every connect; this answers the person at once instead of a failed attempt later.
 */
export function checkBrokerUrl(
  raw: string,
  plaintextSchemes: readonly string[],
  policy: DestinationPolicy,
): UrlVerdict {
  if (!URL.canParse(raw)) return refuse('validation_failed', 'must be an absolute URL');
  const url = new URL(raw);
  if (plaintextSchemes.includes(url.protocol) && !policy.allowHttp) {
    return refuse(
      'destination_forbidden',
      `${url.protocol} (no TLS) is refused unless DELIVERY_ALLOW_HTTP=true`,
    );
  }
  const verdict = checkHost(url.hostname, policy);
  return verdict.allowed ? { allowed: true, url, address: verdict.address } : verdict;
}

/**
 * Verdict for a bare host, as an SMTP server is given: an address literal (bracketed or not) by its
 * range, a name by the rules of a URL's host (local names; other IPv4 notations are the address
 * they stand for).
 */
export function checkHost(raw: string, policy: DestinationPolicy): UrlVerdict {
  const bare = raw.replace(/^\[(.*)\]$/, '$1');
  const verdict = checkUrl(`https://${bare.includes(':') ? `[${bare}]` : bare}/`, {
    ...policy,
    allowHttp: true,
  });
  if (!verdict.allowed && verdict.code === 'validation_failed') {
    return refuse('validation_failed', 'must be a host name or address');
  }
  return verdict;
}
