// The fields of each kind of alerting channel (docs/operators/alerting.md), as the console asks for them. The
// list mirrors src/platform/alerting/kinds.ts, which holds schemas the browser cannot load; the
// channel's record type is the API's (common/routes.ts).
import type { ChannelKind } from '../../common/routes.js';

export const KINDS: readonly ChannelKind[] = ['EMAIL', 'WEBHOOK', 'SLACK', 'GRAFANA', 'HTTP'];

export const KIND_NAMES: Record<ChannelKind, string> = {
  EMAIL: 'E-mail',
  WEBHOOK: 'Webhook',
  SLACK: 'Slack',
  GRAFANA: 'Grafana',
  HTTP: 'HTTP request',
};

export const KIND_DESCRIPTIONS: Record<ChannelKind, string> = {
  EMAIL: 'Sends a message through your SMTP server to a list of addresses.',
  WEBHOOK: 'Posts signed, Alertmanager-style JSON to a URL; hubgate generates the signing secret.',
  SLACK: 'Posts to a Slack channel through an incoming-webhook URL.',
  GRAFANA: 'Adds an annotation to Grafana dashboards, with the tags you choose.',
  HTTP: 'Sends the notification to any URL, with the method and headers you choose.',
};

/** How a field is asked for: its input, and how its text becomes the API's value. */
type FieldType = 'text' | 'email' | 'url' | 'port' | 'list' | 'method' | 'headers';

export interface ChannelFieldSpec {
  name: string;
  label: string;
  hint: string;
  type: FieldType;
  secret: boolean;
  required: boolean;
}

const field = (
  name: string,
  label: string,
  type: FieldType,
  hint: string,
  options: { secret?: boolean; optional?: boolean } = {},
): ChannelFieldSpec => ({
  name,
  label,
  hint,
  type,
  secret: options.secret ?? false,
  required: !options.optional,
});

export const KIND_FIELDS: Record<ChannelKind, ChannelFieldSpec[]> = {
  EMAIL: [
    field('to', 'Recipients', 'list', 'E-mail addresses, separated by commas (1 to 20).'),
    field('from', 'Sender address', 'email', 'The From address of the messages, e.g. alerts@example.com.'),
    field('smtpHost', 'SMTP server', 'text', 'Host name or IP address of the mail server.'),
    field('smtpPort', 'SMTP port', 'port', 'Usually 587 (submission) or 465 (TLS).'),
    field('smtpUser', 'SMTP user name', 'text', 'Optional; the sender address is used when left empty.', {
      optional: true,
    }),
    field('smtpPassword', 'SMTP password', 'text', 'Optional; only for a server that asks to sign in.', {
      secret: true,
      optional: true,
    }),
  ],
  WEBHOOK: [
    field('url', 'URL', 'url', 'Receives each notification as a signed POST. Kept secret once saved.', {
      secret: true,
    }),
  ],
  SLACK: [
    field(
      'webhookUrl',
      'Slack webhook URL',
      'url',
      'From Slack: Apps → Incoming Webhooks, e.g. https://hooks.slack.com/services/…',
      { secret: true },
    ),
  ],
  GRAFANA: [
    field(
      'baseUrl',
      'Grafana URL',
      'url',
      'The address of Grafana; annotations go to {this}/api/annotations.',
    ),
    field('tags', 'Tags', 'list', 'Annotation tags, separated by commas (at most 20).', { optional: true }),
    field(
      'serviceAccountToken',
      'Service account token',
      'text',
      'A Grafana service account token allowed to write annotations.',
      { secret: true },
    ),
  ],
  HTTP: [
    field('url', 'URL', 'url', 'Receives each notification. Kept secret once saved.', { secret: true }),
    field('method', 'Method', 'method', 'POST unless you choose another.', { optional: true }),
    field('headers', 'Headers', 'headers', 'One per line, as “Name: value” (at most 20); e.g. a token.', {
      secret: true,
      optional: true,
    }),
  ],
};

const FIELD_LABELS: Record<string, string> = Object.fromEntries(
  Object.values(KIND_FIELDS).flatMap((specs) => specs.map((spec) => [spec.name, spec.label])),
);
FIELD_LABELS.signingSecret = 'Signing secret';

/** The text a field shows for a value the API returned (non-secret fields only). */
export function textOf(spec: ChannelFieldSpec, value: unknown): string {
  if (value === undefined || value === null) return spec.type === 'method' ? 'POST' : '';
  if (Array.isArray(value)) return value.join(', ');
  return String(value);
}

/** What the person typed, as the API's value; a string where the text cannot be one (the API explains). */
export function valueOf(spec: ChannelFieldSpec, text: string): unknown {
  const trimmed = text.trim();
  switch (spec.type) {
    case 'list':
      return trimmed
        .split(/[,\n]/)
        .map((part) => part.trim())
        .filter(Boolean);
    case 'port':
      return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
    case 'headers': {
      const headers: Record<string, string> = {};
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        const colon = line.indexOf(':');
        if (colon <= 0) return line;
        headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
      }
      return headers;
    }
    default:
      return trimmed;
  }
}

/** A problem the browser can see before asking the server, in words. */
export function fieldProblem(spec: ChannelFieldSpec, text: string, editing: boolean): string | undefined {
  const trimmed = text.trim();
  if (!trimmed) {
    // On edit an empty secret keeps the stored one; an empty list is "none".
    if (!spec.required || (spec.secret && editing) || spec.type === 'list') {
      return spec.name === 'to' && spec.required ? 'Enter at least one address.' : undefined;
    }
    return `Enter the ${spec.label.toLowerCase()}.`;
  }
  if (spec.type === 'port' && !(/^\d+$/.test(trimmed) && Number(trimmed) >= 1 && Number(trimmed) <= 65535))
    return 'Enter a port number from 1 to 65535.';
  if (spec.type === 'url' && !/^https?:\/\/[^\s]+$/i.test(trimmed))
    return 'Enter a full URL starting with https:// (or http:// where the operator allows it).';
  if (spec.type === 'email' && !/^[^\s@]+@[^\s@]+$/.test(trimmed)) return 'Enter an e-mail address.';
  if (spec.type === 'list' && spec.name === 'to') {
    const bad = (valueOf(spec, text) as string[]).find((address) => !/^[^\s@]+@[^\s@]+$/.test(address));
    if (bad) return `“${bad}” is not an e-mail address.`;
  }
  if (spec.type === 'headers' && typeof valueOf(spec, text) === 'string')
    return 'Write each header on its own line as “Name: value”.';
  return undefined;
}

/** The SSRF policy's refusal (docs/api/connections.md), said with what the operator can do about it. */
export const DESTINATION_FORBIDDEN_HINT =
  'hubgate refuses to send to loopback, private, link-local and other internal addresses, and to ' +
  'plain http:// unless allowed, so that alerting cannot be used to reach inside your network. Use a ' +
  'public https address, or have the operator allow the range (DELIVERY_ALLOWED_CIDRS, DELIVERY_ALLOW_HTTP).';
