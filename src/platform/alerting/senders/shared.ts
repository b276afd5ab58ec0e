import type { Resolver, Sender, SendResult } from '../../../outbound/sender.js';
import type { DestinationPolicy } from '../../../outbound/ssrf-policy.js';
import { CHANNEL_KIND_DEFINITIONS } from '../kinds.js';
import type { ChannelSendResult, Notification, OpenChannel } from '../notification.js';

export interface ChannelSenderDeps {
  /** config.delivery (allowHttp, allowedCidrs): the same SSRF policy as deliveries (docs/api/connections.md). */
  policy: DestinationPolicy;
  /** config.delivery.timeoutMs. */
  timeoutMs: number;
  /** Injectable DNS (tests), as in createSender. */
  resolve?: Resolver;
  /** externalURL in Alertmanager-style bodies. */
  publicUrl: string;
  now: () => Date;
}

/** What every kind's sender gets: the deps and the one HTTP sender all HTTP kinds share. */
export interface SendContext {
  deps: ChannelSenderDeps;
  http: Sender;
}

export type KindSender = (
  context: SendContext,
  channel: OpenChannel,
  notification: Notification,
) => Promise<ChannelSendResult>;

/**
 * A channel whose stored config lacks what its kind needs (only reachable through a bug or a hand-
 * edited row: the routes validate configs). Thrown by the field readers, turned into a failed send.
 */
export class InvalidChannelConfig extends Error {}

export function stringField(config: Record<string, unknown>, name: string): string {
  const value = config[name];
  if (typeof value !== 'string' || value === '') {
    throw new InvalidChannelConfig(`invalid_config: ${name} is missing`);
  }
  return value;
}

export function optionalStringField(config: Record<string, unknown>, name: string): string | undefined {
  const value = config[name];
  if (value === undefined || value === null) return undefined;
  return stringField(config, name);
}

export function stringArrayField(config: Record<string, unknown>, name: string): string[] {
  const value = config[name] ?? [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
    throw new InvalidChannelConfig(`invalid_config: ${name} must be a list of strings`);
  }
  return value as string[];
}

// Errors are cut here: they end up in API answers and logs, and say what happened in a phrase.
const MAX_ERROR_LENGTH = 300;
// Shorter values are not credentials, and hiding them would mangle ordinary words of an error.
const MIN_REDACTED_LENGTH = 6;

/**
 * Every secret value of a channel, in each form an error could quote it: whole, and for a URL its
 * path and query too (the host of a URL is not secret: errors may name it).
 */
export function secretValues(channel: OpenChannel): string[] {
  const found: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') {
      found.push(value);
      if (URL.canParse(value)) {
        const url = new URL(value);
        found.push(`${url.pathname}${url.search}`, url.pathname, url.search, url.username, url.password);
      }
    } else if (Array.isArray(value)) {
      value.forEach(collect);
    } else if (value && typeof value === 'object') {
      Object.values(value).forEach(collect);
    }
  };
  for (const field of CHANNEL_KIND_DEFINITIONS[channel.kind].secretFields) collect(channel.config[field]);
  return [...new Set(found)]
    .filter((value) => value.length >= MIN_REDACTED_LENGTH)
    .sort((a, b) => b.length - a.length);
}

/**
 * The last guard on an error before it leaves: the phrases built here never quote a secret, and
 * this makes sure of it whatever a library or a server put in them.
 */
export function redact(error: string, secrets: readonly string[]): string {
  let text = error;
  for (const secret of secrets) text = text.split(secret).join('[redacted]');
  return text.length > MAX_ERROR_LENGTH ? `${text.slice(0, MAX_ERROR_LENGTH - 1)}…` : text;
}

export const failed = (responseStatus: number | null, error: string): ChannelSendResult => ({
  ok: false,
  responseStatus,
  error,
});

/**
 * An HTTP send's outcome in the channel's words: `<sender error>: <detail>`, e.g. `http_status: HTTP
 * 500` or `destination_forbidden: address 127.0.0.2 is in a refused range: loopback (127.0.0.0/8)`.
 * The sender's details name a host or an address at most, never a path or a query.
 */
export function fromHttp(result: SendResult): ChannelSendResult {
  if (result.ok) return { ok: true, responseStatus: result.status, error: null };
  return failed(result.status, `${result.error ?? 'connection_error'}: ${result.errorDetail ?? 'failed'}`);
}
