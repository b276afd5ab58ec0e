import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

const DOTTED_TAIL = /^(.*:)([^:]*\.[^:]*)$/;

/**
 * An IP address literal, strictly: IPv4 in dotted-decimal only (inet_aton forms such as `10.1`,
 * `0x7f.0.0.1` or `012.0.0.1` are read differently by different parsers, so they are not
 * addresses), IPv6 with an optional dotted tail and zone (the zone names an interface of the
 * machine that wrote it, not a host, so it is dropped). An IPv6 dotted tail is rewritten to hex
 * first: ipaddr.js would read `::a.b.c.d` (IPv4-compatible) as `::ffff:a.b.c.d` (IPv4-mapped).
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  let v6 = text.replace(/%[\w.~-]+$/, '');
  const tail = DOTTED_TAIL.exec(v6);
  if (tail) {
    const [, head = '', dotted = ''] = tail;
    if (!ipaddr.IPv4.isValidFourPartDecimal(dotted)) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(dotted).octets;
    v6 = `${head}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  return /^[0-9a-f:]+$/i.test(v6) && ipaddr.IPv6.isValid(v6) ? ipaddr.IPv6.parse(v6) : undefined;
}

/** An IPv4-mapped IPv6 address is the IPv4 address it carries; every other address is itself. */
const unmapped = (address: IpAddress): IpAddress =>
  address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;

/**
 * One X-Forwarded-For entry or socket address, in canonical form (IPv4 dotted-quad, IPv6 as
 * RFC 5952, IPv4-mapped as IPv4), or undefined when it is not an address. Some proxies write the
 * client's port (`203.0.113.7:1234`, `[2001:db8::1]:443`) or bracket IPv6; both are stripped.
 */
export function canonicalAddress(entry: string): string | undefined {
  const bracketed = /^\[([^\]]+)\](?::[0-9]{1,5})?$/.exec(entry);
  const withPort = /^([0-9.]+):[0-9]{1,5}$/.exec(entry);
  const text = bracketed?.[1] ?? withPort?.[1] ?? entry;
  const address = parseIpAddress(text);
  // Brackets hold IPv6 only (RFC 3986).
  if (!address || (bracketed && address.kind() !== 'ipv6')) return undefined;
  return unmapped(address).toString();
}

/**
 * The client address, for everything that records or counts clients (rate-limit buckets, audit
 * rows): the X-Forwarded-For entry TRUST_PROXY chose (Fastify's `request.ip`), canonical. An
 * entry that is not an address falls back to the peer of the socket (the nearest proxy): a client
 * must not get a fresh identity for every string it can write. Null only when the socket is gone.
 */
export function clientAddress(request: FastifyRequest): string | null {
  return canonicalAddress(request.ip) ?? canonicalAddress(request.socket.remoteAddress ?? '') ?? null;
}

/**
 * The rate-limit bucket of a client address. An IPv6 client usually holds a whole /64, so its
 * addresses share one allowance; an IPv4-mapped IPv6 address counts as the IPv4 address it is.
 */
export function addressBucket(address: string | null): string {
  const parsed = address === null ? undefined : parseIpAddress(address);
  if (!parsed) return 'ip:unknown';
  const client = unmapped(parsed);
  if (client.kind() === 'ipv4') return `ip:${client.toString()}`;
  const prefix = (client as ipaddr.IPv6).parts.slice(0, 4);
  return `ip:${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toString()}/64`;
}
