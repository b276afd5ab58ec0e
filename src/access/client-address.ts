import type { FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { parseIpLiteral } from '../outbound/ssrf-policy.js';

type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** An IPv4-mapped IPv6 address is the IPv4 address it carries; every other address is itself. */
const unmapped = (address: IpAddress): IpAddress =>
  address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress()
    ? (address as ipaddr.IPv6).toIPv4Address()
    : address;

const MEMO_ENTRIES = 10_000;
const MEMO_KEY_LENGTH = 64;

/**
 * A pure function of a string, remembered: every request asks for its client's address and bucket,
 * and parsing an address costs more than the rest of the gate's bookkeeping. Bounded in entries and
 * in their length (an X-Forwarded-For entry is whatever a client wrote; no address is that long),
 * forgotten wholesale when full: a flood of fresh addresses costs what it did without the memo.
 */
function memoized<T>(fn: (text: string) => T): (text: string) => T {
  const memo = new Map<string, T>();
  return (text) => {
    if (text.length > MEMO_KEY_LENGTH) return fn(text);
    if (memo.has(text)) return memo.get(text) as T;
    const value = fn(text);
    if (memo.size >= MEMO_ENTRIES) memo.clear();
    memo.set(text, value);
    return value;
  };
}

/**
 * One X-Forwarded-For entry or socket address, in canonical form (IPv4 dotted-quad, IPv6 as
 * RFC 5952, IPv4-mapped as IPv4), or undefined when it is not an address: strictly parsed (no
 * octal or other inet_aton forms). Some proxies write the client's port (`203.0.113.7:1234`,
 * `[2001:db8::1]:443`) or bracket IPv6; both are stripped, and a zone is dropped.
 */
const canonicalAddress = memoized((entry: string): string | undefined => {
  const bracketed = /^\[([^\]]+)\](?::[0-9]{1,5})?$/.exec(entry);
  const withPort = /^([0-9.]+):[0-9]{1,5}$/.exec(entry);
  const text = bracketed?.[1] ?? withPort?.[1] ?? entry;
  const address = parseIpLiteral(text);
  // Brackets hold IPv6 only (RFC 3986).
  if (!address || (bracketed && address.kind() !== 'ipv6')) return undefined;
  return unmapped(address).toString();
});

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
const bucketOf = memoized((address: string): string => {
  const parsed = parseIpLiteral(address);
  if (!parsed) return 'ip:unknown';
  const client = unmapped(parsed);
  if (client.kind() === 'ipv4') return `ip:${client.toString()}`;
  const prefix = (client as ipaddr.IPv6).parts.slice(0, 4);
  return `ip:${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toString()}/64`;
});

export function addressBucket(address: string | null): string {
  return address === null ? 'ip:unknown' : bucketOf(address);
}
