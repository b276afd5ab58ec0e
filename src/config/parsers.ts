import ipaddr from 'ipaddr.js';
import { parseIpLiteral, type Cidr } from '../outbound/ssrf-policy.js';

/** A value read, or why not: `problem` only when it adds to the value shown beside what is expected. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problem?: string };

/** How one kind of environment value is read; `expects` completes "expected …" in errors and docs. */
export interface Parser<T> {
  readonly expects: string;
  parse(raw: string): Parsed<T>;
}

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = (problem?: string): Parsed<never> => ({ ok: false, problem });

/** Digits only: `Number()` would also take `1e3`, `0x10` and ` 7 `. */
export function integer(range: { min: number; max?: number; unit?: string }): Parser<number> {
  const { min, max, unit } = range;
  const of = unit === undefined ? '' : ` of ${unit}`;
  return {
    expects: `a whole number${of} from ${min} ${max === undefined ? 'upwards' : `to ${max}`}`,
    parse(raw) {
      if (!/^[0-9]+$/.test(raw)) return fail();
      const value = Number(raw);
      if (value < min) return fail(`${raw} is less than ${min}`);
      if (max !== undefined && value > max) return fail(`${raw} is more than ${max}`);
      return ok(value);
    },
  };
}

export const boolean: Parser<boolean> = {
  expects: 'true or false',
  parse: (raw) => (raw === 'true' ? ok(true) : raw === 'false' ? ok(false) : fail()),
};

export function oneOf<const T extends string>(values: readonly T[]): Parser<T> {
  return {
    expects: `one of ${values.join(', ')}`,
    parse: (raw) => {
      const found = values.find((value) => value === raw);
      return found === undefined ? fail() : ok(found);
    },
  };
}

/** Free text: any value that is set is taken (what it names is checked where it is used). */
export const text = (expects: string): Parser<string> => ({ expects, parse: ok });

export const matching = (pattern: RegExp, expects: string): Parser<string> => ({
  expects,
  parse: (raw) => (pattern.test(raw) ? ok(raw) : fail()),
});

/** A ratio such as 0.25, written plainly: no exponent, no percent sign. */
export const ratio: Parser<number> = {
  expects: 'a ratio from 0 to 1 such as 0.25',
  parse: (raw) => (/^(0(\.[0-9]+)?|1(\.0+)?)$/.test(raw) ? ok(Number(raw)) : fail()),
};

/** An origin only: a path would be dropped from every link and check built on it, silently. */
export const origin: Parser<URL> = {
  expects: 'an origin such as https://hub.example.com (scheme, host and optional port, no path)',
  parse(raw) {
    if (!/^https?:\/\/[^/?#]+\/?$/.test(raw)) return fail();
    return URL.canParse(raw) ? ok(new URL(raw)) : fail();
  },
};

/** Comma-separated, spaces around entries ignored; an empty value is the empty list. */
export function list<T>(item: Parser<T>, what: string): Parser<T[]> {
  return {
    expects: `a comma-separated list of ${what}`,
    parse(raw) {
      if (raw.trim() === '') return ok([]);
      const values: T[] = [];
      for (const [index, part] of raw.split(',').entries()) {
        const entry = part.trim();
        if (entry === '') return fail(`entry ${index + 1} is empty`);
        const parsed = item.parse(entry);
        if (!parsed.ok) return fail(parsed.problem ?? `${JSON.stringify(entry)} is not ${item.expects}`);
        values.push(parsed.value);
      }
      return ok(values);
    },
  };
}

export const cidr: Parser<Cidr> = {
  expects: 'a CIDR range',
  parse(raw) {
    // ipaddr.js answers a malformed range by throwing; here that is an ordinary bad value.
    try {
      return ok(ipaddr.parseCIDR(raw));
    } catch {
      return fail();
    }
  },
};

// Proxies sit in the operator's network or a CDN's. None is wider than the widest private block
// (10.0.0.0/8; for IPv6 the unique-local fc00::/7) or, elsewhere in IPv6, a /16 (CDNs publish /28
// to /32). A wider range holds clients, whose X-Forwarded-For would be believed: `true` in disguise.
const WIDEST_IPV4 = 8;
const WIDEST_IPV6 = 16;
const UNIQUE_LOCAL = ipaddr.parseCIDR('fc00::/7');
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96');

/** The range an entry trusts, IPv4-mapped ranges as the IPv4 range they are (as proxy-addr reads them). */
function proxyRange(part: string): Cidr | undefined {
  const [, text = '', bits] = /^([^/]*)(?:\/([0-9]{1,3}))?$/.exec(part) ?? [];
  const address = parseIpLiteral(text);
  if (!address) return undefined;
  const max = address.kind() === 'ipv4' ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return undefined;
  if (address instanceof ipaddr.IPv6 && prefix >= 96 && address.match(IPV4_MAPPED)) {
    return [address.toIPv4Address(), prefix - 96];
  }
  return [address, prefix];
}

function holdsClients([address, prefix]: Cidr): boolean {
  if (address.kind() === 'ipv4') return prefix < WIDEST_IPV4;
  // An IPv6 range around the IPv4-mapped block trusts every IPv4 client too.
  if (prefix < 96 && IPV4_MAPPED[0].match(address, prefix)) return true;
  return prefix < WIDEST_IPV6 && !(prefix >= UNIQUE_LOCAL[1] && address.match(UNIQUE_LOCAL));
}

/** A proxy's address or range, in the canonical form Fastify's `trustProxy` is given. */
const proxyNetwork: Parser<string> = {
  expects: "a proxy's address or CIDR range",
  parse(raw) {
    const range = proxyRange(raw);
    if (!range) return fail();
    if (holdsClients(range)) {
      return fail(
        `${raw} is wider than a proxy network (at most /${WIDEST_IPV4} for IPv4, /${WIDEST_IPV6} for IPv6 ` +
          'outside fc00::/7) and would trust addresses clients write',
      );
    }
    return ok(`${range[0].toString()}/${range[1]}`);
  },
};

const proxyHops = integer({ min: 1, max: 10 });
const proxyNetworks = list(proxyNetwork, "the proxies' CIDRs such as 10.0.0.0/8");

/** Never `true` (every hop): that believes whatever X-Forwarded-For a client sends. */
export const trustProxy: Parser<false | number | string[]> = {
  expects: `false, a hop count from 1 to 10, or ${proxyNetworks.expects} (true would trust addresses the client wrote)`,
  parse(raw) {
    if (raw === 'false') return ok(false);
    if (/^[0-9]+$/.test(raw)) return proxyHops.parse(raw);
    return raw.trim() === '' ? fail() : proxyNetworks.parse(raw);
  },
};
