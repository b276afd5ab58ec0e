import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TProperties } from 'typebox';

// A source's scheme (docs/api/sources.md): how its provider signs a request, where its event type
// and delivery ID are. One module per scheme in schemes/, behind this interface: a new provider is
// a new module and a line in schemes/index.ts, never an `if` here.

/** What an ingest request holds: the exact bytes, and (once verified) the JSON they parse to. */
export interface SignedRequest {
  /** Header names lower-cased, as Node gives them. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  raw: Buffer;
}

export interface ParsedRequest extends SignedRequest {
  body: Record<string, unknown>;
}

/** The scheme's own fields of a source, as stored (already checked against `fields`). */
export type SchemeConfig = Readonly<Record<string, unknown>>;

export interface Scheme {
  name: string;
  /** The scheme's own fields on create and PATCH (the `hmac` scheme's), TypeBox properties. */
  fields: TProperties;
  /** A secret hubgate makes when none is given; without it, a secret is required. */
  generateSecret?: () => string;
  /** Refuses a secret this scheme cannot use (a detail for `400 validation_failed`), else undefined. */
  secretProblem?: (secret: string) => string | undefined;
  /** True when the request is signed with `secret`, over its exact bytes, within the time allowed. */
  verify(request: SignedRequest, secret: string, config: SchemeConfig, now: Date): boolean;
  /** The provider's own event type, before the source's prefix; undefined when it has none. */
  providerType(request: ParsedRequest, config: SchemeConfig): string | undefined;
  /** The provider's ID of this delivery (what a retry repeats); undefined when it sends none. */
  deliveryId(request: ParsedRequest, config: SchemeConfig): string | undefined;
  /** Headers that carry signatures: the log shows them as `[redacted]`. */
  signatureHeaders(config: SchemeConfig): readonly string[];
}

/** How far a signed timestamp may be from now (§22: 5 minutes). */
export const TOLERANCE_SECONDS = 300;

export const header = (request: SignedRequest, name: string): string | undefined => {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
};

export const hmacSha256 = (key: string | Buffer, data: Buffer | string): Buffer =>
  createHmac('sha256', key).update(data).digest();

/** Constant-time comparison of two byte strings (false at once for different lengths, which are public). */
export function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A signed UNIX timestamp (seconds, digits only) within the tolerance of `now`. */
export function timestampFresh(value: string | undefined, now: Date): boolean {
  if (value === undefined || !/^\d{1,12}$/.test(value)) return false;
  return Math.abs(now.getTime() / 1000 - Number(value)) <= TOLERANCE_SECONDS;
}

/** A field of the body at a dotted path, as text when it is a string or a number. */
export function fieldAt(body: Record<string, unknown>, path: string): string | undefined {
  let value: unknown = body;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}
