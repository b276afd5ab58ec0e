import type { ComponentChildren } from 'preact';
import type { Connector } from '../api-types.js';
import type { ApiError } from '../api.js';
import { ConnectionFieldControl } from './ConnectionFieldControl.js';
import { Field } from './Field.js';

/** One field a connector declares in the catalog: a config field or a credential field. */
export type CatalogField = Connector['configFields'][number];

/** Labels and hints in words for the fields the catalog names (`url` → "Receiver URL"). */
const WORDS: Record<string, { label: string; hint?: ComponentChildren }> = {
  displayName: {
    label: 'Display name',
    hint: 'How this connection is called in hubgate, e.g. “Orders webhook”.',
  },
  url: { label: 'Receiver URL', hint: 'The address each event is sent to, usually starting with https://.' },
  method: { label: 'Method', hint: 'The HTTP method of each request.' },
  eventTypes: {
    label: 'Event types',
    hint: (
      <>
        Patterns separated by commas, e.g. <code>employee.*, invoice.paid</code>; <code>*</code> matches any
        run of characters. Leave empty to receive every event.
      </>
    ),
  },
  signingSecret: {
    label: 'Signing secret',
    hint: (
      <>
        <code>whsec_</code> followed by base64 of 24 to 64 bytes, as Standard Webhooks tools make it.
      </>
    ),
  },
  headerName: { label: 'Header name', hint: 'Sent with every request, e.g. Authorization or X-Api-Key.' },
  headerValue: {
    label: 'Header value',
    hint: 'Sent as is, e.g. Bearer followed by a token. Stored encrypted and never shown again.',
  },
  maxPerSecond: {
    label: 'Deliveries per second',
    hint: 'At most this many deliveries start each second (1 to 1000); the others wait their turn. Leave empty for no limit.',
  },
  webhookUrl: {
    label: 'Slack webhook URL',
    hint: 'The incoming-webhook URL Slack gave you (https://hooks.slack.com/services/…).',
  },
};

/** `someField` → "Some field", for a field hubgate's UI has no words for yet. */
function fromName(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export const fieldLabel = (name: string): string => WORDS[name]?.label ?? fromName(name);

const sentence = (text: string): string => {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
};

export function fieldHint(field: Pick<CatalogField, 'name' | 'description'>): ComponentChildren {
  const known = WORDS[field.name];
  if (known) return known.hint;
  if (!field.description) return undefined;
  return sentence(field.description.charAt(0).toUpperCase() + field.description.slice(1));
}

const PATTERN_WORDS: Record<string, string> = {
  displayName: 'Enter a name, not only spaces.',
  headerName: 'A header name has letters, digits and - only (no spaces or colons).',
  headerValue: 'Use visible characters only, with no line breaks.',
  signingSecret: 'Use whsec_ followed by base64, as a Standard Webhooks tool makes it.',
};

/**
 * The API's message for one field (a JSON Schema sentence, or the outbound policy's reason) as a
 * person reads it. `values` are the items sent for a list field, to name the one that is wrong.
 */
export function fieldErrorText(
  error: ApiError | undefined,
  name: string,
  values: string[] = [],
): string | undefined {
  if (!error) return undefined;
  const found = error.fieldErrors.find((e) => e.path === name || e.path.startsWith(`${name}.`));
  if (!found) return undefined;
  const { message, path } = found;
  const label = fieldLabel(name);
  if (error.code === 'destination_forbidden') {
    return `hubgate does not send to this address: ${sentence(message.replace(/^address /, ''))}`;
  }
  const index = /\.(\d+)$/.exec(path)?.[1];
  const item = index === undefined ? undefined : values[Number(index)];
  let match: RegExpExecArray | null;
  if (/must match format "uri"/.test(message)) return 'Enter a complete URL, e.g. https://example.com/hooks.';
  if (/must have required property/.test(message)) return `${label} is required.`;
  if ((match = /must NOT have fewer than (\d+) characters/.exec(message))) {
    return match[1] === '1' ? `${label} cannot be empty.` : `Use at least ${match[1]} characters.`;
  }
  if ((match = /must NOT have more than (\d+) characters/.exec(message))) {
    return `Use at most ${match[1]} characters.`;
  }
  if ((match = /must NOT have more than (\d+) items/.exec(message))) return `Give at most ${match[1]}.`;
  if ((match = /must NOT have duplicate items \(items ## (\d+) and/.exec(message))) {
    const twice = values[Number(match[1])];
    return twice ? `“${twice}” is listed twice.` : 'An item is listed twice.';
  }
  if (/must match pattern/.test(message)) {
    if (name === 'eventTypes') {
      return `${item ? `“${item}”` : 'A pattern'} is not a valid pattern: use lowercase letters, digits, “.”, “_”, “-” and “*” only.`;
    }
    return PATTERN_WORDS[name] ?? `${label} has characters that are not allowed.`;
  }
  if (/must be equal to constant|must match a schema in anyOf|must be equal to one of/.test(message)) {
    return 'Choose one of the options.';
  }
  return sentence(`${label} ${message}`);
}

/** Whether the API named any of these fields, so the form can say "see below" instead of repeating. */
export const namesAnyField = (error: ApiError | undefined, names: string[]): boolean =>
  Boolean(error && names.some((name) => error.forField(name) !== undefined));

/** One catalog field as a form control: a URL, a choice, a list of patterns, a secret or text. */
export function ConnectionField({
  field,
  value,
  onInput,
  error,
  secret,
}: {
  field: CatalogField;
  value: string;
  onInput: (value: string) => void;
  error?: string;
  /** A secret value: a password input, never autocompleted. */
  secret?: boolean;
}) {
  const label = field.required ? fieldLabel(field.name) : `${fieldLabel(field.name)} (optional)`;
  return (
    <Field label={label} hint={fieldHint(field)} error={error}>
      {(ids) => (
        <ConnectionFieldControl field={field} value={value} onInput={onInput} secret={secret} ids={ids} />
      )}
    </Field>
  );
}

/** An optional choice's starting value: the catalog's default, else the first. */
export function initialValue(field: CatalogField): string {
  if (!field.options) return '';
  return field.default && field.options.includes(field.default) ? field.default : (field.options[0] ?? '');
}

/** Patterns typed as `employee.*, invoice.paid` (commas or spaces), as the API takes them. */
export const splitList = (text: string): string[] =>
  text
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);
