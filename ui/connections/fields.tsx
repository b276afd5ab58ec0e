// A connector's catalog fields as form controls, for creating, editing and binding a connection
// (docs/api/connections.md, docs/api/events.md): their labels and hints, the API's refusals in words on each
// field, and their values between the form (text in inputs) and the API (strings, lists, numbers).
import type { ComponentChildren } from 'preact';
import type { ApiError } from '../common/api.js';
import { Field } from '../common/Field.js';
import type { Connection, Connector } from '../common/routes.js';
import { EventTypeInput } from '../event-types/EventTypeInput.js';
import { destinationOf } from './destination.js';
import { filterErrorText, filterTextOf, filterValueOf } from './filter-text.js';
import { FilterEditor } from './FilterEditor.js';

/** A field typed as a number: an integer in the catalog, or the throttle (docs/api/events.md). */
const isNumeric = (field: Pick<CatalogField, 'name' | 'type'>): boolean =>
  field.type === 'integer' || field.type === 'number' || field.name === 'maxPerSecond';

/** A config value as a form shows it: lists joined by commas, nothing as ''. */
function textOf(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object' && !Array.isArray(value)) return filterTextOf(value);
  if (Array.isArray(value)) return value.map(String).join(', ');
  return String(value);
}

/** What was typed, as the API takes it; undefined when an optional field is left empty. */
export function valueOf(field: CatalogField, text: string): unknown {
  const trimmed = text.trim();
  if (field.name === 'filter') return filterValueOf(text);
  if (field.type === 'array') {
    const items = splitList(trimmed);
    return items.length > 0 ? items : undefined;
  }
  if (trimmed === '') return field.required ? '' : undefined;
  if (isNumeric(field) && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  return trimmed;
}

/** The form's starting values for a connection: each config field as text. */
export const valuesOf = (connector: Connector, connection: Connection): Record<string, string> =>
  Object.fromEntries(
    connector.configFields.map((f) => {
      const value = connection.config[f.name];
      // A choice never made shows its default (`ordering`: none), as the API applies it.
      return [f.name, value === undefined && f.options ? initialValue(f) : textOf(value)];
    }),
  );

/**
 * The PATCH body: only what changed. A field emptied that had a value is sent as null (back to its
 * default: every event type, no throttle).
 */
export function changesOf(
  connector: Connector,
  connection: Connection,
  displayName: string,
  values: Record<string, string>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (displayName.trim() !== connection.displayName) body.displayName = displayName.trim();
  for (const field of connector.configFields) {
    const before = connection.config[field.name];
    const after = valueOf(field, values[field.name] ?? '');
    if (JSON.stringify(after ?? null) === JSON.stringify(before ?? null)) continue;
    // A choice never made, left at its default, stays unsent (compared as the API takes it: qos's 1).
    if (before === undefined && field.options && after === valueOf(field, initialValue(field))) continue;
    body[field.name] = after === undefined ? null : after;
  }
  return body;
}

/** The host of a URL, or null when it is not one yet. */
export function hostOf(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** Options of catalog fields in words, by field and the value the API takes (`ordering`, MQTT's `qos`). */
export const OPTION_WORDS: Record<string, Record<string, string>> = {
  ordering: { none: 'Not ordered', 'per-key': 'In order per ordering key' },
  qos: { '1': '1: at least once (PUBACK)', '2': '2: exactly once (PUBCOMP)' },
};

/** A catalog field with options, as a `<select>` of them; `common` wires it to its label. */
function ConnectionFieldSelect({
  common,
  options,
  words,
  value,
  onInput,
}: {
  common: {
    id: string;
    name: string;
    'aria-describedby': string | undefined;
    'aria-invalid': true | undefined;
  };
  options: string[];
  words: Record<string, string> | undefined;
  value: string;
  onInput: (value: string) => void;
}) {
  return (
    <select {...common} value={value} onChange={(event) => onInput(event.currentTarget.value)}>
      {options.map((option) => (
        <option key={option} value={option}>
          {words?.[option] ?? option}
        </option>
      ))}
    </select>
  );
}

/** The control of a catalog field, wired to its label, hint and error by `ids`. */
function ConnectionFieldControl({
  field,
  value,
  onInput,
  secret,
  ids: { id, describedBy, invalid },
}: {
  field: CatalogField;
  value: string;
  onInput: (value: string) => void;
  secret?: boolean;
  ids: { id: string; describedBy: string | undefined; invalid: boolean };
}) {
  const common = {
    id,
    name: field.name,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
  };
  if (field.options) {
    return (
      <ConnectionFieldSelect
        common={common}
        options={field.options}
        words={OPTION_WORDS[field.name]}
        value={value}
        onInput={onInput}
      />
    );
  }
  if (secret) {
    return (
      <input
        {...common}
        type="password"
        required={field.required}
        value={value}
        autoComplete="new-password"
        spellcheck={false}
        onInput={(event) => onInput(event.currentTarget.value)}
      />
    );
  }
  const text = {
    ...common,
    class: field.name === 'eventTypes' || field.name === 'signingSecret' ? 'mono' : undefined,
    required: field.required,
    value,
    autoComplete: 'off',
    spellcheck: false,
    onInput: (event: { currentTarget: HTMLInputElement }) => onInput(event.currentTarget.value),
  };
  if (field.format === 'uri') return <input {...text} type="url" inputMode="url" placeholder="https://" />;
  if (isNumeric(field)) return <input {...text} type="text" inputMode="numeric" class="num-input" />;
  // The catalog's names offered as the patterns are typed (ui/event-types/EventTypeInput.tsx).
  if (field.name === 'eventTypes') return <EventTypeInput {...text} />;
  return (
    <input
      {...text}
      type="text"
      placeholder={field.name === 'eventTypes' ? 'employee.*, invoice.paid' : undefined}
    />
  );
}

/** One field a connector declares in the catalog: a config field or a credential field. */
export type CatalogField = Connector['configFields'][number];

/** Labels and hints in words for the fields the catalog names (`url` → "Receiver URL"). */
/** A field's label and hint, in words. */
export interface FieldWords {
  label: string;
  hint?: ComponentChildren;
}

const WORDS: Record<string, FieldWords> = {
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
  ordering: {
    label: 'Delivery order',
    hint: (
      <>
        In order per ordering key: events published with the same <code>orderingKey</code> are delivered one
        at a time, in the order they were published; a failing one holds back the rest of its key until it is
        delivered or fails for good. Events without a key, and other keys, are not held back.
      </>
    ),
  },
  maxPerSecond: {
    label: 'Deliveries per second',
    hint: 'At most this many deliveries start each second (1 to 1000); the others wait their turn. Leave empty for no limit.',
  },
  // MQTT's quality of service (mqtt), a choice of 1 or 2: its catalog text says what each means.
  qos: { label: 'Quality of service (QoS)' },
  // A Redis stream's trim (redis): the catalog text says how.
  maxLen: { label: 'Stream length' },
  webhookUrl: {
    label: 'Slack webhook URL',
    hint: 'The incoming-webhook URL Slack gave you (https://hooks.slack.com/services/…).',
  },
};

/** An OAuth2 connection's settings are about calls through it to its provider (docs/api/oauth.md). */
const OAUTH_WORDS: Record<string, FieldWords> = {
  maxPerSecond: {
    label: 'Calls per second',
    hint: 'At most this many calls through hubgate to the provider’s API each second (1 to 1000); more are refused with 429 and a Retry-After. Leave empty for no limit.',
  },
};

/**
 * A broker's URL (a connector the catalog marks `broker`, docs/api/brokers.md) is hinted by its catalog
 * text (which schemes, the default port, vhost or database, the login bound rather than written in it):
 * "Receiver URL … starting with https://" would be wrong.
 */
export const BROKER_URL_LABEL = 'Broker URL';

/** Words of a field that differ by connector (an OAuth2 connector's throttle, a broker's URL), if any. */
export function connectorWords(
  connector: Pick<Connector, 'connectorKey' | 'broker'>,
  name: string,
): FieldWords | undefined {
  if (connector.connectorKey.startsWith('oauth2:')) return OAUTH_WORDS[name];
  if (destinationOf(connector) === 'broker' && name === 'url') return { label: BROKER_URL_LABEL };
  return undefined;
}

/** `someField` → "Some field", for a field hubgate's UI has no words for yet. */
function fromName(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export const fieldLabel = (name: string): string => WORDS[name]?.label ?? fromName(name);

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** The text with a capital first letter, unless it starts with a URL (`amqps://…` stays as typed). */
function capitalized(text: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//.test(text)) return text;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The catalog's description of a field as a sentence. */
export const describedHint = (field: Pick<CatalogField, 'description'>): string | undefined =>
  field.description ? sentence(capitalized(field.description)) : undefined;

function fieldHint(field: Pick<CatalogField, 'name' | 'description'>): ComponentChildren {
  const known = WORDS[field.name];
  return known?.hint !== undefined ? known.hint : describedHint(field);
}

const PATTERN_WORDS: Record<string, string> = {
  displayName: 'Enter a name, not only spaces.',
  headerName: 'A header name has letters, digits and - only (no spaces or colons).',
  headerValue: 'Use visible characters only, with no line breaks.',
  signingSecret: 'Use whsec_ followed by base64, as a Standard Webhooks tool makes it.',
  url: 'Write the address as scheme://host[:port][/path], without a user name or password in it: bind those as credentials.',
};

/** What a refusal said about one field, and what the words for it need to know. */
interface Refusal {
  name: string;
  label: string;
  /** The items sent for a list field, and the one the refusal names, if any. */
  values: string[];
  item: string | undefined;
}

/** JSON Schema's sentences (Ajv's wording), each as a person reads it. */
const SCHEMA_WORDS: Array<[RegExp, (match: RegExpExecArray, refusal: Refusal) => string]> = [
  [/must match format "uri"/, () => 'Enter a complete URL, e.g. https://example.com/hooks.'],
  [/must have required property/, (_, { label }) => `${label} is required.`],
  [
    /must NOT have fewer than (\d+) characters/,
    ([, n], { label }) => (n === '1' ? `${label} cannot be empty.` : `Use at least ${n} characters.`),
  ],
  [/must NOT have more than (\d+) characters/, ([, n]) => `Use at most ${n} characters.`],
  [/must NOT have more than (\d+) items/, ([, n]) => `Give at most ${n}.`],
  [
    /must NOT have duplicate items \(items ## (\d+) and/,
    ([, i], { values }) => {
      const twice = values[Number(i)];
      return twice ? `“${twice}” is listed twice.` : 'An item is listed twice.';
    },
  ],
  [
    /must match pattern/,
    (_, { name, label, item }) =>
      name === 'eventTypes'
        ? `${item ? `“${item}”` : 'A pattern'} is not a valid pattern: use lowercase letters, digits, “.”, “_”, “-” and “*” only.`
        : (PATTERN_WORDS[name] ?? `${label} has characters that are not allowed.`),
  ],
  [
    /must be equal to constant|must match a schema in anyOf|must be equal to one of/,
    () => 'Choose one of the options.',
  ],
];

/**
 * The API's message for one field (a JSON Schema sentence, or the outbound policy's reason) as a
 * person reads it. `values` are the items sent for a list field, to name the one that is wrong.
 */
export function fieldErrorText(
  error: ApiError | undefined,
  name: string,
  values: string[] = [],
): string | undefined {
  if (name === 'filter') return filterErrorText(error);
  const found = error?.fieldErrors.find((e) => e.path === name || e.path.startsWith(`${name}.`));
  if (!error || !found) return undefined;
  const { message, path } = found;
  if (error.code === 'destination_forbidden') {
    return `hubgate does not send to this address: ${sentence(message.replace(/^address /, ''))}`;
  }
  const index = /\.(\d+)$/.exec(path)?.[1];
  const refusal = {
    name,
    label: fieldLabel(name),
    values,
    item: index === undefined ? undefined : values[Number(index)],
  };
  for (const [pattern, words] of SCHEMA_WORDS) {
    const match = pattern.exec(message);
    if (match) return words(match, refusal);
  }
  return sentence(`${refusal.label} ${message}`);
}

/** Whether the API named any of these fields, so the form can say "see below" instead of repeating. */
export const namesAnyField = (error: ApiError | undefined, names: string[]): boolean =>
  Boolean(
    error &&
    names.some((name) => error.forField(name) !== undefined || (name === 'filter' && filterErrorText(error))),
  );

/** One catalog field as a form control: a URL, a choice, a list of patterns, a secret or text. */
export function ConnectionField({
  field,
  value,
  onInput,
  error,
  secret,
  words,
}: {
  field: CatalogField;
  value: string;
  onInput: (value: string) => void;
  error?: string;
  /** A secret value: a password input, never autocompleted. */
  secret?: boolean;
  /** Its connector's own words for it (`connectorWords`), instead of the usual ones. */
  words?: FieldWords;
}) {
  if (field.name === 'filter') return <FilterEditor value={value} onInput={onInput} error={error} />;
  const name = words?.label ?? fieldLabel(field.name);
  const label = field.required ? name : `${name} (optional)`;
  return (
    <Field label={label} hint={words ? (words.hint ?? describedHint(field)) : fieldHint(field)} error={error}>
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

/** A new connection's display name, with the API's message about it. */
export function DisplayNameField({
  value,
  onInput,
  error,
}: {
  value: string;
  onInput: (value: string) => void;
  error: ApiError | undefined;
}) {
  return (
    <Field
      label="Display name"
      hint={fieldHint({ name: 'displayName', description: null })}
      error={fieldErrorText(error, 'displayName')}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="text"
          name="displayName"
          required
          maxLength={200}
          autoComplete="off"
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
